#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "clock.h"
#include "cleanup.h"
#include "compat.h"
#include "error.h"
#include "strv.h"
#include "sweep.h"

#define PRIV_BITS (S_ISUID | S_ISGID)

void fix_list_free(struct fix_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->f[i].path);
	free(l->f);
	memset(l, 0, sizeof(*l));
}

static void add_fix(struct fix_list *l, const char *path, const char *base, const char *what)
{
	struct fix *f = realloc(l->f, (l->n + 1) * sizeof(*f));
	if (!f)
		return;
	l->f = f;
	size_t bl = base ? strlen(base) : 0;
	const char *rel = path;
	if (base && path_has_prefix(path, base) && path[bl] == '/')
		rel = path + bl + 1;
	else if (base && strcmp(path, base) == 0)
		rel = "."; /* the workspace itself */
	f[l->n].path = strdup(rel);
	if (!f[l->n].path)
		return;
	snprintf(f[l->n].what, sizeof(f[l->n].what), "%s", what);
	l->n++;
}

static void acls_read(int fd, char *acl[2], size_t len[2]);

int sweep_pin(struct sweep *sw, const char *const *roots, size_t n, cordon_error *err)
{
	memset(sw, 0, sizeof(*sw));
	clock_gettime(CLOCK_REALTIME, &sw->start);
	sw->max_entries = SWEEP_MAX_ENTRIES;
	sw->budget_ns = SWEEP_BUDGET_NS;
	sw->max_name_bytes = SWEEP_MAX_NAME_BYTES;
	sw->r = calloc(n ? n : 1, sizeof(*sw->r));
	if (!sw->r)
		return cordon_oom(err);
	for (size_t i = 0; i < n; i++) {
		struct sweep_root *r = &sw->r[sw->n];
		r->fd = open_root(roots[i], O_PATH);
		if (r->fd < 0) {
			if (errno == ENOENT)
				continue;
			int e = errno;
			sweep_free(sw);
			if (e == ELOOP)
				return cordon_err(err, e, "pin writable root %s: a symbolic link is on its path now "
						  "(cordon never follows one there)", roots[i]);
			return cordon_err(err, e, "pin writable root %s", roots[i]);
		}
		r->path = strdup(roots[i]);
		r->acl[0] = r->acl[1] = NULL;
		if (!r->path || fstat(r->fd, &r->st) < 0) {
			int e = r->path ? errno : 12;
			close(r->fd);
			free(r->path);
			r->path = NULL;
			sweep_free(sw);
			return cordon_err(err, e, "pin writable root %s", roots[i]);
		}
		if (S_ISDIR(r->st.st_mode))
			acls_read(r->fd, r->acl, r->acl_len);
		sw->n++;
	}
	return 0;
}

int sweep_keep(struct sweep *sw, const char *const *paths, size_t n, cordon_error *err)
{
	if (!n)
		return 0;
	struct sweep_root *r = realloc(sw->r, (sw->n + n) * sizeof(*r));
	if (!r)
		return cordon_oom(err);
	sw->r = r;
	for (size_t i = 0; i < n; i++) {
		struct sweep_root *k = &sw->r[sw->n];
		*k = (struct sweep_root){.fd = open_root(paths[i], O_PATH), .keep_only = true};
		if (k->fd < 0 && errno == ENOENT && (k->path = strdup(paths[i]))) {
			k->absent = true;
			sw->n++;
			continue;
		}
		if (k->fd < 0)
			continue; /* a link now: nothing of the host's to put back */
		if (fstat(k->fd, &k->st) < 0 || !S_ISDIR(k->st.st_mode) || !(k->path = strdup(paths[i]))) {
			close(k->fd);
			continue;
		}
		acls_read(k->fd, k->acl, k->acl_len);
		sw->n++;
	}
	return 0;
}

static const char *const acl_names[2] = {"system.posix_acl_access", "system.posix_acl_default"};

/* A directory's ACLs (at most 64 KiB each, the kernel's bound), by its
 * pinned fd. */
static void acls_read(int fd, char *acl[2], size_t len[2])
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	for (int k = 0; k < 2; k++) {
		acl[k] = NULL;
		len[k] = 0;
		char *b = malloc(65536);
		ssize_t n = b ? getxattr(link, acl_names[k], b, 65536) : -1;
		if (n <= 0) {
			free(b);
			continue;
		}
		acl[k] = b;
		len[k] = (size_t)n;
	}
}

static void acls_free(char *acl[2])
{
	free(acl[0]);
	free(acl[1]);
	acl[0] = acl[1] = NULL;
}

