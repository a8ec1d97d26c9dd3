/* network.transparent's byte counts: see sup-tally.h. */
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "sup-tally.h"
#include "pxaddr.h"
#include "cleanup.h"

#ifndef SKNLGRP_INET_TCP_DESTROY
#define SKNLGRP_INET_TCP_DESTROY 1
#define SKNLGRP_INET6_TCP_DESTROY 3
#endif

/* The kernel's TCP states (include/net/tcp_states.h), as sock_diag gives
 * them (linux/tcp.h has tcp_info but not these). */
enum { ST_TIME_WAIT = 6, ST_CLOSE = 7, ST_CLOSE_WAIT = 8, ST_LAST_ACK = 9, ST_CLOSING = 11 };

struct rec {
	uint64_t cookie;
	uint8_t src[16], dst[16];
	uint16_t sport, dport; /* network order */
	uint16_t family;
	uint16_t target;
	int32_t next; /* the next of its bucket, or of the free list; -1: none */
	bool used;
};

/* Records are found by their cookie through a hash of it: the broadcast
 * names every socket the host frees, and each costs one bucket's walk. */
#define TALLY_BUCKETS 8192

static size_t bucket_of(uint64_t cookie)
{
	return (size_t)((cookie * 0x9E3779B97F4A7C15ULL) >> 51) & (TALLY_BUCKETS - 1);
}

struct target {
	char name[300];
	uint64_t conns, up, down;
};

struct tally {
	int bc;   /* the destroy broadcast (-1: not subscribed) */
	pthread_mutex_t mu;
	struct rec *rec; /* open connections, n of TALLY_MAX slots */
	size_t n;
	int32_t head[TALLY_BUCKETS]; /* each bucket's first slot, or -1 */
	int32_t free; /* the free slots' list */
	struct target *tg;
	size_t ntg;
	uint64_t uncounted;
};

int tally_new(struct tally **out, cordon_error *err)
{
	struct tally *t = calloc(1, sizeof(*t));
	if (!t)
		return cordon_oom(err);
	t->rec = calloc(TALLY_MAX, sizeof(*t->rec));
	t->tg = calloc(TALLY_TARGETS, sizeof(*t->tg));
	if (!t->rec || !t->tg) {
		free(t->rec);
		free(t->tg);
		free(t);
		return cordon_oom(err);
	}
	for (size_t i = 0; i < TALLY_BUCKETS; i++)
		t->head[i] = -1;
	for (int32_t i = 0; i < TALLY_MAX; i++)
		t->rec[i].next = i + 1 < TALLY_MAX ? i + 1 : -1;
	t->free = 0;
	pthread_mutex_init(&t->mu, NULL);
	t->bc = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	int g4 = SKNLGRP_INET_TCP_DESTROY, g6 = SKNLGRP_INET6_TCP_DESTROY, big = 4 << 20;
	if (t->bc >= 0) {
		if (setsockopt(t->bc, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) < 0)
			setsockopt(t->bc, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
		/* Bound (a port id of its own): the broadcast skips port id 0. */
		struct sockaddr_nl a = {.nl_family = AF_NETLINK};
		if (bind(t->bc, (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    setsockopt(t->bc, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g4, sizeof(g4)) < 0 ||
		    setsockopt(t->bc, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g6, sizeof(g6)) < 0) {
			close(t->bc);
			t->bc = -1; /* the end's lookups only */
		}
	}
	*out = t;
	return 0;
}

int tally_fd(const struct tally *t)
{
	return t ? t->bc : -1;
}

static size_t target_of(struct tally *t, const char *name, uint16_t port)
{
	char n[300];
	host_port(n, sizeof(n), name, port);
	for (size_t i = 0; i < t->ntg; i++)
		if (strcmp(t->tg[i].name, n) == 0)
			return i;
	if (t->ntg == TALLY_TARGETS)
		return SIZE_MAX;
	memcpy(t->tg[t->ntg].name, n, sizeof(n));
	return t->ntg++;
}

static void addr_of(const struct sockaddr_storage *ss, uint8_t a[16], uint16_t *port)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)ss;
		memcpy(a, &s->sin_addr, 4);
		*port = s->sin_port;
	} else {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)ss;
		memcpy(a, &s->sin6_addr, 16);
		*port = s->sin6_port;
	}
}

