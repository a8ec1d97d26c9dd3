/* What the pieces of the redactor share (internal; redact.h is its
 * public side): the automaton's layout, between lib/redact.c (collect,
 * compile) and redact-stream.c (matching, redacting); redact-forms.c (a
 * secret's encoded forms) has its own header. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "error.h"
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

/* A dense entry: the next state, with MFLAG when a pattern ends there and
 * SFLAG when it is the root or one byte deep (the prefilter may take over). */
#define MFLAG 0x80000000u
#define SFLAG 0x40000000u
#define SMASK 0x3fffffffu

enum { SIMD_NONE, SIMD_SSSE3, SIMD_AVX2 };

/* redact.c: from a state beyond the dense rows, its trie edges, else its
 * failure. */
uint32_t redact_step_sparse(const redactor *r, uint32_t s, uint8_t b);
