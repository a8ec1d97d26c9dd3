/* Process credentials inside the boundary (child side). */
#pragma once
#include <stdint.h>
#include "cordon.h"

#include <sys/types.h>
/* Become uid/gid of the current user namespace (the mapped identity) while
 * keeping its full capability set, so the new root's files belong to a
 * mapped user. */
int creds_become_ns_user(uid_t uid, gid_t gid, cordon_error *err);
/* Become SANDBOX_UID/GID and drop every capability (effective, permitted,
 * inheritable, ambient, bounding), lock securebits, set no_new_privs.
 * Irreversible. */
int creds_drop_all(cordon_error *err);

struct rlimit_plan {
	uint64_t fsize;   /* bytes, 0 = unlimited */
	uint64_t cpu_sec; /* soft RLIMIT_CPU in seconds, 0 = unlimited */
	uint64_t as;      /* RLIMIT_AS fallback when no cgroup, 0 = none */
	uint64_t nproc;   /* RLIMIT_NPROC fallback when no cgroup, 0 = none */
};
int creds_apply_rlimits(const struct rlimit_plan *p, cordon_error *err);
