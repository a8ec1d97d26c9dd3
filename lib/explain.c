#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup.h"
#include "landlock.h"
#include "explain.h"
#include "json.h"
#include "pol-plan.h"
#include "probe.h"
#include "report-json.h"
#include "seccomp-policy.h"
#include "sup-run.h"
#include "sup-degrade.h"
#include "ns.h"
#include "secrets.h"
#include "units.h"

/* The lines of `paths`: the model's entries that head one (cordon's own view
 * as groups, the task's paths one each); the cgroup only where the host has
 * cgroups. Devices are listed apart. */
static bool explain_line(const struct model_entry *e, unsigned conds)
{
	if (!e->explain_path || e->kind == MK_DEVICE)
		return false;
	return !(e->flags & MODEL_IF_CGROUP) || (conds & MODEL_IF_CGROUP);
}

static unsigned explain_conds(const struct host_features *f)
{
	return strcmp(f->cgroup, "none") != 0 ? MODEL_IF_CGROUP : 0;
}

/* The verdict a run would reach, from the same preflight a run uses plus the
 * host checks that `cordon run` makes when it creates the boundary. */
static void verdict(cordon_policy *p, const struct host_features *f, struct run_plan *plan,
		    struct run_report *rep, bool *plan_ok, char *out, size_t outsz)
{
	cordon_error e = {0};
	*plan_ok = false;
	if (run_preflight(p, plan, rep, &e) < 0) {
		snprintf(out, outsz, "%s: %s", status_name(rep->status), e.msg);
		*plan_ok = plan->mounts != NULL || plan->workspace[0];
		return;
	}
	*plan_ok = true;
	/* The secrets as the run reads them (same checks: set, a regular file
	 * reached without links, long enough); the values are wiped at once and
	 * never shown. */
	struct secrets sec;
	memset(&sec, 0, sizeof(sec));
	int src = secrets_load(p, &sec, &e);
	secrets_free(&sec);
	if (src < 0) {
		snprintf(out, outsz, "setup-error: %s", e.msg);
		return;
	}
	const char *uwhy = f->userns_why[0] ? f->userns_why : "user namespaces: not available to this user";
	/* The run's own test (sup_degrade_decide): the namespaces, and its
	 * view built in them. */
	char vwhy[256];
	bool view = true;
	if (f->userns || (p->allow_weaker & WEAK_NAMESPACES))
		view = ns_probe_view(SUP_DEGRADE_NS, f->privileged, vwhy, sizeof(vwhy));
	bool degraded = !view && (p->allow_weaker & WEAK_NAMESPACES);
	if (!view)
		uwhy = vwhy;
	/* Namespaces, but no view in them (podman's default profile): said,
	 * where the run would fail at the step. */
	if (f->userns && !view && !degraded) {
		snprintf(out, outsz, "setup-error: %s; enforcement.allow_weaker [\"namespaces\"] runs without them (docs/hosts.md)", uwhy);
		return;
	}
	if (!f->userns && !degraded) {
		snprintf(out, outsz, "setup-error: %s", uwhy);
		return;
	}
	/* The degraded boundary's refusals, as the run says them. */
	if (degraded && sup_degrade_check(p, plan, false, false, uwhy, &e) < 0) {
		snprintf(out, outsz, "setup-error: %s", e.msg);
		return;
	}
	/* As landlock_prepare_run refuses it, in the same words. */
	if (!f->landlock_abi && !(p->allow_weaker & WEAK_LANDLOCK)) {
		snprintf(out, outsz, "setup-error: %s: the second filesystem layer is missing; set enforcement.allow_weaker [\"landlock\"] to run without it",
			 f->landlock_why[0] ? f->landlock_why : "Landlock: not available");
		return;
	}
	/* The cgroup layer's own decision (cgroup_prepare, then the cgroup
	 * made and removed again), said the way explain always said it. */
	struct cg_refusal why;
	if (run_cgroup_preflight(p, &why, &e) < 0) {
		if (why.no_hierarchy)
			snprintf(out, outsz, "setup-error: no usable cgroup hierarchy on this host");
		else if (why.missing)
			snprintf(out, outsz, "setup-error: the %s controller is not available", why.missing);
		else
			snprintf(out, outsz, "setup-error: %s", e.msg);
		return;
	}
	if (degraded)
		snprintf(out, outsz, "would run weaker: %s; the degraded boundary (allow_weaker \"namespaces\", docs/hosts.md): Landlock, seccomp, rlimits, the process group, %sno namespaces",
			 uwhy, !p->net_allow.n ? ""
			       : sup_degrade_proxy(f->landlock_abi, NULL, 0) ? "the proxy (every connect made by cordon), "
									     : "the host's network unbounded (allow_weaker \"network\"), ");
	else
		snprintf(out, outsz, "would run");
}

