/* NULL-terminated string vectors and a growable byte buffer. */
#pragma once
#include <stddef.h>
#include <stdbool.h>

typedef struct {
	char **v;
	size_t n, cap;
} strv;

int strv_push(strv *s, const char *str);  /* copies str; -1 on ENOMEM */
int strv_push_take(strv *s, char *str);   /* takes ownership */
bool strv_contains(const strv *s, const char *str);
void strv_free(strv *s);

typedef struct {
	char *p;
	size_t len, cap;
} buf;

int buf_append(buf *b, const void *data, size_t len);
int buf_printf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_free(buf *b);
/* Wipe the contents (explicit_bzero) and free. */
void buf_wipe(buf *b);

/* Lexically normalise an absolute path (collapse //, ., ..) into out.
 * Returns -1 if the result would not fit. */
int path_normalize(const char *in, char *out, size_t outsz);
/* Does path lie at or below prefix (both normalised, absolute)? */
bool path_has_prefix(const char *path, const char *prefix);

/* An open-addressing index from a 64-bit hash to positions in the caller's
 * own array (the caller compares candidates, so it keeps one copy of each
 * key). Average O(1) lookup and insert; the table doubles at half load.
 * `probes` counts candidate comparisons, for tests of complexity. */
#include <stdint.h>
typedef struct {
	uint64_t *hash;
	uint32_t *item; /* position + 1; 0 = empty slot */
	size_t cap, n;
	uint64_t probes;
} hindex;
/* A seeded FNV-1a over n bytes; seeds differ per process (getrandom), so
 * a run cannot precompute colliding keys. */
uint64_t hash_bytes(const void *p, size_t n);
uint64_t hash_str(const char *s);
typedef bool (*hindex_eq)(const void *ctx, uint32_t item);
/* The position of the item with this hash that eq accepts, or -1. */
long hindex_find(hindex *x, uint64_t hash, hindex_eq eq, const void *ctx);
/* Add position `item` under `hash`; -1 on ENOMEM (the index is unchanged). */
int hindex_add(hindex *x, uint64_t hash, uint32_t item);
void hindex_free(hindex *x);
struct cordon_error;
/* Walk path (absolute) as the kernel would, each link followed (at most
 * 40), on_link (may be NULL) told of each one first, by its canonical place
 * and the directory holding it: -1 from it stops the walk. out: the path
 * resolved; with missing_ok, where a component is absent, the part that
 * exists resolved and the rest as given. -1 and err if the walk cannot go
 * on, and stop (may be NULL) names the directory it stopped in. */
typedef int (*path_link_fn)(void *ctx, const char *link, const char *dir, struct cordon_error *err);
int path_walk(const char *path, bool missing_ok, path_link_fn on_link, void *ctx, char *out, size_t outsz,
	      char *stop, size_t stopsz, struct cordon_error *err);
/* Resolve path like realpath(3), but refuse to follow a symlink that sits in
 * a directory at or below any of the writable paths (a run could have
 * planted it), and any symlink outside the system trees (/, /usr, /etc, /bin,
 * /sbin, /lib*, /boot, /dev: directories root's alone, up to /): below /tmp,
 * /home, a workspace, an earlier run could have planted it too. */
int resolve_untrusted_links(const char *path, const strv *writable, char *out, size_t outsz,
			    struct cordon_error *err);
