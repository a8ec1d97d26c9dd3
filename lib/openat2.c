/* openat2 and its emulation where a filter refuses it (openat2.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "openat2.h"
#include "compat.h"

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif

static bool refused; /* the call answered ENOSYS once: walked since */

/* The mount of fd's file: its mount ID, or where statx cannot say (before
 * 5.8) its device, which tells a mount of another filesystem (0: neither
 * could be had, and the walk is refused). */
static uint64_t mnt_id(int fd)
{
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) < 0)
		return 0;
	if (sx.stx_mask & STATX_MNT_ID)
		return sx.stx_mnt_id;
	return (1ULL << 63) | ((uint64_t)sx.stx_dev_major << 32) | sx.stx_dev_minor;
}

/* Is name in dirfd a symbolic link (not followed)? */
static bool is_link(int dirfd, const char *name)
{
	struct stat st;
	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

static int fail(int fd, int e)
{
	if (fd >= 0)
		close(fd);
	errno = e;
	return -1;
}

int openat2_walk(int dirfd, const char *path, const struct open_how *how)
{
	const uint64_t known = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
	if (!path || (how->resolve & ~known) || !(how->resolve & RESOLVE_NO_SYMLINKS))
		return fail(-1, ENOSYS);
	if ((how->flags >> 32) != 0)
		return fail(-1, EINVAL);
	bool beneath = how->resolve & RESOLVE_BENEATH, noxdev = how->resolve & RESOLVE_NO_XDEV;
	size_t len = strlen(path);
	if (len >= 4096)
		return fail(-1, ENAMETOOLONG);
	if (len == 0)
		return fail(-1, ENOENT);
	if (path[0] == '/' && beneath)
		return fail(-1, EXDEV);
	/* The start: dirfd, the current directory, or / for an absolute path. */
	int cur = -1;
	if (path[0] == '/')
		cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	else
		cur = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -1;
	uint64_t mnt = noxdev ? mnt_id(cur) : 0;
	if (noxdev && !mnt)
		return fail(cur, errno ? errno : EIO);
	char buf[4096];
	memcpy(buf, path, len + 1);
	/* The components; the last one is opened with the caller's flags. */
	char *p = buf, *last = NULL;
	for (;;) {
		while (*p == '/')
			p++;
		char *end = strchr(p, '/');
		char *next = end;
		if (end) {
			*end = '\0';
			next = end + 1;
			while (*next == '/')
				next++;
		}
		bool final = !end || !*next;
		if (!*p || strcmp(p, ".") == 0) {
			if (final) {
				last = ".";
				break;
			}
			p = next;
			continue;
		}
		if (strcmp(p, "..") == 0 && beneath)
			return fail(cur, EXDEV);
		if (final) {
			last = p; /* "a/b/": b must be a directory (below) */
			break;
		}
		int nd = openat(cur, p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (nd < 0)
			return fail(cur, errno);
		struct stat st;
		if (fstat(nd, &st) < 0) {
			int e = errno;
			close(nd);
			return fail(cur, e);
		}
		close(cur);
		cur = nd;
		if (S_ISLNK(st.st_mode))
			return fail(cur, ELOOP);
		if (!S_ISDIR(st.st_mode))
			return fail(cur, ENOTDIR);
		if (noxdev && mnt_id(cur) != mnt)
			return fail(cur, EXDEV);
		p = next;
	}
	/* A mount point as the last component is refused before it is
	 * opened, as openat2 does: opened first, a file bound there from
	 * elsewhere would be truncated (O_TRUNC), a device's open run, a
	 * FIFO's block, and only then EXDEV. (Absent: O_CREAT makes it on
	 * cur's own mount.) */
	/* "a/" with O_CREAT: EISDIR, nothing made, as openat2 (openat's
	 * O_CREAT | O_DIRECTORY is EINVAL since 6.4, and before it made a
	 * regular file). */
	bool slash = path[len - 1] == '/';
	if (slash && (how->flags & O_CREAT))
		return fail(cur, EISDIR);
	if (noxdev) {
		int pf = openat(cur, last, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		bool crossed = pf >= 0 && mnt_id(pf) != mnt;
		if (pf >= 0)
			close(pf);
		if (crossed)
			return fail(cur, EXDEV);
	}
	int flags = (int)how->flags | O_NOFOLLOW | (slash ? O_DIRECTORY : 0);
	int fd = openat(cur, last, flags, (mode_t)how->mode);
	int e = errno;
	/* A link where a directory is asked (O_DIRECTORY, a trailing slash)
	 * is ENOTDIR to openat with the O_NOFOLLOW added here; openat2, which
	 * would have followed it, says ELOOP. */
	if (fd < 0 && e == ENOTDIR && (slash || !(how->flags & O_NOFOLLOW)) && is_link(cur, last))
		e = ELOOP;
	close(cur);
	if (fd < 0)
		return fail(-1, e);
	/* O_PATH | O_NOFOLLOW opens a link itself, as openat2 does; O_PATH
	 * alone (the O_NOFOLLOW added here) must not. A mount point as the
	 * last component is a crossing too. */
	struct stat st;
	if ((how->flags & O_PATH) && !(how->flags & O_NOFOLLOW) && (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode)))
		return fail(fd, ELOOP);
	if (noxdev && mnt_id(fd) != mnt)
		return fail(fd, EXDEV);
	return fd;
}

int sys_openat2(int dirfd, const char *path, const struct open_how *how)
{
	if (!__atomic_load_n(&refused, __ATOMIC_RELAXED)) {
		int fd = (int)syscall(SYS_openat2, dirfd, path, how, sizeof(*how));
		if (fd >= 0 || errno != ENOSYS)
			return fd;
		__atomic_store_n(&refused, true, __ATOMIC_RELAXED);
	}
	return openat2_walk(dirfd, path, how);
}
