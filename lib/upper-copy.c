/* A bounded, hostile-safe copy of an overlayfs upper directory (upper-copy.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/fs.h>
#include "cleanup.h"
#include "snapshot.h"
#include "strv.h"
#include "upper-copy.h"

/* A file with more than one link: where its first copy is (relative to
 * the copy's root), for the links after it. */
struct ulink {
	dev_t dev;
	ino_t ino;
	char *rel;
};

struct ucopy {
	const struct ucopy_limits *lim;
	struct ucopy_stat *st;
	bool root;
	int top; /* the copy's root directory */
	bool nolinks; /* hard links not kept (a lower tree's, in a patch) */
	struct ulink *links;
	size_t nlinks, cap;
	char rel[PATH_MAX]; /* the entry being copied, relative to the root */
	/* A patch's trees (upper_patch): lower, cur, snap and the patch's. */
	int proot[4];
};

#define XATTR_LIST_MAX_BYTES (64u << 10)
#define XATTR_VALUE_MAX_BYTES (64u << 10)

static int fail(struct ucopy *u, cordon_error *err, int code, const char *what)
{
	return cordon_err(err, code, "%s: %s: %s", u->rel[0] ? u->rel : ".", what, strerror(code));
}

/* The user.* attributes of src onto dst (both opened, not O_PATH): the
 * overlay's own (opaque, origin, redirect) among them. */
static int copy_xattrs(struct ucopy *u, int src, int dst, cordon_error *err)
{
	char *names = malloc(XATTR_LIST_MAX_BYTES + XATTR_VALUE_MAX_BYTES);
	if (!names)
		return cordon_oom(err);
	char *val = names + XATTR_LIST_MAX_BYTES;
	int rc = 0;
	ssize_t n = flistxattr(src, names, XATTR_LIST_MAX_BYTES);
	if (n < 0 && errno != ENOTSUP)
		rc = fail(u, err, errno, "list its attributes");
	for (ssize_t off = 0; rc == 0 && off < n; off += (ssize_t)strlen(names + off) + 1) {
		const char *nm = names + off;
		if (strncmp(nm, "user.", 5) != 0 || (u->lim->merged && strncmp(nm, "user.overlay.", 13) == 0))
			continue;
		ssize_t vl = fgetxattr(src, nm, val, XATTR_VALUE_MAX_BYTES);
		if (vl < 0)
			rc = fail(u, err, errno, "read an attribute");
		else if (fsetxattr(dst, nm, val, (size_t)vl, 0) < 0)
			rc = fail(u, err, errno, "set an attribute");
	}
	free(names);
	return rc;
}

/* Owner (as root), mode and times of st onto fd (the copy). */
static int copy_meta(struct ucopy *u, int fd, const struct stat *st, cordon_error *err)
{
	if (u->lim->own ? fchown(fd, u->lim->uid, u->lim->gid) < 0
			: u->root && fchown(fd, st->st_uid, st->st_gid) < 0)
		return fail(u, err, errno, "set its owner");
	if (fchmod(fd, st->st_mode & 01777) < 0)
		return fail(u, err, errno, "set its mode");
	struct timespec ts[2] = {st->st_atim, st->st_mtim};
	if (futimens(fd, ts) < 0)
		return fail(u, err, errno, "set its times");
	return 0;
}

/* The files with more links: an open-addressing table on (dev, ino), at
 * most half full (a run can make as many links as the walk's bound). */
static size_t link_slot(const struct ucopy *u, dev_t dev, ino_t ino)
{
	uint64_t h = ((uint64_t)ino * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)dev;
	size_t i = (size_t)(h ^ (h >> 29)) & (u->cap - 1);
	while (u->links[i].rel && !(u->links[i].dev == dev && u->links[i].ino == ino))
		i = (i + 1) & (u->cap - 1);
	return i;
}