void sweep_free(struct sweep *sw)
{
	for (size_t i = 0; i < sw->n; i++) {
		if (sw->r[i].fd >= 0)
			close(sw->r[i].fd);
		free(sw->r[i].path);
		acls_free(sw->r[i].acl);
	}
	free(sw->r);
	memset(sw, 0, sizeof(*sw));
}

/* The mode and owner of a root, as before the run. */
void sweep_tighten_at(int rootfd, const char *rel, mode_t before, const char *path, const char *base,
		      struct fix_list *restored)
{
	_cleanup_close_ int fd = open_beneath(rootfd, rel, O_PATH);
	struct stat now;
	if (fd < 0 || fstat(fd, &now) < 0 || S_ISLNK(now.st_mode))
		return;
	char link[64], what[128];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	mode_t want = now.st_mode & 07777 & ~(mode_t)(022 & ~before);
	if (want != (now.st_mode & 07777) && chmod(link, want) == 0) {
		snprintf(what, sizeof(what), "mode 0%o -> 0%o", (unsigned)(now.st_mode & 07777), (unsigned)want);
		add_fix(restored, path, base, what);
	}
	/* Only an ACL that is there (removexattr of none succeeds on some
	 * filesystems) is removed and said. */
	for (int k = 0; k < 2; k++)
		if (getxattr(link, acl_names[k], NULL, 0) > 0 && removexattr(link, acl_names[k]) == 0) {
			snprintf(what, sizeof(what), "%s ACL removed", k ? "default" : "access");
			add_fix(restored, path, base, what);
		}
}

static void tighten_made(const struct sweep_root *r, const char *base, struct fix_list *restored);
static void restore_root(const struct sweep_root *r, const char *base, struct fix_list *restored);

/* A directory the run made where nothing was (sweep_keep, absent): no group
 * or other write, no ACL. Opened from / with no link followed (a link
 * there is no directory of the host's to fix). */
static void tighten_made(const struct sweep_root *r, const char *base, struct fix_list *restored)
{
	struct sweep_root t = *r;
	t.fd = open_root(r->path, O_PATH);
	if (t.fd < 0 || fstat(t.fd, &t.st) < 0 || !S_ISDIR(t.st.st_mode)) {
		if (t.fd >= 0)
			close(t.fd);
		return;
	}
	/* As it is, less group and other write; no ACL before. */
	t.st.st_mode &= ~(mode_t)022;
	t.absent = false;
	t.acl[0] = t.acl[1] = NULL;
	t.acl_len[0] = t.acl_len[1] = 0;
	restore_root(&t, base, restored);
	close(t.fd);
}

static void restore_root(const struct sweep_root *r, const char *base, struct fix_list *restored)
{
	struct stat now;
	if (r->absent) {
		tighten_made(r, base, restored);
		return;
	}
	if (fstat(r->fd, &now) < 0)
		return;
	char what[128], link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", r->fd);
	if (now.st_uid != r->st.st_uid || now.st_gid != r->st.st_gid) {
		/* On the pinned inode itself (AT_EMPTY_PATH): no path is walked. */
		if (fchownat(r->fd, "", r->st.st_uid, r->st.st_gid, AT_EMPTY_PATH) == 0) {
			snprintf(what, sizeof(what), "owner %u:%u -> %u:%u", (unsigned)now.st_uid, (unsigned)now.st_gid,
				 (unsigned)r->st.st_uid, (unsigned)r->st.st_gid);
			add_fix(restored, r->path, base, what);
		}
		fstat(r->fd, &now); /* a chown may have cleared bits */
	}
	/* As before the run, except that group and other write come back only
	 * if they are there now too: another run alive when this one started
	 * may have loosened it, and its own sweep put it right since (outside
	 * review 11: a concurrent run's baseline put 0777 back on .git). */
	mode_t want = (r->st.st_mode & 07777 & ~(mode_t)022) | (r->st.st_mode & now.st_mode & 022);
	if ((now.st_mode & 07777) != want && !S_ISLNK(now.st_mode) && chmod(link, want) == 0) {
		snprintf(what, sizeof(what), "mode 0%o -> 0%o", (unsigned)(now.st_mode & 07777), (unsigned)want);
		add_fix(restored, r->path, base, what);
	}
	if (!S_ISDIR(now.st_mode))
		return;
	/* Its ACLs as they were (a default ACL the run added: every file made
	 * there later would get what it says, the creator's umask aside). */
	char *acl[2];
	size_t len[2];
	acls_read(r->fd, acl, len);
	/* Never put back (the one before may be another run's): one that
	 * differs from before is removed, the mode above says the rest. */
	for (int k = 0; k < 2; k++) {
		if (!len[k] || (len[k] == r->acl_len[k] && memcmp(acl[k], r->acl[k], len[k]) == 0))
			continue;
		if (removexattr(link, acl_names[k]) == 0) {
			snprintf(what, sizeof(what), "%s ACL removed", k ? "default" : "access");
			add_fix(restored, r->path, base, what);
		}
	}
	acls_free(acl);
}

