/* Secrets: loaded in the supervisor just before the run, delivered to the
 * command only (environment, or a 0400 file on a private tmpfs inside the
 * view), redacted everywhere cordon writes, wiped afterwards. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "policy.h"
#include "redact.h"

#define SECRET_MIN_LEN 8
#define SECRET_MAX_LEN (64 * 1024)

struct secret_value {
	const char *name;  /* points into the policy */
	const char *mount; /* file delivery path inside, or NULL */
	uint8_t *value;    /* wiped by secrets_free */
	size_t len;
};

struct secrets {
	struct secret_value *v;
	size_t n;
	redactor *redact; /* owned; NULL when there are no secrets */
};

/* Read every secret of the policy. A missing variable or file, an empty or
 * too short value (unless allow_short), or a NUL byte in an environment
 * delivery is an error naming the secret (never an empty value). */
int secrets_load(const cordon_policy *p, struct secrets *out, cordon_error *err);
/* explicit_bzero everything; the redactor is handed over (s->redact = NULL)
 * if the caller took it. */
void secrets_free(struct secrets *s);
