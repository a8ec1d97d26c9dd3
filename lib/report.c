#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cleanup.h"
#include "compat.h"
#include "landlock.h"
#include "error.h"
#include "json.h"
#include "report.h"

static const char *const status_names[ST_COUNT] = {
	"ok", "exit-nonzero", "signaled", "timeout", "cpu-limit", "memory-limit",
	"output-limit", "file-size-limit", "denied", "unauthorized", "infeasible",
	"setup-error", "interrupted",
};

const char *status_name(enum run_status s) { return status_names[s]; }

int status_exit_code(enum run_status s, int exit_code, int sig)
{
	switch (s) {
	case ST_OK: return 0;
	case ST_EXIT_NONZERO: return exit_code > 0 ? exit_code : 1;
	case ST_SIGNALED: return 128 + sig;
	case ST_TIMEOUT: return 124;
	case ST_SETUP_ERROR: return 125;
	case ST_CPU_LIMIT: return 119;
	case ST_MEMORY_LIMIT: return 118;
	case ST_OUTPUT_LIMIT: return 120;
	case ST_FILE_SIZE_LIMIT: return 121;
	case ST_DENIED: return 122;
	case ST_UNAUTHORIZED: return 123;
	case ST_INFEASIBLE: return 117;
	case ST_INTERRUPTED: return 130;
	default: return 125;
	}
}

