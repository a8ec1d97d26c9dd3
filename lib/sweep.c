#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
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

int sweep_pin(struct sweep *sw, const char *const *roots, size_t n, cordon_error *err)
{
	memset(sw, 0, sizeof(*sw));
	sw->r = calloc(n ? n : 1, sizeof(*sw->r));
	if (!sw->r)
		return cordon_err(err, 12, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct sweep_root *r = &sw->r[sw->n];
		r->fd = open(roots[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (r->fd < 0)
			continue;
		r->path = strdup(roots[i]);
		if (!r->path || fstat(r->fd, &r->st) < 0) {
			int e = r->path ? errno : 12;
			close(r->fd);
			free(r->path);
			r->path = NULL;
			return cordon_err(err, e, "pin writable root %s", roots[i]);
		}
		sw->n++;
	}
	return 0;
}

void sweep_free(struct sweep *sw)
{
	for (size_t i = 0; i < sw->n; i++) {
		close(sw->r[i].fd);
		free(sw->r[i].path);
	}
	free(sw->r);
	memset(sw, 0, sizeof(*sw));
}

/* The mode and owner of a root, as before the run. */
static void restore_root(const struct sweep_root *r, const char *base, struct fix_list *restored)
{
	struct stat now;
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
	if ((now.st_mode & 07777) != (r->st.st_mode & 07777) && !S_ISLNK(now.st_mode) &&
	    chmod(link, r->st.st_mode & 07777) == 0) {
		snprintf(what, sizeof(what), "mode 0%o -> 0%o", (unsigned)(now.st_mode & 07777),
			 (unsigned)(r->st.st_mode & 07777));
		add_fix(restored, r->path, base, what);
	}
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
		if (S_ISDIR(sw->r[i].st.st_mode) && path_has_prefix(path, sw->r[i].path) &&
		    (!best || strlen(sw->r[i].path) > strlen(best->path)))
			best = &sw->r[i];
	return best;
}

static void sweep_path(const struct sweep *sw, const char *path, const char *base, struct fix_list *cleared)
{
	const struct sweep_root *r = root_of(sw, path);
	if (!r)
		return;
	size_t rl = strlen(r->path);
	const char *rel = path + rl;
	while (*rel == '/')
		rel++;
	if (!*rel)
		return; /* the root itself: restore_root's */
	_cleanup_close_ int fd = open_beneath(r->fd, rel, O_PATH);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0)
		clear_one(fd, &st, path, base, cleared);
}

/* Every file below dirfd (an O_PATH directory), one filesystem, no symlink
 * followed: for a change list that was cut short. */
static void sweep_tree(int dirfd, const char *path, dev_t dev, int depth, const char *base,
		       struct fix_list *cleared)
{
	if (depth > 256)
		return;
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	_cleanup_closedir_ DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		_cleanup_close_ int sub = openat(dirfd, e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (sub < 0 || fstat(sub, &st) < 0 || st.st_dev != dev)
			continue;
		buf p = {0};
		if (buf_printf(&p, "%s/%s", path, e->d_name) < 0)
			return;
		if (S_ISDIR(st.st_mode))
			sweep_tree(sub, p.p, dev, depth + 1, base, cleared);
		else
			clear_one(sub, &st, p.p, base, cleared);
		buf_free(&p);
	}
}

void sweep_run(struct sweep *sw, const struct file_list *changed, bool truncated, const char *base,
	       struct fix_list *cleared, struct fix_list *restored)
{
	for (size_t i = 0; i < sw->n; i++)
		restore_root(&sw->r[i], base, restored);
	if (truncated) {
		for (size_t i = 0; i < sw->n; i++) {
			const struct sweep_root *r = &sw->r[i];
			if (!S_ISDIR(r->st.st_mode)) {
				/* A file bound writable: its mode is the root's, restored above. */
				continue;
			}
			sweep_tree(r->fd, r->path, r->st.st_dev, 0, base, cleared);
		}
		return;
	}
	for (size_t i = 0; changed && i < changed->n; i++) {
		const struct file_record *f = &changed->r[i];
		if (f->change == CHANGE_DELETED)
			continue;
		buf p = {0};
		int r = f->path[0] == '/' ? buf_printf(&p, "%s", f->path)
					  : buf_printf(&p, "%s/%s", base ? base : "", f->path);
		if (r == 0)
			sweep_path(sw, p.p, base, cleared);
		buf_free(&p);
	}
}
