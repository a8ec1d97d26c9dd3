#include <stdarg.h>
#include <errno.h>
#include <unistd.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include "error.h"
#include "strv.h"

int strv_push_take(strv *s, char *str)
{
	if (!str)
		return -1;
	if (s->n + 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		char **v = realloc(s->v, cap * sizeof(char *));
		if (!v) {
			free(str);
			return -1;
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
	return 0;
}

int strv_push(strv *s, const char *str)
{
	return strv_push_take(s, strdup(str));
}

bool strv_contains(const strv *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], str) == 0)
			return true;
	return false;
}

void strv_free(strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

int buf_append(buf *b, const void *data, size_t len)
{
	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + len + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	if (len)
		memcpy(b->p + b->len, data, len);
	b->len += len;
	b->p[b->len] = '\0';
	return 0;
}

int buf_printf(buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if ((size_t)n < sizeof(tmp))
		return buf_append(b, tmp, (size_t)n);
	char *big = malloc((size_t)n + 1);
	if (!big)
		return -1;
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	int r = buf_append(b, big, (size_t)n);
	free(big);
	return r;
}

void buf_free(buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

void buf_wipe(buf *b)
{
	if (b->p)
		explicit_bzero(b->p, b->cap);
	buf_free(b);
}

int path_normalize(const char *in, char *out, size_t outsz)
{
	size_t o = 0;
	if (outsz < 2 || in[0] != '/')
		return -1;
	out[o++] = '/';
	const char *p = in;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == 1 && p[0] == '.') {
			/* skip */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (o > 1) {
				o--; /* drop trailing '/' */
				while (o > 1 && out[o - 1] != '/')
					o--;
			}
		} else {
			if (o + len + 2 > outsz)
				return -1;
			memcpy(out + o, p, len);
			o += len;
			out[o++] = '/';
		}
		p += len;
	}
	if (o > 1)
		o--; /* no trailing slash */
	out[o] = '\0';
	return 0;
}

bool path_has_prefix(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);
	if (strcmp(prefix, "/") == 0)
		return path[0] == '/';
	return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static uint64_t hash_seed(void)
{
	/* Computed the same by any thread: a relaxed atomic is enough. */
	static uint64_t seed;
	uint64_t v = __atomic_load_n(&seed, __ATOMIC_RELAXED);
	if (!v) {
		/* One syscall, at the first index built; not the AT_RANDOM
		 * bytes, which glibc uses for the stack and pointer guards. */
		uint64_t s = 0;
		if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != sizeof(s))
			s = (uint64_t)(uintptr_t)&s ^ (uint64_t)getpid() << 32;
		v = (0xcbf29ce484222325ULL ^ s) | 1;
		__atomic_store_n(&seed, v, __ATOMIC_RELAXED);
	}
	return v;
}

uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t h = hash_seed();
	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ULL;
	}
	/* A final mix, so that the low bits (the slot) depend on every byte. */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

uint64_t hash_str(const char *s)
{
	return hash_bytes(s, strlen(s));
}

long hindex_find(hindex *x, uint64_t hash, hindex_eq eq, const void *ctx)
{
	if (!x->cap)
		return -1;
	for (size_t i = hash & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
		if (!x->item[i])
			return -1;
		if (x->hash[i] == hash) {
			x->probes++;
			if (eq(ctx, x->item[i] - 1))
				return (long)(x->item[i] - 1);
		}
	}
}

static void hindex_put(uint64_t *hs, uint32_t *it, size_t cap, uint64_t hash, uint32_t item)
{
	size_t i = hash & (cap - 1);
	while (it[i])
		i = (i + 1) & (cap - 1);
	hs[i] = hash;
	it[i] = item + 1;
}

int hindex_add(hindex *x, uint64_t hash, uint32_t item)
{
	if (2 * (x->n + 1) > x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 16;
		uint64_t *hs = calloc(cap, sizeof(*hs));
		uint32_t *it = calloc(cap, sizeof(*it));
		if (!hs || !it) {
			free(hs);
			free(it);
			return -1;
		}
		for (size_t i = 0; i < x->cap; i++)
			if (x->item[i])
				hindex_put(hs, it, cap, x->hash[i], x->item[i] - 1);
		free(x->hash);
		free(x->item);
		x->hash = hs;
		x->item = it;
		x->cap = cap;
	}
	hindex_put(x->hash, x->item, x->cap, hash, item);
	x->n++;
	return 0;
}

void hindex_free(hindex *x)
{
	free(x->hash);
	free(x->item);
	memset(x, 0, sizeof(*x));
}
/* Where a symlink on a granted path is followed: in a system tree (/ itself,
 * or at or below /usr, /etc, /bin, /sbin, /lib*, /boot, /dev), in a
 * directory that it and each of its ancestors are root's and writable by root
 * alone. No run can have planted a link there: no run writes the system trees
 * (an implicit workspace is refused there), and everywhere else (/tmp,
 * /var/tmp, /dev/shm, /home, /root, /run/user, /mnt, /opt, a workspace) a run
 * of root or of a user may have left one for a later run to follow. */
