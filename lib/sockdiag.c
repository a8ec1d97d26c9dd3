#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include "sockdiag.h"

/* Where the kernel cannot be asked, the caller's fallback (a read of
 * /proc/PID/net/tcp*: O(sockets)) runs at most this many times per run;
 * past it a connect is taken as reaching no listener. The supervisor's work
 * for a run stays bounded: O(1) per connect after that (each still costs it
 * the notification, as it costs the run the call). */
#define SOCKDIAG_FALLBACK_MAX 1024

struct sockdiag {
	int fd;           /* NETLINK_SOCK_DIAG in the run's network namespace; -1: cannot ask */
	pid_t init;       /* the run's init (the supervisor's child): the fallback's /proc */
	uint32_t seq;
	unsigned fallbacks; /* calls of the caller's fallback so far */
	unsigned failures;  /* queries the kernel did not answer */
};

/* The loopback device's index, in every network namespace (the kernel's
 * LOOPBACK_IFINDEX). A lookup for interface 0 skips listeners bound to a
 * device (SO_BINDTODEVICE "lo"); one for lo takes them and the others, as
 * a SYN on lo does (issue 27.8 review). */
#define LO_IFINDEX 1

#ifndef PIDFD_GET_NET_NAMESPACE
#define PIDFD_GET_NET_NAMESPACE _IO(0xFF, 4) /* 6.11+ */
#endif

struct diag_req {
	struct nlmsghdr nh;
	struct inet_diag_req_v2 r;
};

static int send_req(struct sockdiag *d, int family, const void *addr, uint16_t port)
{
	struct diag_req q;
	memset(&q, 0, sizeof(q));
	q.nh.nlmsg_len = sizeof(q);
	q.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.nh.nlmsg_flags = NLM_F_REQUEST; /* one socket, never a dump */
	q.nh.nlmsg_seq = ++d->seq;
	q.r.sdiag_family = (uint8_t)family;
	q.r.sdiag_protocol = IPPROTO_TCP;
	q.r.idiag_states = 1u << TCP_LISTEN;
	q.r.id.idiag_sport = htons(port);
	q.r.id.idiag_if = LO_IFINDEX;
	q.r.id.idiag_cookie[0] = q.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	/* The socket a SYN from addr:0 to addr:port would reach: the kernel's
	 * own lookup (no connection has a remote port 0, so only a listener
	 * matches). */
	size_t al = family == AF_INET ? 4 : 16;
	memcpy(q.r.id.idiag_src, addr, al);
	memcpy(q.r.id.idiag_dst, addr, al);
	struct sockaddr_nl k = {.nl_family = AF_NETLINK};
	return sendto(d->fd, &q, sizeof(q), 0, (struct sockaddr *)&k, sizeof(k)) == (ssize_t)sizeof(q) ? 0 : -1;
}

/* The answer to request seq: 1 a listener, 0 none, -1 an error. */
static int read_answer(struct sockdiag *d)
{
	/* The kernel answers within the send (one message): nothing to wait
	 * for. A few reads at most (a stale answer). */
	for (int tries = 0; tries < 8; tries++) {
		union {
			char b[8192];
			struct nlmsghdr align;
		} u;
		ssize_t n = recv(d->fd, u.b, sizeof(u.b), MSG_DONTWAIT);
		if (n <= 0)
			return -1;
		for (struct nlmsghdr *h = &u.align; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != d->seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);
				return h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error == -ENOENT ? 0 : -1;
			}
			if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY) {
				const struct inet_diag_msg *m = NLMSG_DATA(h);
				return h->nlmsg_len >= NLMSG_LENGTH(sizeof(*m)) && m->idiag_state == TCP_LISTEN;
			}
		}
	}
	return -1;
}

/* The check, in the caller's network namespace: a listener of its own
 * (port chosen by the kernel, on any address: lo may still be down) must be
 * found. An exact lookup, so nothing the run binds can make it fail; and
 * "no such socket" alone would not do: it is also the answer where the
 * kernel has no handler for TCP. */
