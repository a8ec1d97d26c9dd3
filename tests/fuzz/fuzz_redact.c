/* libFuzzer target: the redactor, with several secrets that overlap, nest
 * and share prefixes.
 *
 * Input: byte 0 picks the number of secrets (1..4); for each secret a mode
 * byte and a length byte (8..40), then, for a fresh secret, its bytes from
 * the input; a derived secret is built from an earlier one (a piece of it =
 * nested, its start + new bytes = shared prefix, its end + new bytes =
 * overlapping). Two split bytes cut the stream into three feeds. The rest
 * is the "program output": it, then every secret, then every adjacent pair
 * of secrets glued so that they overlap, then it again.
 *
 * Each secret is also appended as base64 wrapped the way coreutils and MIME
 * (76 columns, LF) and PEM (64 columns, CRLF) print it, at two alignments.
 * The matcher skips up to nlmax CR/LF bytes in a row inside a match (2, or
 * the longest run in a secret); the reference matches the same way.
 *
 * Invariants, whatever the splits and the prefilter's SIMD level:
 * - the output is exactly that of a naive reference: every occurrence of
 *   every form found by memmem, overlapping occurrences merged into one
 *   range, each range one marker named after its longest occurrence (the
 *   later one on a tie), everything else verbatim. So no byte of a secret
 *   that is inside a longer one comes out (issue 11: "XYZ-[REDACTED:SHORT]-
 *   SECRETTAIL");
 * - no secret value comes out, except where the occurrence overlaps a
 *   marker (the marker's own bytes may complete a secret with the genuine
 *   bytes next to it; that reveals nothing). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "redact.h"
#include "redact-forms.h"
#include "redact-stream.h"

#define MAXS 4

struct in {
	const uint8_t *p;
	size_t n;
};

static bool take(struct in *in, uint8_t *b)
{
	if (!in->n)
		return false;
	*b = *in->p++;
	in->n--;
	return true;
}

static bool overlaps_marker(const buf *out, size_t i, size_t len, size_t nsec)
{
	for (size_t k = 0; k < nsec; k++) {
		char m[16];
		int ml = snprintf(m, sizeof(m), "[REDACTED:S%zu]", k);
		size_t from = i >= (size_t)ml ? i - (size_t)ml + 1 : 0;
		for (size_t j = from; j < i + len && j + (size_t)ml <= out->len; j++)
			if (memcmp(out->p + j, m, (size_t)ml) == 0)
				return true;
	}
	return false;
}

struct occ {
	size_t start, end, len, name, order;
};

static int occ_cmp(const void *a, const void *b)
{
	const struct occ *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

static bool crlf(uint8_t c)
{
	return c == '\r' || c == '\n';
}

/* The end of pat at txt[i..n), up to nlmax CR/LF bytes in a row skipped
 * between its bytes, or 0. */
static size_t match_at(const uint8_t *txt, size_t n, size_t i, const sbuf *pat, size_t nlmax)
{
	size_t j = i;
	for (size_t k = 0; k < pat->len; k++) {
		if (k) {
			for (size_t c = 0; c < nlmax && j < n && crlf(txt[j]); c++)
				j++;
		}
		if (j >= n || txt[j] != pat->p[k])
			return 0;
		j++;
	}
	return j;
}

static size_t longest_crlf_run(const uint8_t *v, size_t n)
{
	size_t best = 0;
	for (size_t i = 0, run = 0; i < n; i++) {
		run = crlf(v[i]) ? run + 1 : 0;
		if (run > best)
			best = run;
	}
	return best;
}

