#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "json.h"

typedef struct {
	const char *s;
	size_t len, pos;
	int line, col;
	int depth;
	uint64_t key_compares; /* duplicate-key checks: strcmp calls */
	cordon_error *err;
} jparser;

static int perr(jparser *p, const char *what)
{
	return cordon_err(p->err, 0, "%d:%d: %s", p->line, p->col, what);
}

static void adv(jparser *p)
{
	if (p->s[p->pos] == '\n') {
		p->line++;
		p->col = 1;
	} else {
		p->col++;
	}
	p->pos++;
}

static void skip_ws(jparser *p)
{
	while (p->pos < p->len) {
		char c = p->s[p->pos];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		adv(p);
	}
}

static int peek(jparser *p) { return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1; }

static jnode *new_node(jparser *p, jtype t)
{
	jnode *n = calloc(1, sizeof(*n));
	if (!n) {
		cordon_oom(p->err);
		return NULL;
	}
	n->type = t;
	n->line = p->line;
	n->col = p->col;
	return n;
}

static int put_utf8(buf *b, uint32_t cp)
{
	char tmp[4];
	size_t n;
	if (cp < 0x80) {
		tmp[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		tmp[0] = (char)(0xC0 | (cp >> 6));
		tmp[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		tmp[0] = (char)(0xE0 | (cp >> 12));
		tmp[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		tmp[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		tmp[0] = (char)(0xF0 | (cp >> 18));
		tmp[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		tmp[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		tmp[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	return buf_append(b, tmp, n);
}

static int hex4(jparser *p, uint32_t *out)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		int c = peek(p);
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return perr(p, "bad \\u escape");
		adv(p);
	}
	*out = v;
	return 0;
}

/* Length of a valid UTF-8 sequence starting at s (max n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	if (s[0] < 0x80)
		return 1;
	size_t len;
	uint32_t cp;
	if ((s[0] & 0xE0) == 0xC0) {
		len = 2;
		cp = s[0] & 0x1F;
	} else if ((s[0] & 0xF0) == 0xE0) {
		len = 3;
		cp = s[0] & 0x0F;
	} else if ((s[0] & 0xF8) == 0xF0) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

static char *parse_string_raw(jparser *p)
{
	buf b = {0};
	adv(p); /* opening quote */
	for (;;) {
		int c = peek(p);
		if (c < 0) {
			perr(p, "unterminated string");
			goto fail;
		}
		if (c == '"') {
			adv(p);
			break;
		}
		if (c < 0x20) {
			perr(p, "control character in string");
			goto fail;
		}
		if (c == '\\') {
			adv(p);
			int e = peek(p);
			char ch;
			switch (e) {
			case '"': ch = '"'; break;
			case '\\': ch = '\\'; break;
			case '/': ch = '/'; break;
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case 'n': ch = '\n'; break;
			case 'r': ch = '\r'; break;
			case 't': ch = '\t'; break;
			case 'u': {
				adv(p);
				uint32_t cp = 0;
				if (hex4(p, &cp) < 0)
					goto fail;
				if (cp >= 0xD800 && cp <= 0xDBFF) {
					uint32_t lo = 0;
					if (peek(p) != '\\') {
						perr(p, "unpaired surrogate in \\u escape");
						goto fail;
					}
					adv(p);
					if (peek(p) != 'u') {
						perr(p, "unpaired surrogate in \\u escape");
						goto fail;
					}
					adv(p);
					if (hex4(p, &lo) < 0)
						goto fail;
					if (lo < 0xDC00 || lo > 0xDFFF) {
						perr(p, "unpaired surrogate in \\u escape");
						goto fail;
					}
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
					perr(p, "unpaired surrogate in \\u escape");
					goto fail;
				}
				if (cp == 0) {
					perr(p, "NUL character in string");
					goto fail;
				}
				if (put_utf8(&b, cp) < 0)
					goto oom;
				continue;
			}
			default:
				perr(p, "bad escape in string");
				goto fail;
			}
			adv(p);
			if (buf_append(&b, &ch, 1) < 0)
				goto oom;
			continue;
		}
		size_t n = utf8_len((const unsigned char *)p->s + p->pos, p->len - p->pos);
		if (n == 0) {
			perr(p, "invalid UTF-8 in string");
			goto fail;
		}
		if (buf_append(&b, p->s + p->pos, n) < 0)
			goto oom;
		for (size_t i = 0; i < n; i++)
			adv(p);
	}
	if (!b.p && buf_append(&b, "", 0) < 0)
		goto oom;
	return b.p;
oom:
	cordon_oom(p->err);
fail:
	buf_free(&b);
	return NULL;
}

static jnode *parse_value(jparser *p);

static jnode *parse_number(jparser *p)
{
	jnode *n = new_node(p, J_NUM);
	if (!n)
		return NULL;
	size_t start = p->pos;
	bool is_int = true;
	if (peek(p) == '-')
		adv(p);
	if (peek(p) == '0') {
		adv(p);
	} else if (peek(p) >= '1' && peek(p) <= '9') {
		while (peek(p) >= '0' && peek(p) <= '9')
			adv(p);
	} else {
		perr(p, "bad number");
		free(n);
		return NULL;
	}
	if (peek(p) == '.') {
		is_int = false;
		adv(p);
		if (!(peek(p) >= '0' && peek(p) <= '9')) {
			perr(p, "bad number");
			free(n);
			return NULL;
		}
		while (peek(p) >= '0' && peek(p) <= '9')
			adv(p);
	}
	if (peek(p) == 'e' || peek(p) == 'E') {
		is_int = false;
		adv(p);
		if (peek(p) == '+' || peek(p) == '-')
			adv(p);
		if (!(peek(p) >= '0' && peek(p) <= '9')) {
			perr(p, "bad number");
			free(n);
			return NULL;
		}
		while (peek(p) >= '0' && peek(p) <= '9')
			adv(p);
	}
	char tmp[64];
	size_t len = p->pos - start;
	if (len >= sizeof(tmp)) {
		cordon_err(p->err, 0, "%d:%d: number too long", n->line, n->col);
		free(n);
		return NULL;
	}
	memcpy(tmp, p->s + start, len);
	tmp[len] = '\0';
	n->num = strtod(tmp, NULL);
	n->num_is_int = is_int;
	if (!isfinite(n->num)) {
		cordon_err(p->err, 0, "%d:%d: number out of range", n->line, n->col);
		free(n);
		return NULL;
	}
	return n;
}

static int expect_word(jparser *p, const char *w)
{
	for (const char *c = w; *c; c++) {
		if (peek(p) != *c)
			return perr(p, "unexpected character");
		adv(p);
	}
	return 0;
}

static int grow(jnode *n, size_t *cap, bool obj)
{
	if (n->n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 4;
	jnode **items = realloc(n->items, nc * sizeof(*items));
	if (!items)
		return -1;
	n->items = items;
	if (obj) {
		char **keys = realloc(n->keys, nc * sizeof(*keys));
		if (!keys)
			return -1;
		n->keys = keys;
		int *kl = realloc(n->kline, nc * sizeof(int));
		if (!kl)
			return -1;
		n->kline = kl;
		int *kc = realloc(n->kcol, nc * sizeof(int));
		if (!kc)
			return -1;
		n->kcol = kc;
	}
	*cap = nc;
	return 0;
}

struct key_probe {
	const jnode *obj;
	const char *key;
};

static bool key_eq(const void *ctx, uint32_t item)
{
	const struct key_probe *k = ctx;
	return strcmp(k->obj->keys[item], k->key) == 0;
}

/* Is key already a key of obj? Small objects (every policy object but env)
 * are scanned; from 8 keys on, a hash index keeps the parse linear: 40,000
 * env keys used to cost 800 million comparisons. Returns 1 if seen, 0 if
 * not, -1 when memory ran out (error set). */
static int seen_key(jparser *p, const jnode *obj, hindex *idx, const char *key)
{
	if (obj->n < 8) {
		for (size_t i = 0; i < obj->n; i++) {
			p->key_compares++;
			if (strcmp(obj->keys[i], key) == 0)
				return 1;
		}
		return 0;
	}
	if (!idx->cap) {
		for (size_t i = 0; i < obj->n; i++)
			if (hindex_add(idx, hash_str(obj->keys[i]), (uint32_t)i) < 0)
				return cordon_oom(p->err);
	}
	struct key_probe k = {obj, key};
	uint64_t before = idx->probes;
	long hit = hindex_find(idx, hash_str(key), key_eq, &k);
	p->key_compares += idx->probes - before;
	return hit >= 0;
}

static jnode *parse_container(jparser *p, bool obj)
{
	jnode *n = new_node(p, obj ? J_OBJ : J_ARR);
	size_t cap = 0;
	hindex idx = {0};
	if (!n)
		return NULL;
	if (++p->depth > JSON_MAX_DEPTH) {
		perr(p, "nesting too deep");
		goto fail;
	}
	adv(p);
	skip_ws(p);
	char close = obj ? '}' : ']';
	if (peek(p) == close) {
		adv(p);
		p->depth--;
		return n;
	}
	for (;;) {
		skip_ws(p);
		int kl = p->line, kc = p->col;
		char *key = NULL;
		if (obj) {
			if (peek(p) != '"') {
				perr(p, "expected a string key");
				goto fail;
			}
			key = parse_string_raw(p);
			if (!key)
				goto fail;
			int seen = seen_key(p, n, &idx, key);
			if (seen != 0) {
				if (seen > 0)
					cordon_err(p->err, 0, "%d:%d: duplicate key \"%s\"", kl, kc, key);
				free(key);
				goto fail;
			}
			skip_ws(p);
			if (peek(p) != ':') {
				free(key);
				perr(p, "expected ':'");
				goto fail;
			}
			adv(p);
			skip_ws(p);
		}
		jnode *v = parse_value(p);
		if (!v) {
			free(key);
			goto fail;
		}
		if (grow(n, &cap, obj) < 0) {
			free(key);
			json_free(v);
			cordon_oom(p->err);
			goto fail;
		}
		n->items[n->n] = v;
		if (obj) {
			n->keys[n->n] = key;
			n->kline[n->n] = kl;
			n->kcol[n->n] = kc;
			if (idx.cap && hindex_add(&idx, hash_str(key), (uint32_t)n->n) < 0) {
				n->n++;
				cordon_oom(p->err);
				goto fail;
			}
		}
		n->n++;
		skip_ws(p);
		if (peek(p) == ',') {
			adv(p);
			continue;
		}
		if (peek(p) == close) {
			adv(p);
			break;
		}
		perr(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		goto fail;
	}
	p->depth--;
	hindex_free(&idx);
	return n;
fail:
	hindex_free(&idx);
	json_free(n);
	return NULL;
}

static jnode *parse_value(jparser *p)
{
	skip_ws(p);
	int c = peek(p);
	jnode *n;
	switch (c) {
	case '{':
		return parse_container(p, true);
	case '[':
		return parse_container(p, false);
	case '"':
		n = new_node(p, J_STR);
		if (!n)
			return NULL;
		n->str = parse_string_raw(p);
		if (!n->str) {
			free(n);
			return NULL;
		}
		return n;
	case 't':
	case 'f':
		n = new_node(p, J_BOOL);
		if (!n)
			return NULL;
		n->b = c == 't';
		if (expect_word(p, c == 't' ? "true" : "false") < 0) {
			free(n);
			return NULL;
		}
		return n;
	case 'n':
		n = new_node(p, J_NULL);
		if (!n)
			return NULL;
		if (expect_word(p, "null") < 0) {
			free(n);
			return NULL;
		}
		return n;
	case -1:
		perr(p, "unexpected end of input");
		return NULL;
	default:
		if (c == '-' || (c >= '0' && c <= '9'))
			return parse_number(p);
		perr(p, "unexpected character");
		return NULL;
	}
}

jnode *json_parse(const char *text, size_t len, cordon_error *err)
{
	return json_parse_counted(text, len, NULL, err);
}

jnode *json_parse_counted(const char *text, size_t len, uint64_t *key_compares, cordon_error *err)
{
	jparser p = {.s = text, .len = len, .line = 1, .col = 1, .err = err};
	jnode *root = parse_value(&p);
	if (key_compares)
		*key_compares = p.key_compares;
	if (!root)
		return NULL;
	skip_ws(&p);
	if (p.pos != p.len) {
		perr(&p, "trailing characters after JSON value");
		json_free(root);
		return NULL;
	}
	return root;
}

void json_free(jnode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		json_free(n->items[i]);
		if (n->keys)
			free(n->keys[i]);
	}
	free(n->items);
	free(n->keys);
	free(n->kline);
	free(n->kcol);
	free(n->str);
	free(n);
}

const char *json_type_name(jtype t)
{
	static const char *names[] = {"null", "boolean", "number", "string", "array", "object"};
	return names[t];
}

jnode *json_get(const jnode *obj, const char *key)
{
	if (!obj || obj->type != J_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (strcmp(obj->keys[i], key) == 0)
			return obj->items[i];
	return NULL;
}

/* ---- writer ---- */

static void w_raw(jwriter *w, const char *s, size_t n)
{
	if (buf_append(&w->out, s, n) < 0)
		w->oom = true;
}

static void w_indent(jwriter *w)
{
	if (w->compact)
		return;
	w_raw(w, "\n", 1);
	for (int i = 0; i < w->depth; i++)
		w_raw(w, "  ", 2);
}

static void w_sep(jwriter *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth == 0)
		return;
	if (!w->first[w->depth])
		w_raw(w, ",", 1);
	w->first[w->depth] = false;
	w_indent(w);
}

bool json_utf8_valid(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if ((unsigned char)s[i] < 0x80)
			continue;
		size_t l = utf8_len((const unsigned char *)s + i, n - i);
		if (!l)
			return false;
		i += l - 1;
	}
	return true;
}

static void w_escaped(jwriter *w, const char *s, size_t n)
{
	w_raw(w, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char tmp[8];
		if (c == '"' || c == '\\') {
			tmp[0] = '\\';
			tmp[1] = (char)c;
			w_raw(w, tmp, 2);
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(tmp, sizeof(tmp), "\\u%04x", c);
			w_raw(w, tmp, 6);
		} else if (c >= 0x80) {
			size_t l = utf8_len((const unsigned char *)s + i, n - i);
			if (l == 0) { /* not UTF-8: escape the byte as U+FFFD */
				w_raw(w, "\\ufffd", 6);
			} else {
				w_raw(w, s + i, l);
				i += l - 1;
			}
		} else {
			w_raw(w, (const char *)&c, 1);
		}
	}
	w_raw(w, "\"", 1);
}

static void w_open(jwriter *w, char c)
{
	w_sep(w);
	w_raw(w, &c, 1);
	if (w->depth < JSON_MAX_DEPTH)
		w->depth++;
	w->first[w->depth] = true;
}

static void w_close(jwriter *w, char c)
{
	bool empty = w->first[w->depth];
	if (w->depth > 0)
		w->depth--;
	if (!empty)
		w_indent(w);
	w_raw(w, &c, 1);
}

void jw_obj_begin(jwriter *w) { w_open(w, '{'); }
void jw_obj_end(jwriter *w) { w_close(w, '}'); }
void jw_arr_begin(jwriter *w) { w_open(w, '['); }
void jw_arr_end(jwriter *w) { w_close(w, ']'); }

void jw_key(jwriter *w, const char *k)
{
	w_sep(w);
	w_escaped(w, k, strlen(k));
	w_raw(w, ": ", 2);
	w->after_key = true;
}

void jw_strn(jwriter *w, const char *s, size_t n)
{
	w_sep(w);
	if (w->filter) {
		char *tmp = strndup(s, n);
		char *f = tmp ? w->filter(w->filter_ctx, tmp) : NULL;
		free(tmp);
		if (!f) {
			w->oom = true;
			return;
		}
		w_escaped(w, f, strlen(f));
		free(f);
		return;
	}
	w_escaped(w, s, n);
}

void jw_str(jwriter *w, const char *s)
{
	if (!s) {
		jw_null(w);
		return;
	}
	jw_strn(w, s, strlen(s));
}

void jw_int(jwriter *w, int64_t v)
{
	char tmp[32];
	w_sep(w);
	int n = snprintf(tmp, sizeof(tmp), "%lld", (long long)v);
	w_raw(w, tmp, (size_t)n);
}

void jw_uint(jwriter *w, uint64_t v)
{
	char tmp[32];
	w_sep(w);
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	w_raw(w, tmp, (size_t)n);
}

void jw_double(jwriter *w, double v)
{
	char tmp[64];
	w_sep(w);
	if (!isfinite(v))
		v = 0;
	int n = snprintf(tmp, sizeof(tmp), "%.6f", v);
	w_raw(w, tmp, (size_t)n);
}

void jw_bool(jwriter *w, bool v)
{
	w_sep(w);
	w_raw(w, v ? "true" : "false", v ? 4 : 5);
}

void jw_null(jwriter *w)
{
	w_sep(w);
	w_raw(w, "null", 4);
}

void jw_str_array(jwriter *w, const char *const *v, size_t n)
{
	jw_arr_begin(w);
	for (size_t i = 0; i < n; i++)
		jw_str(w, v[i]);
	jw_arr_end(w);
}

/* jw_key_str, jw_key_int...: the key, then the value. */
#define JW_KEY_VALUE(name, type, write)                                                                  \
	void jw_key_##name(jwriter *w, const char *k, type v)                                            \
	{                                                                                                \
		jw_key(w, k);                                                                            \
		write(w, v);                                                                             \
	}
JW_KEY_VALUE(str, const char *, jw_str)
JW_KEY_VALUE(int, int64_t, jw_int)
JW_KEY_VALUE(uint, uint64_t, jw_uint)
JW_KEY_VALUE(double, double, jw_double)
JW_KEY_VALUE(bool, bool, jw_bool)

void jw_key_strv(jwriter *w, const char *k, const strv *v)
{
	jw_key(w, k);
	jw_str_array(w, (const char *const *)v->v, v->n);
}

void jw_raw(jwriter *w, const char *json)
{
	size_t n = strlen(json);
	while (n > 0 && (json[n - 1] == '\n' || json[n - 1] == ' '))
		n--; /* jw_take's own newline */
	w_sep(w);
	w_raw(w, json, n);
}

void jw_node(jwriter *w, const jnode *n)
{
	switch (n->type) {
	case J_NULL: jw_null(w); break;
	case J_BOOL: jw_bool(w, n->b); break;
	case J_NUM:
		if (n->num_is_int && n->num >= -9007199254740992.0 && n->num <= 9007199254740992.0)
			jw_int(w, (int64_t)n->num);
		else
			jw_double(w, n->num);
		break;
	case J_STR: jw_str(w, n->str); break;
	case J_ARR:
		jw_arr_begin(w);
		for (size_t i = 0; i < n->n; i++)
			jw_node(w, n->items[i]);
		jw_arr_end(w);
		break;
	case J_OBJ:
		jw_obj_begin(w);
		for (size_t i = 0; i < n->n; i++) {
			jw_key(w, n->keys[i]);
			jw_node(w, n->items[i]);
		}
		jw_obj_end(w);
		break;
	}
}

int jw_finish(jwriter *w)
{
	w_raw(w, "\n", 1);
	return w->oom ? -1 : 0;
}

char *jw_take(jwriter *w)
{
	if (jw_finish(w) < 0) {
		buf_free(&w->out);
		return NULL;
	}
	return w->out.p;
}
