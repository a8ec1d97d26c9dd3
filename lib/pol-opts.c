/* The caller's run options as the policy layer reads them (policy_opts):
 * what the library would otherwise take from the environment. The public
 * face (cordon_run_options_init, _from_env) is api.c's. */
#include <string.h>
#include <unistd.h>
#include "pol-opts.h"
#include "policy.h"

static const struct cordon_run_options defaults = {.size = sizeof(struct cordon_run_options), .stdout_fd = STDOUT_FILENO, .stderr_fd = STDERR_FILENO};

void policy_opts_init(struct cordon_run_options *o)
{
	*o = defaults;
}

const struct cordon_run_options *policy_opts(const cordon_policy *p)
{
	return p && p->opts ? p->opts : &defaults;
}

const char *opts_getenv(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (char *const *e = envp; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}
