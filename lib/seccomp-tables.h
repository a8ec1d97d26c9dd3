/* The seccomp layer's tables (lib/seccomp-tables.c). seccomp_default_deny
 * is declared in seccomp-policy.h (the policy layer reads it). */
#pragma once
#include "seccomp-policy.h"

#define SECCOMP_N_NS_FLAGS 8
#define SECCOMP_N_BAD_PERSONA 6
#define SECCOMP_N_PRIV_CALLS 9
#define SECCOMP_N_FCAP_CALLS 3
#define SECCOMP_N_FCAP_SIZES 2

struct seccomp_ns_flag {
	unsigned long flag;
	const char *name;
};
extern const struct seccomp_ns_flag seccomp_ns_flags[SECCOMP_N_NS_FLAGS];
extern const unsigned long seccomp_bad_persona[SECCOMP_N_BAD_PERSONA];
extern const struct priv_call seccomp_priv_calls[SECCOMP_N_PRIV_CALLS];
extern const char *const seccomp_fcap_calls[SECCOMP_N_FCAP_CALLS];
extern const unsigned long seccomp_fcap_sizes[SECCOMP_N_FCAP_SIZES];
