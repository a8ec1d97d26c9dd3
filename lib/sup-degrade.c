/* The degraded boundary (sup-degrade.h, docs/hosts.md): decided before any
 * layer is prepared, applied by the steps sup-run.c numbers. What holds
 * without namespaces: the command never privileged (its own host uid as
 * root, the invoking uid else), every capability dropped, no_new_privs,
 * Landlock on the host's own paths (LANDLOCK_HOST_VIEW), seccomp (the deny
 * list, the socket families, setsid and setpgid), rlimits and the cgroup,
 * the process group and the parent-death signal. */
#include <dirent.h>
#include <errno.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <linux/seccomp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sup-degrade.h"
#include "cleanup.h"
#include "dirstream.h"
#include "hostwhy.h"
#include "ident.h"
#include "landlock.h"
#include "model-access.h"
#include "mounts-prep.h"
#include "ns.h"
#include "pol-opts.h"
#include "protect.h"
#include "proxy.h"
#include "report.h"

/* The run's CA bundle's directory (sup_degrade_ca): this, the supervisor's
 * PID and start time, and mkdtemp's six characters. */
#define CA_DIR_NAME "cordon-ca-"
#define CA_DIR_PREFIX "/tmp/" CA_DIR_NAME

static void lost(struct run_report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lost(struct run_report *rep, const char *fmt, ...)
{
	struct enforcement *en = &rep->enf;
	if (en->ndegraded >= ARRAY_SIZE(en->degraded))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(en->degraded[en->ndegraded++], sizeof(en->degraded[0]), fmt, ap);
	va_end(ap);
}

/* What only a view of the run's own can give: the first such thing, or
 * NULL. */
static const char *needs_view(const struct run_plan *pl, bool session, bool check_view, char *out, size_t n)
{
	if (pl->rootfs[0])
		return "--rootfs (an image's system view)";
	if (session)
		return "a session (cordon serve, mcp)";
	if (check_view)
		return "a task check over the change set";
	for (size_t i = 0; i < pl->nmounts; i++) {
		if (pl->mounts[i].mode == MOUNT_TMPFS) {
			snprintf(out, n, "the tmpfs at %s", pl->mounts[i].path);
			return out;
		}
	}
	const struct boundary_model *m = &pl->model;
	for (size_t i = 0; i < m->n; i++) {
		const struct model_entry *e = &m->e[i];
		if (!model_entry_active(e, 0))
			continue;
		/* (A check's own files are seen at their host path instead:
		 * check_files_at_home.) */
		if ((e->kind == MK_RO_BIND || e->kind == MK_RW_BIND) && e->host && strcmp(e->host, e->path) != 0 &&
		    strcmp(e->path, pl->check_dir) != 0) {
			snprintf(out, n, "%s seen at %s", e->host, e->path);
			return out;
		}
		/* The run's CA bundle (TLS interception): a file of the host's
		 * instead (sup_degrade_ca). */
		if (e->kind == MK_SECRET && strcmp(e->path, CORDON_CA_DIR) != 0) {
			snprintf(out, n, "a secret delivered as a file (%s)", e->path);
			return out;
		}
		/* The state directory (the change-set key, the seccomp programs
		 * later runs load) or kept change sets, where the run's grants
		 * reach them: Landlock cannot take a path back from a grant
		 * above it, and without a mount namespace nothing covers it. */
		if (e->kind == MK_PROTECT && (e->flags & MODEL_MASKED)) {
			snprintf(out, n, "the mask over %s (%s)", e->host ? e->host : e->path,
				 e->reason ? e->reason : "masked");
			return out;
		}
	}
	return NULL;
}

int sup_degrade_check(const cordon_policy *p, const struct run_plan *plan, bool session, bool check_view,
		      const char *why, cordon_error *err)
{
	char what[4200];
	int abi = landlock_abi();
	if (!abi) {
		char lw[256];
		hostwhy_landlock(errno, lw, sizeof(lw));
		return cordon_err(err, 0, "%s, and %s: without a mount namespace and Landlock nothing would stand between the run and the filesystem; refused whatever enforcement.allow_weaker says",
				  why, lw);
	}
	/* Without seccomp nothing would keep the run in its process group
	 * (setsid, setpgid) or refuse its sockets: a process would outlive
	 * the run unreaped, and the host's network would be the run's. */
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0)
		return cordon_err(err, 0, "%s, and seccomp is not available on this kernel: without namespaces only seccomp keeps the run in its process group and refuses its sockets; refused whatever enforcement.allow_weaker says",
				  why);
	/* io_uring makes sockets of its own (IORING_OP_SOCKET), past the
	 * seccomp rule on socket() that is the run's only network bound. */
	static const char *const ring[] = {"io_uring_setup", "io_uring_enter", "io_uring_register"};
	for (size_t i = 0; i < ARRAY_SIZE(ring); i++)
		if (strv_contains(&p->sys_allow, ring[i]))
			return cordon_err(err, 0, "%s; syscalls.allow %s: io_uring makes sockets past the seccomp rule that is the degraded boundary's only network bound (allow_weaker \"namespaces\"); refused",
					  why, ring[i]);
	/* An ordinary user's run is that user: without Landlock's signal
	 * scoping it could kill its supervisor and go on, unreaped. */
	if (abi < 6 && geteuid() != 0)
		return cordon_err(err, 0, "%s; the degraded boundary (allow_weaker \"namespaces\") needs Landlock ABI 6 for an ordinary user (this kernel has ABI %d): without signal scoping the run could kill its supervisor and go on unreaped",
				  why, abi);
	const char *v = policy_opts(p)->pty ? "--pty (a pty of the run's own devpts, in a session of its own)"
						: needs_view(plan, session, check_view, what, sizeof(what));
	if (v)
		return cordon_err(err, 0, "%s; the degraded boundary (allow_weaker \"namespaces\") has no view of the run's own, which %s needs",
				  why, v);
	bool net = p->net_allow.n > 0;
	char pw[200];
	if (net && !sup_degrade_proxy(abi, pw, sizeof(pw)) && !(p->allow_weaker & WEAK_NETWORK))
		return cordon_err(err, 0, "%s; network.allow: without a network namespace of the run's own the proxy bounds the run's network only where %s; set enforcement.allow_weaker [\"namespaces\", \"network\"] to run with the host's network unbounded",
				  why, pw);
	return 0;
}