static const struct ulink *link_find(const struct ucopy *u, const struct stat *st)
{
	if (!u->cap)
		return NULL;
	const struct ulink *l = &u->links[link_slot(u, st->st_dev, st->st_ino)];
	return l->rel ? l : NULL;
}

static int link_note(struct ucopy *u, const struct stat *st, cordon_error *err)
{
	if ((u->nlinks + 1) * 2 > u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 64;
		struct ulink *old = u->links;
		size_t ocap = u->cap;
		u->links = calloc(cap, sizeof(*u->links));
		if (!u->links) {
			u->links = old;
			return cordon_oom(err);
		}
		u->cap = cap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].rel)
				u->links[link_slot(u, old[i].dev, old[i].ino)] = old[i];
		free(old);
	}
	char *rel = strdup(u->rel);
	if (!rel)
		return cordon_oom(err);
	u->links[link_slot(u, st->st_dev, st->st_ino)] = (struct ulink){st->st_dev, st->st_ino, rel};
	u->nlinks++;
	return 0;
}

static void links_free(struct ucopy *u)
{
	for (size_t i = 0; i < u->cap; i++)
		free(u->links[i].rel);
	free(u->links);
}

static int copy_file(struct ucopy *u, int sdir, int ddir, const char *name, const struct stat *lst, cordon_error *err)
{
	if (lst->st_nlink > 1 && !u->nolinks) {
		const struct ulink *l = link_find(u, lst);
		if (l) {
			/* Another name of a file copied already: the same link
			 * in the copy (its root is ours, made here). */
			if (linkat(u->top, l->rel, ddir, name, 0) < 0)
				return fail(u, err, errno, "link it");
			return 0;
		}
	}
	_cleanup_close_ int in = open_beneath(sdir, name, O_RDONLY);
	if (in < 0)
		return fail(u, err, errno, "open it");
	struct stat st;
	if (fstat(in, &st) < 0)
		return fail(u, err, errno, "stat it");
	if (!S_ISREG(st.st_mode) || st.st_ino != lst->st_ino || st.st_dev != lst->st_dev)
		return fail(u, err, ESTALE, "changed while it was copied");
	uint64_t size = (uint64_t)st.st_size;
	if (size > u->lim->max_bytes - u->st->bytes)
		return cordon_err(err, UCOPY_OVER_BUDGET, "%s: past the snapshot's byte budget (%llu bytes)", u->rel,
				  (unsigned long long)u->lim->max_bytes);
	_cleanup_close_ int out = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return fail(u, err, errno, "create its copy");
	/* A clone where the filesystem shares extents (btrfs, XFS): no byte
	 * copied. Else copy_file_range, then read and write. */
	if (size && ioctl(out, FICLONE, in) < 0) {
		uint64_t left = size;
		off_t oin = 0, oout = 0;
		while (left) {
			ssize_t n = copy_file_range(in, &oin, out, &oout, left > (1u << 30) ? (1u << 30) : left, 0);
			if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP) &&
			    oin == 0) {
				char b[65536];
				while (left) {
					ssize_t r = read(in, b, left < sizeof(b) ? left : sizeof(b));
					if (r < 0 && errno == EINTR)
						continue;
					if (r <= 0)
						return fail(u, err, r < 0 ? errno : ESTALE, "read it");
					for (ssize_t w = 0; w < r;) {
						ssize_t k = write(out, b + w, (size_t)(r - w));
						if (k < 0 && errno == EINTR)
							continue;
						if (k < 0)
							return fail(u, err, errno, "write its copy");
						w += k;
					}
					left -= (uint64_t)r;
				}
				break;
			}
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return fail(u, err, n < 0 ? errno : ESTALE, "copy it");
			left -= (uint64_t)n;
		}
	}
	u->st->bytes += size;
	u->st->files++;
	if (copy_xattrs(u, in, out, err) < 0 || copy_meta(u, out, &st, err) < 0)
		return -1;
	if (st.st_nlink > 1 && !u->nolinks && link_note(u, &st, err) < 0)
		return -1;
	return 0;
}

