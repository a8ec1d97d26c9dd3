/* Theory of operation
 * ===================
 * Processes and threads:
 *   supervisor  cordon itself, on the host (this file). Owns every resource
 *               of the run; its main thread runs one epoll loop (a table of
 *               sources, event_loop). Two kinds of helper thread, each
 *               joined before the run returns: the seccomp observer
 *               (sup-observe.c, sleeps in SECCOMP_IOCTL_NOTIF_RECV; it alone
 *               writes the report's denials while it runs), and per output
 *               stream a hashing thread once the stream turns out to be bulk
 *               (sup-stream.c).
 *   init        PID 1 of the run's new user, mount, PID, IPC, UTS, network and
 *               cgroup namespaces, created by clone3 (child-init.c). Builds the
 *               view, drops everything, forks the command, reaps orphans,
 *               reports the command's status and exits: the kernel then kills
 *               every process left in the PID namespace (daemons included).
 *   command     PID 2: execs the task's argv.
 * Channels (sync.h):
 *   sock        SOCK_SEQPACKET pair; frames sized to their content (a header,
 *               then an error or a path if the type carries one), optionally
 *               with one fd:
 *               sync 1 (P->C MSG_GO1): uid/gid maps are written; init starts
 *                   building the system part of the view.
 *               meanwhile P attaches the v1 cgroup (an RCU grace period),
 *                   prepares idmapped trees (sent as MSG_TREE + fd), names
 *                   the run's cgroup directories for its view (MSG_CGROUP),
 *                   sends the change set's layers in overlay mode as root
 *                   (MSG_OVERLAY + fd), the seccomp program (MSG_FILTER)
 *                   and snapshots the writable paths (direct mode).
 *               sync 2 (P->C MSG_GO2): init finishes the view and starts the
 *                   command.
 *               C->P: MSG_ERROR (setup failed; the command never started),
 *                   MSG_CHECK_RO (a check's workspace stayed read-only),
 *                   MSG_LISTENER + fd, MSG_PROXY_FD + fd, MSG_PTY + fd (--pty:
 *                   the master of the run's own pty), MSG_EXEC_OK,
 *                   MSG_EXIT (the command's wait status). One handler
 *                   (on_msg) serves the loop and the drain after init's exit.
 *   out/err     pipes from the command, streamed through by the loop.
 *   pidfd       of init: its exit ends the run.
 * If the supervisor dies (even SIGKILL), init gets SIGKILL (PDEATHSIG), and
 * with PID 1 gone the kernel kills the whole run.
 *
 * The supervisor's order (child-init.c lists the child's), each step with why:
 *   1. secrets read          once, before any step that can fail, so every
 *                            message after is redacted
 *   2. pre-flight            pol-plan.c: plan, model (paths, then env, limits,
 *                            syscalls once the ceiling is applied), ceiling,
 *                            ledger; refused before any process exists, as
 *                            `cordon explain` says
 *   3. inputs hashed         the evidence names what the command was given
 *   4. layers prepared       from the model: the environment (+ the secrets'
 *                            values), ids and maps (creds_prepare), mount steps
 *                            (mounts_prepare), Landlock rules, seccomp's
 *                            observer, rlimits; the weaker-enforcement
 *                            fallbacks decided here
 *   5. cgroup v2             created before clone: init is born in it
 *   6. clone3                init in its namespaces (and v2 cgroup)
 *   7. uid/gid maps, sync 1  init may start its view
 *   8. non-dumpable          not before: init inherits the flag, and its
 *                            uid_map must stay ours to write
 *   9. cgroup v1, trees      while init mounts: attach, idmapped trees, the
 *                            cgroup's paths for its view
 *  10. seccomp compiled      after clone, overlapping init's mounts
 *  11. snapshot, sync 2      the writable paths as they were before the run
 *  12. event loop            output, limits, signals, messages, until init
 *                            has exited and the pipes are drained
 *  13. usage, outcome        sup-outcome.c decides status from the facts
 *  14. outputs, sweep, give-back, cleanup
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
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
#include "units.h"
#include "mounts.h"
#include "landlock.h"
#include "ns.h"
#include "observe.h"
#include "sockdiag.h"
#include "overlay.h"
#include "proxy.h"
#include "pxhttp.h"
#include "tls.h"
#include "cordon-pty.h"
#include "run.h"
#include "sandbox.h"
#include "secrets.h"
#include "stream.h"
#include "sync.h"
#include "sweep.h"
#include "sup-env.h"
#include "protect.h"
#include "sup-outcome.h"

#define SETUP_TIMEOUT_NS (30ULL * 1000000000ULL)

/* How a run's output is handled: the task's goes to stdout/stderr; a
 * check's goes to stderr, every line prefixed. */
/* Secrets are read once per cordon_run, before the first boundary: the
 * task check reuses the same bytes (a secret file in a writable path that the
 * run replaced, with a symlink to /etc/shadow say, is never read again). */
struct secret_cache {
	bool loaded;
	int rc;
	cordon_error err;
	struct secrets sec; /* sec.redact moves to the first report */
};

struct run_opts {
	bool to_stderr;
	const char *prefix;
	struct secret_cache *sc;
	const struct run_hooks *hooks; /* a session (session.h), or NULL */
	const struct overlay_run *view; /* a check's: the task's change set (overlay.h) */
};

/* Wake coalescing of the output relay: after a splice of at least
 * COALESCE_MIN bytes from a 1 MiB pipe, the loop sleeps COALESCE_NS before
 * it waits again, so a bulk writer (which would wake cordon once per write,
 * 8 KiB for head or cat) fills a quarter of its pipe per wake-up at 1.4
 * GB/s and never blocks on it. Output that comes in smaller pieces (every
 * interactive program) never triggers it. Not after a read: bytes cordon
 * copies (to redact or hash them) are cheaper to copy while the writer's
 * pages are still in the cache (sup-stream.c, READ_CHUNK). */
#define COALESCE_MIN (64 * 1024)
#define COALESCE_MAX (512 * 1024) /* a pipe half full or more: the writer outruns us, no sleep */
#define COALESCE_NS (200 * 1000)
struct sup {
	bool coalesce; /* the last loop round moved a bulk read: sleep before waiting */
	const cordon_policy *pol;
	const struct run_opts *opts;
	struct run_report *rep;
	struct run_plan plan;
	struct sandbox_spec spec;
	strv env;
	size_t env_secret_start; /* env[k >= this] carry secret values */
	const struct secrets *sec; /* the run's cache (struct secret_cache) */
	const struct cgroup_ops *cgops; /* = cgp.ops */
	struct cg_prep cgp;
	struct cgroup cg;
	bool have_cg;
	struct cgroup_view cgview; /* init's copy is filled from MSG_CGROUP */
	bool privileged;
	uid_t host_uid, sb_uid;
	gid_t host_gid, sb_gid;
	/* per plan mount: rw bind without idmapped mounts, whose files were
	 * handed to sb_uid for the run (give_back_workspace undoes it) */
	bool *handed;
	/* runtime */
	int sock, pidfd, epfd, timer, cpu_timer, sigfd;
	pid_t pid;
	struct out_stream out[2];
	uint64_t out_hash; /* hash budget of each output stream */
	bool exec_ok, got_exit, init_dead, setup_failed;
	int wstatus;
	int init_code, init_status; /* how init ended (waitid), 0 = not yet */
	enum run_status forced; /* ST_COUNT = none */
	int forced_signal;
	uint64_t t_start, t_exec, t_end;
	struct snapshot before;
	struct overlay_run ovl; /* workspace mode; the change set (overlay.h) */
	struct overlay_run view; /* a check's: the task's change set over its binds */
	struct sweep sweep; /* writable roots pinned before the run */
	struct landlock_plan landlock;
	struct mount_steps mounts; /* what init mounts, decided here */
	struct creds_plan creds;   /* the run's identities and maps */
	struct seccomp_plan seccomp;
	struct observer obs;
	bool have_obs;
	struct proxy *proxy;
	/* TLS interception: the run's CA (its key only here), the bundle the
	 * run trusts (host CAs + the run's), the secrets to inject. */
	struct tls_ca *ca;
	const struct tls_ops *tls; /* with ca */
	buf ca_bundle;
	struct pxhttp_secret *psec;
	size_t npsec;
	bool notify;
	/* --pty: the run's own pty, relayed to cordon's terminal (cordon-pty.h) */
	bool pty_mode;
	struct pty_relay pty;
	/* A session's: the run's mount namespace, held from the clone to the
	 * end of cleanup() (-1 if it could not be opened). */
	int mntns;
	/* CORDON_TRACE_TIMING=1: phase timestamps on stderr (a diagnostic). */
	bool trace;
	uint64_t t0;
	buf trace_buf;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void trace(struct sup *s, const char *phase)
{
	if (s->trace)
		buf_printf(&s->trace_buf, "  %8.3f ms  %s\n", (double)(now_ns() - s->t0) / 1e6, phase);
}

/* The model's environment, then the secrets' values (only known now). */
static int build_env(struct sup *s, cordon_error *err)
{
	const strv *menv = &s->plan.model.run.env;
	for (size_t i = 0; i < menv->n; i++)
		if (strv_push(&s->env, menv->v[i]) < 0)
			return cordon_err(err, 12, "out of memory");
	return sup_env_add_secrets(s->sec, &s->env, &s->env_secret_start, err);
}

/* The supervisor keeps no copy of a secret value once init has its own; the
 * values themselves (secret memory) stay in the cache for the task check and
 * are wiped when cordon_run returns. */
static void wipe_secret_copies(struct sup *s)
{
	for (size_t i = s->env_secret_start; i < s->env.n; i++)
		explicit_bzero(s->env.v[i], strlen(s->env.v[i]));
	s->spec.secrets = NULL;
	s->spec.nsecrets = 0;
}

static void setup_error(struct sup *s, const cordon_error *e)
{
	/* The first failure is the reason; later ones are consequences. */
	if (!s->setup_failed)
		snprintf(s->rep->reason, sizeof(s->rep->reason), "%s", e->msg);
	s->rep->status = ST_SETUP_ERROR;
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
	const uint64_t limit = s->plan.model.run.cpu_ns;
	uint64_t used = cpu_used_ns(s);
	if (used >= limit) {
		s->rep->limits_hit[LIM_CPU] = true;
		kill_run(s, ST_CPU_LIMIT);
		return;
	}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t next = (limit - used) / (uint64_t)(ncpu > 0 ? ncpu : 1);
	if (next < 5000000)
		next = 5000000;
	arm_timer(s->cpu_timer, next);
}

/* The loop's own fds carry their number; the proxy's carry PROXY_TAG. */
static int ep_add(int ep, int fd, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.u64 = (uint64_t)(uint32_t)fd};
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static void ep_mod(int ep, int fd, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.u64 = (uint64_t)(uint32_t)fd};
	epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
}

