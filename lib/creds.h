/* Process credentials inside the boundary (child side). */
#pragma once
#include <stdint.h>
#include "cordon.h"

#include <stdbool.h>
#include <sys/types.h>

/* The run's identities (ns.h: U1, U2), decided by the supervisor before
 * clone, the maps' text included (creds_prepare), and applied after it:
 * U1's maps by the supervisor (creds_apply_maps), init's identity and U2's
 * maps by init (creds_apply_init, creds_enter_nested: no allocation, no
 * formatting). */
struct creds_plan {
	char u1_uid_map[48], u1_gid_map[48]; /* invoking uid/gid -> the run's host uid/gid */
	bool u1_deny_setgroups;              /* unprivileged: required before a gid map */
	uid_t ns_uid;                        /* init's identity in U1: the invoking uid/gid */
	gid_t ns_gid;
	char u2_uid_map[48], u2_gid_map[48]; /* SANDBOX_UID/GID -> ns_uid/gid */
};
/* host_uid/gid: cordon's (the invoking user's); run_uid/gid: the run's host
 * identity (its own when cordon runs as root, else the same). */
void creds_prepare(uid_t host_uid, gid_t host_gid, uid_t run_uid, gid_t run_gid, bool privileged,
		   struct creds_plan *out);
/* Supervisor, after clone: U1's maps of pid. */
int creds_apply_maps(pid_t pid, const struct creds_plan *cp, cordon_error *err);
/* init, after sync 1: creds_become_ns_user with the plan's identity. */
int creds_apply_init(const struct creds_plan *cp, cordon_error *err);
/* init, once the view is built: into U2 (ns_enter_nested) with its maps. */
int creds_enter_nested(const struct creds_plan *cp, cordon_error *err);

/* Become SANDBOX_UID/GID and drop every capability (effective, permitted,
 * inheritable, ambient, bounding), lock securebits, set no_new_privs.
 * Irreversible. */
int creds_drop_all(cordon_error *err);
/* The same to uid/gid of the current user namespace: the degraded boundary
 * (no user namespace, docs/hosts.md) drops to the run's host identity;
 * supplementary groups are cleared where allowed (as root). */
int creds_drop_to(uid_t uid, gid_t gid, cordon_error *err);

struct rlimit_plan {
	uint64_t fsize;   /* bytes, 0 = unlimited */
	uint64_t cpu_sec; /* soft RLIMIT_CPU in seconds, 0 = unlimited */
	uint64_t as;      /* RLIMIT_AS fallback when no cgroup, 0 = none */
	uint64_t nproc;   /* RLIMIT_NPROC fallback when no cgroup, 0 = none */
};
int creds_apply_rlimits(const struct rlimit_plan *p, cordon_error *err);
