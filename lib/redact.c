#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#include <sys/platform/x86.h>
#endif
#include "error.h"
#include "base64.h"
#include "redact.h"

/* The dense part of the table: at most this many bytes (rows for the states
 * nearest the root, in breadth-first order; the rest use trie edges). */
#define DENSE_MAX (8u << 20)

struct patref {
	size_t off, len; /* into redactor.pats */
	uint32_t name;
};

struct redactor {
	/* Collected by redactor_add_secret. */
	sbuf pats; /* every form of every secret, concatenated */
	struct patref *pr;
	size_t npr;
	char **names;
	size_t nnames;
	/* Built by redactor_compile, all in secret memory: the table spells the
	 * patterns. States are numbered breadth-first (depth never decreases). */
	bool compiled;
	uint32_t nstates, ncls, ndense, maxlen;
	uint32_t nlmax; /* CR/LF bytes skipped in a row inside a match */
	uint8_t *tblock; /* the one mapping of the arrays below but dense */
	uint8_t *cls;    /* [256] byte -> class (0: in no pattern) */
	uint8_t *first;  /* [256] 1 if the byte leaves the root */
	uint8_t *big;    /* [8192] bit (a << 8 | b): some pattern starts "ab" */
	uint8_t *nib;    /* [32] the first bytes by nibble, for the SIMD skip */
	int simd, simd_cpu; /* SIMD_* in use, and the best the CPU has */
	bool literal;       /* markers are the names themselves */
	uint32_t *dense; /* [ndense * ncls] next state */
	uint32_t *fail, *depth;
	uint32_t *mlen;  /* longest pattern ending at the state (0: none) */
	uint32_t *mname; /* its secret */
	uint32_t *eoff;  /* [nstates + 1] trie edges of the sparse states */
	uint8_t *ebyte;
	uint32_t *etgt;
};

struct redact_iv {
	uint64_t start, end;
	uint32_t name, len; /* the longest occurrence in the range */
};

redactor *redactor_new(void)
{
	return calloc(1, sizeof(struct redactor));
}

void redactor_literal(redactor *r)
{
	r->literal = true;
}

size_t redactor_nnames(const redactor *r)
{
	return r ? r->nnames : 0;
}

const char *redactor_name(const redactor *r, size_t i)
{
	return r->names[i];
}

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
		return cordon_err(err, 12, "out of memory");
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
		if (b64_core(v, len, k, base64_std, &b, err) < 0 || push_form(out, &b, err) < 0 ||
		    b64_core(v, len, k, base64_url, &b, err) < 0 || push_form(out, &b, err) < 0)
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
static int b64_edges(const uint8_t *v, size_t len, struct redact_forms *out, cordon_error *err)
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
					if (b64_edge(v, len, k, a ? base64_url : base64_std, (uint8_t)pi, (uint8_t)(qi << shift), &b,
						     err) < 0 ||
					    push_form(out, &b, err) < 0) {
						sbuf_wipe(&b);
						return -1;
					}
	}
	return 0;
}

int redactor_add_secret(redactor *r, const char *name, const uint8_t *value, size_t len,
			cordon_error *err)
{
	if (r->compiled)
		return cordon_err(err, EINVAL, "redactor: secret added after compile");
	char **nn = realloc(r->names, (r->nnames + 1) * sizeof(*nn));
	if (!nn)
		return cordon_err(err, 12, "out of memory");
	r->names = nn;
	if (!(r->names[r->nnames] = strdup(name)))
		return cordon_err(err, 12, "out of memory");
	uint32_t id = (uint32_t)r->nnames++;
	for (size_t i = 0, run = 0; i < len; i++) {
		run = value[i] == '\r' || value[i] == '\n' ? run + 1 : 0;
		if (run > r->nlmax)
			r->nlmax = run > REDACT_NL_MAX ? REDACT_NL_MAX : (uint32_t)run;
	}
	struct redact_forms forms;
	if (redact_forms(value, len, &forms, err) < 0 || (r->literal && b64_edges(value, len, &forms, err) < 0)) {
		redact_forms_free(&forms);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < forms.n && rc == 0; i++) {
		struct patref *p = realloc(r->pr, (r->npr + 1) * sizeof(*p));
		if (!p) {
			rc = cordon_err(err, 12, "out of memory");
			break;
		}
		r->pr = p;
		r->pr[r->npr++] = (struct patref){r->pats.len, forms.f[i].len, id};
		rc = sbuf_append(&r->pats, forms.f[i].p, forms.f[i].len, err);
	}
	redact_forms_free(&forms);
	return rc;
}