static void limit_text(enum limit_id id, uint64_t v, char *out, size_t outsz)
{
	if (id == LIM_WALL || id == LIM_CPU)
		snprintf(out, outsz, "%.3fs", (double)v / 1e9);
	else if (id == LIM_PIDS)
		snprintf(out, outsz, "%llu", (unsigned long long)v);
	else
		format_size(v, out, outsz);
}

void explain_path_text(buf *b, const char *mode, const char *path, const char *why)
{
	buf_printf(b, "  %-6s %s (%s)\n", mode, path, why);
}

void explain_path_json(jwriter *w, const char *path, const char *mode, const char *source)
{
	jw_obj_begin(w);
	jw_key_str(w, "path", path);
	jw_key_str(w, "mode", mode);
	jw_key_str(w, "source", source);
	jw_obj_end(w);
}

/* The length of the writable path a protected entry lies in (its path
 * without "/" and its name). */
static size_t protect_root_len(const struct model_entry *e)
{
	return strlen(e->path) - strlen(e->target) - 1;
}

/* The protected paths absent at the start, one line per writable path
 * (at its first such entry): the names only. */
static void text_absent_protected(buf *b, const struct boundary_model *m, size_t first, enum workspace_mode mode)
{
	const struct model_entry *e = &m->e[first];
	size_t wl = protect_root_len(e);
	for (size_t j = 0; j < first; j++)
		if (m->e[j].kind == MK_PROTECT && (m->e[j].flags & MODEL_NOT_YET) && protect_root_len(&m->e[j]) == wl &&
		    strncmp(m->e[j].path, e->path, wl) == 0)
			return;
	buf_printf(b, "  protected (absent: %s) %.*s:",
		   mode == WS_DIRECT ? "creation refused" : "held back from the apply", (int)wl, e->path);
	for (size_t j = first; j < m->n; j++)
		if (m->e[j].kind == MK_PROTECT && (m->e[j].flags & MODEL_NOT_YET) && protect_root_len(&m->e[j]) == wl &&
		    strncmp(m->e[j].path, e->path, wl) == 0)
			buf_printf(b, " %s", m->e[j].target);
	buf_printf(b, "\n");
}

static void json_paths(jwriter *w, const struct host_features *f, const struct boundary_model *m)
{
	jw_arr_begin(w);
	for (size_t i = 0; i < m->n; i++)
		if (explain_line(&m->e[i], explain_conds(f)))
			explain_path_json(w, m->e[i].explain_path, m->e[i].explain_mode, source_name(m->e[i].source));
	jw_arr_end(w);
}

/* Host character devices in the run's /dev: canonical when planned. */
static void devices_of(const cordon_policy *p, const struct boundary_model *m, bool plan_ok, strv *out)
{
	for (size_t i = 0; plan_ok && i < m->n; i++)
		if (m->e[i].kind == MK_DEVICE && !(m->e[i].flags & MODEL_SYSTEM))
			strv_push(out, m->e[i].path);
	for (size_t i = 0; !plan_ok && i < p->devices.n; i++)
		strv_push(out, p->devices.v[i]);
}

