/* Directory entries by getdents64 (dirstream.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "dirstream.h"

#define DSTREAM_BUF 32768 /* glibc's own for a directory stream */

struct dstream {
	int fd;
	size_t pos, len;
	char buf[DSTREAM_BUF] __attribute__((aligned(8)));
};

/* The kernel's record is glibc's struct dirent64, which struct dirent is
 * with 64-bit offsets (_FILE_OFFSET_BITS=64 in every build). */
_Static_assert(sizeof(ino_t) == 8 && sizeof(off_t) == 8, "64-bit inode numbers and offsets");
_Static_assert(offsetof(struct dirent, d_reclen) == 16 && offsetof(struct dirent, d_type) == 18 &&
		       offsetof(struct dirent, d_name) == 19,
	       "struct dirent is the kernel's linux_dirent64");

struct dstream *dstream_open(int fd)
{
	if (fd < 0) {
		errno = EBADF;
		return NULL;
	}
	struct dstream *d = malloc(sizeof(*d));
	if (!d)
		return NULL;
	d->fd = fd;
	d->pos = d->len = 0;
	return d;
}

struct dirent *dstream_read(struct dstream *d)
{
	if (d->pos >= d->len) {
		long n;
		do
			n = syscall(SYS_getdents64, d->fd, d->buf, sizeof(d->buf));
		while (n < 0 && errno == EINTR);
		if (n <= 0)
			return NULL; /* 0: the end, errno untouched */
		d->len = (size_t)n;
		d->pos = 0;
	}
	struct dirent *e = (struct dirent *)(void *)(d->buf + d->pos);
	d->pos += e->d_reclen;
	return e;
}

int dstream_fd(const struct dstream *d)
{
	return d->fd;
}

void dstream_close(struct dstream *d)
{
	int e = errno;
	close(d->fd);
	free(d);
	errno = e;
}
