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

/* Resolve path like realpath(3), but refuse to follow a symlink that sits in
 * a directory at or below any of the writable paths (a run could have
 * planted it). */
struct cordon_error;
int resolve_untrusted_links(const char *path, const strv *writable, char *out, size_t outsz,
			    struct cordon_error *err);
