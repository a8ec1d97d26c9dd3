/* Matching and redacting (redact-stream.c): the automaton run over a stream,
 * the occurrences found merged and replaced by markers, a stream's tail kept
 * until it cannot start one, and a string redacted whole. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "redact.h"
#include "strv.h"

/* A whole string at once (report fields, messages). Caller frees. */
char *redact_string(const redactor *r, const char *s);

/* Streaming. */
struct redact_iv; /* a pending redacted range */
struct redact_stream {
	const redactor *r;
	uint32_t state;
	uint32_t nl;         /* CR/LF bytes skipped in a row just before pos */
	uint64_t pos;        /* bytes fed so far */
	uint64_t hold_start; /* stream position of held[0]: nothing before it is held */
	uint8_t *held;       /* secret memory: bytes [hold_start, pos) not yet released */
	struct redact_iv *iv;
	size_t ivh, niv, ivcap;
};
void redact_stream_init(struct redact_stream *st, const redactor *r);
/* Feed input; append what can be released to out. */
int redact_feed(struct redact_stream *st, const uint8_t *in, size_t len, buf *out);
/* End of stream: release what is held. */
int redact_flush(struct redact_stream *st, buf *out);
/* The memory the stream holds now (its held window and its pending
 * ranges): the proxy counts it in its budget. */
size_t redact_stream_mem(const struct redact_stream *st);
void redact_stream_free(struct redact_stream *st);

/* Matching only (the scan of written files): feed bytes, keep *state between
 * calls (start at 0), set seen[i] for every secret i found (seen has
 * redactor_nnames entries). Returns true if anything was found. */
bool redact_scan(const redactor *r, uint32_t *state, const uint8_t *in, size_t len, bool *seen);
