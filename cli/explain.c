#include <stdio.h>
#include <stdlib.h>
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
		char *text = explain_render(o.pol, o.argv, o.json);
		if (!text) {
			fprintf(stderr, "cordon: out of memory\n");
			rc = 2;
		} else {
			fputs(text, stdout);
			free(text);
		}
	}
	policy_free(o.pol);
	return rc;
}