static uint64_t output_budget(struct sup *s)
{
	const struct cordon_limit *l = &s->pol->limits[LIM_OUTPUT];
	if (!l->set)
		return UINT64_MAX;
	uint64_t used = s->out[0].raw_bytes + s->out[1].raw_bytes;
	return used >= l->value ? 0 : l->value - used;
}

static void on_stream(struct sup *s, int i)
{
	struct out_stream *st = &s->out[i];
	bool over = false;
	int fd = st->in_fd;
	ssize_t n = stream_read(st, output_budget(s), &over);
	if (st->spliced && n >= COALESCE_MIN && n < COALESCE_MAX && st->big_pipe)
		s->coalesce = true;
	if (n <= 0 && st->in_fd < 0) {
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
	}
	if (over) {
		s->rep->limits_hit[LIM_OUTPUT] = true;
		kill_run(s, ST_OUTPUT_LIMIT);
	}
	if (st->dest_gone && st->in_fd >= 0) {
		/* As in a shell pipeline: the reader is gone, so the command's next
		 * write to this stream fails (SIGPIPE), instead of running on. */
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, st->in_fd, NULL);
		close(st->in_fd);
		st->in_fd = -1;
		return;
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

/* --pty: the command's output is the pty's, read from its master by the
 * stdout stream (counted, hashed, redacted, limited like a pipe); the stdout
 * pipe carries nothing then. Input goes to a dup of the master. */
static void on_pty_master(struct sup *s, int master)
{
	struct out_stream *st = &s->out[0];
	if (st->in_fd >= 0) {
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, st->in_fd, NULL);
		close(st->in_fd);
	}
	st->in_fd = master;
	if (ep_add(s->epfd, master, EPOLLIN) < 0 || pty_relay_attach(&s->pty, s->epfd, master) < 0) {
		cordon_error e;
		cordon_err_errno(&e, "relay the run's pty");
		setup_error(s, &e);
		kill_run(s, ST_SETUP_ERROR);
	}
}

/* One message from init, read by the loop or by the drain after init's
 * exit (on_init_exit): the same handling either way. A descriptor it
 * carries (fd) is taken or closed here. */
static void on_msg(struct sup *s, const struct msg *m, int fd)
{
	bool live = !s->init_dead; /* else: the run is over, nothing to start or arm */
	switch (m->type) {
	case MSG_ERROR:
		setup_error(s, &m->err);
		break;
	case MSG_EXEC_OK:
		trace(s, "command exec'd");
		s->exec_ok = true;
		/* init sends this only after every layer was applied. */
		s->rep->enf.no_new_privs = true;
		s->rep->enf.landlock_abi = s->landlock.abi;
		s->rep->enf.seccomp = s->spec.seccomp;
		s->rep->enf.seccomp_notify = s->spec.seccomp && s->seccomp.notify;
		s->rep->enf.file_observer = s->spec.seccomp && s->seccomp.observe && !s->pol->no_file_reports;
		/* Read in the drain, the command started before init's end
		 * (t_end): the setup took no longer than that. */
		s->t_exec = live ? now_ns() : s->t_end;
		if (!live)
			break;
		if (s->plan.model.run.wall_ns)
			arm_timer(s->timer, s->plan.model.run.wall_ns);
		else
			timerfd_settime(s->timer, 0, &(struct itimerspec){0}, NULL);
		if (s->plan.model.run.cpu_ns && s->have_cg)
			cpu_check(s);
		if (s->opts->hooks && s->opts->hooks->cgroup && s->have_cg)
			s->opts->hooks->cgroup(s->opts->hooks->ctx, &s->cg);
		if (s->opts->hooks)
			s->opts->hooks->ready(s->opts->hooks->ctx, s->sock, s->epfd, s->timer, s->rep);
		break;
	case MSG_LISTENER:
		if (fd >= 0 && s->have_obs && live) {
			cordon_error e;
			if (observer_start(&s->obs, fd, s->rep, s->pol->kill_on_violation ? s->pidfd : -1, &e) < 0) {
				setup_error(s, &e);
				kill_run(s, ST_SETUP_ERROR);
			}
			fd = -1;
		}
		break;
	case MSG_PROXY_FD:
		if (fd >= 0 && s->proxy && live) {
			cordon_error e;
			if (proxy_listen(s->proxy, fd, &e) < 0) {
				setup_error(s, &e);
				kill_run(s, ST_SETUP_ERROR);
			}
			fd = -1;
		}
		break;
	case MSG_PTY:
		/* Also in the drain after init's exit: what the command wrote
		 * is still in the pty, and the loop reads it to its end. */
		if (fd >= 0 && s->pty_mode && s->pty.master < 0) {
			on_pty_master(s, fd);
			fd = -1;
		}
		break;
	case MSG_EXIT:
		trace(s, "command exited");
		/* Only an exit or a death: "signaled" never comes without a signal. */
		s->got_exit = WIFEXITED(m->value) || WIFSIGNALED(m->value);
		s->wstatus = m->value;
		break;
	case MSG_CHECK_RO:
		/* A task check's workspace stayed read-only (overlay.h): its
		 * writes there are denials again. init sends this before the
		 * listener, so the observer has not started yet. */
		snprintf(s->rep->check_workspace_reason, sizeof(s->rep->check_workspace_reason), "%s", m->err.msg);
		if (s->have_obs && m->value >= 0 && (size_t)m->value < s->plan.nmounts &&
		    s->plan.mounts[m->value].scratch) {
			cordon_error e;
			if (view_add(&s->obs.view, s->plan.mounts[m->value].path, VIEW_RO, &e) < 0) {
				setup_error(s, &e);
				kill_run(s, ST_SETUP_ERROR);
			}
		}
		break;
	default:
		if (s->opts->hooks && s->opts->hooks->on_msg(s->opts->hooks->ctx, m, fd))
			fd = -1;
	}
	if (fd >= 0)
		close(fd);
}

static void on_sock(struct sup *s, int unused)
{
	struct msg m;
	int fd = -1;
	if (sync_recv(s->sock, &m, &fd) <= 0) {
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->sock, NULL);
		return;
	}
	on_msg(s, &m, fd);
}

static void on_init_exit(struct sup *s, int unused)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PIDFD, (id_t)s->pidfd, &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
		return;
	s->init_dead = true;
	s->init_code = si.si_code;
	s->init_status = si.si_status;
	s->t_end = now_ns();
	trace(s, "init reaped (run over)");
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->pidfd, NULL);
	/* Drain the last messages (exit status) that init sent before dying. */
	struct pollfd p = {s->sock, POLLIN, 0};
	while (poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) {
		struct msg m;
		int fd = -1;
		if (sync_recv(s->sock, &m, &fd) <= 0)
			break;
		on_msg(s, &m, fd);
	}
}

static void on_timer(struct sup *s, int unused)
{
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
}

static void on_cpu_timer(struct sup *s, int unused)
{
	uint64_t x;
	if (read(s->cpu_timer, &x, sizeof(x)) < 0) { /* spurious */ }
	cpu_check(s);
}

static void on_signal(struct sup *s, int unused)
{
	struct signalfd_siginfo si;
	if (read(s->sigfd, &si, sizeof(si)) != sizeof(si))
		return;
	if (si.ssi_signo == SIGWINCH) { /* --pty only */
		pty_relay_winch(&s->pty);
		return;
	}
	s->forced_signal = (int)si.ssi_signo;
	kill_run(s, ST_INTERRUPTED);
}

/* --pty: cordon's stdin readable (which 0), or room for input in the run's
 * pty (1). */
static void on_pty_input(struct sup *s, int which)
{
	if (s->pty_mode)
		pty_relay_event(&s->pty, which ? s->pty.master : s->pty.in_fd, 0);
}

/* The loop's sources: where the descriptor lives in struct sup (read when
 * the event comes: a stream's fd is -1 once closed) and its handler. Every
 * entry whose descriptor matches is called (both streams may write to the
 * same fd). The proxy's sockets carry PROXY_TAG instead and are its own. */