/* fd: O_PATH on the file, already fstat'ed into st. */
static void clear_one(int fd, const struct stat *st, const char *path, const char *base, struct fix_list *cleared)
{
	char link[64], what[128];
	if (S_ISLNK(st->st_mode) || S_ISDIR(st->st_mode))
		return; /* no privilege bit means anything on these */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (st->st_mode & PRIV_BITS) {
		mode_t to = st->st_mode & 07777 & ~(mode_t)PRIV_BITS;
		if (chmod(link, to) == 0) {
			snprintf(what, sizeof(what), "mode 0%o -> 0%o", (unsigned)(st->st_mode & 07777), (unsigned)to);
			add_fix(cleared, path, base, what);
		}
	}
	if (S_ISREG(st->st_mode) && getxattr(link, "security.capability", NULL, 0) >= 0 &&
	    removexattr(link, "security.capability") == 0)
		add_fix(cleared, path, base, "security.capability removed");
}

/* The root holding path (the longest that is a prefix), or NULL. */
static const struct sweep_root *root_of(const struct sweep *sw, const char *path)
{
	const struct sweep_root *best = NULL;
	for (size_t i = 0; i < sw->n; i++)
		if (!sw->r[i].keep_only && S_ISDIR(sw->r[i].st.st_mode) && path_has_prefix(path, sw->r[i].path) &&
		    (!best || strlen(sw->r[i].path) > strlen(best->path)))
			best = &sw->r[i];
	return best;
}

/* One listed file, opened beneath its root. -1 when it cannot be (gone,
 * renamed, a path too long to resolve at once, a symlink on its way): the
 * caller then walks everything. */
static int sweep_path(const struct sweep *sw, const char *path, const char *base, struct fix_list *cleared)
{
	const struct sweep_root *r = root_of(sw, path);
	if (!r)
		return 0; /* not below a writable root: nothing the run could leave */
	size_t rl = strlen(r->path);
	const char *rel = path + rl;
	while (*rel == '/')
		rel++;
	if (!*rel)
		return 0; /* the root itself: restore_root's */
	_cleanup_close_ int fd = open_beneath(r->fd, rel, O_PATH);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	clear_one(fd, &st, path, base, cleared);
	return 0;
}

/* The sweep may have missed a file: why (the first reason only), where (the
 * last 80 bytes of a possibly long path name it well enough), and errno. */
static void incomplete(struct sweep_status *st, const char *what, const char *path, int e)
{
	if (!st->incomplete) {
		size_t l = path ? strlen(path) : 0;
		snprintf(st->reason, sizeof(st->reason), "%s at %s%s%s%s", what, l > 80 ? "..." : "",
			 path ? path + (l > 80 ? l - 80 : 0) : "", e ? ": " : "", e ? strerror(e) : "");
	}
	st->incomplete = true;
}

/* One directory of the walk: its identity, and the names in it still to
 * look at (read in full when entered, so only the current directory's fd is
 * held, whatever the depth). */
struct level {
	dev_t dev;
	ino_t ino;
	char *names; /* NUL-separated */
	size_t len, pos;
	size_t pathlen; /* of the walk's path string at this level */
};

struct walk {
	const struct sweep *sw;
	const char *base;
	struct fix_list *cleared;
	struct sweep_status *st;
	uint64_t deadline;
	size_t name_bytes; /* held in every level's names */
	buf path;          /* for the report only: never resolved */
	bool stop;         /* a bound was reached: the sweep ends */
	bool stop_root;    /* the tree moved under the walk: this root's walk ends */
};

