/* cordon: command-line front end. Parses, calls libcordon, prints errors and
 * sets the exit status; nothing else lives here. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cleanup.h"
#include "error.h"
#include "hash.h"
#include "cli-changes.h"
#include "cli-explain.h"
#include "cli-mcp.h"
#include "cli-serve.h"
#include "ledger.h"
#include "opts.h"
#include "pol-parse.h"
#include "report-file.h"
#include "report-json.h"
#include "report.h"
#include "session.h"
#include "api.h"

static int emit_report(const struct run_report *r, const char *path)
{
	cordon_error err;
	_cleanup_free_ char *text = report_to_json(r);
	if (!text) {
		fprintf(stderr, "cordon: out of memory writing the report\n");
		return -1;
	}
	char note[2 * PATH_MAX + 128];
	if (path && report_write_target_noted(path, text, &r->writable, note, sizeof(note), &err) < 0) {
		fprintf(stderr, "cordon: %s\n", err.msg);
		return -1;
	}
	if (path && note[0])
		fprintf(stderr, "cordon: report: %s\n", note);
	return 0;
}

/* A run that never started (bad flags): a setup-error report of what was
 * parsed so far, the policy hash and the command, if any. */
static void emit_parse_error(const struct cli_run *o, const cordon_error *err)
{
	cordon_report *r = api_report_new();
	if (!r) {
		fprintf(stderr, "cordon: out of memory writing the report\n");
		return;
	}
	struct run_report *rep = api_report_raw(r);
	rep->status = ST_SETUP_ERROR;
	snprintf(rep->reason, sizeof(rep->reason), "%s", err->msg);
	char *canon = o->pol ? policy_canonical_json(o->pol) : NULL;
	sha256_hex(canon ? canon : "", canon ? strlen(canon) : 0, rep->policy_sha256);
	free(canon);
	for (size_t i = 0; o->argv && o->argv[i]; i++)
		strv_push(&rep->command, o->argv[i]);
	emit_report(rep, o->report_path);
	cordon_report_free(r);
}

static int cmd_run(int argc, char **argv)
{
	struct cli_run o;
	cordon_error err = {0};
	cordon_report *r = NULL;
	int rc;
	int parsed = cli_parse_run(argc, argv, &o, false, &err);
	if (parsed == 0 && o.help) {
		fputs(cli_usage("run"), stdout);
		policy_free(o.pol);
		return 0;
	}
	if (parsed < 0) {
		fprintf(stderr, "cordon: %s\n", err.msg);
		emit_parse_error(&o, &err);
		rc = 125;
		goto out;
	}
	/* The library reads no environment: the CLI hands it the variables
	 * README documents. */
	struct cordon_run_options ro;
	cordon_run_options_from_env(&ro, environ);
	ro.pty = o.pty;
	if (cordon_run(o.pol, o.argv, &ro, &r, &err) < 0) {
		/* no report: nothing to redact with, and the message is cordon's
		 * own (out of memory) */
		fprintf(stderr, "cordon: %s\n", err.msg);
		rc = 125;
		goto out;
	}
	const struct run_report *rep = api_report_raw(r);
	/* A squatted change-set directory turned overlay off: not silently. */
	if (rep->enf.workspace_mode_warn && rep->enf.workspace_mode_reason[0])
		fprintf(stderr, "cordon: warning: workspace mode %s\n", rep->enf.workspace_mode_reason);
	if (rep->status == ST_UNAUTHORIZED) {
		/* One line per request beyond the ceiling. */
		for (size_t i = 0; i < rep->unauthorized.n; i++) {
			char *l = report_redact(rep, rep->unauthorized.v[i]);
			fprintf(stderr, "cordon: unauthorized: %s\n", l ? l : "");
			free(l);
		}
	} else if (rep->status != ST_OK && rep->status != ST_EXIT_NONZERO && rep->status != ST_SIGNALED) {
		/* cordon's own messages never carry a secret either */
		char *reason = report_redact(rep, rep->reason);
		fprintf(stderr, "cordon: %s%s%s\n", status_name(rep->status), rep->reason[0] ? ": " : "",
			reason ? reason : "");
		free(reason);
	}
	if (rep->task == TASK_ERROR) {
		char *reason = report_redact(rep, rep->check_reason);
		fprintf(stderr, "cordon: check: %s: %s\n", status_name(rep->check_status), reason ? reason : "");
		free(reason);
	}
	rc = cordon_report_exit_status(r);
	if (emit_report(rep, o.report_path) < 0 && rc == 0)
		rc = 125;
out:
	cordon_report_free(r);
	policy_free(o.pol);
	return rc;
}

