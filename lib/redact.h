/* Redaction of secrets: every secret value and its encoded forms are replaced
 * by "[REDACTED:NAME]" in streamed output, in cordon's messages and in the
 * report.
 *
 * One Aho-Corasick automaton over all forms of all secrets; linear time. In a
 * stream only the bytes that could still be the start of a secret are held
 * back (the automaton's current depth), so ordinary output is not delayed,
 * and a value split across writes (or across the 64 KiB pipe buffer) is still
 * found. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cordon.h"
#include "strv.h"

typedef struct redactor redactor;

redactor *redactor_new(void);
/* Add a secret: its raw bytes and the forms derived from it. */
int redactor_add_secret(redactor *r, const char *name, const uint8_t *value, size_t len,
			cordon_error *err);
/* Build the failure links; call once, after the last add. */
int redactor_compile(redactor *r, cordon_error *err);
/* Wipe every pattern (explicit_bzero) and free. */
void redactor_free(redactor *r);

/* A whole string at once (report fields, messages). Caller frees. */
char *redact_string(const redactor *r, const char *s);

/* Streaming. */
struct redact_stream {
	const redactor *r;
	uint32_t state;
	buf held; /* bytes not yet released: a possible start of a secret */
};
void redact_stream_init(struct redact_stream *st, const redactor *r);
/* Feed input; append what can be released to out. */
int redact_feed(struct redact_stream *st, const uint8_t *in, size_t len, buf *out);
/* End of stream: release what is held. */
int redact_flush(struct redact_stream *st, buf *out);
void redact_stream_free(struct redact_stream *st);

/* The forms of a value (exposed for tests): raw, base64/base64url stable
 * cores for the three alignments, hex (both cases), URL-encoded. Byte
 * strings with their lengths: a value may contain NUL bytes. */
struct redact_forms {
	buf *f;
	size_t n;
};
int redact_forms(const uint8_t *v, size_t len, struct redact_forms *out);
void redact_forms_free(struct redact_forms *f);
