#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "cleanup.h"
#include "compat.h"
#include "error.h"
#include "exposure.h"
#include "secmem.h"
#include "strv.h"

#define READ_CHUNK (256 * 1024)

static int add(struct exposure_list *out, const char *name, const char *path)
{
	if (out->n >= EXPOSURE_MAX_ENTRIES) {
		out->complete = false;
		return 0;
	}
	struct secret_exposure *e = realloc(out->e, (out->n + 1) * sizeof(*e));
	if (!e)
		return -1;
	out->e = e;
	e[out->n].name = strdup(name);
	e[out->n].path = strdup(path);
	if (!e[out->n].name || !e[out->n].path) {
		free(e[out->n].name);
		free(e[out->n].path);
		return -1;
	}
	out->n++;
	return 0;
}

/* The root a path lies below, and the path relative to it. */
static int root_of(const char *const *roots, size_t nroots, const char *abs, const char **rel)
{
	int best = -1;
	size_t blen = 0;
	for (size_t i = 0; i < nroots; i++) {
		size_t l = strlen(roots[i]);
		if (path_has_prefix(abs, roots[i]) && l >= blen && strlen(abs) > l) {
			best = (int)i;
			blen = l;
		}
	}
	if (best < 0)
		return -1;
	const char *p = abs + blen;
	while (*p == '/')
		p++;
	*rel = p;
	return *p ? best : -1;
}

/* Scan one file; *seen gets the secrets found. Returns -1 if it could not
 * be read (in full). */
static int scan_one(const redactor *r, int rootfd, const char *rel, uint8_t *bufp, uint64_t *budget,
		    bool *seen, uint64_t *bytes)
{
	_cleanup_close_ int fd = open_beneath(rootfd, rel, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	uint64_t limit = EXPOSURE_FILE_MAX < *budget ? EXPOSURE_FILE_MAX : *budget;
	uint64_t done = 0;
	uint32_t state = 0;
	for (;;) {
		size_t want = READ_CHUNK;
		if (done >= limit)
			break;
		if (limit - done < want)
			want = (size_t)(limit - done);
		ssize_t n = read(fd, bufp, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			*budget -= done;
			*bytes += done;
			return 0;
		}
		redact_scan(r, &state, bufp, (size_t)n, seen);
		done += (uint64_t)n;
	}
	*budget -= done;
	*bytes += done;
	/* At the limit: complete only if the file ends here. */
	char c;
	return read(fd, &c, 1) == 0 ? 0 : -1;
}

int exposure_scan(const redactor *r, const char *const *roots, size_t nroots, const struct file_list *changed,
		  const char *base, struct exposure_list *out, cordon_error *err)
{
	size_t nn = redactor_nnames(r);
	if (!nn)
		return 0;
	out->scanned = true;
	out->complete = !changed->truncated;
	int *rootfd = calloc(nroots ? nroots : 1, sizeof(int));
	bool *seen = calloc(nn, sizeof(bool));
	uint8_t *bufp = secmem_alloc(READ_CHUNK, err); /* file contents may be secrets */
	int rc = -1;
	if (!rootfd || !seen || !bufp) {
		if (rootfd && seen)
			cordon_err(err, 12, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nroots; i++)
		rootfd[i] = -2; /* not opened yet */
	uint64_t budget = EXPOSURE_TOTAL_MAX;
	for (size_t i = 0; i < changed->n; i++) {
		const struct file_record *f = &changed->r[i];
		if (f->change == CHANGE_DELETED || !f->regular)
			continue;
		char abs[4096];
		if (f->path[0] == '/')
			snprintf(abs, sizeof(abs), "%s", f->path);
		else
			snprintf(abs, sizeof(abs), "%s/%s", base ? base : "", f->path);
		const char *rel = NULL;
		int k = root_of(roots, nroots, abs, &rel);
		if (k < 0) {
			out->complete = false;
			continue;
		}
		if (rootfd[k] == -2)
			rootfd[k] = open(roots[k], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rootfd[k] < 0 || budget == 0) {
			out->complete = false;
			continue;
		}
		memset(seen, 0, nn * sizeof(bool));
		if (scan_one(r, rootfd[k], rel, bufp, &budget, seen, &out->bytes) < 0)
			out->complete = false;
		out->files++;
		for (size_t j = 0; j < nn; j++)
			if (seen[j] && add(out, redactor_name(r, j), f->path) < 0) {
				cordon_err(err, 12, "out of memory");
				goto out;
			}
	}
	rc = 0;
out:
	for (size_t i = 0; rootfd && i < nroots; i++)
		if (rootfd[i] >= 0)
			close(rootfd[i]);
	free(rootfd);
	free(seen);
	secmem_free(bufp);
	return rc;
}

void exposure_list_free(struct exposure_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->e[i].name);
		free(l->e[i].path);
	}
	free(l->e);
	memset(l, 0, sizeof(*l));
}
