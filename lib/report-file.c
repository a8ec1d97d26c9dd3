/* The run report written to a file (report_write_target, report-file.h): a new
 * sibling written whole, then renamed over the target, never following a
 * link; beside the target when it is inside what the run could write. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "report-file.h"
#include "cleanup.h"
#include "compat.h"
#include "error.h"
#include "report.h"

static int write_all(int fd, const char *text, size_t len)
{
	size_t off = 0;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

/* A fresh random suffix for a sibling name (temp file, planted entry). */
static void random_suffix(char *out, size_t n)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char r[16] = {0};
	if (n > sizeof(r) + 1)
		n = sizeof(r) + 1;
	if (getrandom(r, n - 1, 0) < 0) { /* never blocks after boot; a weak fallback still differs per call */
		static unsigned k;
		for (size_t i = 0; i + 1 < n; i++)
			r[i] = (unsigned char)(getpid() + (int)i * 31 + (int)k++);
	}
	for (size_t i = 0; i + 1 < n; i++)
		out[i] = set[r[i] % (sizeof(set) - 1)];
	out[n - 1] = '\0';
}

/* Create a new sibling NAME.tmp.XXXXXX in dfd: never follows a link, never
 * opens anything that existed. */
static int create_tmp(int dfd, const char *name, char *tmp, size_t tmpsz)
{
	for (int tries = 0; tries < 16; tries++) {
		char sfx[7];
		random_suffix(sfx, sizeof(sfx));
		if (snprintf(tmp, tmpsz, "%s.tmp.%s", name, sfx) >= (int)tmpsz) {
			errno = ENAMETOOLONG;
			return -1;
		}
		int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

/* Write beside dfd/name and rename into place, all relative to dfd (the
 * directory opened without following any link: a concurrent run that swaps
 * a path component for a link cannot move the write elsewhere). Inside a
 * writable path, an entry at name that cannot be replaced (a directory the
 * run planted) is moved aside to NAME.planted.XXXXXX, named in note. */
static int write_beside(int dfd, const char *shown, const char *name, const char *text, bool inside,
			const char *keep, char *note, size_t notesz, cordon_error *err)
{
	char tmp[NAME_MAX + 16];
	int fd = create_tmp(dfd, name, tmp, sizeof(tmp));
	if (fd < 0)
		return cordon_err_errno(err, "create report beside %s", shown);
	if (write_all(fd, text, strlen(text)) < 0 || fchmod(fd, 0644) < 0 || fsync(fd) < 0) {
		int e = errno;
		close(fd);
		unlinkat(dfd, tmp, 0);
		return cordon_err(err, e, "write report beside %s", shown);
	}
	if (close(fd) < 0) {
		int e = errno;
		unlinkat(dfd, tmp, 0);
		return cordon_err(err, e, "write report beside %s", shown);
	}
	/* keep: what is at name is never replaced (a device): the report
	 * stays under its temporary name, and the note says where. */
	if (keep && note) {
		snprintf(note, notesz, "%s is %s, never replaced by the report: the report is at %s.tmp.%s", shown,
			 keep, shown, tmp + strlen(name) + 5);
		return 0;
	}
	if (keep) {
		unlinkat(dfd, tmp, 0);
		return cordon_err(err, EEXIST, "report %s is %s: never replaced by the report", shown, keep);
	}
	for (int tries = 0;; tries++) {
		if (renameat(dfd, tmp, dfd, name) == 0)
			return 0;
		int e = errno;
		if (inside && tries < 4 && (e == EISDIR || e == ENOTEMPTY || e == EEXIST || e == ENOTDIR)) {
			char aside[NAME_MAX + 32], sfx[7];
			random_suffix(sfx, sizeof(sfx));
			if (snprintf(aside, sizeof(aside), "%s.planted.%s", name, sfx) < (int)sizeof(aside) &&
			    renameat2(dfd, name, dfd, aside, RENAME_NOREPLACE) == 0 && note)
				snprintf(note, notesz, "%s was not a file (a run could have planted it): moved aside to %s.planted.%s",
					 shown, shown, sfx);
			continue;
		}
		/* Never lose the report: inside a writable path it stays under its
		 * temporary name, and the note says where. */
		if (inside && note) {
			snprintf(note, notesz, "%s could not be replaced (%s): the report is at %s.tmp.%s",
				 shown, strerror(e), shown, tmp + strlen(name) + 5);
			return 0;
		}
		unlinkat(dfd, tmp, 0);
		return cordon_err(err, e, "rename report into place at %s", shown);
	}
}

int report_write_target_noted(const char *path, const char *text, const strv *writable, char *note,
			      size_t notesz, cordon_error *err)
{
	static const strv none = {0};
	if (note && notesz)
		note[0] = '\0';
	if (strcmp(path, "-") == 0) {
		if (write_all(STDERR_FILENO, text, strlen(text)) < 0)
			return cordon_err_errno(err, "write report to stderr");
		return 0;
	}
	if (!writable)
		writable = &none;
	char abs[PATH_MAX], cwd[PATH_MAX];
	if (path[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return cordon_err_errno(err, "report %s: the current directory", path);
	char joined[PATH_MAX * 2];
	if (snprintf(joined, sizeof(joined), "%s/%s", path[0] == '/' ? "" : cwd, path) >= (int)sizeof(joined) ||
	    path_normalize(joined, abs, sizeof(abs)) < 0)
		return cordon_err(err, ENAMETOOLONG, "report path %s", path);
	char *slash = strrchr(abs, '/');
	const char *name = slash + 1;
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return cordon_err(err, EISDIR, "report %s: not a file name", path);
	*slash = '\0';
	char dir[PATH_MAX];
	if (resolve_untrusted_links(abs[0] ? abs : "/", writable, dir, sizeof(dir), err) < 0)
		return cordon_err_wrap(err, "report %s", path);
	bool inside = false;
	for (size_t i = 0; i < writable->n; i++)
		inside |= path_has_prefix(dir, writable->v[i]);
	_cleanup_close_ int dfd = open_root(dir, O_PATH | O_DIRECTORY);
	if (dfd < 0)
		return cordon_err_errno(err, "report %s: directory %s (opened without following links)", path, dir);
	char shown[PATH_MAX + NAME_MAX + 2];
	snprintf(shown, sizeof(shown), "%s/%s", strcmp(dir, "/") ? dir : "", name);
	struct stat st;
	bool there = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	/* A device is never replaced, anywhere (issue 27 item 10). Inside a
	 * writable path it is never written either (the run may have moved it
	 * there): the report is kept beside it. */
	if (there && inside && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
		return write_beside(dfd, shown, name, text, inside,
				    S_ISCHR(st.st_mode) ? "a character device inside a writable path"
							: "a block device inside a writable path",
				    note, notesz, err);
	if (inside || !there || S_ISREG(st.st_mode))
		return write_beside(dfd, shown, name, text, inside, NULL, note, notesz, err);
	if (S_ISLNK(st.st_mode)) {
		/* A link to a regular file is replaced, as before; one into /proc
		 * (/dev/stdout -> /proc/self/fd/1) or to a device is written
		 * through. A dangling one is replaced. */
		char lt[PATH_MAX];
		ssize_t n = readlinkat(dfd, name, lt, sizeof(lt) - 1);
		lt[n > 0 ? n : 0] = '\0';
		if (fstatat(dfd, name, &st, 0) < 0 || (S_ISREG(st.st_mode) && strncmp(lt, "/proc/", 6) != 0))
			return write_beside(dfd, shown, name, text, false, NULL, NULL, 0, err);
	}
	if (S_ISBLK(st.st_mode))
		return cordon_err(err, ENOTSUP, "report %s is a block device: a report is never written to one", path);
	if (S_ISDIR(st.st_mode))
		return cordon_err(err, EISDIR, "report %s is a directory", path);
	/* A device, FIFO or socket (/dev/null, /dev/stdout): written to, never
	 * replaced by a file; appended to where it is a file (cordon's stdout
	 * redirected). No reader on a FIFO is an error, not a hang. This is
	 * outside every writable path: the link, if any, is the operator's. */
	_cleanup_close_ int fd = openat(dfd, name, O_WRONLY | O_APPEND | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return cordon_err_errno(err, "open report %s (%s, written in place)", path,
					S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode) ? "a character device" : "not a regular file");
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (write_all(fd, text, strlen(text)) < 0)
		return cordon_err_errno(err, "write report %s", path);
	return 0;
}

int report_write_target(const char *path, const char *text, const strv *writable, cordon_error *err)
{
	return report_write_target_noted(path, text, writable, NULL, 0, err);
}

int report_write_file(const char *path, const char *text, cordon_error *err)
{
	return report_write_target(path, text, NULL, err);
}