static bool trusted_link_dir(const char *dir)
{
	static const char *const trees[] = {"/usr", "/etc", "/bin", "/sbin", "/boot", "/dev", NULL};
	bool sys = strcmp(dir, "/") == 0 || strncmp(dir, "/lib", 4) == 0;
	for (const char *const *t = trees; !sys && *t; t++)
		sys = path_has_prefix(dir, *t);
	if (!sys)
		return false;
	char pre[PATH_MAX];
	size_t n = strlen(dir);
	if (n >= sizeof(pre))
		return false;
	for (size_t i = 0; i <= n; i++) { /* "/", then each prefix ending before a '/', then dir */
		if (i != 0 && i != n && dir[i] != '/')
			continue;
		size_t len = i ? i : 1;
		memcpy(pre, dir, len);
		pre[len] = '\0';
		struct stat st;
		if (lstat(pre, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
			return false;
	}
	return true;
}

/* Where the walk could not go on: the directory it was in. */
static void stopped_in(char *stop, size_t stopsz, const char *cur)
{
	if (stop && stopsz)
		snprintf(stop, stopsz, "%s", cur[0] ? cur : "/");
}

int path_walk(const char *path, bool missing_ok, path_link_fn on_link, void *ctx, char *out, size_t outsz,
	      char *stop, size_t stopsz, cordon_error *err)
{
	char rest[PATH_MAX * 2], cur[PATH_MAX] = "";
	int links = 0;
	if (stop && stopsz)
		stop[0] = '\0';
	if (snprintf(rest, sizeof(rest), "%s", path) >= (int)sizeof(rest))
		return cordon_err(err, ENAMETOOLONG, "%s", path);
	char *p = rest;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char comp[NAME_MAX + 1];
		if (len > NAME_MAX)
			return cordon_err(err, ENAMETOOLONG, "%.*s", (int)len, p);
		memcpy(comp, p, len);
		comp[len] = '\0';
		p += len;
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			char *slash = strrchr(cur, '/');
			if (slash)
				*slash = '\0';
			continue;
		}
		char next[PATH_MAX];
		if (snprintf(next, sizeof(next), "%s/%s", cur, comp) >= (int)sizeof(next))
			return cordon_err(err, ENAMETOOLONG, "%s", path);
		struct stat st;
		if (lstat(next, &st) < 0) { /* with the rest: no name is cut short */
			int e = errno;
			if (missing_ok && e == ENOENT) {
				snprintf(out, outsz, "%s%s", next, p);
				return 0;
			}
			stopped_in(stop, stopsz, cur);
			return cordon_err(err, e, "%s%s", next, p);
		}
		if (!S_ISLNK(st.st_mode)) {
			snprintf(cur, sizeof(cur), "%s", next);
			continue;
		}
		if (on_link && on_link(ctx, next, cur[0] ? cur : "/", err) < 0)
			return -1;
		char target[PATH_MAX];
		ssize_t n = ++links > 40 ? (errno = ELOOP, -1) : readlink(next, target, sizeof(target) - 1);
		if (n < 0) {
			int e = errno;
			stopped_in(stop, stopsz, cur);
			return e == ELOOP ? cordon_err(err, ELOOP, "%s", path) : cordon_err(err, e, "readlink %s", next);
		}
		target[n] = '\0';
		char joined[PATH_MAX * 2];
		if (snprintf(joined, sizeof(joined), "%s/%s", target, p) >= (int)sizeof(joined))
			return cordon_err(err, ENAMETOOLONG, "%s", path);
		if (target[0] == '/')
			cur[0] = '\0';
		snprintf(rest, sizeof(rest), "%s", joined);
		p = rest;
	}
	snprintf(out, outsz, "%s", cur[0] ? cur : "/");
	return 0;
}

/* A link in dir is followed only outside every writable path and inside a
 * trusted system directory. */
static int refuse_untrusted_link(void *ctx, const char *link, const char *dir, cordon_error *err)
{
	const strv *writable = ctx;
	for (size_t i = 0; i < writable->n; i++)
		if (path_has_prefix(dir, writable->v[i]))
			return cordon_err(err, 0, "%s is a symbolic link inside the writable path %s (a run could have planted it); name its target instead",
					  link, writable->v[i]);
	if (!trusted_link_dir(dir))
		return cordon_err(err, 0, "%s is a symbolic link in %s, which a run could have planted; name its target instead",
				  link, dir);
	return 0;
}

/* Resolve path like realpath(3), but refuse to follow a symlink that sits in
 * a directory at or below any of the writable paths, or anywhere but a
 * trusted system directory (trusted_link_dir). */
int resolve_untrusted_links(const char *path, const strv *writable, char *out, size_t outsz,
			    cordon_error *err)
{
	return path_walk(path, false, refuse_untrusted_link, (void *)writable, out, outsz, NULL, 0, err);
}
