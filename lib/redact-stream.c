/* Matching and redacting: the automaton run over a stream (with the SIMD
 * skip over bytes that start no pattern), the occurrences found merged
 * and replaced by markers, a stream's tail kept until it cannot start one
 * (redact_feed, redact_flush), and a string redacted whole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#include <sys/platform/x86.h>
#endif
#include "redact-stream.h"
#include "error.h"
#include "redact.h"
#include "redact-internal.h"

struct redact_iv {
	uint64_t start, end;
	uint32_t name, len; /* the longest occurrence in the range */
};

static bool active(const redactor *r)
{
	return r && r->compiled && r->npr > 0;
}

static inline unsigned bigram(const uint8_t *big, uint8_t a, uint8_t b)
{
	return (big[(size_t)a << 5 | b >> 3] >> (b & 7)) & 1;
}

/* The bigram bits of the 16 positions q[0..15] (q[16] is read). */
static inline uint32_t bigram16(const uint8_t *big, const uint8_t *q)
{
	uint32_t m = 0;
#pragma GCC unroll 16
	for (int k = 0; k < 16; k++)
		m |= bigram(big, q[k], q[k + 1]) << k;
	return m;
}

#if defined(__x86_64__)
/* Bytes at [p, n - 1) that may start a pattern, 32 (AVX2) or 16 (SSSE3) at
 * a time by the nibble tables; a window with a candidate is then checked
 * with the bigram table, branch-free. Stops where fewer than a window and
 * one byte are left, for the scalar loop to finish. */
__attribute__((target("avx2"))) static size_t skip_avx2(const redactor *r, const uint8_t *in, size_t p, size_t n,
							 bool *found)
{
	const __m256i lo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)r->nib));
	const __m256i hi = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(r->nib + 16)));
	const __m256i low4 = _mm256_set1_epi8(0x0f), zero = _mm256_setzero_si256();
	while (p + 33 <= n) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(in + p));
		__m256i a = _mm256_shuffle_epi8(lo, _mm256_and_si256(v, low4));
		__m256i b = _mm256_shuffle_epi8(hi, _mm256_and_si256(_mm256_srli_epi16(v, 4), low4));
		uint32_t m = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(a, b), zero));
		if (m) {
			m &= bigram16(r->big, in + p) | bigram16(r->big, in + p + 16) << 16;
			if (m) {
				*found = true;
				return p + (size_t)__builtin_ctz(m);
			}
		}
		p += 32;
	}
	return p;
}

__attribute__((target("ssse3"))) static size_t skip_ssse3(const redactor *r, const uint8_t *in, size_t p, size_t n,
							   bool *found)
{
	const __m128i lo = _mm_loadu_si128((const __m128i *)r->nib);
	const __m128i hi = _mm_loadu_si128((const __m128i *)(r->nib + 16));
	const __m128i low4 = _mm_set1_epi8(0x0f), zero = _mm_setzero_si128();
	while (p + 17 <= n) {
		__m128i v = _mm_loadu_si128((const __m128i *)(in + p));
		__m128i a = _mm_shuffle_epi8(lo, _mm_and_si128(v, low4));
		__m128i b = _mm_shuffle_epi8(hi, _mm_and_si128(_mm_srli_epi16(v, 4), low4));
		uint32_t m = 0xffffu & ~(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(a, b), zero));
		if (m) {
			m &= bigram16(r->big, in + p);
			if (m) {
				*found = true;
				return p + (size_t)__builtin_ctz(m);
			}
		}
		p += 16;
	}
	return p;
}
#endif

/* The first position at or after p where a pattern may start: its byte and
 * the next begin some pattern (or it is the last byte of the input). With
 * SIMD, bytes that begin no pattern are passed over a vector at a time (a
 * long run of such bytes, zeros or binary data, costs a few instructions
 * per 32 bytes). Without, 16 bytes at a time without a branch per byte:
 * random text, where most bytes begin some form, would otherwise
 * mispredict on every other byte. */
