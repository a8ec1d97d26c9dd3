#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "cleanup.h"
#include "compat.h"
#include "error.h"
#include "exposure.h"
#include "redact-stream.h"
#include "secmem.h"
#include "strv.h"

#define READ_CHUNK (256 * 1024)

/* One scan in progress. */
struct scan {
	const redactor *r;
	size_t nn;
	bool *seen;
	uint8_t *bufp; /* READ_CHUNK bytes of secret memory */
	uint64_t budget;
	int64_t since_ns; /* the walk looks at entries changed at or after this */
	uint64_t walked;  /* entries the walk looked at */
	const char *base;
	struct exposure_list *out;
	cordon_error *err;
	bool oom;
};

static int add(struct exposure_list *out, const char *name, const char *path, const char *where)
{
	if (out->n >= EXPOSURE_MAX_ENTRIES) {
		out->complete = false;
		return 0;
	}
	struct secret_exposure *e = realloc(out->e, (out->n + 1) * sizeof(*e));
	if (!e)
		return -1;
	out->e = e;
	e[out->n].name = strdup(name);
	e[out->n].path = strdup(path);
	e[out->n].where = where;
	if (!e[out->n].name || !e[out->n].path) {
		free(e[out->n].name);
		free(e[out->n].path);
		return -1;
	}
	out->n++;
	return 0;
}

/* Report what seen holds for path (as the report shows it), then clear it. */
static void report(struct scan *sc, const char *path, const char *where)
{
	for (size_t j = 0; j < sc->nn; j++) {
		if (sc->seen[j] && !sc->oom && add(sc->out, redactor_name(sc->r, j), path, where) < 0)
			sc->oom = true;
		sc->seen[j] = false;
	}
}

/* A few bytes kept outside a file's contents: a name, a link target, an
 * extended attribute. */
static void scan_bytes(struct scan *sc, const void *p, size_t n, const char *path, const char *where)
{
	uint32_t state = 0;
	if (n && redact_scan(sc->r, &state, p, n, sc->seen))
		report(sc, path, where);
}

/* The root a path lies below (or is: a file granted on its own), and the
 * path relative to it ("" for the root itself). */
static int root_of(const char *const *roots, size_t nroots, const char *abs, const char **rel)
{
	int best = -1;
	size_t blen = 0;
	for (size_t i = 0; i < nroots; i++) {
		size_t l = strlen(roots[i]);
		if (path_has_prefix(abs, roots[i]) && l >= blen) {
			best = (int)i;
			blen = l;
		}
	}
	if (best < 0)
		return -1;
	const char *p = abs + blen;
	while (*p == '/')
		p++;
	*rel = p;
	return best;
}

/* The contents of the regular file open at fd; -1 if not read in full. */
static int scan_content(struct scan *sc, int fd, const char *path)
{
	uint64_t limit = EXPOSURE_FILE_MAX < sc->budget ? EXPOSURE_FILE_MAX : sc->budget;
	uint64_t done = 0;
	uint32_t state = 0;
	int rc = 0;
	for (;;) {
		size_t want = READ_CHUNK;
		if (done >= limit) {
			/* At the limit: complete only if the file ends here. */
			char c;
			rc = read(fd, &c, 1) == 0 ? 0 : -1;
			break;
		}
		if (limit - done < want)
			want = (size_t)(limit - done);
		ssize_t n = read(fd, sc->bufp, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -1 : 0;
			break;
		}
		redact_scan(sc->r, &state, sc->bufp, (size_t)n, sc->seen);
		done += (uint64_t)n;
	}
	sc->budget -= done;
	sc->out->bytes += done;
	sc->out->files++;
	report(sc, path, "content");
	return rc;
}

/* The user.* extended attributes of the file open at fd (not O_PATH): their
 * names and values, within XATTR_LIST_MAX / XATTR_SIZE_MAX. -1 if some
 * could not be read. */
static int scan_xattrs(struct scan *sc, int fd, const char *path)
{
	char list[XATTR_LIST_MAX];
	ssize_t ln = flistxattr(fd, list, sizeof(list));
	if (ln < 0)
		return errno == ENOTSUP || errno == EOPNOTSUPP ? 0 : -1;
	int rc = 0;
	for (ssize_t off = 0; off < ln;) {
		const char *name = list + off;
		size_t l = strnlen(name, (size_t)(ln - off));
		off += (ssize_t)l + 1;
		if (strncmp(name, "user.", 5) != 0)
			continue;
		scan_bytes(sc, name, l, path, "xattr");
		ssize_t vn = fgetxattr(fd, name, sc->bufp, XATTR_SIZE_MAX < READ_CHUNK ? XATTR_SIZE_MAX : READ_CHUNK);
		if (vn < 0) {
			if (errno != ENODATA) /* removed meanwhile: nothing to find */
				rc = -1;
			continue;
		}
		scan_bytes(sc, sc->bufp, (size_t)vn, path, "xattr");
	}
	return rc;
}