/* Is capability cap in this process's effective set? */
static bool has_cap(int cap)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned long long eff = 0;
	bool found = false;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			found = true;
			break;
		}
	if (f)
		fclose(f);
	return found && (eff >> cap) & 1;
}

bool sup_degrade_proxy_as_run(void)
{
	return geteuid() == 0 && !has_cap(CAP_SYS_PTRACE);
}

bool sup_degrade_proxy(int abi, char *why, size_t n)
{
	/* Landlock ABI 4 came with Linux 6.7, after ADDFD's SETFD (5.14) and
	 * user notification (5.0); a filter above cordon's may still refuse
	 * the notification. */
	unsigned int act = SECCOMP_RET_USER_NOTIF;
	if (abi < 4) {
		snprintf(why, n, "Landlock refuses the run's own TCP connect and bind (ABI 4, Linux 6.7; this kernel has ABI %d)", abi);
		return false;
	}
	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &act) != 0) {
		snprintf(why, n, "seccomp user notification is available (SECCOMP_GET_ACTION_AVAIL: %s)", strerror(errno));
		return false;
	}
	/* The supervisor reads each connect's address from the run's memory
	 * (process_vm_readv, pidfd_getfd: ptrace access). The run is another
	 * uid when cordon is root (the run's own): that takes CAP_SYS_PTRACE,
	 * which a container's root usually lacks (Docker's and podman's
	 * default capabilities), or reading as the run's uid (CAP_SETUID and
	 * CAP_SETGID, which it has, for a moment per read), where Landlock
	 * scopes the run's signals (ABI 6): a process of the run's uid may
	 * signal cordon while it is that uid. Yama's ptrace_scope 2 takes
	 * CAP_SYS_PTRACE for the same uid too, and 3 refuses everyone. Without
	 * it every connect, the proxy's too, would be an unreadable denial. */
	int scope = 0;
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = 0;
		fclose(f);
	}
	if (scope >= 3) {
		snprintf(why, n, "cordon may read the run's connect addresses (Yama's kernel.yama.ptrace_scope is %d, which refuses it to every process)", scope);
		return false;
	}
	bool ptrace = has_cap(CAP_SYS_PTRACE);
	if (scope >= 2 && !ptrace) {
		snprintf(why, n, "cordon may read the run's connect addresses: that needs CAP_SYS_PTRACE (Yama's kernel.yama.ptrace_scope is 2), which this process lacks (a container's default capabilities leave it out)");
		return false;
	}
	if (geteuid() == 0 && !ptrace && (!has_cap(CAP_SETUID) || !has_cap(CAP_SETGID))) {
		snprintf(why, n, "cordon may read the run's connect addresses: the run is a uid of its own, and that needs CAP_SYS_PTRACE, or CAP_SETUID and CAP_SETGID to read as the run's uid, which this process lacks");
		return false;
	}
	if (geteuid() == 0 && !ptrace && abi < 6) {
		snprintf(why, n, "cordon may read the run's connect addresses: the run is a uid of its own, and without CAP_SYS_PTRACE cordon reads as the run's uid, which needs Landlock ABI 6 (the run's signals scoped; this kernel has ABI %d)", abi);
		return false;
	}
	if (why && n)
		why[0] = '\0';
	return true;
}

