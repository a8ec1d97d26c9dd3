/* The supervisor's side of the mounts (mounts-prep.h): before clone, the model
 * turned into init's steps (mounts_prepare, which alone allocates and
 * decides); as root, the idmapped trees cloned for init; a bind without
 * idmapped mounts handed to the run's uid and back (mounts_chown_tree).
 * Init applies the steps: mounts.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "mounts-prep.h"
#include "cleanup.h"
#include "changeset.h"
#include "compat.h"
#include "error.h"
#include "mounts.h"
#include "overlay.h"

/* Clone the host tree at path, as the supervisor (root): a source below a
 * directory the run's identity could not enter (0700 /root) is still
 * reachable, and a failure names the path and the reason. */
static int clone_tree(int root, const char *path, bool recursive, const char *what, cordon_error *err)
{
	_cleanup_close_ int src = mounts_openat2_nofollow(root, path, O_PATH);
	if (src < 0)
		return cordon_err_errno(err, "%s %s: open the source as the supervisor", what, path);
	int t = open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
			  (recursive ? AT_RECURSIVE : 0));
	if (t < 0)
		return cordon_err_errno(err, "%s %s: open_tree", what, path);
	return t;
}

int mounts_prepare_idmapped(const struct cordon_mount *m, size_t n, int userns_fd, int *fds,
			    bool *no_idmap, cordon_error *err)
{
	for (size_t i = 0; i < n; i++) {
		fds[i] = -1;
		no_idmap[i] = false;
	}
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return cordon_err_errno(err, "open /");
	for (size_t i = 0; i < n; i++) {
		if (m[i].mode == MOUNT_TMPFS)
			continue;
		bool idmap = m[i].mode == MOUNT_RW || m[i].owned;
		const char *what = mount_mode_name(m[i].mode);
		/* An idmapped tree is one mount (submounts may not support it);
		 * a plain ro bind keeps its submounts, as the child's own did. */
		int t = clone_tree(root, m[i].path, !idmap, what, err);
		if (t < 0)
			return -1;
		unsigned set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
		if (m[i].mode == MOUNT_RO)
			set |= MOUNT_ATTR_RDONLY;
		struct mount_attr attr = {.attr_set = set};
		if (idmap) {
			attr.attr_set |= MOUNT_ATTR_IDMAP;
			attr.userns_fd = (uint64_t)userns_fd;
		}
		/* A plain ro bind keeps the files' own owners and modes: mapping
		 * them to the invoking user (root) would let the run read what
		 * only root may (a granted /etc holds shadow). The supervisor
		 * opened the source, so a 0700 directory above it is no bar. */
		if (mount_setattr(t, "", AT_EMPTY_PATH | (idmap ? 0 : AT_RECURSIVE), &attr, sizeof(attr)) < 0) {
			int e = errno;
			close(t);
			if (idmap && e == EINVAL) {
				/* This filesystem has no idmapped mounts: the same
				 * tree, plain (the caller hands the files over). */
				attr.attr_set &= ~(uint64_t)MOUNT_ATTR_IDMAP;
				attr.userns_fd = 0;
				t = clone_tree(root, m[i].path, false, what, err);
				if (t < 0)
					return -1;
				if (mount_setattr(t, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0) {
					e = errno;
					close(t);
					return cordon_err(err, e, "%s %s: nosuid, nodev", what, m[i].path);
				}
				no_idmap[i] = true;
				fds[i] = t;
				continue;
			}
			if (idmap)
				return cordon_err(err, e, "idmapped mount of %s (so that files the run creates belong to you)",
						  m[i].path);
			return cordon_err(err, e, "%s %s: make it read-only", what, m[i].path);
		}
		fds[i] = t;
	}
	return 0;
}

int mounts_prepare_layer(const char *path, int userns_fd, cordon_error *err)
{
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return cordon_err_errno(err, "open /");
	int t = clone_tree(root, path, false, "layer", err);
	if (t < 0)
		return -1;
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_IDMAP,
				  .userns_fd = (uint64_t)userns_fd};
	if (mount_setattr(t, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0) {
		int e = errno;
		close(t);
		return cordon_err(err, e, "idmapped mount of the workspace's layer %s", path);
	}
	return t;
}

struct chown_walk {
	uid_t from_uid, to_uid;
	gid_t from_gid, to_gid;
	dev_t dev;
	size_t entries;
	bool keep_linked; /* a hand-over: a file with other names stays put */
};

static int chown_one(struct chown_walk *w, int dfd, const char *name, const struct stat *st,
		     cordon_error *err)
{
	uid_t u = st->st_uid == w->from_uid ? w->to_uid : (uid_t)-1;
	gid_t g = st->st_gid == w->from_gid ? w->to_gid : (gid_t)-1;
	if (u == (uid_t)-1 && g == (gid_t)-1)
		return 0;
	/* A file with another name (a hard link: `git clone --local` links its
	 * objects) may have it outside the path: handed over, the run could
	 * chmod and write that file too. It stays its owner's; the run can
	 * still replace the name it has. */
	if (w->keep_linked && !S_ISDIR(st->st_mode) && st->st_nlink > 1)
		return 0;
	/* A chown clears set-user-ID and set-group-ID on files. */
	if (fchownat(dfd, name, u, g, AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH)) < 0 && errno != ENOENT)
		return cordon_err_errno(err, "chown %s", *name ? name : ".");
	return 0;
}