static const struct {
	size_t fd_at;
	void (*fn)(struct sup *s, int arg);
	int arg;
} sources[] = {
	{offsetof(struct sup, sock), on_sock, 0},
	{offsetof(struct sup, pidfd), on_init_exit, 0},
	{offsetof(struct sup, timer), on_timer, 0},
	{offsetof(struct sup, cpu_timer), on_cpu_timer, 0},
	{offsetof(struct sup, sigfd), on_signal, 0},
	{offsetof(struct sup, out[0].in_fd), on_stream, 0},
	{offsetof(struct sup, out[0].out_fd), on_stream_writable, 0},
	{offsetof(struct sup, out[1].in_fd), on_stream, 1},
	{offsetof(struct sup, out[1].out_fd), on_stream_writable, 1},
	{offsetof(struct sup, pty.in_fd), on_pty_input, 0},
	{offsetof(struct sup, pty.master), on_pty_input, 1},
};

static void dispatch(struct sup *s, int fd)
{
	for (size_t k = 0; k < ARRAY_SIZE(sources); k++)
		if (*(const int *)((const char *)s + sources[k].fd_at) == fd)
			sources[k].fn(s, sources[k].arg);
}

/* epoll data of the caller's cancel_fd (cordon_run_options) */
#define CANCEL_TAG (1ULL << 61)

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
			if (evs[i].data.u64 & PROXY_TAG) {
				if (s->proxy)
					proxy_event(s->proxy, evs[i].data.u64, evs[i].events);
				continue;
			}
			if ((evs[i].data.u64 & RUN_HOOK_TAG) && s->opts->hooks) {
				s->opts->hooks->on_event(s->opts->hooks->ctx, evs[i].data.u64, evs[i].events);
				continue;
			}
			if (evs[i].data.u64 == CANCEL_TAG) { /* stopped as by SIGINT, no signal */
				kill_run(s, ST_INTERRUPTED);
				continue;
			}
			dispatch(s, (int)(uint32_t)evs[i].data.u64);
		}
		if (s->coalesce) {
			/* A bulk writer: let its pipe fill a while rather than wake
			 * for each of its writes (a pipe wakes its epoll reader on
			 * every write). */
			s->coalesce = false;
			struct timespec ts = {0, COALESCE_NS};
			nanosleep(&ts, NULL);
		}
		/* The command exited: init exits right after; nothing else to do. */
	}
	return 0;
}

/* The facts the outcome is decided from (sup-outcome.c). */
static void classify(struct sup *s, const struct cg_usage *u)
{
	struct run_report *r = s->rep;
	struct run_facts f;
	run_facts_init(&f);
	f.setup_failed = s->setup_failed;
	f.reason = r->reason;
	f.exec_ok = s->exec_ok;
	f.got_exit = s->got_exit;
	f.wstatus = s->wstatus;
	f.init_code = s->init_code;
	f.init_status = s->init_status;
	f.forced = s->forced;
	f.forced_signal = s->forced_signal;
	f.oom_kills = u->oom_kills;
	f.pids_max_hits = u->pids_max_hits;
	f.cpu_limit_set = s->pol->limits[LIM_CPU].set;
	f.cpu_limit_ns = s->pol->limits[LIM_CPU].value;
	f.cpu_used_ns = u->cpu_user_ns + u->cpu_sys_ns;
	f.seccomp = s->spec.seccomp;
	memcpy(f.limits_hit, r->limits_hit, sizeof(f.limits_hit));
	struct run_outcome o;
	run_outcome_decide(&f, &o);
	r->status = o.status;
	r->exit_code = o.exit_code;
	r->signal = o.signal;
	memcpy(r->limits_hit, o.limits_hit, sizeof(r->limits_hit));
	snprintf(r->reason, sizeof(r->reason), "%s", o.reason);
	if (o.foreign_abi_kill)
		report_add_denial(r, "syscall", "foreign-abi (killed)");
}


/* Limits that need a cgroup: create it (and on v1 attach pid). Where none
 * can be had, fall back to rlimits only if the policy accepts it. */
/* The run's cgroup (cgroup_start; the fallback is the layer's). */
static int cgroup_setup(struct sup *s, pid_t pid, cordon_error *err)
{
	const struct model_run *mr = &s->plan.model.run;
	if (cgroup_start(&s->cgp, &s->cg, &mr->cg, pid, &s->have_cg, err) < 0)
		return -1;
	if (s->have_cg)
		trace(s, "cgroup created");
	else /* No cgroup: the per-process rlimits are all there is. */
		s->spec.rl = mr->rl_nocg;
	return 0;
}

int run_cgroup_preflight(const cordon_policy *p, struct cg_refusal *why, cordon_error *err)
{
	memset(why, 0, sizeof(*why));
	bool want = p->limits[LIM_MEMORY].set || p->limits[LIM_PIDS].set || p->limits[LIM_CPU].set;
	if (!want || (p->allow_weaker & WEAK_CGROUP))
		return 0;
	struct cg_prep cp;
	if (cgroup_prepare(&cp, policy_opts(p)->cgroup, want, false, err) < 0) {
		why->no_hierarchy = cp.no_hierarchy;
		return -1;
	}
	/* The very step a run takes: create the cgroup with its limits, then
	 * remove it again. */
	struct cgroup cg;
	struct cg_limits cl = {
		p->limits[LIM_MEMORY].set ? p->limits[LIM_MEMORY].value : 0,
		p->limits[LIM_PIDS].set ? p->limits[LIM_PIDS].value : 0,
	};
	bool made;
	memset(&cg, 0, sizeof(cg));
	if (cgroup_start(&cp, &cg, &cl, 0, &made, err) < 0) {
		why->missing = cg.missing;
		cgroup_prep_free(&cp);
		return -1;
	}
	if (made)
		cp.ops->destroy(&cg);
	cgroup_prep_free(&cp);
	return 0;
}

/* Landlock and seccomp: probed, then prepared here (the filter compiled by
 * libseccomp), applied by init. A layer the host lacks is a setup error
 * unless the policy accepts the weaker boundary. */
static int prepare_filters(struct sup *s, cordon_error *err)
{
	const cordon_policy *p = s->pol;
	/* Each layer decides its own fallback (allow_weaker). The run's own
	 * cgroup is in the model, in effect if it gets one (send_cgroup_view). */
	if (landlock_prepare_run(p, &s->plan.model, s->cgops ? MODEL_IF_CGROUP : 0, PROXY_PORT, &s->landlock, err) < 0)
		return -1;
	s->spec.landlock = &s->landlock;
	bool filter;
	if (seccomp_prepare_run(p, &filter, &s->notify, err) < 0)
		return -1;
	if (!filter)
		return 0;
	s->spec.seccomp = true; /* compiled after clone, sent at sync 2 */
	if (s->notify) {
		if (observer_init(&s->obs, &s->plan, p, p->net_allow.n > 0, s->ovl.active, err) < 0)
			return -1;
		s->have_obs = true;
	}
	trace(s, "landlock and seccomp prepared");
	return 0;
}

/* Before clone: identities, environment, rlimits, and on cgroup v2 the
 * cgroup itself (the child is cloned straight into it). */
/* The secrets, read once per invocation, before any step that can fail
 * (run_once): a report or message about a failure (a missing bind whose path
 * or command line carries a value) is redacted from the first one on. */
static void load_secrets(struct sup *s)
{
	struct secret_cache *sc = s->opts->sc;
	if (sc->loaded)
		return;
	sc->loaded = true;
	sc->rc = secrets_load(s->pol, &sc->sec, &sc->err);
	/* The report redacts with it from now on (and owns it), also when
	 * a later secret failed to load. */
	s->rep->redact = sc->sec.redact;
	sc->sec.redact = NULL;
}

/* The host's bundle of trusted CAs, added to the run's (Debian's path;
 * bounded; none is fine). */
#define HOST_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define HOST_CA_MAX (8u << 20)

/* TLS interception (issue 16): a CA for this run, only when the proxy
 * opens some connections; the run's view gets a bundle of the host's CAs
 * and its certificate (never its key: that stays in this process). */
static int prepare_tls(struct sup *s, cordon_error *err)
{
	const cordon_policy *p = s->pol;
	if (!p->net_allow.n || !policy_intercepts(p))
		return 0;
	uint64_t wall = p->limits[LIM_WALL].set ? p->limits[LIM_WALL].value / 1000000000ULL : 0;
	unsigned valid = wall && wall < 7 * 86400 ? (unsigned)wall + 3600 : 7 * 86400;
	if (!(s->tls = tls_ops_get(err)) || s->tls->ca_new(&s->ca, valid, err) < 0)
		return -1;
	_cleanup_close_ int fd = open(HOST_CA_BUNDLE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size <= HOST_CA_MAX) {
		char *b = malloc((size_t)st.st_size);
		ssize_t n = b ? read(fd, b, (size_t)st.st_size) : -1;
		if (n > 0)
			buf_append(&s->ca_bundle, b, (size_t)n);
		free(b);
		if (s->ca_bundle.len && s->ca_bundle.p[s->ca_bundle.len - 1] != '\n')
			buf_append(&s->ca_bundle, "\n", 1);
	}
	size_t pl;
	const char *pem = s->tls->ca_pem(s->ca, &pl);
	if (buf_append(&s->ca_bundle, pem, pl) < 0)
		return cordon_err(err, 12, "out of memory");
	s->spec.ca_pem = s->ca_bundle.p;
	s->spec.ca_len = s->ca_bundle.len;
	/* The secrets the proxy injects, in the policy's order (the report's
	 * names are indexed by it). */
	for (size_t i = 0; s->sec && i < s->sec->n; i++)
		s->npsec += s->sec->v[i].placeholder != NULL;
	if (s->npsec && !(s->psec = calloc(s->npsec, sizeof(*s->psec))))
		return cordon_err(err, 12, "out of memory");
	for (size_t i = 0, k = 0; s->sec && i < s->sec->n; i++) {
		const struct secret_value *v = &s->sec->v[i];
		if (!v->placeholder)
			continue;
		s->psec[k++] = (struct pxhttp_secret){v->name, v->placeholder, v->value, v->len, &v->pol->inject_hosts,
						      v->pol->in_header, v->pol->in_query, v->pol->allow_plaintext, i};
	}
	return 0;
}

