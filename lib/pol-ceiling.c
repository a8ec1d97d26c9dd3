#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pol-ceiling.h"
#include "cleanup.h"
#include "error.h"
#include "hash.h"
#include "model.h"
#include "plan.h"
#include "pol-parse.h"
#include "proxy.h"
#include <strings.h>

#define DEFAULT_CEILING "/etc/cordon/ceiling.json"

int ceiling_resolve(const char *flag, const char *opt, char *out, size_t outsz, bool *have,
		    cordon_error *err)
{
	*have = true;
	if (flag && *flag)
		snprintf(out, outsz, "%s", flag);
	else if (opt && *opt)
		snprintf(out, outsz, "%s", opt);
	else if (access(DEFAULT_CEILING, F_OK) == 0)
		snprintf(out, outsz, "%s", DEFAULT_CEILING);
	else
		*have = false;
	(void)err;
	return 0;
}

int ceiling_load(const char *path, struct ceiling *c, cordon_error *err)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->p = policy_new();
	if (!c->p)
		return cordon_oom(err);
	if (policy_load_file(c->p, path, err) < 0)
		return cordon_err_wrap(err, "ceiling");
	if (c->p->protect.n)
		return cordon_err(err, 0, "ceiling %s: filesystem.protect has no meaning in a ceiling (it limits what a task may unprotect: filesystem.unprotect)",
				  path);
	/* The hash is of the file as written: the operator's exact text. */
	FILE *f = fopen(path, "re");
	if (!f)
		return cordon_err_errno(err, "ceiling %s", path);
	sha256_ctx *h = sha256_new();
	char b[8192];
	size_t n;
	while ((n = fread(b, 1, sizeof(b), f)) > 0)
		sha256_update(h, b, n);
	fclose(f);
	sha256_final_hex(h, c->sha256);
	return 0;
}

void ceiling_free(struct ceiling *c)
{
	policy_free(c->p);
	c->p = NULL;
}

static int grant(struct ceiling_result *r, const char *kind, const char *target, bool allowed,
		 const char *rule)
{
	struct grant *g = realloc(r->g, (r->n + 1) * sizeof(*g));
	if (!g)
		return -1;
	r->g = g;
	g = &r->g[r->n++];
	snprintf(g->kind, sizeof(g->kind), "%s", kind);
	snprintf(g->target, sizeof(g->target), "%s", target);
	g->allowed = allowed;
	snprintf(g->rule, sizeof(g->rule), "%s", rule);
	if (!allowed) {
		buf b = {0};
		if (buf_printf(&b, "%s %s: %s", kind, target, rule) < 0 || strv_push_take(&r->excess, b.p) < 0)
			return -1;
	}
	return 0;
}

/* A ceiling prefix in canonical form: resolved if it exists, else lexical. */
static void canon(const char *p, char *out, size_t outsz)
{
	char real[PATH_MAX];
	if (realpath(p, real))
		snprintf(out, outsz, "%s", real);
	else if (path_normalize(p, out, outsz) < 0)
		snprintf(out, outsz, "%s", p);
}

/* Is path under one of the ceiling's mounts of the given modes? Fills the
 * matching prefix, or the list of prefixes for the message. */
static bool under(const cordon_policy *c, const char *path, unsigned modes, char *rule, size_t rulesz)
{
	buf list = {0};
	bool ok = false;
	for (size_t i = 0; i < c->nmounts && !ok; i++) {
		if (!(modes & (1u << c->mounts[i].mode)))
			continue;
		char pre[PATH_MAX];
		canon(c->mounts[i].path, pre, sizeof(pre));
		if (path_has_prefix(path, pre)) {
			snprintf(rule, rulesz, "under %s prefix %s", mount_mode_name(c->mounts[i].mode), pre);
			ok = true;
		}
		buf_printf(&list, "%s%s", list.len ? ", " : "", pre);
	}
	if (!ok)
		snprintf(rule, rulesz, "(%s)", list.p ? list.p : "none");
	buf_free(&list);
	return ok;
}

