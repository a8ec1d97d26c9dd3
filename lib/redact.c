#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "redact.h"

/* Trie node: children in a singly linked list (patterns use few distinct
 * bytes per position), failure link, and the pattern ending here (longest). */
struct node {
	uint32_t first_child, next_sibling, fail;
	uint8_t byte;
	uint16_t depth_hi; /* unused padding kept zero */
	uint32_t depth;
	int32_t out;       /* pattern index ending here, or -1 */
	int32_t dict;      /* nearest node by failure links with out >= 0, or 0 */
};

struct pattern {
	char *name;
	size_t len;
};

struct redactor {
	struct node *n;
	size_t nn, cap;
	struct pattern *p;
	size_t np;
	bool compiled;
};

static int new_node(redactor *r, uint8_t byte, uint32_t depth)
{
	if (r->nn == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 256;
		struct node *n = realloc(r->n, cap * sizeof(*n));
		if (!n)
			return -1;
		r->n = n;
		r->cap = cap;
	}
	r->n[r->nn] = (struct node){0, 0, 0, byte, 0, depth, -1, 0};
	return (int)r->nn++;
}

redactor *redactor_new(void)
{
	redactor *r = calloc(1, sizeof(*r));
	if (!r || new_node(r, 0, 0) < 0) {
		free(r);
		return NULL;
	}
	return r;
}

static uint32_t child(const redactor *r, uint32_t node, uint8_t b)
{
	for (uint32_t c = r->n[node].first_child; c; c = r->n[c].next_sibling)
		if (r->n[c].byte == b)
			return c;
	return 0;
}

static int add_pattern(redactor *r, const char *name, const uint8_t *s, size_t len)
{
	uint32_t cur = 0;
	for (size_t i = 0; i < len; i++) {
		uint32_t c = child(r, cur, s[i]);
		if (!c) {
			int k = new_node(r, s[i], (uint32_t)(i + 1));
			if (k < 0)
				return -1;
			c = (uint32_t)k;
			r->n[c].next_sibling = r->n[cur].first_child;
			r->n[cur].first_child = c;
		}
		cur = c;
	}
	if (r->n[cur].out >= 0)
		return 0; /* the same form twice (e.g. raw == URL-encoded) */
	struct pattern *p = realloc(r->p, (r->np + 1) * sizeof(*p));
	if (!p)
		return -1;
	r->p = p;
	r->p[r->np].name = strdup(name);
	if (!r->p[r->np].name)
		return -1;
	r->p[r->np].len = len;
	r->n[cur].out = (int32_t)r->np++;
	return 0;
}

static const char b64std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* base64 of (k zero bytes + v), then keep only the characters that depend on
 * v alone: what a secret looks like inside any longer base64 text, whatever
 * its alignment and whatever follows it. */
static int b64_core(const uint8_t *v, size_t len, int k, const char *alpha, buf *out)
{
	size_t total = (size_t)k + len;
	uint8_t *tmp = calloc(total ? total : 1, 1);
	if (!tmp)
		return -1;
	memcpy(tmp + k, v, len);
	buf enc = {0};
	for (size_t i = 0; i < total; i += 3) {
		uint32_t x = (uint32_t)tmp[i] << 16;
		size_t rem = total - i;
		if (rem > 1)
			x |= (uint32_t)tmp[i + 1] << 8;
		if (rem > 2)
			x |= tmp[i + 2];
		char c[4] = {alpha[(x >> 18) & 63], alpha[(x >> 12) & 63], alpha[(x >> 6) & 63], alpha[x & 63]};
		if (buf_append(&enc, c, rem >= 3 ? 4 : rem + 1) < 0) {
			explicit_bzero(tmp, total);
			free(tmp);
			buf_wipe(&enc);
			return -1;
		}
	}
	explicit_bzero(tmp, total);
	free(tmp);
	/* Leading characters that mix in the k unknown bytes: k=1 -> 2, k=2 -> 3. */
	size_t skip = k == 0 ? 0 : (size_t)k + 1;
	/* A trailing partial group mixes in whatever byte follows. */
	size_t end = enc.len;
	if (total % 3)
		end--;
	int r = 0;
	if (end > skip)
		r = buf_append(out, enc.p + skip, end - skip);
	buf_wipe(&enc);
	return r;
}