/* Every name in directory fd, into lv. -1 (status set) on failure. */
static int read_names(struct walk *w, int fd, struct level *lv)
{
	char dbuf[16384];
	buf names = {0};
	for (;;) {
		ssize_t n = getdents64(fd, dbuf, sizeof(dbuf));
		if (n < 0) {
			buf_free(&names);
			incomplete(w->st, "directory unreadable", w->path.p, errno);
			return -1;
		}
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(dbuf + off);
			off += d->d_reclen;
			if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
				continue;
			size_t l = strlen(d->d_name) + 1;
			if (w->name_bytes + names.len + l > w->sw->max_name_bytes) {
				buf_free(&names);
				incomplete(w->st, "the name-bytes bound was reached", w->path.p, 0);
				w->stop = true;
				return -1;
			}
			if (buf_append(&names, d->d_name, l) < 0) {
				buf_free(&names);
				incomplete(w->st, "out of memory", w->path.p, 0);
				w->stop = true;
				return -1;
			}
		}
	}
	lv->names = names.p;
	lv->len = names.len;
	lv->pos = 0;
	w->name_bytes += names.len;
	return 0;
}

/* Does a file with stat st need a closer look: a privilege bit, or a
 * regular file the run may have given a capability (changed since the pin:
 * setxattr updates the ctime, which no call can set back). */
static bool suspect(const struct sweep *sw, const struct stat *st)
{
	if (S_ISLNK(st->st_mode) || S_ISDIR(st->st_mode))
		return false;
	if (st->st_mode & PRIV_BITS)
		return true;
	return S_ISREG(st->st_mode) && st->st_ctim.tv_sec >= sw->start.tv_sec - SWEEP_CTIME_SLACK_S;
}

/* Whether the entry name of directory dirfd (one component, the link
 * itself if it is one) has a security.capability: 1, 0, or -1 when it
 * cannot be told (no getxattrat before Linux 6.13): then the file is opened
 * and looked at. One call instead of open, fstat, getxattr and close. */
#ifndef SWEEP_NR_GETXATTRAT
#define SWEEP_NR_GETXATTRAT 464 /* the same on every architecture */
#endif
static int has_cap_at(int dirfd, const char *name)
{
	static bool missing;
	if (missing)
		return -1;
	struct {
		uint64_t value;
		uint32_t size, flags;
	} args = {0, 0, 0};
	long r = syscall(SWEEP_NR_GETXATTRAT, dirfd, name, AT_SYMLINK_NOFOLLOW, "security.capability", &args,
			 sizeof(args));
	if (r >= 0)
		return 1;
	if (errno == ENODATA || errno == EOPNOTSUPP)
		return 0;
	if (errno == ENOSYS)
		missing = true;
	return -1;
}

/* Every file below root r, one filesystem, no symlink followed, no depth
 * limit: depth-first, holding one directory fd. A child directory is opened
 * beneath its parent's fd (openat2, RESOLVE_BENEATH|NO_SYMLINKS|NO_XDEV) and
 * must be the inode just fstatat'ed; going back up opens ".." and checks it
 * is the parent recorded on the way down. */
