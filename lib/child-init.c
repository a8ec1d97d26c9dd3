/* Sandbox init: the order of enforcement, each step with its reason.
 *   sync 1 wait   the supervisor has written our uid/gid maps
 *   identity      the invoking uid/gid as mapped in U1, with U1's full
 *                 capability set, so the new root's files belong to a mapped user
 *                 (creds_apply_init: the supervisor's creds_plan)
 *   mounts_begin  the view's system part, the first of the supervisor's mount
 *                 steps (meanwhile it makes the cgroup, which init joins
 *                 on v1 as it receives its files, and prepares
 *                 idmapped trees)
 *   view wait     trees received, cgroup joined (v1), every input of the
 *                 view here (MSG_VIEW)
 *   mounts_finish task mounts, pivot_root into the view
 *   hostname, lo, cgroup namespace (v1)
 *   nested userns U2 (ns.h): uid 1000 there, no capability over U1 (its
 *                 maps formatted by the supervisor: creds_enter_nested)
 *   sync 2 wait   the seccomp program received, the snapshot taken or the
 *                 change set's start stamped (meanwhile, the steps above)
 *   cwd, rlimits, setsid
 *   drop          uid/gid 1000, capabilities (all sets), securebits, no_new_privs
 *   Landlock      the view again, as a second layer (needs no_new_privs)
 *   seccomp       last, so that nothing above is filtered; the listener fd
 *                 goes to the supervisor before anything can be denied
 * The degraded boundary (sp->degraded: no namespaces, docs/hosts.md) takes
 * the same order without the steps that need them: no identity in U1, no
 * mounts (the host's tree, held by Landlock alone), no hostname, lo, proxy
 * socket or cgroup namespace, no U2; the drop is to the run's host uid
 * (creds_drop_to), and setsid makes the process group the supervisor kills
 * at the end (seccomp then refuses setsid and setpgid).
 *   fork+exec     the command; init reaps until it exits, reports its status
 *                 and exits, and the kernel kills what is left of the run.
 *                 A process that makes init its tracer (PTRACE_TRACEME) is
 *                 let go at its first stop; only an exit or death counts.
 * Errors are sent to the supervisor as MSG_ERROR, never printed. */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cgroup-v1.h"
#include "cgroup.h"
#include "cleanup.h"
#include "compat.h"
#include "error.h"
#include "exec.h"
#include "mounts.h"
#include "overlay.h"
#include <netinet/in.h>
#include <sys/socket.h>
#include "ns.h"
#include "proxy.h"
#include "sandbox.h"
#include "child-init.h"
#include "session-agent.h"
#include "sockdiag.h"
#include "sync.h"