void report_init(struct run_report *r)
{
	memset(r, 0, sizeof(*r));
	r->exit_code = -1;
	r->enf.cgroup = "none";
	pthread_mutex_init(&r->denial_lock, NULL);
	for (int i = 0; i < 2; i++) /* SHA-256 of nothing, until output arrives */
		strcpy(r->out[i].sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

void report_free(struct run_report *r)
{
	redactor_free(r->redact);
	free(r->grants);
	strv_free(&r->unauthorized);
	strv_free(&r->writable);
	free(r->net.ep);
	free(r->net.req);
	free(r->net.inj);
	pthread_mutex_destroy(&r->denial_lock);
	free(r->denials);
	free(r->by_group);
	hindex_free(&r->denial_idx);
	strv_free(&r->command);
	strv_free(&r->secrets);
	strv_free(&r->changes.refused);
	strv_free(&r->changes.protected);
	strv_free(&r->changes.conflicts);
	exposure_list_free(&r->exposures);
	file_list_free(&r->inputs);
	file_list_free(&r->outputs);
	fix_list_free(&r->privilege_cleared);
	fix_list_free(&r->root_restored);
	memset(r, 0, sizeof(*r));
}

struct denial_probe {
	const struct run_report *r;
	const char *kind, *target;
};

static bool denial_eq(const void *ctx, uint32_t item)
{
	const struct denial_probe *k = ctx;
	const struct denial *d = &k->r->denials[item];
	return strcmp(d->kind, k->kind) == 0 && strcmp(d->target, k->target) == 0;
}

static uint64_t denial_hash(const char *kind, const char *target)
{
	return hash_str(kind) * 31 ^ hash_str(target);
}

/* Denial idx was made by group pgid: counted for it, or as unattributed. */
static void attribute_locked(struct run_report *r, size_t idx, int pgid)
{
	if (r->attribute && pgid > 0) {
		for (size_t j = 0; j < r->nby_group; j++)
			if (r->by_group[j].idx == idx && r->by_group[j].pgid == pgid) {
				r->by_group[j].count++;
				return;
			}
		if (!r->by_group)
			r->by_group = calloc(DENIAL_GROUPS_MAX, sizeof(*r->by_group));
		if (r->by_group && r->nby_group < DENIAL_GROUPS_MAX) {
			r->by_group[r->nby_group++] = (struct denial_group){(uint32_t)idx, pgid, 1};
			return;
		}
	}
	r->denials[idx].unattributed++;
}

static int add_denial_locked(struct run_report *r, const char *kind, const char *target, int pgid)
{
	/* The key as stored: the kind and target, redacted in full and only
	 * then cut to the record's size (a cut first would leave a prefix of
	 * a secret that the redactor no longer recognises). */
	char k[sizeof(r->denials->kind)], t[sizeof(r->denials->target)];
	char *red = r->redact ? redact_string(r->redact, target) : NULL;
	if (r->redact && !red)
		return -1;
	snprintf(k, sizeof(k), "%s", kind);
	snprintf(t, sizeof(t), "%s", red ? red : target);
	free(red);
	struct denial_probe probe = {r, k, t};
	uint64_t h = denial_hash(k, t);
	long i = hindex_find(&r->denial_idx, h, denial_eq, &probe);
	if (i >= 0) {
		r->denials[i].count++;
		attribute_locked(r, (size_t)i, pgid);
		return 0;
	}
	if (r->ndenials >= DENIALS_MAX_TARGETS) {
		r->denials_omitted++;
		return 0;
	}
	if (r->ndenials == r->denial_cap) {
		size_t cap = r->denial_cap ? 2 * r->denial_cap : 16;
		struct denial *d = realloc(r->denials, cap * sizeof(*d));
		if (!d)
			return -1;
		r->denials = d;
		r->denial_cap = cap;
	}
	if (hindex_add(&r->denial_idx, h, (uint32_t)r->ndenials) < 0)
		return -1;
	struct denial *d = &r->denials[r->ndenials++];
	memset(d, 0, sizeof(*d));
	memcpy(d->kind, k, sizeof(k));
	memcpy(d->target, t, sizeof(t));
	d->count = 1;
	attribute_locked(r, r->ndenials - 1, pgid);
	return 0;
}

int report_add_denial(struct run_report *r, const char *kind, const char *target)
{
	return report_add_denial_by(r, kind, target, 0);
}

int report_add_denial_by(struct run_report *r, const char *kind, const char *target, int pgid)
{
	pthread_mutex_lock(&r->denial_lock);
	int rc = add_denial_locked(r, kind, target, pgid);
	pthread_mutex_unlock(&r->denial_lock);
	return rc;
}

static void write_fixes(jwriter *w, const char *key, const struct fix_list *l)
{
	jw_key(w, key);
	jw_arr_begin(w);
	for (size_t i = 0; i < l->n; i++) {
		jw_obj_begin(w);
		jw_key(w, "path");
		jw_str(w, l->f[i].path);
		jw_key(w, "what");
		jw_str(w, l->f[i].what);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

int report_add_check_denials(struct run_report *r, const struct run_report *check)
{
	if (!check->ndenials)
		return 0;
	pthread_mutex_lock(&r->denial_lock);
	struct denial *d = realloc(r->denials, (r->ndenials + check->ndenials) * sizeof(*d));
	if (!d) {
		pthread_mutex_unlock(&r->denial_lock);
		return -1;
	}
	r->denials = d;
	for (size_t i = 0; i < check->ndenials; i++) {
		d[r->ndenials] = check->denials[i];
		d[r->ndenials++].check = true;
	}
	pthread_mutex_unlock(&r->denial_lock);
	return 0;
}

static void write_files(jwriter *w, const struct file_list *l, bool with_change)
{
	jw_arr_begin(w);
	for (size_t i = 0; i < l->n; i++) {
		const struct file_record *f = &l->r[i];
		jw_obj_begin(w);
		jw_key(w, "path");
		jw_str(w, f->path);
		if (with_change) {
			jw_key(w, "change");
			jw_str(w, change_name(f->change));
		}
		if (f->change != CHANGE_DELETED) {
			jw_key(w, "sha256");
			if (f->regular && f->sha256[0])
				jw_str(w, f->sha256);
			else
				jw_null(w);
			jw_key(w, "bytes");
			jw_uint(w, f->bytes);
			if (f->regular && f->skip != SKIP_NONE) {
				jw_key(w, "hash_skipped");
				jw_str(w, hash_skip_name(f->skip));
			}
		}
		if (!f->regular) {
			jw_key(w, "type");
			jw_str(w, "other");
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
		jw_key(w, "source");
		jw_str(w, source_name(lim[i].src));
		jw_obj_end(w);
	}
	jw_obj_end(w);
}

void report_write_grants(jwriter *w, const struct grant *g, size_t n)
{
	jw_arr_begin(w);
	for (size_t i = 0; i < n; i++) {
		jw_obj_begin(w);
		jw_key(w, "kind");
		jw_str(w, g[i].kind);
		jw_key(w, "target");
		jw_str(w, g[i].target);
		jw_key(w, "allowed");
		jw_bool(w, g[i].allowed);
		jw_key(w, "rule");
		jw_str(w, g[i].rule);
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
	jw_key(w, "schema");
	jw_str(w, "cordon.report/1");
	jw_key(w, "status");
	jw_str(w, status_name(r->status));
	if (r->reason[0]) {
		jw_key(w, "reason");
		jw_str(w, r->reason);
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
	jw_str(w, r->ndenials || r->exposures.n || scan_cut || r->privilege_cleared.n || r->root_restored.n ||
			  r->privilege_sweep.incomplete || r->changes.protected.n
		      ? "violations"
		      : "clean");
	jw_key(w, "resources");
	jw_str(w, r->status == ST_INFEASIBLE ? "infeasible" : any_limit ? "exceeded" : "within");
	jw_key(w, "task");
	jw_str(w, task_name(r->task));
	jw_obj_end(w);
	if (r->check_ran) {
		jw_key(w, "check");
		jw_obj_begin(w);
		jw_key(w, "status");
		jw_str(w, status_name(r->check_status));
		jw_key(w, "exit_code");
		if (r->check_exit_code >= 0)
			jw_int(w, r->check_exit_code);
		else
			jw_null(w);
		jw_key(w, "wall_seconds");
		jw_double(w, r->check_wall_seconds);
		if (r->check_workspace) {
			jw_key(w, "workspace");
			jw_str(w, r->check_workspace);
		}
		if (r->check_workspace_reason[0]) {
			jw_key(w, "workspace_reason");
			jw_str(w, r->check_workspace_reason);
		}
		if (r->check_reason[0]) {
			jw_key(w, "reason");
			jw_str(w, r->check_reason);
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
	jw_key(w, "wall_seconds");
	jw_double(w, r->wall_seconds);
	jw_key(w, "setup_seconds");
	jw_double(w, r->setup_seconds);
	jw_key(w, "cpu_user_seconds");
	jw_double(w, (double)r->cpu_user_ns / 1e9);
	jw_key(w, "cpu_system_seconds");
	jw_double(w, (double)r->cpu_sys_ns / 1e9);
	jw_key(w, "peak_memory_bytes");
	if (r->have_memory)
		jw_uint(w, r->peak_memory);
	else
		jw_null(w);
	if (r->have_ledger) {
		jw_key(w, "ledger_peak_bytes");
		jw_uint(w, r->ledger_peak);
	}
	jw_obj_end(w);
}

static void write_denials(jwriter *w, const struct run_report *r)
{
	jw_key(w, "denials");
	jw_arr_begin(w);
	for (size_t i = 0; i < r->ndenials; i++) {
		jw_obj_begin(w);
		jw_key(w, "kind");
		jw_str(w, r->denials[i].kind);
		jw_key(w, "target");
		jw_str(w, r->denials[i].target);
		jw_key(w, "count");
		jw_uint(w, r->denials[i].count);
		jw_key(w, "phase");
		jw_str(w, r->denials[i].check ? "check" : "run");
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

static void write_network(jwriter *w, const struct run_report *r)
{
	if (!r->net.enabled)
		return;
	jw_key(w, "network");
	jw_obj_begin(w);
	jw_key(w, "proxy");
	jw_str(w, "127.0.0.1:3128");
	jw_key(w, "connections");
	jw_uint(w, r->net.conns);
	jw_key(w, "denied");
	jw_uint(w, r->net.denied);
	jw_key(w, "bytes_up");
	jw_uint(w, r->net.up);
	jw_key(w, "bytes_down");
	jw_uint(w, r->net.down);
	jw_key(w, "max_connections");
	jw_uint(w, r->net.max_conns);
	jw_key(w, "over_limit");
	jw_uint(w, r->net.over_limit);
	jw_key(w, "endpoints");
	jw_arr_begin(w);
	for (size_t i = 0; i < r->net.nep; i++) {
		jw_obj_begin(w);
		jw_key(w, "target");
		jw_str(w, r->net.ep[i].target);
		jw_key(w, "connections");
		jw_uint(w, r->net.ep[i].conns);
		jw_key(w, "bytes_up");
		jw_uint(w, r->net.ep[i].up);
		jw_key(w, "bytes_down");
		jw_uint(w, r->net.ep[i].down);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_key(w, "requests");
	jw_arr_begin(w);
	for (size_t i = 0; i < r->net.nreq; i++) {
		const struct net_request *q = &r->net.req[i];
		jw_obj_begin(w);
		jw_key(w, "method");
		jw_str(w, q->method);
		jw_key(w, "host");
		jw_str(w, q->target);
		jw_key(w, "path");
		jw_str(w, q->path);
		jw_key(w, "status");
		jw_uint(w, (uint64_t)q->status);
		jw_key(w, "bytes_up");
		jw_uint(w, q->up);
		jw_key(w, "bytes_down");
		jw_uint(w, q->down);
		jw_key(w, "injected");
		jw_arr_begin(w);
		for (size_t k = 0; k < 32 && k < r->secrets.n; k++)
			if (q->injected >> k & 1)
				jw_str(w, r->secrets.v[k]);
		jw_arr_end(w);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_key(w, "requests_omitted");
	jw_uint(w, r->net.req_omitted);
	jw_key(w, "injected");
	jw_arr_begin(w);
	for (size_t i = 0; i < r->net.ninj; i++) {
		const struct net_injection *q = &r->net.inj[i];
		jw_obj_begin(w);
		jw_key(w, "secret");
		jw_str(w, q->secret < r->secrets.n ? r->secrets.v[q->secret] : "?");
		jw_key(w, "host");
		jw_str(w, q->target);
		jw_key(w, "count");
		jw_uint(w, q->count);
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
	jw_key(w, "files_omitted");
	jw_uint(w, l->omitted);
	jw_key(w, "files_unhashed");
	jw_uint(w, l->hash.skipped);
	jw_key(w, "hashed_bytes");
	jw_uint(w, l->hash.hashed);
	jw_key(w, "hash_budget_bytes");
	jw_uint(w, HASH_BUDGET_BYTES);
	jw_key(w, "hash_budget_seconds");
	jw_double(w, (double)HASH_BUDGET_NS / 1e9);
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
		jw_key(w, "targets_kept");
		jw_uint(w, DENIALS_MAX_TARGETS);
		jw_key(w, "count_omitted");
		jw_uint(w, r->denials_omitted);
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
	jw_key(w, "state");
	jw_str(w, c->state);
	jw_key(w, "dir");
	if (c->dir[0])
		jw_str(w, c->dir);
	else
		jw_null(w);
	jw_key(w, "reason");
	if (c->reason[0])
		jw_str(w, c->reason);
	else
		jw_null(w);
	jw_key(w, "refused");
	jw_str_array(w, (const char *const *)c->refused.v, c->refused.n);
	jw_key(w, "protected");
	jw_str_array(w, (const char *const *)c->protected.v, c->protected.n);
	jw_key(w, "conflicts");
	jw_str_array(w, (const char *const *)c->conflicts.v, c->conflicts.n);
	jw_obj_end(w);
}

static void write_evidence(jwriter *w, const struct run_report *r)
{
	jw_key(w, "command");
	jw_str_array(w, (const char *const *)r->command.v, r->command.n);
	jw_key(w, "policy_sha256");
	jw_str(w, r->policy_sha256);
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
		jw_key(w, "complete");
		jw_bool(w, false);
		jw_key(w, "reason");
		jw_str(w, r->privilege_sweep.reason);
		jw_key(w, "entries_checked");
		jw_uint(w, r->privilege_sweep.entries);
		jw_obj_end(w);
	}
	if (r->outputs.truncated) {
		jw_key(w, "outputs_truncated");
		jw_bool(w, true);
	}
	write_truncated(w, r);
	static const char *const sn[] = {"stdout", "stderr"};
	for (int i = 0; i < 2; i++) {
		jw_key(w, sn[i]);
		jw_obj_begin(w);
		jw_key(w, "bytes");
		jw_uint(w, r->out[i].bytes);
		jw_key(w, "sha256");
		if (r->out[i].hash_skipped) {
			/* Past the budget: the hash covers a prefix only, and
			 * says so under another name. */
			jw_null(w);
			jw_key(w, "hash_skipped");
			jw_str(w, "byte-budget");
			jw_key(w, "hashed_bytes");
			jw_uint(w, r->out[i].hashed_bytes);
			jw_key(w, "prefix_sha256");
		}
		jw_str(w, r->out[i].sha256);
		jw_obj_end(w);
	}
	jw_key(w, "secrets");
	jw_str_array(w, (const char *const *)r->secrets.v, r->secrets.n);
	/* Names only, never values (and the paths pass the redactor too). */
	jw_key(w, "secret_exposures");
	jw_arr_begin(w);
	for (size_t i = 0; i < r->exposures.n; i++) {
		jw_obj_begin(w);
		jw_key(w, "name");
		jw_str(w, r->exposures.e[i].name);
		jw_key(w, "path");
		jw_str(w, r->exposures.e[i].path);
		jw_key(w, "where");
		jw_str(w, r->exposures.e[i].where);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	if (r->exposures.scanned) {
		jw_key(w, "secret_scan");
		jw_obj_begin(w);
		jw_key(w, "files");
		jw_uint(w, r->exposures.files);
		jw_key(w, "bytes");
		jw_uint(w, r->exposures.bytes);
		jw_key(w, "complete");
		jw_bool(w, r->exposures.complete);
		jw_obj_end(w);
	}
}

static void write_ceiling(jwriter *w, const struct run_report *r)
{
	jw_key(w, "ceiling_sha256");
	if (r->ceiling_sha256[0])
		jw_str(w, r->ceiling_sha256);
	else
		jw_null(w);
	if (r->ceiling_sha256[0]) {
		jw_key(w, "grants");
		report_write_grants(w, r->grants, r->ngrants);
	}
	if (r->unauthorized.n) {
		jw_key(w, "unauthorized");
		jw_str_array(w, (const char *const *)r->unauthorized.v, r->unauthorized.n);
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
	jw_key(w, "landlock_abi");
	jw_int(w, r->enf.landlock_abi);
	jw_key(w, "seccomp");
	jw_bool(w, r->enf.seccomp);
	jw_key(w, "seccomp_notify");
	jw_bool(w, r->enf.seccomp_notify);
	jw_key(w, "file_observer");
	jw_bool(w, r->enf.file_observer);
	jw_key(w, "cgroup");
	jw_str(w, r->enf.cgroup);
	jw_key(w, "no_new_privs");
	jw_bool(w, r->enf.no_new_privs);
	/* Only once the layers were applied (the command started). */
	jw_key(w, "landlock_missing");
	if (r->enf.no_new_privs) {
		jw_arr_begin(w);
		for (const char *const *m = landlock_missing(r->enf.landlock_abi); *m; m++)
			jw_str(w, *m);
		jw_arr_end(w);
	} else {
		jw_null(w);
	}
	jw_key(w, "idmapped_workspace");
	jw_bool(w, r->enf.idmapped_workspace);
	jw_key(w, "workspace_ownership");
	if (r->enf.workspace_ownership)
		jw_str(w, r->enf.workspace_ownership);
	else
		jw_null(w);
	jw_key(w, "workspace_ownership_reason");
	if (r->enf.workspace_ownership_reason[0])
		jw_str(w, r->enf.workspace_ownership_reason);
	else
		jw_null(w);
	jw_key(w, "workspace_mode");
	if (r->enf.workspace_mode)
		jw_str(w, r->enf.workspace_mode);
	else
		jw_null(w);
	jw_key(w, "workspace_mode_reason");
	if (r->enf.workspace_mode_reason[0])
		jw_str(w, r->enf.workspace_mode_reason);
	else
		jw_null(w);
	jw_key(w, "sandbox_host_uid");
	if (r->enf.user_ns)
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
	write_network(&w, r);
	write_evidence(&w, r);
	write_ceiling(&w, r);
	write_enforcement(&w, r);
	jw_obj_end(&w);
	if (jw_finish(&w) < 0) {
		buf_free(&w.out);
		return NULL;
	}
	return w.out.p;
}

static int write_all(int fd, const char *text, size_t len)
{
	size_t off = 0;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

/* A fresh random suffix for a sibling name (temp file, planted entry). */
static void random_suffix(char *out, size_t n)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char r[16] = {0};
	if (n > sizeof(r) + 1)
		n = sizeof(r) + 1;
	if (getrandom(r, n - 1, 0) < 0) { /* never blocks after boot; a weak fallback still differs per call */
		static unsigned k;
		for (size_t i = 0; i + 1 < n; i++)
			r[i] = (unsigned char)(getpid() + (int)i * 31 + (int)k++);
	}
	for (size_t i = 0; i + 1 < n; i++)
		out[i] = set[r[i] % (sizeof(set) - 1)];
	out[n - 1] = '\0';
}

/* Create a new sibling NAME.tmp.XXXXXX in dfd: never follows a link, never
 * opens anything that existed. */
static int create_tmp(int dfd, const char *name, char *tmp, size_t tmpsz)
{
	for (int tries = 0; tries < 16; tries++) {
		char sfx[7];
		random_suffix(sfx, sizeof(sfx));
		if (snprintf(tmp, tmpsz, "%s.tmp.%s", name, sfx) >= (int)tmpsz) {
			errno = ENAMETOOLONG;
			return -1;
		}
		int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

/* Write beside dfd/name and rename into place, all relative to dfd (the
 * directory opened without following any link: a concurrent run that swaps
 * a path component for a link cannot move the write elsewhere). Inside a
 * writable path, an entry at name that cannot be replaced (a directory the
 * run planted) is moved aside to NAME.planted.XXXXXX, named in note. */
static int write_beside(int dfd, const char *shown, const char *name, const char *text, bool inside,
			const char *keep, char *note, size_t notesz, cordon_error *err)
{
	char tmp[NAME_MAX + 16];
	int fd = create_tmp(dfd, name, tmp, sizeof(tmp));
	if (fd < 0)
		return cordon_err_errno(err, "create report beside %s", shown);
	if (write_all(fd, text, strlen(text)) < 0 || fchmod(fd, 0644) < 0 || fsync(fd) < 0) {
		int e = errno;
		close(fd);
		unlinkat(dfd, tmp, 0);
		return cordon_err(err, e, "write report beside %s", shown);
	}
	if (close(fd) < 0) {
		int e = errno;
		unlinkat(dfd, tmp, 0);
		return cordon_err(err, e, "write report beside %s", shown);
	}
	/* keep: what is at name is never replaced (a device): the report
	 * stays under its temporary name, and the note says where. */
	if (keep && note) {
		snprintf(note, notesz, "%s is %s, never replaced by the report: the report is at %s.tmp.%s", shown,
			 keep, shown, tmp + strlen(name) + 5);
		return 0;
	}
	if (keep) {
		unlinkat(dfd, tmp, 0);
		return cordon_err(err, EEXIST, "report %s is %s: never replaced by the report", shown, keep);
	}
	for (int tries = 0;; tries++) {
		if (renameat(dfd, tmp, dfd, name) == 0)
			return 0;
		int e = errno;
		if (inside && tries < 4 && (e == EISDIR || e == ENOTEMPTY || e == EEXIST || e == ENOTDIR)) {
			char aside[NAME_MAX + 32], sfx[7];
			random_suffix(sfx, sizeof(sfx));
			if (snprintf(aside, sizeof(aside), "%s.planted.%s", name, sfx) < (int)sizeof(aside) &&
			    renameat2(dfd, name, dfd, aside, RENAME_NOREPLACE) == 0 && note)
				snprintf(note, notesz, "%s was not a file (a run could have planted it): moved aside to %s.planted.%s",
					 shown, shown, sfx);
			continue;
		}
		/* Never lose the report: inside a writable path it stays under its
		 * temporary name, and the note says where. */
		if (inside && note) {
			snprintf(note, notesz, "%s could not be replaced (%s): the report is at %s.tmp.%s",
				 shown, strerror(e), shown, tmp + strlen(name) + 5);
			return 0;
		}
		unlinkat(dfd, tmp, 0);
		return cordon_err(err, e, "rename report into place at %s", shown);
	}
}

int report_write_target_noted(const char *path, const char *text, const strv *writable, char *note,
			      size_t notesz, cordon_error *err)
{
	static const strv none = {0};
	if (note && notesz)
		note[0] = '\0';
	if (strcmp(path, "-") == 0) {
		if (write_all(STDERR_FILENO, text, strlen(text)) < 0)
			return cordon_err_errno(err, "write report to stderr");
		return 0;
	}
	if (!writable)
		writable = &none;
	char abs[PATH_MAX], cwd[PATH_MAX];
	if (path[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return cordon_err_errno(err, "report %s: the current directory", path);
	char joined[PATH_MAX * 2];
	if (snprintf(joined, sizeof(joined), "%s/%s", path[0] == '/' ? "" : cwd, path) >= (int)sizeof(joined) ||
	    path_normalize(joined, abs, sizeof(abs)) < 0)
		return cordon_err(err, ENAMETOOLONG, "report path %s", path);
	char *slash = strrchr(abs, '/');
	const char *name = slash + 1;
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return cordon_err(err, EISDIR, "report %s: not a file name", path);
	*slash = '\0';
	char dir[PATH_MAX];
	if (resolve_untrusted_links(abs[0] ? abs : "/", writable, dir, sizeof(dir), err) < 0)
		return cordon_err_wrap(err, "report %s", path);
	bool inside = false;
	for (size_t i = 0; i < writable->n; i++)
		inside |= path_has_prefix(dir, writable->v[i]);
	_cleanup_close_ int dfd = open_root(dir, O_PATH | O_DIRECTORY);
	if (dfd < 0)
		return cordon_err_errno(err, "report %s: directory %s (opened without following links)", path, dir);
	char shown[PATH_MAX + NAME_MAX + 2];
	snprintf(shown, sizeof(shown), "%s/%s", strcmp(dir, "/") ? dir : "", name);
	struct stat st;
	bool there = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	/* A device is never replaced, anywhere (issue 27 item 10). Inside a
	 * writable path it is never written either (the run may have moved it
	 * there): the report is kept beside it. */
	if (there && inside && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
		return write_beside(dfd, shown, name, text, inside,
				    S_ISCHR(st.st_mode) ? "a character device inside a writable path"
							: "a block device inside a writable path",
				    note, notesz, err);
	if (inside || !there || S_ISREG(st.st_mode))
		return write_beside(dfd, shown, name, text, inside, NULL, note, notesz, err);
	if (S_ISLNK(st.st_mode)) {
		/* A link to a regular file is replaced, as before; one into /proc
		 * (/dev/stdout -> /proc/self/fd/1) or to a device is written
		 * through. A dangling one is replaced. */
		char lt[PATH_MAX];
		ssize_t n = readlinkat(dfd, name, lt, sizeof(lt) - 1);
		lt[n > 0 ? n : 0] = '\0';
		if (fstatat(dfd, name, &st, 0) < 0 || (S_ISREG(st.st_mode) && strncmp(lt, "/proc/", 6) != 0))
			return write_beside(dfd, shown, name, text, false, NULL, NULL, 0, err);
	}
	if (S_ISBLK(st.st_mode))
		return cordon_err(err, ENOTSUP, "report %s is a block device: a report is never written to one", path);
	if (S_ISDIR(st.st_mode))
		return cordon_err(err, EISDIR, "report %s is a directory", path);
	/* A device, FIFO or socket (/dev/null, /dev/stdout): written to, never
	 * replaced by a file; appended to where it is a file (cordon's stdout
	 * redirected). No reader on a FIFO is an error, not a hang. This is
	 * outside every writable path: the link, if any, is the operator's. */
	_cleanup_close_ int fd = openat(dfd, name, O_WRONLY | O_APPEND | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return cordon_err_errno(err, "open report %s (%s, written in place)", path,
					S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode) ? "a character device" : "not a regular file");
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (write_all(fd, text, strlen(text)) < 0)
		return cordon_err_errno(err, "write report %s", path);
	return 0;
}

int report_write_target(const char *path, const char *text, const strv *writable, cordon_error *err)
{
	return report_write_target_noted(path, text, writable, NULL, 0, err);
}

int report_write_file(const char *path, const char *text, cordon_error *err)
{
	return report_write_target(path, text, NULL, err);
}

char *policy_canonical_json(const cordon_policy *p)
{
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "mounts");
	jw_arr_begin(&w);
	for (size_t i = 0; i < p->nmounts; i++) {
		jw_obj_begin(&w);
		jw_key(&w, "mode");
		jw_str(&w, mount_mode_name(p->mounts[i].mode));
		jw_key(&w, "path");
		jw_str(&w, p->mounts[i].path);
		jw_key(&w, "size");
		jw_uint(&w, p->mounts[i].size);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	/* Only when asked: the hash of a policy that says nothing of it
	 * stays what it was. */
	if (p->workspace_mode_asked || p->on_failure != ONF_APPLY) {
		jw_key(&w, "workspace_mode");
		jw_str(&w, workspace_mode_name(p->workspace_mode));
		jw_key(&w, "on_failure");
		jw_str(&w, on_failure_name(p->on_failure));
	}
	const struct { const char *k; const strv *v; } lists[] = {
		{"env", &p->env}, {"network", &p->net_allow}, {"syscalls_allow", &p->sys_allow},
		{"syscalls_deny", &p->sys_deny}, {"inputs", &p->inputs},
	};
	for (size_t l = 0; l < ARRAY_SIZE(lists); l++) {
		jw_key(&w, lists[l].k);
		jw_str_array(&w, (const char *const *)lists[l].v->v, lists[l].v->n);
	}
	jw_key(&w, "secrets");
	jw_arr_begin(&w);
	for (size_t i = 0; i < p->nsecrets; i++) {
		jw_obj_begin(&w);
		jw_key(&w, "name");
		jw_str(&w, p->secrets[i].name);
		jw_key(&w, "env");
		jw_str(&w, p->secrets[i].from_env);
		jw_key(&w, "file");
		jw_str(&w, p->secrets[i].from_file);
		jw_key(&w, "mount");
		jw_str(&w, p->secrets[i].mount);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_key(&w, "limits");
	jw_obj_begin(&w);
	for (int i = 0; i < LIM_COUNT; i++) {
		if (!p->limits[i].set)
			continue;
		jw_key(&w, limit_name(i));
		jw_uint(&w, p->limits[i].value);
	}
	jw_obj_end(&w);
	jw_key(&w, "loopback_ports");
	jw_arr_begin(&w);
	for (size_t i = 0; i < p->nloopback_ports; i++)
		jw_uint(&w, p->loopback_ports[i]);
	jw_arr_end(&w);
	/* Only when there are any: a policy without devices keeps its hash. */
	if (p->devices.n) {
		jw_key(&w, "devices");
		jw_arr_begin(&w);
		for (size_t i = 0; i < p->devices.n; i++)
			jw_str(&w, p->devices.v[i]);
		jw_arr_end(&w);
	}
	jw_key(&w, "check");
	jw_str(&w, p->check);
	/* Only when given: the hash of a policy without them is unchanged. */
	if (p->check_files) {
		jw_key(&w, "check_files");
		jw_str(&w, p->check_files);
	}
	if (p->check_cwd) {
		jw_key(&w, "check_cwd");
		jw_str(&w, p->check_cwd);
	}
	if (p->check_env.n) {
		jw_key(&w, "check_env");
		jw_str_array(&w, (const char *const *)p->check_env.v, p->check_env.n);
	}
	jw_key(&w, "cwd");
	jw_str(&w, p->cwd);
	jw_key(&w, "on_violation");
	jw_str(&w, p->kill_on_violation ? "kill" : "report");
	jw_key(&w, "report_file_denials");
	jw_bool(&w, !p->no_file_reports);
	jw_key(&w, "allow_weaker");
	jw_uint(&w, p->allow_weaker);
	jw_key(&w, "ledger");
	jw_arr_begin(&w);
	for (size_t i = 0; i < p->ledger.n; i++) {
		jw_obj_begin(&w);
		jw_key(&w, p->ledger.ev[i].alloc ? "alloc" : "free");
		jw_str(&w, p->ledger.ev[i].name);
		if (p->ledger.ev[i].alloc) {
			jw_key(&w, "bytes");
			jw_uint(&w, p->ledger.ev[i].bytes);
		}
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	if (jw_finish(&w) < 0) {
		buf_free(&w.out);
		return NULL;
	}
	return w.out.p;
}
