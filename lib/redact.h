/* Redaction of secrets: every secret value and its encoded forms are replaced
 * by "[REDACTED:NAME]" in streamed output, in cordon's messages and in the
 * report.
 *
 * One Aho-Corasick automaton over all forms of all secrets, compiled to a
 * table (byte classes; a dense row per state near the root, the trie's own
 * edges plus failure links deeper down, so a 64 KiB secret does not make a
 * table of gigabytes). While the automaton is at its root, a table-driven
 * prefilter skips bytes that cannot start any form, 16 at a time.
 *
 * Overlaps: every occurrence of every form is found (overlapping ones too),
 * and the union of the occurrences is redacted; a run of overlapping
 * occurrences becomes one marker named after the longest of them. So a
 * password inside a DATABASE_URL that is also a secret comes out as
 * "[REDACTED:DATABASE_URL]", not as "postgres://u:[REDACTED:PW]@host".
 *
 * In a stream only the bytes that could still be part of a secret are held
 * back (the automaton's current depth, and an occurrence that may still be
 * extended by an overlapping longer one), so ordinary output is not
 * delayed, and a value split across writes (or across the 64 KiB pipe
 * buffer) is still found. A run of overlapping occurrences longer than
 * REDACT_HOLD_MAX is cut into several markers rather than held without bound.
 *
 * The patterns and the automaton (which spells them) live in secret memory
 * (secmem.h): never in a core dump, wiped on free.
 *
 * This header holds the redactor (redact.c: collect, compile); its matching
 * and streams are redact-stream.h's, a secret's encoded forms
 * redact-forms.h's. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cordon.h"
#include "secmem.h"
#include "strv.h"

#define REDACT_HOLD_MAX (64 * 1024)
/* CR/LF bytes skipped in a row inside a match: 2 ("\r\n" of wrapped base64),
 * or the longest run in a secret's value, up to this. */
#define REDACT_NL_MAX 16

typedef struct redactor redactor;

redactor *redactor_new(void);
/* Add a secret: its raw bytes and the forms derived from it. */
int redactor_add_secret(redactor *r, const char *name, const uint8_t *value, size_t len,
			cordon_error *err);
/* Markers are the names as given, not "[REDACTED:NAME]" (the proxy's
 * response filter: a value the upstream echoes becomes its placeholder).
 * Its base64 forms then also take the characters at their two ends that
 * mix the value's bits with its neighbours' (each value those can take), so
 * that nothing of the value comes back at any alignment. Call it before
 * adding secrets. */
void redactor_literal(redactor *r);
/* Build the automaton; call once, after the last add. */
int redactor_compile(redactor *r, cordon_error *err);
/* The vector skip over bytes that begin no form (0: none, 1: SSSE3, 2: AVX2,
 * as far as the CPU has it): lowered to max (tests and benches compare the
 * levels). Returns the level in use. Call after redactor_compile. */
int redactor_simd(redactor *r, int max);
/* Wipe every pattern and the automaton, and free. */
void redactor_free(redactor *r);
/* The secrets' names, in the order they were added. */
size_t redactor_nnames(const redactor *r);
const char *redactor_name(const redactor *r, size_t i);