static size_t skip_root(const redactor *r, const uint8_t *in, size_t p, size_t n)
{
	const uint8_t *first = r->first, *big = r->big;
#if defined(__x86_64__)
	bool found = false;
	if (r->simd == SIMD_AVX2)
		p = skip_avx2(r, in, p, n, &found);
	else if (r->simd == SIMD_SSSE3)
		p = skip_ssse3(r, in, p, n, &found);
	if (found)
		return p;
#endif
	while (p + 17 <= n) {
		const uint8_t *q = in + p;
		unsigned acc = first[q[0]] | first[q[1]] | first[q[2]] | first[q[3]] | first[q[4]] | first[q[5]] |
			       first[q[6]] | first[q[7]] | first[q[8]] | first[q[9]] | first[q[10]] | first[q[11]] |
			       first[q[12]] | first[q[13]] | first[q[14]] | first[q[15]];
		if (acc) {
			uint32_t m = bigram16(big, q);
			if (m)
				return p + (size_t)__builtin_ctz(m);
		}
		p += 16;
	}
	for (; p < n; p++)
		if (first[in[p]] && (p + 1 == n || bigram(big, in[p], in[p + 1])))
			return p;
	return n;
}

/* Run the automaton from (*ps, *pi) to the next end of a pattern (true:
 * *pi just after it, *ps its state) or to the end of the input (false).
 * *pnl: the CR/LF bytes skipped in a row just before *pi.
 *
 * Prefilter: at the root, bytes that start no pattern are skipped 16 at a
 * time, and a candidate byte is entered only if it and the next byte begin
 * some pattern (the bigram table). That is exact: a state one byte deep
 * remembers only "this byte may start a pattern", so when the automaton
 * falls back to such a state (SFLAG) the scan resumes at the root one byte
 * back. A pattern that may start at the last byte of the input is always
 * entered (its next byte is not known yet).
 *
 * Inside a match (not at the root), up to nlmax CR or LF bytes in a row are
 * skipped: the patterns hold none, so base64 wrapped at any width (76:
 * coreutils, MIME; 64: PEM), with LF or CRLF, and a multi-line value printed
 * with other line ends are found. A longer run is an ordinary byte (no
 * pattern has it: back to the root). */
static inline bool next_match(const redactor *r, uint32_t *ps, const uint8_t *in, size_t *pi, size_t len,
			      uint32_t *pnl)
{
	const uint32_t *dense = r->dense, nd = r->ndense, ncls = r->ncls, nlmax = r->nlmax;
	const uint8_t *cls = r->cls;
	uint32_t s = *ps, nl = *pnl;
	size_t i = *pi, p = i;
	bool root = s == 0;
	for (;;) {
		if (root) {
			p = skip_root(r, in, p, len);
			if (p >= len) {
				*ps = 0;
				*pnl = 0;
				*pi = len;
				return false;
			}
			uint32_t x = dense[cls[in[p]]];
			s = x & SMASK;
			nl = 0;
			i = p + 1;
			if (x & MFLAG)
				goto found;
		}
		/* At least one step here before the prefilter again: progress. */
		for (;;) {
			if (i == len) {
				*ps = s;
				*pnl = nl;
				*pi = i;
				return false;
			}
			uint8_t b = in[i++];
			if (__builtin_expect(b == '\n' || b == '\r', 0)) {
				if (s && nl < nlmax) {
					nl++;
					continue;
				}
			} else {
				nl = 0;
			}
			uint32_t x = s < nd ? dense[(size_t)s * ncls + cls[b]] : redact_step_sparse(r, s, b);
			s = x & SMASK;
			if (x & MFLAG)
				goto found;
			if (x & SFLAG)
				break;
		}
		p = i - r->depth[s];
		s = 0;
		root = true;
	}
found:
	*ps = s;
	*pnl = 0;
	*pi = i;
	return true;
}

