/* The caller's run options (include/cordon.h) as the library reads them
 * (lib/pol-opts.c). */
#pragma once
#include "cordon.h"

/* The defaults (cordon_run_options_init). */
void policy_opts_init(struct cordon_run_options *o);
/* p's run options (cordon_policy.opts), or the defaults. */
const struct cordon_run_options *policy_opts(const cordon_policy *p);
/* NAME's value in a NULL-terminated NAME=VALUE list (NULL: none). */
const char *opts_getenv(char *const *envp, const char *name);