/* A check's own files (check.files): no view to show them at their random
 * directory, so at their host path, read-only by Landlock's rule (outside
 * every path the task may write or read: pol-plan.c refuses them else),
 * named there by CORDON_CHECK_DIR and a cwd of "/check". */
static int check_files_at_home(struct sup *s, cordon_error *err)
{
	struct run_plan *pl = &s->plan;
	if (!pl->check_files[0] || !pl->check_dir[0])
		return 0;
	for (size_t i = 0; i < pl->model.n; i++) {
		struct model_entry *e = &pl->model.e[i];
		if (e->kind == MK_RO_BIND && e->path && strcmp(e->path, pl->check_dir) == 0)
			e->path = pl->check_files;
	}
	if (path_has_prefix(pl->cwd_in, pl->check_dir)) {
		char cwd[sizeof(pl->cwd_in)];
		if ((size_t)snprintf(cwd, sizeof(cwd), "%s%s", pl->check_files, pl->cwd_in + strlen(pl->check_dir)) >= sizeof(cwd))
			return cordon_err(err, 0, "check.cwd: %s%s: too long", pl->check_files, pl->cwd_in + strlen(pl->check_dir));
		memcpy(pl->cwd_in, cwd, sizeof(cwd));
	}
	static const char var[] = "CORDON_CHECK_DIR=";
	for (size_t i = 0; i < s->env.n; i++) {
		if (strncmp(s->env.v[i], var, strlen(var)) != 0)
			continue;
		char *v = NULL;
		if (asprintf(&v, "%s%s", var, pl->check_files) < 0)
			return cordon_oom(err);
		free(s->env.v[i]);
		s->env.v[i] = v;
	}
	return 0;
}

