/* Process credentials inside the boundary (child side). */
#pragma once
#include <stdint.h>
#include "cordon.h"

/* Become SANDBOX_UID/GID while keeping the full capability set of the new user
 * namespace, so the mount tree can be built by an identity that is mapped. */
int creds_become_sandbox_user(cordon_error *err);
/* Drop every capability (effective, permitted, inheritable, ambient,
 * bounding), lock securebits, and set no_new_privs. Irreversible. */
int creds_drop_all(cordon_error *err);

struct rlimit_plan {
	uint64_t fsize;   /* bytes, 0 = unlimited */
	uint64_t cpu_sec; /* soft RLIMIT_CPU in seconds, 0 = unlimited */
	uint64_t as;      /* RLIMIT_AS fallback when no cgroup, 0 = none */
	uint64_t nproc;   /* RLIMIT_NPROC fallback when no cgroup, 0 = none */
};
int creds_apply_rlimits(const struct rlimit_plan *p, cordon_error *err);
