/* Per-run cgroups: one backend table for v1 and v2, chosen at run time. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cordon.h"
#include "cgroup-util.h"

struct cg_usage {
	uint64_t cpu_user_ns, cpu_sys_ns;
	uint64_t peak_memory;  /* bytes, 0 if unknown */
	uint64_t oom_kills;
	uint64_t pids_max_hits;
	bool have_cpu, have_memory;
};

struct cg_limits {
	uint64_t memory; /* bytes, 0 = none */
	uint64_t pids;   /* 0 = none */
};

struct cgroup;
struct cgroup_ops {
	const char *name; /* "v1" or "v2" */
	int (*create)(struct cgroup *cg, const struct cg_limits *lim, cordon_error *err);
	int (*attach)(struct cgroup *cg, pid_t pid, cordon_error *err);
	int (*usage)(struct cgroup *cg, struct cg_usage *u);
	void (*destroy)(struct cgroup *cg);
};

#define CG_MAX_CTRL 4
struct cgroup {
	const struct cgroup_ops *ops;
	char name[64];                 /* cordon-PID-N */
	char dirs[CG_MAX_CTRL][4096];  /* v1: memory, pids, cpuacct; v2: dirs[0] */
	int ndirs;
	int dirfd;                     /* v2: for CLONE_INTO_CGROUP, else -1 */
	bool created;
	bool has_memory, has_pids;     /* controllers available */
	const struct cg_host *host;    /* during create: the host as cgroup_prepare read it */
	const char *missing;           /* create failed: a controller the limits need that our
					* cgroup does not offer ("memory", "pids"), else NULL */
};

/* Pick the backend for this host: "v2" when a cgroup2 hierarchy offers the
 * memory and pids controllers to our cgroup, else "v1" when the memory, pids
 * and cpuacct hierarchies are mounted, else NULL. CORDON_CGROUP=v1|v2|none
 * forces a choice (tests use it to run the v2 backend on the unified
 * hierarchy of a hybrid host). */
const struct cgroup_ops *cgroup_detect(const char *force, cordon_error *err);
const struct cgroup_ops *cgroup_detect_in(const char *force, const struct cg_host *h, cordon_error *err);
/* The layer's prepare (supervisor, before clone): which backend the run
 * gets, and what happens without one. need: the model's limits need a
 * cgroup (memory, pids, CPU); weak_ok: the policy accepts per-process
 * rlimits instead (allow_weaker "cgroup"). The cgroup is made by
 * cgroup_start before clone, so that init is cloned with the rlimit
 * fallback where it cannot be made: v2 the run is born in it
 * (CLONE_INTO_CGROUP), v1 init joins it after clone (sup-steps.c). Init's
 * part is the join (v1) and the cgroup namespace. */
struct cg_prep {
	const struct cgroup_ops *ops; /* NULL: no cgroup */
	bool need, weak_ok;
	bool rlimits_only; /* no backend: init sets the rlimit fallback
			    * (model_run.rl_nocg), decided before clone */
	struct cg_host host; /* read once here, for cgroup_start and cgroup_reap_stale
			      * (a run read /proc/self/mountinfo three times) */
	bool no_hierarchy;   /* refused: no usable hierarchy where the limits need one */
};
int cgroup_prepare(struct cg_prep *cp, const char *force, bool need, bool weak_ok, cordon_error *err);
void cgroup_prep_free(struct cg_prep *cp);
/* The fallback decision alone (pure): the run goes on without a cgroup (0),
 * or it is refused (-1, err says why). failure: why the cgroup could not
 * be made, or NULL where the host has no usable hierarchy. */
int cgroup_fallback(bool need, bool weak_ok, const char *failure, cordon_error *err);
/* Make the run's cgroup with the model's limits, and attach pid when > 0
 * (v1). *have: made; when it could not be, cgroup_fallback decides. */
int cgroup_start(const struct cg_prep *cp, struct cgroup *cg, const struct cg_limits *lim, pid_t pid, bool *have,
		 cordon_error *err);
/* Create the run's cgroup (named after the supervisor pid) with limits;
 * host: as read before (NULL: read now). */
int cgroup_create(struct cgroup *cg, const struct cgroup_ops *ops, const struct cg_limits *lim,
		  const struct cg_host *host, cordon_error *err);
/* Remove cgroups left by supervisors that died (SIGKILL) before cleaning
 * up (host: as for cgroup_create). */
void cgroup_reap_stale(const struct cgroup_ops *ops, const struct cg_host *host);
