/* Theory of operation
 * ===================
 * Processes:
 *   supervisor  cordon itself, on the host. Single-threaded; owns every
 *               resource of the run and one epoll loop.
 *   init        PID 1 of the run's new user, mount, PID, IPC, UTS, network
 *               (and cgroup) namespaces, created by clone3. Builds the view,
 *               drops everything, forks the command, reaps orphans, reports
 *               the command's status, then exits: the kernel then kills every
 *               process left in the PID namespace (daemons included).
 *   command     PID 2: execs the task's argv.
 * Channels:
 *   sock        SOCK_SEQPACKET pair, fixed-size struct msg frames:
 *               sync 1 (parent->init): uid/gid maps are written.
 *               sync 2 (parent->init): cgroup attached, snapshot taken; init
 *                                      may start the command.
 *               init->parent: MSG_ERROR (setup failed; the command never
 *               started), MSG_EXEC_OK, MSG_EXIT (wait status of the command).
 *   out/err     pipes from the command to the supervisor, streamed through.
 *   pidfd       of init: its exit ends the run.
 * If the supervisor dies (even SIGKILL), init gets SIGKILL (PDEATHSIG), and
 * with PID 1 gone the kernel kills the whole run.
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cgroup.h"
#include "cleanup.h"
#include "compat.h"
#include "creds.h"
#include "error.h"
#include "hash.h"
#include "ledger.h"
#include "mounts.h"
#include "ns.h"
#include "run.h"
#include "stream.h"

#define SETUP_TIMEOUT_NS (30ULL * 1000000000ULL)

enum msg_type { MSG_GO1 = 1, MSG_GO2, MSG_ERROR, MSG_EXEC_OK, MSG_EXIT };
struct msg {
	uint32_t type;
	int32_t value;
	cordon_error err;
};

struct sup {
	const cordon_policy *pol;
	struct run_report *rep;
	struct run_plan plan;
	int *tree_fds;
	strv env;
	struct rlimit_plan rl;
	const struct cgroup_ops *cgops;
	struct cgroup cg;
	bool have_cg;
	bool privileged;
	uid_t host_uid;
	gid_t host_gid;
	uid_t sb_uid;
	gid_t sb_gid;
	char *const *argv;
	/* runtime */
	int sock, pidfd, epfd, timer, cpu_timer, sigfd;
	pid_t pid;
	struct out_stream out[2];
	bool exec_ok, got_exit, init_dead, setup_failed;
	int wstatus;
	enum run_status forced; /* ST_COUNT = none */
	int forced_signal;
	uint64_t t_start, t_exec, t_end;
	struct snapshot before;
	cordon_error child_err;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int send_msg(int sock, uint32_t type, int32_t value, const cordon_error *e)
{
	struct msg m;
	memset(&m, 0, sizeof(m));
	m.type = type;
	m.value = value;
	if (e)
		m.err = *e;
	ssize_t n;
	do
		n = send(sock, &m, sizeof(m), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(m) ? 0 : -1;
}

static int recv_msg(int sock, struct msg *m)
{
	ssize_t n;
	do
		n = recv(sock, m, sizeof(*m), 0);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return 0;
	return n == (ssize_t)sizeof(*m) ? 1 : -1;
}

/* ------------------------------------------------------------------ */
/* plan                                                                */

/* Resolve path like realpath(3), but refuse to follow a symlink that sits in
 * a directory at or below any of the writable paths. */
static int resolve_untrusted_links(const char *path, const strv *writable, char *out, size_t outsz,
				   cordon_error *err)
{
	char rest[PATH_MAX * 2], cur[PATH_MAX] = "";
	int links = 0;
	if (snprintf(rest, sizeof(rest), "%s", path) >= (int)sizeof(rest))
		return cordon_err(err, ENAMETOOLONG, "%s", path);
	char *p = rest;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char comp[NAME_MAX + 1];
		if (len > NAME_MAX)
			return cordon_err(err, ENAMETOOLONG, "%.*s", (int)len, p);
		memcpy(comp, p, len);
		comp[len] = '\0';
		p += len;
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			char *slash = strrchr(cur, '/');
			if (slash)
				*slash = '\0';
			continue;
		}
		char next[PATH_MAX];
		if (snprintf(next, sizeof(next), "%s/%s", cur, comp) >= (int)sizeof(next))
			return cordon_err(err, ENAMETOOLONG, "%s", path);
		struct stat st;
		if (lstat(next, &st) < 0)
			return cordon_err_errno(err, "%s", next);
		if (!S_ISLNK(st.st_mode)) {
			snprintf(cur, sizeof(cur), "%s", next);
			continue;
		}
		const char *dir = cur[0] ? cur : "/";
		for (size_t i = 0; i < writable->n; i++)
			if (path_has_prefix(dir, writable->v[i]))
				return cordon_err(err, 0, "%s is a symbolic link inside the writable path %s (a run could have planted it); name its target instead",
						  next, writable->v[i]);
		if (++links > 40)
			return cordon_err(err, ELOOP, "%s", path);
		char target[PATH_MAX];
		ssize_t n = readlink(next, target, sizeof(target) - 1);
		if (n < 0)
			return cordon_err_errno(err, "readlink %s", next);
		target[n] = '\0';
		char joined[PATH_MAX * 2];
		if (snprintf(joined, sizeof(joined), "%s/%s", target, p) >= (int)sizeof(joined))
			return cordon_err(err, ENAMETOOLONG, "%s", path);
		if (target[0] == '/')
			cur[0] = '\0';
		snprintf(rest, sizeof(rest), "%s", joined);
		p = rest;
	}
	snprintf(out, outsz, "%s", cur[0] ? cur : "/");
	return 0;
}