static int prepare(struct sup *s, cordon_error *err)
{
	const cordon_policy *p = s->pol;
	struct secret_cache *sc = s->opts->sc;
	load_secrets(s);
	if (sc->rc < 0) {
		*err = sc->err;
		return -1;
	}
	s->sec = &sc->sec;
	s->spec.secrets = sc->sec.v;
	s->spec.nsecrets = sc->sec.n;
	if (build_env(s, err) < 0 || prepare_tls(s, err) < 0)
		return -1;
	s->privileged = geteuid() == 0;
	s->host_uid = getuid();
	s->host_gid = getgid();
	/* A serve client's run: the client is the invoking user (policy.h). */
	if (s->privileged && p->for_client) {
		s->host_uid = p->client_uid;
		s->host_gid = p->client_gid;
	}
	if (s->privileged) {
		s->sb_uid = SANDBOX_HOST_BASE + (uid_t)getpid();
		s->sb_gid = SANDBOX_HOST_BASE + (gid_t)getpid();
	} else {
		s->sb_uid = s->host_uid;
		s->sb_gid = s->host_gid;
	}
	const char *oh = policy_opts(s->pol)->output_hash;
	s->out_hash = OUTPUT_HASH_BYTES;
	if (oh && parse_size(oh, &s->out_hash, err) < 0)
		return cordon_err_wrap(err, "output hash budget (CORDON_OUTPUT_HASH)");
	/* The cgroup layer decides its fallback (allow_weaker "cgroup"). */
	if (cgroup_prepare(&s->cgp, policy_opts(p)->cgroup, s->plan.model.run.needs_cgroup,
			   p->allow_weaker & WEAK_CGROUP, err) < 0)
		return -1;
	s->cgops = s->cgp.ops;
	s->spec.plan = &s->plan;
	if (mounts_prepare(&s->plan.model, &s->mounts, err) < 0)
		return -1;
	s->spec.mounts = &s->mounts;
	s->spec.cgview = &s->cgview;
	s->spec.proxy = p->net_allow.n > 0;
	creds_prepare(s->host_uid, s->host_gid, s->sb_uid, s->sb_gid, s->privileged, &s->creds);
	s->spec.creds = &s->creds;
	s->spec.envp = s->env.v;
	if (overlay_prepare(&s->ovl, p, &s->plan, s->host_uid, s->host_gid, s->sb_uid, s->sb_gid, s->rep, err) < 0)
		return -1;
	s->spec.overlay_dirs = s->ovl.dirs;
	if (overlay_view_prepare(&s->view, s->opts->view, &s->plan, err) < 0)
		return -1;
	if (s->view.dirs)
		s->spec.overlay_dirs = s->view.dirs;
	s->spec.overlay_subs = s->view.subs;
	if (s->ovl.active || s->view.dirs) {
		s->spec.overlay_trees = malloc(s->plan.nmounts * sizeof(int));
		if (!s->spec.overlay_trees)
			return cordon_err(err, 12, "out of memory");
		for (size_t i = 0; i < s->plan.nmounts; i++)
			s->spec.overlay_trees[i] = -1;
	}
	/* One per mount, and one more for a check's files. */
	s->spec.tree_fds = calloc(s->plan.nmounts + 1, sizeof(int));
	if (!s->spec.tree_fds)
		return cordon_err(err, 12, "out of memory");
	for (size_t i = 0; i <= s->plan.nmounts; i++)
		s->spec.tree_fds[i] = -1;
	s->spec.rl = s->plan.model.run.rl;
	if (prepare_filters(s, err) < 0)
		return -1;
	if (s->cgp.before_clone && cgroup_setup(s, 0, err) < 0)
		return -1;
	/* v1: created and attached after clone, while init builds its view. The
	 * rlimit fallback must be known before clone (cgroup_prepare decided it). */
	if (!s->cgp.before_clone) {
		if (s->cgp.rlimits_only)
			s->spec.rl = s->plan.model.run.rl_nocg;
		s->spec.unshare_cgroupns = s->cgops != NULL;
	}
	return 0;
}

/* As root: a check's files are opened with the supervisor's credentials,
 * made read-only and sent as the tree after the mounts'. */
static int send_check_files(struct sup *s, int userns, cordon_error *err)
{
	struct cordon_mount m = {MOUNT_RO, s->plan.check_files, 0, SRC_POLICY, false};
	int fd = -1;
	bool plain = false;
	if (mounts_prepare_idmapped(&m, 1, userns, &fd, &plain, err) < 0)
		return cordon_err_wrap(err, "check.files");
	int r = 0;
	if (sync_send(s->sock, MSG_TREE, (int32_t)s->plan.nmounts, NULL, fd) < 0)
		r = cordon_err_errno(err, "send the check's files");
	close(fd);
	return r;
}

/* As root: every bind is cloned here, with the supervisor's credentials (a
 * source below a 0700 directory works). rw binds, and the check's view of
 * what the task could write, become idmapped trees through U1 (init's user
 * namespace, which maps the invoking user to the run's host identity), so
 * files created inside belong to the invoking user; ro binds are idmapped
 * where the filesystem allows it. Each tree goes to init over the socket. */
static int send_idmapped_trees(struct sup *s, cordon_error *err)
{
	bool any_rw = false, any_bind = false;
	for (size_t i = 0; i < s->plan.nmounts; i++) {
		any_rw |= s->plan.mounts[i].mode == MOUNT_RW || s->plan.mounts[i].owned;
		any_bind |= s->plan.mounts[i].mode != MOUNT_TMPFS;
	}
	if (!any_bind && !s->plan.check_files[0])
		return 0;
	if (!s->privileged) {
		if (any_rw)
			s->rep->enf.workspace_ownership = "invoking-uid";
		return 0;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)s->pid);
	/* A serve client's: its files are the run's, everyone else's their
	 * owner's (U1 maps no one else, and the kernel lets nothing be written
	 * through an idmapped mount whose owner it does not map). */
	_cleanup_close_ int userns = s->pol->for_client ? ns_swap_userns(s->host_uid, s->sb_uid, s->host_gid, s->sb_gid, err)
							 : open(path, O_RDONLY | O_CLOEXEC);
	if (userns < 0)
		return s->pol->for_client ? -1 : cordon_err_errno(err, "open %s", path);
	int *fds = calloc(s->plan.nmounts, sizeof(int));
	bool *no_idmap = calloc(s->plan.nmounts, sizeof(bool));
	if (!fds || !no_idmap) {
		free(fds);
		free(no_idmap);
		return cordon_err(err, 12, "out of memory");
	}
	int r = mounts_prepare_idmapped(s->plan.mounts, s->plan.nmounts, userns, fds, no_idmap, err);
	/* The workspace's tree is the directory cordon was started in, not what
	 * its name leads to now (a concurrent run may have rearranged it). */
	for (size_t i = 0; r == 0 && s->plan.ws_ino && i < s->plan.nmounts; i++) {
		struct stat st;
		if (fds[i] >= 0 && strcmp(s->plan.mounts[i].path, s->plan.workspace) == 0 &&
		    (fstat(fds[i], &st) < 0 || st.st_dev != s->plan.ws_dev || st.st_ino != s->plan.ws_ino))
			r = cordon_err(err, 0, "the workspace %s is no longer the current directory cordon was started in (a component was moved or replaced): refusing it",
				       s->plan.workspace);
	}
	/* A serve client's overlay of a tree that is not its own: the upper
	 * layer's root would be the run's, and root's apply would carry out
	 * what the client may not (remove root's file from a sticky /tmp).
	 * Direct instead, where the kernel checks each change as the client. */
	for (size_t i = 0; r == 0 && s->pol->for_client && s->ovl.active && i < s->plan.nmounts; i++) {
		struct stat st;
		/* (seen through the idmapping: the client's files are sb_uid's) */
		if (fds[i] >= 0 && s->plan.mounts[i].mode == MOUNT_RW && fstat(fds[i], &st) == 0 &&
		    st.st_uid != s->sb_uid) {
			char why[4200];
			snprintf(why, sizeof(why), "%s is not the client's (uid %u): an overlay of it would let the run's changes be applied with more than the client's rights",
				 s->plan.mounts[i].path, (unsigned)s->host_uid);
			r = overlay_fall_back_late(&s->ovl, s->pol, s->rep, why, err);
		}
	}
	for (size_t i = 0; i < s->plan.nmounts; i++) {
		if (fds[i] < 0)
			continue;
		if (r == 0 && sync_send(s->sock, MSG_TREE, (int32_t)i, NULL, fds[i]) < 0)
			r = cordon_err_errno(err, "send the idmapped tree of %s", s->plan.mounts[i].path);
		close(fds[i]);
	}
	free(fds);
	if (r == 0 && s->plan.check_files[0])
		r = send_check_files(s, userns, err);
	/* No idmapped mounts on this filesystem: a plain bind, and the invoking
	 * user's files belong to the run's host uid for the run (never host uid
	 * 0); give_back_workspace returns them, and the run's new files. */
	s->handed = no_idmap;
	const char *plain = NULL;
	for (size_t i = 0; r == 0 && i < s->plan.nmounts; i++) {
		if (!no_idmap[i])
			continue;
		plain = s->plan.mounts[i].path;
		/* An overlay of it would leave its files the host's, unreadable
		 * to the run's uid: direct instead, where the mode allows it. */
		if (s->ovl.active) {
			char why[4200];
			snprintf(why, sizeof(why), "the filesystem of %s has no idmapped mounts, which an overlay of it needs as root",
				 plain);
			r = overlay_fall_back_late(&s->ovl, s->pol, s->rep, why, err);
		}
		if (r == 0)
			r = mounts_chown_tree(plain, s->host_uid, s->host_gid, s->sb_uid, s->sb_gid, err);
	}
	if (r == 0 && plain) {
		s->rep->enf.workspace_ownership = "chown";
		snprintf(s->rep->enf.workspace_ownership_reason, sizeof(s->rep->enf.workspace_ownership_reason),
			 "the filesystem of %s has no idmapped mounts (EINVAL; tmpfs before Linux 6.3, some FUSE and network filesystems): a plain bind, with your files handed to the run's uid %u for the run and back to you after it",
			 plain, (unsigned)s->sb_uid);
		trace(s, "workspace handed to the run's uid");
	} else if (r == 0 && any_rw) {
		s->rep->enf.idmapped_workspace = true;
		s->rep->enf.workspace_ownership = "idmapped";
		trace(s, "idmapped trees sent");
	}
	return r;
}