/* The trie while it is built (secret memory too). */
struct tnode {
	uint32_t first_child, next_sibling;
	uint32_t depth, plen, pname; /* plen: a pattern ends here */
	uint8_t byte;
};

static uint32_t tchild(const struct tnode *t, uint32_t u, uint8_t b)
{
	for (uint32_t c = t[u].first_child; c; c = t[c].next_sibling)
		if (t[c].byte == b)
			return c;
	return 0;
}

static void *salloc(size_t n, size_t size, cordon_error *err)
{
	if (size && n > SIZE_MAX / size / 2) {
		cordon_err(err, 12, "out of memory");
		return NULL;
	}
	return secmem_alloc(n * size, err);
}

/* The trie of every pattern; *nn nodes (root 0). */
static struct tnode *build_trie(const redactor *r, uint32_t *nn, cordon_error *err)
{
	struct tnode *t = salloc(r->pats.len + 1, sizeof(*t), err);
	if (!t)
		return NULL;
	uint32_t n = 1;
	for (size_t i = 0; i < r->npr; i++) {
		const uint8_t *s = r->pats.p + r->pr[i].off;
		uint32_t cur = 0;
		for (size_t k = 0; k < r->pr[i].len; k++) {
			uint32_t c = tchild(t, cur, s[k]);
			if (!c) {
				c = n++;
				t[c] = (struct tnode){0, t[cur].first_child, (uint32_t)k + 1, 0, 0, s[k]};
				t[cur].first_child = c;
			}
			cur = c;
		}
		if (!t[cur].plen) { /* the same form twice (raw == URL-encoded): the first name */
			t[cur].plen = (uint32_t)r->pr[i].len;
			t[cur].pname = r->pr[i].name;
		}
	}
	*nn = n;
	return t;
}

/* A dense entry: the next state, with MFLAG when a pattern ends there and
 * SFLAG when it is the root or one byte deep (the prefilter may take over). */
#define MFLAG 0x80000000u
#define SFLAG 0x40000000u
#define SMASK 0x3fffffffu

static uint32_t flags(const redactor *r, uint32_t t)
{
	return t | (r->mlen[t] ? MFLAG : 0) | (r->depth[t] <= 1 ? SFLAG : 0);
}

/* From a state beyond the dense rows: its trie edges, else its failure. */
static uint32_t step_sparse(const redactor *r, uint32_t s, uint8_t b)
{
	for (;;) {
		if (s < r->ndense)
			return r->dense[(size_t)s * r->ncls + r->cls[b]];
		for (uint32_t e = r->eoff[s]; e < r->eoff[s + 1]; e++)
			if (r->ebyte[e] == b)
				return flags(r, r->etgt[e]);
		s = r->fail[s];
	}
}


/* The goto/failure walk on the trie itself (while the rows are not built):
 * s in breadth-first numbers. */
static uint32_t trie_step(const struct tnode *t, const uint32_t *order, const uint32_t *newid, const uint32_t *fail,
			  uint32_t s, uint8_t b)
{
	for (;;) {
		uint32_t c = tchild(t, order[s], b);
		if (c)
			return newid[c];
		if (!s)
			return 0;
		s = fail[s];
	}
}

enum { SIMD_NONE, SIMD_SSSE3, SIMD_AVX2 };

