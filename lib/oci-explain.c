/* cordon explain --bundle DIR (docs/oci.md, "cordon explain --bundle"): the
 * boundary cordon-oci would give a bundle, without running anything: the
 * verdict (create's own refusals, oci_config_check), namespaces, the id
 * mapping, the mounts with ro/rw, Landlock's grants (oci_landlock_grants,
 * the same list init expands), seccomp (the config's profile and cordon's
 * deny list), the cgroup's limits, the annotations cordon reads, and the
 * host's capabilities in `cordon explain`'s own words. Text or JSON. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <seccomp.h>
#include "oci-explain.h"
#include "error.h"
#include "explain.h"
#include "json.h"
#include "oci-create.h"
#include "oci-egress.h"
#include "oci-slots.h"
#include "oci-landlock.h"
#include "oci-model.h"
#include "oci-state.h"
#include "policy.h"
#include "probe.h"
#include "proxy.h"
#include "seccomp-policy.h"
#include "units.h"

/* The annotations cordon-oci reads, and what each does. */
static const char *const annotations[][2] = {
	{"run.cordon.report", "a second copy of the report (cordon.report/1) at this path when the container stops"},
	{OCI_POLICY_ANNOTATION, "egress through cordon's proxy (above)"},
};

struct bx {
	const struct oci_config *c;
	const struct oci_ll_grants *g;
	const struct boundary_model *m; /* the container's (lib/oci-model.h) */
	const struct host_features *f;
	const char *verdict;
	const strv *env_added; /* what oci_egress_env adds to the process's env */
};

static size_t count_of(const char *const *v)
{
	size_t n = 0;
	while (v[n])
		n++;
	return n;
}

static const char *ns_how(const struct oci_config *c, int k)
{
	if (c->ns_path[k])
		return "joined";
	if (k == OCI_NS_USER)
		return "new";
	if (c->ns_new[k] || k == OCI_NS_MNT)
		return "new";
	return "the caller's";
}

static const char *seccomp_default(const struct oci_config *c)
{
	const jnode *l = json_get(c->json, "linux");
	const jnode *s = l ? json_get(l, "seccomp") : NULL;
	const jnode *d = s ? json_get(s, "defaultAction") : NULL;
	return d && d->type == J_STR ? d->str : "?";
}

static void text_limits(buf *b, const struct oci_config *c)
{
	char t[64];
	bool any = false;
	if (c->mem_limit >= 0) {
		format_size((uint64_t)c->mem_limit, t, sizeof(t));
		buf_printf(b, "  %-10s %s\n", "memory", t);
		any = true;
	}
	if (c->mem_swap >= 0) {
		format_size((uint64_t)c->mem_swap, t, sizeof(t));
		buf_printf(b, "  %-10s %s (memory and swap)\n", "swap", t);
		any = true;
	}
	if (c->pids_limit > 0) {
		buf_printf(b, "  %-10s %lld\n", "pids", (long long)c->pids_limit);
		any = true;
	}
	if (c->cpu_shares || c->cpu_quota > 0 || c->cpus) {
		buf_printf(b, "  %-10s", "cpu");
		if (c->cpu_shares)
			buf_printf(b, " shares %llu", (unsigned long long)c->cpu_shares);
		if (c->cpu_quota > 0)
			buf_printf(b, " quota %lld/%llu us", (long long)c->cpu_quota,
				   (unsigned long long)(c->cpu_period ? c->cpu_period : 100000));
		if (c->cpus)
			buf_printf(b, " cpus %s", c->cpus);
		buf_printf(b, "\n");
		any = true;
	}
	if (!any)
		buf_printf(b, "  none\n");
}

/* The directories a carved grant leaves without new names: from its path
 * down to the parent of each read-only path below it. */
static void text_carve_way(buf *b, const struct oci_ll_grants *g, const char *path)
{
	strv way = {0};
	for (size_t k = 0; k < g->except.n; k++) {
		const char *e = g->except.v[k];
		if (strcmp(e, path) == 0 || !path_has_prefix(e, path))
			continue;
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s", e);
		for (char *s = strrchr(p, '/'); s; s = strrchr(p, '/')) {
			if (s == p)
				s[1] = '\0';
			else
				*s = '\0';
			bool seen = false;
			for (size_t i = 0; i < way.n; i++)
				seen |= strcmp(way.v[i], p) == 0;
			if (!seen)
				strv_push(&way, p);
			if (strcmp(p, path) == 0 || strcmp(p, "/") == 0)
				break;
		}
	}
	buf_printf(b, "  %-13s no new names directly in", "");
	for (size_t i = 0; i < way.n; i++)
		buf_printf(b, " %s", way.v[i]);
	buf_printf(b, " (the grant is carved around the read-only paths)\n");
	strv_free(&way);
}

