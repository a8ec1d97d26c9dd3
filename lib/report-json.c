/* The run report's JSON (report_to_json, report.h): every section of
 * cordon.report/1 written from the report's state, redacted on the way out;
 * the limits, grants and Landlock writers the explain output shares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report-json.h"
#include "cleanup.h"
#include "compat.h"
#include "landlock.h"
#include "error.h"
#include "json.h"
#include "redact-stream.h"
#include "report.h"

/* s, or NULL (written null) when it is empty. */
static const char *nonempty(const char *s)
{
	return s[0] ? s : NULL;
}

static void write_fixes(jwriter *w, const char *key, const struct fix_list *l)
{
	jw_key(w, key);
	jw_arr_begin(w);
	for (size_t i = 0; i < l->n; i++) {
		jw_obj_begin(w);
		jw_key_str(w, "path", l->f[i].path);
		jw_key_str(w, "what", l->f[i].what);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

static void write_files(jwriter *w, const struct file_list *l, bool with_change)
{
	jw_arr_begin(w);
	for (size_t i = 0; i < l->n; i++) {
		const struct file_record *f = &l->r[i];
		jw_obj_begin(w);
		jw_key_str(w, "path", f->path);
		if (with_change) {
			jw_key_str(w, "change", change_name(f->change));
		}
		if (f->change != CHANGE_DELETED) {
			jw_key(w, "sha256");
			if (f->regular && f->sha256[0])
				jw_str(w, f->sha256);
			else
				jw_null(w);
			jw_key_uint(w, "bytes", f->bytes);
			if (f->regular && f->skip != SKIP_NONE) {
				jw_key_str(w, "hash_skipped", hash_skip_name(f->skip));
			}
		}
		if (!f->regular) {
			jw_key_str(w, "type", "other");
		}
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

void report_write_limits(jwriter *w, const struct cordon_limit lim[LIM_COUNT])
{
	jw_obj_begin(w);
	for (int i = 0; i < LIM_COUNT; i++) {
		if (!lim[i].set)
			continue;
		jw_key(w, limit_name(i));
		jw_obj_begin(w);
		jw_key(w, "value");
		if (i == LIM_WALL || i == LIM_CPU)
			jw_double(w, (double)lim[i].value / 1e9);
		else
			jw_uint(w, lim[i].value);
		jw_key_str(w, "source", source_name(lim[i].src));
		jw_obj_end(w);
	}
	jw_obj_end(w);
}

void report_write_landlock_missing(jwriter *w, int abi)
{
	jw_arr_begin(w);
	for (const char *const *m = landlock_missing(abi); *m; m++)
		jw_str(w, *m);
	jw_arr_end(w);
}

void report_write_grants(jwriter *w, const struct grant *g, size_t n)
{
	jw_arr_begin(w);
	for (size_t i = 0; i < n; i++) {
		jw_obj_begin(w);
		jw_key_str(w, "kind", g[i].kind);
		jw_key_str(w, "target", g[i].target);
		jw_key_bool(w, "allowed", g[i].allowed);
		jw_key_str(w, "rule", g[i].rule);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

static const char *task_name(enum task_verdict t)
{
	static const char *n[] = {"not-run", "pass", "fail", "error"};
	return n[t];
}


static char *redact_filter(void *ctx, const char *s)
{
	return ctx ? redact_string(ctx, s) : strdup(s);
}

char *report_redact(const struct run_report *r, const char *msg)
{
	return redact_filter(r->redact, msg);
}

static void write_status(jwriter *w, const struct run_report *r)
{
	jw_key_str(w, "schema", "cordon.report/1");
	jw_key_str(w, "status", status_name(r->status));
	if (r->reason[0]) {
		jw_key_str(w, "reason", r->reason);
	}
	jw_key(w, "exit_code");
	if (r->exit_code >= 0)
		jw_int(w, r->exit_code);
	else
		jw_null(w);
	jw_key(w, "signal");
	if (r->signal) {
		char name[32];
		const char *abbrev = sigabbrev_np(r->signal);
		snprintf(name, sizeof(name), "SIG%s", abbrev ? abbrev : "UNKNOWN");
		jw_str(w, name);
	} else {
		jw_null(w);
	}
}

static void write_verdicts(jwriter *w, const struct run_report *r)
{
	bool any_limit = false;
	for (int i = 0; i < LIM_COUNT; i++)
		any_limit |= r->limits_hit[i];
	jw_key(w, "verdicts");
	jw_obj_begin(w);
	jw_key(w, "containment");
	/* A secret written into a file left the boundary as surely as a denied
	 * syscall tried to; a privilege bit swept or a root put back was an
	 * attempt on the host. A sweep that could not look at everything
	 * cannot say that nothing was left (report "privilege_sweep"), and an
	 * incomplete secret scan may have missed a secret. */
	bool scan_cut = r->exposures.scanned && !r->exposures.complete;
	/* An entry at a protected path in the change set was a write to a
	 * control file the host runs, held back or not. */
	/* A run in the degraded boundary (enforcement.degraded) that saw no
	 * violation is "weaker": nothing was seen, by fewer layers. */
	jw_str(w, r->ndenials || r->exposures.n || scan_cut || r->privilege_cleared.n || r->root_restored.n ||
			  r->privilege_sweep.incomplete || r->changes.protected.n
		      ? "violations"
		  : r->enf.ndegraded ? "weaker"
				     : "clean");
	jw_key_str(w, "resources", r->status == ST_INFEASIBLE ? "infeasible" : any_limit ? "exceeded" : "within");
	jw_key_str(w, "task", task_name(r->task));
	jw_obj_end(w);
	if (r->check_ran) {
		jw_key(w, "check");
		jw_obj_begin(w);
		jw_key_str(w, "status", status_name(r->check_status));
		jw_key(w, "exit_code");
		if (r->check_exit_code >= 0)
			jw_int(w, r->check_exit_code);
		else
			jw_null(w);
		jw_key_double(w, "wall_seconds", r->check_wall_seconds);
		if (r->check_workspace) {
			jw_key_str(w, "workspace", r->check_workspace);
		}
		if (r->check_workspace_reason[0]) {
			jw_key_str(w, "workspace_reason", r->check_workspace_reason);
		}
		if (r->check_reason[0]) {
			jw_key_str(w, "reason", r->check_reason);
		}
		jw_obj_end(w);
	}
	jw_key(w, "limits_hit");
	jw_arr_begin(w);
	for (int i = 0; i < LIM_COUNT; i++)
		if (r->limits_hit[i])
			jw_str(w, limit_name(i));
	jw_arr_end(w);
	jw_key(w, "limits");
	report_write_limits(w, r->limits);
}

static void write_usage(jwriter *w, const struct run_report *r)
{
	jw_key(w, "usage");
	jw_obj_begin(w);
	jw_key_double(w, "wall_seconds", r->wall_seconds);
	jw_key_double(w, "setup_seconds", r->setup_seconds);
	jw_key_double(w, "cpu_user_seconds", (double)r->cpu_user_ns / 1e9);
	jw_key_double(w, "cpu_system_seconds", (double)r->cpu_sys_ns / 1e9);
	jw_key(w, "peak_memory_bytes");
	if (r->have_memory)
		jw_uint(w, r->peak_memory);
	else
		jw_null(w);
	if (r->have_ledger) {
		jw_key_uint(w, "ledger_peak_bytes", r->ledger_peak);
	}
	if (r->notify.present) {
		jw_key(w, "notifications");
		jw_obj_begin(w);
		jw_key_uint(w, "answered", r->notify.answered);
		jw_key_uint(w, "throttled", r->notify.throttled);
		jw_key_double(w, "held_seconds", r->notify.held_seconds);
		jw_obj_end(w);
	}
	jw_obj_end(w);
}

static void write_denials(jwriter *w, const struct run_report *r)
{
	jw_key(w, "denials");
	jw_arr_begin(w);
	for (size_t i = 0; i < r->ndenials; i++) {
		jw_obj_begin(w);
		jw_key_str(w, "kind", r->denials[i].kind);
		jw_key_str(w, "target", r->denials[i].target);
		jw_key_uint(w, "count", r->denials[i].count);
		jw_key_str(w, "phase", r->denials[i].check ? "check" : "run");
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

void report_write_network(jwriter *w, const struct run_report *r)
{
	if (!r->net.enabled)
		return;
	jw_key(w, "network");
	jw_obj_begin(w);
	jw_key_str(w, "proxy", "127.0.0.1:3128");
	jw_key_uint(w, "connections", r->net.conns);
	jw_key_uint(w, "denied", r->net.denied);
	jw_key_uint(w, "bytes_up", r->net.up);
	jw_key_uint(w, "bytes_down", r->net.down);
	jw_key_uint(w, "max_connections", r->net.max_conns);
	jw_key_uint(w, "over_limit", r->net.over_limit);
	if (r->net.dns.enabled) {
		jw_key(w, "dns");
		jw_obj_begin(w);
		jw_key_str(w, "server", "127.0.0.53:53");
		jw_key_uint(w, "queries", r->net.dns.queries);
		jw_key_uint(w, "answered", r->net.dns.answered);
		jw_key_uint(w, "refused", r->net.dns.refused);
		jw_key_uint(w, "names", r->net.dns.names);
		jw_key_uint(w, "names_max", r->net.dns.names_max);
		jw_key_uint(w, "over_limit", r->net.dns.over_limit);
		jw_obj_end(w);
		jw_key(w, "transparent");
		jw_obj_begin(w);
		jw_key_uint(w, "connections", r->net.transparent.handed_in);
		jw_key_uint(w, "proxied", r->net.transparent.proxied);
		jw_key_uint(w, "refused", r->net.transparent.refused);
		jw_key_uint(w, "failed", r->net.transparent.failed);
		jw_key_uint(w, "pending_max", r->net.transparent.pending_max);
		jw_key_uint(w, "over_limit", r->net.transparent.over_limit);
		jw_key_uint(w, "uncounted", r->net.transparent.uncounted);
		jw_obj_end(w);
	}
	if (r->net.inbound.nports) {
		jw_key(w, "inbound");
		jw_obj_begin(w);
		jw_key(w, "ports");
		jw_arr_begin(w);
		for (size_t i = 0; i < r->net.inbound.nports; i++)
			jw_uint(w, r->net.inbound.ports[i]);
		jw_arr_end(w);
		jw_key_uint(w, "connections", r->net.inbound.connections);
		jw_key_uint(w, "max_connections", r->net.inbound.max_conns);
		jw_key_uint(w, "dropped", r->net.inbound.dropped);
		jw_key_uint(w, "failed", r->net.inbound.failed);
		jw_key_uint(w, "full", r->net.inbound.full);
		jw_obj_end(w);
	}
	jw_key(w, "endpoints");
	jw_arr_begin(w);
	for (size_t i = 0; i < r->net.nep; i++) {
		jw_obj_begin(w);
		jw_key_str(w, "target", r->net.ep[i].target);
		jw_key_uint(w, "connections", r->net.ep[i].conns);
		jw_key_uint(w, "bytes_up", r->net.ep[i].up);
		jw_key_uint(w, "bytes_down", r->net.ep[i].down);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_key(w, "requests");
	jw_arr_begin(w);
	for (size_t i = 0; i < r->net.nreq; i++) {
		const struct net_request *q = &r->net.req[i];
		jw_obj_begin(w);
		jw_key_str(w, "method", q->method);
		jw_key_str(w, "host", q->target);
		jw_key_str(w, "path", q->path);
		jw_key_uint(w, "status", (uint64_t)q->status);
		jw_key_uint(w, "bytes_up", q->up);
		jw_key_uint(w, "bytes_down", q->down);
		jw_key(w, "injected");
		jw_arr_begin(w);
		for (size_t k = 0; k < 32 && k < r->secrets.n; k++)
			if (q->injected >> k & 1)
				jw_str(w, r->secrets.v[k]);
		jw_arr_end(w);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_key_uint(w, "requests_omitted", r->net.req_omitted);
	jw_key(w, "injected");
	jw_arr_begin(w);
	for (size_t i = 0; i < r->net.ninj; i++) {
		const struct net_injection *q = &r->net.inj[i];
		jw_obj_begin(w);
		jw_key_str(w, "secret", q->secret < r->secrets.n ? r->secrets.v[q->secret] : "?");
		jw_key_str(w, "host", q->target);
		jw_key_uint(w, "count", q->count);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
}

/* What a list left out: why it was cut, how many files were not listed,
 * and what hashing cost against its budget. */
static void write_list_cut(jwriter *w, const char *key, const struct file_list *l)
{
	if (!l->truncated && !l->hash.skipped)
		return;
	jw_key(w, key);
	jw_obj_begin(w);
	jw_key(w, "reason");
	if (l->truncated)
		jw_str(w, cut_name(l->cut));
	else
		jw_null(w);
	jw_key_uint(w, "files_omitted", l->omitted);
	jw_key_uint(w, "files_unhashed", l->hash.skipped);
	jw_key_uint(w, "hashed_bytes", l->hash.hashed);
	jw_key_uint(w, "hash_budget_bytes", HASH_BUDGET_BYTES);
	jw_key_double(w, "hash_budget_seconds", (double)HASH_BUDGET_NS / 1e9);
	jw_obj_end(w);
}

/* Present only when the report leaves something out (see README). */
static void write_truncated(jwriter *w, const struct run_report *r)
{
	if (!r->inputs.truncated && !r->inputs.hash.skipped && !r->outputs.truncated &&
	    !r->outputs.hash.skipped && !r->denials_omitted)
		return;
	jw_key(w, "truncated");
	jw_obj_begin(w);
	write_list_cut(w, "inputs", &r->inputs);
	write_list_cut(w, "outputs", &r->outputs);
	if (r->denials_omitted) {
		jw_key(w, "denials");
		jw_obj_begin(w);
		jw_key_uint(w, "targets_kept", DENIALS_MAX_TARGETS);
		jw_key_uint(w, "count_omitted", r->denials_omitted);
		jw_obj_end(w);
	}
	jw_obj_end(w);
}

/* The change set of an overlay or review run: what became of it. */
static void write_changes(jwriter *w, const struct run_report *r)
{
	const struct changes_report *c = &r->changes;
	jw_key(w, "changes");
	if (!c->present) {
		jw_null(w);
		return;
	}
	jw_obj_begin(w);
	jw_key_str(w, "state", c->state);
	jw_key_str(w, "dir", nonempty(c->dir));
	jw_key_str(w, "reason", nonempty(c->reason));
	jw_key_strv(w, "refused", &c->refused);
	jw_key_strv(w, "protected", &c->protected);
	jw_key_strv(w, "conflicts", &c->conflicts);
	jw_obj_end(w);
}

static void write_evidence(jwriter *w, const struct run_report *r)
{
	jw_key_strv(w, "command", &r->command);
	jw_key_str(w, "policy_sha256", r->policy_sha256);
	jw_key_str(w, "rootfs", nonempty(r->rootfs));
	jw_key_str(w, "image_workspace", nonempty(r->image_workspace));
	jw_key(w, "inputs");
	write_files(w, &r->inputs, false);
	jw_key(w, "outputs");
	write_files(w, &r->outputs, true);
	write_changes(w, r);
	write_fixes(w, "privilege_cleared", &r->privilege_cleared);
	write_fixes(w, "root_restored", &r->root_restored);
	if (r->privilege_sweep.incomplete) {
		/* Present only when the sweep may have missed a file (SECURITY.md). */
		jw_key(w, "privilege_sweep");
		jw_obj_begin(w);
		jw_key_bool(w, "complete", false);
		jw_key_str(w, "reason", r->privilege_sweep.reason);
		jw_key_uint(w, "entries_checked", r->privilege_sweep.entries);
		jw_obj_end(w);
	}
	if (r->outputs.truncated) {
		jw_key_bool(w, "outputs_truncated", true);
	}
	write_truncated(w, r);
	static const char *const sn[] = {"stdout", "stderr"};
	for (int i = 0; i < 2; i++) {
		jw_key(w, sn[i]);
		jw_obj_begin(w);
		jw_key_uint(w, "bytes", r->out[i].bytes);
		jw_key(w, "sha256");
		if (r->out[i].hash_skipped) {
			/* Past the budget: the hash covers a prefix only, and
			 * says so under another name. */
			jw_null(w);
			jw_key_str(w, "hash_skipped", "byte-budget");
			jw_key_uint(w, "hashed_bytes", r->out[i].hashed_bytes);
			jw_key(w, "prefix_sha256");
		}
		jw_str(w, r->out[i].sha256);
		jw_obj_end(w);
	}
	jw_key_strv(w, "secrets", &r->secrets);
	/* Names only, never values (and the paths pass the redactor too). */
	jw_key(w, "secret_exposures");
	jw_arr_begin(w);
	for (size_t i = 0; i < r->exposures.n; i++) {
		jw_obj_begin(w);
		jw_key_str(w, "name", r->exposures.e[i].name);
		jw_key_str(w, "path", r->exposures.e[i].path);
		jw_key_str(w, "where", r->exposures.e[i].where);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	if (r->exposures.scanned) {
		jw_key(w, "secret_scan");
		jw_obj_begin(w);
		jw_key_uint(w, "files", r->exposures.files);
		jw_key_uint(w, "bytes", r->exposures.bytes);
		jw_key_bool(w, "complete", r->exposures.complete);
		jw_obj_end(w);
	}
}

static void write_ceiling(jwriter *w, const struct run_report *r)
{
	jw_key_str(w, "ceiling_sha256", nonempty(r->ceiling_sha256));
	if (r->ceiling_sha256[0]) {
		jw_key(w, "grants");
		report_write_grants(w, r->grants, r->ngrants);
	}
	if (r->unauthorized.n) {
		jw_key_strv(w, "unauthorized", &r->unauthorized);
	}
}

static void write_enforcement(jwriter *w, const struct run_report *r)
{
	const struct { const char *k; bool v; } flags[] = {
		{"user_ns", r->enf.user_ns}, {"pid_ns", r->enf.pid_ns}, {"net_ns", r->enf.net_ns},
	};
	jw_key(w, "enforcement");
	jw_obj_begin(w);
	for (size_t i = 0; i < ARRAY_SIZE(flags); i++) {
		jw_key(w, flags[i].k);
		jw_bool(w, flags[i].v);
	}
	jw_key_int(w, "landlock_abi", r->enf.landlock_abi);
	jw_key_bool(w, "seccomp", r->enf.seccomp);
	jw_key_bool(w, "seccomp_notify", r->enf.seccomp_notify);
	jw_key_bool(w, "file_observer", r->enf.file_observer);
	jw_key_str(w, "cgroup", r->enf.cgroup);
	jw_key_bool(w, "no_new_privs", r->enf.no_new_privs);
	/* Only once the layers were applied (the command started). */
	jw_key(w, "landlock_missing");
	if (r->enf.no_new_privs)
		report_write_landlock_missing(w, r->enf.landlock_abi);
	else
		jw_null(w);
	jw_key_bool(w, "idmapped_workspace", r->enf.idmapped_workspace);
	jw_key_str(w, "workspace_ownership", r->enf.workspace_ownership);
	jw_key_str(w, "workspace_ownership_reason", nonempty(r->enf.workspace_ownership_reason));
	jw_key_str(w, "workspace_mode", r->enf.workspace_mode);
	jw_key_str(w, "workspace_mode_reason", nonempty(r->enf.workspace_mode_reason));
	jw_key(w, "degraded");
	jw_arr_begin(w);
	for (size_t i = 0; i < r->enf.ndegraded; i++)
		jw_str(w, r->enf.degraded[i]);
	jw_arr_end(w);
	jw_key(w, "sandbox_host_uid");
	if (r->enf.user_ns || r->enf.ndegraded)
		jw_uint(w, r->enf.sandbox_host_uid);
	else
		jw_null(w);
	jw_obj_end(w);
}

char *report_to_json(const struct run_report *r)
{
	jwriter w = {.filter = redact_filter, .filter_ctx = r->redact};
	jw_obj_begin(&w);
	write_status(&w, r);
	write_verdicts(&w, r);
	write_usage(&w, r);
	write_denials(&w, r);
	report_write_network(&w, r);
	write_evidence(&w, r);
	write_ceiling(&w, r);
	write_enforcement(&w, r);
	jw_obj_end(&w);
	return jw_take(&w);
}
