/* The forms a secret is redacted in besides its bytes: base64 (standard
 * and URL, at each alignment and with the edges a longer text gives it),
 * hex, percent-encoded and JSON-escaped (redact_forms). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#include <sys/platform/x86.h>
#endif
#include "redact-forms.h"
#include "error.h"
#include "redact.h"
#include "redact-internal.h"

static const char b64std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* base64 of (k zero bytes + v), then keep only the characters that depend on
 * v alone: what a secret looks like inside any longer base64 text, whatever
 * its alignment and whatever follows it. */
static int b64_core(const uint8_t *v, size_t len, int k, const char *alpha, sbuf *out, cordon_error *err)
{
	size_t total = (size_t)k + len;
	size_t enclen = total / 3 * 4 + (total % 3 ? total % 3 + 1 : 0);
	/* Leading characters that mix in the k unknown bytes: k=1 -> 2, k=2 -> 3. */
	size_t skip = k == 0 ? 0 : (size_t)k + 1;
	/* A trailing partial group mixes in whatever byte follows. */
	size_t end = enclen - (total % 3 ? 1 : 0);
	for (size_t i = 0, o = 0; i < total; i += 3, o += 4) {
		/* the bytes of (k zeros + v), without a copy of them */
		uint32_t x = 0;
		for (size_t j = 0; j < 3; j++) {
			size_t at = i + j;
			uint8_t byte = at < (size_t)k || at >= total ? 0 : v[at - (size_t)k];
			x = x << 8 | byte;
		}
		char c[4] = {alpha[(x >> 18) & 63], alpha[(x >> 12) & 63], alpha[(x >> 6) & 63], alpha[x & 63]};
		for (size_t j = 0; j < 4; j++)
			if (o + j >= skip && o + j < end && sbuf_append(out, &c[j], 1, err) < 0) {
				explicit_bzero(c, sizeof(c));
				return -1;
			}
		explicit_bzero(c, sizeof(c));
	}
	return 0;
}

/* The proxy's echo filter (literal mode) takes base64 further: a form that
 * also has the characters at either end that mix the value's first or last
 * bits with those of its neighbours, once for each value the neighbours'
 * bits in them can take (the run chooses what comes before the value in
 * "user:" + value, so it chooses the alignment). Matched, they go with the
 * rest: no bit of the value comes back, at any alignment. pre is the byte
 * just before the value (k = 1: its low 2 bits count, k = 2: its low 4),
 * post the byte after it (its high 4 or 2 bits count). */
static int b64_edge(const uint8_t *v, size_t len, int k, const char *alpha, uint8_t pre, uint8_t post, sbuf *out,
		    cordon_error *err)
{
	size_t total = (size_t)k + len;
	/* The characters whose 6 bits meet the value's [8k, 8 total). */
	size_t first = (size_t)k * 8 / 6, last = (total * 8 + 5) / 6; /* [first, last) */
	for (size_t i = 0, o = 0; o < last; i += 3, o += 4) {
		uint32_t x = 0;
		for (size_t j = 0; j < 3; j++) {
			size_t at = i + j;
			uint8_t byte = at < (size_t)k ? (at + 1 == (size_t)k ? pre : 0)
				     : at < total  ? v[at - (size_t)k]
				     : at == total ? post
						   : 0;
			x = x << 8 | byte;
		}
		char c[4] = {alpha[(x >> 18) & 63], alpha[(x >> 12) & 63], alpha[(x >> 6) & 63], alpha[x & 63]};
		for (size_t j = 0; j < 4; j++)
			if (o + j >= first && o + j < last && sbuf_append(out, &c[j], 1, err) < 0) {
				explicit_bzero(c, sizeof(c));
				return -1;
			}
		explicit_bzero(c, sizeof(c));
	}
	return 0;
}

/* Every form is kept without its CR and LF bytes: the matcher skips up to
 * nlmax of them in a row inside a match (wrapped base64, a multi-line value
 * printed with other line ends). */
static int push_form(struct redact_forms *out, sbuf *b, cordon_error *err)
{
	size_t o = 0;
	for (size_t i = 0; i < b->len; i++)
		if (b->p[i] != '\r' && b->p[i] != '\n')
			b->p[o++] = b->p[i];
	if (o < b->len)
		explicit_bzero(b->p + o, b->len - o);
	b->len = o;
	if (!b->len) {
		sbuf_wipe(b);
		return 0;
	}
	sbuf *f = realloc(out->f, (out->n + 1) * sizeof(*f));
	if (!f)
		return cordon_oom(err);
	out->f = f;
	out->f[out->n++] = *b; /* ownership moves */
	memset(b, 0, sizeof(*b));
	return 0;
}

void redact_forms_free(struct redact_forms *f)
{
	for (size_t i = 0; i < f->n; i++)
		sbuf_wipe(&f->f[i]);
	free(f->f);
	memset(f, 0, sizeof(*f));
}

static int hex_form(const uint8_t *v, size_t len, const char *h, sbuf *b, cordon_error *err)
{
	for (size_t i = 0; i < len; i++) {
		char x[2] = {h[v[i] >> 4], h[v[i] & 15]};
		if (sbuf_append(b, x, 2, err) < 0)
			return -1;
	}
	return 0;
}

