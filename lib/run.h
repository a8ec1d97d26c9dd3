/* run_command: one run of a command inside the boundary; cordon_run
 * (lib/api.c) is its public face. */
#pragma once
#include "policy.h"
#include "report.h"
#include "model.h"

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
};
/* A session's boundary: like cordon_run, with init as the agent
 * (session-agent.c) instead of a command; returns when init is gone. */
int cordon_session_run(cordon_policy *p, struct run_report *rep, const struct run_hooks *h,
		       cordon_error *err);

/* The checks made before anything starts (the same ones `cordon explain`
 * shows): resolves the workspace and the effective, canonical mount list.
 * On failure fills err with the one-line reason. */
struct run_plan {
	char workspace[4096];
	/* The current directory cordon started in, as opened then; the
	 * workspace's name was checked to lead to it (when it is the cwd). */
	dev_t ws_dev;
	ino_t ws_ino;
	char cwd_in[4096];
	struct cordon_mount *mounts;
	size_t nmounts;
	strv devices;      /* host character devices in /dev, canonical */
	/* A check's own files (policy check.files), resolved on the host: bound
	 * read-only at CHECK_FILES_DIR in the check's view; "" = none. */
	char check_files[4096];
	/* Where the check's view shows them: CHECK_FILES_DIR "-" and 128 random
	 * bits in hex, new for every check (a task cannot name it in advance). */
	char check_dir[64];
	/* Everything the run sees, built last from the above (model.h). */
	struct boundary_model model;
};
int run_plan_build(const cordon_policy *p, struct run_plan *plan, cordon_error *err);
/* The run's workspace (run_plan.workspace): the declared working directory
 * when a declared writable path contains it, else the current directory. */
int run_workspace(const cordon_policy *p, char *out, size_t outsz, cordon_error *err);
void run_plan_free(struct run_plan *plan);
/* Resolve the policy's inputs like the binds: canonical, and a symlink in
 * the workspace or a writable bind (a run could have planted it) refused
 * with a message naming the input. Fills out (caller frees). */
int run_plan_inputs(const struct run_plan *plan, const strv *inputs, strv *out, cordon_error *err);
/* Everything decided before any process exists: the plan, the operator's
 * ceiling (unauthorized; its limits are applied to p), the ledger
 * (infeasible), features this build cannot enforce. The same function serves
 * `cordon run` and `cordon explain`, so both reach the same verdict. On
 * failure rep->status is ST_UNAUTHORIZED, ST_INFEASIBLE or ST_SETUP_ERROR and
 * err says why; the ceiling's findings are in rep either way. */
/* The cgroup step of a run, tried and undone: a policy whose limits need a
 * cgroup this user cannot create fails here as the run would. */
struct cg_refusal {
	bool no_hierarchy;   /* cgroup_prepare: no usable hierarchy */
	const char *missing; /* cgroup_start: a controller our cgroup does not offer */
};
int run_cgroup_preflight(const cordon_policy *p, struct cg_refusal *why, cordon_error *err);
int run_preflight(cordon_policy *p, struct run_plan *plan, struct run_report *rep,
		  cordon_error *err);
