/* The supervisor's event loop (step 12 of sup-run.c): one epoll loop over a
 * table of sources (init's socket and pidfd, the timers, signals, the output
 * streams, the pty), each with its handler, until init has exited and the
 * pipes are drained; the wall and CPU limits are enforced here. */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "sup-loop.h"
#include "sup-proxy.h"
#include "sup-dns.h"
#include "sup-degrade.h"
#include "sup-degrade-net.h"
#include "sockdiag.h"

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

void sup_arm_timer(int fd, uint64_t ns)
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
		sup_kill_run(s, ST_CPU_LIMIT);
		return;
	}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t next = (limit - used) / (uint64_t)(ncpu > 0 ? ncpu : 1);
	if (next < 5000000)
		next = 5000000;
	sup_arm_timer(s->cpu_timer, next);
}

/* The loop's own fds carry their number; the proxy's carry PROXY_TAG. */
int sup_ep_add(int ep, int fd, uint32_t events)
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
		sup_kill_run(s, ST_OUTPUT_LIMIT);
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
		sup_ep_add(s->epfd, st->out_fd, EPOLLOUT);
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
	if (sup_ep_add(s->epfd, master, EPOLLIN) < 0 || pty_relay_attach(&s->pty, s->epfd, master) < 0) {
		cordon_error e;
		cordon_err_errno(&e, "relay the run's pty");
		sup_setup_error(s, &e);
		sup_kill_run(s, ST_SETUP_ERROR);
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
		sup_setup_error(s, &m->err);
		break;
	case MSG_EXEC_OK:
		sup_trace(s, "command exec'd");
		s->exec_ok = true;
		/* init sends this only after every layer was applied. */
		s->rep->enf.no_new_privs = true;
		s->rep->enf.landlock_abi = s->landlock.abi;
		s->rep->enf.seccomp = s->spec.seccomp;
		/* (the degraded boundary's listener answers connects only) */
		s->rep->enf.seccomp_notify = s->spec.seccomp && s->seccomp.notify && s->notify;
		s->rep->enf.file_observer = s->spec.seccomp && s->seccomp.observe && !s->pol->no_file_reports;
		/* Read in the drain, the command started before init's end
		 * (t_end): the setup took no longer than that. */
		s->t_exec = live ? sup_now_ns() : s->t_end;
		if (!live)
			break;
		if (s->plan.model.run.wall_ns)
			sup_arm_timer(s->timer, s->plan.model.run.wall_ns);
		else
			timerfd_settime(s->timer, 0, &(struct itimerspec){0}, NULL);
		if (s->plan.model.run.cpu_ns && s->have_cg)
			cpu_check(s);
		if (s->opts->hooks && s->opts->hooks->cgroup && s->have_cg)
			s->opts->hooks->cgroup(s->opts->hooks->ctx, &s->cg);
		if (s->opts->hooks && s->ovl.active) {
			snprintf(s->rep->live_changes, sizeof(s->rep->live_changes), "%s", s->ovl.cs.dir);
			overlay_scan_root(&s->ovl, s->plan.workspace, s->rep->live_upper, sizeof(s->rep->live_upper));
			snprintf(s->rep->live_workspace, sizeof(s->rep->live_workspace), "%s", s->plan.workspace);
			/* Its tree: as mounted (sup-steps.c, as root), else the
			 * current directory the plan pinned when it is that (a
			 * session's own directory); else none known. */
			if (!s->rep->live_ws_ino && s->plan.ws_ino) {
				s->rep->live_ws_dev = s->plan.ws_dev;
				s->rep->live_ws_ino = s->plan.ws_ino;
			}
			s->rep->live_init_pid = s->pid;
		}
		if (s->opts->hooks)
			s->opts->hooks->ready(s->opts->hooks->ctx, s->sock, s->epfd, s->timer, s->rep);
		break;
	case MSG_LISTENER:
		if (fd >= 0 && s->have_obs && live) {
			cordon_error e;
			if (observer_start(&s->obs, fd, s->rep, s->pol->kill_on_violation ? s->pidfd : -1, &e) < 0) {
				sup_setup_error(s, &e);
				sup_kill_run(s, ST_SETUP_ERROR);
			}
			fd = -1;
		} else if (fd >= 0 && s->degraded_proxy && live) {
			cordon_error e;
			if (sup_degrade_net_start(s, fd, &e) < 0) {
				sup_setup_error(s, &e);
				sup_kill_run(s, ST_SETUP_ERROR);
			}
			fd = -1;
		}
		break;
	case MSG_PROXY_FD:
		if (fd >= 0 && s->proxy && live) {
			cordon_error e;
			if (proxy_listen(s->proxy, fd, &e) < 0) {
				sup_setup_error(s, &e);
				sup_kill_run(s, ST_SETUP_ERROR);
			}
			fd = -1;
		}
		break;
	case MSG_DNS_FD:
		if (fd >= 0 && s->dns && live) {
			cordon_error e;
			int r = dnsd_take(s->dns, fd, m->value == 1, &e);
			fd = -1;
			if (r < 0) {
				sup_setup_error(s, &e);
				sup_kill_run(s, ST_SETUP_ERROR);
			}
		}
		break;
	case MSG_DIAG_FD:
		/* Before MSG_LISTENER: the observer thread does not run yet. */
		if (fd >= 0 && s->obs.diag && !s->obs.started && live) {
			sockdiag_set_fd(s->obs.diag, fd);
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
		sup_trace(s, "command exited");
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
				sup_setup_error(s, &e);
				sup_kill_run(s, ST_SETUP_ERROR);
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
	/* Not reaped yet: its pid, the run's process group, stays its own. */
	if (waitid(P_PIDFD, (id_t)s->pidfd, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
		return;
	sup_degrade_reap(s);
	memset(&si, 0, sizeof(si));
	if (waitid(P_PIDFD, (id_t)s->pidfd, &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
		return;
	s->init_dead = true;
	s->init_code = si.si_code;
	s->init_status = si.si_status;
	s->t_end = sup_now_ns();
	sup_trace(s, "init reaped (run over)");
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
		sup_setup_error(s, &e);
		sup_kill_run(s, ST_SETUP_ERROR);
	} else {
		s->rep->limits_hit[LIM_WALL] = true;
		sup_kill_run(s, ST_TIMEOUT);
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
	sup_kill_run(s, ST_INTERRUPTED);
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
	{offsetof(struct sup, dnet_listener), sup_degrade_net_event, 0},
};

static void dispatch(struct sup *s, int fd)
{
	for (size_t k = 0; k < ARRAY_SIZE(sources); k++)
		if (*(const int *)((const char *)s + sources[k].fd_at) == fd)
			sources[k].fn(s, sources[k].arg);
}

int sup_event_loop(struct sup *s)
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
			if (evs[i].data.u64 & DNSD_TAG) {
				if (s->dns)
					dnsd_event(s->dns, evs[i].data.u64, evs[i].events);
				continue;
			}
			if ((evs[i].data.u64 & RUN_HOOK_TAG) && s->opts->hooks) {
				s->opts->hooks->on_event(s->opts->hooks->ctx, evs[i].data.u64, evs[i].events);
				continue;
			}
			if (evs[i].data.u64 == CANCEL_TAG) { /* stopped as by SIGINT, no signal */
				sup_kill_run(s, ST_INTERRUPTED);
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