static int chown_dir(struct chown_walk *w, int dfd, int depth, cordon_error *err)
{
	if (depth > MOUNTS_CHOWN_DEPTH)
		return cordon_err(err, ELOOP, "deeper than %d levels", MOUNTS_CHOWN_DEPTH);
	int rfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return cordon_err_errno(err, "open directory");
	_cleanup_closedir_ DIR *d = fdopendir(rfd);
	if (!d) {
		close(rfd);
		return cordon_err_errno(err, "read directory");
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (++w->entries > MOUNTS_CHOWN_MAX)
			return cordon_err(err, EFBIG, "more than %d files", MOUNTS_CHOWN_MAX);
		struct stat st;
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			return cordon_err_errno(err, "stat %s", e->d_name);
		}
		if (st.st_dev != w->dev)
			continue; /* a mount point: not ours to change */
		if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int sub = open_beneath(dfd, e->d_name, O_PATH | O_DIRECTORY);
			if (sub < 0) {
				if (errno == ENOENT)
					continue;
				return cordon_err_errno(err, "open %s", e->d_name);
			}
			if (chown_dir(w, sub, depth + 1, err) < 0)
				return cordon_err_wrap(err, "%s", e->d_name);
		}
		if (chown_one(w, dfd, e->d_name, &st, err) < 0)
			return -1;
	}
	return 0;
}

static int chown_tree(const char *path, uid_t from_uid, gid_t from_gid, uid_t to_uid, gid_t to_gid,
		      bool keep_linked, cordon_error *err)
{
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return cordon_err_errno(err, "open /");
	_cleanup_close_ int top = mounts_openat2_nofollow(root, path, O_PATH | O_NOFOLLOW);
	struct stat st;
	if (top < 0 || fstat(top, &st) < 0)
		return cordon_err_errno(err, "open %s", path);
	struct chown_walk w = {from_uid, to_uid, from_gid, to_gid, st.st_dev, 0, keep_linked};
	/* A file bound --rw is its own tree. */
	if ((S_ISDIR(st.st_mode) && chown_dir(&w, top, 0, err) < 0) || chown_one(&w, top, "", &st, err) < 0)
		return cordon_err_wrap(err, "hand the files of %s from uid %u to uid %u", path,
				       (unsigned)from_uid, (unsigned)to_uid);
	return 0;
}

int mounts_chown_tree(const char *path, uid_t from_uid, gid_t from_gid, uid_t to_uid, gid_t to_gid,
		      cordon_error *err)
{
	return chown_tree(path, from_uid, from_gid, to_uid, to_gid, false, err);
}

int mounts_hand_tree(const char *path, uid_t from_uid, gid_t from_gid, uid_t to_uid, gid_t to_gid,
		     cordon_error *err)
{
	return chown_tree(path, from_uid, from_gid, to_uid, to_gid, true, err);
}

/* Inside the /dev tmpfs, in the model's order: the standard nodes, devpts,
 * shm, the links, then the task's devices. A task's own mounts below /dev
 * come later, with the others. */
static bool in_dev(const struct model_entry *d, const struct model_entry *e)
{
	return e != d && path_has_prefix(e->path, d->path) &&
	       ((e->flags & MODEL_SYSTEM) || e->kind == MK_DEVICE);
}

