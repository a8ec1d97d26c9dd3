/* config.json: the runtime spec's fields cordon-oci takes, read with lib/json.c
 * so every error names FILE:LINE:COL. Unknown keys are ignored (the spec says a
 * runtime MUST ignore unknown properties); a known key of the wrong type is an
 * error. */
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sched.h>
#include <unistd.h>
#include <seccomp.h>
#include "oci-config.h"
#include "error.h"
#include "policy.h"

const char *const oci_ns_names[OCI_NS_N] = {"pid", "network", "ipc", "uts", "mount", "user", "cgroup", "time"};
const char *const oci_ns_proc[OCI_NS_N] = {"pid", "net", "ipc", "uts", "mnt", "user", "cgroup", "time"};
const int oci_ns_flags[OCI_NS_N] = {CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWNS,
				    CLONE_NEWUSER, CLONE_NEWCGROUP, 0x80 /* CLONE_NEWTIME */};
const char *const oci_hook_names[OCI_H_N] = {"prestart", "createRuntime", "createContainer", "startContainer",
					     "poststart", "poststop"};

struct ctx {
	const char *file;
	cordon_error *err;
};

static int bad(struct ctx *x, const jnode *n, const char *fmt, const char *what)
{
	return cordon_err(x->err, 0, "%s:%d:%d: %s %s", x->file, n ? n->line : 1, n ? n->col : 1, what, fmt);
}

static const jnode *typed(struct ctx *x, const jnode *obj, const char *key, jtype t, bool *bad_out)
{
	const jnode *n = obj ? json_get(obj, key) : NULL;
	if (!n || n->type == J_NULL)
		return NULL;
	if (n->type != t) {
		cordon_err(x->err, 0, "%s:%d:%d: \"%s\" must be %s, not %s", x->file, n->line, n->col, key,
			   json_type_name(t), json_type_name(n->type));
		*bad_out = true;
		return NULL;
	}
	return n;
}

#define GET(obj, key, t)                                   \
	({                                                 \
		bool _b = false;                           \
		const jnode *_n = typed(x, obj, key, t, &_b); \
		if (_b)                                    \
			return -1;                         \
		_n;                                        \
	})

static int get_str(struct ctx *x, const jnode *obj, const char *key, char **out)
{
	const jnode *n = GET(obj, key, J_STR);
	if (!n)
		return 0;
	free(*out);
	*out = strdup(n->str);
	return *out ? 0 : cordon_oom(x->err);
}

static int get_u64(struct ctx *x, const jnode *obj, const char *key, uint64_t *out, bool *have)
{
	const jnode *n = GET(obj, key, J_NUM);
	if (!n)
		return 0;
	if (!n->num_is_int || n->num < 0 || n->num > 1.8e19)
		return bad(x, n, "must be a non-negative integer", key);
	*out = (uint64_t)n->num;
	if (have)
		*have = true;
	return 0;
}

static int get_i64(struct ctx *x, const jnode *obj, const char *key, int64_t *out)
{
	const jnode *n = GET(obj, key, J_NUM);
	if (!n)
		return 0;
	if (!n->num_is_int || n->num < -9.2e18 || n->num > 9.2e18)
		return bad(x, n, "must be an integer", key);
	*out = (int64_t)n->num;
	return 0;
}

static int get_strv(struct ctx *x, const jnode *obj, const char *key, strv *out)
{
	const jnode *n = GET(obj, key, J_ARR);
	if (!n)
		return 0;
	for (size_t i = 0; i < n->n; i++) {
		if (n->items[i]->type != J_STR)
			return bad(x, n->items[i], "must be an array of strings", key);
		if (strv_push(out, n->items[i]->str) < 0)
			return cordon_oom(x->err);
	}
	return 0;
}

static const char *const cap_names[] = {
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE",
	"CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE",
	"CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT",
	"CAP_SYS_NICE", "CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
	"CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN",
	"CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
};