static int check_paths(const cordon_policy *c, const cordon_policy *task, const struct run_plan *plan,
		       struct ceiling_result *r)
{
	if (!(c->sections & SEC_FILESYSTEM))
		return 0;
	const unsigned RO = 1u << MOUNT_RO, RW = 1u << MOUNT_RW, TMP = 1u << MOUNT_TMPFS;
	char rule[600], msg[700];
	for (size_t i = 0; i < plan->nmounts; i++) {
		const struct cordon_mount *m = &plan->mounts[i];
		bool ok;
		if (m->mode == MOUNT_TMPFS) {
			if (!(c->sections & SEC_FS_TMPFS))
				ok = true, snprintf(rule, sizeof(rule), "tmpfs is not limited by the ceiling");
			else
				ok = under(c, m->path, TMP, rule, sizeof(rule));
			if (!ok)
				snprintf(msg, sizeof(msg), "not under any tmpfs prefix of the ceiling %s", rule);
		} else if (m->mode == MOUNT_RO) {
			ok = under(c, m->path, RO | RW, rule, sizeof(rule));
			if (!ok)
				snprintf(msg, sizeof(msg), "not under any read or write prefix of the ceiling %s", rule);
		} else {
			ok = under(c, m->path, RW, rule, sizeof(rule));
			if (!ok)
				snprintf(msg, sizeof(msg), "not under any write prefix of the ceiling %s", rule);
		}
		const char *kind = m->mode == MOUNT_TMPFS ? "tmpfs" : m->mode == MOUNT_RO ? "read" : "write";
		if (grant(r, kind, m->path, ok, ok ? rule : msg) < 0)
			return -1;
	}
	/* Devices: under a device prefix of the ceiling; a ceiling that limits
	 * the filesystem without listing devices allows none. */
	for (size_t i = 0; i < plan->devices.n; i++) {
		const char *d = plan->devices.v[i];
		bool ok = false;
		buf list = {0};
		for (size_t k = 0; k < c->devices.n && !ok; k++) {
			char pre[PATH_MAX];
			canon(c->devices.v[k], pre, sizeof(pre));
			if ((ok = path_has_prefix(d, pre)))
				snprintf(rule, sizeof(rule), "under device prefix %s", pre);
			buf_printf(&list, "%s%s", list.len ? ", " : "", pre);
		}
		if (!ok)
			snprintf(msg, sizeof(msg), "not under any filesystem.devices prefix of the ceiling (%s)",
				 list.p ? list.p : "none");
		buf_free(&list);
		if (grant(r, "device", d, ok, ok ? rule : msg) < 0)
			return -1;
	}
	/* Unprotecting a path (protect.h): only names at or below one the
	 * ceiling's filesystem.unprotect lists; none without that list. */
	for (size_t i = 0; i < task->unprotect.n; i++) {
		const char *u = task->unprotect.v[i];
		bool ok = false;
		buf list = {0};
		for (size_t k = 0; k < c->unprotect.n && !ok; k++) {
			size_t l = strlen(c->unprotect.v[k]);
			if ((ok = strncmp(u, c->unprotect.v[k], l) == 0 && (u[l] == '\0' || u[l] == '/')))
				snprintf(rule, sizeof(rule), "under filesystem.unprotect %s of the ceiling", c->unprotect.v[k]);
			buf_printf(&list, "%s%s", list.len ? ", " : "", c->unprotect.v[k]);
		}
		if (!ok)
			snprintf(msg, sizeof(msg), "not under any filesystem.unprotect of the ceiling (%s): the ceiling keeps it protected",
				 list.p ? list.p : "none");
		buf_free(&list);
		if (grant(r, "unprotect", u, ok, ok ? rule : msg) < 0)
			return -1;
	}
	for (size_t i = 0; i < task->inputs.n; i++) {
		char path[PATH_MAX];
		canon(task->inputs.v[i], path, sizeof(path));
		bool ok = under(c, path, RO | RW, rule, sizeof(rule));
		if (!ok)
			snprintf(msg, sizeof(msg), "not under any read or write prefix of the ceiling %s", rule);
		if (grant(r, "input", path, ok, ok ? rule : msg) < 0)
			return -1;
	}
	/* An image root (policy "root") is read, all of it: a read grant. */
	if (plan->rootfs[0]) {
		bool ok = under(c, plan->rootfs, RO | RW, rule, sizeof(rule));
		if (!ok)
			snprintf(msg, sizeof(msg), "not under any read or write prefix of the ceiling %s", rule);
		if (grant(r, "rootfs", plan->rootfs, ok, ok ? rule : msg) < 0)
			return -1;
	}
	/* The check's files are a read grant like any other. */
	if (task->check_files) {
		char path[PATH_MAX];
		canon(task->check_files, path, sizeof(path));
		bool ok = under(c, path, RO | RW, rule, sizeof(rule));
		if (!ok)
			snprintf(msg, sizeof(msg), "not under any read or write prefix of the ceiling %s", rule);
		if (grant(r, "read", path, ok, ok ? rule : msg) < 0)
			return -1;
	}
	return 0;
}

