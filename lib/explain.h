/* `cordon explain`: the effective boundary, without running anything. */
#pragma once
#include <stdbool.h>
#include "policy.h"
#include "model.h"
#include "json.h"
#include "probe.h"
#include "report.h"

/* Render as text or JSON (caller frees), and whether the verdict is
 * "would run". NULL on out-of-memory. */
char *explain_render_verdict(cordon_policy *p, char *const argv[], bool json, bool *would_run);
/* The rendering alone, from a given model (the boundary's paths in m, the
 * environment, limits and syscall plan in r): explain prints what the model
 * holds and keeps no list of its own. */
char *explain_render_model(const cordon_policy *p, char *const argv[], bool json, const struct host_features *f,
			   const struct run_plan *plan, const struct boundary_model *m, const struct model_run *r,
			   const strv *devs, const struct run_report *rep, bool plan_ok, const char *verdict);
/* One line of `paths` ("  MODE PATH (WHY)") and its JSON object ({path,
 * mode, source}): cordon explain's model entries, explain --bundle's. */
void explain_path_text(buf *b, const char *mode, const char *path, const char *why);
void explain_path_json(jwriter *w, const char *path, const char *mode, const char *source);
/* The host's capabilities as explain prints them (the "host:" line and its
 * Landlock lacks; the "host" object): cordon explain --bundle's too. */
void explain_host_text(buf *b, const struct host_features *f);
void explain_host_json(jwriter *w, const struct host_features *f);
/* An injected secret's fields in explain's JSON (its name, hosts, where it
 * goes, the placeholder's prefix; never a value), in the caller's object. */
void explain_injected_fields(jwriter *w, const struct cordon_secret *s);
