/* The degraded boundary's connects (sup-degrade-net.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "sup-degrade-net.h"
#include "cleanup.h"
#include "proxy.h"
#include "sup-connector.h"
#include "sup-handoff.h"
#include "sup-observe-net.h"

int sup_degrade_net_start(struct sup *s, int listener, cordon_error *err)
{
	s->dnet_listener = listener;
	/* The loop's own fds carry their number (sup-loop.c). */
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)(uint32_t)listener};
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, listener, &ev) < 0)
		return cordon_err_errno(err, "watch the run's seccomp listener (its connects)");
	return 0;
}

void sup_degrade_net_stop(struct sup *s)
{
	if (s->dnet_listener < 0)
		return;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->dnet_listener, NULL);
	close(s->dnet_listener);
	s->dnet_listener = -1;
}

/* A refused connect: a network denial (on_violation kill ends the run). */
static int refuse(struct sup *s, const char *target)
{
	report_add_denial(s->rep, "network", target);
	if (s->pol->kill_on_violation)
		sup_kill_run(s, ST_DENIED); /* as the observer ends a normal run */
	return ECONNREFUSED;
}

/* Was a read of the run (its memory, its descriptor, its descriptor's
 * flags) refused for want of ptrace access (e, the read's errno)? A
 * process that made itself non-dumpable (PR_SET_DUMPABLE 0, the exec of a
 * file it cannot read) is not ours to read when cordon runs as an ordinary
 * user (no CAP_SYS_PTRACE): its connect is refused as any other, and a
 * denial, or it would be a way past the report and on_violation kill
 * (outside review attack13). It may become so between one read and the
 * next, so each read asks (a process that flips it from another thread
 * had its connect answered EBADF, or refused without a denial). 0 where
 * the read failed otherwise. */
static int unreadable(struct sup *s, const struct seccomp_notif *n, int e)
{
	if (e != EPERM && e != EACCES)
		return 0;
	if (ioctl(s->dnet_listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &n->id) < 0)
		return EINTR; /* gone: nobody to answer */
	return refuse(s, "connect of a non-dumpable process (its address unreadable)");
}

/* A root cordon without CAP_SYS_PTRACE reads the run as the run's uid
 * (s->dnet_as_run, sup_degrade_proxy_as_run): this thread alone (the raw
 * system calls, not libc's, which would change every thread), for each
 * read, its saved uid kept 0 to come back. Meanwhile it is not dumpable
 * (the kernel clears it on the change; set again after) and Landlock
 * scopes the run's signals (ABI 6, required): a process of the run's uid
 * can neither trace nor signal it. */
struct as_run {
	bool on;
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	struct __user_cap_header_struct h;
	struct __user_cap_data_struct caps[2];
};

static void back_from_run(struct as_run *a)
{
	if (!a->on)
		return;
	a->on = false;
	/* The uid first (the saved 0 allows it), then the gid (CAP_SETGID
	 * again), then the capabilities as they were (the uid's change
	 * made the effective set the permitted one). None of it can fail:
	 * the saved uid is 0, the capabilities were this thread's. */
	if (syscall(SYS_setresuid, a->ru, a->eu, a->su) == 0)
		syscall(SYS_setresgid, a->rg, a->eg, a->sg);
	syscall(SYS_capset, &a->h, a->caps);
	prctl(PR_SET_DUMPABLE, 0);
}

/* 0 (as the run's uid, or nothing to do), or an errno: nothing read. */
static int become_run(const struct sup *s, struct as_run *a)
{
	memset(a, 0, sizeof(*a));
	if (!s->dnet_as_run)
		return 0;
	a->h.version = _LINUX_CAPABILITY_VERSION_3;
	if (getresuid(&a->ru, &a->eu, &a->su) < 0 || getresgid(&a->rg, &a->eg, &a->sg) < 0 ||
	    syscall(SYS_capget, &a->h, a->caps) < 0 || a->su != 0)
		return EPERM;
	if (syscall(SYS_setresgid, s->sb_gid, s->sb_gid, -1) < 0)
		return EPERM;
	a->on = true;
	if (syscall(SYS_setresuid, s->sb_uid, s->sb_uid, -1) < 0) {
		syscall(SYS_setresgid, a->rg, a->eg, a->sg);
		a->on = false;
		return EPERM;
	}
	return 0;
}

#define NOT_AS_RUN "connect cordon could not read (it could not take the run's uid to read it)"

/* Is ss the proxy's advertised address (127.0.0.1:PROXY_PORT, also as
 * ::ffff:127.0.0.1)? */
static bool is_proxy(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
		return s4->sin_addr.s_addr == htonl(INADDR_LOOPBACK) && ntohs(s4->sin_port) == PROXY_PORT;
	}
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
	static const unsigned char m[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
	return memcmp(s6->sin6_addr.s6_addr, m, 16) == 0 && ntohs(s6->sin6_port) == PROXY_PORT;
}

/* The connect to the proxy, made here and handed in: 0 (answered) or an
 * errno to answer. */