/* The SIMD skip's tables (shufti): a byte x may start a pattern only if
 * lo[x & 15] & hi[x >> 4] is not 0. Each high nibble that some first byte
 * has gets a bit of its own (wrapping after eight: a wider set, never a
 * narrower one), and lo[l] has that bit for each low nibble l of a first
 * byte with that high nibble. With eight or fewer high nibbles (printable
 * ASCII has six) the set is exact; a wider one is checked by the bigram
 * table after it anyway. */
static void nibble_tables(redactor *r)
{
	uint8_t *lo = r->nib, *hi = r->nib + 16;
	unsigned nb = 0;
	for (int h = 0; h < 16; h++) {
		uint8_t bit = 0;
		for (int l = 0; l < 16; l++)
			if (r->first[h << 4 | l]) {
				bit = (uint8_t)(1u << (nb % 8));
				break;
			}
		if (!bit)
			continue;
		nb++;
		hi[h] = bit;
		for (int l = 0; l < 16; l++)
			if (r->first[h << 4 | l])
				lo[l] |= bit;
	}
	r->simd_cpu = SIMD_NONE;
#if defined(__x86_64__)
	/* glibc's reading of the CPU, made once by the loader: libgcc's
	 * __builtin_cpu_supports would link __cpu_indicator_init, a constructor
	 * whose CPUID instructions every cordon start paid (each a hypervisor
	 * exit, ~40 us on a PVM guest). */
	if (CPU_FEATURE_ACTIVE(AVX2))
		r->simd_cpu = SIMD_AVX2;
	else if (CPU_FEATURE_ACTIVE(SSSE3))
		r->simd_cpu = SIMD_SSSE3;
#endif
	r->simd = r->simd_cpu;
}

int redactor_simd(redactor *r, int max)
{
	if (!r || !r->compiled)
		return SIMD_NONE;
	r->simd = max < r->simd_cpu ? (max < 0 ? SIMD_NONE : max) : r->simd_cpu;
	return r->simd;
}