/* URL-encoded (RFC 3986 unreserved kept): 0 upper hex, 1 lower hex, the form
 * encoding with '+' for space in 2 upper, 3 lower hex. */
static int url_form(const uint8_t *v, size_t len, int variant, sbuf *b, cordon_error *err)
{
	static const char lo[] = "0123456789abcdef", up[] = "0123456789ABCDEF";
	const char *h = variant == 1 || variant == 3 ? lo : up;
	for (size_t i = 0; i < len; i++) {
		uint8_t ch = v[i];
		bool unres = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
			     ch == '-' || ch == '_' || ch == '.' || ch == '~';
		char x[3] = {'%', h[ch >> 4], h[ch & 15]};
		int r;
		if (unres)
			r = sbuf_append(b, &ch, 1, err);
		else if (variant >= 2 && ch == ' ')
			r = sbuf_append(b, "+", 1, err);
		else
			r = sbuf_append(b, x, 3, err);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* Every byte percent-encoded, upper or lower hex. */
static int pct_all_form(const uint8_t *v, size_t len, const char *h, sbuf *b, cordon_error *err)
{
	for (size_t i = 0; i < len; i++) {
		char x[3] = {'%', h[v[i] >> 4], h[v[i] & 15]};
		if (sbuf_append(b, x, 3, err) < 0)
			return -1;
	}
	return 0;
}

/* A JSON string's contents: '"', '\\' and control bytes escaped; variant 1
 * also '/' as "\/" (PHP), variant 2 also '<', '>', '&' as \u00XX (Go). */
static int json_form(const uint8_t *v, size_t len, int variant, sbuf *b, cordon_error *err)
{
	static const char h[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		uint8_t ch = v[i];
		char x[6];
		size_t n = 0;
		if (ch == '"' || ch == '\\' || (variant == 1 && ch == '/')) {
			x[0] = '\\', x[1] = (char)ch, n = 2;
		} else if (ch == '\n' || ch == '\r' || ch == '\t' || ch == '\b' || ch == '\f') {
			x[0] = '\\';
			x[1] = ch == '\n' ? 'n' : ch == '\r' ? 'r' : ch == '\t' ? 't' : ch == '\b' ? 'b' : 'f';
			n = 2;
		} else if (ch < 0x20 || (variant == 2 && (ch == '<' || ch == '>' || ch == '&'))) {
			x[0] = '\\', x[1] = 'u', x[2] = '0', x[3] = '0', x[4] = h[ch >> 4], x[5] = h[ch & 15], n = 6;
		} else {
			x[0] = (char)ch, n = 1;
		}
		if (sbuf_append(b, x, n, err) < 0)
			return -1;
	}
	return 0;
}

int redact_forms(const uint8_t *v, size_t len, struct redact_forms *out, cordon_error *err)
{
	sbuf b = {0};
	memset(out, 0, sizeof(*out));
	if (sbuf_append(&b, v, len, err) < 0 || push_form(out, &b, err) < 0)
		goto fail;
	for (int k = 0; k < 3; k++) {
		if (b64_core(v, len, k, b64std, &b, err) < 0 || push_form(out, &b, err) < 0 ||
		    b64_core(v, len, k, b64url, &b, err) < 0 || push_form(out, &b, err) < 0)
			goto fail;
	}
	if (hex_form(v, len, "0123456789abcdef", &b, err) < 0 || push_form(out, &b, err) < 0 ||
	    hex_form(v, len, "0123456789ABCDEF", &b, err) < 0 || push_form(out, &b, err) < 0)
		goto fail;
	for (int variant = 0; variant < 4; variant++)
		if (url_form(v, len, variant, &b, err) < 0 || push_form(out, &b, err) < 0)
			goto fail;
	if (pct_all_form(v, len, "0123456789ABCDEF", &b, err) < 0 || push_form(out, &b, err) < 0 ||
	    pct_all_form(v, len, "0123456789abcdef", &b, err) < 0 || push_form(out, &b, err) < 0)
		goto fail;
	for (int variant = 0; variant < 3; variant++)
		if (json_form(v, len, variant, &b, err) < 0 || push_form(out, &b, err) < 0)
			goto fail;
	return 0;
fail:
	sbuf_wipe(&b);
	return -1;
}

/* Every alignment's base64 with its edge characters (b64_edge): each value
 * the neighbours' bits can take in them, both alphabets. */
int redact_b64_edges(const uint8_t *v, size_t len, struct redact_forms *out, cordon_error *err)
{
	sbuf b = {0};
	for (int k = 0; k < 3; k++) {
		size_t total = (size_t)k + len;
		int npre = k == 0 ? 1 : k == 1 ? 4 : 16;                      /* low 2 or 4 bits of the byte before */
		int npost = total % 3 == 0 ? 1 : total % 3 == 1 ? 16 : 4;      /* high 4 or 2 bits of the byte after */
		int shift = total % 3 == 1 ? 4 : 6;
		for (int a = 0; a < 2; a++)
			for (int pi = 0; pi < npre; pi++)
				for (int qi = 0; qi < npost; qi++)
					if (b64_edge(v, len, k, a ? b64url : b64std, (uint8_t)pi, (uint8_t)(qi << shift), &b,
						     err) < 0 ||
					    push_form(out, &b, err) < 0) {
						sbuf_wipe(&b);
						return -1;
					}
	}
	return 0;
}