int run_plan_build(const cordon_policy *p, struct run_plan *plan, cordon_error *err)
{
	memset(plan, 0, sizeof(*plan));
	if (!getcwd(plan->workspace, sizeof(plan->workspace)))
		return cordon_err_errno(err, "the current directory");
	if (strcmp(plan->workspace, "/") == 0)
		return cordon_err(err, 0, "the current directory is /, which cannot be the writable workspace; cd into the task's directory");
	if (policy_effective_mounts(p, plan->workspace, &plan->mounts, &plan->nmounts, err) < 0)
		return -1;
	/* Binds are made at the canonical host path, resolved here on the host,
	 * so no spelling of a path changes what is bound, and the child opens
	 * each one without following any link. A symlink inside a writable path
	 * is refused rather than followed: an earlier run could have planted it
	 * there to redirect this bind out of the view. */
	strv writable = {0};
	if (strv_push(&writable, plan->workspace) < 0)
		return cordon_err(err, 12, "out of memory");
	for (size_t i = 0; i < plan->nmounts; i++) {
		char real[PATH_MAX];
		if (plan->mounts[i].mode == MOUNT_RW && realpath(plan->mounts[i].path, real) &&
		    strv_push(&writable, real) < 0) {
			strv_free(&writable);
			return cordon_err(err, 12, "out of memory");
		}
	}
	for (size_t i = 0; i < plan->nmounts; i++) {
		struct cordon_mount *m = &plan->mounts[i];
		if (m->mode == MOUNT_TMPFS)
			continue;
		char real[PATH_MAX];
		if (resolve_untrusted_links(m->path, &writable, real, sizeof(real), err) < 0) {
			strv_free(&writable);
			return cordon_err_wrap(err, "%s %s", mount_mode_name(m->mode), m->path);
		}
		if (strcmp(real, "/") == 0) {
			strv_free(&writable);
			return cordon_err(err, 0, "%s %s resolves to /, which cannot be mounted",
					  mount_mode_name(m->mode), m->path);
		}
		if (strcmp(real, m->path) != 0) {
			char *dup = strdup(real);
			if (!dup) {
				strv_free(&writable);
				return cordon_err(err, 12, "out of memory");
			}
			free(m->path);
			m->path = dup;
		}
	}
	strv_free(&writable);
	mounts_sort(plan->mounts, plan->nmounts);
	for (size_t i = 1; i < plan->nmounts; i++)
		if (strcmp(plan->mounts[i].path, plan->mounts[i - 1].path) == 0 &&
		    plan->mounts[i].mode != plan->mounts[i - 1].mode)
			return cordon_err(err, 0, "%s is requested both %s and %s (after resolving symlinks)",
					  plan->mounts[i].path, mount_mode_name(plan->mounts[i - 1].mode),
					  mount_mode_name(plan->mounts[i].mode));
	snprintf(plan->cwd_in, sizeof(plan->cwd_in), "%s", p->cwd ? p->cwd : plan->workspace);
	return 0;
}

void run_plan_free(struct run_plan *plan)
{
	mounts_free(plan->mounts, plan->nmounts);
	plan->mounts = NULL;
	plan->nmounts = 0;
}

static int build_env(struct sup *s, cordon_error *err)
{
	const char *lang = getenv("LANG"), *term = getenv("TERM");
	char tmp[1024];
	const char *defaults[4];
	defaults[0] = "PATH=/usr/local/bin:/usr/bin:/bin";
	defaults[1] = "HOME=/tmp";
	snprintf(tmp, sizeof(tmp), "LANG=%s", lang && *lang ? lang : "C.UTF-8");
	char tmp2[1024];
	snprintf(tmp2, sizeof(tmp2), "TERM=%s", term && *term ? term : "dumb");
	defaults[2] = tmp;
	defaults[3] = tmp2;
	for (int i = 0; i < 4; i++) {
		size_t nl = strcspn(defaults[i], "=") + 1;
		bool overridden = false;
		for (size_t j = 0; j < s->pol->env.n; j++)
			if (strncmp(s->pol->env.v[j], defaults[i], nl) == 0)
				overridden = true;
		if (!overridden && strv_push(&s->env, defaults[i]) < 0)
			return cordon_err(err, 12, "out of memory");
	}
	/* Policy entries, later ones winning. */
	for (size_t j = 0; j < s->pol->env.n; j++) {
		const char *e = s->pol->env.v[j];
		size_t nl = strcspn(e, "=") + 1;
		bool later = false;
		for (size_t k = j + 1; k < s->pol->env.n; k++)
			if (strncmp(s->pol->env.v[k], e, nl) == 0)
				later = true;
		if (!later && strv_push(&s->env, e) < 0)
			return cordon_err(err, 12, "out of memory");
	}
	return 0;
}