static int cmd_ledger(int argc, char **argv)
{
	const char *file = NULL;
	bool json = false;
	if (cli_wants_help(argc, argv)) {
		fputs(cli_usage("ledger"), stdout);
		return 0;
	}
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (!file && argv[i][0] != '-')
			file = argv[i];
		else {
			fprintf(stderr, "cordon ledger: unexpected argument \"%s\"\n", argv[i]);
			return 2;
		}
	}
	if (!file) {
		fprintf(stderr, "usage: cordon ledger FILE [--json]\n");
		return 2;
	}
	struct ledger l = {0};
	uint64_t limit = 0;
	cordon_error err;
	struct ledger_result r;
	if (ledger_load_file(file, &l, &limit, &err) < 0 || ledger_compute(&l, file, &r, &err) < 0) {
		fprintf(stderr, "cordon ledger: %s\n", err.msg);
		ledger_free(&l);
		return 2;
	}
	bool fits = r.peak_bytes <= limit;
	if (json) {
		printf("{\"peak_bytes\": %llu, \"limit_bytes\": %llu, \"fits\": %s, \"live_at_peak\": [",
		       (unsigned long long)r.peak_bytes, (unsigned long long)limit, fits ? "true" : "false");
		for (size_t i = 0; i < r.live_at_peak.n; i++) {
			jwriter w = {0};
			jw_str(&w, r.live_at_peak.v[i]);
			printf("%s%s", i ? ", " : "", w.out.p ? w.out.p : "\"\"");
			buf_free(&w.out);
		}
		printf("]}\n");
	} else {
		printf("peak live payload: %llu bytes\n", (unsigned long long)r.peak_bytes);
		printf("limit: %llu bytes\n", (unsigned long long)limit);
		printf("live at peak:");
		for (size_t i = 0; i < r.live_at_peak.n; i++)
			printf(" %s", r.live_at_peak.v[i]);
		printf("\n%s\n", fits ? "fits" : "does not fit");
	}
	ledger_result_free(&r);
	ledger_free(&l);
	return fits ? 0 : 1;
}

static int cmd_validate(int argc, char **argv)
{
	if (cli_wants_help(argc, argv)) {
		fputs(cli_usage("validate"), stdout);
		return 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: cordon validate POLICY\n");
		return 2;
	}
	cordon_policy *p = policy_new();
	cordon_error err;
	int rc = 0;
	if (!p || policy_load_file(p, argv[0], &err) < 0) {
		fprintf(stderr, "cordon: %s\n", p ? err.msg : "out of memory");
		rc = 2;
	} else {
		printf("%s: valid\n", argv[0]);
	}
	policy_free(p);
	return rc;
}

/* cordon serve is its own executable, cordon-serve beside this one: only
 * it links the HTTP server (libmicrohttpd and its TLS stack), so every other
 * verb starts without loading ten shared libraries it never uses. */
static int exec_serve(int argc, char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "cordon serve: /proc/self/exe: %s\n", strerror(errno));
		return 125;
	}
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/cordon-serve", self);
	char **av = calloc((size_t)argc + 2, sizeof(*av));
	if (!av) {
		fputs("cordon serve: out of memory\n", stderr);
		return 125;
	}
	av[0] = "cordon-serve";
	for (int i = 0; i < argc; i++)
		av[i + 1] = argv[i];
	execv(path, av);
	fprintf(stderr, "cordon serve: %s: %s (cordon serve is that program)\n", path, strerror(errno));
	free(av);
	return 125;
}

int main(int argc, char **argv)
{
	/* Closed standard descriptors would be reused by the next open, and a
	 * pipe of the run could end up as "stdout": park them on /dev/null.
	 * One poll asks after the three (POLLNVAL: not open), not a fcntl
	 * each (issue 34); the fcntls when poll cannot answer. */
	struct pollfd std[3] = {{.fd = 0}, {.fd = 1}, {.fd = 2}};
	bool polled = poll(std, 3, 0) >= 0;
	for (int fd = 0; fd < 3; fd++)
		if ((polled ? (std[fd].revents & POLLNVAL) : fcntl(fd, F_GETFD) < 0 && errno == EBADF) &&
		    open("/dev/null", O_RDWR) != fd)
			return 125;
	if (argc < 2) {
		fputs(cli_usage(NULL), stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "run") == 0)
		return cmd_run(argc - 2, argv + 2);
	if (strcmp(cmd, "explain") == 0)
		return cmd_explain(argc - 2, argv + 2);
	if (strcmp(cmd, "ledger") == 0)
		return cmd_ledger(argc - 2, argv + 2);
	if (strcmp(cmd, "serve") == 0)
		return exec_serve(argc - 2, argv + 2);
	if (strcmp(cmd, "mcp") == 0)
		return cmd_mcp(argc - 2, argv + 2);
	if (strcmp(cmd, "__session-worker") == 0) /* cordon serve's own (session.h) */
		return session_worker_main(3);
	if (strcmp(cmd, "validate") == 0)
		return cmd_validate(argc - 2, argv + 2);
	if (strcmp(cmd, "changes") == 0 || strcmp(cmd, "apply") == 0 || strcmp(cmd, "discard") == 0)
		return cmd_changes(cmd, argc - 2, argv + 2);
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		/* cordon help VERB: that verb's usage */
		fputs(cli_usage(strcmp(cmd, "help") == 0 && argc > 2 ? argv[2] : NULL), stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("cordon %s\n", cordon_version());
		return 0;
	}
	fprintf(stderr, "cordon: unknown command \"%s\"\n%s", cmd, cli_usage(NULL));
	return 2;
}
