/* `cordon explain`: the effective boundary, without running anything. */
#pragma once
#include <stdbool.h>
#include "policy.h"

/* Render as text or JSON (caller frees). NULL on out-of-memory. */
char *explain_render(cordon_policy *p, char *const argv[], bool json);
/* The same, and whether the verdict is "would run". */
char *explain_render_verdict(cordon_policy *p, char *const argv[], bool json, bool *would_run);
