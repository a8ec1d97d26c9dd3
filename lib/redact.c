/* The redactor: the secrets collected (each in every form redact_forms
 * gives) and compiled into one Aho-Corasick automaton in secret memory
 * (dense rows near the root, trie edges beyond, the SIMD skip's tables).
 * The pieces: redact-forms.c (the encoded forms), redact-stream.c
 * (matching and redacting a stream or a string). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#include <sys/platform/x86.h>
#endif
#include "error.h"
#include "redact-forms.h"
#include "redact.h"
#include "redact-internal.h"

/* The dense part of the table: at most this many bytes (rows for the states
 * nearest the root, in breadth-first order; the rest use trie edges). */

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

int redactor_add_secret(redactor *r, const char *name, const uint8_t *value, size_t len,
			cordon_error *err)
{
	if (r->compiled)
		return cordon_err(err, EINVAL, "redactor: secret added after compile");
	char **nn = realloc(r->names, (r->nnames + 1) * sizeof(*nn));
	if (!nn)
		return cordon_oom(err);
	r->names = nn;
	if (!(r->names[r->nnames] = strdup(name)))
		return cordon_oom(err);
	uint32_t id = (uint32_t)r->nnames++;
	for (size_t i = 0, run = 0; i < len; i++) {
		run = value[i] == '\r' || value[i] == '\n' ? run + 1 : 0;
		if (run > r->nlmax)
			r->nlmax = run > REDACT_NL_MAX ? REDACT_NL_MAX : (uint32_t)run;
	}
	struct redact_forms forms;
	if (redact_forms(value, len, &forms, err) < 0 || (r->literal && redact_b64_edges(value, len, &forms, err) < 0)) {
		redact_forms_free(&forms);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < forms.n && rc == 0; i++) {
		struct patref *p = realloc(r->pr, (r->npr + 1) * sizeof(*p));
		if (!p) {
			rc = cordon_oom(err);
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
		cordon_oom(err);
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

static uint32_t flags(const redactor *r, uint32_t t)
{
	return t | (r->mlen[t] ? MFLAG : 0) | (r->depth[t] <= 1 ? SFLAG : 0);
}

/* From a state beyond the dense rows: its trie edges, else its failure. */
uint32_t redact_step_sparse(const redactor *r, uint32_t s, uint8_t b)
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
