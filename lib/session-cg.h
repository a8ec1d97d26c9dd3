/* Each exec of a session in a cgroup of its own, a child of the session's
 * (issue 27.9): its signal, cancel, timeout, output limit and end reach
 * every process it started, a double fork and setsid included. The
 * session's worker (the supervisor, outside the boundary) makes and ends
 * these cgroups; the agent (init, inside) only moves itself into an exec's
 * before it starts the exec's process and back after, through cgroup.procs
 * descriptors the worker opened (a write to cgroup.procs is checked with
 * the credentials and cgroup namespace of the one who opened it). One
 * session per worker process: the state is this file's own. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "cgroup.h"

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
/* The session ended (init gone): the exec cgroups removed, before the
 * session's own cgroup is. */
void sxcg_end(void);
