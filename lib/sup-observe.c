/* The seccomp observer (observe.h): the path calls it traps and how each
 * names its paths, its thread's lifecycle, and each notification handled
 * (paths: sup-observe-path.c, sockets: sup-observe-net.c, denials on
 * record: sup-observe-deny.c). */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <limits.h>
#include <linux/openat2.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/socket.h>
#include <unistd.h>
#include "cleanup.h"
#include "clock.h"
#include "compat.h"
#include "error.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include "model.h"
#include "plan.h"
#include "proxy.h"
#include "observe.h"
#include "landlock.h"
#include "protect.h"
#include <sys/vfs.h>
#include <linux/magic.h>
#include "seccomp-policy.h"
#include "sup-observe-deny.h"
#include "sup-observe-net.h"
#include "sup-tally.h"
#include "sup-observe-path.h"
#include "systab.h"
#include "sockdiag.h"

#include "sup-observe.h"
/* The path calls the filter traps for the observer (answered CONTINUE):
 * the one list, handed to seccomp_build(). */
const char *const observer_calls[] = {
	"open", "openat", "creat", "execve", "execveat", "unlink", "unlinkat",
	"rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir", "link", "linkat",
	"symlink", "symlinkat", "truncate", "mknod", "mknodat", NULL,
};

/* How each observed call names its paths, in the order of observer_calls. */
struct path_call {
	int dirfd;      /* argument holding the dirfd, or -1 for the cwd */
	int path;       /* argument holding the path */
	int flags;      /* open flags argument (W_OPENFLAGS / W_OPENHOW) */
	enum wmode w;
	int dirfd2, path2; /* a second, written path (rename, link), or -1 */
	int nr;
};

static struct path_call calls[] = {
	{-1, 0, 1, W_OPENFLAGS, -1, -1, 0}, /* open */
	{0, 1, 2, W_OPENFLAGS, -1, -1, 0}, /* openat */
	{-1, 0, -1, W_YES, -1, -1, 0}, /* creat */
	{-1, 0, -1, W_NO, -1, -1, 0}, /* execve */
	{0, 1, -1, W_NO, -1, -1, 0}, /* execveat */
	{-1, 0, -1, W_YES, -1, -1, 0}, /* unlink */
	{0, 1, -1, W_YES, -1, -1, 0}, /* unlinkat */
	{-1, 0, -1, W_YES, -1, 1, 0}, /* rename */
	{0, 1, -1, W_YES, 2, 3, 0}, /* renameat */
	{0, 1, -1, W_YES, 2, 3, 0}, /* renameat2 */
	{-1, 0, -1, W_YES, -1, -1, 0}, /* mkdir */
	{0, 1, -1, W_YES, -1, -1, 0}, /* mkdirat */
	{-1, 0, -1, W_YES, -1, -1, 0}, /* rmdir */
	{-1, 1, -1, W_YES, -1, 0, 0}, /* link (the old name too: a second name for a protected file) */
	{2, 3, -1, W_YES, 0, 1, 0}, /* linkat */
	{-1, 1, -1, W_YES, -1, -1, 0}, /* symlink */
	{1, 2, -1, W_YES, -1, -1, 0}, /* symlinkat */
	{-1, 0, -1, W_YES, -1, -1, 0}, /* truncate */
	{-1, 0, -1, W_YES, -1, -1, 0}, /* mknod */
	{0, 1, -1, W_YES, -1, -1, 0}, /* mknodat */
};
_Static_assert(ARRAY_SIZE(calls) + 1 == ARRAY_SIZE(observer_calls), "one layout per observed call");

/* What every observer takes: the notification buffers, the observed
 * calls' numbers (those in deny: refused, not observed) and no socket call
 * trapped yet. */
static int observer_setup(struct observer *o, const strv *deny, cordon_error *err)
{
	memset(o, 0, sizeof(*o));
	o->listener = -1;
	struct seccomp_notif_sizes sz;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		return cordon_err_errno(err, "SECCOMP_GET_NOTIF_SIZES");
	o->req_size = sz.seccomp_notif > sizeof(*o->req) ? sz.seccomp_notif : sizeof(*o->req);
	o->resp_size = sz.seccomp_notif_resp > sizeof(*o->resp) ? sz.seccomp_notif_resp : sizeof(*o->resp);
	o->req = calloc(1, o->req_size);
	o->resp = calloc(1, o->resp_size);
	if (!o->req || !o->resp)
		return cordon_oom(err);
	for (size_t i = 0; i < ARRAY_SIZE(calls); i++)
		/* A call in syscalls.deny reaches us as a denial, not to be
		 * observed and let through: no number, so it is not matched. */
		calls[i].nr = deny && strv_contains(deny, observer_calls[i]) ? -1
			      : seccomp_syscall_resolve_name(observer_calls[i]);
	o->clone3_nr = o->connect_nr = o->sendto_nr = o->bind_nr = o->listen_nr = -1;
	return 0;
}