static void text_landlock(buf *b, const struct bx *x)
{
	if (!x->f->landlock_abi) {
		buf_printf(b, "landlock: none on this host (best effort: the mounts alone confine files)\n");
		return;
	}
	buf_printf(b, "landlock: ABI %d, no rights on the host outside the container's view\n", x->f->landlock_abi);
	for (size_t i = 0; i < x->g->n; i++) {
		const struct oci_ll_grant *g = &x->g->g[i];
		buf_printf(b, "  %-13s %s", g->device ? "device" : g->write ? "write" : "read, execute", g->path);
		bool first = true;
		for (size_t k = 0; g->carve && k < x->g->except.n; k++)
			if (strcmp(x->g->except.v[k], g->path) != 0 && path_has_prefix(x->g->except.v[k], g->path)) {
				buf_printf(b, "%s%s", first ? " except " : ", ", x->g->except.v[k]);
				first = false;
			}
		buf_printf(b, " (%s)\n", g->why);
		if (!first)
			text_carve_way(b, x->g, g->path);
	}
}

/* The secrets delivered as files ("mount"): init's tmpfs (names and
 * sources, never a value); an injected one's file holds its placeholder. */
static void text_secret_files(buf *b, const cordon_policy *p)
{
	for (size_t i = 0; i < p->nsecrets; i++) {
		const struct cordon_secret *s = &p->secrets[i];
		if (s->mount && !s->inject)
			buf_printf(b, "  secret %s: a file at %s (0400, the process's user's, on a read-only tmpfs of its "
				      "own); the value read at create from %s %s\n", s->name, s->mount,
				   s->from_env ? "cordon-oci's variable" : "the file", s->from_env ? s->from_env : s->from_file);
	}
}

/* network.loopback_ports: Landlock holds TCP to them (oci-landlock.c) */
static void text_loopback_ports(buf *b, const cordon_policy *p)
{
	if (!p->nloopback_ports)
		return;
	buf_printf(b, "  ports ");
	for (size_t i = 0; i < p->nloopback_ports; i++)
		buf_printf(b, " %u", p->loopback_ports[i]);
	buf_printf(b, " (network.loopback_ports): TCP bind and connect to these ports only%s, by Landlock (ABI 4+; "
		      "%s); each refused one a network denial\n",
		   p->net_allow.n ? " and connect to the proxy's" : "",
		   landlock_abi() >= 4 ? "this kernel has it" : "not on this kernel: not held");
}

/* run.cordon.policy's network section: the hosts the proxy admits, the
 * rules on their requests, the variables the process gets. */