/* After the run (every process of it is gone with its pid namespace): what
 * belongs to the run's host uid below a handed-over bind goes back to the
 * invoking user, new files included. Idempotent. */
static void give_back_workspace(struct sup *s)
{
	if (!s->handed)
		return;
	for (size_t i = 0; i < s->plan.nmounts; i++) {
		if (!s->handed[i])
			continue;
		cordon_error e;
		if (mounts_chown_tree(s->plan.mounts[i].path, s->sb_uid, s->sb_gid, s->host_uid, s->host_gid, &e) < 0)
			snprintf(s->rep->enf.workspace_ownership_reason, sizeof(s->rep->enf.workspace_ownership_reason),
				 "NOT given back, some files still belong to uid %u: %s", (unsigned)s->sb_uid, e.msg);
	}
	free(s->handed);
	s->handed = NULL;
}

/* The run sees its own cgroup, read-only, at /sys/fs/cgroup, as in a
 * container: node, the JVM and Go size their heaps and threads from the
 * limits there. Init binds it from the host path it is told. */
static int send_cgroup_view(struct sup *s, cordon_error *err)
{
	if (!s->have_cg)
		return 0;
	/* A path the task asked for there (the host's /sys, say) wins. */
	for (size_t i = 0; i < s->plan.nmounts; i++) {
		const char *m = s->plan.mounts[i].path;
		if (path_has_prefix("/sys/fs/cgroup", m) || path_has_prefix(m, "/sys/fs/cgroup"))
			return 0;
	}
	bool v2 = s->cgops == &cgroup_v2_ops;
	for (int i = 0; i < s->cg.ndirs; i++)
		if (strlen(s->cg.dirs[i]) >= sizeof(((struct msg *)0)->path))
			return 0; /* too long for a frame: no view; it is not a boundary */
	for (int i = 0; i < s->cg.ndirs; i++)
		if (sync_send_path(s->sock, MSG_CGROUP, v2 ? -1 : i, s->cg.dirs[i]) < 0)
			return cordon_err_errno(err, "send the cgroup view");
	if (s->have_obs && view_add_cond(&s->obs.view, &s->plan.model, MODEL_IF_CGROUP, err) < 0)
		return -1;
	trace(s, "cgroup view sent");
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

static size_t writable_roots(const struct sup *s, const char **roots, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < s->plan.nmounts && n < max; i++)
		if (s->plan.mounts[i].mode == MOUNT_RW)
			roots[n++] = s->plan.mounts[i].path;
	return n;
}

/* Direct mode: below a nested repository (.git at any depth) the observer
 * guards names, not modes: a run's `chmod 0777 vendor/lib/.git/hooks`
 * reached the host, and any local user could then put a hook in (outside
 * review 12). What the run changed there (its ctime) loses the group and
 * other write it gained, and its ACLs (root_restored). Both walks are
 * sorted by path. */
static void tighten_protected(struct sup *s, const struct snapshot *before, const struct snapshot *after)
{
	strv names;
	cordon_error e = {0};
	if (protect_effective(s->pol, &names, NULL, &e) < 0)
		return;
	size_t i = 0, j = 0;
	while (j < after->n) {
		const struct snap_entry *a = i < before->n ? &before->e[i] : NULL, *b = &after->e[j];
		int c = a ? strcmp(snap_path(before, a), snap_path(after, b)) : 1;
		if (c < 0) {
			i++;
			continue;
		}
		/* New at this path (a repository renamed into place: `mv
		 * vendor/lib vendor/lib2`, outside review 13): no group or
		 * other write at all; else what it gained. */
		mode_t was = c > 0 ? 0 : a->mode;
		j++;
		if (c == 0)
			i++;
		if ((c == 0 && a->ctime_ns == b->ctime_ns) || b->root >= after->nroots)
			continue;
		const char *path = snap_path(after, b), *rel = path + after->rootlen[b->root];
		while (*rel == '/')
			rel++;
		if (*rel && protect_match(&names, rel, 0, NULL, 0))
			sweep_tighten_at(after->rootfd[b->root], rel, was, path, s->plan.workspace,
					 &s->rep->root_restored);
	}
	strv_free(&names);
}

static int run_check(const cordon_policy *p, struct run_report *rep, struct secret_cache *sc,
		     const struct overlay_run *view, cordon_error *err);

/* Overlay and review mode: the task check runs here, on the change set over
 * the host tree, before anything is applied; a task verdict of fail or
 * error is a run that did not end ok for on_failure (issue 28.1). */
static bool check_before_apply(struct sup *s)
{
	struct run_report *rep = s->rep;
	if (!s->ovl.active || !s->pol->check || s->pol->is_check || s->opts->hooks ||
	    (rep->status != ST_OK && rep->status != ST_EXIT_NONZERO))
		return rep->status == ST_OK;
	cordon_error e = {0};
	/* The check judges what the host gets: what the apply leaves out (the
	 * ignore list) is removed from the change set first (F4). */
	if ((changeset_drop_ignored(&s->ovl.cs, NULL, &e) < 0 && cordon_err_wrap(&e, "the change set before the check")) ||
	    run_check(s->pol, rep, s->opts->sc, &s->ovl, &e) < 0) {
		rep->check_ran = true;
		rep->check_status = ST_SETUP_ERROR;
		rep->check_exit_code = -1;
		rep->task = TASK_ERROR;
		snprintf(rep->check_reason, sizeof(rep->check_reason), "%s", e.msg);
	}
	trace(s, "task check done");
	return rep->status == ST_OK && rep->task != TASK_FAIL && rep->task != TASK_ERROR;
}

static void collect_outputs(struct sup *s)
{
	const char *roots[256];
	size_t n = writable_roots(s, roots, ARRAY_SIZE(roots));
	struct snapshot after;
	cordon_error e;
	int64_t since = s->before.taken_ns;
	if (s->ovl.active) {
		/* From the change set (O(changes)), applied, kept or discarded. */
		overlay_finish(&s->ovl, s->pol, check_before_apply(s), s->plan.workspace, s->rep);
		since = s->ovl.cs.started_ns;
	} else if (snapshot_take(&after, roots, n, &e) == 0) {
		snapshot_diff(&s->before, &after, s->plan.workspace, &s->rep->outputs, &e);
		tighten_protected(s, &s->before, &after);
		snapshot_free(&after);
	}
	/* Secrets written into the files it changed (names, never values):
	 * where they are, on the host or still in the change set. */
	const char *base = s->plan.workspace;
	char upper[4200];
	if (!overlay_on_host(&s->ovl, s->rep)) {
		overlay_scan_root(&s->ovl, s->plan.workspace, upper, sizeof(upper));
		roots[0] = base = upper;
		n = upper[0] ? 1 : 0;
	}
	exposure_scan(s->rep->redact, roots, n, &s->rep->outputs, base, since,
		      &s->rep->exposures, &e);
}

/* Between sync 1 and sync 2, in parallel with init building its view. */
/* Direct mode: the directories pinned above protected names (and above
 * the change-set key and listed change sets) are writable binds of the
 * host's own inodes, so the run can change their mode; put back after it
 * (sweep_keep). An overlay's apply adds no write permission itself. */
static int keep_pins(struct sup *s, cordon_error *err)
{
	const struct boundary_model *m = &s->plan.model;
	const char **v = calloc(m->n + 1, sizeof(*v));
	size_t n = 0;
	if (!v)
		return cordon_err(err, 12, "out of memory");
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].kind == MK_PIN)
			v[n++] = m->e[i].host;
	/* Above a protected name absent at the start: the directories the run
	 * may make on the way (`.cargo` of .cargo/config.toml), below the
	 * writable path that holds it. */
	strv above = {0};
	int r = 0;
	for (size_t i = 0; r == 0 && i < m->n; i++) {
		const struct model_entry *e = &m->e[i];
		if (e->kind != MK_PROTECT || !(e->flags & MODEL_NOT_YET) || !e->host)
			continue;
		char p[4096];
		snprintf(p, sizeof(p), "%s", e->host);
		for (char *sl; r == 0 && (sl = strrchr(p, '/')) && sl != p;) {
			*sl = '\0';
			bool root = false;
			for (size_t k = 0; k < s->sweep.n && !root; k++)
				root = !s->sweep.r[k].keep_only && strcmp(s->sweep.r[k].path, p) == 0;
			if (root)
				break;
			if (!strv_contains(&above, p))
				r = strv_push(&above, p);
		}
	}
	const char **all = r == 0 ? realloc(v, (n + above.n + 1) * sizeof(*v)) : NULL;
	if (!all) {
		free(v);
		strv_free(&above);
		return cordon_err(err, 12, "out of memory");
	}
	for (size_t i = 0; i < above.n; i++)
		all[n++] = above.v[i];
	r = sweep_keep(&s->sweep, all, n, err);
	free(all);
	strv_free(&above);
	return r;
}

