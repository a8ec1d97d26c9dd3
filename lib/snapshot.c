#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "openat2.h"
#include "cleanup.h"
#include "compat.h"
#include "error.h"
#include "hash.h"
#include "snapshot.h"
#include "strv.h"

const char *change_name(enum change c)
{
	static const char *n[] = {"created", "modified", "deleted"};
	return n[c];
}

const char *cut_name(enum cut_reason c)
{
	static const char *n[] = {"none", "walk-entries", "walk-path-bytes", "walk-depth", "list-files",
				  "list-path-bytes"};
	return n[c];
}

const char *hash_skip_name(enum hash_skip s)
{
	static const char *n[] = {"none", "byte-budget", "time-budget", "unreadable"};
	return n[s];
}

/* openat2 refuses O_PATH with any flag but these. */
static uint64_t open_flags(int flags)
{
	if (flags & O_PATH)
		return (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC);
	return (uint64_t)(flags | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
}

int open_beneath(int dirfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = open_flags(flags),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	return sys_openat2(dirfd, path, &how);
}

/* A canonical absolute host path, opened from / without following any
 * symlink (a root is where a run's tree starts: it may sit inside another
 * writable path, and be swapped for a link after it was resolved). */
int open_root(const char *path, int flags)
{
	struct open_how how = {
		.flags = open_flags(flags),
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	/* An absolute path resolves from the root as it is: one call, no
	 * open of "/" and no close of it (run once per protected name). */
	if (path[0] == '/')
		return sys_openat2(AT_FDCWD, path, &how);
	_cleanup_close_ int top = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (top < 0)
		return -1;
	const char *rel = path;
	while (*rel == '/')
		rel++;
	return sys_openat2(top, *rel ? rel : ".", &how);
}

int open_root_file(const char *path, int pinned)
{
	struct stat a, b;
	int fd = open_root(path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &b) < 0 || !S_ISREG(b.st_mode) ||
	    (pinned >= 0 && (fstat(pinned, &a) < 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev))) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}

static void cut(struct snapshot *s, enum cut_reason why)
{
	if (!s->truncated)
		s->cut = why;
	s->truncated = true;
}

/* Returns 0, 1 when a bound stops the walk, -1 when memory ran out. */
static int add_entry(struct snapshot *s, const char *path, size_t len, uint16_t root,
		     const struct stat *st)
{
	if (s->n >= SNAPSHOT_MAX_ENTRIES) {
		cut(s, CUT_WALK_ENTRIES);
		return 1;
	}
	if (s->arena_len + len + 1 > SNAPSHOT_MAX_PATH_BYTES) {
		cut(s, CUT_WALK_PATH_BYTES);
		return 1;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct snap_entry *e = realloc(s->e, cap * sizeof(*e));
		if (!e)
			return -1;
		s->e = e;
		s->cap = cap;
	}
	if (s->arena_len + len + 1 > s->arena_cap) {
		size_t cap = s->arena_cap ? s->arena_cap : 16384;
		while (cap < s->arena_len + len + 1)
			cap *= 2;
		if (cap > SNAPSHOT_MAX_PATH_BYTES)
			cap = SNAPSHOT_MAX_PATH_BYTES;
		char *a = realloc(s->arena, cap);
		if (!a)
			return -1;
		s->arena = a;
		s->arena_cap = cap;
	}
	memcpy(s->arena + s->arena_len, path, len + 1);
	s->e[s->n++] = (struct snap_entry){
		(uint32_t)s->arena_len, root, st->st_mode, st->st_ino, st->st_size,
		(int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
		(int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec,
	};
	s->arena_len += len + 1;
	return 0;
}

struct walker {
	struct snapshot *s;
	buf path; /* of the directory being listed, then of each entry */
	uint16_t root;
	dev_t dev;
};

/* List the directory open at fd (owned) and below. Raw getdents64 with a
 * 4 KiB buffer per level: a DIR stream costs 32 KiB, 8 MiB at depth 256. */
static int walk(struct walker *w, int fd_, int depth)
{
	_cleanup_close_ int fd = fd_;
	struct snapshot *s = w->s;
	size_t plen = w->path.len;
	char dbuf[4096] __attribute__((aligned(8)));
	for (;;) {
		ssize_t n = getdents64(fd, dbuf, sizeof(dbuf));
		if (n <= 0)
			break;
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(void *)(dbuf + off);
			off += d->d_reclen;
			if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
				continue;
			struct stat st;
			if (fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			w->path.len = plen;
			if (buf_printf(&w->path, "/%s", d->d_name) < 0)
				return -1;
			int r = add_entry(s, w->path.p, w->path.len, w->root, &st);
			if (r != 0)
				return r < 0 ? -1 : 1;
			if (!S_ISDIR(st.st_mode) || st.st_dev != w->dev)
				continue; /* another filesystem: its files are not listed */
			if (depth + 1 >= SNAPSHOT_MAX_DEPTH) {
				cut(s, CUT_WALK_DEPTH);
				continue;
			}
			int sub = open_beneath(fd, d->d_name, O_RDONLY | O_DIRECTORY);
			if (sub < 0)
				continue; /* swapped for a link, or unreadable */
			r = walk(w, sub, depth + 1);
			if (r != 0)
				return r;
		}
	}
	w->path.len = plen;
	w->path.p[plen] = '\0';
	return 0;
}

static int entry_cmp(const void *a, const void *b, void *arena)
{
	return strcmp((const char *)arena + ((const struct snap_entry *)a)->path,
		      (const char *)arena + ((const struct snap_entry *)b)->path);
}

int snapshot_take(struct snapshot *s, const char *const *roots, size_t nroots, cordon_error *err)
{
	memset(s, 0, sizeof(*s));
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	s->taken_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	if (nroots > SNAPSHOT_MAX_ROOTS)
		nroots = SNAPSHOT_MAX_ROOTS;
	for (size_t i = 0; i < nroots; i++) {
		int rfd = open_root(roots[i], O_PATH);
		s->rootfd[s->nroots] = rfd;
		s->rootlen[s->nroots] = strlen(roots[i]);
		s->nroots++;
		struct stat st;
		if (rfd < 0 || fstat(rfd, &st) < 0)
			continue;
		if (S_ISREG(st.st_mode)) {
			/* A file granted on its own (--rw FILE): an entry of its own,
			 * so that a change to it is an output and is scanned. (A
			 * device granted on its own holds no data of the run's.) */
			int r = add_entry(s, roots[i], strlen(roots[i]), (uint16_t)i, &st);
			if (r < 0) {
				snapshot_free(s);
				return cordon_oom(err);
			}
			if (r > 0)
				break;
			continue;
		}
		int fd = open_beneath(rfd, ".", O_RDONLY | O_DIRECTORY);
		if (fd < 0)
			continue;
		struct walker w = {s, {0}, (uint16_t)i, st.st_dev};
		int r = buf_append(&w.path, roots[i], strcmp(roots[i], "/") == 0 ? 0 : strlen(roots[i]));
		if (r == 0)
			r = walk(&w, fd, 0);
		else
			close(fd);
		buf_free(&w.path);
		if (r < 0) {
			snapshot_free(s);
			return cordon_oom(err);
		}
		if (r > 0)
			break; /* a bound was reached */
	}
	if (s->n)
		qsort_r(s->e, s->n, sizeof(*s->e), entry_cmp, s->arena);
	return 0;
}

void snapshot_free(struct snapshot *s)
{
	for (size_t i = 0; i < s->nroots; i++)
		if (s->rootfd[i] >= 0)
			close(s->rootfd[i]);
	free(s->e);
	free(s->arena);
	memset(s, 0, sizeof(*s));
}

void file_list_free(struct file_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->r[i].path);
	free(l->r);
	memset(l, 0, sizeof(*l));
}

static void list_cut(struct file_list *l, enum cut_reason why)
{
	if (!l->truncated)
		l->cut = why;
	l->truncated = true;
	l->omitted++;
}

/* Hash the file open at fd (owned, may be -1) into r, within the list's
 * budget. Only a regular file (by fstat of this very fd) is read. */
static void hash_into(struct file_list *l, struct file_record *r, int fd_)
{
	_cleanup_close_ int fd = fd_;
	struct stat st;
	r->sha256[0] = '\0';
	if (fd < 0 || fstat(fd, &st) < 0) {
		r->skip = SKIP_UNREADABLE; /* vanished, swapped for a link, unreadable */
		return;
	}
	r->regular = S_ISREG(st.st_mode);
	if (!r->regular) {
		r->bytes = 0;
		return; /* a FIFO, device, socket or directory: listed, never read */
	}
	r->bytes = (uint64_t)st.st_size;
	switch (sha256_fd_budget(fd, &st, &l->hash, r->sha256)) {
	case HASH_OK:
		r->skip = SKIP_NONE;
		break;
	case HASH_OVER_BYTES:
		r->skip = SKIP_BYTE_BUDGET;
		break;
	case HASH_OVER_TIME:
		r->skip = SKIP_TIME_BUDGET;
		break;
	default:
		r->skip = SKIP_UNREADABLE;
	}
}

/* A new record for path (absolute), or NULL when the list is full (the
 * file is counted in omitted) or memory ran out (*oom). */
static struct file_record *add_record(struct file_list *l, const char *path, const char *base,
				      enum change c, bool regular, bool *oom)
{
	size_t bl = base ? strlen(base) : 0;
	const char *rel = path;
	if (base && path_has_prefix(path, base) && path[bl] == '/')
		rel = path + bl + 1;
	size_t len = strlen(rel) + 1;
	if (l->n >= FILES_MAX_RECORDS) {
		list_cut(l, CUT_LIST_FILES);
		return NULL;
	}
	if (l->path_bytes + len > FILES_MAX_PATH_BYTES) {
		list_cut(l, CUT_LIST_PATH_BYTES);
		return NULL;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct file_record *r = realloc(l->r, cap * sizeof(*r));
		if (!r) {
			*oom = true;
			return NULL;
		}
		l->r = r;
		l->cap = cap;
	}
	struct file_record *r = &l->r[l->n];
	memset(r, 0, sizeof(*r));
	r->path = strdup(rel);
	if (!r->path) {
		*oom = true;
		return NULL;
	}
	l->path_bytes += len;
	r->change = c;
	r->regular = regular;
	l->n++;
	return r;
}

/* A record for entry e of s; created and modified regular files are hashed
 * beneath the root fd they were found under. */
static int record_entry(struct file_list *l, const struct snapshot *s, const struct snap_entry *e,
			const char *base, enum change c, cordon_error *err)
{
	bool oom = false;
	const char *path = snap_path(s, e);
	struct file_record *r = add_record(l, path, base, c, S_ISREG(e->mode), &oom);
	if (oom)
		return cordon_oom(err);
	if (!r || c == CHANGE_DELETED || !S_ISREG(e->mode))
		return 0;
	int rfd = e->root < s->nroots ? s->rootfd[e->root] : -1;
	const char *rel = path + s->rootlen[e->root];
	while (*rel == '/')
		rel++;
	if (!*rel) { /* the root itself, a file granted on its own */
		hash_into(l, r, rfd >= 0 ? open_root_file(path, rfd) : -1);
		return 0;
	}
	hash_into(l, r, rfd >= 0 ? open_beneath(rfd, rel, O_RDONLY) : -1);
	return 0;
}

static void list_start(struct file_list *l, const struct snapshot *walked)
{
	memset(l, 0, sizeof(*l));
	hash_budget_init(&l->hash);
	if (walked && walked->truncated) {
		l->truncated = true;
		l->cut = walked->cut;
	}
}

int snapshot_diff(const struct snapshot *before, const struct snapshot *after, const char *base,
		  struct file_list *out, cordon_error *err)
{
	list_start(out, before->truncated ? before : after);
	size_t i = 0, j = 0;
	while (i < before->n || j < after->n) {
		int c = i == before->n ? 1 : j == after->n ? -1 :
			strcmp(snap_path(before, &before->e[i]), snap_path(after, &after->e[j]));
		if (c < 0) {
			/* Not seen after: deleted, unless the after walk was cut
			 * short (then it may just not have been reached). */
			if (!after->truncated &&
			    record_entry(out, before, &before->e[i], base, CHANGE_DELETED, err) < 0)
				return -1;
			i++;
		} else if (c > 0) {
			const struct snap_entry *b = &after->e[j];
			if (!S_ISDIR(b->mode) && record_entry(out, after, b, base, CHANGE_CREATED, err) < 0)
				return -1;
			j++;
		} else {
			const struct snap_entry *a = &before->e[i], *b = &after->e[j];
			bool changed = a->ino != b->ino || a->size != b->size || a->mtime_ns != b->mtime_ns ||
				       a->ctime_ns != b->ctime_ns || (a->mode & S_IFMT) != (b->mode & S_IFMT);
			if (changed && !S_ISDIR(b->mode) &&
			    record_entry(out, after, b, base, CHANGE_MODIFIED, err) < 0)
				return -1;
			i++;
			j++;
		}
	}
	return 0;
}

/* One input root: a regular file is hashed, a directory walked, anything
 * else listed without a hash. */
static int hash_root(struct file_list *out, const char *root, const char *base, cordon_error *err)
{
	_cleanup_close_ int fd = open_root(root, O_PATH);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (errno == ELOOP)
			return cordon_err(err, ELOOP, "input %s: a symbolic link is on its path now (cordon never follows one there)", root);
		return cordon_err_errno(err, "input %s", root);
	}
	bool oom = false;
	if (!S_ISDIR(st.st_mode)) {
		struct file_record *r = add_record(out, root, base, CHANGE_CREATED, S_ISREG(st.st_mode), &oom);
		if (oom)
			return cordon_oom(err);
		if (r && S_ISREG(st.st_mode)) {
			/* Opened for reading only now that it is known to be a
			 * regular file, and only if it is still the same one. */
			int rfd = open_root(root, O_RDONLY);
			struct stat st2;
			if (rfd >= 0 && (fstat(rfd, &st2) < 0 || st2.st_ino != st.st_ino || st2.st_dev != st.st_dev)) {
				close(rfd);
				rfd = -1;
			}
			hash_into(out, r, rfd);
		}
		return 0;
	}
	struct snapshot s;
	if (snapshot_take(&s, &root, 1, err) < 0)
		return -1;
	if (s.truncated && !out->truncated) {
		out->truncated = true;
		out->cut = s.cut;
	}
	int rc = 0;
	for (size_t k = 0; k < s.n && rc == 0; k++)
		if (S_ISREG(s.e[k].mode))
			rc = record_entry(out, &s, &s.e[k], base, CHANGE_CREATED, err);
	snapshot_free(&s);
	return rc;
}

int files_hash_tree(const char *const *roots, size_t nroots, const char *base,
		    struct file_list *out, cordon_error *err)
{
	list_start(out, NULL);
	for (size_t i = 0; i < nroots; i++)
		if (hash_root(out, roots[i], base, err) < 0)
			return -1;
	return 0;
}

void file_list_start(struct file_list *l)
{
	list_start(l, NULL);
}

static int record_cmp(const void *a, const void *b)
{
	return strcmp(((const struct file_record *)a)->path, ((const struct file_record *)b)->path);
}

void file_list_sort(struct file_list *l)
{
	if (l->n > 1)
		qsort(l->r, l->n, sizeof(*l->r), record_cmp);
}

int file_list_add(struct file_list *l, const char *path, const char *base, enum change c, bool regular, int fd,
		  cordon_error *err)
{
	bool oom = false;
	struct file_record *r = add_record(l, path, base, c, regular, &oom);
	if (oom) {
		if (fd >= 0)
			close(fd);
		return cordon_oom(err);
	}
	if (r && regular && c != CHANGE_DELETED)
		hash_into(l, r, fd);
	else if (fd >= 0)
		close(fd);
	return 0;
}