static __attribute__((noreturn)) void child_fail(int sock, cordon_error *e)
{
	sync_send(sock, MSG_ERROR, 0, e, -1);
	_exit(1);
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

static void wait_go1(int sock)
{
	struct msg m;
	if (sync_recv(sock, &m, NULL) <= 0 || m.type != MSG_GO1)
		_exit(1); /* the supervisor is gone */
}

/* Collect idmapped trees and the seccomp program until the message until
 * (MSG_VIEW: the view's inputs are all here; MSG_GO2: sync 2). */
static void wait_for(const struct sandbox_spec *sp, int sock, int *filter, bool *notify, uint32_t until)
{
	for (;;) {
		struct msg m;
		int fd;
		if (sync_recv(sock, &m, &fd) <= 0)
			_exit(1);
		if (m.type == until)
			return;
		if (m.type == MSG_FILTER && fd >= 0 && *filter < 0) {
			*filter = fd;
			*notify = m.value != 0;
			continue;
		}
		if (m.type == MSG_CGROUP && sp->cgview && sp->cgview->n < CGVIEW_MAX) {
			struct cgroup_view *cv = sp->cgview;
			if (m.value >= (int)ARRAY_SIZE(cg_v1_controllers))
				_exit(1);
			snprintf(cv->path[cv->n], sizeof(cv->path[0]), "%s", m.path);
			snprintf(cv->name[cv->n], sizeof(cv->name[0]), "%s", m.value < 0 ? "" : cg_v1_controllers[m.value]);
			cv->v2 = m.value < 0;
			cv->n++;
			continue;
		}
		if (m.type == MSG_OVERLAY && sp->overlay_trees && m.value >= 0 && (size_t)m.value < sp->plan->nmounts &&
		    sp->overlay_trees[m.value] == -1) {
			/* No fd: the run fell back to direct (overlay.h). */
			sp->overlay_trees[m.value] = fd >= 0 ? fd : OVERLAY_NONE;
			continue;
		}
		/* cgroup v1: into the run's cgroup (sup_send_cgroup_join), this
		 * process's one thread moving itself. */
		if (m.type == MSG_CGJOIN && fd >= 0) {
			if (write(fd, "0", 1) != 1) {
				cordon_error e = {0};
				cordon_err_errno(&e, "join the run's cgroup (v1 hierarchy %d)", (int)m.value);
				child_fail(sock, &e);
			}
			close(fd);
			continue;
		}
		if (m.type == MSG_LAYER && m.value >= 0 && (size_t)m.value < sp->nlayers && fd >= 0 &&
		    sp->layer_fds[m.value] < 0) {
			sp->layer_fds[m.value] = fd;
			continue;
		}
		/* index nmounts: the check's files (run_plan.check_files) */
		if (m.type != MSG_TREE || m.value < 0 || (size_t)m.value > sp->plan->nmounts || fd < 0 ||
		    sp->tree_fds[m.value] >= 0)
			_exit(1);
		sp->tree_fds[m.value] = fd;
	}
}

/* The signals this process ignores, bit sig-1 for signal sig, from the
 * kernel's own account (SigIgn in /proc/self/status): one open and read
 * instead of a sigaction per signal. Every signal when it cannot be read. */
static uint64_t ignored_signals(void)
{
	char b[2048];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return ~0ULL;
	ssize_t n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return ~0ULL;
	b[n] = '\0';
	const char *p = strstr(b, "\nSigIgn:\t");
	if (!p)
		return ~0ULL;
	p += strlen("\nSigIgn:\t");
	uint64_t v = 0;
	int digits = 0;
	for (; digits < 16; p++, digits++) {
		int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
		if (d < 0)
			break;
		v = v << 4 | (uint64_t)d;
	}
	return digits == 16 && *p == '\n' ? v : ~0ULL;
}

static void setup_or_fail(int sock, int r, cordon_error *e)
{
	if (r < 0)
		child_fail(sock, e);
}

/* The view and the run's own namespaces' setup, from sync 2 to U2 (not in
 * the degraded boundary). */
static void view_and_namespaces(const struct sandbox_spec *sp, int sock, struct mount_ctx *mc)
{
	cordon_error e = {0};
	struct mount_plan mp = {sp->tree_fds, sp->secrets, sp->nsecrets, sp->cgview, sp->overlay_dirs, sp->overlay_trees,
				sp->ca_pem, sp->ca_len};
	cordon_error scratch_note = {0};
	mp.scratch_note = &scratch_note;
	mp.overlay_subs = sp->overlay_subs;
	mp.ws_layers = sp->layer_fds;
	mp.nws_layers = sp->nlayers;
	mp.ws_path = sp->plan->workspace;
	setup_or_fail(sock, mounts_finish(mc, &mp, &e), &e);
	/* Before the listener: the supervisor's observer learns of it first. */
	if (scratch_note.msg[0] && sync_send(sock, MSG_CHECK_RO, scratch_note.code, &scratch_note, -1) < 0)
		setup_or_fail(sock, cordon_err_errno(&e, "send the check's read-only workspace"), &e);
	for (size_t i = 0; i <= sp->plan->nmounts; i++)
		if (sp->tree_fds[i] >= 0)
			close(sp->tree_fds[i]);
	for (size_t i = 0; sp->overlay_trees && i < sp->plan->nmounts; i++)
		if (sp->overlay_trees[i] >= 0)
			close(sp->overlay_trees[i]);
	for (size_t i = 0; i < sp->nlayers; i++)
		if (sp->layer_fds[i] >= 0)
			close(sp->layer_fds[i]);
	if (sethostname(CORDON_HOSTNAME, strlen(CORDON_HOSTNAME)) < 0)
		setup_or_fail(sock, cordon_err_errno(&e, "sethostname"), &e);
	setup_or_fail(sock, ns_loopback_up(&e), &e);
	if (sp->sockdiag) {
		/* The observer's view of the run's listeners, made here before
		 * the command runs (sockdiag.h); none: the fallback answers. */
		int d = sockdiag_socket();
		if (d >= 0 && sync_send(sock, MSG_DIAG_FD, 0, NULL, d) < 0)
			setup_or_fail(sock, cordon_err_errno(&e, "send the sock_diag socket"), &e);
		if (d >= 0)
			close(d);
	}
	if (sp->proxy) {
		/* The proxy listens inside the run's own network namespace; the
		 * supervisor serves it from outside. */
		int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PROXY_PORT),
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1024) < 0 ||
		    sync_send(sock, MSG_PROXY_FD, 0, NULL, l) < 0)
			setup_or_fail(sock, cordon_err_errno(&e, "the egress proxy's socket"), &e);
		close(l);
	}
	if (sp->dns)
		setup_or_fail(sock, ns_synthetic_addrs(&e), &e);
	if (sp->dns) {
		/* The run's resolver (network.transparent): its sockets here, the
		 * supervisor answers from outside (sup-dns.c). */
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(CORDON_DNS_PORT),
					.sin_addr.s_addr = htonl(CORDON_DNS_IPV4)};
		for (int tcp = 0; tcp <= 1; tcp++) {
			int l = socket(AF_INET, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
			if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || (tcp && listen(l, 64) < 0) ||
			    sync_send(sock, MSG_DNS_FD, tcp, NULL, l) < 0)
				setup_or_fail(sock, cordon_err_errno(&e, "the run's resolver's %s socket", tcp ? "TCP" : "UDP"), &e);
			close(l);
		}
	}
	/* On v1 we were attached after clone: a cgroup namespace made now is
	 * rooted at the run's own cgroup. */
	if (sp->unshare_cgroupns && unshare(CLONE_NEWCGROUP) < 0)
		setup_or_fail(sock, cordon_err_errno(&e, "unshare(CLONE_NEWCGROUP)"), &e);
	/* Into U2: from here on nothing the command can do has any capability
	 * over the mounts, network or hostname of the run. */
	setup_or_fail(sock, creds_enter_nested(sp->creds, &e), &e);
}

