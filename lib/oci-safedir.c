/* The state root's check (docs/oci.md, "The state directory"): a component
 * at a time from "/", by descriptor, each one's owner and mode checked
 * against the directory that holds it, so that no other user can plant or
 * replace anything cordon-oci will read back as its own state (a pid it
 * signals, a socket it connects to, a config it runs hooks of). */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "oci-safedir.h"
#include "cleanup.h"
#include "error.h"

#define SAFE_LINKS_MAX 40

static bool trusted(uid_t u)
{
	return u == 0 || u == geteuid();
}

/* Another user may change what is in d (owner, write bits, sticky). */
static const char *dir_fault(const struct stat *d, bool final)
{
	if (!trusted(d->st_uid))
		return "is owned by another user";
	if ((d->st_mode & 022) && (final || !(d->st_mode & S_ISVTX)))
		return final ? "is writable by other users" : "is writable by other users and not sticky";
	return NULL;
}

static int refuse(cordon_error *err, const char *dir, const char *shown, const struct stat *st, const char *why)
{
	return cordon_err(err, EPERM,
			  "--root %s: %s (uid %u, mode %04o) %s: the state directory and every directory above it "
			  "must be root's and writable by no one else (a sticky one, as /tmp, may hold it)",
			  dir, *shown ? shown : "/", (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777), why);
}

/* The next component of *rest (skipping "/" and "."), copied into c. */
static bool next_name(const char **rest, char *c, size_t csz)
{
	const char *p = *rest;
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			return false;
		size_t n = strcspn(p, "/");
		if (n == 1 && p[0] == '.') {
			p += 1;
			continue;
		}
		snprintf(c, csz, "%.*s", (int)(n < csz ? n : csz - 1), p);
		*rest = p + n;
		return true;
	}
}

static int open_root_dir(int *cur, struct stat *cst, char *shown, cordon_error *err)
{
	if (*cur >= 0)
		close(*cur);
	*cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*cur < 0 || fstat(*cur, cst) < 0)
		return cordon_err_errno(err, "/");
	shown[0] = '\0';
	return 0;
}

int oci_safe_dir_open(const char *dir, bool create, mode_t mode, int *fd, cordon_error *err)
{
	*fd = -1;
	if (dir[0] != '/')
		return cordon_err(err, EINVAL, "--root %s: an absolute path is needed", dir);
	char path[PATH_MAX * 2], shown[PATH_MAX * 2], c[NAME_MAX + 1];
	shown[0] = '\0'; /* named "/" until the first component */
	snprintf(path, sizeof(path), "%s", dir);
	const char *rest = path;
	_cleanup_close_ int cur = -1;
	struct stat cst = {0}, est = {0}; /* both filled by fstat before a use */
	if (open_root_dir(&cur, &cst, shown, err) < 0)
		return -1;
	int links = 0;
	while (next_name(&rest, c, sizeof(c))) {
		const char *why = dir_fault(&cst, false);
		if (why)
			return refuse(err, dir, shown, &cst, why);
		bool last = !*rest || strspn(rest, "/") == strlen(rest);
		if (fstatat(cur, c, &est, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				return cordon_err_errno(err, "--root %s: %s/%s", dir, shown, c);
			if (!create)
				return 0;
			if (mkdirat(cur, c, last ? mode : 0755) < 0 && errno != EEXIST)
				return cordon_err_errno(err, "--root %s: making %s/%s", dir, shown, c);
			if (fstatat(cur, c, &est, AT_SYMLINK_NOFOLLOW) < 0)
				return cordon_err_errno(err, "--root %s: %s/%s", dir, shown, c);
		}
		char was[sizeof(shown)];
		snprintf(was, sizeof(was), "%s", shown);
		snprintf(shown + strlen(shown), sizeof(shown) - strlen(shown), "/%s", c);
		/* in a sticky directory others write, only an entry of ours is
		 * ours: another user's could be theirs to replace */
		if ((cst.st_mode & 022) && !trusted(est.st_uid))
			return refuse(err, dir, shown, &est, "is another user's, in a directory others write");
		if (S_ISLNK(est.st_mode)) {
			char t[PATH_MAX], joined[sizeof(path)];
			ssize_t n = readlinkat(cur, c, t, sizeof(t) - 1);
			if (n < 0 || ++links > SAFE_LINKS_MAX)
				return cordon_err(err, n < 0 ? errno : ELOOP, "--root %s: %s", dir, shown);
			t[n] = '\0';
			snprintf(joined, sizeof(joined), "%s/%s", t, rest);
			snprintf(path, sizeof(path), "%s", joined);
			rest = path;
			if (t[0] == '/') {
				if (open_root_dir(&cur, &cst, shown, err) < 0)
					return -1;
			} else
				snprintf(shown, sizeof(shown), "%s", was);
			continue;
		}
		if (!S_ISDIR(est.st_mode))
			return cordon_err(err, ENOTDIR, "--root %s: %s is not a directory", dir, shown);
		int next = openat(cur, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 || fstat(next, &cst) < 0) {
			int e = errno;
			if (next >= 0)
				close(next);
			return cordon_err(err, e, "--root %s: %s", dir, shown);
		}
		close(cur);
		cur = next;
		if (cst.st_ino != est.st_ino || cst.st_dev != est.st_dev)
			return cordon_err(err, EAGAIN, "--root %s: %s changed while it was checked", dir, shown);
	}
	const char *why = dir_fault(&cst, true);
	if (why)
		return refuse(err, dir, shown, &cst, why);
	*fd = TAKE_FD(cur);
	return 0;
}
