/* A change set's file I/O, below its other files: whole writes, control
 * files (cordon's own: one link, no group or other write) read beneath a
 * directory descriptor, a descriptor's canonical path. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cs-io.h"
#include "ident.h"
#include "changeset.h"
#include "cleanup.h"
#include "cs-internal.h"
#include "error.h"

int cs_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int cs_write_file_at(int dfd, const char *name, const void *data, size_t n, cordon_error *err)
{
	_cleanup_close_ int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || cs_write_all(fd, data, n) < 0)
		return cordon_err_errno(err, "write %s", name);
	return 0;
}

/* At most max-1 bytes of dfd/name (a file of cordon's), NUL-terminated. */
/* A control file of a change set (meta, protect, N/host, journal): the
 * caller's own, written by cordon only (no group or other write, one link). */
bool cs_control_file_ok(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == ident_euid() && !(st->st_mode & 022) && st->st_nlink == 1;
}

ssize_t cs_read_file_at(int dfd, const char *name, char *out, size_t max)
{
	_cleanup_close_ int fd = open_beneath(dfd, name, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !cs_control_file_ok(&st))
		return -1;
	size_t n = 0;
	for (ssize_t r; n < max - 1 && (r = read(fd, out + n, max - 1 - n)) != 0;) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		n += (size_t)r;
	}
	out[n] = '\0';
	return (ssize_t)n;
}

/* The directory's canonical path, as the kernel names its descriptor. */
int cs_dirfd_path(int fd, char *out, size_t sz)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(p, out, sz - 1);
	if (n <= 0 || (size_t)n >= sz - 1 || out[0] != '/')
		return -1;
	out[n] = '\0';
	return 0;
}
