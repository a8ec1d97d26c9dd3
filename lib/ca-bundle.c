/* The CA bundle of a run whose proxy opens TLS (ca-bundle.h). */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ca-bundle.h"
#include "cleanup.h"

int ca_bundle_build(buf *out, const char *pem, size_t len, cordon_error *err)
{
	_cleanup_close_ int fd = open(HOST_CA_BUNDLE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size <= HOST_CA_MAX) {
		char *b = malloc((size_t)st.st_size);
		ssize_t n = b ? read(fd, b, (size_t)st.st_size) : -1;
		if (n > 0)
			buf_append(out, b, (size_t)n);
		free(b);
		if (out->len && out->p[out->len - 1] != '\n')
			buf_append(out, "\n", 1);
	}
	if (buf_append(out, pem, len) < 0)
		return cordon_oom(err);
	return 0;
}