/* Refuse what this build cannot enforce yet: never run with less than asked. */
static int check_supported(const cordon_policy *p, cordon_error *err)
{
	if (p->net_allow.n)
		return cordon_err(err, 0, "network.allow %s: egress through the proxy is not available in this build; refusing to run without the requested boundary",
				  p->net_allow.v[0]);
	if (p->nsecrets)
		return cordon_err(err, 0, "secret %s: secret injection with redaction is not available in this build",
				  p->secrets[0].name);
	if (p->sys_allow.n || p->sys_deny.n)
		return cordon_err(err, 0, "syscalls: per-task syscall adjustments are not available in this build");
	if (p->check)
		return cordon_err(err, 0, "check: task checks are not available in this build");
	return 0;
}

/* ------------------------------------------------------------------ */
/* child: init and command                                             */

static __attribute__((noreturn)) void child_fail(int sock, cordon_error *e)
{
	send_msg(sock, MSG_ERROR, 0, e);
	_exit(1);
}

static void wait_go(int sock, uint32_t type)
{
	struct msg m;
	if (recv_msg(sock, &m) <= 0 || m.type != type)
		_exit(1); /* the supervisor is gone */
}

static __attribute__((noreturn)) void exec_command(struct sup *s, int outw, int errw, int status_fd)
{
	sigset_t none;
	sigemptyset(&none);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(outw, 1) < 0 || dup2(errw, 2) < 0)
		goto fail;
	if (dup3(status_fd, 3, O_CLOEXEC) < 0)
		goto fail;
	syscall(SYS_close_range, 4, ~0U, 0);
	const char *cmd = s->argv[0];
	int e = ENOENT;
	if (strchr(cmd, '/')) {
		execve(cmd, s->argv, s->env.v);
		e = errno;
	} else {
		const char *path = "/usr/local/bin:/usr/bin:/bin";
		for (size_t i = 0; i < s->env.n; i++)
			if (strncmp(s->env.v[i], "PATH=", 5) == 0)
				path = s->env.v[i] + 5;
		bool eacces = false;
		for (const char *p = path; *p;) {
			const char *c = strchr(p, ':');
			size_t l = c ? (size_t)(c - p) : strlen(p);
			char full[PATH_MAX];
			if (l && l + strlen(cmd) + 2 < sizeof(full)) {
				memcpy(full, p, l);
				full[l] = '/';
				strcpy(full + l + 1, cmd);
				execve(full, s->argv, s->env.v);
				if (errno == EACCES)
					eacces = true;
				else if (errno != ENOENT && errno != ENOTDIR)
					e = errno;
			}
			p += l;
			if (*p == ':')
				p++;
		}
		if (eacces && e == ENOENT)
			e = EACCES;
	}
	errno = e;
fail:
	e = errno;
	if (write(3, &e, sizeof(e)) < 0) {
		/* nothing more to do */
	}
	_exit(127);
}

/* The kernel clears the parent-death signal whenever credentials change, so
 * it is armed again after every such change; then, in case the supervisor
 * died before that, its end of the socket is checked for a hang-up. */
static void arm_pdeathsig(int sock)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct pollfd p = {sock, POLLRDHUP, 0};
	if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP)))
		_exit(1);
}

static __attribute__((noreturn)) void init_main(struct sup *s, int sock, int outw, int errw)
{
	cordon_error e = {0};
	arm_pdeathsig(sock);
	/* sync 1: the uid/gid maps are written. */
	wait_go(sock, MSG_GO1);
	if (creds_become_sandbox_user(&e) < 0)
		child_fail(sock, &e);
	arm_pdeathsig(sock);
	struct mount_plan mp = {s->plan.mounts, s->plan.nmounts, s->tree_fds};
	if (mounts_apply(&mp, &e) < 0)
		child_fail(sock, &e);
	if (s->tree_fds)
		for (size_t i = 0; i < s->plan.nmounts; i++)
			if (s->tree_fds[i] >= 0)
				close(s->tree_fds[i]);
	if (sethostname("cordon", 6) < 0) {
		cordon_err_errno(&e, "sethostname");
		child_fail(sock, &e);
	}
	if (ns_loopback_up(&e) < 0)
		child_fail(sock, &e);
	/* sync 2: cgroup attached and workspace snapshot taken. */
	wait_go(sock, MSG_GO2);
	/* On v1 we were attached after clone: a cgroup namespace made now is
	 * rooted at the run's own cgroup. */
	if (s->have_cg && s->cgops == &cgroup_v1_ops && unshare(CLONE_NEWCGROUP) < 0) {
		cordon_err_errno(&e, "unshare(CLONE_NEWCGROUP)");
		child_fail(sock, &e);
	}
	if (chdir(s->plan.cwd_in) < 0) {
		cordon_err_errno(&e, "working directory %s", s->plan.cwd_in);
		child_fail(sock, &e);
	}
	if (creds_apply_rlimits(&s->rl, &e) < 0)
		child_fail(sock, &e);
	/* A new session: the command has no controlling terminal to inject into. */
	if (setsid() < 0) {
		cordon_err_errno(&e, "setsid");
		child_fail(sock, &e);
	}
	if (creds_drop_all(&e) < 0)
		child_fail(sock, &e);
	arm_pdeathsig(sock);
	/* Not ptrace-able by the command it is about to start. */
	prctl(PR_SET_DUMPABLE, 0);
	int st[2];
	if (pipe2(st, O_CLOEXEC) < 0) {
		cordon_err_errno(&e, "pipe");
		child_fail(sock, &e);
	}
	pid_t cmd = fork();
	if (cmd < 0) {
		cordon_err_errno(&e, "fork the command");
		child_fail(sock, &e);
	}
	if (cmd == 0) {
		close(sock);
		close(st[0]);
		exec_command(s, outw, errw, st[1]);
	}
	close(st[1]);
	close(outw);
	close(errw);
	int exec_errno = 0;
	ssize_t n;
	do
		n = read(st[0], &exec_errno, sizeof(exec_errno));
	while (n < 0 && errno == EINTR);
	close(st[0]);
	if (n > 0) {
		cordon_err(&e, exec_errno, "exec %s", s->argv[0]);
		child_fail(sock, &e);
	}
	send_msg(sock, MSG_EXEC_OK, cmd, NULL);
	for (;;) {
		int ws;
		pid_t w = waitpid(-1, &ws, __WALL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			_exit(0);
		}
		if (w == cmd) {
			send_msg(sock, MSG_EXIT, ws, NULL);
			_exit(0);
		}
	}
}

