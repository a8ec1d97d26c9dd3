/* The names at the top of a directory (dirlist.h). */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cleanup.h"
#include "dirstream.h"
#include "dirlist.h"
#include "snapshot.h"

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int dirlist_read(const char *dir, size_t max, strv *out)
{
	memset(out, 0, sizeof(*out));
	int fd = open_root(dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -1;
	_cleanup_dstream_ struct dstream *d = dstream_open(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	struct dirent *e;
	while ((e = dstream_read(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (out->n >= max || strv_push(out, e->d_name) < 0) {
			strv_free(out);
			return -1;
		}
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(char *), cmp);
	return 0;
}

bool dirlist_has(const strv *l, const char *name, size_t len)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strncmp(l->v[mid], name, len);
		if (c == 0 && l->v[mid][len] != '\0')
			c = 1;
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}
