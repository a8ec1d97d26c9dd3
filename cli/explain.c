#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "error.h"
#include "cli-explain.h"
#include "explain.h"
#include "opts.h"

int cmd_explain(int argc, char **argv)
{
	struct cli_run o;
	cordon_error err = {0};
	int rc = 0;
	int parsed = cli_parse_run(argc, argv, &o, true, &err);
	if (parsed == 0 && o.help) {
		fputs(cli_usage("explain"), stdout);
	} else if (parsed < 0) {
		fprintf(stderr, "cordon: %s\n", err.msg);
		rc = 2;
	} else {
		bool would_run = false;
		/* the same options a run would get (cordon_run_options_from_env) */
		struct cordon_run_options ro;
		cordon_run_options_from_env(&ro, environ);
		o.pol->opts = &ro;
		char *text = explain_render_verdict(o.pol, o.argv, o.json, &would_run);
		if (!text) {
			fprintf(stderr, "cordon: out of memory\n");
			rc = 2;
		} else {
			fputs(text, stdout);
			free(text);
			/* 0 would run, 1 would not (the verdict says why), 2 bad input */
			rc = would_run ? 0 : 1;
		}
	}
	policy_free(o.pol);
	return rc;
}