static void text_egress(buf *b, const struct bx *x)
{
	const cordon_policy *p = x->c->egress;
	if (!p) {
		buf_printf(b, "egress: as the config's network namespace has it (no %s network section)\n",
			   OCI_POLICY_ANNOTATION);
		return;
	}
	if (!p->net_allow.n) {
		buf_printf(b, "egress: none (%s allows no host; the container's own network namespace has lo "
			      "alone)\n", OCI_POLICY_ANNOTATION);
		text_secret_files(b, p);
		text_loopback_ports(b, p);
		return;
	}
	if (x->c->pod_proxy)
		buf_printf(b, "egress: through its pod's proxy at 127.0.0.1:%d, the sandbox container's, whose network "
			      "namespace it joins (%s, the sandbox's):\n", PROXY_PORT, OCI_POLICY_ANNOTATION);
	else if (x->c->pod_net)
		buf_printf(b, "egress: through cordon's proxy at 127.0.0.1:%d in the pod's own network namespace, the "
			      "pod's containers joining it, its upstream connections made in %s (%s), every refusal "
			      "in the report's denials:\n", PROXY_PORT, x->c->pod_net, OCI_POLICY_ANNOTATION);
	else
		buf_printf(b, "egress: through cordon's proxy at 127.0.0.1:%d in the container's own network namespace "
			      "(%s), every refusal in the report's denials:\n", PROXY_PORT, OCI_POLICY_ANNOTATION);
	bool tls = policy_intercepts(p);
	for (size_t i = 0; i < p->net_rules.n; i++) {
		char d[400];
		pxrule_describe(&p->net_rules.v[i], d, sizeof(d));
		buf_printf(b, "  allow  %s%s\n", d,
			   pxrule_restricted(&p->net_rules.v[i]) ? " (HTTPS too: the proxy opens its TLS)" : "");
	}
	if (tls) {
		buf_printf(b, "  tls    the proxy opens HTTPS to hosts with restricted rules or an injected secret: "
			      "a CA of the run's (made at create; its key stays in the supervisor), the container "
			      "trusts the bundle at %s (read-only); upstreams verified against %s\n",
			   CORDON_CA_FILE, p->upstream_ca ? p->upstream_ca : "the host's trust store");
		buf_printf(b, "         (any other host's CONNECT stays a tunnel, as with cordon run)\n");
	}
	for (size_t i = 0; tls && i < p->nsecrets; i++) {
		const struct cordon_secret *s = &p->secrets[i];
		if (!s->inject)
			continue;
		buf_printf(b, "  secret %s: the process gets a placeholder (%s + 32 hex digits)%s%s; the value, read at "
			      "create from %s %s, goes in the %s%s%s of requests to",
			   s->name, s->placeholder ? s->placeholder : "\"\"", s->mount ? " as the file " : "",
			   s->mount ? s->mount : "", s->from_env ? "cordon-oci's variable" : "the file",
			   s->from_env ? s->from_env : s->from_file, s->in_header ? "headers" : "",
			   s->in_header && s->in_query ? " and " : "", s->in_query ? "target" : "");
		for (size_t k = 0; k < s->inject_hosts.n; k++)
			buf_printf(b, " %s", s->inject_hosts.v[k]);
		buf_printf(b, "%s\n", s->allow_plaintext ? " (plain HTTP too)" : " (over TLS only)");
	}
	text_secret_files(b, p);
	text_loopback_ports(b, p);
	buf_printf(b, "  env   ");
	for (size_t i = 0; i < x->env_added->n; i++)
		buf_printf(b, " %.*s", (int)strcspn(x->env_added->v[i], "="), x->env_added->v[i]);
	buf_printf(b, "%s\n", x->env_added->n ? "" : " none (the config sets them all)");
}