/* ------------------------------------------------------------------ */
/* supervisor                                                          */

static void setup_error(struct sup *s, const cordon_error *e)
{
	if (s->rep->status != ST_SETUP_ERROR) {
		s->rep->status = ST_SETUP_ERROR;
		snprintf(s->rep->reason, sizeof(s->rep->reason), "%s", e->msg);
	}
	s->setup_failed = true;
}

static void kill_run(struct sup *s, enum run_status why)
{
	if (s->forced == ST_COUNT && !s->setup_failed)
		s->forced = why;
	if (s->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, s->pidfd, SIGKILL, NULL, 0);
}

static void arm_timer(int fd, uint64_t ns)
{
	struct itimerspec its = {0};
	its.it_value.tv_sec = (time_t)(ns / 1000000000ULL);
	its.it_value.tv_nsec = (long)(ns % 1000000000ULL);
	if (!ns)
		its.it_value.tv_nsec = 1;
	timerfd_settime(fd, 0, &its, NULL);
}

static uint64_t cpu_used_ns(struct sup *s)
{
	struct cg_usage u;
	if (!s->have_cg || s->cg.ops->usage(&s->cg, &u) < 0 || !u.have_cpu)
		return 0;
	return u.cpu_user_ns + u.cpu_sys_ns;
}

/* CPU time has no kernel event: check when the run could first have used up
 * its budget (remaining / cores), then again, so the check costs nothing
 * while the run is far from its limit. */
static void cpu_check(struct sup *s)
{
	const struct cordon_limit *l = &s->pol->limits[LIM_CPU];
	uint64_t used = cpu_used_ns(s);
	if (used >= l->value) {
		s->rep->limits_hit[LIM_CPU] = true;
		kill_run(s, ST_CPU_LIMIT);
		return;
	}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t next = (l->value - used) / (uint64_t)(ncpu > 0 ? ncpu : 1);
	if (next < 5000000)
		next = 5000000;
	arm_timer(s->cpu_timer, next);
}

static int ep_add(int ep, int fd, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.fd = fd};
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static void ep_mod(int ep, int fd, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.fd = fd};
	epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
}

static uint64_t output_budget(struct sup *s)
{
	const struct cordon_limit *l = &s->pol->limits[LIM_OUTPUT];
	if (!l->set)
		return UINT64_MAX;
	uint64_t used = s->out[0].bytes + s->out[1].bytes;
	return used >= l->value ? 0 : l->value - used;
}

static void on_stream(struct sup *s, int i)
{
	struct out_stream *st = &s->out[i];
	bool over = false;
	int fd = st->in_fd;
	ssize_t n = stream_read(st, output_budget(s), &over);
	if (n <= 0 && st->in_fd < 0) {
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
	}
	if (over) {
		s->rep->limits_hit[LIM_OUTPUT] = true;
		kill_run(s, ST_OUTPUT_LIMIT);
	}
	if (stream_flush(st) == 0 && st->in_fd >= 0) {
		/* Destination full: stop reading until it drains. */
		ep_mod(s->epfd, st->in_fd, 0);
		ep_add(s->epfd, st->out_fd, EPOLLOUT);
	}
}

static void on_stream_writable(struct sup *s, int i)
{
	struct out_stream *st = &s->out[i];
	if (stream_flush(st) != 0) {
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, st->out_fd, NULL);
		if (st->in_fd >= 0)
			ep_mod(s->epfd, st->in_fd, EPOLLIN);
	}
}