/* Does ceiling pattern c cover requested pattern q? */
static bool covers(const char *c, const char *q)
{
	const char *cc = strrchr(c, ':'), *qc = strrchr(q, ':');
	if (!cc || !qc)
		return false;
	if (strcmp(cc + 1, "*") != 0 && strcmp(cc + 1, qc + 1) != 0)
		return false;
	size_t ch = (size_t)(cc - c), qh = (size_t)(qc - q);
	if (ch == qh && strncasecmp(c, q, ch) == 0)
		return true;
	if (ch > 2 && c[0] == '*' && c[1] == '.') {
		/* "*.d" covers "x.d", "a.x.d" and "*.x.d", not "d" itself */
		size_t sl = ch - 1; /* ".d" */
		return qh > sl && strncasecmp(q + qh - sl, c + 1, sl) == 0;
	}
	return false;
}

static int check_network(const cordon_policy *c, const cordon_policy *task, struct ceiling_result *r)
{
	if (!(c->sections & SEC_NETWORK))
		return 0;
	char rule[600];
	/* Each task rule must lie within one ceiling rule: its host covered, and
	 * its methods and paths no wider (pxrule_within). */
	for (size_t i = 0; i < task->net_rules.n; i++) {
		const struct net_rule *q = &task->net_rules.v[i];
		char qd[400];
		pxrule_describe(q, qd, sizeof(qd));
		bool ok = false;
		for (size_t k = 0; k < c->net_rules.n && !ok; k++) {
			const struct net_rule *cr = &c->net_rules.v[k];
			if (covers(cr->host, q->host) && pxrule_within(q, cr)) {
				char cd[400];
				pxrule_describe(cr, cd, sizeof(cd));
				snprintf(rule, sizeof(rule), "covered by %s", cd);
				ok = true;
			}
		}
		if (!ok) {
			buf l = {0};
			for (size_t k = 0; k < c->net_rules.n; k++) {
				char cd[400];
				pxrule_describe(&c->net_rules.v[k], cd, sizeof(cd));
				buf_printf(&l, "%s%s", k ? "; " : "", cd);
			}
			snprintf(rule, sizeof(rule), "not covered by any endpoint of the ceiling (%s)", l.p ? l.p : "none");
			buf_free(&l);
		}
		if (grant(r, "network", qd, ok, rule) < 0)
			return -1;
	}
	for (size_t i = 0; i < task->nloopback_ports; i++) {
		bool ok = false;
		for (size_t k = 0; k < c->nloopback_ports; k++)
			ok |= c->loopback_ports[k] == task->loopback_ports[i];
		char t[16];
		snprintf(t, sizeof(t), "%u", task->loopback_ports[i]);
		if (grant(r, "port", t, ok, ok ? "in network.loopback_ports of the ceiling"
					   : "not in network.loopback_ports of the ceiling") < 0)
			return -1;
	}
	return 0;
}

/* Is every host pattern of task one of ceiling's (the same text, or a
 * name a ceiling pattern matches)? If not, why in why. */
static bool hosts_within(const strv *task, const strv *ceiling, char *why, size_t whysz)
{
	for (size_t i = 0; i < task->n; i++) {
		bool in = false;
		for (size_t k = 0; k < ceiling->n && !in; k++) {
			const char *t = task->v[i], *colon = strrchr(t, ':');
			in = strcasecmp(t, ceiling->v[k]) == 0;
			if (!in && colon && t[0] != '*' && strcmp(colon + 1, "*") != 0) {
				char h[300];
				snprintf(h, sizeof(h), "%.*s", (int)(colon - t), t);
				in = proxy_rule_matches(ceiling->v[k], h, (uint16_t)atoi(colon + 1), NULL);
			}
		}
		if (!in) {
			snprintf(why, whysz, "the ceiling does not inject it to %s", task->v[i]);
			return false;
		}
	}
	return true;
}