static size_t count_of(const char *const *v)
{
	size_t n = 0;
	while (v[n])
		n++;
	return n;
}

/* The variables the policy declares, by name (their values are not shown):
 * the first part of the model's environment. */
static size_t env_name_len(const struct model_run *r, size_t i)
{
	return strcspn(r->env.v[i], "=");
}

static void json_syscalls(jwriter *w, const struct model_run *r)
{
	jw_obj_begin(w);
	jw_key(w, "default_deny");
	jw_str_array(w, r->sys_default, count_of(r->sys_default));
	jw_key(w, "conditional");
	static const char *const cond[] = {"clone/unshare with CLONE_NEW*", "clone3 (ENOSYS)",
					   "ioctl TIOCSTI/TIOCLINUX", "personality weakening bits",
					   "socket families other than unix/inet/inet6/route-netlink, raw sockets"};
	jw_str_array(w, cond, ARRAY_SIZE(cond));
	jw_key_strv(w, "allow", &r->sys_allow);
	jw_key_strv(w, "deny", &r->sys_deny_policy);
	jw_key_str(w, "on_violation", r->kill_on_violation ? "kill" : "report");
	jw_key_bool(w, "report_file_denials", r->file_reports);
	jw_obj_end(w);
}

void explain_host_json(jwriter *w, const struct host_features *f)
{
	jw_obj_begin(w);
	jw_key_bool(w, "privileged", f->privileged);
	jw_key_bool(w, "user_ns", f->userns);
	jw_key_int(w, "landlock_abi", f->landlock_abi);
	jw_key(w, "landlock_missing");
	report_write_landlock_missing(w, f->landlock_abi);
	jw_key_bool(w, "seccomp", f->seccomp);
	jw_key_bool(w, "seccomp_notify", f->seccomp_notify);
	jw_key_str(w, "cgroup", f->cgroup);
	jw_key_bool(w, "cgroup_memory", f->cgroup_memory);
	jw_key_bool(w, "cgroup_pids", f->cgroup_pids);
	jw_obj_end(w);
}

void explain_injected_fields(jwriter *w, const struct cordon_secret *s)
{
	jw_key_str(w, "secret", s->name);
	jw_key_strv(w, "hosts", &s->inject_hosts);
	jw_key(w, "in");
	jw_arr_begin(w);
	if (s->in_header)
		jw_str(w, "header");
	if (s->in_query)
		jw_str(w, "query");
	jw_arr_end(w);
	jw_key_str(w, "placeholder_prefix", s->placeholder ? s->placeholder : "");
	jw_key_bool(w, "allow_plaintext", s->allow_plaintext);
}

/* "injected": the secrets the proxy injects, with their hosts (never a
 * value); the key is there only when one is (earlier outputs unchanged). */
static void json_injected(jwriter *w, const cordon_policy *p)
{
	bool any = false;
	for (size_t i = 0; i < p->nsecrets; i++) {
		const struct cordon_secret *s = &p->secrets[i];
		if (!s->inject)
			continue;
		if (!any) {
			jw_key(w, "injected");
			jw_arr_begin(w);
			any = true;
		}
		jw_obj_begin(w);
		explain_injected_fields(w, s);
		jw_obj_end(w);
	}
	if (any)
		jw_arr_end(w);
}