int sup_degrade_decide(struct sup *s, cordon_error *err)
{
	const cordon_policy *p = s->pol;
	if (!(p->allow_weaker & WEAK_NAMESPACES))
		return 0;
	char why[256];
	if (ns_probe_view(SUP_DEGRADE_NS, s->privileged, why, sizeof(why)))
		return 0; /* the whole boundary can be had */
	if (sup_degrade_check(p, &s->plan, s->spec.session, s->opts->view != NULL, why, err) < 0)
		return -1;
	int abi = landlock_abi();
	bool net = p->net_allow.n > 0;
	s->degraded = true;
	s->degraded_proxy = net && sup_degrade_proxy(abi, NULL, 0);
	s->dnet_as_run = s->degraded_proxy && sup_degrade_proxy_as_run();
	/* Never privileged: a root cordon runs a serve client's command as
	 * that client, and its own as a uid of the run's own. */
	if (s->privileged && s->host_uid != 0) {
		s->sb_uid = s->host_uid;
		s->sb_gid = s->host_gid;
	}
	/* Read as the run's uid only where that uid is the run's alone: a
	 * serve client's other processes, outside Landlock's scope, could
	 * signal cordon while it has their uid. */
	if (s->dnet_as_run && s->sb_uid == s->host_uid)
		return cordon_err(err, 0, "%s; network.allow: without CAP_SYS_PTRACE cordon reads the run's connects as the run's uid, and this run's uid %u is a client's, whose other processes could signal cordon meanwhile; give cordon CAP_SYS_PTRACE",
				  why, (unsigned)s->sb_uid);
	if (check_files_at_home(s, err) < 0)
		return -1;
	struct run_report *rep = s->rep;
	/* A task check's scratch workspace is an overlay on a tmpfs: without
	 * a mount namespace its workspace is read-only as every other path
	 * (Landlock), as where the overlay cannot be made (check.workspace
	 * "read-only", and why). */
	bool scratch = false;
	for (size_t i = 0; i < s->plan.nmounts; i++) {
		scratch |= s->plan.mounts[i].scratch;
		s->plan.mounts[i].scratch = false;
	}
	for (size_t i = 0; i < s->plan.model.n; i++) {
		struct model_entry *e = &s->plan.model.e[i];
		if (!(e->flags & MODEL_SCRATCH))
			continue;
		e->flags &= ~MODEL_SCRATCH;
		e->landlock = LL_RO, e->view = VIEW_RO;
		e->reason = "the workspace, read-only (the task check, in the degraded boundary)";
	}
	if (scratch)
		snprintf(rep->check_workspace_reason, sizeof(rep->check_workspace_reason),
			 "the degraded boundary (allow_weaker \"namespaces\") has no mount namespace for the check's scratch layer");
	lost(rep, "namespaces: %s; the run has none of its own (user, mount, PID, IPC, UTS, network)", why);
	lost(rep, "filesystem: the host's tree, held by Landlock (ABI %d) alone: what the policy grants at its own paths, the standard devices, /proc read-only; no private /tmp, /dev/shm or /etc/hosts; protected paths are not held (each one the run changes is a file denial after the run)",
	     abi);
	lost(rep, "processes: the host's PID namespace (the run sees the host's processes in /proc); the run is reaped as its process group (setsid and setpgid refused by seccomp) and with the parent-death signal");
	if (s->degraded_proxy)
		lost(rep, "network: the host's, bounded by the proxy: the run's TCP connect is made by cordon, to the proxy's address (127.0.0.1:%d) only, every other refused (seccomp notification; Landlock ABI %d refuses the run's own TCP connect and bind); datagram, raw and every family but inet and inet6 (unix too: socketpair stays) refused by seccomp; no resolver of the run's own (network.transparent: clients must use the proxy variables)%s",
		     PROXY_PORT, abi,
		     s->dnet_as_run ? "; connects read as the run's uid (no CAP_SYS_PTRACE)" : "");
	else if (net)
		lost(rep, "network: the host's, unbounded (allow_weaker \"network\"): no proxy, none of its rules and no secret injected; datagram, raw and every family but inet and inet6 (unix too: socketpair stays) refused by seccomp");
	else
		lost(rep, "network: the host's; socket() refused by seccomp for every family, unix too (socketpair stays)%s",
		     abi >= 4 ? ", TCP bind and connect by Landlock too" : "");
	lost(rep, "IPC and hostname: the host's (System V IPC and POSIX message queues of uid %u are reachable)", (unsigned)s->sb_uid);
	lost(rep, "denial reports: no seccomp observer (it reads the run's own view): a refused call fails with EPERM and is not in the report%s",
	     s->degraded_proxy ? " (a refused connect is: a network denial)" : "");
	if (p->kill_on_violation)
		lost(rep, "on_violation kill: no denial is seen while the run goes on (no seccomp observer), so none ends it%s; a protected path it changed is found after it",
		     s->degraded_proxy ? " but a refused connect" : "");
	return 0;
}

