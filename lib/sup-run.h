/* run_command (sup-run.c): one run of a command inside the boundary;
 * cordon_run (lib/api.c) is its public face. The supervisor's sequence is
 * numbered in sup-run.c's own comment. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "error.h"
#include "policy.h"
#include "plan.h"
#include "report.h"

/* Run argv under policy p. Always fills rep (every outcome, including
 * setup-error, is a status); returns 0, or -1 only if even the report could
 * not be built (out of memory), with err set. */
int run_command(cordon_policy *p, char *const argv[], struct run_report *rep,
	       cordon_error *err);

struct msg;
struct cgroup;
/* epoll data of a session's own fds in the supervisor's loop. */
#define RUN_HOOK_TAG (1ULL << 62)
/* A session (session.h): the boundary stays up and init, with every layer
 * applied, starts commands on request. These calls let the session's code
 * share the supervisor's loop; sup-run.c stays the owner of the boundary. */
struct run_hooks {
	void *ctx;
	/* init is ready: sock is the sync socket; register fds in epfd with
	 * RUN_HOOK_TAG in the event data. wall_timer is the run's wall-time
	 * timerfd (a warm session re-arms it when it is handed out). */
	void (*ready)(void *ctx, int sock, int epfd, int wall_timer, struct run_report *rep);
	/* A frame run.c does not know (MSG_SX_*): returns true if it kept fd. */
	bool (*on_msg)(void *ctx, const struct msg *m, int fd);
	void (*on_event)(void *ctx, uint64_t data, uint32_t events);
	/* init is gone (the whole run with it): before the report is finished. */
	void (*on_end)(void *ctx);
	/* The report is finished (usage, outputs, denials: every process of
	 * the run is gone and its output read), before the boundary's teardown
	 * (its mount namespace, its cgroup); may be NULL. Not called when the
	 * boundary never started. */
	void (*on_report)(void *ctx);
	/* The run's cgroup, before ready (only when it has one); may be NULL. */
	void (*cgroup)(void *ctx, const struct cgroup *cg);
	/* The supervisor is about to kill init (a limit, a signal, the end):
	 * a paused session thaws its processes first (a process frozen by
	 * the v1 freezer does not die until thawed). May be NULL. */
	void (*on_kill)(void *ctx);
};
/* A session's boundary: like cordon_run, with init as the agent
 * (session-agent.c) instead of a command; returns when init is gone. */
int cordon_session_run(cordon_policy *p, struct run_report *rep, const struct run_hooks *h,
		       cordon_error *err);

/* The cgroup step of a run (struct cg_refusal), tried and undone. */
int run_cgroup_preflight(const cordon_policy *p, struct cg_refusal *why, cordon_error *err);