static char *render_json(const cordon_policy *p, char *const argv[], const struct host_features *f,
			 const struct run_plan *plan, const struct boundary_model *m, const struct model_run *r, const strv *devs,
			 const struct run_report *rep, bool plan_ok, const char *v)
{
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key_str(&w, "schema", "cordon.explain/1");
	jw_key_str(&w, "verdict", v);
	jw_key(&w, "command");
	size_t argc = 0;
	while (argv && argv[argc])
		argc++;
	jw_str_array(&w, (const char *const *)argv, argc);
	jw_key(&w, "paths");
	json_paths(&w, f, m);
	jw_key_str(&w, "cwd", plan_ok ? plan->cwd_in : NULL);
	jw_key_str(&w, "rootfs", plan_ok && plan->rootfs[0] ? plan->rootfs : p->root);
	if (plan_ok && p->image_workspace) {
		jw_key(&w, "image_workspace");
		jw_obj_begin(&w);
		jw_key_str(&w, "path", p->image_workspace);
		jw_key_str(&w, "host", plan->workspace);
		jw_obj_end(&w);
	} else {
		jw_key(&w, "image_workspace");
		jw_null(&w);
	}
	jw_key_str(&w, "workspace_mode", workspace_mode_name(policy_workspace_mode(p)));
	jw_key(&w, "env");
	jw_arr_begin(&w);
	for (size_t i = 0; i < r->env_declared; i++)
		jw_strn(&w, r->env.v[i], env_name_len(r, i));
	jw_arr_end(&w);
	jw_key(&w, "secrets");
	jw_arr_begin(&w);
	for (size_t i = 0; i < p->nsecrets; i++)
		jw_str(&w, p->secrets[i].name);
	jw_arr_end(&w);
	json_injected(&w, p);
	jw_key_strv(&w, "network", &p->net_allow);
	jw_key(&w, "network_rules");
	jw_arr_begin(&w);
	for (size_t i = 0; i < p->net_rules.n; i++) {
		const struct net_rule *nr = &p->net_rules.v[i];
		jw_obj_begin(&w);
		jw_key_str(&w, "host", nr->host);
		jw_key_strv(&w, "methods", &nr->methods);
		jw_key_strv(&w, "paths", &nr->paths);
		jw_key_bool(&w, "upgrade", nr->upgrade);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_key(&w, "limits");
	report_write_limits(&w, r->limits);
	jw_key(&w, "syscalls");
	json_syscalls(&w, r);
	jw_key(&w, "loopback_ports");
	jw_arr_begin(&w);
	for (size_t i = 0; i < p->nloopback_ports; i++)
		jw_uint(&w, p->loopback_ports[i]);
	jw_arr_end(&w);
	jw_key_strv(&w, "devices", devs);
	jw_key(&w, "ceiling");
	if (rep->ceiling_sha256[0]) {
		jw_obj_begin(&w);
		jw_key_str(&w, "path", rep->ceiling_path);
		jw_key_str(&w, "sha256", rep->ceiling_sha256);
		jw_key(&w, "grants");
		report_write_grants(&w, rep->grants, rep->ngrants);
		jw_obj_end(&w);
	} else {
		jw_null(&w);
	}
	jw_key(&w, "host");
	explain_host_json(&w, f);
	jw_obj_end(&w);
	return jw_take(&w);
}

static char *render_text(const cordon_policy *p, char *const argv[], const struct host_features *f,
			 const struct run_plan *plan, const struct boundary_model *m, const struct model_run *r, const strv *devs,
			 const struct run_report *rep, bool plan_ok, const char *v)
{
	buf b = {0};
	buf_printf(&b, "verdict: %s\n", v);
	if (argv && argv[0]) {
		buf_printf(&b, "command:");
		for (size_t i = 0; argv[i]; i++)
			buf_printf(&b, " %s", argv[i]);
		buf_printf(&b, "\n");
	}
	if (p->root)
		buf_printf(&b, "rootfs: %s (an image's top-level entries, read-only, in place of the host's /usr, /etc, /bin...)\n",
			   plan_ok && plan->rootfs[0] ? plan->rootfs : p->root);
	buf_printf(&b, "paths:\n");
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].kind == MK_PROTECT && (m->e[i].flags & MODEL_NOT_YET))
			text_absent_protected(&b, m, i, policy_workspace_mode(p));
		else if (explain_line(&m->e[i], explain_conds(f)))
			explain_path_text(&b, m->e[i].explain_mode, m->e[i].explain_path, source_name(m->e[i].source));
	for (size_t i = 0; i < devs->n; i++)
		buf_printf(&b, "  %-6s %s (host character device)\n", "dev", devs->v[i]);
	if (plan_ok)
		buf_printf(&b, "cwd: %s\n", plan->cwd_in);
	buf_printf(&b, "workspace mode: %s%s%s\n", workspace_mode_name(policy_workspace_mode(p)),
		   policy_workspace_mode(p) == WS_DIRECT ? " (writes reach the host at once)" :
		   policy_workspace_mode(p) == WS_OVERLAY ? " (writes go to a change set, applied when the run ends)" :
		   " (writes go to a change set, kept for review)",
		   p->image_workspace ? "; the image's workspace: never applied into the image, never direct" :
		   p->workspace_mode_asked ? "" : "; the default: direct where an overlay cannot be had, the report says why");
	if (plan_ok && p->image_workspace)
		buf_printf(&b, "workspace: %s, the image's %s (a change set over it, kept for review)\n",
			   p->image_workspace, plan->workspace);
	buf_printf(&b, "env:");
	for (size_t i = 0; i < r->env_declared; i++)
		buf_printf(&b, " %.*s", (int)env_name_len(r, i), r->env.v[i]);
	buf_printf(&b, "\nsecrets:");
	for (size_t i = 0; i < p->nsecrets; i++)
		buf_printf(&b, " %s", p->secrets[i].name);
	buf_printf(&b, "%s\n", p->nsecrets ? "" : " none");
	for (size_t i = 0; i < p->nsecrets; i++) {
		const struct cordon_secret *s = &p->secrets[i];
		if (!s->inject)
			continue;
		buf_printf(&b, "  %s: the run holds a placeholder%s%s; the proxy injects the value (%s%s%s) to", s->name,
			   s->placeholder ? " starting " : "", s->placeholder ? s->placeholder : "",
			   s->in_header ? "headers" : "", s->in_header && s->in_query ? ", " : "", s->in_query ? "query" : "");
		for (size_t k = 0; k < s->inject_hosts.n; k++)
			buf_printf(&b, " %s", s->inject_hosts.v[k]);
		buf_printf(&b, "%s\n", s->allow_plaintext ? " (plain HTTP too)" : " (over TLS only)");
	}
	if (policy_intercepts(p) && p->net_allow.n)
		buf_printf(&b, "  TLS opened by the proxy for those hosts and the restricted ones below; the run trusts %s%s%s\n",
			   CORDON_CA_FILE, p->upstream_ca ? "; upstreams verified against " : "",
			   p->upstream_ca ? p->upstream_ca : "");
	buf_printf(&b, "network:");
	for (size_t i = 0; i < p->net_allow.n; i++)
		buf_printf(&b, " %s", p->net_allow.v[i]);
	buf_printf(&b, "%s\n", p->net_allow.n ? "" : " none (own loopback only)");
	for (size_t i = 0; i < p->net_rules.n; i++) {
		char d[400];
		if (!pxrule_restricted(&p->net_rules.v[i]))
			continue;
		pxrule_describe(&p->net_rules.v[i], d, sizeof(d));
		buf_printf(&b, "  only: %s\n", d);
	}
	buf_printf(&b, "limits:\n");
	bool any = false;
	for (int i = 0; i < LIM_COUNT; i++) {
		if (!r->limits[i].set)
			continue;
		char t[64];
		limit_text(i, r->limits[i].value, t, sizeof(t));
		buf_printf(&b, "  %-10s %s (%s)\n", limit_name(i), t, source_name(r->limits[i].src));
		any = true;
	}
	if (!any)
		buf_printf(&b, "  none\n");
	buf_printf(&b, "syscalls: default deny list (%zu calls, see docs/seccomp.md)", count_of(r->sys_default));
	for (size_t i = 0; i < r->sys_allow.n; i++)
		buf_printf(&b, "%s%s", i ? " " : "; re-allowed: ", r->sys_allow.v[i]);
	for (size_t i = 0; i < r->sys_deny_policy.n; i++)
		buf_printf(&b, "%s%s", i ? " " : "; also denied: ", r->sys_deny_policy.v[i]);
	buf_printf(&b, "; on violation: %s\n", r->kill_on_violation ? "kill" : "report");
	if (rep->ceiling_sha256[0]) {
		buf_printf(&b, "ceiling: %s (sha256 %.12s…)\n", rep->ceiling_path, rep->ceiling_sha256);
		for (size_t i = 0; i < rep->ngrants; i++)
			buf_printf(&b, "  %-7s %-8s %s: %s\n", rep->grants[i].allowed ? "allowed" : "REFUSED",
				   rep->grants[i].kind, rep->grants[i].target, rep->grants[i].rule);
	} else {
		buf_printf(&b, "ceiling: none\n");
	}
	explain_host_text(&b, f);
	if (b.p == NULL)
		buf_append(&b, "", 0);
	return b.p;
}