bool redact_scan(const redactor *r, uint32_t *state, const uint8_t *in, size_t len, bool *seen)
{
	if (!active(r))
		return false;
	bool any = false;
	size_t i = 0;
	/* *state packs the CR/LF run (bits 30-31, saturated at 3: a longer run
	 * carried over a call may be skipped a little further, never less). */
	uint32_t s = *state & SMASK, nl = *state >> 30;
	while (next_match(r, &s, in, &i, len, &nl)) {
		seen[r->mname[s]] = true;
		any = true;
	}
	*state = s | (nl < 3 ? nl : 3) << 30;
	return any;
}

void redact_stream_init(struct redact_stream *st, const redactor *r)
{
	memset(st, 0, sizeof(*st));
	st->r = r;
}

/* The feed in progress: held bytes cover [hold_start, base), the input
 * [base, base + len). */
struct feed {
	struct redact_stream *st;
	const uint8_t *in;
	uint64_t base;
	uint64_t held_from; /* stream position of st->held[0] */
	buf *out;
};

static int emit_plain(struct feed *f, uint64_t a, uint64_t b)
{
	if (a >= b)
		return 0;
	if (a < f->base) {
		uint64_t e = b < f->base ? b : f->base;
		if (buf_append(f->out, f->st->held + (a - f->held_from), (size_t)(e - a)) < 0)
			return -1;
		a = e;
	}
	return a < b ? buf_append(f->out, f->in + (a - f->base), (size_t)(b - a)) : 0;
}

static int emit_marker(struct feed *f, uint32_t name)
{
	const redactor *r = f->st->r;
	if (r->literal)
		return buf_append(f->out, r->names[name], strlen(r->names[name]));
	return buf_printf(f->out, "[REDACTED:%s]", r->names[name]);
}

/* Release everything before safe that is final: plain bytes, and ranges
 * that no later occurrence can overlap (they end at or before safe). With
 * force, a range still open is cut at safe when the stream holds more than
 * REDACT_HOLD_MAX. */
static int release(struct feed *f, uint64_t safe, bool force)
{
	struct redact_stream *st = f->st;
	for (;;) {
		while (st->ivh < st->niv && st->iv[st->ivh].end <= safe) {
			struct redact_iv *v = &st->iv[st->ivh++];
			if (emit_plain(f, st->hold_start, v->start) < 0 || emit_marker(f, v->name) < 0)
				return -1;
			st->hold_start = v->end;
		}
		if (st->ivh == st->niv)
			st->ivh = st->niv = 0;
		uint64_t limit = st->ivh < st->niv && st->iv[st->ivh].start < safe ? st->iv[st->ivh].start : safe;
		if (limit > st->hold_start) {
			if (emit_plain(f, st->hold_start, limit) < 0)
				return -1;
			st->hold_start = limit;
		}
		if (!force || st->pos - st->hold_start <= REDACT_HOLD_MAX || st->ivh == st->niv ||
		    st->iv[st->ivh].start >= safe)
			return 0;
		/* Cut the open range at safe: no later occurrence starts before it. */
		struct redact_iv *v = &st->iv[st->ivh];
		if (emit_marker(f, v->name) < 0)
			return -1;
		st->hold_start = v->start = safe;
	}
}

/* An occurrence [a, e): merge with the pending ranges it overlaps. */
static int add_occurrence(struct feed *f, uint64_t a, uint64_t e, uint32_t name, uint32_t len)
{
	struct redact_stream *st = f->st;
	while (st->niv > st->ivh && st->iv[st->niv - 1].end > a) {
		struct redact_iv *v = &st->iv[--st->niv];
		if (v->start < a)
			a = v->start;
		if (v->len > len) {
			len = v->len;
			name = v->name;
		}
	}
	if (st->niv == st->ivcap) {
		if (st->ivh) {
			memmove(st->iv, st->iv + st->ivh, (st->niv - st->ivh) * sizeof(*st->iv));
			st->niv -= st->ivh;
			st->ivh = 0;
		}
		if (st->niv == st->ivcap) {
			size_t cap = st->ivcap ? st->ivcap * 2 : 16;
			struct redact_iv *n = realloc(st->iv, cap * sizeof(*n));
			if (!n)
				return -1;
			st->iv = n;
			st->ivcap = cap;
		}
	}
	st->iv[st->niv++] = (struct redact_iv){a, e, name, len};
	return 0;
}