static int push_form(struct redact_forms *out, buf *b)
{
	if (!b->len) {
		buf_wipe(b);
		return 0;
	}
	buf *f = realloc(out->f, (out->n + 1) * sizeof(*f));
	if (!f)
		return -1;
	out->f = f;
	out->f[out->n++] = *b; /* ownership moves */
	memset(b, 0, sizeof(*b));
	return 0;
}

void redact_forms_free(struct redact_forms *f)
{
	for (size_t i = 0; i < f->n; i++)
		buf_wipe(&f->f[i]);
	free(f->f);
	memset(f, 0, sizeof(*f));
}

int redact_forms(const uint8_t *v, size_t len, struct redact_forms *out)
{
	buf b = {0};
	int r = -1;
	memset(out, 0, sizeof(*out));
#define PUSH()                               \
	do {                                     \
		if (push_form(out, &b) < 0)          \
			goto fail;                       \
	} while (0)
	if (buf_append(&b, v, len) < 0)
		goto fail;
	PUSH();
	for (int k = 0; k < 3; k++) {
		if (b64_core(v, len, k, b64std, &b) < 0)
			goto fail;
		PUSH();
		if (b64_core(v, len, k, b64url, &b) < 0)
			goto fail;
		PUSH();
	}
	static const char lo[] = "0123456789abcdef", up[] = "0123456789ABCDEF";
	for (int c = 0; c < 2; c++) {
		const char *h = c ? up : lo;
		for (size_t i = 0; i < len; i++) {
			char x[2] = {h[v[i] >> 4], h[v[i] & 15]};
			if (buf_append(&b, x, 2) < 0)
				goto fail;
		}
		PUSH();
	}
	/* URL-encoded (RFC 3986 unreserved kept), upper and lower hex, and the
	 * form encoding with '+' for space. */
	for (int variant = 0; variant < 3; variant++) {
		const char *h = variant == 1 ? lo : up;
		for (size_t i = 0; i < len; i++) {
			uint8_t ch = v[i];
			bool unres = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
				     (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' || ch == '~';
			if (unres) {
				if (buf_append(&b, &ch, 1) < 0)
					goto fail;
			} else if (variant == 2 && ch == ' ') {
				if (buf_append(&b, "+", 1) < 0)
					goto fail;
			} else {
				char x[3] = {'%', h[ch >> 4], h[ch & 15]};
				if (buf_append(&b, x, 3) < 0)
					goto fail;
			}
		}
		PUSH();
	}
	r = 0;
fail:
	buf_wipe(&b);
	return r;
#undef PUSH
}

int redactor_add_secret(redactor *r, const char *name, const uint8_t *value, size_t len,
			cordon_error *err)
{
	struct redact_forms forms;
	if (redact_forms(value, len, &forms) < 0) {
		redact_forms_free(&forms);
		return cordon_err(err, 12, "out of memory");
	}
	int rc = 0;
	for (size_t i = 0; i < forms.n && rc == 0; i++)
		if (add_pattern(r, name, (const uint8_t *)forms.f[i].p, forms.f[i].len) < 0)
			rc = cordon_err(err, 12, "out of memory");
	redact_forms_free(&forms);
	return rc;
}

int redactor_compile(redactor *r, cordon_error *err)
{
	/* Breadth-first: failure link = longest proper suffix that is in the trie. */
	uint32_t *queue = malloc(r->nn * sizeof(uint32_t));
	if (!queue)
		return cordon_err(err, 12, "out of memory");
	size_t head = 0, tail = 0;
	for (uint32_t c = r->n[0].first_child; c; c = r->n[c].next_sibling) {
		r->n[c].fail = 0;
		queue[tail++] = c;
	}
	while (head < tail) {
		uint32_t u = queue[head++];
		for (uint32_t c = r->n[u].first_child; c; c = r->n[c].next_sibling) {
			uint32_t f = r->n[u].fail;
			uint32_t g;
			while (!(g = child(r, f, r->n[c].byte)) && f)
				f = r->n[f].fail;
			r->n[c].fail = g == c ? 0 : g;
			uint32_t fl = r->n[c].fail;
			r->n[c].dict = r->n[fl].out >= 0 ? (int32_t)fl : r->n[fl].dict;
			queue[tail++] = c;
		}
	}
	free(queue);
	r->compiled = true;
	return 0;
}

void redactor_free(redactor *r)
{
	if (!r)
		return;
	if (r->n)
		explicit_bzero(r->n, r->cap * sizeof(*r->n));
	free(r->n);
	for (size_t i = 0; i < r->np; i++)
		free(r->p[i].name);
	free(r->p);
	free(r);
}

static uint32_t step(const redactor *r, uint32_t s, uint8_t b)
{
	uint32_t c;
	while (!(c = child(r, s, b)) && s)
		s = r->n[s].fail;
	return c;
}

/* The pattern (if any) that ends at state s: the node's own, or the nearest
 * by failure links. */
static int32_t match_at(const redactor *r, uint32_t s)
{
	if (r->n[s].out >= 0)
		return r->n[s].out;
	return r->n[s].dict ? r->n[r->n[s].dict].out : -1;
}

void redact_stream_init(struct redact_stream *st, const redactor *r)
{
	memset(st, 0, sizeof(*st));
	st->r = r;
}

static int emit_marker(buf *out, const char *name)
{
	return buf_printf(out, "[REDACTED:%s]", name);
}

int redact_feed(struct redact_stream *st, const uint8_t *in, size_t len, buf *out)
{
	const redactor *r = st->r;
	if (!r || r->np == 0)
		return buf_append(out, in, len);
	for (size_t i = 0; i < len; i++) {
		if (buf_append(&st->held, &in[i], 1) < 0)
			return -1;
		st->state = step(r, st->state, in[i]);
		int32_t m = match_at(r, st->state);
		if (m >= 0) {
			/* The whole match is held (its length <= the automaton depth). */
			size_t mlen = r->p[m].len;
			if (buf_append(out, st->held.p, st->held.len - mlen) < 0 || emit_marker(out, r->p[m].name) < 0)
				return -1;
			explicit_bzero(st->held.p, st->held.len);
			st->held.len = 0;
			st->state = 0;
			continue;
		}
		/* Release what can no longer be part of a match. */
		size_t keep = r->n[st->state].depth;
		if (st->held.len > keep) {
			size_t rel = st->held.len - keep;
			if (buf_append(out, st->held.p, rel) < 0)
				return -1;
			memmove(st->held.p, st->held.p + rel, keep);
			st->held.len = keep;
		}
	}
	return 0;
}

int redact_flush(struct redact_stream *st, buf *out)
{
	int r = st->held.len ? buf_append(out, st->held.p, st->held.len) : 0;
	if (st->held.p)
		explicit_bzero(st->held.p, st->held.cap);
	st->held.len = 0;
	st->state = 0;
	return r;
}

void redact_stream_free(struct redact_stream *st)
{
	buf_wipe(&st->held);
}

char *redact_string(const redactor *r, const char *s)
{
	struct redact_stream st;
	buf out = {0};
	redact_stream_init(&st, r);
	if (redact_feed(&st, (const uint8_t *)s, strlen(s), &out) < 0 || redact_flush(&st, &out) < 0 ||
	    buf_append(&out, "", 0) < 0) {
		redact_stream_free(&st);
		buf_wipe(&out);
		return NULL;
	}
	redact_stream_free(&st);
	return out.p;
}