int sup_degrade_layers(struct sup *s, cordon_error *err)
{
	if (!s->degraded)
		return 0;
	if (overlay_fall_back_late(&s->ovl, s->pol, s->rep, "the degraded boundary has no mount namespace to mount it in", err) < 0)
		return -1;
	s->plan.model.run.sys_rules |= SYS_R_KEEP_PGRP | (s->pol->net_allow.n ? SYS_R_STREAM_ONLY : SYS_R_NO_SOCKET);
	s->spec.degraded = true;
	s->spec.run_uid = s->sb_uid;
	s->spec.run_gid = s->sb_gid;
	s->spec.dns = false; /* no network namespace to answer in */
	if (s->degraded_proxy) {
		/* The proxy kept (sup-degrade-net.h): its variables stay, the
		 * observer's own network rules go (no notification of theirs). */
		s->plan.model.run.sys_rules &= ~(SYS_R_CONNECT | SYS_R_SENDTO | SYS_R_BIND | SYS_R_HOSTSOCK);
		s->plan.model.run.sys_rules |= SYS_R_DEGRADED_NET;
		return 0;
	}
	/* No proxy: its variables would send the run's requests to whatever
	 * listens on that port of the host. */
	static const char *const px[] = {"HTTP_PROXY=", "HTTPS_PROXY=", "http_proxy=", "https_proxy=", "ALL_PROXY=",
					 "all_proxy=", "NO_PROXY=", "no_proxy="};
	for (size_t i = 0; i < s->env.n;) {
		bool drop = false;
		for (size_t k = 0; k < ARRAY_SIZE(px) && !drop; k++)
			drop = strncmp(s->env.v[i], px[k], strlen(px[k])) == 0;
		if (!drop) {
			i++;
			continue;
		}
		free(s->env.v[i]);
		memmove(&s->env.v[i], &s->env.v[i + 1], (s->env.n - i) * sizeof(char *)); /* with the NULL */
		s->env.n--;
		if (s->env_secret_start > i)
			s->env_secret_start--;
	}
	s->spec.envp = s->env.v;
	s->spec.proxy = false;
	return 0;
}

