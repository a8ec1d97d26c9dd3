#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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
	uint32_t seq;
	unsigned fallbacks; /* calls of the caller's fallback so far */
};

struct opener {
	int nsfd, fd;
};

/* A thread of its own enters the namespace (the caller's stays where it
 * is): a socket keeps the namespace it was made in. */
static void *open_in(void *arg)
{
	struct opener *op = arg;
	if (setns(op->nsfd, CLONE_NEWNET) == 0)
		op->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	return NULL;
}

struct diag_req {
	struct nlmsghdr nh;
	struct inet_diag_req_v2 r;
};

static int send_req(struct sockdiag *d, int family, const void *addr, uint16_t port, bool dump)
{
	struct diag_req q;
	memset(&q, 0, sizeof(q));
	q.nh.nlmsg_len = sizeof(q);
	q.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.nh.nlmsg_flags = NLM_F_REQUEST | (dump ? NLM_F_DUMP : 0);
	q.nh.nlmsg_seq = ++d->seq;
	q.r.sdiag_family = (uint8_t)family;
	q.r.sdiag_protocol = IPPROTO_TCP;
	q.r.idiag_states = 1u << TCP_LISTEN;
	q.r.id.idiag_sport = htons(port);
	q.r.id.idiag_cookie[0] = q.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (addr) {
		/* The socket a SYN from addr:0 to addr:port would reach: the
		 * kernel's own lookup (no connection has a remote port 0, so
		 * only a listener matches). */
		size_t al = family == AF_INET ? 4 : 16;
		memcpy(q.r.id.idiag_src, addr, al);
		memcpy(q.r.id.idiag_dst, addr, al);
	}
	struct sockaddr_nl k = {.nl_family = AF_NETLINK};
	return sendto(d->fd, &q, sizeof(q), 0, (struct sockaddr *)&k, sizeof(k)) == (ssize_t)sizeof(q) ? 0 : -1;
}

/* The answer to request seq: 1 a listener, 0 none, -1 an error; for a dump
 * (the probe) 0 at its end. */
static int read_answer(struct sockdiag *d, bool dump)
{
	/* The kernel answers within the send: nothing to wait for. A few
	 * reads at most (a stale answer, a dump in parts). */
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
				return !dump && h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error == -ENOENT ? 0 : -1;
			}
			if (h->nlmsg_type == NLMSG_DONE) {
				int err = h->nlmsg_len >= NLMSG_LENGTH(sizeof(int)) ? *(const int *)NLMSG_DATA(h) : 0;
				return dump && err == 0 ? 0 : -1;
			}
			if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY && !dump) {
				const struct inet_diag_msg *m = NLMSG_DATA(h);
				return h->nlmsg_len >= NLMSG_LENGTH(sizeof(*m)) && m->idiag_state == TCP_LISTEN;
			}
		}
	}
	return -1;
}

static struct sockdiag *open_for(pid_t pid)
{
	struct sockdiag *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->fd = -1;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	/* A magic link (O_NOFOLLOW would refuse it), the kernel's own. */
	struct opener op = {open(path, O_RDONLY | O_CLOEXEC), -1};
	pthread_t t;
	if (op.nsfd >= 0 && pthread_create(&t, NULL, open_in, &op) == 0)
		pthread_join(t, NULL);
	if (op.nsfd >= 0)
		close(op.nsfd);
	d->fd = op.fd;
	/* Can it be asked here (sock_diag with TCP's handler)? Once: a dump of
	 * the listeners on port 1 (few or none) ends well only if so (a
	 * missing handler would read as "no such socket" later). */
	if (d->fd >= 0 && (send_req(d, AF_INET, NULL, 1, true) < 0 || read_answer(d, true) < 0)) {
		close(d->fd);
		d->fd = -1;
	}
	return d;
}

bool sockdiag_listens(struct sockdiag **dp, pid_t pid, const struct sockaddr *sa, bool (*fallback)(pid_t, uint16_t))
{
	const void *addr;
	uint16_t port;
	if (sa->sa_family == AF_INET) {
		addr = &((const struct sockaddr_in *)sa)->sin_addr;
		port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		addr = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	} else {
		return false;
	}
	if (!*dp)
		*dp = open_for(pid);
	struct sockdiag *d = *dp;
	int r = d && d->fd >= 0 && send_req(d, sa->sa_family, addr, port, false) == 0 ? read_answer(d, false) : -1;
	if (r >= 0)
		return r == 1;
	if (d && d->fallbacks >= SOCKDIAG_FALLBACK_MAX)
		return false;
	if (d)
		d->fallbacks++;
	return fallback(pid, port);
}

void sockdiag_free(struct sockdiag *d)
{
	if (!d)
		return;
	if (d->fd >= 0)
		close(d->fd);
	free(d);
}
