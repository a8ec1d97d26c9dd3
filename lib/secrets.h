/* Secrets: loaded in the supervisor once, before the first boundary (the
 * task check reuses the same bytes), delivered to the command only
 * (environment, or a 0400 file on a private tmpfs inside the view), redacted
 * everywhere cordon writes, wiped afterwards. Values live in secret memory
 * (secmem.h: never in a core dump, locked where allowed). */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "policy.h"
#include "redact.h"

#define SECRET_MIN_LEN 8
#define SECRET_MAX_LEN (64 * 1024)

struct secret_value {
	const char *name;  /* points into the policy */
	const char *mount; /* file delivery path inside, or NULL */
	uint8_t *value;    /* secret memory; wiped by secrets_free */
	size_t len;
	/* An injected secret (policy "inject"): what the run gets instead of
	 * the value, the policy's prefix and 32 hex digits (128 random bits),
	 * NUL-terminated; NULL otherwise. */
	char *placeholder;
	const struct cordon_secret *pol;
};
/* What the run is given for v: the placeholder if it has one, else the
 * value. */
static inline const uint8_t *secret_delivered(const struct secret_value *v, size_t *len)
{
	if (v->placeholder) {
		*len = strlen(v->placeholder);
		return (const uint8_t *)v->placeholder;
	}
	*len = v->len;
	return v->value;
}

struct secrets {
	struct secret_value *v;
	size_t n;
	redactor *redact; /* owned; NULL when there are no secrets */
};

/**
 * secrets_load() - read every secret of the policy.
 * A missing variable or file, an empty or too short value (unless
 * allow_short), or a NUL byte in an environment delivery is an error naming
 * the secret (never an empty value). A file is opened without following any
 * symbolic link on its path (openat2 RESOLVE_NO_SYMLINKS; O_NOFOLLOW where
 * openat2 is missing), non-blocking (a FIFO cannot stall the supervisor), and
 * must be a regular file of at most SECRET_MAX_LEN bytes.
 */
int secrets_load(const cordon_policy *p, struct secrets *out, cordon_error *err);
/* Read one secret file as above (exposed for tests); *out is secret memory. */
int secrets_read_file(const char *path, uint8_t **out, size_t *len, cordon_error *err);
/* explicit_bzero everything; the redactor is handed over (s->redact = NULL)
 * if the caller took it. */
void secrets_free(struct secrets *s);