static char *render_text(const struct bx *x)
{
	const struct oci_config *c = x->c;
	buf b = {0};
	buf_printf(&b, "verdict: %s\n", x->verdict);
	buf_printf(&b, "bundle: %s\n", c->bundle);
	buf_printf(&b, "command:");
	for (size_t i = 0; i < c->args.n; i++)
		buf_printf(&b, " %s", c->args.v[i]);
	buf_printf(&b, "\nuser: uid %u gid %u", (unsigned)c->uid, (unsigned)c->gid);
	buf_printf(&b, "; capabilities (in its own user namespace only):");
	int ncap = 0;
	for (int i = 0; i < 64; i++)
		if (c->has_caps && (c->caps[0] & (1ull << i)))
			buf_printf(&b, " %s", oci_cap_name(i)), ncap++;
	buf_printf(&b, "%s%s\n", ncap ? "" : " none", c->nnp ? "; noNewPrivileges" : "");
	buf_printf(&b, "namespaces:");
	for (int k = 0; k < OCI_NS_N; k++)
		buf_printf(&b, "%s %s %s%s%s", k ? ";" : "", oci_ns_names[k], ns_how(c, k), c->ns_path[k] ? " " : "",
			   c->ns_path[k] ? c->ns_path[k] : "");
	buf_printf(&b, "\nid mapping:");
	if (c->ns_path[OCI_NS_USER])
		buf_printf(&b, " the joined user namespace's (no host id range taken):");
	else if (!c->nuidm)
		buf_printf(&b, " 65536 host ids of a slot taken at create, from 0x%x (container uid 0 is never the "
			       "host's root)", OCI_SLOT_BASE);
	for (size_t i = 0; i < c->nuidm; i++)
		buf_printf(&b, " uid %u -> %u (%u)", c->uidm[i].inner, c->uidm[i].outer, c->uidm[i].size);
	for (size_t i = 0; i < c->ngidm; i++)
		buf_printf(&b, " gid %u -> %u (%u)", c->gidm[i].inner, c->gidm[i].outer, c->gidm[i].size);
	buf_printf(&b, "; the rootfs idmapped to it\n");
	if (c->ns_path[OCI_NS_MNT])
		buf_printf(&b, "paths: the joined mount namespace's tree, as it is (root.path, mounts, devices, "
			       "maskedPaths, readonlyPaths are not applied to it; Landlock's grants below are)\n");
	else
		buf_printf(&b, "paths:\n");
	/* the container's boundary model (lib/oci-model.h), one line an entry */
	for (size_t i = 0; i < x->m->n; i++)
		explain_path_text(&b, x->m->e[i].explain_mode, x->m->e[i].explain_path, x->m->e[i].reason);
	text_landlock(&b, x);
	buf_printf(&b, "seccomp: ");
	if (c->seccomp.present)
		buf_printf(&b, "the config's profile (default %s, %zu rule%s), then ", seccomp_default(c),
			   c->seccomp.nrules, c->seccomp.nrules == 1 ? "" : "s");
	buf_printf(&b, "cordon's deny list (%zu calls, EPERM, each reported in the report's denials; see "
		       "docs/seccomp.md)%s\n",
		   count_of(seccomp_default_deny), c->seccomp.present ? " stacked on it" : "");
	buf_printf(&b, "limits (cgroup %s):\n", c->cgroups_path ? c->cgroups_path : "/cordon-oci/ID");
	text_limits(&b, c);
	text_egress(&b, x);
	buf_printf(&b, "annotations:");
	bool any = false;
	for (size_t i = 0; i < c->ann_k.n; i++)
		for (size_t k = 0; k < sizeof(annotations) / sizeof(annotations[0]); k++)
			if (strcmp(c->ann_k.v[i], annotations[k][0]) == 0) {
				if (strcmp(annotations[k][0], OCI_POLICY_ANNOTATION) == 0) /* JSON: above */
					buf_printf(&b, "\n  %s: %s", c->ann_k.v[i], annotations[k][1]);
				else
					buf_printf(&b, "\n  %s=%s: %s", c->ann_k.v[i], c->ann_v.v[i], annotations[k][1]);
				any = true;
			}
	buf_printf(&b, "%s\n", any ? "" : " none that cordon reads");
	explain_host_text(&b, x->f);
	return b.p;
}

