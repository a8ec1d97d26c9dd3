/* A directory's entries read from a descriptor of it with getdents64, as
 * readdir reads them. fdopendir costs three system calls before the first
 * read (an fstat, F_GETFL, F_SETFD FD_CLOEXEC), none of which a descriptor
 * opened O_RDONLY | O_DIRECTORY | O_CLOEXEC needs (issue 34). Only for
 * such a descriptor: one that is not a directory answers ENOTDIR at the
 * first read, not at the opening. */
#pragma once
#include <dirent.h>

struct dstream;
/* The stream of fd, which it owns from then on (closed by dstream_close);
 * NULL with errno (ENOMEM), fd then still the caller's. */
struct dstream *dstream_open(int fd);
/* The next entry ("." and ".." too), valid until the next read; NULL at
 * the end (errno as it was) or on an error (errno set), as readdir. */
struct dirent *dstream_read(struct dstream *d);
int dstream_fd(const struct dstream *d);
void dstream_close(struct dstream *d);

static inline void cleanup_dstreamp(struct dstream **d)
{
	if (*d)
		dstream_close(*d);
}
#define _cleanup_dstream_ __attribute__((cleanup(cleanup_dstreamp)))