static int to_proxy(struct sup *s, const struct seccomp_notif *n, int rs)
{
	struct connect_req req = {.id = n->id, .fd = (int)n->data.args[0], .sock = -1, .name = "", .port = 0};
	socklen_t l = sizeof(req.family);
	int fl = fcntl(rs, F_GETFL);
	if (getsockopt(rs, SOL_SOCKET, SO_DOMAIN, &req.family, &l) < 0 || fl < 0)
		return ECONNREFUSED;
	struct as_run ar;
	if (become_run(s, &ar) != 0)
		return refuse(s, NOT_AS_RUN);
	bool got = observer_run_fd_cloexec((pid_t)n->pid, req.fd, &req.cloexec);
	int e = errno;
	back_from_run(&ar);
	if (!got) {
		int u = unreadable(s, n, e);
		return u ? u : ECONNREFUSED;
	}
	req.fl = fl;
	connect_opts_read(rs, &req.opts);
	struct sockaddr_in dst = handoff_addr(s->handoff);
	struct handoff_announcer a = {s->handoff, "", 0, 0, false};
	int sock = -1;
	int r = connect_begin_hook(&req, (struct sockaddr *)&dst, sizeof(dst), &sock, handoff_bind_announce, &a);
	if (a.full) {
		s->rep->net.over_limit++;
		return ECONNREFUSED;
	}
	if (r != 0 && r != EINPROGRESS) {
		if (a.src)
			handoff_withdraw(s->handoff, a.src);
		return r == EAGAIN ? ECONNREFUSED : r;
	}
	if (r == EINPROGRESS && !(req.fl & O_NONBLOCK)) {
		/* The loopback's handshake is over once connect returned,
		 * unless the way in's backlog was full: nothing here waits. */
		struct tcp_info ti;
		socklen_t tl = sizeof(ti);
		if (getsockopt(sock, IPPROTO_TCP, TCP_INFO, &ti, &tl) < 0 || ti.tcpi_state != TCP_ESTABLISHED) {
			handoff_withdraw(s->handoff, a.src);
			close(sock);
			s->rep->net.over_limit++;
			return ECONNREFUSED;
		}
		r = 0;
	}
	int h = connect_hand_in(s->dnet_listener, &req, sock, r);
	close(sock);
	return h < 0 ? -1 : 0;
}

/* One connect: 0 (answered here), or the errno to answer. */
static int decide(struct sup *s, const struct seccomp_notif *n)
{
	if (n->data.nr != __NR_connect)
		return EPERM; /* only connect is notified */
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	size_t len = n->data.args[2] < sizeof(ss) ? (size_t)n->data.args[2] : sizeof(ss);
	struct iovec lv = {&ss, len}, rv = {(void *)(uintptr_t)n->data.args[1], len};
	if (len < sizeof(sa_family_t))
		return EFAULT;
	struct as_run a;
	if (become_run(s, &a) != 0)
		return refuse(s, NOT_AS_RUN);
	ssize_t got = process_vm_readv((pid_t)n->pid, &lv, 1, &rv, 1, 0);
	int got_errno = errno;
	_cleanup_close_ int rs = got == (ssize_t)len ? observer_run_fd((pid_t)n->pid, (int)n->data.args[0]) : -1;
	int rs_errno = errno;
	back_from_run(&a);
	int u = got < 0 ? unreadable(s, n, got_errno) : 0;
	if (u)
		return u;
	if (got != (ssize_t)len)
		return EFAULT;
	/* Still the same call of the same task (its pid not reused)? */
	if (ioctl(s->dnet_listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &n->id) < 0)
		return EINTR;
	int type = -1;
	socklen_t l = sizeof(type);
	if (rs < 0 && (u = unreadable(s, n, rs_errno)) != 0)
		return u;
	if (rs < 0)
		return EBADF;
	if (getsockopt(rs, SOL_SOCKET, SO_TYPE, &type, &l) < 0)
		return ENOTSOCK;
	/* One connected or connecting already (handed in): what the kernel
	 * would answer, without letting it near the kernel's connect. */
	struct tcp_info ti;
	l = sizeof(ti);
	if (type == SOCK_STREAM && getsockopt(rs, IPPROTO_TCP, TCP_INFO, &ti, &l) == 0 && ti.tcpi_state != TCP_CLOSE)
		return ti.tcpi_state == TCP_SYN_SENT ? EALREADY : EISCONN;
	if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)
		return EAFNOSUPPORT; /* AF_UNSPEC (a disconnect) and the rest: nothing to reach */
	if ((ss.ss_family == AF_INET && len < sizeof(struct sockaddr_in)) ||
	    (ss.ss_family == AF_INET6 && len < sizeof(struct sockaddr_in6)))
		return EINVAL;
	if (type == SOCK_STREAM && is_proxy(&ss) && s->handoff)
		return to_proxy(s, n, rs);
	char host[INET6_ADDRSTRLEN], target[INET6_ADDRSTRLEN + 16];
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		snprintf(target, sizeof(target), "%s:%u", host, ntohs(s4->sin_port));
	} else {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		snprintf(target, sizeof(target), "[%s]:%u", host, ntohs(s6->sin6_port));
	}
	return refuse(s, target);
}

void sup_degrade_net_event(struct sup *s, int unused)
{
	(void)unused;
	struct pollfd p = {s->dnet_listener, POLLIN, 0};
	if (poll(&p, 1, 0) <= 0)
		return;
	if (!(p.revents & POLLIN)) {
		/* POLLHUP: every task of the filter is gone. */
		if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
			sup_degrade_net_stop(s);
		return;
	}
	struct seccomp_notif n;
	memset(&n, 0, sizeof(n));
	if (ioctl(s->dnet_listener, SECCOMP_IOCTL_NOTIF_RECV, &n) < 0)
		return; /* ENOENT: the task went away meanwhile */
	int r = decide(s, &n);
	if (r > 0 && connect_answer(s->dnet_listener, n.id, r) < 0)
		sup_degrade_net_stop(s);
	if (r < 0)
		sup_degrade_net_stop(s);
}