static void walk_root(struct walk *w, const struct sweep_root *r)
{
	struct level *stack = NULL;
	size_t depth = 0, cap = 0;
	w->path.len = 0;
	if (buf_append(&w->path, r->path, strlen(r->path)) < 0) {
		incomplete(w->st, "out of memory", r->path, 0);
		w->stop = true;
		return;
	}
	int cur = open_beneath(r->fd, ".", O_RDONLY | O_DIRECTORY);
	struct stat st;
	if (cur < 0 || fstat(cur, &st) < 0) {
		incomplete(w->st, "root cannot be opened", r->path, errno);
		if (cur >= 0)
			close(cur);
		return;
	}
	for (;;) {
		if (depth == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct level *ns = realloc(stack, nc * sizeof(*ns));
			if (!ns) {
				incomplete(w->st, "out of memory", w->path.p, 0);
				w->stop = true;
				break;
			}
			stack = ns;
			cap = nc;
		}
		struct level *lv = &stack[depth];
		memset(lv, 0, sizeof(*lv));
		lv->dev = st.st_dev;
		lv->ino = st.st_ino;
		lv->pathlen = w->path.len;
		if (read_names(w, cur, lv) < 0 && w->stop)
			break;
		depth++;
		/* Look at the names of the current directory until one is a
		 * directory to enter; go back up when they are done. */
		bool entered = false;
		while (!entered && depth && !w->stop && !w->stop_root) {
			lv = &stack[depth - 1];
			if (lv->pos >= lv->len) {
				free(lv->names);
				w->name_bytes -= lv->len;
				lv->names = NULL;
				depth--;
				if (!depth)
					break;
				struct level *up = &stack[depth - 1];
				int ufd = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				struct stat ust;
				if (ufd < 0 || fstat(ufd, &ust) < 0 || ust.st_dev != up->dev || ust.st_ino != up->ino) {
					/* Moved while we walked (a concurrent run): what is left
					 * of this root is not looked at. */
					incomplete(w->st, "directory moved during the sweep", w->path.p, 0);
					if (ufd >= 0)
						close(ufd);
					w->stop_root = true;
					break;
				}
				close(cur);
				cur = ufd;
				w->path.len = up->pathlen;
				w->path.p[w->path.len] = '\0';
				continue;
			}
			const char *name = lv->names + lv->pos;
			lv->pos += strlen(name) + 1;
			w->st->entries++;
			if (w->st->entries > w->sw->max_entries) {
				incomplete(w->st, "the entry bound was reached", w->path.p, 0);
				w->stop = true;
				break;
			}
			if ((w->st->entries & 255) == 0 && mono_ns() > w->deadline) {
				incomplete(w->st, "the time bound was reached", w->path.p, 0);
				w->stop = true;
				break;
			}
			w->path.len = lv->pathlen;
			if (buf_printf(&w->path, "/%s", name) < 0) {
				incomplete(w->st, "out of memory", w->path.p, 0);
				w->stop = true;
				break;
			}
			struct stat es;
			if (fstatat(cur, name, &es, AT_SYMLINK_NOFOLLOW) < 0) {
				incomplete(w->st, "file changed during the sweep", w->path.p, errno);
				continue;
			}
			if (es.st_dev != lv->dev)
				continue; /* another filesystem mounted here: not the run's */
			if (S_ISDIR(es.st_mode)) {
				int sub = open_beneath(cur, name, O_RDONLY | O_DIRECTORY);
				if (sub < 0 && errno == EXDEV)
					continue; /* a mount point */
				if (sub < 0 || fstat(sub, &st) < 0 || st.st_ino != es.st_ino || st.st_dev != es.st_dev) {
					incomplete(w->st, "directory cannot be opened", w->path.p, sub < 0 ? errno : 0);
					if (sub >= 0)
						close(sub);
					continue;
				}
				close(cur);
				cur = sub;
				entered = true;
				continue;
			}
			if (!suspect(w->sw, &es))
				continue;
			if (!(es.st_mode & PRIV_BITS) && has_cap_at(cur, name) == 0)
				continue; /* a recent regular file without a capability */
			_cleanup_close_ int fd = open_beneath(cur, name, O_PATH);
			struct stat fs;
			if (fd < 0 || fstat(fd, &fs) < 0 || fs.st_ino != es.st_ino || fs.st_dev != es.st_dev) {
				incomplete(w->st, "file changed during the sweep", w->path.p, fd < 0 ? errno : 0);
				continue;
			}
			clear_one(fd, &fs, w->path.p, w->base, w->cleared);
		}
		if (!entered)
			break;
	}
	for (size_t i = 0; i < depth; i++)
		free(stack[i].names);
	w->name_bytes = 0;
	free(stack);
	close(cur);
}

static void walk_all(struct sweep *sw, const char *base, struct fix_list *cleared, struct sweep_status *status)
{
	struct walk w = {sw, base, cleared, status, mono_ns() + sw->budget_ns, 0, {0}, false, false};
	status->walked = true;
	for (size_t i = 0; i < sw->n; i++) {
		const struct sweep_root *r = &sw->r[i];
		if (!S_ISDIR(r->st.st_mode) || r->keep_only)
			continue; /* a file bound writable: its mode is the root's, restored */
		walk_root(&w, r);
		if (w.stop)
			break;
		w.stop_root = false;
	}
	buf_free(&w.path);
}

void sweep_run(struct sweep *sw, const struct file_list *changed, bool truncated, const char *base,
	       struct fix_list *cleared, struct fix_list *restored, struct sweep_status *status)
{
	memset(status, 0, sizeof(*status));
	for (size_t i = 0; i < sw->n; i++)
		restore_root(&sw->r[i], base, restored);
	bool walk = truncated;
	for (size_t i = 0; !walk && changed && i < changed->n; i++) {
		const struct file_record *f = &changed->r[i];
		if (f->change == CHANGE_DELETED)
			continue;
		buf p = {0};
		int r = f->path[0] == '/' ? buf_printf(&p, "%s", f->path)
					  : buf_printf(&p, "%s/%s", base ? base : "", f->path);
		if (r < 0 || sweep_path(sw, p.p, base, cleared) < 0)
			walk = true; /* a listed file out of reach: look at everything */
		buf_free(&p);
	}
	if (walk)
		walk_all(sw, base, cleared, status);
}
