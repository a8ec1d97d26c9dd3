/* The boundary model's building blocks, shared by its files (private to
 * them): the entries' storage (model-entry.c) and the protected names'
 * part of the build (model-protect.c), both used by model.c. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "error.h"
#include "model.h"
#include "plan.h"

/* Appends a copy of e to m's entries. */
int model_push(struct boundary_model *m, const struct model_entry *e, cordon_error *err);
/* A copy of s that m owns (freed with it); NULL: out of memory. */
const char *model_own(struct boundary_model *m, const char *s);
/* The host's own probe (model_probe_fn): the kind of path, without
 * following links but with follow; a link's target in target. */
int model_probe_host(const char *path, bool follow, char *target, size_t tsz);

/* The protected paths (protect.h) of every writable path of the plan: pins
 * before what they hold, sorted by path. */
int model_add_protected(struct boundary_model *m, const struct run_plan *plan, const cordon_policy *p,
			model_probe_fn probe, cordon_error *err);
/* Protected names and pins found below a mount's host path follow it where
 * the run sees that mount elsewhere (HOST:PATH, an image's workspace). */
int model_relocate_at(struct boundary_model *m, const struct run_plan *plan, cordon_error *err);