/* One entry beneath dirfd (leaf: its name there; rel: its path below its
 * root), shown as path: its name, its link target, and for a regular file
 * or a directory its user xattrs, for a regular file its contents. -1 if
 * something could not be read. */
static int scan_entry(struct scan *sc, int dirfd, const char *leaf, const char *rel, const char *path)
{
	scan_bytes(sc, rel, strlen(rel), path, "name");
	struct stat st;
	if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (S_ISLNK(st.st_mode)) {
		char t[4096];
		ssize_t n = readlinkat(dirfd, leaf, t, sizeof(t));
		if (n < 0)
			return errno == ENOENT || errno == EINVAL ? 0 : -1;
		scan_bytes(sc, t, (size_t)n, path, "link");
		return 0;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return 0; /* a FIFO, socket or device: never opened */
	_cleanup_close_ int fd = open_beneath(dirfd, leaf, S_ISDIR(st.st_mode) ? O_RDONLY | O_DIRECTORY : O_RDONLY);
	struct stat st2;
	if (fd < 0 || fstat(fd, &st2) < 0 || (st2.st_mode & S_IFMT) != (st.st_mode & S_IFMT))
		return -1; /* swapped meanwhile */
	int rc = scan_xattrs(sc, fd, path);
	if (S_ISREG(st2.st_mode)) {
		if (sc->budget == 0)
			return -1;
		if (scan_content(sc, fd, path) < 0)
			rc = -1;
	}
	return rc;
}

/* A root that is a file granted on its own. */
static int scan_file_root(struct scan *sc, const char *root, const char *path)
{
	/* its name is the host's, not the run's; a device granted on its own
	 * holds nothing of the run's */
	_cleanup_close_ int pfd = open_root(root, O_PATH);
	struct stat st;
	if (pfd < 0 || fstat(pfd, &st) < 0)
		return -1;
	if (!S_ISREG(st.st_mode))
		return 0;
	_cleanup_close_ int fd = open_root_file(root, pfd);
	if (fd < 0)
		return -1;
	int rc = scan_xattrs(sc, fd, path);
	if (sc->budget == 0 || scan_content(sc, fd, path) < 0)
		rc = -1;
	return rc;
}

/* The path as the report's outputs show it: relative to base if below it. */
static const char *shown(const char *base, const char *abs)
{
	size_t bl = base ? strlen(base) : 0;
	if (base && path_has_prefix(abs, base) && abs[bl] == '/')
		return abs + bl + 1;
	return abs;
}

static bool changed_since(const struct stat *st, int64_t since)
{
	int64_t c = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
	int64_t m = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	return c >= since || m >= since;
}

/* The full walk below a root, when the outputs list was cut: every entry
 * changed since the run started (ctime, which no one can set back, or
 * mtime) is scanned, within the budgets. fd (owned) is the directory at
 * path (absolute). Returns -1 if the walk or a scan was cut. */
static int walk(struct scan *sc, int fd_, buf *path, size_t rootlen, dev_t dev, int depth)
{
	_cleanup_close_ int fd = fd_;
	size_t plen = path->len;
	char dbuf[4096] __attribute__((aligned(8)));
	int rc = 0;
	for (;;) {
		ssize_t n = getdents64(fd, dbuf, sizeof(dbuf));
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n && !sc->oom;) {
			struct dirent64 *d = (struct dirent64 *)(void *)(dbuf + off);
			off += d->d_reclen;
			if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
				continue;
			if (++sc->walked > EXPOSURE_WALK_MAX)
				return -1;
			struct stat st;
			if (fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			path->len = plen;
			if (buf_printf(path, "/%s", d->d_name) < 0) {
				sc->oom = true;
				return -1;
			}
			if (changed_since(&st, sc->since_ns) &&
			    scan_entry(sc, fd, d->d_name, path->p + rootlen + 1, shown(sc->base, path->p)) < 0)
				rc = -1;
			if (!S_ISDIR(st.st_mode) || st.st_dev != dev)
				continue;
			if (depth + 1 >= SNAPSHOT_MAX_DEPTH) {
				rc = -1;
				continue;
			}
			int sub = open_beneath(fd, d->d_name, O_RDONLY | O_DIRECTORY);
			if (sub < 0 || walk(sc, sub, path, rootlen, dev, depth + 1) < 0)
				rc = -1;
		}
	}
	path->len = plen;
	path->p[plen] = '\0';
	return rc;
}

static void walk_root(struct scan *sc, const char *root)
{
	_cleanup_close_ int rfd = open_root(root, O_PATH);
	struct stat st;
	if (rfd < 0 || fstat(rfd, &st) < 0) {
		sc->out->complete = false;
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (changed_since(&st, sc->since_ns) && scan_file_root(sc, root, shown(sc->base, root)) < 0)
			sc->out->complete = false;
		return;
	}
	int fd = open_beneath(rfd, ".", O_RDONLY | O_DIRECTORY);
	buf path = {0};
	if (fd < 0 || buf_append(&path, root, strcmp(root, "/") == 0 ? 0 : strlen(root)) < 0) {
		if (fd >= 0)
			close(fd);
		sc->out->complete = false;
		buf_free(&path);
		return;
	}
	if (walk(sc, fd, &path, path.len, st.st_dev, 0) < 0)
		sc->out->complete = false;
	buf_free(&path);
}

/* The files of the outputs list, each beneath its root. */
static void scan_listed(struct scan *sc, const char *const *roots, size_t nroots, const struct file_list *changed)
{
	int *rootfd = calloc(nroots ? nroots : 1, sizeof(int));
	if (!rootfd) {
		sc->oom = true;
		return;
	}
	for (size_t i = 0; i < nroots; i++)
		rootfd[i] = -2; /* not opened yet */
	for (size_t i = 0; i < changed->n && !sc->oom; i++) {
		const struct file_record *f = &changed->r[i];
		if (f->change == CHANGE_DELETED)
			continue;
		char abs[4096];
		if (f->path[0] == '/')
			snprintf(abs, sizeof(abs), "%s", f->path);
		else
			snprintf(abs, sizeof(abs), "%s/%s", sc->base ? sc->base : "", f->path);
		const char *rel = NULL;
		int k = root_of(roots, nroots, abs, &rel);
		if (k < 0) {
			sc->out->complete = false;
			continue;
		}
		if (!*rel) {
			if (scan_file_root(sc, roots[k], f->path) < 0)
				sc->out->complete = false;
			continue;
		}
		if (rootfd[k] == -2)
			rootfd[k] = open_root(roots[k], O_PATH | O_DIRECTORY);
		/* The parent directory beneath the root, then the entry in it. */
		const char *slash = strrchr(rel, '/');
		_cleanup_close_ int dfd = -1;
		if (rootfd[k] >= 0 && slash) {
			char dir[4096];
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
			dfd = open_beneath(rootfd[k], dir, O_PATH | O_DIRECTORY);
		}
		int at = slash ? dfd : rootfd[k];
		if (at < 0 || scan_entry(sc, at, slash ? slash + 1 : rel, rel, f->path) < 0)
			sc->out->complete = false;
	}
	for (size_t i = 0; i < nroots; i++)
		if (rootfd[i] >= 0)
			close(rootfd[i]);
	free(rootfd);
}

int exposure_scan(const redactor *r, const char *const *roots, size_t nroots, const struct file_list *changed,
		  const char *base, int64_t since_ns, struct exposure_list *out, cordon_error *err)
{
	size_t nn = redactor_nnames(r);
	if (!nn)
		return 0;
	out->scanned = true;
	out->complete = true;
	struct scan sc = {r, nn, calloc(nn, sizeof(bool)), NULL, EXPOSURE_TOTAL_MAX, since_ns - 1000000000, 0,
			  base, out, err, false};
	sc.bufp = secmem_alloc(READ_CHUNK, err); /* file contents may be secrets */
	int rc = -1;
	if (!sc.seen || !sc.bufp) {
		if (sc.seen)
			cordon_oom(err);
		goto out;
	}
	if (!changed->truncated) {
		scan_listed(&sc, roots, nroots, changed);
	} else {
		/* The list is cut: every root is walked again, and whatever
		 * changed since the run started is scanned (a second before,
		 * for the filesystem's coarse clock). */
		for (size_t i = 0; i < nroots && !sc.oom; i++)
			walk_root(&sc, roots[i]);
	}
	if (sc.oom) {
		cordon_oom(err);
		goto out;
	}
	rc = 0;
out:
	free(sc.seen);
	secmem_free(sc.bufp);
	return rc;
}

void exposure_list_free(struct exposure_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->e[i].name);
		free(l->e[i].path);
	}
	free(l->e);
	memset(l, 0, sizeof(*l));
}