int observer_init_oci(struct observer *o, const struct boundary_model *m, const cordon_policy *egress, bool proxy,
		      cordon_error *err)
{
	if (observer_setup(o, NULL, err) < 0)
		return -1;
	o->in_root = true;
	o->file_reports = true;
	/* run.cordon.policy: the deny list notifies connect (oci-seccomp.c),
	 * let through, one that bypasses the proxy recorded (the supervisor
	 * gives the view of the container's listeners, o->diag, once init
	 * runs); with network.loopback_ports bind too, and those Landlock
	 * refuses are recorded */
	if (egress) {
		o->connect_nr = seccomp_syscall_resolve_name("connect");
		o->proxy = proxy;
	}
	if (egress && egress->nloopback_ports && landlock_abi() >= 4) {
		o->bind_nr = seccomp_syscall_resolve_name("bind");
		memcpy(o->loopback_ports, egress->loopback_ports, sizeof(o->loopback_ports));
		o->nloopback_ports = egress->nloopback_ports;
		o->strict_ports = true;
	}
	return view_build(m, 0, &o->view, err);
}

int observer_init(struct observer *o, const struct run_plan *plan, const cordon_policy *p, bool proxy,
		  bool overlay, cordon_error *err)
{
	if (observer_setup(o, &p->sys_deny, err) < 0)
		return -1;
	o->clone3_nr = seccomp_syscall_resolve_name("clone3");
	o->connect_nr = strv_contains(&p->sys_deny, "connect") ? -1 : seccomp_syscall_resolve_name("connect");
	o->sendto_nr = strv_contains(&p->sys_deny, "sendto") ? -1 : seccomp_syscall_resolve_name("sendto");
	o->bind_nr = strv_contains(&p->sys_deny, "bind") ? -1 : seccomp_syscall_resolve_name("bind");
	o->listen_nr = !p->net_transparent || strv_contains(&p->sys_deny, "listen") ? -1
										   : seccomp_syscall_resolve_name("listen");
	o->proxy = proxy;
	memcpy(o->loopback_ports, p->loopback_ports, sizeof(o->loopback_ports));
	o->nloopback_ports = p->nloopback_ports;
	o->strict_ports = p->nloopback_ports && landlock_abi() >= 4;
	o->file_reports = !p->no_file_reports;
	o->protects = model_protects(&plan->model);
	/* Direct mode: names protected at any depth (git's) are refused by
	 * name too. Overlay: the apply holds them back instead. */
	if (o->protects && !overlay) {
		if (protect_effective(p, &o->protect_names, NULL, err) < 0 ||
		    protect_add_home(plan, p, &o->protect_names, err) < 0)
			return -1;
		for (size_t i = 0; i < plan->nmounts; i++)
			if (plan->mounts[i].mode == MOUNT_RW &&
			    (strv_push(&o->rw_roots, plan->mounts[i].path) < 0 ||
			     strv_push(&o->rw_views, plan->mounts[i].at ? plan->mounts[i].at : plan->mounts[i].path) < 0))
				return cordon_oom(err);
	}
	if (view_build(&plan->model, 0, &o->view, err) < 0)
		return -1;
	/* Overlay: a protected path absent at the start is only in the run's
	 * own view if it makes it; the apply holds it back (and the report
	 * names it, changes.protected). Present ones stay read-only mounts. */
	for (size_t i = 0; overlay && i < plan->model.n; i++) {
		const struct model_entry *e = &plan->model.e[i];
		if (e->kind == MK_PROTECT && (e->flags & MODEL_NOT_YET))
			view_drop(&o->view, e->path, VIEW_PROTECTED);
	}
	return 0;
}

static void wake(int sig)
{
	(void)sig; /* only interrupts NOTIF_RECV */
}

/* The budget is spent: leave the listener unread for wait_ns (the run's
 * next call waits in the kernel), or until observer_stop's SIGUSR1. */
