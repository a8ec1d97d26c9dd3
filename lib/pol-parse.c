/* The policy's loaders (pol-parse.h): a JSON policy, from text or a file
 * (bounded, never following a link), every key checked and every error
 * naming its file, line and column; a ledger file. The edits they make are
 * pol-edit.c's. */
#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pol-parse.h"
#include "cleanup.h"
#include "error.h"
#include "json.h"
#include "ledger.h"
#include "model.h"
#include "pol-checkfiles.h"
#include "policy.h"
#include "protect.h"
#include "seccomp-policy.h"
#include "units.h"
#include "pol-edit.h"

#define POLICY_MAX_BYTES (4 << 20)

/* ---- JSON policy ---- */

typedef struct {
	cordon_policy *p;
	const char *name;     /* file name for messages */
	const char *base_dir; /* for relative paths */
	cordon_error *err;
} pctx;

static int at(pctx *c, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int at(pctx *c, int line, int col, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cordon_err(c->err, 0, "%s:%d:%d: %s", c->name, line, col, msg);
}

/* Re-anchor a value error (from units/validators) at a node's position. */
static int at_node(pctx *c, const jnode *n, const char *key)
{
	char msg[sizeof(c->err->msg)];
	snprintf(msg, sizeof(msg), "%s", c->err->msg);
	return at(c, n->line, n->col, "\"%s\": %s", key, msg);
}

static int want(pctx *c, const jnode *n, jtype t, const char *key)
{
	if (n->type == t)
		return 0;
	return at(c, n->line, n->col, "\"%s\" must be %s %s, not %s %s", key,
		  t == J_ARR || t == J_OBJ ? "an" : "a", json_type_name(t),
		  n->type == J_ARR || n->type == J_OBJ ? "an" : "a", json_type_name(n->type));
}

static int check_keys(pctx *c, const jnode *obj, const char *where, const char *const *allowed)
{
	for (size_t i = 0; i < obj->n; i++) {
		bool ok = false;
		for (const char *const *a = allowed; *a; a++)
			if (strcmp(obj->keys[i], *a) == 0)
				ok = true;
		if (ok)
			continue;
		char list[512] = "";
		for (const char *const *a = allowed; *a; a++) {
			strncat(list, *a, sizeof(list) - strlen(list) - 1);
			if (a[1])
				strncat(list, ", ", sizeof(list) - strlen(list) - 1);
		}
		return at(c, obj->kline[i], obj->kcol[i], "unknown key \"%s\"%s%s (expected one of: %s)",
			  obj->keys[i], where[0] ? " in " : "", where, list);
	}
	return 0;
}

/* Each string of an array, with its node. */
#define FOREACH_STR(c, arr, key, s, node)                                      \
	for (size_t _i = 0; _i < (arr)->n; _i++)                               \
		if (((node) = (arr)->items[_i]), want((c), (node), J_STR, (key)) < 0) \
			return -1;                                             \
		else if (((s) = (node)->str), 0) {                             \
		} else

static int load_filesystem(pctx *c, const jnode *fs)
{
	static const char *const keys[] = {"read", "write", "tmpfs", "devices", "protect", "unprotect", "workspace_mode", "on_failure", "workspace", NULL};
	static const enum mount_mode modes[] = {MOUNT_RO, MOUNT_RW, MOUNT_TMPFS};
	if (want(c, fs, J_OBJ, "filesystem") < 0 || check_keys(c, fs, "\"filesystem\"", keys) < 0)
		return -1;
	jnode *wm = json_get(fs, "workspace_mode");
	if (wm && want(c, wm, J_STR, "filesystem.workspace_mode") < 0)
		return -1;
	if (wm)
		c->p->workspace_mode_asked = true;
	if (wm && workspace_mode_parse(wm->str, &c->p->workspace_mode) < 0)
		return at(c, wm->line, wm->col, "\"filesystem.workspace_mode\": \"%s\" is not overlay, review or direct",
			  wm->str);
	jnode *iw = json_get(fs, "workspace");
	if (iw && want(c, iw, J_STR, "filesystem.workspace") < 0)
		return -1;
	if (iw && policy_set_image_workspace(c->p, iw->str, c->err) < 0)
		return at_node(c, iw, "filesystem.workspace");
	jnode *of = json_get(fs, "on_failure");
	if (of && want(c, of, J_STR, "filesystem.on_failure") < 0)
		return -1;
	if (of && on_failure_parse(of->str, &c->p->on_failure) < 0)
		return at(c, of->line, of->col, "\"filesystem.on_failure\": \"%s\" is not apply, discard or keep",
			  of->str);
	jnode *devs = json_get(fs, "devices");
	if (devs) {
		if (want(c, devs, J_ARR, "filesystem.devices") < 0)
			return -1;
		const char *s;
		jnode *n;
		FOREACH_STR(c, devs, "filesystem.devices", s, n) {
			if (policy_add_device(c->p, s, c->err) < 0)
				return at_node(c, n, "filesystem.devices");
		}
	}
	for (int k = 4; k < 6; k++) {
		char key[32];
		snprintf(key, sizeof(key), "filesystem.%s", keys[k]);
		jnode *arr = json_get(fs, keys[k]);
		if (!arr)
			continue;
		if (want(c, arr, J_ARR, key) < 0)
			return -1;
		const char *s;
		jnode *n;
		FOREACH_STR(c, arr, key, s, n) {
			if (policy_add_protect(c->p, k == 5, s, c->err) < 0)
				return at_node(c, n, key);
		}
	}
	for (int k = 0; k < 3; k++) {
		char key[32];
		snprintf(key, sizeof(key), "filesystem.%s", keys[k]);
		jnode *arr = json_get(fs, keys[k]);
		if (!arr)
			continue;
		c->p->sections |= k == 0 ? SEC_FS_READ : k == 1 ? SEC_FS_WRITE : SEC_FS_TMPFS;
		if (want(c, arr, J_ARR, key) < 0)
			return -1;
		const char *s;
		jnode *n;
		FOREACH_STR(c, arr, key, s, n) {
			if (policy_add_mount(c->p, modes[k], s, SRC_POLICY, c->base_dir, c->err) < 0)
				return at_node(c, n, key);
		}
	}
	return 0;
}

/* {"host": "h:port", "methods": [...], "paths": [...], "upgrade": bool} */
static int load_net_rule(pctx *c, const jnode *o)
{
	static const char *const keys[] = {"host", "methods", "paths", "upgrade", NULL};
	if (check_keys(c, o, "a \"network.allow\" rule", keys) < 0)
		return -1;
	jnode *host = json_get(o, "host"), *up = json_get(o, "upgrade");
	if (!host)
		return at(c, o->line, o->col, "\"network.allow\": a rule object needs \"host\"");
	if (want(c, host, J_STR, "network.allow.host") < 0 || (up && want(c, up, J_BOOL, "network.allow.upgrade") < 0))
		return -1;
	strv lists[2] = {{0}};
	static const char *const names[] = {"methods", "paths"};
	int rc = 0;
	for (int k = 0; k < 2 && rc == 0; k++) {
		jnode *a = json_get(o, names[k]);
		char key[40];
		snprintf(key, sizeof(key), "network.allow.%s", names[k]);
		if (!a)
			continue;
		if (want(c, a, J_ARR, key) < 0) {
			rc = -1;
			break;
		}
		if (a->n == 0) {
			rc = at(c, a->line, a->col, "\"%s\": an empty list admits nothing; leave it out to admit any", key);
			break;
		}
		for (size_t i = 0; i < a->n && rc == 0; i++) {
			if (want(c, a->items[i], J_STR, key) < 0)
				rc = -1;
			else if (strv_push(&lists[k], a->items[i]->str) < 0)
				rc = cordon_oom(c->err);
		}
	}
	/* Without methods or paths the rule is the plain string: upgrades too. */
	bool upgrade = up ? up->b : !(lists[0].n || lists[1].n);
	if (rc == 0 && policy_add_net_rule(c->p, host->str, &lists[0], &lists[1], upgrade, c->err) < 0)
		rc = at_node(c, host, "network.allow");
	strv_free(&lists[0]);
	strv_free(&lists[1]);
	return rc;
}

/* network.resolve: {"name": "address"}, each name a host name (letters,
 * digits, '-', '_', dots), each address an IPv4 or IPv6 literal. */
static int load_resolve(pctx *c, const jnode *res)
{
	if (want(c, res, J_OBJ, "network.resolve") < 0)
		return -1;
	for (size_t i = 0; i < res->n; i++) {
		const char *name = res->keys[i];
		const jnode *v = res->items[i];
		size_t nl = strlen(name);
		bool ok = nl > 0 && nl <= 253 && name[0] != '.' && name[nl - 1] != '.' && !strstr(name, "..");
		for (size_t k = 0; ok && k < nl; k++)
			ok = isalnum((unsigned char)name[k]) || strchr("-_.", name[k]);
		if (!ok)
			return at(c, res->kline[i], res->kcol[i], "\"network.resolve\": \"%s\" is not a host name", name);
		if (want(c, v, J_STR, "network.resolve") < 0)
			return -1;
		unsigned char a[16];
		if (inet_pton(AF_INET, v->str, a) != 1 && inet_pton(AF_INET6, v->str, a) != 1)
			return at(c, v->line, v->col, "\"network.resolve\": \"%s\" is not an IPv4 or IPv6 address", v->str);
		if (c->p->net_resolve.n >= NET_RESOLVE_MAX)
			return at(c, v->line, v->col, "\"network.resolve\": at most %d names", NET_RESOLVE_MAX);
		char pin[320];
		snprintf(pin, sizeof(pin), "%s=%s", name, v->str);
		for (char *q = pin; *q != '='; q++)
			*q = (char)tolower((unsigned char)*q);
		if (strv_push(&c->p->net_resolve, pin) < 0)
			return cordon_oom(c->err);
	}
	return 0;
}

static int load_network(pctx *c, const jnode *net)
{
	static const char *const keys[] = {"allow", "loopback_ports", "upstream_ca", "transparent", "resolve", NULL};
	if (want(c, net, J_OBJ, "network") < 0 || check_keys(c, net, "\"network\"", keys) < 0)
		return -1;
	jnode *tr = json_get(net, "transparent");
	if (tr) {
		if (want(c, tr, J_BOOL, "network.transparent") < 0)
			return -1;
		c->p->net_transparent = tr->b;
	}
	jnode *res = json_get(net, "resolve");
	if (res && load_resolve(c, res) < 0)
		return -1;
	jnode *uca = json_get(net, "upstream_ca");
	if (uca) {
		char abs[PATH_MAX];
		if (want(c, uca, J_STR, "network.upstream_ca") < 0)
			return -1;
		if (resolve_user_path(uca->str, c->base_dir, abs, sizeof(abs), c->err) < 0)
			return at_node(c, uca, "network.upstream_ca");
		free(c->p->upstream_ca);
		if (!(c->p->upstream_ca = strdup(abs)))
			return cordon_oom(c->err);
	}
	jnode *ports = json_get(net, "loopback_ports");
	if (ports) {
		c->p->sections |= SEC_NET_PORTS;
		if (want(c, ports, J_ARR, "network.loopback_ports") < 0)
			return -1;
		for (size_t i = 0; i < ports->n; i++) {
			jnode *pn = ports->items[i];
			if (pn->type != J_NUM || !pn->num_is_int || pn->num < 1 || pn->num > 65535)
				return at(c, pn->line, pn->col, "\"network.loopback_ports\": a port is a whole number 1-65535");
			if (c->p->nloopback_ports >= ARRAY_SIZE(c->p->loopback_ports))
				return at(c, pn->line, pn->col, "\"network.loopback_ports\": at most 64 ports");
			c->p->loopback_ports[c->p->nloopback_ports++] = (uint16_t)pn->num;
		}
	}
	jnode *arr = json_get(net, "allow");
	if (!arr)
		return 0;
	c->p->sections |= SEC_NET_ALLOW;
	if (want(c, arr, J_ARR, "network.allow") < 0)
		return -1;
	for (size_t i = 0; i < arr->n; i++) {
		jnode *n = arr->items[i];
		if (n->type == J_OBJ) {
			if (load_net_rule(c, n) < 0)
				return -1;
			continue;
		}
		if (want(c, n, J_STR, "network.allow") < 0)
			return -1;
		if (policy_add_net(c->p, n->str, c->err) < 0)
			return at_node(c, n, "network.allow");
	}
	return 0;
}

static int load_env(pctx *c, const jnode *env)
{
	if (want(c, env, J_OBJ, "env") < 0)
		return -1;
	for (size_t i = 0; i < env->n; i++) {
		if (!env_name_valid(env->keys[i]))
			return at(c, env->kline[i], env->kcol[i], "\"env\": \"%s\" is not a valid variable name",
				  env->keys[i]);
		if (want(c, env->items[i], J_STR, env->keys[i]) < 0)
			return -1;
		buf b = {0};
		if (buf_printf(&b, "%s=%s", env->keys[i], env->items[i]->str) < 0 ||
		    strv_push_take(&c->p->env, b.p) < 0)
			return cordon_oom(c->err);
	}
	return 0;
}

/* "inject": {"hosts": [...], "placeholder": "sk-", "in": ["header",
 * "query"], "allow_plaintext": false} */
static int load_inject(pctx *c, const char *name, const jnode *o, struct cordon_secret *s)
{
	static const char *const keys[] = {"hosts", "placeholder", "in", "allow_plaintext", NULL};
	if (want(c, o, J_OBJ, "inject") < 0 || check_keys(c, o, "\"inject\"", keys) < 0)
		return -1;
	jnode *h = json_get(o, "hosts"), *ph = json_get(o, "placeholder"), *in = json_get(o, "in"),
	      *ap = json_get(o, "allow_plaintext");
	if (!h || want(c, h, J_ARR, "inject.hosts") < 0 || h->n == 0)
		return at(c, o->line, o->col, "secret \"%s\": \"inject\" needs a non-empty \"hosts\" list", name);
	strv_free(&s->inject_hosts);
	for (size_t i = 0; i < h->n; i++) {
		if (want(c, h->items[i], J_STR, "inject.hosts") < 0)
			return -1;
		if (policy_validate_endpoint(h->items[i]->str, c->err) < 0)
			return at_node(c, h->items[i], "inject.hosts");
		if (strv_push(&s->inject_hosts, h->items[i]->str) < 0)
			return cordon_oom(c->err);
	}
	if (ph) {
		if (want(c, ph, J_STR, "inject.placeholder") < 0)
			return -1;
		size_t n = strlen(ph->str);
		for (size_t i = 0; i < n; i++)
			if (!(ph->str[i] >= '!' && ph->str[i] <= '~'))
				return at(c, ph->line, ph->col, "secret \"%s\": a placeholder prefix is printable ASCII without spaces", name);
		if (n > 64)
			return at(c, ph->line, ph->col, "secret \"%s\": a placeholder prefix is at most 64 bytes", name);
		free(s->placeholder);
		if (!(s->placeholder = strdup(ph->str)))
			return cordon_oom(c->err);
	}
	s->in_header = true;
	s->in_query = false;
	if (in) {
		if (want(c, in, J_ARR, "inject.in") < 0)
			return -1;
		s->in_header = false;
		for (size_t i = 0; i < in->n; i++) {
			const jnode *x = in->items[i];
			if (want(c, x, J_STR, "inject.in") < 0)
				return -1;
			if (strcmp(x->str, "header") == 0)
				s->in_header = true;
			else if (strcmp(x->str, "query") == 0)
				s->in_query = true;
			else
				return at(c, x->line, x->col, "secret \"%s\": \"in\" takes \"header\" and \"query\"", name);
		}
	}
	if (ap && want(c, ap, J_BOOL, "inject.allow_plaintext") < 0)
		return -1;
	s->allow_plaintext = ap && ap->b;
	s->inject = true;
	return 0;
}

static int load_secrets(pctx *c, const jnode *sec)
{
	static const char *const keys[] = {"env", "file", "mount", "allow_short", "inject", NULL};
	if (want(c, sec, J_OBJ, "secrets") < 0)
		return -1;
	for (size_t i = 0; i < sec->n; i++) {
		const jnode *o = sec->items[i];
		const char *name = sec->keys[i];
		if (!env_name_valid(name))
			return at(c, sec->kline[i], sec->kcol[i], "secret \"%s\": not a valid variable name", name);
		if (want(c, o, J_OBJ, name) < 0 || check_keys(c, o, name, keys) < 0)
			return -1;
		jnode *e = json_get(o, "env"), *f = json_get(o, "file"), *m = json_get(o, "mount"),
		      *as = json_get(o, "allow_short");
		if ((e && f) || (!e && !f))
			return at(c, o->line, o->col, "secret \"%s\": give exactly one of \"env\" or \"file\"", name);
		if ((e && want(c, e, J_STR, "env") < 0) || (f && want(c, f, J_STR, "file") < 0) ||
		    (m && want(c, m, J_STR, "mount") < 0) || (as && want(c, as, J_BOOL, "allow_short") < 0))
			return -1;
		if (e && !env_name_valid(e->str))
			return at(c, e->line, e->col, "secret \"%s\": \"%s\" is not a valid variable name", name, e->str);
		struct cordon_secret *s = policy_secret_slot(c->p, name, c->err);
		if (!s)
			return at_node(c, o, name);
		if (e)
			s->from_env = strdup(e->str);
		if (f) {
			char abs[PATH_MAX];
			if (resolve_user_path(f->str, c->base_dir, abs, sizeof(abs), c->err) < 0)
				return at_node(c, f, "file");
			s->from_file = strdup(abs);
		}
		if (m) {
			char abs[PATH_MAX];
			if (m->str[0] != '/' || path_normalize(m->str, abs, sizeof(abs)) < 0)
				return at(c, m->line, m->col, "secret \"%s\": \"mount\" must be an absolute path", name);
			s->mount = strdup(abs);
			if (!s->mount)
				return cordon_oom(c->err);
		}
		s->allow_short = as && as->b;
		if (!s->from_env && !s->from_file)
			return cordon_oom(c->err);
		jnode *inj = json_get(o, "inject");
		if (inj && load_inject(c, name, inj, s) < 0)
			return -1;
	}
	return 0;
}

static int load_limits(pctx *c, const jnode *lim)
{
	static const char *const keys[] = {"wall_time", "cpu_time", "memory", "pids", "output", "file_size",
					   "snapshots", NULL};
	if (want(c, lim, J_OBJ, "limits") < 0 || check_keys(c, lim, "\"limits\"", keys) < 0)
		return -1;
	for (size_t i = 0; i < lim->n; i++) {
		if (strcmp(lim->keys[i], "snapshots") == 0) {
			/* A session's snapshots (docs/api.md): a size, not a
			 * limit of the run's. */
			const jnode *v = lim->items[i];
			char tmp[64];
			if (v->type == J_NUM && v->num_is_int && v->num > 0 && v->num <= 1e15)
				snprintf(tmp, sizeof(tmp), "%.0f", v->num);
			else if (v->type != J_STR)
				return at(c, v->line, v->col, "\"limits.snapshots\" must be a size such as \"1G\" or a positive whole number of bytes");
			if (parse_size(v->type == J_STR ? v->str : tmp, &c->p->snapshots_max, c->err) < 0 ||
			    c->p->snapshots_max == 0)
				return at(c, v->line, v->col, "\"limits.snapshots\": a size such as \"1G\" is expected");
			continue;
		}
		enum limit_id id = 0;
		while (strcmp(limit_name(id), lim->keys[i]) != 0)
			id++;
		const jnode *v = lim->items[i];
		char tmp[64];
		const char *s;
		if (v->type == J_STR) {
			s = v->str;
		} else if (v->type == J_NUM) {
			bool time = id == LIM_WALL || id == LIM_CPU;
			if (v->num <= 0 || (!time && !v->num_is_int) || v->num > 1e15)
				return at(c, v->line, v->col, "\"limits.%s\": %s", lim->keys[i],
					  time ? "must be a positive number of seconds"
					       : "must be a positive whole number");
			if (time)
				snprintf(tmp, sizeof(tmp), "%.9f", v->num);
			else
				snprintf(tmp, sizeof(tmp), "%.0f", v->num);
			s = tmp;
		} else {
			return at(c, v->line, v->col, "\"limits.%s\" must be a string or a number, not %s",
				  lim->keys[i], json_type_name(v->type));
		}
		char key[32];
		snprintf(key, sizeof(key), "limits.%s", lim->keys[i]);
		if (policy_set_limit(c->p, id, s, SRC_POLICY, c->err) < 0)
			return at_node(c, v, key);
	}
	return 0;
}

static int load_syscalls(pctx *c, const jnode *sc)
{
	static const char *const keys[] = {"allow", "deny", NULL};
	if (want(c, sc, J_OBJ, "syscalls") < 0 || check_keys(c, sc, "\"syscalls\"", keys) < 0)
		return -1;
	for (int k = 0; k < 2; k++) {
		jnode *arr = json_get(sc, keys[k]);
		char key[32];
		snprintf(key, sizeof(key), "syscalls.%s", keys[k]);
		if (!arr)
			continue;
		if (k == 0)
			c->p->sections |= SEC_SYS_ALLOW;
		if (want(c, arr, J_ARR, key) < 0)
			return -1;
		const char *s;
		jnode *n;
		FOREACH_STR(c, arr, key, s, n) {
			if (seccomp_syscall_number(s) == __NR_SCMP_ERROR)
				return at(c, n->line, n->col, "\"%s\": unknown system call \"%s\"", key, s);
			if (strv_push(k ? &c->p->sys_deny : &c->p->sys_allow, s) < 0)
				return cordon_oom(c->err);
		}
	}
	return 0;
}

static int load_ledger(pctx *c, const jnode *arr, struct ledger *out)
{
	if (want(c, arr, J_ARR, "ledger") < 0)
		return -1;
	struct ledger_event *ev = calloc(arr->n ? arr->n : 1, sizeof(*ev));
	if (!ev)
		return cordon_oom(c->err);
	for (size_t i = 0; i < out->n; i++)
		free(out->ev[i].name);
	free(out->ev);
	out->ev = ev;
	out->n = 0;
	for (size_t i = 0; i < arr->n; i++) {
		static const char *const akeys[] = {"alloc", "bytes", NULL};
		static const char *const fkeys[] = {"free", NULL};
		const jnode *e = arr->items[i];
		if (want(c, e, J_OBJ, "ledger event") < 0)
			return -1;
		jnode *a = json_get(e, "alloc"), *f = json_get(e, "free");
		if ((a && f) || (!a && !f))
			return at(c, e->line, e->col, "ledger event must have exactly one of \"alloc\" or \"free\"");
		if (check_keys(c, e, "a ledger event", a ? akeys : fkeys) < 0)
			return -1;
		jnode *name = a ? a : f;
		if (want(c, name, J_STR, a ? "alloc" : "free") < 0)
			return -1;
		struct ledger_event *le = &out->ev[out->n];
		le->alloc = a != NULL;
		le->line = e->line;
		le->col = e->col;
		if (a) {
			jnode *b = json_get(e, "bytes");
			if (!b)
				return at(c, e->line, e->col, "ledger alloc \"%s\" needs \"bytes\"", a->str);
			if (b->type == J_NUM) {
				if (!b->num_is_int || b->num < 0 || b->num > 9e15)
					return at(c, b->line, b->col, "\"bytes\" must be a whole number of bytes");
				le->bytes = (uint64_t)b->num;
			} else if (b->type == J_STR) {
				if (parse_size(b->str, &le->bytes, c->err) < 0)
					return at_node(c, b, "bytes");
			} else {
				return want(c, b, J_STR, "bytes");
			}
		}
		le->name = strdup(name->str);
		if (!le->name)
			return cordon_oom(c->err);
		out->n++;
	}
	return 0;
}

static int load_enforcement(pctx *c, const jnode *en)
{
	static const char *const keys[] = {"allow_weaker", NULL};
	if (want(c, en, J_OBJ, "enforcement") < 0 || check_keys(c, en, "\"enforcement\"", keys) < 0)
		return -1;
	jnode *arr = json_get(en, "allow_weaker");
	if (!arr)
		return 0;
	if (want(c, arr, J_ARR, "enforcement.allow_weaker") < 0)
		return -1;
	const char *s;
	jnode *n;
	FOREACH_STR(c, arr, "enforcement.allow_weaker", s, n) {
		if (strcmp(s, "cgroup") == 0)
			c->p->allow_weaker |= WEAK_CGROUP;
		else if (strcmp(s, "landlock") == 0)
			c->p->allow_weaker |= WEAK_LANDLOCK;
		else if (strcmp(s, "seccomp") == 0)
			c->p->allow_weaker |= WEAK_SECCOMP;
		else if (strcmp(s, "workspace") == 0)
			c->p->allow_weaker |= WEAK_WORKSPACE;
		else if (strcmp(s, "namespaces") == 0)
			c->p->allow_weaker |= WEAK_NAMESPACES;
		else if (strcmp(s, "network") == 0)
			c->p->allow_weaker |= WEAK_NETWORK;
		else
			return at(c, n->line, n->col, "\"enforcement.allow_weaker\": unknown layer \"%s\" (cgroup, landlock, seccomp, workspace, namespaces, network)", s);
	}
	return 0;
}

/* "check": a command string, or {"command", "files", "cwd", "env"}. */
static int load_check(pctx *c, const jnode *n)
{
	static const char *const keys[] = {"command", "files", "cwd", "env", NULL};
	if (n->type == J_STR)
		return policy_set_check(c->p, n->str, c->err);
	if (n->type != J_OBJ)
		return at(c, n->line, n->col, "\"check\" must be a string or an object, not %s %s",
			  n->type == J_ARR ? "an" : "a", json_type_name(n->type));
	if (check_keys(c, n, "\"check\"", keys) < 0)
		return -1;
	jnode *cmd = json_get(n, "command"), *files = json_get(n, "files"), *cwd = json_get(n, "cwd"),
	      *env = json_get(n, "env");
	if (!cmd)
		return at(c, n->line, n->col, "\"check\": \"command\" is required");
	if (want(c, cmd, J_STR, "check.command") < 0 || (files && want(c, files, J_STR, "check.files") < 0) ||
	    (cwd && want(c, cwd, J_STR, "check.cwd") < 0) || (env && want(c, env, J_OBJ, "check.env") < 0))
		return -1;
	if (!cmd->str[0])
		return at(c, cmd->line, cmd->col, "\"check.command\" is empty");
	if (policy_set_check(c->p, cmd->str, c->err) < 0)
		return -1;
	char abs[PATH_MAX];
	if (files) {
		if (resolve_user_path(files->str, c->base_dir, abs, sizeof(abs), c->err) < 0)
			return at_node(c, files, "check.files");
		/* What the task reads is not the check's (the plan checks again,
		 * links resolved, with every grant and the workspace). */
		for (size_t i = 0; i < c->p->nmounts; i++)
			if (c->p->mounts[i].mode != MOUNT_TMPFS &&
			    (path_has_prefix(abs, c->p->mounts[i].path) || path_has_prefix(c->p->mounts[i].path, abs)))
				return at(c, files->line, files->col,
					  "\"check.files\" %s overlaps the %s grant %s: the task could read the check's hidden files; keep them outside every path the task is given",
					  abs, c->p->mounts[i].mode == MOUNT_RO ? "read" : "write", c->p->mounts[i].path);
		const char *sys = model_system_read(abs);
		if (sys)
			return at(c, files->line, files->col,
				  "\"check.files\" %s overlaps %s, which every run reads: the task could read the check's hidden files",
				  abs, sys);
		char what[PATH_MAX + 128];
		const char *rd = policy_check_files_reader(c->p, abs, what, sizeof(what));
		if (rd)
			return at(c, files->line, files->col,
				  "\"check.files\" %s overlaps %s (%s), which the run reads: the task could read the check's hidden files; keep them outside every path the run is given",
				  abs, rd, what);
		free(c->p->check_files);
		if (!(c->p->check_files = strdup(abs)))
			return cordon_oom(c->err);
	}
	if (cwd) {
		/* A path of the check's view (CHECK_FILES_DIR, say), not the host's. */
		if (cwd->str[0] != '/' || path_normalize(cwd->str, abs, sizeof(abs)) < 0)
			return at(c, cwd->line, cwd->col, "\"check.cwd\" must be an absolute path in the check's view (e.g. %s)",
				  CHECK_FILES_DIR);
		free(c->p->check_cwd);
		if (!(c->p->check_cwd = strdup(abs)))
			return cordon_oom(c->err);
	}
	for (size_t i = 0; env && i < env->n; i++) {
		if (!env_name_valid(env->keys[i]))
			return at(c, env->kline[i], env->kcol[i], "\"check.env\": \"%s\" is not a valid variable name",
				  env->keys[i]);
		if (want(c, env->items[i], J_STR, env->keys[i]) < 0)
			return -1;
		buf b = {0};
		if (buf_printf(&b, "%s=%s", env->keys[i], env->items[i]->str) < 0 ||
		    strv_push_take(&c->p->check_env, b.p) < 0)
			return cordon_oom(c->err);
	}
	return 0;
}

static int load_root(pctx *c, const jnode *root)
{
	static const char *const keys[] = {
		"filesystem", "network", "env", "secrets", "limits", "syscalls", "inputs",
		"check", "ledger", "on_violation", "enforcement", "cwd", "root", "report_file_denials", NULL,
	};
	if (root->type != J_OBJ)
		return at(c, root->line, root->col, "a policy must be a JSON object, not %s",
			  json_type_name(root->type));
	if (check_keys(c, root, "", keys) < 0)
		return -1;
	static const struct { const char *k; unsigned bit; } secs[] = {
		{"filesystem", SEC_FILESYSTEM}, {"network", SEC_NETWORK}, {"secrets", SEC_SECRETS},
		{"limits", SEC_LIMITS}, {"syscalls", SEC_SYSCALLS}, {"enforcement", SEC_ENFORCEMENT},
	};
	for (size_t i = 0; i < ARRAY_SIZE(secs); i++)
		if (json_get(root, secs[i].k))
			c->p->sections |= secs[i].bit;
	jnode *n;
	if ((n = json_get(root, "filesystem")) && load_filesystem(c, n) < 0)
		return -1;
	if ((n = json_get(root, "network")) && load_network(c, n) < 0)
		return -1;
	if ((n = json_get(root, "env")) && load_env(c, n) < 0)
		return -1;
	if ((n = json_get(root, "secrets")) && load_secrets(c, n) < 0)
		return -1;
	if ((n = json_get(root, "limits")) && load_limits(c, n) < 0)
		return -1;
	if ((n = json_get(root, "syscalls")) && load_syscalls(c, n) < 0)
		return -1;
	if ((n = json_get(root, "inputs"))) {
		if (want(c, n, J_ARR, "inputs") < 0)
			return -1;
		const char *s;
		jnode *item;
		FOREACH_STR(c, n, "inputs", s, item) {
			char abs[PATH_MAX];
			if (resolve_user_path(s, c->base_dir, abs, sizeof(abs), c->err) < 0)
				return at_node(c, item, "inputs");
			if (strv_push(&c->p->inputs, abs) < 0)
				return cordon_oom(c->err);
		}
	}
	if ((n = json_get(root, "check")) && load_check(c, n) < 0)
		return -1;
	if ((n = json_get(root, "cwd"))) {
		char abs[PATH_MAX];
		if (want(c, n, J_STR, "cwd") < 0)
			return -1;
		if (resolve_user_path(n->str, c->base_dir, abs, sizeof(abs), c->err) < 0)
			return at_node(c, n, "cwd");
		free(c->p->cwd);
		if (!(c->p->cwd = strdup(abs)))
			return cordon_oom(c->err);
	}
	if ((n = json_get(root, "root"))) {
		char abs[PATH_MAX];
		if (want(c, n, J_STR, "root") < 0)
			return -1;
		/* Anywhere on the host (an image is rarely beside the policy):
		 * the plan resolves it and checks who may change it (rootfs.h). */
		if (resolve_path_any(n->str, c->base_dir, abs, sizeof(abs), c->err) < 0)
			return at_node(c, n, "root");
		free(c->p->root);
		if (!(c->p->root = strdup(abs)))
			return cordon_oom(c->err);
	}
	if ((n = json_get(root, "ledger"))) {
		if (load_ledger(c, n, &c->p->ledger) < 0)
			return -1;
		c->p->has_ledger = true;
	}
	if ((n = json_get(root, "on_violation"))) {
		if (want(c, n, J_STR, "on_violation") < 0)
			return -1;
		if (strcmp(n->str, "kill") == 0)
			c->p->kill_on_violation = true;
		else if (strcmp(n->str, "report") == 0)
			c->p->kill_on_violation = false;
		else
			return at(c, n->line, n->col, "\"on_violation\" must be \"report\" or \"kill\"");
	}
	if ((n = json_get(root, "enforcement")) && load_enforcement(c, n) < 0)
		return -1;
	if ((n = json_get(root, "report_file_denials"))) {
		if (want(c, n, J_BOOL, "report_file_denials") < 0)
			return -1;
		c->p->no_file_reports = !n->b;
	}
	return 0;
}

/* "LINE:COL: what" from the JSON reader becomes "FILE:LINE:COL: what". */
static int prefix_position_error(cordon_error *err, const char *file)
{
	char msg[sizeof(err->msg)];
	snprintf(msg, sizeof(msg), "%s", err->msg);
	return cordon_err(err, 0, "%s:%s", file, msg);
}

int policy_load_json(cordon_policy *p, const char *text, size_t len, const char *name,
		     const char *base_dir, cordon_error *err)
{
	jnode *root = json_parse(text, len, err);
	if (!root)
		return prefix_position_error(err, name);
	pctx c = {p, name, base_dir, err};
	int r = load_root(&c, root);
	json_free(root);
	return r;
}

/* Read a whole (small) regular file. */
static char *read_small_file(const char *path, size_t max, size_t *len, cordon_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		cordon_err_errno(err, "%s", path);
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		cordon_err_errno(err, "%s", path);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		cordon_err(err, 0, "%s: not a regular file", path);
		return NULL;
	}
	if ((size_t)st.st_size > max) {
		cordon_err(err, 0, "%s: larger than %zu bytes", path, max);
		return NULL;
	}
	buf b = {0};
	char tmp[65536];
	for (;;) {
		ssize_t n = read(fd, tmp, sizeof(tmp));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			cordon_err_errno(err, "%s", path);
			buf_free(&b);
			return NULL;
		}
		if (n == 0)
			break;
		if (b.len + (size_t)n > max || buf_append(&b, tmp, (size_t)n) < 0) {
			cordon_err(err, 0, "%s: too large", path);
			buf_free(&b);
			return NULL;
		}
	}
	if (!b.p && buf_append(&b, "", 0) < 0) {
		cordon_oom(err);
		return NULL;
	}
	*len = b.len;
	return b.p;
}