void sandbox_init_main(const struct sandbox_spec *sp, int sock, int outw, int errw)
{
	cordon_error e = {0};
	arm_pdeathsig(sock);
	/* An injected secret's value is the proxy's alone: this copy of the
	 * supervisor's memory drops it at once (the run gets its placeholder). */
	for (size_t i = 0; i < sp->nsecrets; i++)
		if (sp->secrets[i].placeholder)
			explicit_bzero(sp->secrets[i].value, sp->secrets[i].len);
	/* Nor the change set's key, held until sync 2 (changeset_begin):
	 * init stays for the whole run, a session's agent too. */
	if (sp->cs_key)
		explicit_bzero(sp->cs_key, sp->cs_key_len);
	/* Read while the host's /proc is still the view; nothing below
	 * changes a disposition. */
	uint64_t ignored = ignored_signals();
	/* Never cordon's terminal: written, it would bypass capture, redaction
	 * and limits; read, it would hand over keystrokes. */
	if (sp->stdin_fd >= 0 && (dup2(sp->stdin_fd, STDIN_FILENO) < 0 || close(sp->stdin_fd) < 0))
		setup_or_fail(sock, cordon_err_errno(&e, "stdin from /dev/null"), &e);
	wait_go1(sock); /* sync 1 */
	struct mount_ctx mc = {.steps = sp->mounts};
	if (!sp->degraded) {
		setup_or_fail(sock, creds_apply_init(sp->creds, &e), &e);
		arm_pdeathsig(sock);
		setup_or_fail(sock, mounts_begin(&mc, &e), &e);
	}
	int filter = -1;
	bool notify = false;
	/* The view is built as soon as its inputs are here, while the
	 * supervisor finishes its steps for sync 2 (the seccomp program, the
	 * change set's start or the snapshot): nothing of the run starts
	 * before sync 2. */
	wait_for(sp, sock, &filter, &notify, MSG_VIEW);
	if (!sp->degraded)
		view_and_namespaces(sp, sock, &mc);
	wait_for(sp, sock, &filter, &notify, MSG_GO2); /* sync 2 */
	if (sp->seccomp && filter < 0)
		setup_or_fail(sock, cordon_err(&e, 0, "no seccomp filter arrived at sync 2"), &e);
	/* Mapped now, before the run's rlimits (RLIMIT_AS is the command's:
	 * init's own mapping could be refused under it). */
	struct seccomp_plan prog = {0};
	if (sp->seccomp)
		setup_or_fail(sock, seccomp_map_fd(filter, notify, &prog, &e), &e);
	if (chdir(sp->plan->cwd_in) < 0)
		setup_or_fail(sock, cordon_err_errno(&e, "working directory %s", sp->plan->cwd_in), &e);
	setup_or_fail(sock, creds_apply_rlimits(&sp->rl, &e), &e);
	/* A new session: the command has no controlling terminal to inject into. */
	if (setsid() < 0)
		setup_or_fail(sock, cordon_err_errno(&e, "setsid"), &e);
	setup_or_fail(sock, sp->degraded ? creds_drop_to(sp->run_uid, sp->run_gid, &e) : creds_drop_all(&e), &e);
	arm_pdeathsig(sock);
	/* --pty: allocated as the command's uid (its slave is the command's),
	 * in the run's own devpts, before Landlock and seccomp; the master
	 * goes to the supervisor, which relays it. */
	int slave = -1;
	if (sp->pty) {
		int master = -1;
		setup_or_fail(sock, pty_open(&master, &slave, &sp->pty_size, &e), &e);
		if (sync_send(sock, MSG_PTY, 0, NULL, master) < 0)
			setup_or_fail(sock, cordon_err_errno(&e, "send the pty's master"), &e);
		close(master);
	}
	setup_or_fail(sock, landlock_apply(sp->landlock, &e), &e);
	if (sp->seccomp) {
		int listener = -1;
		setup_or_fail(sock, seccomp_apply(&prog, &listener, &e), &e);
		seccomp_unmap(&prog);
		close(filter);
		if (listener >= 0) {
			if (sync_send(sock, MSG_LISTENER, 0, NULL, listener) < 0)
				setup_or_fail(sock, cordon_err_errno(&e, "send the seccomp listener"), &e);
			close(listener);
		}
	}
	/* Not ptrace-able by the command it is about to start. */
	prctl(PR_SET_DUMPABLE, 0);
	if (sp->session)
		session_agent_main(sp, sock, outw, errw, ignored);
	int st[2];
	if (pipe2(st, O_CLOEXEC) < 0)
		setup_or_fail(sock, cordon_err_errno(&e, "pipe"), &e);
	pid_t cmd = fork();
	if (cmd < 0)
		setup_or_fail(sock, cordon_err_errno(&e, "fork the command"), &e);
	if (cmd == 0) {
		close(sock);
		close(st[0]);
		exec_command(sp, outw, errw, st[1], ignored, slave);
	}
	/* Only the command holds the slave: its end is the master's EOF. */
	if (slave >= 0)
		close(slave);
	close(st[1]);
	close(outw);
	close(errw);
	int exec_errno = exec_status_read(st[0]);
	close(st[0]);
	if (exec_errno) {
		cordon_err(&e, exec_errno, "exec %s", sp->argv[0]);
		child_fail(sock, &e);
	}
	sync_send(sock, MSG_EXEC_OK, cmd, NULL, -1);
	for (;;) {
		int ws;
		pid_t w = waitpid(-1, &ws, __WALL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			_exit(0);
		}
		if (WIFSTOPPED(ws)) {
			/* A process that called ptrace(PTRACE_TRACEME) made us its
			 * tracer: its stops come here. We never asked for it; let
			 * go, passing the signal on, except the SIGTRAP the kernel
			 * sends a tracee on exec (no tracer would deliver it). */
			release_tracee(w, WSTOPSIG(ws));
			continue;
		}
		if (!WIFEXITED(ws) && !WIFSIGNALED(ws))
			continue; /* only a real exit or death ends the command */
		if (w == cmd) {
			sync_send(sock, MSG_EXIT, ws, NULL, -1);
			_exit(0);
		}
	}
}