int sockdiag_socket(void)
{
	struct sockdiag d = {.fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)};
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	struct in_addr lo = {htonl(INADDR_LOOPBACK)};
	bool ok = d.fd >= 0 && l >= 0 && bind(l, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(l, 1) == 0 &&
		  getsockname(l, (struct sockaddr *)&a, &al) == 0 && send_req(&d, AF_INET, &lo, ntohs(a.sin_port)) == 0 &&
		  read_answer(&d) == 1;
	if (l >= 0)
		close(l);
	if (!ok && d.fd >= 0) {
		close(d.fd);
		d.fd = -1;
	}
	return d.fd;
}

struct opener {
	struct sockdiag *d;
	int nsfd;
};

/* A thread of its own enters the namespace (the caller's stays where it
 * is): a socket keeps the namespace it was made in. There, before the
 * command runs, the check (sockdiag_socket). */
static void *open_in(void *arg)
{
	struct opener *op = arg;
	if (setns(op->nsfd, CLONE_NEWNET) == 0)
		op->d->fd = sockdiag_socket();
	return NULL;
}

struct sockdiag *sockdiag_adopt(pid_t init, int fd)
{
	struct sockdiag *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->fd = fd;
	d->init = init;
	return d;
}

void sockdiag_set_fd(struct sockdiag *d, int fd)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = fd;
}

struct sockdiag *sockdiag_open(pid_t init, int pidfd)
{
	struct sockdiag *d = sockdiag_adopt(init, -1);
	if (!d)
		return NULL;
	/* init's namespace: through its pidfd (6.11+), else /proc/PID, which
	 * names init while it is not reaped (it is the caller's child). */
	struct opener op = {d, pidfd >= 0 ? ioctl(pidfd, PIDFD_GET_NET_NAMESPACE, 0) : -1};
	if (op.nsfd < 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)init);
		/* A magic link (O_NOFOLLOW would refuse it), the kernel's own. */
		op.nsfd = open(path, O_RDONLY | O_CLOEXEC);
	}
	pthread_t t;
	if (op.nsfd >= 0 && pthread_create(&t, NULL, open_in, &op) == 0)
		pthread_join(t, NULL);
	if (op.nsfd >= 0)
		close(op.nsfd);
	return d;
}

bool sockdiag_listens(struct sockdiag *d, const struct sockaddr *sa, bool (*fallback)(pid_t, uint16_t))
{
	const void *addr;
	uint16_t port;
	int family = sa->sa_family;
	if (!d)
		return false;
	if (family == AF_INET) {
		addr = &((const struct sockaddr_in *)sa)->sin_addr;
		port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
	} else if (family == AF_INET6) {
		const struct in6_addr *a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
		addr = a6;
		/* ::ffff:a.b.c.d: the kernel connects over IPv4 to a.b.c.d (and
		 * its lookup of a mapped pair asks IPv4 too): asked as such. */
		if (IN6_IS_ADDR_V4MAPPED(a6)) {
			addr = &a6->s6_addr[12];
			family = AF_INET;
		}
	} else {
		return false;
	}
	int r = d->fd >= 0 && send_req(d, family, addr, port) == 0 ? read_answer(d) : -1;
	if (r >= 0)
		return r == 1;
	/* This connect only: the next one asks the kernel again. */
	if (d->fd >= 0)
		d->failures++;
	if (d->fallbacks >= SOCKDIAG_FALLBACK_MAX)
		return false;
	d->fallbacks++;
	return fallback(d->init, port);
}

unsigned sockdiag_failures(const struct sockdiag *d)
{
	return d ? d->failures : 0;
}

void sockdiag_free(struct sockdiag *d)
{
	if (!d)
		return;
	if (d->fd >= 0)
		close(d->fd);
	free(d);
}
