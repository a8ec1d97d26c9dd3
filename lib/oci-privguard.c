/* The image's privileged files, held read-only (oci-privguard.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "oci-privguard.h"

#define GUARD_DEPTH 256

bool oci_privguard_needed(const char *path)
{
	char p[PATH_MAX];
	if (!realpath(path, p))
		return true;
	/* from the rootfs up to "/": one closed door is enough */
	for (;;) {
		struct stat st;
		if (stat(*p ? p : "/", &st) < 0)
			return true;
		if (S_ISDIR(st.st_mode) && st.st_uid == 0 && (st.st_mode & 011) == 0)
			return false;
		char *s = strrchr(p, '/');
		if (!s || !*p)
			return true;
		*s = '\0';
	}
}

/* A file a host user would run with privilege: setuid, setgid and group
 * executable, or with a file capability. */
static bool privileged(int dfd, const char *name, const struct stat *st)
{
	if ((st->st_mode & S_ISUID) || ((st->st_mode & S_ISGID) && (st->st_mode & S_IXGRP)))
		return true;
	if (!(st->st_mode & 0111))
		return false; /* a capability is only used by an exec */
	char p[64 + NAME_MAX];
	snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", dfd, name);
	return lgetxattr(p, "security.capability", NULL, 0) > 0;
}

/* Bind dfd/name read-only onto itself. */
static int hold(int dfd, const char *name, cordon_error *err)
{
	int t = (int)syscall(SYS_open_tree, dfd, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
	/* read-only only: the file stays setuid inside, as the image has it */
	struct mount_attr a = {.attr_set = MOUNT_ATTR_RDONLY};
	if (t < 0 || syscall(SYS_mount_setattr, t, "", AT_EMPTY_PATH, &a, sizeof(a)) < 0 ||
	    syscall(SYS_move_mount, t, "", dfd, name, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		int e = errno;
		if (t >= 0)
			close(t);
		return cordon_err(err, e, "holding the image's privileged file %s read-only", name);
	}
	close(t);
	return 0;
}

static int walk(int dfd, uint64_t mnt, int depth, unsigned *n, cordon_error *err)
{
	if (depth > GUARD_DEPTH)
		return cordon_err(err, ELOOP, "the rootfs is deeper than %d directories", GUARD_DEPTH);
	int rfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = rfd < 0 ? NULL : fdopendir(rfd);
	if (!d) {
		if (rfd >= 0)
			close(rfd);
		return cordon_err_errno(err, "reading the rootfs");
	}
	int r = 0;
	struct dirent *e;
	while (r == 0 && (errno = 0, e = readdir(d))) {
		if (e->d_type != DT_DIR && e->d_type != DT_REG && e->d_type != DT_UNKNOWN)
			continue;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		/* the mount's id, not st_dev (an overlay's files may report their
		 * layer's): a submount is not this rootfs */
		struct statx sx;
		if (statx(dfd, e->d_name, AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_MODE | STATX_MNT_ID, &sx) < 0 ||
		    !(sx.stx_mask & STATX_MNT_ID) || sx.stx_mnt_id != mnt)
			continue; /* gone, or another filesystem mounted there */
		struct stat st = {.st_mode = sx.stx_mode};
		if (S_ISDIR(st.st_mode)) {
			int c = openat(dfd, e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (c < 0)
				continue;
			r = walk(c, mnt, depth + 1, n, err);
			close(c);
		} else if (S_ISREG(st.st_mode) && privileged(dfd, e->d_name, &st)) {
			r = hold(dfd, e->d_name, err);
			*n += r == 0;
		}
	}
	if (r == 0 && errno)
		r = cordon_err_errno(err, "reading the rootfs");
	closedir(d);
	return r;
}

int oci_privguard_apply(int rootfd, unsigned *n, cordon_error *err)
{
	*n = 0;
	struct statx sx;
	if (statx(rootfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
		return cordon_err_errno(err, "the rootfs's mount");
	return walk(rootfd, sx.stx_mnt_id, 0, n, err);
}