static void on_sock(struct sup *s)
{
	struct msg m;
	int r = recv_msg(s->sock, &m);
	if (r <= 0) {
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->sock, NULL);
		return;
	}
	switch (m.type) {
	case MSG_ERROR:
		setup_error(s, &m.err);
		break;
	case MSG_EXEC_OK:
		s->exec_ok = true;
		/* init sends this only after creds_drop_all() succeeded. */
		s->rep->enf.no_new_privs = true;
		s->t_exec = now_ns();
		if (s->pol->limits[LIM_WALL].set)
			arm_timer(s->timer, s->pol->limits[LIM_WALL].value);
		else
			timerfd_settime(s->timer, 0, &(struct itimerspec){0}, NULL);
		if (s->pol->limits[LIM_CPU].set && s->have_cg)
			cpu_check(s);
		break;
	case MSG_EXIT:
		s->got_exit = true;
		s->wstatus = m.value;
		break;
	}
}

static void on_init_exit(struct sup *s)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PIDFD, (id_t)s->pidfd, &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
		return;
	s->init_dead = true;
	s->t_end = now_ns();
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->pidfd, NULL);
	/* Drain the last messages (exit status) that init sent before dying. */
	struct pollfd p = {s->sock, POLLIN, 0};
	while (poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) {
		struct msg m;
		if (recv_msg(s->sock, &m) <= 0)
			break;
		if (m.type == MSG_ERROR)
			setup_error(s, &m.err);
		else if (m.type == MSG_EXIT) {
			s->got_exit = true;
			s->wstatus = m.value;
		} else if (m.type == MSG_EXEC_OK) {
			s->exec_ok = true;
		}
	}
}

static int event_loop(struct sup *s)
{
	struct epoll_event evs[16];
	while (!s->init_dead || s->out[0].in_fd >= 0 || s->out[1].in_fd >= 0) {
		int n = epoll_wait(s->epfd, evs, 16, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == s->sock) {
				on_sock(s);
			} else if (fd == s->pidfd) {
				on_init_exit(s);
			} else if (fd == s->timer) {
				uint64_t x;
				if (read(s->timer, &x, sizeof(x)) < 0) { /* spurious */ }
				if (!s->exec_ok) {
					cordon_error e;
					cordon_err(&e, 0, "setting up the boundary took longer than %llu s",
						   (unsigned long long)(SETUP_TIMEOUT_NS / 1000000000ULL));
					setup_error(s, &e);
					kill_run(s, ST_SETUP_ERROR);
				} else {
					s->rep->limits_hit[LIM_WALL] = true;
					kill_run(s, ST_TIMEOUT);
				}
			} else if (fd == s->cpu_timer) {
				uint64_t x;
				if (read(s->cpu_timer, &x, sizeof(x)) < 0) { /* spurious */ }
				cpu_check(s);
			} else if (fd == s->sigfd) {
				struct signalfd_siginfo si;
				if (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
					s->forced_signal = (int)si.ssi_signo;
					kill_run(s, ST_INTERRUPTED);
				}
			} else {
				for (int k = 0; k < 2; k++) {
					if (fd == s->out[k].in_fd)
						on_stream(s, k);
					else if (fd == s->out[k].out_fd)
						on_stream_writable(s, k);
				}
			}
		}
		/* The command exited: init exits right after; nothing else to do. */
	}
	return 0;
}

static void classify(struct sup *s, const struct cg_usage *u)
{
	struct run_report *r = s->rep;
	if (u->oom_kills)
		r->limits_hit[LIM_MEMORY] = true;
	if (u->pids_max_hits)
		r->limits_hit[LIM_PIDS] = true;
	if (s->got_exit) {
		if (WIFEXITED(s->wstatus))
			r->exit_code = WEXITSTATUS(s->wstatus);
		else if (WIFSIGNALED(s->wstatus))
			r->signal = WTERMSIG(s->wstatus);
	}
	if (s->setup_failed) {
		r->status = ST_SETUP_ERROR;
		return;
	}
	if (s->forced != ST_COUNT) {
		r->status = s->forced;
		if (!s->got_exit)
			r->signal = SIGKILL;
		if (s->forced == ST_INTERRUPTED)
			snprintf(r->reason, sizeof(r->reason), "cordon received %s; the run was stopped",
				 strsignal(s->forced_signal));
		return;
	}
	if (u->oom_kills) {
		r->status = ST_MEMORY_LIMIT;
		return;
	}
	if (!s->got_exit) {
		/* init vanished without a status: the run was killed from outside
		 * or by the kernel; never report that as success. */
		r->status = ST_SIGNALED;
		r->signal = SIGKILL;
		snprintf(r->reason, sizeof(r->reason), "the run ended without an exit status (killed from outside)");
		return;
	}
	if (WIFEXITED(s->wstatus)) {
		r->status = r->exit_code == 0 ? ST_OK : ST_EXIT_NONZERO;
		return;
	}
	int sig = r->signal;
	bool cpu_over = s->pol->limits[LIM_CPU].set &&
			(sig == SIGXCPU ||
			 (sig == SIGKILL && (u->cpu_user_ns + u->cpu_sys_ns) >= s->pol->limits[LIM_CPU].value));
	if (sig == SIGXFSZ) {
		r->status = ST_FILE_SIZE_LIMIT;
		r->limits_hit[LIM_FILE_SIZE] = true;
	} else if (cpu_over) {
		r->status = ST_CPU_LIMIT;
		r->limits_hit[LIM_CPU] = true;
	} else {
		r->status = ST_SIGNALED;
	}
}