int sup_degrade_join_cgroup(struct sup *s, cordon_error *err)
{
	int fd = openat(s->cg.dirfd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return cordon_err_errno(err, "open the run's cgroup.procs");
	char b[32];
	int n = snprintf(b, sizeof(b), "%d\n", (int)s->pid);
	int r = write(fd, b, (size_t)n) == n ? 0 : cordon_err_errno(err, "move init into the run's cgroup");
	close(fd);
	return r;
}

int sup_degrade_hand_over(struct sup *s, cordon_error *err)
{
	bool any_rw = false;
	for (size_t i = 0; i < s->plan.nmounts; i++)
		any_rw |= s->plan.mounts[i].mode == MOUNT_RW;
	if (!any_rw)
		return 0;
	if (s->sb_uid == s->host_uid) {
		s->rep->enf.workspace_ownership = "invoking-uid";
		return 0;
	}
	s->handed = calloc(s->plan.nmounts, sizeof(bool));
	if (!s->handed)
		return cordon_oom(err);
	const char *first = NULL;
	for (size_t i = 0; i < s->plan.nmounts; i++) {
		if (s->plan.mounts[i].mode != MOUNT_RW)
			continue;
		s->handed[i] = true;
		first = first ? first : s->plan.mounts[i].path;
		if (mounts_hand_tree(s->plan.mounts[i].path, s->host_uid, s->host_gid, s->sb_uid, s->sb_gid, err) < 0)
			return -1;
	}
	s->rep->enf.workspace_ownership = "chown";
	snprintf(s->rep->enf.workspace_ownership_reason, sizeof(s->rep->enf.workspace_ownership_reason),
		 "the degraded boundary has no user namespace to map through: your files below %s handed to the run's uid %u for the run and back to you after it",
		 first, (unsigned)s->sb_uid);
	return 0;
}

/* The host path of a snapshot's entry, below its writable root: its
 * protected name, if any. */
static bool protected_entry(const strv *names, const struct snapshot *sn, const struct snap_entry *e, int dir)
{
	if (e->root >= sn->nroots)
		return false;
	const char *rel = snap_path(sn, e) + sn->rootlen[e->root];
	while (*rel == '/')
		rel++;
	return *rel && protect_match(names, rel, S_ISDIR(e->mode) ? dir : 0, NULL, 0);
}

void sup_degrade_protected(struct sup *s, const struct snapshot *before, const struct snapshot *after)
{
	if (!s->degraded)
		return;
	strv names;
	cordon_error e = {0};
	if (protect_effective(s->pol, &names, NULL, &e) < 0) {
		report_add_denial(s->rep, "file", "protected paths: not looked at after the run");
		return;
	}
	if (before->truncated || after->truncated)
		report_add_denial(s->rep, "file", "protected paths: not all looked at after the run (the snapshot was cut)");
	size_t i = 0, j = 0;
	while (i < before->n || j < after->n) {
		const struct snap_entry *a = i < before->n ? &before->e[i] : NULL;
		const struct snap_entry *b = j < after->n ? &after->e[j] : NULL;
		int c = !a ? 1 : !b ? -1 : strcmp(snap_path(before, a), snap_path(after, b));
		if (c < 0 && a) { /* deleted */
			if (protected_entry(&names, before, a, PROTECT_DIR_KEPT))
				report_add_denial(s->rep, "file", snap_path(before, a));
			i++;
			continue;
		}
		if (c > 0 && b) { /* created */
			if (protected_entry(&names, after, b, PROTECT_DIR_NEW))
				report_add_denial(s->rep, "file", snap_path(after, b));
			j++;
			continue;
		}
		if (!a || !b)
			break;
		bool changed = a->ino != b->ino || a->mode != b->mode || a->size != b->size ||
			       a->mtime_ns != b->mtime_ns || a->ctime_ns != b->ctime_ns;
		if (changed && protected_entry(&names, after, b, S_ISDIR(a->mode) ? PROTECT_DIR_KEPT : 0))
			report_add_denial(s->rep, "file", snap_path(after, b));
		i++;
		j++;
	}
	strv_free(&names);
}

void sup_degrade_reap(struct sup *s)
{
	if (s->degraded && s->pid > 0)
		kill(-s->pid, SIGKILL);
}

/* The starttime (/proc/PID/stat's field 22) of a live process, 0 where
 * pid has none or is a zombie. */
static unsigned long long proc_start(pid_t pid)
{
	char p[64], text[1024];
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	_cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof(text) - 1);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	const char *c = strrchr(text, ')');
	if (!c || c[1] != ' ' || c[2] == 'Z' || c[2] == 'X')
		return 0;
	c += 2; /* state, field 3 */
	for (int f = 3; f < 22 && c; f++) {
		c = strchr(c, ' ');
		if (c)
			c++;
	}
	return c ? strtoull(c, NULL, 10) : 0;
}