static void json_limits(jwriter *w, const struct oci_config *c)
{
	jw_obj_begin(w);
	const struct { const char *k; int64_t v; } v[] = {
		{"memory", c->mem_limit}, {"memory_swap", c->mem_swap}, {"pids", c->pids_limit},
		{"cpu_quota", c->cpu_quota},
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (v[i].v >= 0 && !(v[i].v == 0 && strcmp(v[i].k, "pids") == 0)) {
			jw_key(w, v[i].k);
			jw_int(w, v[i].v);
		}
	if (c->cpu_shares) {
		jw_key(w, "cpu_shares");
		jw_uint(w, c->cpu_shares);
	}
	if (c->cpu_period) {
		jw_key(w, "cpu_period");
		jw_uint(w, c->cpu_period);
	}
	if (c->cpus) {
		jw_key(w, "cpus");
		jw_str(w, c->cpus);
	}
	jw_obj_end(w);
}

static void json_landlock(jwriter *w, const struct bx *x)
{
	jw_obj_begin(w);
	jw_key(w, "abi");
	jw_int(w, x->f->landlock_abi);
	jw_key(w, "grants");
	jw_arr_begin(w);
	for (size_t i = 0; i < x->g->n; i++) {
		const struct oci_ll_grant *g = &x->g->g[i];
		jw_obj_begin(w);
		jw_key(w, "path");
		jw_str(w, g->path);
		jw_key(w, "access");
		jw_str(w, g->device ? "device" : g->write ? "write" : "read");
		jw_key(w, "except");
		jw_arr_begin(w);
		for (size_t k = 0; g->carve && k < x->g->except.n; k++)
			if (strcmp(x->g->except.v[k], g->path) != 0 && path_has_prefix(x->g->except.v[k], g->path))
				jw_str(w, x->g->except.v[k]);
		jw_arr_end(w);
		jw_key(w, "why");
		jw_str(w, g->why);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
}

/* the model's entries: path, mode, source (the host's path or the
 * config's source; else the reason: "maskedPaths", ...) */
static void json_paths(jwriter *w, const struct boundary_model *m)
{
	jw_arr_begin(w);
	for (size_t i = 0; i < m->n; i++)
		explain_path_json(w, m->e[i].explain_path, m->e[i].explain_mode,
				  m->e[i].host ? m->e[i].host : m->e[i].reason);
	jw_arr_end(w);
}

/* null without a network section; else the proxy (null when nothing is
 * allowed), the rules, the variables added. */
static void json_egress(jwriter *w, const struct bx *x)
{
	const cordon_policy *p = x->c->egress;
	if (!p) {
		jw_null(w);
		return;
	}
	jw_obj_begin(w);
	jw_key(w, "proxy");
	if (p->net_allow.n)
		jw_str(w, "127.0.0.1:3128");
	else
		jw_null(w);
	jw_key(w, "allow");
	jw_arr_begin(w);
	for (size_t i = 0; i < p->net_rules.n; i++) {
		const struct net_rule *r = &p->net_rules.v[i];
		jw_obj_begin(w);
		jw_key_str(w, "host", r->host);
		jw_key_strv(w, "methods", &r->methods);
		jw_key_strv(w, "paths", &r->paths);
		jw_key_bool(w, "upgrade", r->upgrade);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_key(w, "env");
	jw_arr_begin(w);
	for (size_t i = 0; i < x->env_added->n; i++)
		jw_strn(w, x->env_added->v[i], strcspn(x->env_added->v[i], "="));
	jw_arr_end(w);
	/* TLS interception: null when the proxy opens none */
	bool tls = p->net_allow.n && policy_intercepts(p);
	jw_key(w, "tls");
	if (tls) {
		jw_obj_begin(w);
		jw_key_str(w, "ca_file", CORDON_CA_FILE);
		jw_key(w, "upstream_ca");
		if (p->upstream_ca)
			jw_str(w, p->upstream_ca);
		else
			jw_null(w);
		jw_obj_end(w);
	} else
		jw_null(w);
	/* the injected secrets: names and sources, never a value */
	jw_key(w, "injected");
	jw_arr_begin(w);
	for (size_t i = 0; tls && i < p->nsecrets; i++) {
		const struct cordon_secret *s = &p->secrets[i];
		if (!s->inject)
			continue;
		jw_obj_begin(w);
		explain_injected_fields(w, s);
		jw_key(w, "from");
		jw_obj_begin(w);
		jw_key_str(w, s->from_env ? "env" : "file", s->from_env ? s->from_env : s->from_file);
		jw_obj_end(w);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_key(w, "loopback_ports");
	jw_arr_begin(w);
	for (size_t i = 0; i < p->nloopback_ports; i++)
		jw_uint(w, p->loopback_ports[i]);
	jw_arr_end(w);
	/* the secrets delivered as files (an injected one's holds its
	 * placeholder): names, paths and sources, never a value */
	jw_key(w, "files");
	jw_arr_begin(w);
	for (size_t i = 0; i < p->nsecrets; i++) {
		const struct cordon_secret *s = &p->secrets[i];
		if (!s->mount)
			continue;
		jw_obj_begin(w);
		jw_key_str(w, "secret", s->name);
		jw_key_str(w, "path", s->mount);
		jw_key_bool(w, "injected", s->inject);
		jw_key(w, "from");
		jw_obj_begin(w);
		jw_key_str(w, s->from_env ? "env" : "file", s->from_env ? s->from_env : s->from_file);
		jw_obj_end(w);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
}

static char *render_json(const struct bx *x)
{
	const struct oci_config *c = x->c;
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "schema");
	jw_str(&w, "cordon.explain-bundle/1");
	jw_key(&w, "verdict");
	jw_str(&w, x->verdict);
	jw_key(&w, "bundle");
	jw_str(&w, c->bundle);
	jw_key(&w, "command");
	jw_str_array(&w, (const char *const *)c->args.v, c->args.n);
	jw_key(&w, "root");
	jw_obj_begin(&w);
	jw_key(&w, "path");
	jw_str(&w, c->root);
	jw_key(&w, "readonly");
	jw_bool(&w, c->readonly);
	jw_obj_end(&w);
	jw_key(&w, "namespaces");
	jw_obj_begin(&w);
	for (int k = 0; k < OCI_NS_N; k++) {
		jw_key(&w, oci_ns_names[k]);
		jw_str(&w, c->ns_path[k] ? c->ns_path[k] : ns_how(c, k));
	}
	jw_obj_end(&w);
	jw_key(&w, "paths");
	json_paths(&w, x->m);
	jw_key(&w, "readonly_paths");
	jw_str_array(&w, (const char *const *)c->ro_paths.v, c->ro_paths.n);
	jw_key(&w, "masked_paths");
	jw_str_array(&w, (const char *const *)c->masked.v, c->masked.n);
	jw_key(&w, "landlock");
	json_landlock(&w, x);
	jw_key(&w, "seccomp");
	jw_obj_begin(&w);
	jw_key(&w, "config_default");
	if (c->seccomp.present)
		jw_str(&w, seccomp_default(c));
	else
		jw_null(&w);
	jw_key(&w, "config_rules");
	jw_uint(&w, c->seccomp.nrules);
	jw_key(&w, "deny_list");
	jw_str_array(&w, seccomp_default_deny, count_of(seccomp_default_deny));
	jw_obj_end(&w);
	jw_key(&w, "limits");
	json_limits(&w, c);
	jw_key(&w, "egress");
	json_egress(&w, x);
	jw_key(&w, "annotations");
	jw_obj_begin(&w);
	for (size_t i = 0; i < c->ann_k.n; i++)
		for (size_t k = 0; k < sizeof(annotations) / sizeof(annotations[0]); k++)
			if (strcmp(c->ann_k.v[i], annotations[k][0]) == 0) {
				jw_key(&w, c->ann_k.v[i]);
				jw_str(&w, c->ann_v.v[i]);
			}
	jw_obj_end(&w);
	jw_key(&w, "host");
	explain_host_json(&w, x->f);
	jw_obj_end(&w);
	if (jw_finish(&w) < 0) {
		buf_free(&w.out);
		return NULL;
	}
	return w.out.p;
}

char *oci_explain_bundle(const char *bundle, bool json, bool *would_run, cordon_error *err)
{
	char dir[PATH_MAX];
	if (!realpath(bundle, dir)) {
		cordon_err_errno(err, "--bundle %s", bundle);
		return NULL;
	}
	struct oci_config c;
	if (oci_config_load(dir, &c, err) < 0) {
		oci_config_free(&c);
		return NULL;
	}
	cordon_error refusal = {0};
	char verdict[sizeof(refusal.msg) + 16] = "would run";
	/* create's order: the egress policy (which may give the container a
	 * network namespace), then the config's refusals */
	struct oci_nsjoin jn = {.user = -1, .mnt = -1};
	if (oci_egress_load(&c, &refusal) < 0 || oci_config_check(&c, &jn, &refusal) < 0 ||
	    oci_nsjoin_maps(&jn, &c, &refusal) < 0)
		snprintf(verdict, sizeof(verdict), "refused: %s", refusal.msg);
	oci_nsjoin_close(&jn); /* the maps read, as create reads them */
	*would_run = strcmp(verdict, "would run") == 0;
	struct boundary_model m;
	if (oci_model_build(&c, &m, err) < 0) {
		oci_config_free(&c);
		return NULL;
	}
	struct oci_ll_grants g;
	if (oci_landlock_grants_of(&m, &g, err) < 0) {
		model_free(&m);
		oci_config_free(&c);
		return NULL;
	}
	struct host_features f;
	probe_host(&f, NULL);
	strv env_added = {0};
	if (oci_egress_env_added(&c, &env_added, err) < 0) {
		oci_landlock_grants_free(&g);
		model_free(&m);
		oci_config_free(&c);
		return NULL;
	}
	struct bx x = {.c = &c, .g = &g, .m = &m, .f = &f, .verdict = verdict, .env_added = &env_added};
	char *out = json ? render_json(&x) : render_text(&x);
	if (!out)
		cordon_oom(err);
	strv_free(&env_added);
	oci_landlock_grants_free(&g);
	model_free(&m);
	oci_config_free(&c);
	return out;
}
