#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cleanup.h"
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
	free(r->net.ep);
	pthread_mutex_destroy(&r->denial_lock);
	free(r->denials);
	strv_free(&r->command);
	strv_free(&r->secrets);
	file_list_free(&r->inputs);
	file_list_free(&r->outputs);
	memset(r, 0, sizeof(*r));
}

int report_add_denial(struct run_report *r, const char *kind, const char *target)
{
	pthread_mutex_lock(&r->denial_lock);
	for (size_t i = 0; i < r->ndenials; i++) {
		if (strcmp(r->denials[i].kind, kind) == 0 && strcmp(r->denials[i].target, target) == 0) {
			r->denials[i].count++;
			pthread_mutex_unlock(&r->denial_lock);
			return 0;
		}
	}
	struct denial *d = realloc(r->denials, (r->ndenials + 1) * sizeof(*d));
	if (!d) {
		pthread_mutex_unlock(&r->denial_lock);
		return -1;
	}
	r->denials = d;
	d = &r->denials[r->ndenials++];
	memset(d, 0, sizeof(*d));
	snprintf(d->kind, sizeof(d->kind), "%s", kind);
	snprintf(d->target, sizeof(d->target), "%s", target);
	d->count = 1;
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
	static const char *n[] = {"not-run", "pass", "fail"};
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
	jw_str(w, r->ndenials ? "violations" : "clean");
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
	if (r->outputs.truncated) {
		jw_key(w, "outputs_truncated");
		jw_bool(w, true);
	}
	static const char *const sn[] = {"stdout", "stderr"};
	for (int i = 0; i < 2; i++) {
		jw_key(w, sn[i]);
		jw_obj_begin(w);
		jw_key(w, "bytes");
		jw_uint(w, r->out[i].bytes);
		jw_key(w, "sha256");
		jw_str(w, r->out[i].sha256);
		jw_obj_end(w);
	}
	jw_key(w, "secrets");
	jw_str_array(w, (const char *const *)r->secrets.v, r->secrets.n);
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

int report_write_file(const char *path, const char *text, cordon_error *err)
{
	size_t len = strlen(text);
	if (strcmp(path, "-") == 0) {
		if (write(STDERR_FILENO, text, len) != (ssize_t)len)
			return cordon_err_errno(err, "write report to stderr");
		return 0;
	}
	char tmp[4200];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp))
		return cordon_err(err, ENAMETOOLONG, "report path %s", path);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return cordon_err_errno(err, "create report %s", tmp);
	size_t off = 0;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			unlink(tmp);
			return cordon_err(err, e, "write report %s", tmp);
		}
		off += (size_t)n;
	}
	if (fchmod(fd, 0644) < 0 || fsync(fd) < 0 || close(fd) < 0) {
		int e = errno;
		unlink(tmp);
		return cordon_err(err, e, "write report %s", tmp);
	}
	if (rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return cordon_err(err, e, "rename report into place at %s", path);
	}
	return 0;
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
	jw_key(&w, "check");
	jw_str(&w, p->check);
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