static int parent_setup(struct sup *s, cordon_error *err)
{
	if (creds_apply_maps(s->pid, &s->creds, err) < 0 ||
	    sync_send(s->sock, MSG_GO1, 0, NULL, -1) < 0) /* sync 1 */
		return -1;
	trace(s, "maps written, sync 1 sent");
	/* Not ptrace-able by other processes of the invoking user from here on.
	 * (Not earlier when unprivileged: init inherits the flag, and a
	 * non-dumpable init's uid_map is not ours to write.) */
	prctl(PR_SET_DUMPABLE, 0);
	if (s->cgops && s->cgops != &cgroup_v2_ops) {
		if (cgroup_setup(s, s->pid, err) < 0)
			return -1;
		trace(s, "cgroup attached");
	}
	if (send_idmapped_trees(s, err) < 0 || send_cgroup_view(s, err) < 0 ||
	    (s->privileged && overlay_send_layers(&s->ovl, s->sock, err) < 0) ||
	    (s->privileged && overlay_send_view(&s->view, s->sock, err) < 0))
		return -1;
	if (s->spec.seccomp) {
		/* Compiled here, while init builds its view, not before clone. */
		if (seccomp_build_from(&s->plan.model.run, s->notify, s->pol->no_file_reports && !model_protects(&s->plan.model) ? NULL : observer_calls, &s->seccomp, err) < 0)
			return -1;
		if (sync_send(s->sock, MSG_FILTER, s->notify, NULL, s->seccomp.memfd) < 0)
			return cordon_err_errno(err, "send the seccomp filter");
		trace(s, "seccomp filter compiled and sent");
	}
	const char *roots[256];
	size_t n = writable_roots(s, roots, ARRAY_SIZE(roots));
	/* The whole-tree snapshot only in direct mode: an overlay's changes are
	 * its upper layer. */
	if ((!s->ovl.active && snapshot_take(&s->before, roots, n, err) < 0) ||
	    sweep_pin(&s->sweep, roots, n, err) < 0 || (!s->ovl.active && keep_pins(s, err) < 0))
		return -1;
	trace(s, "snapshot taken, sync 2 sent");
	if (sync_send(s->sock, MSG_GO2, 0, NULL, -1) < 0) /* sync 2 */
		return cordon_err_errno(err, "sync 2");
	return 0;
}

static int spawn_and_supervise(struct sup *s, cordon_error *err)
{
	int sv[2] = {-1, -1}, po[2] = {-1, -1}, pe[2] = {-1, -1};
	/* A terminal on cordon's stdin is never the command's: it gets
	 * /dev/null instead (README, "Standard input"). Pipes and files are
	 * passed as they are. */
	s->spec.stdin_fd = -1;
	/* --pty: init's own stdin is /dev/null too; the command's is the pty. */
	if ((s->pty_mode || isatty(STDIN_FILENO)) && (s->spec.stdin_fd = open("/dev/null", O_RDONLY | O_NOCTTY | O_CLOEXEC)) < 0)
		return cordon_err_errno(err, "open /dev/null for the command's stdin");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		int e = errno;
		close_fd(&sv[0]); close_fd(&sv[1]); close_fd(&po[0]); close_fd(&po[1]);
		close_fd(&pe[0]); close_fd(&pe[1]); close_fd(&s->spec.stdin_fd);
		return cordon_err(err, e, "socketpair/pipe");
	}
	/* Signals that stop the run are read from a signalfd by the loop. */
	sigset_t mask, old;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	if (s->pty_mode)
		sigaddset(&mask, SIGWINCH);
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
	if (s->pty_mode) {
		/* cordon's terminal goes raw here; pty_relay_end puts it back on
		 * every way out below (a signal ends the run through the loop). */
		pty_relay_begin(&s->pty, STDIN_FILENO, policy_opts(s->pol)->stdout_fd);
		s->spec.pty = true;
		s->spec.pty_size = s->pty.ws;
	}
	s->t_start = now_ns();
	trace(s, "clone3");
	pid_t pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0) {
		close(sv[0]);
		close(po[0]);
		close(pe[0]);
		sandbox_init_main(&s->spec, sv[1], po[1], pe[1]);
	}
	int clone_errno = errno;
	wipe_secret_copies(s);
	close_fd(&s->spec.stdin_fd);
	close(sv[1]);
	close(po[1]);
	close(pe[1]);
	s->sock = sv[0];
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		if (s->pty_mode)
			pty_relay_end(&s->pty);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return cordon_err(err, clone_errno, "clone3 into new user, mount, pid, ipc, uts and network namespaces");
	}
	s->pid = pid;
	s->pidfd = pidfd;
	/* The run's network namespace, from init (our child, its PID pinned)
	 * before the command runs: where the observer asks which loopback
	 * listeners the run has (sockdiag.h). */
	if (s->have_obs && !s->obs.strict_ports)
		s->obs.diag = sockdiag_open(pid, pidfd);
	/* A session holds its mount namespace: when init exits, the kernel
	 * does not take the view down (its umounts wait for RCU grace
	 * periods: 1-460 ms measured at load 8-10, when init's exit was
	 * 1 ms with the namespace held) before init can be reaped. The report
	 * is complete once init is reaped and the outputs collected; the
	 * session answers then (run_hooks.on_report), and the view goes at
	 * cleanup(). Best effort: without it, init's exit does it. */
	if (s->spec.session) {
		char ns[64];
		snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)pid);
		s->mntns = open(ns, O_RDONLY | O_CLOEXEC);
	}
	/* The supervisor's own fds: the soft RLIMIT_NOFILE up to the hard one,
	 * here, after the clone, so that the run keeps the limit it was given.
	 * The proxy sizes its connection cap from it. Put back once the proxy
	 * is closed: whatever the caller starts next gets its own limit. */
	struct rlimit nofile, nofile_was;
	bool nofile_raised = false;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile_was = nofile;
		nofile.rlim_cur = nofile.rlim_max;
		nofile_raised = setrlimit(RLIMIT_NOFILE, &nofile) == 0;
	}
	s->rep->enf.user_ns = s->rep->enf.pid_ns = s->rep->enf.net_ns = s->rep->enf.mount_ns = true;
	s->rep->enf.sandbox_host_uid = s->sb_uid;
	const struct cordon_run_options *ro = policy_opts(s->pol);
	stream_init(&s->out[0], po[0], s->opts->to_stderr ? ro->stderr_fd : ro->stdout_fd, s->rep->redact,
		    s->opts->prefix, s->out_hash);
	stream_init(&s->out[1], pe[0], ro->stderr_fd, s->rep->redact, s->opts->prefix, s->out_hash);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	s->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	s->cpu_timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	cordon_error e = {0};
	struct epoll_event cancel_ev = {.events = EPOLLIN | EPOLLONESHOT, .data.u64 = CANCEL_TAG};
	struct proxy_tls ptls = {s->ca, s->tls, s->pol->upstream_ca, s->psec, s->npsec};
	if (s->spec.proxy && s->epfd >= 0 &&
	    proxy_new(&s->proxy, &s->pol->net_allow, &s->pol->net_rules, &ptls, s->rep, s->epfd, &e) < 0) {
		setup_error(s, &e);
		kill_run(s, ST_SETUP_ERROR);
	}
	if (s->epfd < 0 || s->timer < 0 || s->cpu_timer < 0 || s->sigfd < 0 ||
	    ep_add(s->epfd, s->sock, EPOLLIN) < 0 || ep_add(s->epfd, s->pidfd, EPOLLIN) < 0 ||
	    ep_add(s->epfd, s->out[0].in_fd, EPOLLIN) < 0 || ep_add(s->epfd, s->out[1].in_fd, EPOLLIN) < 0 ||
	    ep_add(s->epfd, s->timer, EPOLLIN) < 0 || ep_add(s->epfd, s->cpu_timer, EPOLLIN) < 0 ||
	    ep_add(s->epfd, s->sigfd, EPOLLIN) < 0 ||
	    (ro->cancel_fd > 0 && epoll_ctl(s->epfd, EPOLL_CTL_ADD, ro->cancel_fd, &cancel_ev) < 0)) {
		cordon_err_errno(&e, "supervisor event loop");
		setup_error(s, &e);
		kill_run(s, ST_SETUP_ERROR);
	} else {
		arm_timer(s->timer, SETUP_TIMEOUT_NS);
		if (parent_setup(s, &e) < 0) {
			setup_error(s, &e);
			kill_run(s, ST_SETUP_ERROR);
		}
	}
	s->rep->enf.cgroup = s->have_cg ? s->cgops->name : "none";
	event_loop(s);
	if (s->pty_mode)
		pty_relay_end(&s->pty);
	/* The proxy's connections go before anything else is read (outputs need
	 * fds too); its totals are in the report from here on. */
	proxy_free(s->proxy);
	s->proxy = NULL;
	if (nofile_raised)
		setrlimit(RLIMIT_NOFILE, &nofile_was);
	/* Make sure init is gone and reaped. */
	if (!s->init_dead) {
		syscall(SYS_pidfd_send_signal, s->pidfd, SIGKILL, NULL, 0);
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		if (waitid(P_PIDFD, (id_t)s->pidfd, &si, WEXITED) == 0) {
			s->init_code = si.si_code;
			s->init_status = si.si_status;
		}
		s->t_end = now_ns();
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return 0;
}

