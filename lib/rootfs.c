/* The image directory's checks (rootfs.h): like cordon-oci's state root
 * (oci-safedir.c), every directory from / to the image is root's or the
 * caller's and writable by no one else, so that no other user can change
 * what the run takes for its /usr and /etc between this check and the
 * mounts, or after. Calls nothing above the base. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cleanup.h"
#include "rootfs.h"

static bool trusted(uid_t u)
{
	return u == 0 || u == geteuid();
}

static int refuse(cordon_error *err, const char *dir, const char *at, const struct stat *st, const char *why)
{
	return cordon_err(err, 0,
			  "rootfs %s: %s (uid %u, mode %04o) %s: the image and every directory above it must be root's (or yours) and writable by no one else",
			  dir, *at ? at : "/", (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777), why);
}

/* As root, the run is another user (never host root), and the image's
 * directories are bound by the run's own init: it must be able to reach
 * them. */
static int unsearchable(cordon_error *err, const char *dir, const char *at, const struct stat *st)
{
	return cordon_err(err, 0,
			  "rootfs %s: %s (uid %u, mode %04o) cannot be searched by other users, as the run is one: give it o+x, or keep the image elsewhere",
			  dir, *at ? at : "/", (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777));
}

int rootfs_resolve(const char *dir, char *out, size_t outsz, cordon_error *err)
{
	struct stat st;
	if (lstat(dir, &st) < 0)
		return cordon_err_errno(err, "rootfs %s", dir);
	if (S_ISLNK(st.st_mode))
		return cordon_err(err, 0, "rootfs %s is a symbolic link: give the image directory itself", dir);
	if (!S_ISDIR(st.st_mode))
		return cordon_err(err, 0, "rootfs %s is not a directory", dir);
	char real[PATH_MAX];
	if (!realpath(dir, real))
		return cordon_err_errno(err, "rootfs %s", dir);
	if (real[0] != '/')
		return cordon_err(err, 0, "rootfs %s does not resolve to an absolute path (%s)", dir, real);
	if (strcmp(real, "/") == 0)
		return cordon_err(err, 0, "rootfs %s is the host's root, not an image directory", dir);
	if (snprintf(out, outsz, "%s", real) >= (int)outsz)
		return cordon_err(err, ENAMETOOLONG, "rootfs %s", dir);
	/* Every directory from / down, by descriptor (realpath left no link
	 * on the way; one put there since is not followed). */
	_cleanup_close_ int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat cst;
	if (cur < 0 || fstat(cur, &cst) < 0)
		return cordon_err_errno(err, "rootfs %s: /", dir);
	char at[PATH_MAX] = "";
	for (const char *p = real + 1; *p;) {
		size_t n = strcspn(p, "/");
		char name[NAME_MAX + 1];
		snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), p);
		p += n;
		while (*p == '/')
			p++;
		if (!trusted(cst.st_uid))
			return refuse(err, dir, at, &cst, "is owned by another user");
		if ((cst.st_mode & 022) && !(cst.st_mode & S_ISVTX))
			return refuse(err, dir, at, &cst, "is writable by other users and not sticky");
		if (geteuid() == 0 && !(cst.st_mode & S_IXOTH))
			return unsearchable(err, dir, at, &cst);
		int next = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat nst;
		if (next < 0 || fstat(next, &nst) < 0) {
			int e = errno;
			if (next >= 0)
				close(next);
			return cordon_err(err, 0, "rootfs %s: %s/%s: %s", dir, at, name,
					  e == ELOOP || e == ENOTDIR ? "not a directory (changed while it was checked?)" : strerror(e));
		}
		snprintf(at + strlen(at), sizeof(at) - strlen(at), "/%s", name);
		if ((cst.st_mode & 022) && !trusted(nst.st_uid)) {
			close(next);
			return refuse(err, dir, at, &nst, "is another user's, in a directory others write");
		}
		close(cur);
		cur = next;
		cst = nst;
	}
	if (!trusted(cst.st_uid))
		return refuse(err, dir, at, &cst, "is owned by another user");
	if (cst.st_mode & 022)
		return refuse(err, dir, at, &cst, "is writable by other users");
	if (geteuid() == 0 && !(cst.st_mode & S_IXOTH))
		return unsearchable(err, dir, at, &cst);
	/* cordon makes its own /proc and /dev (the image's are never shown);
	 * one that is a link is refused all the same: it names a host path,
	 * and a tool reading the image would follow it. */
	static const char *const own[] = {"proc", "dev"};
	for (size_t i = 0; i < ARRAY_SIZE(own); i++) {
		struct stat ost;
		if (fstatat(cur, own[i], &ost, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(ost.st_mode)) {
			char t[PATH_MAX];
			ssize_t l = readlinkat(cur, own[i], t, sizeof(t) - 1);
			t[l < 0 ? 0 : l] = '\0';
			return cordon_err(err, 0,
					  "rootfs %s: the image's /%s is a symbolic link (to %s): it must be a directory or absent",
					  dir, own[i], t);
		}
	}
	return 0;
}