void tally_add(struct tally *t, int sock, const struct sockaddr *peer, const char *name, uint16_t port)
{
	if (!t)
		return;
	struct rec r = {0};
	struct sockaddr_storage me = {0}, to = {0};
	socklen_t ml = sizeof(me), cl = sizeof(r.cookie);
	bool ok = getsockopt(sock, SOL_SOCKET, SO_COOKIE, &r.cookie, &cl) == 0 &&
		  getsockname(sock, (struct sockaddr *)&me, &ml) == 0 && (me.ss_family == AF_INET || me.ss_family == AF_INET6) &&
		  peer->sa_family == me.ss_family;
	if (ok) {
		memcpy(&to, peer, me.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
		addr_of(&me, r.src, &r.sport);
		addr_of(&to, r.dst, &r.dport);
		r.family = me.ss_family;
	}
	pthread_mutex_lock(&t->mu);
	size_t g = target_of(t, name, port);
	if (g != SIZE_MAX)
		t->tg[g].conns++;
	if (!ok || g == SIZE_MAX || t->free < 0) {
		t->uncounted++;
	} else {
		int32_t i = t->free;
		t->free = t->rec[i].next;
		size_t b = bucket_of(r.cookie);
		r.target = (uint16_t)g;
		r.used = true;
		r.next = t->head[b];
		t->rec[i] = r;
		t->head[b] = i;
		t->n++;
	}
	pthread_mutex_unlock(&t->mu);
}

/* One sock_diag message (a destroyed socket, or a lookup's answer): if it
 * is one of ours, its counts go to its endpoint and it leaves the table.
 * Called under the lock. */
static void counted(struct tally *t, const struct nlmsghdr *h)
{
	if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
		return;
	const struct inet_diag_msg *m = NLMSG_DATA(h);
	uint64_t cookie = (uint64_t)m->id.idiag_cookie[0] | (uint64_t)m->id.idiag_cookie[1] << 32;
	size_t b = bucket_of(cookie);
	int32_t i = t->head[b], *link = &t->head[b];
	while (i >= 0 && t->rec[i].cookie != cookie) {
		link = &t->rec[i].next;
		i = t->rec[i].next;
	}
	if (i < 0)
		return;
	struct tcp_info ti;
	memset(&ti, 0, sizeof(ti));
	bool info = false;
	size_t left = h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
	for (const struct rtattr *a = (const void *)((const char *)m + NLMSG_ALIGN(sizeof(*m))); RTA_OK(a, left);
	     a = RTA_NEXT(a, left)) {
		size_t l = RTA_PAYLOAD(a);
		if (a->rta_type == INET_DIAG_INFO && l >= offsetof(struct tcp_info, tcpi_bytes_retrans) + 8) {
			memcpy(&ti, RTA_DATA(a), l < sizeof(ti) ? l : sizeof(ti));
			info = true;
		}
	}
	struct target *g = &t->tg[t->rec[i].target];
	if (info) {
		/* The data sent (no retransmission, no FIN) and received, as
		 * the proxy counts what it relays. The kernel's received count
		 * is its sequence's: the peer's FIN is one more. A socket looked
		 * up says whether it came by its state (not by RCV_SHUTDOWN, which
		 * the run's own close sets too: outside review, attack9); a freed
		 * one (CLOSE) had it if its own FIN was acknowledged, an orderly
		 * close (acked: its SYN, the data, its FIN; a reset after that is
		 * the one byte off). */
		uint64_t up = ti.tcpi_bytes_sent - ti.tcpi_bytes_retrans;
		bool fin;
		switch (m->idiag_state) {
		case ST_CLOSE_WAIT:
		case ST_LAST_ACK:
		case ST_CLOSING:
		case ST_TIME_WAIT:
			fin = true;
			break;
		case ST_CLOSE:
			fin = ti.tcpi_bytes_acked >= up + 2;
			break;
		default: /* established, or its own FIN sent: the peer's not come */
			fin = false;
		}
		g->up += up;
		g->down += ti.tcpi_bytes_received - (fin && ti.tcpi_bytes_received ? 1 : 0);
	} else {
		t->uncounted++;
	}
	*link = t->rec[i].next;
	t->rec[i].used = false;
	t->rec[i].next = t->free;
	t->free = i;
	t->n--;
}

/* Each sock_diag message of m (n bytes) counted. */
static void count_all(struct tally *t, const char *m, size_t n)
{
	pthread_mutex_lock(&t->mu);
	for (const struct nlmsghdr *h = (const void *)m; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n))
		counted(t, h);
	pthread_mutex_unlock(&t->mu);
}

/* Read what is queued on fd (nonblocking), at most max reads: each
 * message counted. The connector's wake-up reads a few (its epoll is
 * level-triggered: the rest comes back), so that a host that frees
 * sockets without end never holds its other work. */