int sup_degrade_ca(struct sup *s, cordon_error *err)
{
	if (!s->degraded_proxy || !s->ca_bundle.len)
		return 0;
	/* Named after this supervisor (PID and start time): a SIGKILLed
	 * one's is removed by a later look (sup_degrade_ca_reap). */
	snprintf(s->ca_dir, sizeof(s->ca_dir), CA_DIR_PREFIX "%d-%llu-XXXXXX", (int)getpid(), proc_start(getpid()));
	if (!mkdtemp(s->ca_dir)) {
		s->ca_dir[0] = '\0';
		return cordon_err_errno(err, "the run's CA bundle: a directory in /tmp");
	}
	_cleanup_close_ int d = open(s->ca_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0 || fchmod(d, 0755) < 0)
		return cordon_err_errno(err, "the run's CA bundle: %s", s->ca_dir);
	_cleanup_close_ int f = openat(d, "ca.pem", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (f < 0)
		return cordon_err_errno(err, "the run's CA bundle: %s/ca.pem", s->ca_dir);
	for (size_t off = 0; off < s->ca_bundle.len;) {
		ssize_t n = write(f, s->ca_bundle.p + off, s->ca_bundle.len - off);
		if (n <= 0)
			return cordon_err_errno(err, "the run's CA bundle: write %s/ca.pem", s->ca_dir);
		off += (size_t)n;
	}
	if (landlock_add_path(&s->landlock, s->ca_dir, LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR, err) < 0)
		return -1;
	/* The variables that name the bundle (sup-env.c) name this one. */
	char file[sizeof(s->ca_dir) + 8];
	snprintf(file, sizeof(file), "%s/ca.pem", s->ca_dir);
	for (size_t i = 0; i < s->env.n; i++) {
		char *eq = strchr(s->env.v[i], '=');
		if (!eq || strcmp(eq + 1, CORDON_CA_FILE) != 0)
			continue;
		char *v = NULL;
		if (asprintf(&v, "%.*s=%s", (int)(eq - s->env.v[i]), s->env.v[i], file) < 0)
			return cordon_oom(err);
		free(s->env.v[i]);
		s->env.v[i] = v;
	}
	s->spec.envp = s->env.v;
	s->spec.ca_pem = NULL; /* no view to put it in */
	return 0;
}

void sup_degrade_ca_remove(struct sup *s)
{
	if (!s->ca_dir[0])
		return;
	_cleanup_close_ int d = open(s->ca_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d >= 0)
		unlinkat(d, "ca.pem", 0);
	rmdir(s->ca_dir);
	s->ca_dir[0] = '\0';
}

/* Bounded whatever /tmp holds: entries read, and names of the pattern
 * looked at (anyone may make such names there). */
#define CA_REAP_SCAN_MAX 100000
#define CA_REAP_NAMES_MAX 256
void sup_degrade_ca_reap(void)
{
	int t = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_dstream_ struct dstream *d = t < 0 ? NULL : dstream_open(t);
	if (!d) {
		if (t >= 0)
			close(t);
		return;
	}
	int tmp = dstream_fd(d);
	struct dirent *e;
	size_t seen = 0, named = 0;
	while (seen++ < CA_REAP_SCAN_MAX && named < CA_REAP_NAMES_MAX && (e = dstream_read(d))) {
		int pid, end = 0;
		unsigned long long start;
		const char *rest = e->d_name + strlen(CA_DIR_NAME);
		if (strncmp(e->d_name, CA_DIR_NAME, strlen(CA_DIR_NAME)) != 0 ||
		    sscanf(rest, "%d-%llu-%n", &pid, &start, &end) != 2 || end <= 0 || strlen(rest + end) != 6 || pid <= 0)
			continue;
		named++;
		/* Not ours (one look, before any at /proc: names anyone may
		 * make cost one call each), or its supervisor alive (the same
		 * process: PID and start time): left alone. */
		struct stat st;
		if (fstatat(tmp, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != ident_euid() || proc_start(pid) == start)
			continue;
		_cleanup_close_ int dd = openat(tmp, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dd < 0 || fstat(dd, &st) < 0 || st.st_uid != ident_euid())
			continue;
		/* Its file and then itself, nothing else (a directory someone
		 * filled with more is not removed). */
		unlinkat(dd, "ca.pem", 0);
		unlinkat(tmp, e->d_name, AT_REMOVEDIR);
	}
}

void sup_degrade_why_failed(struct sup *s, cordon_error *err)
{
	if (s->degraded || s->exec_ok || (s->pol->allow_weaker & WEAK_NAMESPACES))
		return; /* probed already: the namespaces and the view held */
	char why[256];
	if (ns_probe_view(SUP_DEGRADE_NS, s->privileged, why, sizeof(why)))
		return;
	cordon_err_wrap(err, "%s; enforcement.allow_weaker [\"namespaces\"] runs without them (docs/hosts.md)", why);
}