int policy_load_file(cordon_policy *p, const char *path, cordon_error *err)
{
	size_t len;
	_cleanup_free_ char *text = read_small_file(path, POLICY_MAX_BYTES, &len, err);
	if (!text)
		return -1;
	char cwd[PATH_MAX], abs[PATH_MAX], dir[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return cordon_err_errno(err, "getcwd");
	/* The policy's own directory: the base of its relative paths. (The
	 * policy file itself may live anywhere, so no escape check here.) */
	char joined[PATH_MAX * 2];
	snprintf(joined, sizeof(joined), "%s/%s", path[0] == '/' ? "" : cwd, path);
	if (path_normalize(joined, abs, sizeof(abs)) < 0)
		return cordon_err(err, ENAMETOOLONG, "%s", path);
	snprintf(dir, sizeof(dir), "%s", abs);
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		dir[1] = '\0';
	else if (slash)
		*slash = '\0';
	free(p->file);
	p->file = strdup(path);
	return policy_load_json(p, text, len, path, dir, err);
}

/* `cordon ledger FILE`: {"limit": SIZE, "events": [...]}, validated with the
 * same rules (and messages) as the policy's "ledger" key. */
int ledger_load_file(const char *path, struct ledger *l, uint64_t *limit, cordon_error *err)
{
	size_t len;
	_cleanup_free_ char *text = read_small_file(path, POLICY_MAX_BYTES, &len, err);
	if (!text)
		return -1;
	jnode *root = json_parse(text, len, err);
	if (!root)
		return prefix_position_error(err, path);
	pctx c = {NULL, path, "/", err};
	static const char *const keys[] = {"limit", "events", NULL};
	int r = -1;
	jnode *lim, *ev;
	if (want(&c, root, J_OBJ, "ledger file") < 0 || check_keys(&c, root, "", keys) < 0)
		goto out;
	lim = json_get(root, "limit");
	ev = json_get(root, "events");
	if (!lim || !ev) {
		at(&c, root->line, root->col, "a ledger file needs \"limit\" and \"events\"");
		goto out;
	}
	if (lim->type == J_NUM && lim->num_is_int && lim->num >= 0 && lim->num < 9e15) {
		*limit = (uint64_t)lim->num;
	} else if (lim->type == J_STR) {
		if (parse_size(lim->str, limit, err) < 0) {
			at_node(&c, lim, "limit");
			goto out;
		}
	} else {
		at(&c, lim->line, lim->col, "\"limit\" must be a size such as \"64M\" or a whole number of bytes");
		goto out;
	}
	r = load_ledger(&c, ev, l);
out:
	json_free(root);
	return r;
}