void explain_host_text(buf *b, const struct host_features *f)
{
	buf_printf(b, "host: %s, user namespaces %s, landlock ABI %d, seccomp %s (notify %s), cgroup %s (memory %s, pids %s)\n",
		   f->privileged ? "root" : "unprivileged", f->userns ? "yes" : "no", f->landlock_abi,
		   f->seccomp ? "yes" : "no", f->seccomp_notify ? "yes" : "no", f->cgroup,
		   f->cgroup_memory ? "yes" : "no", f->cgroup_pids ? "yes" : "no");
	for (const char *const *lm = landlock_missing(f->landlock_abi); *lm; lm++)
		buf_printf(b, "  landlock ABI %d lacks %s\n", f->landlock_abi, *lm);
	if (f->userns_why[0])
		buf_printf(b, "  %s\n", f->userns_why);
	if (f->landlock_why[0])
		buf_printf(b, "  %s\n", f->landlock_why);
}

char *explain_render_model(const cordon_policy *p, char *const argv[], bool json, const struct host_features *f,
			   const struct run_plan *plan, const struct boundary_model *m, const struct model_run *r,
			   const strv *devs, const struct run_report *rep, bool plan_ok, const char *verdict)
{
	return json ? render_json(p, argv, f, plan, m, r, devs, rep, plan_ok, verdict)
		    : render_text(p, argv, f, plan, m, r, devs, rep, plan_ok, verdict);
}