static void finish_usage(struct sup *s)
{
	struct run_report *rep = s->rep;
	struct cg_usage u;
	memset(&u, 0, sizeof(u));
	if (s->have_cg)
		s->cg.ops->usage(&s->cg, &u);
	if (!u.have_cpu || !u.have_memory) {
		struct rusage ru;
		if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
			if (!u.have_cpu) {
				u.cpu_user_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000ULL + (uint64_t)ru.ru_utime.tv_usec * 1000ULL;
				u.cpu_sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000ULL + (uint64_t)ru.ru_stime.tv_usec * 1000ULL;
			}
			if (!u.have_memory) {
				u.peak_memory = (uint64_t)ru.ru_maxrss * 1024ULL;
				u.have_memory = true;
			}
		}
	}
	classify(s, &u);
	rep->wall_seconds = (double)(s->t_end - s->t_start) / 1e9;
	if (s->exec_ok)
		rep->setup_seconds = (double)(s->t_exec - s->t_start) / 1e9;
	rep->have_cpu = true;
	rep->cpu_user_ns = u.cpu_user_ns;
	rep->cpu_sys_ns = u.cpu_sys_ns;
	rep->have_memory = u.have_memory;
	rep->peak_memory = u.peak_memory;
	for (int i = 0; i < 2; i++) {
		/* The count after stream_finish: what the redactor still held
		 * (a stream whose reader left while a partial match was held)
		 * goes into the count and the hash there, both or neither. */
		stream_finish(&s->out[i], rep->out[i].sha256);
		rep->out[i].bytes = s->out[i].bytes;
		rep->out[i].hash_skipped = s->out[i].hash_over;
		rep->out[i].hashed_bytes = s->out[i].hashed;
	}
	/* Outputs: on every outcome, the workspace keeps what was written. */
	if (s->exec_ok || s->ovl.active)
		collect_outputs(s);
	trace(s, "outputs collected");
	/* No process of the run is left (init's exit waited for them): what
	 * the run left in the writable paths is swept, the roots put back as
	 * they were at sync 2 (after a hand-over to the run's uid, if any). */
	bool on_host = overlay_on_host(&s->ovl, s->rep); /* else nothing of the run's reached it */
	sweep_run(&s->sweep, on_host ? &s->rep->outputs : NULL, on_host && s->rep->outputs.truncated, s->plan.workspace,
		  &s->rep->privilege_cleared, &s->rep->root_restored, &s->rep->privilege_sweep);
	trace(s, "privilege sweep done");
	/* A protected path absent at the start that exists now: reported. */
	protect_check_after(&s->plan, s->rep);
	/* After the outputs' snapshot (the chown changes every ctime) and the
	 * sweep (which restores the roots to their owner at sync 2). */
	give_back_workspace(s);
	if (s->trace && s->have_obs)
		buf_printf(&s->trace_buf, "  seccomp notifications: %llu (synchronous wake-up: %s)\n",
			   (unsigned long long)s->obs.notifications, s->obs.sync_wakeup ? "yes" : "no");
	if (s->trace && sockdiag_failures(s->obs.diag))
		buf_printf(&s->trace_buf, "  sock_diag queries failed: %u\n", sockdiag_failures(s->obs.diag));
}

static void cleanup(struct sup *s)
{
	if (s->mntns >= 0) {
		close_fd(&s->mntns);
		trace(s, "mount namespace released");
	}
	give_back_workspace(s);
	if (s->have_cg)
		s->cg.ops->destroy(&s->cg);
	/* Off the critical path: cgroups of supervisors that were SIGKILLed. */
	if (s->cgops)
		cgroup_reap_stale(s->cgops, &s->cgp.host);
	cgroup_prep_free(&s->cgp);
	trace(s, "cgroups removed");
	if (s->spec.tree_fds) {
		for (size_t i = 0; i <= s->plan.nmounts; i++)
			if (s->spec.tree_fds[i] >= 0)
				close(s->spec.tree_fds[i]);
		free(s->spec.tree_fds);
	}
	snapshot_free(&s->before);
	free(s->spec.overlay_trees);
	overlay_free(&s->ovl);
	overlay_view_free(&s->view);
	sweep_free(&s->sweep);
	proxy_free(s->proxy);
	s->proxy = NULL;
	if (s->ca)
		s->tls->ca_free(s->ca);
	s->ca = NULL;
	buf_free(&s->ca_bundle);
	free(s->psec);
	s->psec = NULL;
	s->npsec = 0;
	landlock_plan_free(&s->landlock);
	mount_steps_free(&s->mounts);
	seccomp_plan_free(&s->seccomp);
	if (s->have_obs)
		observer_free(&s->obs);
	close_fd(&s->sock);
	close_fd(&s->pidfd);
	close_fd(&s->epfd);
	close_fd(&s->timer);
	close_fd(&s->cpu_timer);
	close_fd(&s->sigfd);
	wipe_secret_copies(s);
	for (size_t i = 0; i < s->env.n; i++)
		explicit_bzero(s->env.v[i], strlen(s->env.v[i]));
	strv_free(&s->env);
	run_plan_free(&s->plan);
	if (s->trace && s->trace_buf.p) {
		/* A diagnostic on request only. */
		if (write(STDERR_FILENO, s->trace_buf.p, s->trace_buf.len) < 0) { /* ignore */ }
	}
	buf_free(&s->trace_buf);
}

static int run_once(const cordon_policy *p, char *const argv[], struct run_report *rep,
		    const struct run_opts *opts, cordon_error *err)
{
	struct sup s;
	memset(&s, 0, sizeof(s));
	s.seccomp.memfd = -1;
	if (geteuid() == 0)
		prctl(PR_SET_DUMPABLE, 0);
	else /* the command's run cleared it; its check's init must be
	      * dumpable for its uid_map to be ours to write */
		prctl(PR_SET_DUMPABLE, 1);
	s.pol = p;
	s.opts = opts;
	s.rep = rep;
	s.forced = ST_COUNT;
	s.t0 = now_ns();
	/* Not a check's run: its output goes to stderr, prefixed. */
	s.pty_mode = policy_opts(p)->pty && !opts->to_stderr;
	s.pty.master = -1;
	s.pty.in_fd = -1;
	s.pty.host.fd = -1;
	s.trace = policy_opts(p)->trace_timing;
	s.sock = s.pidfd = s.epfd = s.timer = s.cpu_timer = s.sigfd = s.mntns = -1;
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

	load_secrets(&s);
	cordon_error e = {0};
	if (run_preflight((cordon_policy *)p, &s.plan, rep, &e) < 0) {
		if (rep->status == ST_INFEASIBLE || rep->status == ST_UNAUTHORIZED) {
			struct run_facts f;
			struct run_outcome o;
			run_facts_init(&f);
			f.refused = rep->status;
			f.reason = e.msg;
			run_outcome_decide(&f, &o);
			rep->status = o.status;
			snprintf(rep->reason, sizeof(rep->reason), "%s", o.reason);
		} else {
			setup_error(&s, &e);
		}
		run_plan_free(&s.plan);
		return 0;
	}
	/* The ceiling may have supplied limits: the report shows them. */
	for (int i = 0; i < LIM_COUNT; i++)
		rep->limits[i] = p->limits[i];
	/* Inputs are hashed before the run starts: the evidence names what the
	 * command was given, not what it left behind. */
	if (p->inputs.n) {
		strv in = {0};
		int rc = run_plan_inputs(&s.plan, &p->inputs, &in, &e);
		if (rc == 0)
			rc = files_hash_tree((const char *const *)in.v, in.n, s.plan.workspace, &rep->inputs, &e);
		strv_free(&in);
		if (rc < 0) {
			setup_error(&s, &e);
			run_plan_free(&s.plan);
			return 0;
		}
	}
	trace(&s, "preflight done");
	s.spec.argv = argv;
	s.spec.session = opts->hooks != NULL;
	if (prepare(&s, &e) < 0) {
		setup_error(&s, &e);
	} else {
		s.spec.argv = argv;
		if (spawn_and_supervise(&s, &e) < 0)
			setup_error(&s, &e);
	}
	if (opts->hooks)
		opts->hooks->on_end(opts->hooks->ctx);
	/* The observer's denials are the report's from here on. */
	if (s.have_obs) {
		observer_stop(&s.obs);
		if (atomic_load(&s.obs.violated) && s.pol->kill_on_violation && s.forced == ST_COUNT &&
		    !s.setup_failed)
			s.forced = ST_DENIED;
	}
	if (s.pid > 0)
		finish_usage(&s);
	/* The report is complete: a session answers before the teardown. */
	if (opts->hooks && opts->hooks->on_report && s.pid > 0) {
		opts->hooks->on_report(opts->hooks->ctx);
		trace(&s, "report handed over");
	}
	cleanup(&s);
	return 0;
}

/* target, read from the link at path (absolute), made absolute against the
 * link's directory and normalised lexically ("." and ".." resolved), into out. */
static void link_lexical(const char *path, const char *target, char *out, size_t outsz)
{
	char in[2 * PATH_MAX + 2];
	if (target[0] == '/')
		snprintf(in, sizeof(in), "%s", target);
	else {
		const char *slash = strrchr(path, '/');
		int dl = slash ? (int)(slash - path) : 0;
		snprintf(in, sizeof(in), "%.*s/%s", dl, path, target);
	}
	size_t n = 0;
	out[0] = '\0';
	for (char *save = NULL, *c = strtok_r(in, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
			out[n] = '\0';
			continue;
		}
		size_t cl = strlen(c);
		if (n + 1 + cl + 1 > outsz)
			break;
		out[n++] = '/';
		memcpy(out + n, c, cl + 1);
		n += cl;
	}
	if (n == 0)
		snprintf(out, outsz, "/");
}