/* base64 of pre + v, wrapped at width with eol. */
static void b64_wrapped(buf *out, const char *pre, const uint8_t *v, size_t n, size_t width, const char *eol)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint8_t in[128];
	size_t pl = strlen(pre), m = pl + n, col = 0;
	memcpy(in, pre, pl);
	memcpy(in + pl, v, n);
	for (size_t i = 0; i < m; i += 3) {
		uint32_t x = (uint32_t)in[i] << 16 | (i + 1 < m ? (uint32_t)in[i + 1] << 8 : 0) | (i + 2 < m ? in[i + 2] : 0);
		char c[4] = {a[x >> 18 & 63], a[x >> 12 & 63], i + 1 < m ? a[x >> 6 & 63] : '=', i + 2 < m ? a[x & 63] : '='};
		for (int k = 0; k < 4; k++) {
			buf_append(out, &c[k], 1);
			if (++col == width) {
				buf_append(out, eol, strlen(eol));
				col = 0;
			}
		}
	}
	buf_append(out, "\n", 1);
}

/* The reference: naive search of every form, then merge. */
static void reference(const uint8_t *txt, size_t n, uint8_t sec[][96], const size_t *slen, size_t nsec, buf *out)
{
	size_t nlmax = 2;
	for (size_t k = 0; k < nsec; k++)
		if (longest_crlf_run(sec[k], slen[k]) > nlmax)
			nlmax = longest_crlf_run(sec[k], slen[k]);
	struct occ *o = NULL;
	size_t no = 0;
	/* every distinct form, with the first secret that has it */
	sbuf *pat = NULL;
	size_t *pname = NULL, np = 0;
	for (size_t k = 0; k < nsec; k++) {
		struct redact_forms f;
		cordon_error e;
		if (redact_forms(sec[k], slen[k], &f, &e) < 0)
			abort();
		for (size_t i = 0; i < f.n; i++) {
			bool dup = false;
			for (size_t j = 0; j < np; j++)
				dup |= pat[j].len == f.f[i].len && memcmp(pat[j].p, f.f[i].p, f.f[i].len) == 0;
			if (dup)
				continue;
			pat = realloc(pat, (np + 1) * sizeof(*pat));
			pname = realloc(pname, (np + 1) * sizeof(*pname));
			pat[np] = (sbuf){0};
			sbuf_append(&pat[np], f.f[i].p, f.f[i].len, NULL);
			pname[np++] = k;
		}
		redact_forms_free(&f);
	}
	for (size_t j = 0; j < np; j++)
		for (size_t i = 0; i + pat[j].len <= n; i++) {
			size_t end = match_at(txt, n, i, &pat[j], nlmax);
			if (end) {
				o = realloc(o, (no + 1) * sizeof(*o));
				o[no] = (struct occ){i, end, pat[j].len, pname[j], no};
				no++;
			}
		}
	if (no)
		qsort(o, no, sizeof(*o), occ_cmp);
	size_t at = 0;
	for (size_t i = 0; i < no;) {
		size_t st = o[i].start, en = o[i].end, best = i;
		size_t j = i + 1;
		for (; j < no && o[j].start < en; j++) {
			if (o[j].end > en)
				en = o[j].end;
		}
		/* longest; on a tie the one that ends later */
		for (size_t k = i; k < j; k++)
			if (o[k].len > o[best].len || (o[k].len == o[best].len && o[k].end > o[best].end))
				best = k;
		buf_append(out, txt + at, st - at);
		buf_printf(out, "[REDACTED:S%zu]", o[best].name);
		at = en;
		i = j;
	}
	buf_append(out, txt + at, n - at);
	for (size_t j = 0; j < np; j++)
		sbuf_wipe(&pat[j]);
	free(pat);
	free(pname);
	free(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = {data, size};
	uint8_t b, ns, sp1, sp2;
	if (!take(&in, &ns) || !take(&in, &sp1) || !take(&in, &sp2))
		return 0;
	size_t nsec = 1 + ns % MAXS;
	uint8_t sec[MAXS][96];
	size_t slen[MAXS];
	for (size_t k = 0; k < nsec; k++) {
		uint8_t mode, lb;
		if (!take(&in, &mode) || !take(&in, &lb))
			return 0;
		size_t want = 8 + lb % 33, have = 0;
		if (k > 0 && mode % 4) {
			const uint8_t *o = sec[mode / 4 % k];
			size_t ol = slen[mode / 4 % k];
			if (mode % 4 == 1) { /* nested: a piece of an earlier one */
				size_t len = want < ol ? want : ol, off = (size_t)lb % (ol - len + 1);
				memcpy(sec[k], o + off, len);
				slen[k] = len;
				continue;
			}
			/* shared prefix (2) or overlapping end (3): then fresh bytes */
			size_t part = 1 + (size_t)lb % (ol < 40 ? ol : 40);
			memcpy(sec[k], mode % 4 == 2 ? o : o + ol - part, part);
			have = part;
			want += part;
		}
		for (; have < want; have++) {
			if (!take(&in, &b))
				return 0;
			sec[k][have] = b;
		}
		slen[k] = want;
	}
	for (size_t k = 0; k < nsec; k++)
		if (longest_crlf_run(sec[k], slen[k]) > REDACT_NL_MAX || longest_crlf_run(sec[k], slen[k]) == slen[k])
			return 0; /* beyond what the matcher skips, or line ends only (documented) */
	buf s = {0};
	buf_append(&s, in.p, in.n);
	for (size_t k = 0; k < nsec; k++)
		buf_append(&s, sec[k], slen[k]);
	for (size_t k = 0; k < nsec; k++) {
		b64_wrapped(&s, "", sec[k], slen[k], 76, "\n");
		b64_wrapped(&s, "a", sec[k], slen[k], 64, "\r\n");
	}
	for (size_t k = 0; k + 1 < nsec; k++) {
		/* sec[k] then sec[k+1] sharing as many bytes as they can */
		size_t ov = 0;
		for (size_t o = slen[k] < slen[k + 1] ? slen[k] : slen[k + 1]; o > 0 && !ov; o--)
			if (memcmp(sec[k] + slen[k] - o, sec[k + 1], o) == 0)
				ov = o;
		buf_append(&s, sec[k], slen[k]);
		buf_append(&s, sec[k + 1] + ov, slen[k + 1] - ov);
	}
	buf_append(&s, in.p, in.n);

	redactor *r = redactor_new();
	cordon_error e;
	for (size_t k = 0; k < nsec; k++) {
		char name[8];
		snprintf(name, sizeof(name), "S%zu", k);
		if (redactor_add_secret(r, name, sec[k], slen[k], &e) < 0)
			abort();
	}
	if (redactor_compile(r, &e) < 0)
		abort();
	size_t a = s.len ? sp1 * s.len / 255 : 0, c = s.len ? sp2 * s.len / 255 : 0;
	if (a > c) {
		size_t t = a;
		a = c;
		c = t;
	}
	buf want = {0};
	reference((const uint8_t *)s.p, s.len, sec, slen, nsec, &want);
	/* Every level of the prefilter's vector skip the CPU has (AVX2,
	 * SSSE3, none) gives the reference's output. */
	for (int level = 2; level >= 0; level--) {
		if (redactor_simd(r, level) < level)
			continue;
		struct redact_stream st;
		buf out = {0};
		redact_stream_init(&st, r);
		if (redact_feed(&st, (const uint8_t *)s.p, a, &out) < 0 ||
		    redact_feed(&st, (const uint8_t *)s.p + a, c - a, &out) < 0 ||
		    redact_feed(&st, (const uint8_t *)s.p + c, s.len - c, &out) < 0 || redact_flush(&st, &out) < 0)
			abort();
		for (size_t k = 0; k < nsec; k++)
			for (size_t i = 0; i + slen[k] <= out.len; i++)
				if (memcmp(out.p + i, sec[k], slen[k]) == 0 && !overlaps_marker(&out, i, slen[k], nsec))
					abort();
		if (want.len != out.len || memcmp(want.p, out.p, out.len) != 0) {
			fprintf(stderr, "simd %d splits %zu %zu\ngot  %.*s\nwant %.*s\n", level, a, c, (int)out.len,
				out.p, (int)want.len, want.p);
			abort();
		}
		redact_stream_free(&st);
		buf_free(&out);
	}
	buf_free(&want);
	buf_free(&s);
	redactor_free(r);
	return 0;
}