static void hold(struct observer *o, uint64_t wait_ns)
{
	uint64_t t0 = mono_ns();
	struct timespec ts = {(time_t)(wait_ns / 1000000000ULL), (long)(wait_ns % 1000000000ULL)};
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL); /* EINTR: stop (observer_stop) */
	notify_budget_held(&o->budget, mono_ns() - t0);
}

static void *observer_main(void *arg)
{
	struct observer *o = arg;
	while (!atomic_load(&o->stop)) {
		uint64_t wait_ns = notify_budget_wait_ns(&o->budget, mono_ns());
		if (wait_ns) {
			hold(o, wait_ns);
			continue;
		}
		uint64_t before = o->notifications;
		int n = observer_handle(o, o->rep);
		/* Each notification answered is paid for, a denial more (every
		 * one of them was answered as before: nothing is dropped). */
		if (o->notifications != before)
			notify_budget_charge(&o->budget, n > 0 ? NOTIFY_COST_DENIAL : NOTIFY_COST_CALL);
		if (n < 0 && errno != EINTR)
			break;
		if (o->maybe_gone) {
			/* Without a task left the listener hangs up and no notification
			 * can come again (the filter is only inherited): stop here
			 * instead of spinning on ENOENT until observer_stop. */
			struct pollfd pf = {.fd = o->listener, .events = POLLIN};
			o->maybe_gone = false;
			if (poll(&pf, 1, 0) == 1 && (pf.revents & POLLHUP) && !(pf.revents & POLLIN))
				break;
		}
		if (n > 0) {
			atomic_store(&o->violated, true);
			if (o->pidfd >= 0)
				syscall(SYS_pidfd_send_signal, o->pidfd, SIGKILL, NULL, 0);
		}
	}
	return NULL;
}

int observer_start(struct observer *o, int listener, struct run_report *rep, int pidfd,
		   cordon_error *err)
{
	o->listener = listener;
	o->rep = rep;
	o->pidfd = pidfd;
	notify_budget_init(&o->budget, o->budget_burst, o->budget_refill, mono_ns());
	/* The caller sleeps until we answer: hand the CPU over directly instead
	 * of through a scheduler wake-up (6.6+; older kernels: plain wake-ups). */
	o->sync_wakeup = ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
			       SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, 0) == 0;
	if (o->dns && (tally_new(&o->tally, err) < 0 ||
		       connector_start(&o->conn, listener, rep, &o->violated, pidfd, &o->conn_counts, o->tally, err) < 0)) {
		tally_free(o->tally);
		o->tally = NULL;
		return -1;
	}
	struct sigaction sa = {.sa_handler = wake}; /* no SA_RESTART: RECV returns EINTR */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, &o->usr1_was) < 0) {
		connector_stop(o->conn);
		o->conn = NULL;
		tally_free(o->tally);
		o->tally = NULL;
		return cordon_err_errno(err, "sigaction(SIGUSR1)");
	}
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 256 * 1024);
	/* Only this thread takes SIGUSR1. */
	sigset_t usr1, old;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, &old);
	int r = pthread_create(&o->thread, &at, observer_main, o);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	if (r != 0) {
		sigaction(SIGUSR1, &o->usr1_was, NULL);
		connector_stop(o->conn);
		o->conn = NULL;
		tally_free(o->tally);
		o->tally = NULL;
		return cordon_err(err, r, "start the seccomp observer");
	}
	o->started = true;
	return 0;
}

void observer_stop(struct observer *o)
{
	if (!o->started)
		return;
	atomic_store(&o->stop, true);
	/* A signal interrupts a RECV in progress; one sent just before the
	 * thread enters RECV would be lost, hence the retry. */
	for (;;) {
		pthread_kill(o->thread, SIGUSR1);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 5000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (pthread_timedjoin_np(o->thread, NULL, &ts) == 0)
			break;
	}
	/* The thread is gone, and a SIGUSR1 still pending for it with it: the
	 * caller's disposition comes back (include/cordon.h). */
	sigaction(SIGUSR1, &o->usr1_was, NULL);
	o->started = false;
	/* Then the connector, which only the thread handed work to; then the
	 * byte counts of what they handed in (the run is gone). */
	connector_stop(o->conn);
	o->conn = NULL;
	tally_finish(o->tally, o->rep);
	tally_free(o->tally);
	o->tally = NULL;
}

