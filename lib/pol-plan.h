/* The pre-flight (lib/pol-plan.c): the plan of a run (plan.h) built and
 * checked before any process exists, for `cordon run` and `cordon explain`
 * alike. */
#pragma once
#include "plan.h"
#include "report.h"

/* The plan: resolves the workspace and the effective, canonical mount list,
 * and builds the model. On failure fills err with the one-line reason. */
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
int run_preflight(cordon_policy *p, struct run_plan *plan, struct run_report *rep,
		  cordon_error *err);
