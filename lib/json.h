/* A strict JSON reader that keeps the line:column of every key and value, and a
 * small streaming writer.
 *
 * Why our own reader: the contract requires every policy error (unknown key,
 * wrong type, malformed size) to name its line and column; Debian's jansson and
 * cJSON report positions only for syntax errors, not for the values they return. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cordon.h"
#include "strv.h"

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jnode jnode;
struct jnode {
	jtype type;
	int line, col;
	bool b;
	double num;
	bool num_is_int; /* written without fraction or exponent */
	char *str;       /* J_STR: UTF-8, NUL-free */
	size_t n;        /* J_ARR / J_OBJ: element count */
	jnode **items;   /* J_ARR elements, J_OBJ values */
	char **keys;     /* J_OBJ keys */
	int *kline, *kcol;
};

#define JSON_MAX_DEPTH 64

/* Parse len bytes. Refuses duplicate keys, trailing garbage, control
 * characters in strings, invalid UTF-8, NUL in strings and nesting deeper than
 * JSON_MAX_DEPTH. Error message: "LINE:COL: what". */
jnode *json_parse(const char *text, size_t len, cordon_error *err);
/* The same, and the number of key comparisons the duplicate check made
 * (for tests that the parse stays linear). */
jnode *json_parse_counted(const char *text, size_t len, uint64_t *key_compares, cordon_error *err);
void json_free(jnode *n);
const char *json_type_name(jtype t);
/* Object member lookup (NULL if absent). */
jnode *json_get(const jnode *obj, const char *key);

/* Writer: appends pretty-printed JSON to a buf. A filter, if set, rewrites
 * every string (keys excluded) before it is escaped: this is where redaction
 * hooks in. */
typedef char *(*json_filter_fn)(void *ctx, const char *s); /* malloc'd result */
typedef struct {
	buf out;
	int depth;
	bool first[JSON_MAX_DEPTH + 1];
	bool after_key;
	bool oom;
	json_filter_fn filter;
	void *filter_ctx;
	bool compact; /* one line: no newline or indent (NDJSON, JSON-RPC) */
} jwriter;

void jw_obj_begin(jwriter *w);
void jw_obj_end(jwriter *w);
void jw_arr_begin(jwriter *w);
void jw_arr_end(jwriter *w);
void jw_key(jwriter *w, const char *k);
void jw_str(jwriter *w, const char *s);   /* NULL writes null */
void jw_strn(jwriter *w, const char *s, size_t n);
void jw_int(jwriter *w, int64_t v);
void jw_uint(jwriter *w, uint64_t v);
void jw_double(jwriter *w, double v);
void jw_bool(jwriter *w, bool v);
void jw_null(jwriter *w);
/* An array of n strings. */
void jw_str_array(jwriter *w, const char *const *v, size_t n);
/* A member in one call: jw_key(w, k), then its value. */
void jw_key_str(jwriter *w, const char *k, const char *s); /* NULL writes null */
void jw_key_int(jwriter *w, const char *k, int64_t v);
void jw_key_uint(jwriter *w, const char *k, uint64_t v);
void jw_key_double(jwriter *w, const char *k, double v);
void jw_key_bool(jwriter *w, const char *k, bool v);
void jw_key_strv(jwriter *w, const char *k, const strv *v); /* an array of its strings */
/* A value already serialized (trusted: the caller's own JSON text, a
 * trailing newline left out). */
void jw_raw(jwriter *w, const char *json);
/* A parsed value, as it was (keys in their order). */
void jw_node(jwriter *w, const jnode *n);
/* Whether s[0..n) is UTF-8 as the writer takes it (else it writes U+FFFD). */
bool json_utf8_valid(const char *s, size_t n);
/* Finish: returns 0 and the text in w->out, or -1 if memory ran out. */
int jw_finish(jwriter *w);
/* Finish and hand over the text (the caller frees it), or NULL, w->out
 * freed, if memory ran out. */
char *jw_take(jwriter *w);
