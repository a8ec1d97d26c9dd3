#pragma once
#include <stdbool.h>
#include "policy.h"

struct cli_run {
	cordon_policy *pol;
	const char *report_path;
	const char *ceiling_path;
	bool json;         /* explain --json */
	char **argv;       /* the command, NULL-terminated, may be empty */
};

/* Parse `run`/`explain` options (argv after the subcommand). On error fills
 * err with a one-line message naming the option; report_path and json are set
 * as far as they were parsed. */
int cli_parse_run(int argc, char **argv, struct cli_run *out, bool explain, cordon_error *err);