/* Keep [hold_start, pos) for the next feed. */
static int keep_tail(struct feed *f)
{
	struct redact_stream *st = f->st;
	uint64_t n = st->pos - st->hold_start;
	if (!n)
		return 0;
	if (!st->held) {
		/* a window spans maxlen pattern bytes and up to nlmax skipped
		 * CR/LF bytes after each */
		st->held = secmem_alloc(REDACT_HOLD_MAX + (size_t)st->r->maxlen * (st->r->nlmax + 1) + 16, NULL);
		if (!st->held)
			return -1;
	}
	if (n > secmem_size(st->held))
		return -1; /* cannot happen: release(force) bounds it */
	if (st->hold_start < f->base) {
		size_t old = (size_t)(f->base - st->hold_start);
		memmove(st->held, st->held + (st->hold_start - f->held_from), old);
		memcpy(st->held + old, f->in, (size_t)(n - old));
	} else {
		memcpy(st->held, f->in + (st->hold_start - f->base), (size_t)n);
	}
	return 0;
}

/* The stream position where the last d pattern bytes before e begin: d
 * bytes back, and the CR/LF bytes the matcher skipped among them. Never
 * before what is held (the window of a state always is). */
static uint64_t back(const struct feed *f, uint64_t e, uint32_t d)
{
	const struct redact_stream *st = f->st;
	uint64_t a = e;
	while (d && a > st->hold_start) {
		a--;
		uint8_t b = a >= f->base ? f->in[a - f->base] : st->held[a - f->held_from];
		if (b != '\r' && b != '\n')
			d--;
	}
	return a;
}

int redact_feed(struct redact_stream *st, const uint8_t *in, size_t len, buf *out)
{
	const redactor *r = st->r;
	if (!active(r))
		return buf_append(out, in, len);
	struct feed f = {st, in, st->pos, st->hold_start, out};
	uint32_t s = st->state, nl = st->nl;
	size_t i = 0;
	while (next_match(r, &s, in, &i, len, &nl)) {
		uint32_t m = r->mlen[s];
		uint64_t e = f.base + i;
		st->pos = e;
		if (add_occurrence(&f, back(&f, e, m), e, r->mname[s], m) < 0 ||
		    release(&f, back(&f, e, r->depth[s]), false) < 0)
			return -1;
	}
	st->state = s;
	st->nl = nl;
	st->pos = f.base + len;
	if (release(&f, back(&f, st->pos, r->depth[s]), true) < 0 || keep_tail(&f) < 0)
		return -1;
	return 0;
}

int redact_flush(struct redact_stream *st, buf *out)
{
	if (!active(st->r))
		return 0;
	struct feed f = {st, NULL, st->pos, st->hold_start, out};
	int rc = release(&f, st->pos, false);
	if (st->held)
		explicit_bzero(st->held, secmem_size(st->held));
	st->hold_start = st->pos;
	st->ivh = st->niv = 0;
	st->state = 0;
	st->nl = 0;
	return rc;
}

size_t redact_stream_mem(const struct redact_stream *st)
{
	return (st->held ? secmem_size(st->held) : 0) + st->ivcap * sizeof(*st->iv);
}

void redact_stream_free(struct redact_stream *st)
{
	secmem_free(st->held);
	free(st->iv);
	st->held = NULL;
	st->iv = NULL;
	st->ivh = st->niv = st->ivcap = 0;
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