static void read_all(struct tally *t, int fd, int max)
{
	/* On the caller's stack (the connector's has 256 KiB), not in static
	 * thread-local storage: every thread's is zeroed when it starts, and
	 * 32 KiB there was eight pages to fault in for each of a run's threads,
	 * most of which never read here (issue 34). */
	char mbuf[32768] __attribute__((aligned(8)));
	for (int k = 0; k < max; k++) {
		ssize_t r = recv(fd, mbuf, sizeof(mbuf), MSG_DONTWAIT);
		if (r < 0 && errno == ENOBUFS)
			continue; /* some were lost: those are left to the end */
		if (r <= 0)
			return;
		count_all(t, mbuf, (size_t)r);
	}
}

void tally_drain(struct tally *t)
{
	if (t && t->bc >= 0)
		read_all(t, t->bc, 16);
}

/* Look record r up by its addresses and cookie: its counts if it is still
 * there (counted), else nothing (gone: the broadcast says so, or said). */
static void lookup(struct tally *t, int fd, struct rec r)
{
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 q;
	} req;
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.q.sdiag_family = (uint8_t)r.family;
	req.q.sdiag_protocol = IPPROTO_TCP;
	req.q.idiag_ext = 1u << (INET_DIAG_INFO - 1);
	req.q.idiag_states = ~0u;
	req.q.id.idiag_sport = r.sport;
	req.q.id.idiag_dport = r.dport;
	memcpy(req.q.id.idiag_src, r.src, 16);
	memcpy(req.q.id.idiag_dst, r.dst, 16);
	req.q.id.idiag_cookie[0] = (uint32_t)r.cookie;
	req.q.id.idiag_cookie[1] = (uint32_t)(r.cookie >> 32);
	if (send(fd, &req, sizeof(req), 0) != (ssize_t)sizeof(req))
		return;
	char mbuf[4096] __attribute__((aligned(8)));
	/* The kernel answers within the send: never waited for. */
	ssize_t n = recv(fd, mbuf, sizeof(mbuf), MSG_DONTWAIT);
	if (n > 0)
		count_all(t, mbuf, (size_t)n);
}


void tally_finish(struct tally *t, struct run_report *rep)
{
	if (!t)
		return;
	/* What is queued (at most 256 reads of 32 KiB), then the ones still
	 * open (a peer that has not closed its side), each by its own lookup
	 * (a copy: counted() takes each out of the table). */
	if (t->bc >= 0)
		read_all(t, t->bc, 256);
	_cleanup_close_ int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	pthread_mutex_lock(&t->mu);
	size_t n = 0;
	struct rec *copy = t->n ? malloc(t->n * sizeof(*copy)) : NULL;
	for (size_t i = 0; copy && i < TALLY_MAX && n < t->n; i++)
		if (t->rec[i].used)
			copy[n++] = t->rec[i];
	pthread_mutex_unlock(&t->mu);
	for (size_t i = 0; fd >= 0 && copy && i < n; i++)
		lookup(t, fd, copy[i]);
	free(copy);
	/* Gone between the drain and its lookup: the broadcast is sent from a
	 * work queue, a moment after the socket is freed. */
	for (int k = 0; k < 20 && t->bc >= 0; k++) {
		pthread_mutex_lock(&t->mu);
		bool left = t->n > 0;
		pthread_mutex_unlock(&t->mu);
		if (!left)
			break;
		struct pollfd p = {t->bc, POLLIN, 0};
		if (poll(&p, 1, 10) == 1)
			read_all(t, t->bc, 64);
	}
	pthread_mutex_lock(&t->mu);
	t->uncounted += t->n;
	t->n = 0;
	for (size_t i = 0; i < t->ntg; i++) {
		size_t k = report_net_endpoint(rep, t->tg[i].name);
		if (k == SIZE_MAX)
			break;
		struct net_endpoint *e = &rep->net.ep[k];
		e->conns += t->tg[i].conns;
		e->up += t->tg[i].up;
		e->down += t->tg[i].down;
		rep->net.conns += t->tg[i].conns;
		rep->net.up += t->tg[i].up;
		rep->net.down += t->tg[i].down;
	}
	t->ntg = 0;
	rep->net.transparent.uncounted += t->uncounted;
	t->uncounted = 0;
	pthread_mutex_unlock(&t->mu);
}

void tally_free(struct tally *t)
{
	if (!t)
		return;
	if (t->bc >= 0)
		close(t->bc);
	pthread_mutex_destroy(&t->mu);
	free(t->rec);
	free(t->tg);
	free(t);
}