/* Where a link must not lead when the check reads the task's results: its
 * own files (CHECK_FILES_DIR, or CHECK_FILES_DIR-<random>), its own /proc
 * (/proc/self/cwd is the check's working directory), its standard streams. */
static const char *check_only_place(const char *abs)
{
	static const char *const places[] = {"/proc", "/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr",
					     CHECK_FILES_DIR, NULL};
	for (const char *const *pl = places; *pl; pl++)
		if (path_has_prefix(abs, *pl))
			return *pl;
	size_t cl = strlen(CHECK_FILES_DIR);
	if (strncmp(abs, CHECK_FILES_DIR "-", cl + 1) == 0)
		return CHECK_FILES_DIR "-*";
	return NULL;
}

/* Every symbolic link in the task's writable paths (read beneath their
 * roots, never followed): one that leads to a check-only place fills reason
 * and returns true; so does a walk cut short (a link could hide beyond). */
static bool links_into_check(const strv *writable, const char *const *shown, char *reason, size_t rsz)
{
	if (!writable->n)
		return false;
	struct snapshot snap;
	cordon_error e = {0};
	if (snapshot_take(&snap, (const char *const *)writable->v, writable->n, &e) < 0) {
		snprintf(reason, rsz, "the task's writable paths could not be searched for links before the check: %s", e.msg);
		return true;
	}
	bool bad = false;
	if (snap.truncated) {
		snprintf(reason, rsz, "the task's writable paths are too large to search for links before the check (%s)",
			 cut_name(snap.cut));
		bad = true;
	}
	for (size_t i = 0; !bad && i < snap.n; i++) {
		const struct snap_entry *en = &snap.e[i];
		if (!S_ISLNK(en->mode) || en->root >= snap.nroots || snap.rootfd[en->root] < 0)
			continue;
		const char *path = snap_path(&snap, en);
		const char *rel = path + snap.rootlen[en->root];
		while (*rel == '/')
			rel++;
		char as_shown[PATH_MAX]; /* a change set's upper layer: the host path */
		if (shown) {
			snprintf(as_shown, sizeof(as_shown), "%s%s%s", shown[en->root],
				 *rel && strcmp(shown[en->root], "/") ? "/" : "", rel);
			path = as_shown;
		}
		const char *name = strrchr(rel, '/');
		char dir[PATH_MAX];
		if (name)
			snprintf(dir, sizeof(dir), "%.*s", (int)(name - rel), rel);
		else
			snprintf(dir, sizeof(dir), ".");
		name = name ? name + 1 : rel;
		_cleanup_close_ int dfd = open_beneath(snap.rootfd[en->root], dir, O_PATH | O_DIRECTORY);
		char target[PATH_MAX], abs[PATH_MAX];
		ssize_t tl = dfd >= 0 ? readlinkat(dfd, name, target, sizeof(target) - 1) : -1;
		if (tl < 0)
			continue; /* gone, or no longer a link: nothing to follow */
		target[tl] = '\0';
		link_lexical(path, target, abs, sizeof(abs));
		const char *where = check_only_place(abs);
		if (where) {
			snprintf(reason, rsz, "the task left a symbolic link %s -> %s, which leads into %s (the check's own view): the check did not run; read results without following links",
				 path, target, where);
			for (char *c = reason; *c; c++) /* the run chose those bytes */
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					*c = '?';
			bad = true;
		}
	}
	snapshot_free(&snap);
	return bad;
}

/* The same for the links a change set holds (upper layers), each read as
 * if it were at its host path. */
static bool links_in_changes(const struct overlay_run *o, char *reason, size_t rsz)
{
	strv uppers = {0};
	const char *shown[CHANGESET_MAX_LAYERS];
	char dir[PATH_MAX];
	bool bad = false;
	for (size_t i = 0; i < o->cs.nlayers && !bad; i++) {
		snprintf(dir, sizeof(dir), "%s/%zu/upper", o->cs.dir, i);
		shown[uppers.n] = o->cs.host[i];
		if (strv_push(&uppers, dir) < 0) {
			snprintf(reason, rsz, "out of memory");
			bad = true;
		}
	}
	if (!bad)
		bad = links_into_check(&uppers, shown, reason, rsz);
	strv_free(&uppers);
	return bad;
}

/* The task check: after the command completed (ok or exit-nonzero; a run
 * stopped by a limit or a policy kill leaves the task "not-run"), the check
 * command runs in a fresh boundary with the same policy and the outputs
 * visible read-only; its exit status alone decides the task verdict. */
static int run_check(const cordon_policy *p, struct run_report *rep, struct secret_cache *sc,
		     const struct overlay_run *view, cordon_error *err)
{
	char ws[4096];
	cordon_error e = {0};
	if (run_workspace(p, ws, sizeof(ws), &e) < 0) {
		/* the check cannot be set up: a verdict of its own */
		rep->check_ran = true;
		rep->check_status = ST_SETUP_ERROR;
		rep->check_exit_code = -1;
		rep->task = TASK_ERROR;
		snprintf(rep->check_reason, sizeof(rep->check_reason), "%s", e.msg);
		return 0;
	}
	/* A link the task left that leads where only the check can look (its
	 * files, its own /proc, its standard streams) would have the check
	 * compare its own data with itself: the check does not run. */
	if (links_into_check(&rep->writable, NULL, rep->check_reason, sizeof(rep->check_reason)) ||
	    (view && view->active && links_in_changes(view, rep->check_reason, sizeof(rep->check_reason)))) {
		rep->check_ran = true;
		rep->check_status = ST_SETUP_ERROR;
		rep->check_exit_code = -1;
		rep->task = TASK_ERROR;
		return 0;
	}
	cordon_policy *cp = policy_for_check(p, ws);
	if (!cp)
		return cordon_err(err, 12, "out of memory");
	/* check.files stays outside what the task could write, as its plan said. */
	for (size_t i = 0; i < rep->writable.n; i++)
		if (strv_push(&cp->check_writable, rep->writable.v[i]) < 0) {
			policy_free(cp);
			return cordon_err(err, 12, "out of memory");
		}
	char *argv[] = {"/bin/sh", "-c", p->check, NULL};
	struct run_report crep;
	report_init(&crep);
	/* Same secrets, same bytes, same redactor (lent, not owned). */
	crep.redact = rep->redact;
	struct run_opts o = {true, "check: ", sc, NULL, view};
	int r = run_once(cp, argv, &crep, &o, err);
	crep.redact = NULL;
	if (r == 0) {
		rep->check_ran = true;
		rep->check_status = crep.status;
		rep->check_exit_code = crep.exit_code;
		rep->check_wall_seconds = crep.wall_seconds;
		/* A check that could not be set up says nothing about the task:
		 * a verdict of its own, with the reason. */
		bool not_run = crep.status == ST_SETUP_ERROR || crep.status == ST_UNAUTHORIZED ||
			       crep.status == ST_INFEASIBLE;
		rep->task = not_run ? TASK_ERROR : crep.status == ST_OK ? TASK_PASS : TASK_FAIL;
		/* Its workspace: writable and thrown away, or read-only (why). */
		bool scratch = false;
		for (size_t i = 0; i < cp->nmounts; i++)
			scratch |= cp->mounts[i].scratch;
		if (!not_run && scratch)
			rep->check_workspace = crep.check_workspace_reason[0] ? "read-only" : "scratch";
		snprintf(rep->check_workspace_reason, sizeof(rep->check_workspace_reason), "%s",
			 crep.check_workspace_reason);
		if (not_run)
			snprintf(rep->check_reason, sizeof(rep->check_reason), "%s",
				 crep.reason[0] ? crep.reason : status_name(crep.status));
		/* The check is untrusted code too: its denials count. */
		if (report_add_check_denials(rep, &crep) < 0)
			r = cordon_err(err, 12, "out of memory");
	}
	report_free(&crep);
	policy_free(cp);
	return r;
}

int run_command(cordon_policy *p, char *const argv[], struct run_report *rep,
	       cordon_error *err)
{
	/* A reader of our output that goes away must not kill the supervisor
	 * (the run would lose its report): EPIPE instead, for this run only.
	 * The command gets default signal handling back before exec. */
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);
	/* The run sets the dumpable flag as its steps need (run_once,
	 * parent_setup); the caller gets its own back (include/cordon.h). */
	int dumpable = prctl(PR_GET_DUMPABLE);
	struct secret_cache sc;
	memset(&sc, 0, sizeof(sc));
	struct run_opts o = {false, NULL, &sc, NULL, NULL};
	int r = run_once(p, argv, rep, &o, err);
	/* (in overlay and review mode the check ran before the apply) */
	if (r == 0 && p->check && !rep->check_ran && (rep->status == ST_OK || rep->status == ST_EXIT_NONZERO))
		r = run_check(p, rep, &sc, NULL, err);
	secrets_free(&sc.sec);
	if (dumpable >= 0)
		prctl(PR_SET_DUMPABLE, dumpable);
	sigaction(SIGPIPE, &old, NULL);
	return r;
}

int cordon_session_run(cordon_policy *p, struct run_report *rep, const struct run_hooks *h,
		       cordon_error *err)
{
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);
	struct secret_cache sc;
	memset(&sc, 0, sizeof(sc));
	struct run_opts o = {false, NULL, &sc, h, NULL};
	char *argv[] = {"cordon-session", NULL};
	int r = run_once(p, argv, rep, &o, err);
	secrets_free(&sc.sec);
	sigaction(SIGPIPE, &old, NULL);
	return r;
}
