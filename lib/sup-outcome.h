/* The outcome of a run, decided from plain facts: what the supervisor saw
 * (messages from init, init's own end, cgroup counters, what it forced) in,
 * status, exit code, signal, reason and limits hit out. No syscalls, no
 * struct sup: every status has a row in tests/unit/test_outcome.c. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "report.h"

struct run_facts {
	/* The preflight refused the run (ST_UNAUTHORIZED or ST_INFEASIBLE):
	 * nothing was started. ST_COUNT = not refused. */
	enum run_status refused;
	/* Setting up the boundary failed with a message (MSG_ERROR, or the
	 * supervisor's own setup step): reason is that first message. */
	bool setup_failed;
	const char *reason; /* of setup_failed or refused; may be NULL */
	bool exec_ok;       /* MSG_EXEC_OK: every layer applied, the command started */
	bool cmd_forked;    /* killed by cordon after init forked the command, before MSG_EXEC_OK */
	bool got_exit;      /* MSG_EXIT: the command exited or died */
	int wstatus;        /* its wait status (with got_exit) */
	/* How init itself ended (waitid's si_code, si_status); 0 = not known. */
	int init_code, init_status;
	/* The supervisor stopped the run (timeout, output, cpu, denied,
	 * interrupted, setup-error); ST_COUNT = it did not. */
	enum run_status forced;
	int forced_signal; /* the signal cordon received (ST_INTERRUPTED) */
	/* From the run's cgroup (0 without one). */
	uint64_t oom_kills, pids_max_hits;
	bool cpu_limit_set;
	uint64_t cpu_limit_ns, cpu_used_ns;
	bool seccomp; /* the filter was part of the boundary (its only kill is SIGSYS) */
	/* Limits the supervisor saw hit while the run went on (wall, output, cpu). */
	bool limits_hit[LIM_COUNT];
};

struct run_outcome {
	enum run_status status;
	int exit_code;   /* the command's exit code, -1 if it did not exit */
	int signal;      /* the signal that ended the command, 0 if none */
	int cordon_exit; /* `cordon run`'s own exit status (status_exit_code) */
	char reason[1024]; /* empty: none */
	bool limits_hit[LIM_COUNT];
	bool foreign_abi_kill; /* killed by the filter (SIGSYS): a "syscall" denial */
};

/* Facts of a run that nothing has happened to yet (forced and refused are
 * ST_COUNT). */
void run_facts_init(struct run_facts *f);

/** Decide the outcome of a run from its facts.
 * @param f  what the supervisor saw
 * @param o  filled completely
 * Pure: the same facts give the same outcome. A status of ST_SIGNALED always
 * comes with a signal; a run whose command never started is never ST_OK,
 * ST_EXIT_NONZERO or ST_SIGNALED. */
void run_outcome_decide(const struct run_facts *f, struct run_outcome *o);