void observer_free(struct observer *o)
{
	observer_stop(o);
	if (o->listener >= 0)
		close(o->listener);
	free(o->req);
	free(o->resp);
	view_free(&o->view);
	strv_free(&o->protect_names);
	strv_free(&o->rw_roots);
	strv_free(&o->rw_views);
	sockdiag_free(o->diag);
	memset(o, 0, sizeof(*o));
	o->listener = -1;
}

/* Answer the pending call: error 0 = let the kernel decide (CONTINUE),
 * else fail it with that errno. */
static int respond(struct observer *o, int error)
{
	memset(o->resp, 0, o->resp_size);
	o->resp->id = o->req->id;
	if (!error)
		o->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	else
		o->resp->error = -error;
	if (ioctl(o->listener, SECCOMP_IOCTL_NOTIF_SEND, o->resp) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

/* A call that sets S_ISUID or S_ISGID: refused and reported, whatever the
 * file. Returns 1 (a denial) or -1 (error). A S_ISGID chmod of a directory
 * is refused too: the supervisor cannot tell what the kernel will resolve
 * the path (or the fd number) to once the call goes on (CONTINUE re-reads
 * it), and a rename that swaps a file in after any check set the bit on the
 * file (a setgid-root binary). */
static int handle_priv(struct observer *o, struct run_report *rep, mode_t bits, const uint64_t a[6])
{
	const struct seccomp_data *d = &o->req->data;
	(void)bits;
	char target[256];
	seccomp_denial_target(d->nr, a, target, sizeof(target));
	observer_deny(o, rep, "syscall", target);
	return respond(o, EPERM) < 0 ? -1 : 1;
}

int observer_handle(struct observer *o, struct run_report *rep)
{
	memset(o->req, 0, o->req_size);
	if (ioctl(o->listener, SECCOMP_IOCTL_NOTIF_RECV, o->req) < 0) {
		/* ENOENT: the caller died before we got to it, or no task uses
		 * the filter any more (RECV then returns at once, every time). */
		o->maybe_gone = errno == ENOENT;
		return errno == EINTR || errno == ENOENT ? 0 : -1;
	}

	o->notifications++;
	const struct seccomp_data *d = &o->req->data;
	uint64_t a[6];
	for (int i = 0; i < 6; i++)
		a[i] = d->args[i];
	/* Before the path calls: open and mknod are both. The mode is an
	 * integer argument, so what is checked is what the kernel will use. */
	mode_t bits = seccomp_priv_bits(d->nr, a);
	if (bits)
		return handle_priv(o, rep, bits, a);
	for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
		const struct path_call *c = &calls[i];
		if (c->nr != d->nr)
			continue;
		/* Observed: the kernel decides (CONTINUE); we only record. The path
		 * is read before answering, while the caller is still blocked. */
		pid_t pid = (pid_t)o->req->pid;
		int dfd = c->dirfd >= 0 ? (int)a[c->dirfd] : AT_FDCWD;
		uint64_t flags = 0;
		if (c->w == W_OPENFLAGS)
			flags = a[c->flags];
		else if (c->w == W_OPENHOW) {
			struct open_how how = {0};
			struct iovec l = {&how, sizeof(how.flags)}, r = {(void *)(uintptr_t)a[c->flags], sizeof(how.flags)};
			if (process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)sizeof(how.flags))
				flags = how.flags;
		}
		/* Above a protected path only a directory may be made (mkdir),
		 * or an empty one removed (unlink, rmdir). */
		const char *name = observer_calls[i];
		/* A link made of an open file (linkat, AT_EMPTY_PATH: since 6.10
		 * for anyone, of a file they opened) names no path to check:
		 * refused where anything is protected (outside review 11: a
		 * nested .git/config, opened read-only, linked into the
		 * workspace and rewritten). The flags are the call's own,
		 * copied at its entry: no check-then-use. */
		if (strcmp(name, "linkat") == 0 && (a[4] & AT_EMPTY_PATH) && o->protects) {
			observer_deny(o, rep, "syscall", "linkat");
			return respond(o, EPERM) < 0 ? -1 : 1;
		}
		bool moves = strncmp(name, "mkdir", 5) != 0 && strncmp(name, "unlink", 6) != 0 &&
			     strcmp(name, "rmdir") != 0;
		int dir = moves ? 0 : strncmp(name, "mkdir", 5) == 0 ? PROTECT_DIR_NEW : PROTECT_DIR_KEPT;
		bool refuse = false;
		bool follow = (c->w == W_OPENFLAGS && !(flags & (O_NOFOLLOW | O_EXCL))) ||
			      strcmp(name, "creat") == 0 || strcmp(name, "truncate") == 0;
		int n = observer_path(o, rep, pid, dfd, a[c->path], c->w, flags, follow, dir, &refuse);
		if (c->path2 >= 0)
			n += observer_path(o, rep, pid, c->dirfd2 >= 0 ? (int)a[c->dirfd2] : AT_FDCWD,
					  a[c->path2], W_YES, 0, strncmp(name, "link", 4) == 0, dir, &refuse);
		return respond(o, refuse ? EACCES : 0) < 0 ? -1 : n;
	}
	if (d->nr == o->connect_nr || d->nr == o->sendto_nr) {
		/* A direct connection, or a datagram to an address of the caller's
		 * choosing: recorded, the kernel decides. */
		/* network.transparent: TCP Fast Open's connect (sendto with
		 * MSG_FASTOPEN and an address) would take a socket handed in
		 * anywhere undecided (outside review, attack8): refused as a
		 * host without Fast Open refuses it; clients then connect. */
		if (d->nr == o->sendto_nr && o->dns && (a[3] & MSG_FASTOPEN))
			return respond(o, EOPNOTSUPP) < 0 ? -1 : 0;
		if (d->nr == o->connect_nr) {
			int h = observer_intercept_connect(o, rep, (int)a[0], a[1], a[2]);
			if (h != 0) /* answered; a denial or none */
				return h < 0 ? -1 : h - 1;
		}
		int n = d->nr == o->connect_nr ? observer_record_direct(o, rep, (int)a[0], a[1], a[2])
					       : observer_record_direct(o, rep, -1, a[4], a[5]);
		/* network.transparent: refused at once, not left to the missing
		 * route (ENETUNREACH), as a connect to a refused endpoint is. */
		return respond(o, n > 0 && o->dns ? ECONNREFUSED : 0) < 0 ? -1 : n;
	}
	if ((d->nr == o->bind_nr || d->nr == o->listen_nr) && observer_host_socket(o, (int)a[0]))
		/* network.transparent: a socket handed in is the host's (a bind
		 * would take a port of the host's, a listen serve there). */
		return respond(o, EOPNOTSUPP) < 0 ? -1 : 0;
	if (d->nr == o->listen_nr)
		return respond(o, 0) < 0 ? -1 : 0;
	if (d->nr == o->bind_nr) {
		/* Trapped when Landlock holds TCP to the declared ports: a TCP
		 * bind elsewhere is refused (EACCES), and recorded here; and
		 * with network.transparent (above). */
		char target[INET6_ADDRSTRLEN + 24];
		uint16_t port;
		bool loop;
		int n = 0;
		if (o->strict_ports && observer_read_inet(o, a[1], a[2], target + 5, sizeof(target) - 5, &port, &loop, NULL) &&
		    !observer_port_declared(o, port) && observer_socket_type((pid_t)o->req->pid, (int)a[0]) == SOCK_STREAM) {
			memcpy(target, "bind ", 5);
			observer_deny(o, rep, "network", target);
			n = 1;
		}
		return respond(o, 0) < 0 ? -1 : n;
	}
	if (d->nr == o->clone3_nr) {
		/* Every clone3 fails with ENOSYS (the filter's decision, so that
		 * libc uses clone); only namespace requests are denials. */
		uint64_t flags = 0;
		struct iovec l = {&flags, sizeof(flags)}, r = {(void *)(uintptr_t)a[0], sizeof(flags)};
		int n = 0;
		if (process_vm_readv((pid_t)o->req->pid, &l, 1, &r, 1, 0) == (ssize_t)sizeof(flags) &&
		    (flags & seccomp_namespace_flags())) {
			char target[256];
			uint64_t fa[6] = {flags, 0, 0, 0, 0, 0};
			seccomp_denial_target(d->nr, fa, target, sizeof(target));
			observer_deny(o, rep, "syscall", target);
			n = 1;
		}
		return respond(o, ENOSYS) < 0 ? -1 : n;
	}
	/* Anything else reached us because the filter denied it; a call newer
	 * than cordon's table gets the ENOSYS an older kernel would give. */
	char target[256];
	seccomp_denial_target(d->nr, a, target, sizeof(target));
	observer_deny(o, rep, "syscall", target);
	return respond(o, systab_newer(d->nr) ? ENOSYS : EPERM) < 0 ? -1 : 1;
}
