/* The forms a secret is redacted in besides its bytes (redact-forms.c):
 * base64 (standard and URL, at each alignment and with the edges a longer
 * text gives it), hex, percent-encoded and JSON-escaped. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "secmem.h"

/* The forms of a value (exposed for tests): raw, base64/base64url stable
 * cores for the three alignments, hex (both cases), URL-encoded. Byte
 * strings with their lengths (a value may contain NUL bytes), in secret
 * memory. */
struct redact_forms {
	sbuf *f;
	size_t n;
};
int redact_forms(const uint8_t *v, size_t len, struct redact_forms *out, cordon_error *err);
void redact_forms_free(struct redact_forms *f);
/* A secret's base64 forms with the edges a longer text gives it (the
 * redactor's own, redact.c). */
int redact_b64_edges(const uint8_t *v, size_t len, struct redact_forms *out, cordon_error *err);