static int prepare(struct sup *s, cordon_error *err)
{
	const cordon_policy *p = s->pol;
	if (build_env(s, err) < 0)
		return -1;
	s->privileged = geteuid() == 0;
	s->host_uid = getuid();
	s->host_gid = getgid();
	if (s->privileged) {
		s->sb_uid = SANDBOX_HOST_BASE + (uid_t)getpid();
		s->sb_gid = SANDBOX_HOST_BASE + (gid_t)getpid();
	} else {
		s->sb_uid = s->host_uid;
		s->sb_gid = s->host_gid;
	}
	/* Limits: cgroup when the host has one we can use; the per-process
	 * rlimits are backstops. */
	bool want_cg_limit = p->limits[LIM_MEMORY].set || p->limits[LIM_PIDS].set ||
			     p->limits[LIM_CPU].set;
	cordon_error cgerr = {0};
	s->cgops = cgroup_detect(&cgerr);
	if (!s->cgops && cgerr.msg[0])
		return cordon_err(err, 0, "%s", cgerr.msg);
	if (s->cgops) {
		cgroup_reap_stale(s->cgops);
		struct cg_limits cl = {
			p->limits[LIM_MEMORY].set ? p->limits[LIM_MEMORY].value : 0,
			p->limits[LIM_PIDS].set ? p->limits[LIM_PIDS].value : 0,
		};
		if (cgroup_create(&s->cg, s->cgops, &cl, &cgerr) == 0) {
			s->have_cg = true;
		} else if (want_cg_limit && !(p->allow_weaker & WEAK_CGROUP)) {
			return cordon_err(err, 0, "%s (the memory, pids and cpu limits need a cgroup; set enforcement.allow_weaker [\"cgroup\"] to accept per-process rlimits instead)",
					  cgerr.msg);
		}
	} else if (want_cg_limit && !(p->allow_weaker & WEAK_CGROUP)) {
		return cordon_err(err, 0, "no usable cgroup hierarchy on this host (the memory, pids and cpu limits need one; set enforcement.allow_weaker [\"cgroup\"] to accept per-process rlimits instead)");
	}
	if (p->limits[LIM_FILE_SIZE].set)
		s->rl.fsize = p->limits[LIM_FILE_SIZE].value;
	if (p->limits[LIM_CPU].set)
		s->rl.cpu_sec = (p->limits[LIM_CPU].value + 999999999ULL) / 1000000000ULL;
	if (!s->have_cg) {
		if (p->limits[LIM_MEMORY].set)
			s->rl.as = p->limits[LIM_MEMORY].value;
		if (p->limits[LIM_PIDS].set)
			s->rl.nproc = p->limits[LIM_PIDS].value;
	}
	/* As root: rw binds are idmapped so that files created inside belong
	 * to the invoking user although the run's own identity is sb_uid. */
	if (s->privileged) {
		s->tree_fds = calloc(s->plan.nmounts ? s->plan.nmounts : 1, sizeof(int));
		if (!s->tree_fds)
			return cordon_err(err, 12, "out of memory");
		for (size_t i = 0; i < s->plan.nmounts; i++)
			s->tree_fds[i] = -1;
		bool any_rw = false;
		for (size_t i = 0; i < s->plan.nmounts; i++)
			any_rw |= s->plan.mounts[i].mode == MOUNT_RW;
		if (any_rw) {
			_cleanup_close_ int userns = ns_idmap_userns(s->host_uid, s->sb_uid, s->host_gid,
								     s->sb_gid, err);
			if (userns < 0)
				return -1;
			if (mounts_prepare_idmapped(s->plan.mounts, s->plan.nmounts, userns, s->tree_fds, err) < 0)
				return -1;
			s->rep->enf.idmapped_workspace = true;
		}
	}
	return 0;
}

int run_preflight(const cordon_policy *p, struct run_plan *plan, enum run_status *st,
		  uint64_t *ledger_peak, cordon_error *err)
{
	*st = ST_SETUP_ERROR;
	*ledger_peak = 0;
	if (p->has_ledger) {
		struct ledger_result lr;
		if (ledger_compute(&p->ledger, p->file ? p->file : "policy", &lr, err) < 0)
			return -1;
		*ledger_peak = lr.peak_bytes;
		ledger_result_free(&lr);
		if (p->limits[LIM_MEMORY].set && *ledger_peak > p->limits[LIM_MEMORY].value) {
			*st = ST_INFEASIBLE;
			return cordon_err(err, 0, "the ledger's peak live payload (%llu bytes) exceeds the memory limit (%llu bytes)",
					  (unsigned long long)*ledger_peak,
					  (unsigned long long)p->limits[LIM_MEMORY].value);
		}
	}
	if (check_supported(p, err) < 0)
		return -1;
	return run_plan_build(p, plan, err);
}

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