char *explain_render_verdict(cordon_policy *p, char *const argv[], bool json, bool *would_run)
{
	struct host_features f;
	struct run_plan plan;
	struct run_report rep;
	bool plan_ok;
	char v[1200];
	probe_host(&f, policy_opts(p)->cgroup);
	memset(&plan, 0, sizeof(plan));
	report_init(&rep);
	verdict(p, &f, &plan, &rep, &plan_ok, v, sizeof(v));
	*would_run = strncmp(v, "would run", 9) == 0; /* "would run weaker" too */
	/* The plan's model; where the plan stopped short of it, the model of
	 * what it got to (cordon's own view alone if not even that). */
	struct boundary_model own = {0};
	const struct boundary_model *m = &plan.model;
	cordon_error e;
	if (!plan.model.n) {
		if (model_build(&own, plan_ok ? &plan : NULL, plan_ok ? p : NULL, &e) < 0) {
			run_plan_free(&plan);
			report_free(&rep);
			return NULL;
		}
		m = &own;
	}
	/* The run's part (environment, limits, syscalls): the plan's, or,
	 * where the pre-flight stopped before it, built from p as it stands. */
	struct boundary_model runm = {0};
	const struct model_run *r = &m->run;
	if (!r->built) {
		if (model_build_run(&runm, p, "", &e) < 0) {
			model_free(&own);
			run_plan_free(&plan);
			report_free(&rep);
			return NULL;
		}
		r = &runm.run;
	}
	strv devs = {0};
	devices_of(p, m, plan_ok, &devs);
	char *out = explain_render_model(p, argv, json, &f, &plan, m, r, &devs, &rep, plan_ok, v);
	strv_free(&devs);
	model_free(&runm);
	model_free(&own);
	run_plan_free(&plan);
	report_free(&rep);
	return out;
}
