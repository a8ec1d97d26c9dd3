/* cordon: a Linux execution boundary for untrusted code.
 *
 * libcordon's public surface. Every fallible function returns a negative value
 * and fills a caller-provided cordon_error; the library never prints or exits. */
#pragma once
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CORDON_PUBLIC __attribute__((visibility("default")))

typedef struct cordon_error {
	int code;       /* errno value, or 0 for a validation error */
	char msg[1024]; /* one line, no trailing newline */
} cordon_error;

typedef struct cordon_policy cordon_policy;

#ifdef __cplusplus
}
#endif