static int copy_dir(struct ucopy *u, int sdir, int ddir, unsigned depth, cordon_error *err);
static int copy_stream(struct ucopy *u, DIR *dir, int sdir, int ddir, unsigned depth, cordon_error *err);

static bool is_opaque(int dfd)
{
	char v[4];
	return fgetxattr(dfd, "user.overlay.opaque", v, sizeof(v)) == 1 && v[0] == 'y';
}

/* Merged (upper_apply): what the destination has at name goes, unless it
 * is a directory the source's (not opaque) merges into (*merge). */
static int clear_dest(struct ucopy *u, int sdir, int ddir, const char *name, const struct stat *st, bool *merge,
		      cordon_error *err)
{
	*merge = false;
	struct stat ex;
	if (fstatat(ddir, name, &ex, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : fail(u, err, errno, "stat what is there");
	if (S_ISDIR(st->st_mode) && S_ISDIR(ex.st_mode)) {
		_cleanup_close_ int s = open_beneath(sdir, name, O_RDONLY | O_DIRECTORY);
		if (s >= 0 && !is_opaque(s)) {
			*merge = true;
			return 0;
		}
	}
	if (!S_ISDIR(ex.st_mode))
		return unlinkat(ddir, name, 0) < 0 ? fail(u, err, errno, "remove what is there") : 0;
	return upper_remove(ddir, name, u->lim->max_depth + 1, err);
}

static int copy_entry(struct ucopy *u, int sdir, int ddir, const char *name, unsigned depth, cordon_error *err)
{
	struct stat st;
	if (fstatat(sdir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return fail(u, err, errno, "stat it");
	if (++u->st->entries > u->lim->max_entries)
		return cordon_err(err, UCOPY_OVER_BOUND, "more than %llu entries: a snapshot copies at most that many",
				  (unsigned long long)u->lim->max_entries);
	bool merge = false;
	if (u->lim->merged) {
		if (clear_dest(u, sdir, ddir, name, &st, &merge, err) < 0)
			return -1;
		if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0))
			return 0; /* a whiteout: what was there is gone */
	}
	if (S_ISREG(st.st_mode))
		return copy_file(u, sdir, ddir, name, &st, err);
	if (S_ISDIR(st.st_mode)) {
		if (depth + 1 > u->lim->max_depth)
			return cordon_err(err, UCOPY_OVER_BOUND, "%s: deeper than %u levels: a snapshot copies at most that many",
					  u->rel, u->lim->max_depth);
		/* Two descriptors a level (the source's, in its stream, and the
		 * copy's): a tree as deep as the bound (256) stays well within
		 * a process's 1024. */
		int s = open_beneath(sdir, name, O_RDONLY | O_DIRECTORY);
		if (s < 0)
			return fail(u, err, errno, "open it");
		_cleanup_closedir_ DIR *sd = fdopendir(s);
		if (!sd) {
			int e = errno;
			close(s);
			return fail(u, err, e, "read it");
		}
		struct stat ds;
		if (fstat(s, &ds) < 0 || ds.st_ino != st.st_ino || ds.st_dev != st.st_dev)
			return fail(u, err, ESTALE, "changed while it was copied");
		if (!merge && mkdirat(ddir, name, 0700) < 0)
			return fail(u, err, errno, "make its copy");
		_cleanup_close_ int d = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (d < 0)
			return fail(u, err, errno, "open its copy");
		if (copy_xattrs(u, s, d, err) < 0 || copy_stream(u, sd, s, d, depth + 1, err) < 0)
			return -1;
		return copy_meta(u, d, &ds, err);
	}
	if (S_ISLNK(st.st_mode)) {
		/* Read as a link, made as a link: never followed. */
		char target[PATH_MAX];
		ssize_t n = readlinkat(sdir, name, target, sizeof(target) - 1);
		if (n < 0)
			return fail(u, err, errno, "read the link");
		target[n] = '\0';
		if (symlinkat(target, ddir, name) < 0)
			return fail(u, err, errno, "make the link");
		if ((u->lim->own || u->root) &&
		    fchownat(ddir, name, u->lim->own ? u->lim->uid : st.st_uid, u->lim->own ? u->lim->gid : st.st_gid,
			     AT_SYMLINK_NOFOLLOW) < 0)
			return fail(u, err, errno, "set the link's owner");
		struct timespec ts[2] = {st.st_atim, st.st_mtim};
		utimensat(ddir, name, ts, AT_SYMLINK_NOFOLLOW);
		return 0;
	}
	bool whiteout = S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0);
	if (whiteout || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
		/* A whiteout (a deletion), a FIFO or a socket: made anew, never
		 * opened. */
		mode_t m = (st.st_mode & S_IFMT) | (whiteout ? 0 : (st.st_mode & 0777));
		if (mknodat(ddir, name, m, whiteout ? makedev(0, 0) : 0) < 0)
			return fail(u, err, errno, whiteout ? "make the whiteout" : "make its copy");
		if ((u->lim->own || u->root) &&
		    fchownat(ddir, name, u->lim->own ? u->lim->uid : st.st_uid, u->lim->own ? u->lim->gid : st.st_gid,
			     AT_SYMLINK_NOFOLLOW) < 0)
			return fail(u, err, errno, "set its owner");
		return 0;
	}
	/* A device the run could not have made (a user namespace makes
	 * none): left out, counted. */
	u->st->skipped++;
	return 0;
}

/* The entries of dir (sdir's stream, read from the start) into ddir. */
static int copy_stream(struct ucopy *u, DIR *dir, int sdir, int ddir, unsigned depth, cordon_error *err)
{
	rewinddir(dir);
	size_t base = strlen(u->rel);
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(dir);
		if (!de) {
			if (errno)
				return fail(u, err, errno, "read the directory");
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		size_t nl = strlen(de->d_name);
		if (base + nl + 2 > sizeof(u->rel))
			return cordon_err(err, UCOPY_OVER_BOUND, "%s: a path longer than %zu bytes", u->rel, sizeof(u->rel));
		snprintf(u->rel + base, sizeof(u->rel) - base, "%s%s", base ? "/" : "", de->d_name);
		if (copy_entry(u, sdir, ddir, de->d_name, depth, err) < 0)
			return -1;
		u->rel[base] = '\0';
	}
	return 0;
}

static int copy_dir(struct ucopy *u, int sdir, int ddir, unsigned depth, cordon_error *err)
{
	int dup_fd = fcntl(sdir, F_DUPFD_CLOEXEC, 0);
	if (dup_fd < 0)
		return fail(u, err, errno, "read the directory");
	_cleanup_closedir_ DIR *dir = fdopendir(dup_fd);
	if (!dir) {
		close(dup_fd);
		return fail(u, err, errno, "read the directory");
	}
	/* The dup shares sdir's offset: from the start, whoever read it. */
	return copy_stream(u, dir, sdir, ddir, depth, err);
}

int upper_apply(int src, int dst, const struct ucopy_limits *lim, struct ucopy_stat *st, cordon_error *err)
{
	memset(st, 0, sizeof(*st));
	struct ucopy_limits m = *lim;
	m.merged = true;
	struct ucopy u = {.lim = &m, .st = st, .root = geteuid() == 0, .top = dst};
	int rc = copy_dir(&u, src, dst, 0, err);
	links_free(&u);
	return rc;
}

/* The copy's root, dst_parent/name (just made, 0700), opened as u->top
 * and given to lim->own's owner; -1 with err (the caller removes it). */
static int open_top(struct ucopy *u, int dst_parent, const char *name, cordon_error *err)
{
	u->top = openat(dst_parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (u->top < 0)
		return cordon_err_errno(err, "%s", name);
	if (u->lim->own && fchown(u->top, u->lim->uid, u->lim->gid) < 0)
		return cordon_err_errno(err, "%s: set its owner", name);
	return 0;
}

int upper_copy(int src, int dst_parent, const char *name, const struct ucopy_limits *lim, struct ucopy_stat *st,
	       cordon_error *err)
{
	memset(st, 0, sizeof(*st));
	struct ucopy u = {.lim = lim, .st = st, .root = geteuid() == 0, .top = -1};
	struct stat ss;
	if (fstat(src, &ss) < 0 || !S_ISDIR(ss.st_mode))
		return cordon_err(err, ENOTDIR, "the upper layer is not a directory");
	if (mkdirat(dst_parent, name, 0700) < 0)
		return cordon_err_errno(err, "%s", name);
	int rc = -1;
	if (open_top(&u, dst_parent, name, err) == 0 && copy_xattrs(&u, src, u.top, err) == 0 &&
	    copy_dir(&u, src, u.top, 0, err) == 0) {
		/* The root keeps mode 0700 (lim->own: its owner's alone). */
		rc = 0;
	}
	links_free(&u);
	if (u.top >= 0)
		close(u.top);
	if (rc < 0)
		upper_remove(dst_parent, name, lim->max_depth + 1, &(cordon_error){0});
	return rc;
}

/* An entry of one of a patch's three trees (upper_patch): what is at name
 * in dir (-1: nothing, as is a directory that is not one). */
struct pent {
	bool there, whiteout, dir, opaque;
	struct stat st;
};

static int pent_stat(struct ucopy *u, int dir, const char *name, struct pent *e, cordon_error *err)
{
	memset(e, 0, sizeof(*e));
	if (dir < 0)
		return 0;
	if (fstatat(dir, name, &e->st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : fail(u, err, errno, "stat it");
	e->there = true;
	e->whiteout = S_ISCHR(e->st.st_mode) && e->st.st_rdev == makedev(0, 0);
	e->dir = S_ISDIR(e->st.st_mode);
	if (e->dir) {
		_cleanup_close_ int fd = open_beneath(dir, name, O_RDONLY | O_DIRECTORY);
		if (fd < 0)
			return fail(u, err, errno, "open it");
		e->opaque = is_opaque(fd);
	}
	return 0;
}

/* The directory name in dir as an fd (O_RDONLY), checked against what
 * was stat'd; -1 when e is not a directory. */
static int pent_open(struct ucopy *u, int dir, const char *name, const struct pent *e, int *fd, cordon_error *err)
{
	*fd = -1;
	if (!e->there || !e->dir)
		return 0;
	*fd = open_beneath(dir, name, O_RDONLY | O_DIRECTORY);
	struct stat st;
	if (*fd < 0)
		return fail(u, err, errno, "open it");
	if (fstat(*fd, &st) < 0 || st.st_ino != e->st.st_ino || st.st_dev != e->st.st_dev)
		return fail(u, err, ESTALE, "changed while it was read");
	return 0;
}

/* A directory of a patch's walk: the one at the same path in each of its
 * four trees (lower, cur, snap; the patch's), -1 in a tree that has none
 * there. A level's descriptors are closed while a directory below it is
 * patched and opened again after, from the trees' roots by the same path
 * and checked to be the same directories: the walk holds the descriptors
 * of the level it is at, never of the levels above it (five a level took
 * 1,290 for a tree as deep as a restore goes, past a process's 1,024). */
enum { P_LOWER, P_CUR, P_SNAP, P_DST, P_TREES };
struct plevel {
	int fd[P_TREES];
	bool have[P_TREES];
	dev_t dev[P_TREES];
	ino_t ino[P_TREES];
};

static void lvl_close(struct plevel *L)
{
	for (int i = 0; i < P_TREES; i++)
		if (L->fd[i] >= 0) {
			close(L->fd[i]);
			L->fd[i] = -1;
		}
}

/* L's fds as given (each owned by L from here, -1: none), noted. */
static int lvl_take(struct ucopy *u, struct plevel *L, cordon_error *err)
{
	for (int i = 0; i < P_TREES; i++) {
		L->have[i] = L->fd[i] >= 0;
		struct stat st;
		if (L->have[i] && fstat(L->fd[i], &st) < 0)
			return fail(u, err, errno, "stat the directory");
		if (L->have[i]) {
			L->dev[i] = st.st_dev;
			L->ino[i] = st.st_ino;
		}
	}
	return 0;
}

/* L opened again: the directory at the first len bytes of u->rel in each
 * tree that had one, beneath the tree's root (no link followed, no mount
 * crossed), the same directory as before (else ESTALE). */
static int lvl_reopen(struct ucopy *u, struct plevel *L, size_t len, cordon_error *err)
{
	char path[PATH_MAX];
	memcpy(path, u->rel, len);
	path[len] = '\0';
	for (int i = 0; i < P_TREES; i++) {
		if (!L->have[i])
			continue;
		L->fd[i] = len ? open_beneath(u->proot[i], path, O_RDONLY | O_DIRECTORY)
			       : fcntl(u->proot[i], F_DUPFD_CLOEXEC, 0);
		struct stat st;
		if (L->fd[i] < 0)
			return cordon_err(err, errno, "%s: open it again: %s", len ? path : ".", strerror(errno));
		if (fstat(L->fd[i], &st) < 0 || st.st_dev != L->dev[i] || st.st_ino != L->ino[i])
			return cordon_err(err, ESTALE, "%s: changed while it was read", len ? path : ".");
	}
	return 0;
}

static int patch_dir(struct ucopy *u, struct plevel *L, unsigned depth, cordon_error *err);

/* One name of a directory both views merge with the lower tree's (l):
 * what the patch holds there, if anything, for the view of c over l to
 * become the view of s over l. u->rel is the entry's path, its directory's
 * the first plen bytes of it. */
static int patch_entry(struct ucopy *u, struct plevel *L, const char *name, size_t plen, unsigned depth,
		       cordon_error *err)
{
	int ldir = L->fd[P_LOWER], cdir = L->fd[P_CUR], sdir = L->fd[P_SNAP], ddir = L->fd[P_DST];
	struct pent l, c, s;
	if (++u->st->entries > u->lim->max_entries)
		return cordon_err(err, UCOPY_OVER_BOUND, "more than %llu entries: a restore rewrites at most that many",
				  (unsigned long long)u->lim->max_entries);
	if (pent_stat(u, ldir, name, &l, err) < 0 || pent_stat(u, cdir, name, &c, err) < 0 ||
	    pent_stat(u, sdir, name, &s, err) < 0)
		return -1;
	/* What the snapshot's view (t) and the view now (v) have there. */
	const struct pent *t = s.there ? &s : &l, *v = c.there ? &c : &l;
	bool t_gone = !t->there || t->whiteout, v_dir = v->there && v->dir;
	if (t_gone) {
		if (mknodat(ddir, name, S_IFCHR, makedev(0, 0)) < 0)
			return fail(u, err, errno, "make the whiteout");
		return 0;
	}
	if (!t->dir) {
		u->nolinks = t == &l;
		return copy_entry(u, t == &l ? ldir : sdir, ddir, name, depth, err);
	}
	/* Each view's directory shows the lower one's entries unless it
	 * replaces it (opaque, or over what is not a directory). */
	bool t_lower = l.there && l.dir && (!s.there || !s.opaque);
	bool v_lower = v_dir && l.there && l.dir && (!c.there || !c.opaque);
	if (depth + 1 > u->lim->max_depth)
		return cordon_err(err, UCOPY_OVER_BOUND, "%s: deeper than %u levels", u->rel, u->lim->max_depth);
	if (v_dir && t_lower && v_lower) {
		/* Merged into the view's directory: only what either layer
		 * has below it is rewritten. */
		struct plevel C = {.fd = {-1, -1, -1, -1}};
		int rc = -1;
		if (pent_open(u, ldir, name, &l, &C.fd[P_LOWER], err) < 0 ||
		    pent_open(u, cdir, name, &c, &C.fd[P_CUR], err) < 0 ||
		    pent_open(u, sdir, name, &s, &C.fd[P_SNAP], err) < 0)
			goto out;
		if (mkdirat(ddir, name, 0700) < 0) {
			fail(u, err, errno, "make it");
			goto out;
		}
		C.fd[P_DST] = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (C.fd[P_DST] < 0) {
			fail(u, err, errno, "open it");
			goto out;
		}
		if (copy_xattrs(u, s.there ? C.fd[P_SNAP] : C.fd[P_LOWER], C.fd[P_DST], err) < 0 ||
		    lvl_take(u, &C, err) < 0)
			goto out;
		/* t points into this frame's pents: its stat is kept. */
		struct stat tst = t->st;
		lvl_close(L);
		if (patch_dir(u, &C, depth + 1, err) < 0 || copy_meta(u, C.fd[P_DST], &tst, err) < 0)
			goto out;
		lvl_close(&C);
		rc = lvl_reopen(u, L, plen, err);
	out:
		lvl_close(&C);
		return rc;
	}
	/* A directory made anew in the view (opaque in the patch): the whole
	 * of the snapshot's view there. */
	if (t_lower) {
		u->nolinks = true;
		if (copy_entry(u, ldir, ddir, name, depth, err) < 0)
			return -1;
	}
	u->nolinks = false;
	if (s.there && copy_entry(u, sdir, ddir, name, depth, err) < 0)
		return -1;
	_cleanup_close_ int d = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0 || fsetxattr(d, "user.overlay.opaque", "y", 1, 0) < 0)
		return fail(u, err, errno, "mark it opaque");
	return 0;
}

static bool listed(int dir, const char *name)
{
	struct stat st;
	return dir >= 0 && (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT);
}

/* The names of c's directory, then those of s's that c's has not, read
 * whole first (NUL-separated in names: no stream is held while an entry
 * is patched), at most as many as the entries the patch may have left. */
static int read_names(struct ucopy *u, const struct plevel *L, buf *names, cordon_error *err)
{
	uint64_t left = u->lim->max_entries > u->st->entries ? u->lim->max_entries - u->st->entries : 0, n = 0;
	for (int pass = 0; pass < 2; pass++) {
		int src = L->fd[pass == 0 ? P_CUR : P_SNAP];
		if (src < 0)
			continue;
		int dup_fd = fcntl(src, F_DUPFD_CLOEXEC, 0);
		if (dup_fd < 0)
			return fail(u, err, errno, "read the directory");
		_cleanup_closedir_ DIR *dir = fdopendir(dup_fd);
		if (!dir) {
			close(dup_fd);
			return fail(u, err, errno, "read the directory");
		}
		rewinddir(dir);
		for (;;) {
			errno = 0;
			struct dirent *de = readdir(dir);
			if (!de) {
				if (errno)
					return fail(u, err, errno, "read the directory");
				break;
			}
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
			    (pass == 1 && listed(L->fd[P_CUR], de->d_name)))
				continue;
			if (++n > left)
				return cordon_err(err, UCOPY_OVER_BOUND, "more than %llu entries: a restore rewrites at most that many",
						  (unsigned long long)u->lim->max_entries);
			if (buf_append(names, de->d_name, strlen(de->d_name) + 1) < 0)
				return cordon_oom(err);
		}
	}
	return 0;
}

static int patch_dir(struct ucopy *u, struct plevel *L, unsigned depth, cordon_error *err)
{
	size_t base = strlen(u->rel);
	buf names = {0};
	int rc = read_names(u, L, &names, err);
	for (size_t off = 0; rc == 0 && off < names.len;) {
		const char *name = names.p + off;
		size_t nl = strlen(name);
		off += nl + 1;
		if (base + nl + 2 > sizeof(u->rel)) {
			rc = cordon_err(err, UCOPY_OVER_BOUND, "%s: a path longer than %zu bytes", u->rel, sizeof(u->rel));
			break;
		}
		snprintf(u->rel + base, sizeof(u->rel) - base, "%s%s", base ? "/" : "", name);
		rc = patch_entry(u, L, name, base, depth, err);
		u->rel[base] = '\0';
	}
	buf_free(&names);
	return rc;
}

int upper_patch(int lower, int cur, int snap, int dst_parent, const char *name, const struct ucopy_limits *lim,
		struct ucopy_stat *st, cordon_error *err)
{
	memset(st, 0, sizeof(*st));
	struct ucopy_limits m = *lim;
	m.merged = true;
	struct ucopy u = {.lim = &m, .st = st, .root = geteuid() == 0, .top = -1};
	if (mkdirat(dst_parent, name, 0700) < 0)
		return cordon_err_errno(err, "%s", name);
	int rc = -1;
	if (open_top(&u, dst_parent, name, err) == 0) {
		u.proot[P_LOWER] = lower;
		u.proot[P_CUR] = cur;
		u.proot[P_SNAP] = snap;
		u.proot[P_DST] = u.top;
		/* The top level: the roots' own, dup'd (a level's are closed
		 * and opened again around each directory below it). */
		struct plevel L = {.fd = {-1, -1, -1, -1}};
		bool ok = true;
		for (int i = 0; i < P_TREES; i++)
			if (u.proot[i] >= 0 && (L.fd[i] = fcntl(u.proot[i], F_DUPFD_CLOEXEC, 0)) < 0)
				ok = false;
		if (!ok)
			cordon_err_errno(err, "the patch's trees");
		rc = ok && lvl_take(&u, &L, err) == 0 ? patch_dir(&u, &L, 0, err) : -1;
		lvl_close(&L);
	}
	links_free(&u);
	if (u.top >= 0)
		close(u.top);
	if (rc < 0)
		upper_remove(dst_parent, name, lim->max_depth + 1, &(cordon_error){0});
	return rc;
}

static int rm_dir(int dfd, unsigned depth, cordon_error *err)
{
	int dup_fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
	if (dup_fd < 0)
		return cordon_err_errno(err, "read a directory");
	_cleanup_closedir_ DIR *dir = fdopendir(dup_fd);
	if (!dir) {
		close(dup_fd);
		return cordon_err_errno(err, "read a directory");
	}
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(dir))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dfd, de->d_name, 0) == 0)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			rc = cordon_err_errno(err, "remove %s", de->d_name);
			continue;
		}
		if (depth == 0) {
			rc = cordon_err(err, E2BIG, "%s: too deep to remove", de->d_name);
			continue;
		}
		/* A directory of the copy may have been left without read or
		 * write permission (its mode copied): ours, so ours to change
		 * (through an O_PATH fd: no link followed). */
		int pf = openat(dfd, de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (pf >= 0) {
			char pp[64];
			snprintf(pp, sizeof(pp), "/proc/self/fd/%d", pf);
			if (chmod(pp, 0700) < 0) { /* the open below says why */ }
			close(pf);
		}
		int c = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (c < 0) {
			rc = cordon_err_errno(err, "open %s", de->d_name);
			continue;
		}
		if (rm_dir(c, depth - 1, err) < 0)
			rc = -1;
		close(c);
		if (unlinkat(dfd, de->d_name, AT_REMOVEDIR) < 0 && rc == 0)
			rc = cordon_err_errno(err, "remove %s", de->d_name);
	}
	return rc;
}

int upper_remove(int parent, const char *name, unsigned max_depth, cordon_error *err)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : cordon_err_errno(err, "%s", name);
	fchmod(fd, 0700);
	int rc = rm_dir(fd, max_depth, err);
	close(fd);
	if (unlinkat(parent, name, AT_REMOVEDIR) < 0 && rc == 0)
		rc = cordon_err_errno(err, "remove %s", name);
	return rc;
}
