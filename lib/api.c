/* The public surface (include/cordon.h): thin wrappers over the library's
 * own types. Nothing here decides anything; every function is exported,
 * and nothing else in libcordon is (meson.build, lib/libcordon.map). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "api.h"
#include "api-options.h"
#include "error.h"
#include "pol-opts.h"
#include "pol-parse.h"
#include "policy.h"
#include "report-json.h"
#include "report.h"
#include "sup-run.h"

struct cordon_report {
	struct run_report rep;
};

int cordon_policy_load(const char *path, cordon_policy **out, cordon_error *err)
{
	*out = NULL;
	cordon_policy *p = policy_new();
	if (!p)
		return cordon_oom(err);
	if (policy_load_file(p, path, err) < 0) {
		policy_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

int cordon_policy_parse(const char *json, size_t len, const char *name, cordon_policy **out,
			cordon_error *err)
{
	*out = NULL;
	cordon_policy *p = policy_new();
	if (!p)
		return cordon_oom(err);
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd))) {
		policy_free(p);
		return cordon_err_errno(err, "the current directory");
	}
	if (policy_load_json(p, json, len, name ? name : "policy", cwd, err) < 0) {
		policy_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

void cordon_policy_free(cordon_policy *p)
{
	policy_free(p);
}

cordon_report *api_report_new(void)
{
	cordon_report *r = calloc(1, sizeof(*r));
	if (r)
		report_init(&r->rep);
	return r;
}

struct run_report *api_report_raw(cordon_report *r)
{
	return &r->rep;
}

int cordon_run(cordon_policy *p, char *const argv[], const struct cordon_run_options *opts,
	       cordon_report **out, cordon_error *err)
{
	*out = NULL;
	struct cordon_run_options o; /* opts read by its size (api-options.c) */
	if (api_run_options(opts, &o, err) < 0)
		return -1;
	cordon_report *r = api_report_new();
	if (!r)
		return cordon_oom(err);
	const struct cordon_run_options *was = p->opts;
	p->opts = &o;
	int rc = run_command(p, argv, &r->rep, err);
	p->opts = was;
	if (rc < 0) {
		cordon_report_free(r);
		return -1;
	}
	*out = r;
	return 0;
}

const char *cordon_report_status(const cordon_report *r)
{
	return status_name(r->rep.status);
}

int cordon_report_exit_code(const cordon_report *r)
{
	return r->rep.exit_code;
}

int cordon_report_signal(const cordon_report *r)
{
	return r->rep.signal;
}

int cordon_report_exit_status(const cordon_report *r)
{
	return status_exit_code(r->rep.status, r->rep.exit_code, r->rep.signal);
}

char *cordon_report_reason(const cordon_report *r)
{
	return report_redact(&r->rep, r->rep.reason);
}

char *cordon_report_json(const cordon_report *r)
{
	return report_to_json(&r->rep);
}

void cordon_report_free(cordon_report *r)
{
	if (!r)
		return;
	report_free(&r->rep);
	free(r);
}