int oci_cap_number(const char *name)
{
	for (size_t i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
		if (strcasecmp(name, cap_names[i]) == 0 ||
		    (strncasecmp(name, "CAP_", 4) != 0 && strcasecmp(name, cap_names[i] + 4) == 0))
			return (int)i;
	return -1;
}

const char *oci_cap_name(int nr)
{
	return nr >= 0 && (size_t)nr < sizeof(cap_names) / sizeof(cap_names[0]) ? cap_names[nr] : "CAP_?";
}

static const struct { const char *n; int s; } sigs[] = {
	{"HUP", SIGHUP}, {"INT", SIGINT}, {"QUIT", SIGQUIT}, {"ILL", SIGILL}, {"TRAP", SIGTRAP},
	{"ABRT", SIGABRT}, {"IOT", SIGIOT}, {"BUS", SIGBUS}, {"FPE", SIGFPE}, {"KILL", SIGKILL},
	{"USR1", SIGUSR1}, {"SEGV", SIGSEGV}, {"USR2", SIGUSR2}, {"PIPE", SIGPIPE}, {"ALRM", SIGALRM},
	{"TERM", SIGTERM}, {"STKFLT", SIGSTKFLT}, {"CHLD", SIGCHLD}, {"CONT", SIGCONT}, {"STOP", SIGSTOP},
	{"TSTP", SIGTSTP}, {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU}, {"URG", SIGURG}, {"XCPU", SIGXCPU},
	{"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}, {"WINCH", SIGWINCH}, {"IO", SIGIO},
	{"POLL", SIGPOLL}, {"PWR", SIGPWR}, {"SYS", SIGSYS},
};

int oci_signal_number(const char *s)
{
	if (!s || !*s)
		return -1;
	char *end;
	long v = strtol(s, &end, 10);
	if (*end == '\0')
		return v > 0 && v < 65 ? (int)v : -1;
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (strcasecmp(s, sigs[i].n) == 0)
			return sigs[i].s;
	if (strncasecmp(s, "RTMIN+", 6) == 0) {
		long k = strtol(s + 6, &end, 10);
		if (*end == '\0' && k >= 0 && SIGRTMIN + k <= SIGRTMAX)
			return SIGRTMIN + (int)k;
	}
	return -1;
}

static const struct { const char *n; int r; } rlims[] = {
	{"RLIMIT_AS", RLIMIT_AS}, {"RLIMIT_CORE", RLIMIT_CORE}, {"RLIMIT_CPU", RLIMIT_CPU},
	{"RLIMIT_DATA", RLIMIT_DATA}, {"RLIMIT_FSIZE", RLIMIT_FSIZE}, {"RLIMIT_LOCKS", RLIMIT_LOCKS},
	{"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK}, {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE}, {"RLIMIT_NICE", RLIMIT_NICE},
	{"RLIMIT_NOFILE", RLIMIT_NOFILE}, {"RLIMIT_NPROC", RLIMIT_NPROC}, {"RLIMIT_RSS", RLIMIT_RSS},
	{"RLIMIT_RTPRIO", RLIMIT_RTPRIO}, {"RLIMIT_RTTIME", RLIMIT_RTTIME}, {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
	{"RLIMIT_STACK", RLIMIT_STACK},
};

static const struct { const char *n; unsigned long set, clear, prop; } mopts[] = {
	{"ro", MS_RDONLY, 0, 0}, {"rw", 0, MS_RDONLY, 0}, {"nosuid", MS_NOSUID, 0, 0}, {"suid", 0, MS_NOSUID, 0},
	{"nodev", MS_NODEV, 0, 0}, {"dev", 0, MS_NODEV, 0}, {"noexec", MS_NOEXEC, 0, 0}, {"exec", 0, MS_NOEXEC, 0},
	{"sync", MS_SYNCHRONOUS, 0, 0}, {"async", 0, MS_SYNCHRONOUS, 0}, {"dirsync", MS_DIRSYNC, 0, 0},
	{"remount", MS_REMOUNT, 0, 0}, {"mand", MS_MANDLOCK, 0, 0}, {"nomand", 0, MS_MANDLOCK, 0},
	{"atime", 0, MS_NOATIME, 0}, {"noatime", MS_NOATIME, 0, 0}, {"diratime", 0, MS_NODIRATIME, 0},
	{"nodiratime", MS_NODIRATIME, 0, 0}, {"relatime", MS_RELATIME, 0, 0}, {"norelatime", 0, MS_RELATIME, 0},
	{"strictatime", MS_STRICTATIME, 0, 0}, {"nostrictatime", 0, MS_STRICTATIME, 0},
	{"private", 0, 0, MS_PRIVATE}, {"rprivate", 0, 0, MS_PRIVATE | MS_REC}, {"shared", 0, 0, MS_SHARED},
	{"rshared", 0, 0, MS_SHARED | MS_REC}, {"slave", 0, 0, MS_SLAVE}, {"rslave", 0, 0, MS_SLAVE | MS_REC},
	{"unbindable", 0, 0, MS_UNBINDABLE}, {"runbindable", 0, 0, MS_UNBINDABLE | MS_REC},
};

static int parse_mount(struct ctx *x, const jnode *m, struct oci_mount *om)
{
	if (m->type != J_OBJ)
		return bad(x, m, "must be an object", "a mount");
	const jnode *d = GET(m, "destination", J_STR);
	if (!d)
		return bad(x, m, "has no \"destination\"", "a mount");
	if (d->str[0] != '/')
		return bad(x, d, "must be an absolute path", "a mount's destination");
	if (get_str(x, m, "destination", &om->dest) < 0 || get_str(x, m, "type", &om->type) < 0 ||
	    get_str(x, m, "source", &om->source) < 0)
		return -1;
	strv o = {0};
	if (get_strv(x, m, "options", &o) < 0)
		return -1;
	buf data = {0};
	for (size_t i = 0; i < o.n; i++) {
		const char *s = o.v[i];
		bool known = false;
		if (strcmp(s, "bind") == 0 || strcmp(s, "rbind") == 0) {
			om->bind = true;
			om->rec |= s[0] == 'r';
			known = true;
		}
		for (size_t k = 0; !known && k < sizeof(mopts) / sizeof(mopts[0]); k++)
			if (strcmp(s, mopts[k].n) == 0) {
				om->flags = (om->flags | mopts[k].set) & ~mopts[k].clear;
				om->clear |= mopts[k].clear;
				if (mopts[k].prop)
					om->prop = mopts[k].prop;
				known = true;
			}
		if (!known && strcmp(s, "tmpcopyup") != 0 && strncmp(s, "idmap", 5) != 0 &&
		    strcmp(s, "rro") != 0 && strncmp(s, "x-", 2) != 0)
			buf_printf(&data, "%s%s", data.len ? "," : "", s);
	}
	strv_free(&o);
	om->data = data.p;
	if (om->type && strcmp(om->type, "bind") == 0)
		om->bind = true;
	if (!om->type && !om->bind)
		return bad(x, m, "has no \"type\" and is not a bind", "a mount");
	return 0;
}

static int parse_idmaps(struct ctx *x, const jnode *lin, const char *key, struct oci_idmap **out, size_t *n)
{
	const jnode *a = GET(lin, key, J_ARR);
	if (!a)
		return 0;
	*out = calloc(a->n ? a->n : 1, sizeof(**out));
	if (!*out)
		return cordon_oom(x->err);
	for (size_t i = 0; i < a->n; i++) {
		const jnode *m = a->items[i];
		if (m->type != J_OBJ)
			return bad(x, m, "must be an object", key);
		uint64_t c = 0, h = 0, s = 0;
		if (get_u64(x, m, "containerID", &c, NULL) < 0 || get_u64(x, m, "hostID", &h, NULL) < 0 ||
		    get_u64(x, m, "size", &s, NULL) < 0)
			return -1;
		if (s == 0 || c + s > 0xffffffffull || h + s > 0xffffffffull)
			return bad(x, m, "has a size of 0 or ids beyond 2^32", key);
		(*out)[i] = (struct oci_idmap){(uint32_t)c, (uint32_t)h, (uint32_t)s};
	}
	*n = a->n;
	return 0;
}

static int caps_of(struct ctx *x, const jnode *caps, const char *key, uint64_t *out)
{
	const jnode *a = GET(caps, key, J_ARR);
	if (!a)
		return 0;
	for (size_t i = 0; i < a->n; i++) {
		const jnode *c = a->items[i];
		if (c->type != J_STR)
			return bad(x, c, "must be an array of strings", key);
		int nr = oci_cap_number(c->str);
		if (nr < 0 || nr > CAP_LAST_CAP)
			return cordon_err(x->err, 0, "%s:%d:%d: unknown capability \"%s\"", x->file, c->line,
					  c->col, c->str);
		*out |= 1ull << nr;
	}
	return 0;
}

static int parse_seccomp_action(struct ctx *x, const jnode *n, int *act)
{
	static const struct { const char *n; int a; } acts[] = {
		{"SCMP_ACT_KILL", (int)SCMP_ACT_KILL}, {"SCMP_ACT_KILL_THREAD", (int)SCMP_ACT_KILL_THREAD},
		{"SCMP_ACT_KILL_PROCESS", (int)SCMP_ACT_KILL_PROCESS}, {"SCMP_ACT_TRAP", (int)SCMP_ACT_TRAP},
		{"SCMP_ACT_ERRNO", (int)SCMP_ACT_ERRNO(0)}, {"SCMP_ACT_TRACE", (int)SCMP_ACT_TRACE(0)},
		{"SCMP_ACT_ALLOW", (int)SCMP_ACT_ALLOW}, {"SCMP_ACT_LOG", (int)SCMP_ACT_LOG},
		{"SCMP_ACT_NOTIFY", (int)SCMP_ACT_NOTIFY},
	};
	for (size_t i = 0; i < sizeof(acts) / sizeof(acts[0]); i++)
		if (strcmp(n->str, acts[i].n) == 0) {
			*act = acts[i].a;
			return 0;
		}
	return cordon_err(x->err, 0, "%s:%d:%d: unknown seccomp action \"%s\"", x->file, n->line, n->col, n->str);
}

static int parse_seccomp(struct ctx *x, const jnode *s, struct oci_seccomp *sc)
{
	static const struct { const char *n; int op; } ops[] = {
		{"SCMP_CMP_NE", SCMP_CMP_NE}, {"SCMP_CMP_LT", SCMP_CMP_LT}, {"SCMP_CMP_LE", SCMP_CMP_LE},
		{"SCMP_CMP_EQ", SCMP_CMP_EQ}, {"SCMP_CMP_GE", SCMP_CMP_GE}, {"SCMP_CMP_GT", SCMP_CMP_GT},
		{"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ},
	};
	sc->present = true;
	const jnode *da = GET(s, "defaultAction", J_STR);
	if (!da)
		return bad(x, s, "has no \"defaultAction\"", "linux.seccomp");
	if (parse_seccomp_action(x, da, &sc->default_action) < 0)
		return -1;
	uint64_t e = 0;
	if (get_u64(x, s, "defaultErrnoRet", &e, &sc->has_default_errno) < 0)
		return -1;
	sc->default_errno = (uint32_t)e;
	if (get_strv(x, s, "architectures", &sc->arches) < 0 || get_strv(x, s, "flags", &sc->flags) < 0)
		return -1;
	const jnode *sy = GET(s, "syscalls", J_ARR);
	if (!sy)
		return 0;
	sc->rules = calloc(sy->n ? sy->n : 1, sizeof(*sc->rules));
	if (!sc->rules)
		return cordon_oom(x->err);
	sc->nrules = sy->n;
	for (size_t i = 0; i < sy->n; i++) {
		const jnode *r = sy->items[i];
		struct oci_seccomp_rule *rr = &sc->rules[i];
		if (r->type != J_OBJ)
			return bad(x, r, "must be an object", "a seccomp rule");
		if (get_strv(x, r, "names", &rr->names) < 0)
			return -1;
		const jnode *a = GET(r, "action", J_STR);
		if (!a)
			return bad(x, r, "has no \"action\"", "a seccomp rule");
		if (parse_seccomp_action(x, a, &rr->action) < 0)
			return -1;
		uint64_t er = 0;
		if (get_u64(x, r, "errnoRet", &er, &rr->has_errno) < 0)
			return -1;
		rr->errno_ret = (uint32_t)er;
		const jnode *args = GET(r, "args", J_ARR);
		for (size_t k = 0; args && k < args->n; k++) {
			if (k >= 6)
				return bad(x, args, "has more than 6 arguments", "a seccomp rule");
			const jnode *ar = args->items[k];
			uint64_t idx = 0, v = 0, v2 = 0;
			if (ar->type != J_OBJ)
				return bad(x, ar, "must be an object", "a seccomp argument");
			if (get_u64(x, ar, "index", &idx, NULL) < 0 || get_u64(x, ar, "value", &v, NULL) < 0 ||
			    get_u64(x, ar, "valueTwo", &v2, NULL) < 0)
				return -1;
			const jnode *op = GET(ar, "op", J_STR);
			if (!op || idx > 5)
				return bad(x, ar, "needs an \"op\" and an index below 6", "a seccomp argument");
			int o = -1;
			for (size_t q = 0; q < sizeof(ops) / sizeof(ops[0]); q++)
				if (strcmp(op->str, ops[q].n) == 0)
					o = ops[q].op;
			if (o < 0)
				return cordon_err(x->err, 0, "%s:%d:%d: unknown seccomp operator \"%s\"", x->file,
						  op->line, op->col, op->str);
			rr->args[k].idx = (unsigned)idx;
			rr->args[k].value = v;
			rr->args[k].value2 = v2;
			rr->args[k].op = o;
			rr->nargs = (unsigned)k + 1;
		}
	}
	return 0;
}

static int parse_resources(struct ctx *x, const jnode *r, struct oci_config *c)
{
	const jnode *m = GET(r, "memory", J_OBJ);
	if (m && (get_i64(x, m, "limit", &c->mem_limit) < 0 || get_i64(x, m, "swap", &c->mem_swap) < 0 ||
		  get_i64(x, m, "reservation", &c->mem_reservation) < 0))
		return -1;
	const jnode *p = GET(r, "pids", J_OBJ);
	if (p && get_i64(x, p, "limit", &c->pids_limit) < 0)
		return -1;
	const jnode *cpu = GET(r, "cpu", J_OBJ);
	if (cpu && (get_u64(x, cpu, "shares", &c->cpu_shares, NULL) < 0 || get_i64(x, cpu, "quota", &c->cpu_quota) < 0 ||
		    get_u64(x, cpu, "period", &c->cpu_period, NULL) < 0 || get_str(x, cpu, "cpus", &c->cpus) < 0 ||
		    get_str(x, cpu, "mems", &c->mems) < 0))
		return -1;
	const jnode *d = GET(r, "devices", J_ARR);
	if (d) {
		c->devrules = calloc(d->n ? d->n : 1, sizeof(*c->devrules));
		if (!c->devrules)
			return cordon_oom(x->err);
		for (size_t i = 0; i < d->n; i++) {
			const jnode *e = d->items[i];
			struct oci_devrule *dr = &c->devrules[i];
			if (e->type != J_OBJ)
				return bad(x, e, "must be an object", "a device rule");
			const jnode *al = GET(e, "allow", J_BOOL);
			dr->allow = al && al->b;
			char *t = NULL;
			if (get_str(x, e, "type", &t) < 0)
				return -1;
			dr->type = t && *t ? t[0] : 'a';
			free(t);
			dr->major = dr->minor = -1;
			if (get_i64(x, e, "major", &dr->major) < 0 || get_i64(x, e, "minor", &dr->minor) < 0 ||
			    get_str(x, e, "access", &dr->access) < 0)
				return -1;
			c->ndevrules = i + 1;
		}
	}
	return 0;
}

static void defaults(struct oci_config *c)
{
	c->mem_limit = c->mem_swap = c->mem_reservation = c->pids_limit = -1;
	c->cpu_quota = 0;
}

static int parse_process(struct ctx *x, const jnode *p, struct oci_config *c)
{
	const jnode *t = GET(p, "terminal", J_BOOL);
	c->terminal = t && t->b;
	const jnode *cs = GET(p, "consoleSize", J_OBJ);
	uint64_t h = 0, w = 0;
	if (cs && (get_u64(x, cs, "height", &h, NULL) < 0 || get_u64(x, cs, "width", &w, NULL) < 0))
		return -1;
	c->cons_h = (unsigned)h;
	c->cons_w = (unsigned)w;
	if (get_strv(x, p, "args", &c->args) < 0 || get_strv(x, p, "env", &c->env) < 0 ||
	    get_str(x, p, "cwd", &c->cwd) < 0)
		return -1;
	if (c->cwd && c->cwd[0] != '/')
		return bad(x, json_get(p, "cwd"), "must be an absolute path", "process.cwd");
	const jnode *u = GET(p, "user", J_OBJ);
	if (u) {
		uint64_t uid = 0, gid = 0, um = 0;
		if (get_u64(x, u, "uid", &uid, NULL) < 0 || get_u64(x, u, "gid", &gid, NULL) < 0 ||
		    get_u64(x, u, "umask", &um, &c->has_umask) < 0)
			return -1;
		c->uid = (uid_t)uid;
		c->gid = (gid_t)gid;
		c->umask = (mode_t)um;
		const jnode *ag = GET(u, "additionalGids", J_ARR);
		if (ag) {
			c->agids = calloc(ag->n ? ag->n : 1, sizeof(gid_t));
			if (!c->agids)
				return cordon_oom(x->err);
			for (size_t i = 0; i < ag->n; i++) {
				if (ag->items[i]->type != J_NUM || !ag->items[i]->num_is_int || ag->items[i]->num < 0)
					return bad(x, ag->items[i], "must be an array of ids", "additionalGids");
				c->agids[i] = (gid_t)ag->items[i]->num;
			}
			c->nagids = ag->n;
		}
	}
	const jnode *rl = GET(p, "rlimits", J_ARR);
	if (rl) {
		c->rl = calloc(rl->n ? rl->n : 1, sizeof(*c->rl));
		if (!c->rl)
			return cordon_oom(x->err);
		for (size_t i = 0; i < rl->n; i++) {
			const jnode *r = rl->items[i];
			if (r->type != J_OBJ)
				return bad(x, r, "must be an object", "an rlimit");
			const jnode *ty = GET(r, "type", J_STR);
			int res = -1;
			for (size_t k = 0; ty && k < sizeof(rlims) / sizeof(rlims[0]); k++)
				if (strcmp(ty->str, rlims[k].n) == 0)
					res = rlims[k].r;
			if (res < 0)
				return bad(x, ty ? ty : r, "is not a known rlimit type", "an rlimit's type");
			c->rl[i].res = res;
			if (get_u64(x, r, "soft", &c->rl[i].soft, NULL) < 0 || get_u64(x, r, "hard", &c->rl[i].hard, NULL) < 0)
				return -1;
			c->nrl = i + 1;
		}
	}
	const jnode *nnp = GET(p, "noNewPrivileges", J_BOOL);
	c->nnp = nnp && nnp->b;
	int64_t oom = 0;
	if (json_get(p, "oomScoreAdj")) {
		if (get_i64(x, p, "oomScoreAdj", &oom) < 0)
			return -1;
		c->has_oom = json_get(p, "oomScoreAdj")->type == J_NUM;
		c->oom = (int)oom;
	}
	const jnode *caps = GET(p, "capabilities", J_OBJ);
	if (caps) {
		c->has_caps = true;
		static const char *const k[5] = {"bounding", "effective", "inheritable", "permitted", "ambient"};
		for (int i = 0; i < 5; i++)
			if (caps_of(x, caps, k[i], &c->caps[i]) < 0)
				return -1;
	}
	return 0;
}

static int parse_hooks(struct ctx *x, const jnode *hooks, struct oci_config *c)
{
	for (int k = 0; k < OCI_H_N; k++) {
		const jnode *a = GET(hooks, oci_hook_names[k], J_ARR);
		if (!a)
			continue;
		c->hooks[k].h = calloc(a->n ? a->n : 1, sizeof(struct oci_hook));
		if (!c->hooks[k].h)
			return cordon_oom(x->err);
		for (size_t i = 0; i < a->n; i++) {
			const jnode *h = a->items[i];
			struct oci_hook *oh = &c->hooks[k].h[i];
			c->hooks[k].n = i + 1;
			if (h->type != J_OBJ)
				return bad(x, h, "must be an object", "a hook");
			if (get_str(x, h, "path", &oh->path) < 0 || get_strv(x, h, "args", &oh->args) < 0 ||
			    get_strv(x, h, "env", &oh->env) < 0)
				return -1;
			if (!oh->path || oh->path[0] != '/')
				return bad(x, h, "needs an absolute \"path\"", "a hook");
			int64_t to = 0;
			if (get_i64(x, h, "timeout", &to) < 0)
				return -1;
			if (json_get(h, "timeout") && to <= 0)
				return bad(x, json_get(h, "timeout"), "must be greater than zero", "a hook's timeout");
			oh->timeout = (int)to;
		}
	}
	return 0;
}

static int parse_linux(struct ctx *x, const jnode *l, struct oci_config *c)
{
	const jnode *ns = GET(l, "namespaces", J_ARR);
	for (size_t i = 0; ns && i < ns->n; i++) {
		const jnode *n = ns->items[i];
		if (n->type != J_OBJ)
			return bad(x, n, "must be an object", "a namespace");
		const jnode *t = GET(n, "type", J_STR);
		int k = -1;
		for (int q = 0; t && q < OCI_NS_N; q++)
			if (strcmp(t->str, oci_ns_names[q]) == 0)
				k = q;
		if (k < 0)
			return bad(x, t ? t : n, "is not a namespace type cordon-oci knows", "a namespace's type");
		if (c->ns_new[k] || c->ns_path[k])
			return bad(x, n, "is given twice", "a namespace type");
		if (get_str(x, n, "path", &c->ns_path[k]) < 0)
			return -1;
		if (c->ns_path[k] && c->ns_path[k][0] != '/')
			return bad(x, json_get(n, "path"), "must be an absolute path", "a namespace's path");
		c->ns_new[k] = !c->ns_path[k];
	}
	if (parse_idmaps(x, l, "uidMappings", &c->uidm, &c->nuidm) < 0 ||
	    parse_idmaps(x, l, "gidMappings", &c->gidm, &c->ngidm) < 0)
		return -1;
	if (get_strv(x, l, "maskedPaths", &c->masked) < 0 || get_strv(x, l, "readonlyPaths", &c->ro_paths) < 0 ||
	    get_str(x, l, "cgroupsPath", &c->cgroups_path) < 0)
		return -1;
	const jnode *sy = GET(l, "sysctl", J_OBJ);
	for (size_t i = 0; sy && i < sy->n; i++) {
		if (sy->items[i]->type != J_STR)
			return bad(x, sy->items[i], "must be a string", "a sysctl value");
		if (strv_push(&c->sysctl_k, sy->keys[i]) < 0 || strv_push(&c->sysctl_v, sy->items[i]->str) < 0)
			return cordon_oom(x->err);
	}
	const jnode *rp = GET(l, "rootfsPropagation", J_STR);
	if (rp) {
		bool ok = false;
		for (size_t k = 0; k < sizeof(mopts) / sizeof(mopts[0]); k++)
			if (mopts[k].prop && strcmp(rp->str, mopts[k].n) == 0) {
				c->rootfs_prop = mopts[k].prop;
				ok = true;
			}
		if (!ok)
			return bad(x, rp, "is not a propagation", "rootfsPropagation");
	}
	const jnode *res = GET(l, "resources", J_OBJ);
	if (res && parse_resources(x, res, c) < 0)
		return -1;
	const jnode *dev = GET(l, "devices", J_ARR);
	if (dev) {
		c->devices = calloc(dev->n ? dev->n : 1, sizeof(*c->devices));
		if (!c->devices)
			return cordon_oom(x->err);
		for (size_t i = 0; i < dev->n; i++) {
			const jnode *d = dev->items[i];
			struct oci_dev *od = &c->devices[i];
			c->ndevices = i + 1;
			if (d->type != J_OBJ)
				return bad(x, d, "must be an object", "a device");
			char *t = NULL;
			uint64_t mode = 0, uid = 0, gid = 0;
			if (get_str(x, d, "type", &t) < 0 || get_str(x, d, "path", &od->path) < 0 ||
			    get_i64(x, d, "major", &od->major) < 0 || get_i64(x, d, "minor", &od->minor) < 0 ||
			    get_u64(x, d, "fileMode", &mode, &od->has_mode) < 0 || get_u64(x, d, "uid", &uid, &od->has_uid) < 0 ||
			    get_u64(x, d, "gid", &gid, &od->has_gid) < 0) {
				free(t);
				return -1;
			}
			od->type = t ? t[0] : 0;
			free(t);
			od->mode = (uint32_t)mode;
			od->uid = (uid_t)uid;
			od->gid = (gid_t)gid;
			if (!od->path || od->path[0] != '/' || !strchr("cbup", od->type ? od->type : 'x'))
				return bad(x, d, "needs an absolute \"path\" and a type c, b, u or p", "a device");
		}
	}
	const jnode *sc = GET(l, "seccomp", J_OBJ);
	if (sc && parse_seccomp(x, sc, &c->seccomp) < 0)
		return -1;
	return 0;
}

/* The file's bytes (at most OCI_CONFIG_MAX) into *b. */
static int read_config(int fd, const char *file, buf *b, cordon_error *err)
{
	char chunk[65536];
	ssize_t r;
	while ((r = read(fd, chunk, sizeof(chunk))) > 0)
		if (b->len + (size_t)r > OCI_CONFIG_MAX || buf_append(b, chunk, (size_t)r) < 0)
			return cordon_err(err, 0, "%s: larger than 4 MiB or out of memory", file);
	return r < 0 ? cordon_err_errno(err, "%s", file) : 0;
}

static int load_parsed(const char *file, const char *bundle, buf *b, struct oci_config *c, cordon_error *err);

int oci_config_load(const char *bundle, struct oci_config *c, cordon_error *err)
{
	return oci_config_load_raw(bundle, c, NULL, err);
}

int oci_config_load_raw(const char *bundle, struct oci_config *c, buf *raw, cordon_error *err)
{
	char file[PATH_MAX];
	snprintf(file, sizeof(file), "%s/config.json", bundle);
	memset(c, 0, sizeof(*c));
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return cordon_err_errno(err, "%s", file);
	buf b = {0};
	int r = read_config(fd, file, &b, err);
	close(fd);
	if (r == 0)
		r = load_parsed(file, bundle, &b, c, err);
	if (raw && r == 0)
		*raw = b;
	else
		buf_free(&b);
	return r;
}

int oci_config_load_kept(int dirfd, const char *bundle, struct oci_config *c, cordon_error *err)
{
	memset(c, 0, sizeof(*c));
	int fd = openat(dirfd, "config.json", O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return cordon_err_errno(err, "the state directory's config.json");
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return cordon_err(err, EINVAL, "the state directory's config.json is not a file");
	}
	buf b = {0};
	int r = read_config(fd, "config.json", &b, err);
	close(fd);
	if (r == 0)
		r = load_parsed("config.json", bundle, &b, c, err);
	buf_free(&b);
	return r;
}

static int load_parsed(const char *file, const char *bundle, buf *b, struct oci_config *c, cordon_error *err)
{
	defaults(c);
	struct ctx xx = {file, err}, *x = &xx;
	c->bundle = strdup(bundle);
	if (!c->bundle)
		return cordon_oom(err);
	c->json = json_parse(b->p ? b->p : "", b->len, err);
	if (!c->json)
		return cordon_err_wrap(err, "%s", file);
	const jnode *j = c->json;
	if (j->type != J_OBJ)
		return bad(x, j, "must be an object", "the configuration");
	const jnode *ver = GET(j, "ociVersion", J_STR);
	if (!ver)
		return bad(x, j, "has no \"ociVersion\"", "the configuration");
	if (strncmp(ver->str, "1.", 2) != 0)
		return cordon_err(err, 0, "%s:%d:%d: ociVersion \"%s\" is not 1.x", file, ver->line, ver->col, ver->str);
	const jnode *root = GET(j, "root", J_OBJ);
	if (!root)
		return bad(x, j, "has no \"root\"", "the configuration");
	char *rp = NULL;
	if (get_str(x, root, "path", &rp) < 0)
		return -1;
	if (!rp)
		return bad(x, root, "has no \"path\"", "root");
	char joined[PATH_MAX * 2], norm[PATH_MAX];
	snprintf(joined, sizeof(joined), "%s%s%s", rp[0] == '/' ? "" : bundle, rp[0] == '/' ? "" : "/", rp);
	free(rp);
	if (path_normalize(joined, norm, sizeof(norm)) < 0)
		return bad(x, root, "is too long", "root.path");
	c->root = strdup(norm);
	if (!c->root)
		return cordon_oom(err);
	const jnode *ro = GET(root, "readonly", J_BOOL);
	c->readonly = ro && ro->b;
	if (get_str(x, j, "hostname", &c->hostname) < 0 || get_str(x, j, "domainname", &c->domainname) < 0)
		return -1;
	const jnode *p = GET(j, "process", J_OBJ);
	if (p && parse_process(x, p, c) < 0)
		return -1;
	if (p && c->args.n == 0)
		return bad(x, p, "has no \"args\"", "process");
	if (p && !c->cwd)
		return bad(x, p, "has no \"cwd\"", "process");
	const jnode *ms = GET(j, "mounts", J_ARR);
	if (ms && ms->n > OCI_MOUNTS_MAX)
		return bad(x, ms, "has more than 4096 entries", "mounts");
	if (ms) {
		c->mounts = calloc(ms->n ? ms->n : 1, sizeof(*c->mounts));
		if (!c->mounts)
			return cordon_oom(err);
		for (size_t i = 0; i < ms->n; i++) {
			c->nmounts = i + 1;
			if (parse_mount(x, ms->items[i], &c->mounts[i]) < 0)
				return -1;
		}
	}
	const jnode *l = GET(j, "linux", J_OBJ);
	if (l && parse_linux(x, l, c) < 0)
		return -1;
	const jnode *h = GET(j, "hooks", J_OBJ);
	if (h && parse_hooks(x, h, c) < 0)
		return -1;
	const jnode *an = GET(j, "annotations", J_OBJ);
	for (size_t i = 0; an && i < an->n; i++) {
		if (an->items[i]->type != J_STR)
			return bad(x, an->items[i], "must be a string", "an annotation");
		if (strv_push(&c->ann_k, an->keys[i]) < 0 || strv_push(&c->ann_v, an->items[i]->str) < 0)
			return cordon_oom(err);
	}
	return 0;
}

int oci_resources_parse(const char *file, const char *text, size_t len, struct oci_config *c, cordon_error *err)
{
	struct ctx xx = {file, err}, *x = &xx;
	defaults(c);
	jnode *j = json_parse(text, len, err);
	if (!j)
		return cordon_err_wrap(err, "%s", file);
	int r = j->type == J_OBJ ? parse_resources(x, j, c) : bad(x, j, "must be an object", "the resources");
	json_free(j);
	return r;
}

int oci_process_parse(const char *file, const char *text, size_t len, struct oci_config *c, cordon_error *err)
{
	struct ctx xx = {file, err}, *x = &xx;
	jnode *j = json_parse(text, len, err);
	if (!j)
		return cordon_err_wrap(err, "%s", file);
	int r = j->type == J_OBJ ? parse_process(x, j, c) : bad(x, j, "must be an object", "the process");
	if (r == 0 && c->args.n == 0)
		r = bad(x, j, "has no \"args\"", "the process");
	json_free(j);
	return r;
}

void oci_config_free(struct oci_config *c)
{
	free(c->bundle);
	free(c->root);
	free(c->hostname);
	free(c->domainname);
	strv_free(&c->args);
	strv_free(&c->env);
	free(c->cwd);
	free(c->agids);
	free(c->rl);
	for (int i = 0; i < OCI_NS_N; i++)
		free(c->ns_path[i]);
	free(c->pod_net);
	free(c->pod_ca);
	free(c->pod_secrets);
	free(c->uidm);
	free(c->gidm);
	for (size_t i = 0; i < c->nmounts; i++) {
		free(c->mounts[i].dest);
		free(c->mounts[i].type);
		free(c->mounts[i].source);
		free(c->mounts[i].data);
	}
	free(c->mounts);
	strv_free(&c->masked);
	strv_free(&c->ro_paths);
	strv_free(&c->sysctl_k);
	strv_free(&c->sysctl_v);
	free(c->cgroups_path);
	free(c->cpus);
	free(c->mems);
	for (size_t i = 0; i < c->ndevices; i++)
		free(c->devices[i].path);
	free(c->devices);
	for (size_t i = 0; i < c->ndevrules; i++)
		free(c->devrules[i].access);
	free(c->devrules);
	strv_free(&c->seccomp.arches);
	strv_free(&c->seccomp.flags);
	for (size_t i = 0; i < c->seccomp.nrules; i++)
		strv_free(&c->seccomp.rules[i].names);
	free(c->seccomp.rules);
	for (int k = 0; k < OCI_H_N; k++) {
		for (size_t i = 0; i < c->hooks[k].n; i++) {
			free(c->hooks[k].h[i].path);
			strv_free(&c->hooks[k].h[i].args);
			strv_free(&c->hooks[k].h[i].env);
		}
		free(c->hooks[k].h);
	}
	strv_free(&c->ann_k);
	strv_free(&c->ann_v);
	json_free(c->json);
	policy_free(c->egress);
	memset(c, 0, sizeof(*c));
}