static void collect_outputs(struct sup *s)
{
	const char *roots[256];
	size_t n = 0;
	for (size_t i = 0; i < s->plan.nmounts && n < ARRAY_SIZE(roots); i++)
		if (s->plan.mounts[i].mode == MOUNT_RW)
			roots[n++] = s->plan.mounts[i].path;
	struct snapshot after;
	cordon_error e;
	if (snapshot_take(&after, roots, n, &e) == 0) {
		snapshot_diff(&s->before, &after, s->plan.workspace, &s->rep->outputs, &e);
		snapshot_free(&after);
	}
}

static int spawn_and_supervise(struct sup *s, cordon_error *err)
{
	int sv[2] = {-1, -1}, po[2] = {-1, -1}, pe[2] = {-1, -1};
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		int e = errno;
		close_fd(&sv[0]); close_fd(&sv[1]); close_fd(&po[0]); close_fd(&po[1]);
		close_fd(&pe[0]); close_fd(&pe[1]);
		return cordon_err(err, e, "socketpair/pipe");
	}
	/* Signals that stop the run are read from a signalfd by the loop. */
	sigset_t mask, old;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigprocmask(SIG_BLOCK, &mask, &old);
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

	struct cordon_clone_args ca;
	memset(&ca, 0, sizeof(ca));
	int pidfd = -1;
	ca.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
		   CLONE_NEWNET | CLONE_PIDFD;
	ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
	ca.exit_signal = SIGCHLD;
	if (s->have_cg && s->cg.dirfd >= 0) {
		/* v2: born in the run's cgroup and its own cgroup namespace. */
		ca.flags |= CLONE_INTO_CGROUP | CLONE_NEWCGROUP;
		ca.cgroup = (uint64_t)s->cg.dirfd;
	}
	s->t_start = now_ns();
	pid_t pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0) {
		close(sv[0]);
		close(po[0]);
		close(pe[0]);
		init_main(s, sv[1], po[1], pe[1]);
	}
	int clone_errno = errno;
	close(sv[1]);
	close(po[1]);
	close(pe[1]);
	s->sock = sv[0];
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return cordon_err(err, clone_errno, "clone3 into new user, mount, pid, ipc, uts and network namespaces");
	}
	s->pid = pid;
	s->pidfd = pidfd;
	s->rep->enf.user_ns = s->rep->enf.pid_ns = s->rep->enf.net_ns = s->rep->enf.mount_ns = true;
	s->rep->enf.sandbox_host_uid = s->sb_uid;
	s->rep->enf.cgroup = s->have_cg ? s->cgops->name : "none";
	stream_init(&s->out[0], po[0], STDOUT_FILENO);
	stream_init(&s->out[1], pe[0], STDERR_FILENO);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	s->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	s->cpu_timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->epfd < 0 || s->timer < 0 || s->cpu_timer < 0 || s->sigfd < 0 ||
	    ep_add(s->epfd, s->sock, EPOLLIN) < 0 || ep_add(s->epfd, s->pidfd, EPOLLIN) < 0 ||
	    ep_add(s->epfd, s->out[0].in_fd, EPOLLIN) < 0 || ep_add(s->epfd, s->out[1].in_fd, EPOLLIN) < 0 ||
	    ep_add(s->epfd, s->timer, EPOLLIN) < 0 || ep_add(s->epfd, s->cpu_timer, EPOLLIN) < 0 ||
	    ep_add(s->epfd, s->sigfd, EPOLLIN) < 0) {
		cordon_error e;
		cordon_err_errno(&e, "supervisor event loop");
		setup_error(s, &e);
		kill_run(s, ST_SETUP_ERROR);
	} else {
		arm_timer(s->timer, SETUP_TIMEOUT_NS);
		cordon_error e = {0};
		/* sync 1 */
		if (ns_write_maps(pid, s->sb_uid, s->sb_gid, s->privileged, &e) < 0 ||
		    send_msg(s->sock, MSG_GO1, 0, NULL) < 0) {
			setup_error(s, &e);
			kill_run(s, ST_SETUP_ERROR);
		} else {
			/* Not ptrace-able by other processes of the invoking user from
			 * here on. (Not earlier when unprivileged: init inherits the flag,
			 * and a non-dumpable init's uid_map is not ours to write.) */
			prctl(PR_SET_DUMPABLE, 0);
			/* While init builds its mount tree: attach the cgroup (v1 waits
			 * for an RCU grace period here) and snapshot the writable paths. */
			if (s->have_cg && s->cg.dirfd < 0 && s->cg.ops->attach(&s->cg, pid, &e) < 0) {
				setup_error(s, &e);
				kill_run(s, ST_SETUP_ERROR);
			} else {
				const char *roots[256];
				size_t n = 0;
				for (size_t i = 0; i < s->plan.nmounts && n < ARRAY_SIZE(roots); i++)
					if (s->plan.mounts[i].mode == MOUNT_RW)
						roots[n++] = s->plan.mounts[i].path;
				if (snapshot_take(&s->before, roots, n, &e) < 0) {
					setup_error(s, &e);
					kill_run(s, ST_SETUP_ERROR);
				} else {
					/* sync 2 */
					send_msg(s->sock, MSG_GO2, 0, NULL);
				}
			}
		}
		event_loop(s);
	}
	/* Make sure init is gone and reaped. */
	if (!s->init_dead) {
		syscall(SYS_pidfd_send_signal, s->pidfd, SIGKILL, NULL, 0);
		siginfo_t si;
		waitid(P_PIDFD, (id_t)s->pidfd, &si, WEXITED);
		s->t_end = now_ns();
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return 0;
}

