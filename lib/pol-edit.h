/* The policy's edits shared with its loaders and views (pol-edit.c);
 * internal to the policy layer. The public edits are in policy.h. */
#pragma once
#include "policy.h"

/* The secret named name, added if new (a valid variable name). */
struct cordon_secret *policy_secret_slot(cordon_policy *p, const char *name, cordon_error *err);
/* Is ep a well-formed "host:port" endpoint? */
int policy_validate_endpoint(const char *ep, cordon_error *err);
