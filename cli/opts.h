#pragma once
#include <stdbool.h>
#include "policy.h"

struct cli_run {
	cordon_policy *pol;
	const char *report_path;
	const char *ceiling_path;
	bool json;         /* explain --json */
	char **argv;       /* the command, NULL-terminated, may be empty */
	bool pty;          /* --pty (cordon_run_options.pty) */
	bool help;         /* --help or -h among the options: print the usage, nothing else */
};

/* The usage of one verb ("run", "explain", "ledger", "validate"), or of them
 * all (NULL or unknown). */
const char *cli_usage(const char *verb);
/* Is --help or -h one of args (up to a "--")? For the verbs without a command. */
bool cli_wants_help(int argc, char **argv);

/* Parse `run`/`explain` options (argv after the subcommand). On error fills
 * err with a one-line message naming the option; report_path and json are set
 * as far as they were parsed. */
int cli_parse_run(int argc, char **argv, struct cli_run *out, bool explain, cordon_error *err);