static int push_step(struct mount_steps *s, const struct model_entry *e, enum mount_op op, cordon_error *err)
{
	struct mount_step *v = realloc(s->v, (s->n + 1) * sizeof(*v));
	if (!v)
		return cordon_oom(err);
	s->v = v;
	s->v[s->n++] = (struct mount_step){e, op};
	return 0;
}

/* /dev and what the model has below it: the nodes, the task's devices,
 * pts, shm, the links; then sealed. */
static int prepare_dev(const struct boundary_model *m, const struct model_entry *d, struct mount_steps *s,
		       cordon_error *err)
{
	if (push_step(s, d, MO_DEV, err) < 0)
		return -1;
	for (size_t i = 0; i < m->n; i++) {
		const struct model_entry *e = &m->e[i];
		if (!in_dev(d, e) || (e->flags & MODEL_ABSENT))
			continue;
		int r = 0;
		if (e->kind == MK_DEVICE)
			r = push_step(s, e, (e->flags & MODEL_SYSTEM) ? MO_DEV_NODE : MO_DEV_DEVICE, err);
		else if (e->kind == MK_DEVPTS)
			r = push_step(s, e, MO_DEVPTS, err);
		else if (e->kind == MK_TMPFS)
			r = push_step(s, e, MO_TMPFS, err);
		else if (e->kind == MK_SYMLINK)
			r = push_step(s, e, MO_SYMLINK, err);
		if (r < 0)
			return -1;
	}
	return push_step(s, d, MO_DEV_SEAL, err);
}

int mounts_prepare(const struct boundary_model *m, struct mount_steps *out, cordon_error *err)
{
	memset(out, 0, sizeof(*out));
	/* Before sync 2: cordon's own view, in the model's order (/dev's
	 * inside comes with /dev; the run's cgroup after the task's). */
	static const enum mount_op sys_op[] = {
		[MK_RO_BIND] = MO_SYSTEM_BIND, [MK_SYMLINK] = MO_SYMLINK, [MK_FILE] = MO_HOSTS,
		[MK_TMPFS] = MO_TMPFS, [MK_PROC] = MO_PROC,
	};
	const struct model_entry *dev = NULL;
	int r = 0;
	for (size_t i = 0; i < m->n && r == 0; i++) {
		const struct model_entry *e = &m->e[i];
		if (!(e->flags & MODEL_SYSTEM) || (e->flags & MODEL_ABSENT) || (dev && in_dev(dev, e)))
			continue;
		if (e->kind == MK_DEV) {
			dev = e;
			r = prepare_dev(m, e, out, err);
		} else if (e->kind == MK_RO_BIND || e->kind == MK_SYMLINK || e->kind == MK_FILE ||
			   e->kind == MK_TMPFS || e->kind == MK_PROC) {
			r = push_step(out, e, sys_op[e->kind], err);
		} /* else the root itself, the cgroup (below) */
	}
	out->nbegin = out->n;
	/* After sync 2: the task's binds and tmpfs, secret directories, a
	 * check's files, protected paths (one not there yet gets nothing). */
	for (size_t i = 0; i < m->n && r == 0; i++) {
		const struct model_entry *e = &m->e[i];
		if ((e->flags & MODEL_SYSTEM) || e->kind == MK_DEVICE)
			continue;
		if (e->kind == MK_SECRET)
			r = push_step(out, e, MO_SECRET_DIR, err);
		else if (e->kind == MK_PROTECT || e->kind == MK_PIN)
			r = (e->flags & MODEL_NOT_YET) ? 0 : push_step(out, e, MO_PROTECT, err);
		else if (e->kind == MK_CA_BUNDLE)
			r = push_step(out, e, MO_CA_BUNDLE, err);
		else if (e->kind == MK_RESOLV)
			r = push_step(out, e, MO_RESOLV, err);
		else
			r = push_step(out, e, MO_TASK, err);
	}
	for (size_t i = 0; i < m->n && r == 0; i++)
		if (m->e[i].kind == MK_CGROUP)
			r = push_step(out, &m->e[i], MO_CGROUP, err);
	if (r < 0)
		mount_steps_free(out);
	return r;
}

void mount_steps_free(struct mount_steps *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
