/* Each exec of a session in a cgroup of its own, a child of the session's
 * (issue 27.9): its signal, cancel, timeout, output limit and end reach
 * every process it started, a double fork and setsid included. The
 * session's worker (the supervisor, outside the boundary) makes and ends
 * these cgroups; the agent (init, inside) only moves itself into an exec's
 * before it starts the exec's process and back after, through descriptors
 * the worker opened (cgroup.procs on v2, "tasks" on v1: a move checked with
 * the credentials and cgroup namespace of the one who opened it). One
 * session per worker process: the state is this file's own. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "cgroup.h"
#include "error.h"

/* The session's cgroup (sup-run.c, run_hooks.cgroup), before init is ready. */
void sxcg_session(const struct cgroup *cg);
/* Before exec slot's MSG_SX_EXEC: its cgroup made (what an earlier exec of
 * the slot left killed) and its cgroup.procs sent to the agent
 * (MSG_SX_CGROUP). Without a session cgroup, nothing. */
void sxcg_exec_begin(int sock, int slot);
/* sig to every process in the slot's cgroup (SIGKILL: cgroup.kill on v2;
 * on v1 pids.max 0, then every member killed until none is left). */
void sxcg_signal(int slot, int sig);
/* The exec ended: what it left running is killed; its CPU time (ns) from
 * its cgroup into *cpu_ns when known (true). */
bool sxcg_exec_end(int slot, uint64_t *cpu_ns);
/* The session's freezer (POST .../pause): on v2 the session's cgroup's
 * cgroup.freeze (its exec cgroups are below it); on v1 a cgroup of the
 * freezer hierarchy made for the session at sxcg_session, init moved in
 * (every exec is born in it). False where the host has neither. */
bool sxcg_can_freeze(void);
/* Freeze (or thaw) every process of the session, then wait at most
 * wait_ms for the kernel to say it is done (*reached). -1: no freezer, or
 * its file could not be written. */
int sxcg_freeze(bool freeze, unsigned wait_ms, bool *reached, cordon_error *err);
/* The kernel's word now: every process of the session is frozen. */
bool sxcg_frozen(void);
/* Thawed if frozen (a frozen process does not act on SIGKILL under v1):
 * before the session is ended. */
void sxcg_thaw(void);
/* The session ended (init gone): thawed, the exec cgroups removed (and
 * the v1 freezer cgroup), before the session's own cgroup is. */
void sxcg_end(void);
