#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "error.h"
#include "cli-explain.h"
#include "explain.h"
#include "oci-explain.h"
#include "opts.h"

/* cordon explain --bundle DIR [--json]: an OCI bundle's boundary under
 * cordon-oci (docs/oci.md). 0 would run, 1 create would refuse it, 2 bad
 * input (options, a bundle or config.json that cannot be read). */
static int explain_bundle(int argc, char **argv)
{
	const char *dir = NULL;
	bool json = false;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(cli_usage("explain"), stdout);
			return 0;
		} else if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (strcmp(argv[i], "--bundle") == 0 && !dir)
			dir = i + 1 < argc ? argv[++i] : "";
		else if (strncmp(argv[i], "--bundle=", 9) == 0 && !dir)
			dir = argv[i] + 9;
		else {
			fprintf(stderr, "cordon: explain --bundle DIR takes --json alone, not \"%s\"\n", argv[i]);
			return 2;
		}
	}
	if (!dir || !*dir) {
		fprintf(stderr, "cordon: explain: --bundle needs a directory\n");
		return 2;
	}
	cordon_error err = {0};
	bool would_run = false;
	char *text = oci_explain_bundle(dir, json, &would_run, &err);
	if (!text) {
		fprintf(stderr, "cordon: explain: %s\n", err.msg);
		return 2;
	}
	fputs(text, stdout);
	free(text);
	return would_run ? 0 : 1;
}

int cmd_explain(int argc, char **argv)
{
	for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--bundle") == 0 || strncmp(argv[i], "--bundle=", 9) == 0)
			return explain_bundle(argc, argv);
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