int cordon_run(const cordon_policy *p, char *const argv[], struct run_report *rep,
	       cordon_error *err)
{
	struct sup s;
	memset(&s, 0, sizeof(s));
	if (geteuid() == 0)
		prctl(PR_SET_DUMPABLE, 0);
	s.pol = p;
	s.rep = rep;
	s.argv = argv;
	s.forced = ST_COUNT;
	s.sock = s.pidfd = s.epfd = s.timer = s.cpu_timer = s.sigfd = -1;
	s.out[0].in_fd = s.out[1].in_fd = s.out[0].out_fd = s.out[1].out_fd = -1;
	for (int i = 0; i < LIM_COUNT; i++)
		rep->limits[i] = p->limits[i];
	for (size_t i = 0; argv[i]; i++)
		if (strv_push(&rep->command, argv[i]) < 0)
			return cordon_err(err, 12, "out of memory");
	_cleanup_free_ char *canon = policy_canonical_json(p);
	if (!canon)
		return cordon_err(err, 12, "out of memory");
	sha256_hex(canon, strlen(canon), rep->policy_sha256);
	for (size_t i = 0; i < p->nsecrets; i++)
		strv_push(&rep->secrets, p->secrets[i].name);

	cordon_error e = {0};
	enum run_status pst;
	if (run_preflight(p, &s.plan, &pst, &rep->ledger_peak, &e) < 0) {
		rep->have_ledger = p->has_ledger;
		if (pst == ST_INFEASIBLE) {
			rep->status = ST_INFEASIBLE;
			snprintf(rep->reason, sizeof(rep->reason), "%s", e.msg);
		} else {
			setup_error(&s, &e);
		}
		run_plan_free(&s.plan);
		return 0;
	}
	rep->have_ledger = p->has_ledger;
	/* Inputs are hashed before the run starts: the evidence names what the
	 * command was given, not what it left behind. */
	if (p->inputs.n &&
	    files_hash_tree((const char *const *)p->inputs.v, p->inputs.n, s.plan.workspace, &rep->inputs, &e) < 0) {
		setup_error(&s, &e);
		return 0;
	}
	if (prepare(&s, &e) < 0) {
		setup_error(&s, &e);
	} else if (spawn_and_supervise(&s, &e) < 0) {
		setup_error(&s, &e);
	}
	struct cg_usage u;
	memset(&u, 0, sizeof(u));
	if (s.have_cg)
		s.cg.ops->usage(&s.cg, &u);
	if (!u.have_cpu || !u.have_memory) {
		struct rusage ru;
		if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
			if (!u.have_cpu) {
				u.cpu_user_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000ULL + (uint64_t)ru.ru_utime.tv_usec * 1000ULL;
				u.cpu_sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000ULL + (uint64_t)ru.ru_stime.tv_usec * 1000ULL;
			}
			if (!u.have_memory && s.pid > 0) {
				u.peak_memory = (uint64_t)ru.ru_maxrss * 1024ULL;
				u.have_memory = true;
			}
		}
	}
	if (s.pid > 0) {
		classify(&s, &u);
		rep->wall_seconds = (double)(s.t_end - s.t_start) / 1e9;
		if (s.exec_ok)
			rep->setup_seconds = (double)(s.t_exec - s.t_start) / 1e9;
		rep->have_cpu = true;
		rep->cpu_user_ns = u.cpu_user_ns;
		rep->cpu_sys_ns = u.cpu_sys_ns;
		rep->have_memory = u.have_memory;
		rep->peak_memory = u.peak_memory;
		for (int i = 0; i < 2; i++) {
			rep->out[i].bytes = s.out[i].bytes;
			stream_finish(&s.out[i], rep->out[i].sha256);
		}
		/* Outputs: also on failure, the workspace keeps what was written. */
		if (s.exec_ok)
			collect_outputs(&s);
	}
	if (s.have_cg)
		s.cg.ops->destroy(&s.cg);
	if (s.tree_fds) {
		for (size_t i = 0; i < s.plan.nmounts; i++)
			if (s.tree_fds[i] >= 0)
				close(s.tree_fds[i]);
		free(s.tree_fds);
	}
	snapshot_free(&s.before);
	close_fd(&s.sock);
	close_fd(&s.pidfd);
	close_fd(&s.epfd);
	close_fd(&s.timer);
	close_fd(&s.cpu_timer);
	close_fd(&s.sigfd);
	strv_free(&s.env);
	run_plan_free(&s.plan);
	if (rep->status == ST_SETUP_ERROR)
		rep->exit_code = rep->exit_code >= 0 && !s.exec_ok ? -1 : rep->exit_code;
	return 0;
}
