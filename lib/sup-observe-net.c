/* The observer's sockets: a connect, sendto or bind's address read from
 * the calling process, the socket's type, the run's own loopback
 * listeners, the declared ports; a direct connection on record. */
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
#include <unistd.h>
#include "sup-observe-net.h"
#include "cleanup.h"
#include "compat.h"
#include "error.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include "proxy.h"
#include "observe.h"
#include "landlock.h"
#include "protect.h"
#include <sys/vfs.h>
#include <linux/magic.h>
#include "seccomp-policy.h"
#include "sup-observe-deny.h"
#include "systab.h"
#include "sockdiag.h"

/* The thread group of thread tid, from /proc/TID/status; -1 if unknown. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], st[1024];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, st, sizeof(st) - 1);
	if (n <= 0)
		return -1;
	st[n] = '\0';
	const char *t = strstr(st, "\nTgid:");
	return t ? (pid_t)strtol(t + 7, NULL, 10) : -1;
}

bool observer_run_fd_cloexec(pid_t pid, int fd, bool *cloexec)
{
	char path[64], text[512];
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	_cleanup_close_ int f = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (f < 0)
		return false;
	ssize_t n = read(f, text, sizeof(text) - 1);
	if (n <= 0)
		return false;
	text[n] = '\0';
	const char *p = strstr(text, "flags:");
	if (!p)
		return false;
	*cloexec = strtol(p + 6, NULL, 8) & O_CLOEXEC;
	return true;
}

int observer_run_fd(pid_t tid, int fd)
{
	int pfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	if (pfd < 0) /* before 6.9: thread-group leaders only */
		pfd = (int)syscall(SYS_pidfd_open, tid, 0);
	if (pfd < 0 && errno == EINVAL) {
		/* A thread other than the leader, before 6.9: its leader's
		 * descriptors, which threads share (for a thread made without
		 * CLONE_FILES this may be another socket: only whether a connect
		 * on the run's own loopback is reported can then be wrong). */
		pid_t tg = tgid_of(tid);
		if (tg > 0 && tg != tid)
			pfd = (int)syscall(SYS_pidfd_open, tg, 0);
	}
	if (pfd < 0)
		return -1;
	int s = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
	close(pfd);
	return s;
}

/* The type of socket fd of thread tid (SOCK_STREAM, SOCK_DGRAM, ...), or -1
 * when it cannot be told. */
int observer_socket_type(pid_t tid, int fd)
{
	int s = observer_run_fd(tid, fd);
	if (s < 0)
		return -1;
	int type = -1;
	socklen_t l = sizeof(type);
	if (getsockopt(s, SOL_SOCKET, SO_TYPE, &type, &l) < 0)
		type = -1;
	close(s);
	return type;
}

/* Does a TCP socket of the caller's network namespace (the run's own) listen
 * on port? Read from /proc/PID/net/tcp and tcp6, where the kernel lists
 * listening sockets first: the scan stops at the first other state, and
 * reads at most 64 KiB per file whatever the run opened. */
static bool run_listens(pid_t pid, uint16_t port)
{
	static const char *const files[] = {"tcp", "tcp6"};
	for (size_t f = 0; f < ARRAY_SIZE(files); f++) {
		char path[64], text[65536];
		snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid, files[f]);
		_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			continue;
		size_t n = 0;
		for (ssize_t r; n < sizeof(text) - 1 && (r = read(fd, text + n, sizeof(text) - 1 - n)) > 0;)
			n += (size_t)r;
		text[n] = '\0';
		char *line = strchr(text, '\n'); /* past the header */
		while (line && *++line) {
			/* "  N: LOCALHEX:PORT REMOTEHEX:PORT ST ..." */
			char *sp = strchr(line, ':'), *next = strchr(line, '\n');
			unsigned lport = 0, st = 0;
			char *colon = sp ? strchr(sp + 1, ':') : NULL;
			if (!colon || (next && colon > next) ||
			    sscanf(colon + 1, "%4x %*s %2x", &lport, &st) != 2 || st != 0x0A)
				break;
			if (lport == port)
				return true;
			line = next;
		}
	}
	return false;
}

/* Read the socket address of a connect, sendto or bind; false for anything
 * but IPv4/IPv6. */
bool observer_read_inet(struct observer *o, uint64_t addr, uint64_t addrlen, char *target, size_t tsz,
		      uint16_t *port, bool *loop, struct sockaddr_storage *out)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	size_t len = addrlen < sizeof(ss) ? (size_t)addrlen : sizeof(ss);
	struct iovec l = {&ss, len}, r = {(void *)(uintptr_t)addr, len};
	if (len < sizeof(sa_family_t) || process_vm_readv((pid_t)o->req->pid, &l, 1, &r, 1, 0) != (ssize_t)len ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
		return false;
	char host[INET6_ADDRSTRLEN];
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		*port = ntohs(s4->sin_port);
		*loop = (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
		snprintf(target, tsz, "%s:%u", host, *port);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		*port = ntohs(s6->sin6_port);
		/* ::ffff:127.x.y.z is a connect to 127.x.y.z (issue 27.8 review). */
		*loop = IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr) ||
			(IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) && s6->sin6_addr.s6_addr[12] == 127);
		snprintf(target, tsz, "[%s]:%u", host, *port);
	}
	if (out)
		*out = ss;
	return true;
}

bool observer_port_declared(const struct observer *o, uint16_t port)
{
	for (size_t i = 0; i < o->nloopback_ports; i++)
		if (o->loopback_ports[i] == port)
			return true;
	return false;
}

/* Record a direct connect or sendto unless it stays inside the run: the
 * proxy, a listener of the run on its own loopback (TCP; with declared
 * loopback_ports, only those, as Landlock refuses the others), or a
 * datagram on its own loopback. A connect to a loopback port nobody in the
 * run listens on was meant for the host's service there: a denial. fd is
 * connect's socket (-1 for sendto, always a datagram here). Returns 1 if a
 * denial was recorded. */
int observer_record_direct(struct observer *o, struct run_report *rep, int fd, uint64_t addr, uint64_t addrlen)
{
	char target[INET6_ADDRSTRLEN + 16];
	uint16_t port;
	bool loop;
	struct sockaddr_storage ss;
	if (!observer_read_inet(o, addr, addrlen, target, sizeof(target), &port, &loop, &ss))
		return 0;
	bool ok = loop && (fd < 0 || (o->proxy && port == PROXY_PORT));
	/* Asked of the kernel, O(1) (issue 27.8); /proc only where it cannot be. */
	if (loop && !ok)
		ok = o->strict_ports ? observer_port_declared(o, port)
				     : sockdiag_listens(o->diag, (struct sockaddr *)&ss, run_listens);
	/* Datagrams on the run's own loopback stay inside it: not a way out,
	 * also when the socket is connect()ed (Landlock's ports are TCP's). */
	if (loop && !ok)
		ok = observer_socket_type((pid_t)o->req->pid, fd) == SOCK_DGRAM;
	if (ok || port == 0)
		return 0;
	observer_deny(o, rep, "network", target);
	return 1;
}

bool observer_run_listens(struct observer *o, const struct sockaddr_storage *ss, uint16_t port)
{
	return o->diag ? sockdiag_listens(o->diag, (const struct sockaddr *)ss, run_listens)
		       : run_listens((pid_t)o->req->pid, port);
}