static int check_secrets(const cordon_policy *c, const cordon_policy *task, struct ceiling_result *r)
{
	if (!(c->sections & SEC_SECRETS))
		return 0;
	char rule[600];
	for (size_t i = 0; i < task->nsecrets; i++) {
		const struct cordon_secret *s = &task->secrets[i];
		const struct cordon_secret *cs = NULL;
		for (size_t k = 0; k < c->nsecrets; k++)
			if (strcmp(c->secrets[k].name, s->name) == 0)
				cs = &c->secrets[k];
		bool ok = cs != NULL;
		if (!cs) {
			snprintf(rule, sizeof(rule), "not a secret name of the ceiling");
		} else if (cs->from_env && (!s->from_env || strcmp(cs->from_env, s->from_env) != 0)) {
			ok = false;
			snprintf(rule, sizeof(rule), "the ceiling pins it to the host variable %s", cs->from_env);
		} else if (cs->from_file) {
			char a[PATH_MAX], b[PATH_MAX] = "";
			canon(cs->from_file, a, sizeof(a));
			if (s->from_file)
				canon(s->from_file, b, sizeof(b));
			ok = s->from_file && strcmp(a, b) == 0;
			snprintf(rule, sizeof(rule), ok ? "file %s, as the ceiling pins it" : "the ceiling pins it to the file %s", a);
		} else {
			snprintf(rule, sizeof(rule), "host variable %s, as the ceiling pins it", cs->from_env);
		}
		/* Injection: a ceiling that declares "inject" for the secret pins
		 * its hosts (each of the task's must be one of them); one that
		 * does not allows none. */
		if (ok && s->inject && cs && (!cs->inject || !hosts_within(&s->inject_hosts, &cs->inject_hosts, rule, sizeof(rule))))
			ok = false;
		if (ok && s->inject && cs && !cs->inject)
			snprintf(rule, sizeof(rule), "the ceiling does not inject this secret");
		if (ok && s->inject && s->allow_plaintext && !cs->allow_plaintext) {
			ok = false;
			snprintf(rule, sizeof(rule), "the ceiling injects it over TLS only");
		}
		if (grant(r, "secret", s->name, ok, rule) < 0)
			return -1;
	}
	return 0;
}

static void limit_text(enum limit_id id, uint64_t v, char *out, size_t outsz)
{
	if (id == LIM_WALL || id == LIM_CPU)
		snprintf(out, outsz, "%gs", (double)v / 1e9);
	else
		snprintf(out, outsz, "%llu", (unsigned long long)v);
}

static int check_limits(const cordon_policy *c, cordon_policy *task, struct ceiling_result *r)
{
	for (int i = 0; i < LIM_COUNT; i++) {
		if (!c->limits[i].set)
			continue;
		char have[64], max[64], rule[600], target[128];
		limit_text(i, c->limits[i].value, max, sizeof(max));
		if (!task->limits[i].set) {
			/* Required: the task gets the ceiling's maximum. */
			task->limits[i] = (struct cordon_limit){true, c->limits[i].value, SRC_CEILING};
			snprintf(target, sizeof(target), "%s=%s", limit_name(i), max);
			if (grant(r, "limit", target, true, "the ceiling's maximum, applied (the task set none)") < 0)
				return -1;
			continue;
		}
		limit_text(i, task->limits[i].value, have, sizeof(have));
		bool ok = task->limits[i].value <= c->limits[i].value;
		snprintf(target, sizeof(target), "%s=%s", limit_name(i), have);
		snprintf(rule, sizeof(rule), ok ? "at most the ceiling's %s" : "above the ceiling's maximum %s", max);
		if (grant(r, "limit", target, ok, rule) < 0)
			return -1;
	}
	return 0;
}

static int check_syscalls_weaker(const cordon_policy *c, const cordon_policy *task, struct ceiling_result *r)
{
	if (c->sections & SEC_SYSCALLS) {
		for (size_t i = 0; i < task->sys_allow.n; i++) {
			bool ok = strv_contains(&c->sys_allow, task->sys_allow.v[i]);
			if (grant(r, "syscall", task->sys_allow.v[i], ok,
				  ok ? "in syscalls.allow of the ceiling" : "not in syscalls.allow of the ceiling (it may not be re-allowed)") < 0)
				return -1;
		}
	}
	if (c->sections & SEC_ENFORCEMENT) {
		static const char *const names[] = {"cgroup", "landlock", "seccomp", "workspace", "namespaces", "network"};
		for (int b = 0; b < 6; b++) {
			if (!(task->allow_weaker & (1u << b)))
				continue;
			bool ok = c->allow_weaker & (1u << b);
			if (grant(r, "weaker", names[b], ok,
				  ok ? "in enforcement.allow_weaker of the ceiling" : "not in enforcement.allow_weaker of the ceiling") < 0)
				return -1;
		}
	}
	return 0;
}

int ceiling_apply(const struct ceiling *c, cordon_policy *task, const struct run_plan *plan,
		  struct ceiling_result *res, cordon_error *err)
{
	memset(res, 0, sizeof(*res));
	if (check_paths(c->p, task, plan, res) < 0 || check_network(c->p, task, res) < 0 ||
	    check_secrets(c->p, task, res) < 0 || check_limits(c->p, task, res) < 0 ||
	    check_syscalls_weaker(c->p, task, res) < 0)
		return cordon_oom(err);
	return (int)res->excess.n;
}