/* Renumber breadth-first; fill depth, match, fail, edges, dense rows. */
static int build_tables(redactor *r, const struct tnode *t, uint32_t nn, cordon_error *err)
{
	uint32_t *order = salloc(nn, sizeof(uint32_t), err), *newid = salloc(nn, sizeof(uint32_t), err);
	int rc = -1;
	if (!order || !newid)
		goto out;
	uint32_t head = 0, tail = 0;
	order[tail++] = 0;
	while (head < tail) {
		uint32_t u = order[head++];
		newid[u] = head - 1;
		for (uint32_t c = t[u].first_child; c; c = t[c].next_sibling)
			order[tail++] = c;
	}
	r->nstates = nn;
	/* One mapping for the per-state arrays and the byte tables (each
	 * mapping costs mmap, madvise and mlock at start-up). */
	size_t words = (size_t)nn * 6 + 1;
	if (!(r->tblock = salloc(words * 4 + nn + 256 + 256 + 8192 + 32, 1, err)))
		goto out;
	uint32_t *w = (uint32_t *)r->tblock;
	r->fail = w, r->depth = w + nn, r->mlen = w + 2 * (size_t)nn, r->mname = w + 3 * (size_t)nn;
	r->etgt = w + 4 * (size_t)nn, r->eoff = w + 5 * (size_t)nn;
	uint8_t *b8 = r->tblock + words * 4;
	r->cls = b8, r->first = b8 + 256, r->big = b8 + 512, r->nib = b8 + 512 + 8192, r->ebyte = b8 + 512 + 8192 + 32;
	if (nn >= SMASK) {
		cordon_err(err, 12, "redactor: secrets too large");
		goto out;
	}
	for (size_t i = 0; i < r->npr; i++) {
		const uint8_t *p = r->pats.p + r->pr[i].off;
		if (r->pr[i].len == 1) /* a one-byte pattern: any next byte */
			memset(r->big + ((size_t)p[0] << 5), 0xff, 32);
		else if (r->pr[i].len > 1)
			r->big[(size_t)p[0] << 5 | p[1] >> 3] |= (uint8_t)(1u << (p[1] & 7));
	}
	/* A pattern's byte may be followed by CR/LF (skipped inside a match). */
	for (size_t i = 0; i < r->npr; i++) {
		const uint8_t *p = r->pats.p + r->pr[i].off;
		if (r->pr[i].len > 1) {
			r->big[(size_t)p[0] << 5 | '\r' >> 3] |= (uint8_t)(1u << ('\r' & 7));
			r->big[(size_t)p[0] << 5 | '\n' >> 3] |= (uint8_t)(1u << ('\n' & 7));
		}
	}
	/* Byte classes: each byte that occurs in a pattern is its own class. */
	uint32_t ncls = 1;
	for (size_t i = 0; i < r->pats.len; i++)
		if (!r->cls[r->pats.p[i]])
			r->cls[r->pats.p[i]] = (uint8_t)ncls++;
	r->ncls = ncls;
	size_t rowb = (size_t)ncls * 4;
	r->ndense = (uint32_t)(DENSE_MAX / rowb < nn ? DENSE_MAX / rowb : nn);
	if (!r->ndense)
		r->ndense = 1;
	if (!(r->dense = salloc((size_t)r->ndense * ncls, 4, err)))
		goto out;
	/* In breadth-first order the failure state of a state is already done. */
	uint32_t ne = 0;
	for (uint32_t i = 0; i < nn; i++) {
		uint32_t u = order[i];
		r->depth[i] = t[u].depth;
		r->eoff[i] = ne;
		for (uint32_t c = t[u].first_child; c; c = t[c].next_sibling) {
			r->ebyte[ne] = t[c].byte;
			r->etgt[ne++] = newid[c];
			if (i == 0) {
				r->fail[newid[c]] = 0;
				r->first[t[c].byte] = 1;
			} else {
				/* fail(c) = step(fail(u), byte): shallower, so final */
				r->fail[newid[c]] = trie_step(t, order, newid, r->fail, r->fail[i], t[c].byte);
			}
		}
		uint32_t f = r->fail[i];
		if (t[u].plen) {
			r->mlen[i] = t[u].plen;
			r->mname[i] = t[u].pname;
		} else if (i) {
			r->mlen[i] = r->mlen[f];
			r->mname[i] = r->mname[f];
		}
		if (t[u].depth > r->maxlen)
			r->maxlen = t[u].depth;
	}
	r->eoff[nn] = ne;
	nibble_tables(r);
	/* The dense rows, once every state's match is known. */
	for (uint32_t i = 0; i < r->ndense; i++) {
		uint32_t u = order[i], f = r->fail[i];
		uint32_t *row = &r->dense[(size_t)i * ncls];
		for (int b = 0; b < 256; b++) {
			uint8_t k = r->cls[b];
			if (!k)
				continue;
			uint32_t c = tchild(t, u, (uint8_t)b);
			if (c)
				row[k] = flags(r, newid[c]);
			else
				row[k] = i ? r->dense[(size_t)f * ncls + k] : 0;
		}
	}
	rc = 0;
out:
	secmem_free(order);
	secmem_free(newid);
	return rc;
}

int redactor_compile(redactor *r, cordon_error *err)
{
	if (r->compiled)
		return 0;
	if (r->pats.len > UINT32_MAX / 2)
		return cordon_err(err, 12, "redactor: secrets too large");
	uint32_t nn = 0;
	struct tnode *t = build_trie(r, &nn, err);
	if (!t)
		return -1;
	if (r->nlmax < 2)
		r->nlmax = 2; /* "\r\n" */
	int rc = build_tables(r, t, nn, err);
	secmem_free(t);
	if (rc == 0)
		r->compiled = true;
	return rc;
}

void redactor_free(redactor *r)
{
	if (!r)
		return;
	sbuf_wipe(&r->pats);
	free(r->pr);
	for (size_t i = 0; i < r->nnames; i++)
		free(r->names[i]);
	free(r->names);
	secmem_free(r->tblock);
	secmem_free(r->dense);
	free(r);
}

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
			uint32_t x = s < nd ? dense[(size_t)s * ncls + cls[b]] : step_sparse(r, s, b);
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
