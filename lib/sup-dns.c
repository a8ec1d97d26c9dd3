/* The run's own resolver: sup-dns.h. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "sup-dns.h"
#include "dns.h"
#include "error.h"
#include "pxrule.h"

struct tcp_conn {
	int fd;               /* -1: free */
	uint64_t seq;         /* accept order: the oldest goes first */
	size_t have;
	uint8_t buf[2 + DNS_MSG_MAX];
};

struct dnsd {
	int epfd, udp, tcp;
	strv allow;
	struct run_report *rep;
	char *names[DNSD_MAX_NAMES]; /* index i: synthetic address i */
	size_t nnames;
	struct tcp_conn conn[DNSD_MAX_TCP];
	uint64_t seq;
};

static const uint8_t v4_base[4] = {198, 18, 0, 0};
static const uint8_t v6_base[16] = {0xfd, 0x63, 0x6f, 0x72, 0x64, 0x6e}; /* fd63:6f72:646e::/48 */

void dnsd_synth_v4(size_t i, uint8_t out[4])
{
	uint32_t v = (uint32_t)i + 1; /* never .0 */
	memcpy(out, v4_base, 4);
	out[1] = (uint8_t)(out[1] + (v >> 16 & 1));
	out[2] = (uint8_t)(v >> 8);
	out[3] = (uint8_t)v;
}

void dnsd_synth_v6(size_t i, uint8_t out[16])
{
	uint32_t v = (uint32_t)i + 1;
	memcpy(out, v6_base, 16);
	out[12] = (uint8_t)(v >> 24);
	out[13] = (uint8_t)(v >> 16);
	out[14] = (uint8_t)(v >> 8);
	out[15] = (uint8_t)v;
}

bool dnsd_declared(const strv *allow, const char *name)
{
	if (!name[0])
		return false;
	for (size_t i = 0; i < allow->n; i++) {
		const char *colon = strrchr(allow->v[i], ':');
		if (!colon)
			continue;
		/* any port of the rule's: its own, or one for "host:*" */
		long port = colon[1] == '*' ? 1 : strtol(colon + 1, NULL, 10);
		if (port >= 1 && port <= 65535 && proxy_rule_matches(allow->v[i], name, (uint16_t)port, NULL))
			return true;
	}
	return false;
}

const char *dnsd_name_of(const struct dnsd *d, const struct sockaddr *sa, socklen_t len)
{
	uint32_t v = 0;
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const uint8_t *a = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
		if (a[0] != v4_base[0] || (a[1] & 0xfe) != v4_base[1])
			return NULL;
		v = (uint32_t)(a[1] & 1) << 16 | (uint32_t)a[2] << 8 | a[3];
	} else if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const uint8_t *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		if (memcmp(a, v6_base, 12) != 0)
			return NULL;
		v = (uint32_t)a[12] << 24 | (uint32_t)a[13] << 16 | (uint32_t)a[14] << 8 | a[15];
	} else {
		return NULL;
	}
	return v >= 1 && v <= __atomic_load_n(&d->nnames, __ATOMIC_ACQUIRE) ? d->names[v - 1] : NULL;
}

/* The table index of a declared name, added if new; -1 when full. */
static long name_index(struct dnsd *d, const char *name)
{
	for (size_t i = 0; i < d->nnames; i++)
		if (strcmp(d->names[i], name) == 0)
			return (long)i;
	if (d->nnames >= DNSD_MAX_NAMES || !(d->names[d->nnames] = strdup(name)))
		return -1;
	/* published after the name: the observer thread reads it (sup-connect.c) */
	__atomic_store_n(&d->nnames, d->nnames + 1, __ATOMIC_RELEASE);
	d->rep->net.dns.names = d->nnames;
	return (long)d->nnames - 1;
}

/* The answer to one message (len bytes of q): its length in out, or -1 to
 * send nothing. */
static int answer(struct dnsd *d, const uint8_t *msg, size_t len, uint8_t *out, size_t outsz)
{
	struct dns_query q;
	int rc = dns_parse_query(msg, len, &q);
	if (rc < 0)
		return -1;
	d->rep->net.dns.queries++;
	if (rc > 0) {
		d->rep->net.dns.refused++;
		return dns_build_answer(&q, rc, NULL, 0, 0, out, outsz);
	}
	if (q.odd || !dnsd_declared(&d->allow, q.name)) {
		/* Nothing outside is asked: refused at once, and on record. */
		char target[DNS_NAME_MAX + 8];
		snprintf(target, sizeof(target), "dns %s", q.name[0] ? q.name : ".");
		report_add_denial(d->rep, "network", target);
		d->rep->net.dns.refused++;
		return dns_build_answer(&q, DNS_NXDOMAIN, NULL, 0, 0, out, outsz);
	}
	if (q.qtype != DNS_T_A && q.qtype != DNS_T_AAAA) {
		d->rep->net.dns.answered++; /* the name is there, with no record of that type */
		return dns_build_answer(&q, DNS_NOERROR, NULL, 0, 0, out, outsz);
	}
	long i = name_index(d, q.name);
	if (i < 0) {
		d->rep->net.dns.over_limit++;
		return dns_build_answer(&q, DNS_SERVFAIL, NULL, 0, 0, out, outsz);
	}
	uint8_t a[16];
	if (q.qtype == DNS_T_A)
		dnsd_synth_v4((size_t)i, a);
	else
		dnsd_synth_v6((size_t)i, a);
	d->rep->net.dns.answered++;
	return dns_build_answer(&q, DNS_NOERROR, a, q.qtype == DNS_T_A ? 4 : 16, DNSD_TTL, out, outsz);
}

static void on_udp(struct dnsd *d)
{
	/* A bounded number a wake-up; the rest wait for the next round
	 * (level-triggered), so a flood cannot starve the loop. */
	for (int k = 0; k < DNSD_UDP_BURST; k++) {
		uint8_t in[DNS_MSG_MAX + 1], out[DNS_MSG_MAX];
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(d->udp, in, sizeof(in), MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&from, &fl);
		if (n < 0)
			return;
		/* longer than DNS_MSG_MAX: FORMERR (dns_parse_query sees the length) */
		int m = answer(d, in, (size_t)n > sizeof(in) ? sizeof(in) : (size_t)n, out, sizeof(out));
		if (m > 0)
			sendto(d->udp, out, (size_t)m, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&from, fl);
	}
}

static void tcp_close(struct dnsd *d, size_t i)
{
	if (d->conn[i].fd < 0)
		return;
	close(d->conn[i].fd); /* leaves the epoll set with it */
	d->conn[i].fd = -1;
	d->conn[i].have = 0;
}

static void on_accept(struct dnsd *d)
{
	for (int k = 0; k < DNSD_MAX_TCP; k++) {
		int fd = accept4(d->tcp, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		/* A free slot, else the oldest connection's: a slow client holds
		 * its slot only until DNSD_MAX_TCP newer ones came. */
		size_t slot = 0;
		for (size_t i = 0; i < DNSD_MAX_TCP; i++) {
			if (d->conn[i].fd < 0) {
				slot = i;
				break;
			}
			if (d->conn[i].seq < d->conn[slot].seq)
				slot = i;
		}
		tcp_close(d, slot);
		struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u64 = DNSD_TAG | 2 | (uint64_t)slot << 8};
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			continue;
		}
		d->conn[slot] = (struct tcp_conn){.fd = fd, .seq = ++d->seq};
	}
}

/* Messages on a TCP connection, each after its 2-byte length (RFC 7766);
 * answers are written whole or the connection ends (a client that does not
 * read its answers gets no more). */
static void on_tcp(struct dnsd *d, size_t i)
{
	struct tcp_conn *c = &d->conn[i];
	for (;;) {
		ssize_t n = read(c->fd, c->buf + c->have, sizeof(c->buf) - c->have);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			tcp_close(d, i);
			return;
		}
		if (n < 0)
			return;
		c->have += (size_t)n;
		while (c->have >= 2) {
			size_t len = (size_t)c->buf[0] << 8 | c->buf[1];
			if (len < 12 || len > DNS_MSG_MAX) {
				tcp_close(d, i);
				return;
			}
			if (c->have < 2 + len)
				break;
			uint8_t out[2 + DNS_MSG_MAX];
			int m = answer(d, c->buf + 2, len, out + 2, sizeof(out) - 2);
			if (m > 0) {
				out[0] = (uint8_t)(m >> 8);
				out[1] = (uint8_t)m;
				if (send(c->fd, out, (size_t)m + 2, MSG_DONTWAIT | MSG_NOSIGNAL) != m + 2) {
					tcp_close(d, i);
					return;
				}
			}
			memmove(c->buf, c->buf + 2 + len, c->have - 2 - len);
			c->have -= 2 + len;
		}
	}
}

void dnsd_event(struct dnsd *d, uint64_t data, uint32_t events)
{
	int kind = (int)(data & 0xff);
	size_t slot = (size_t)((data & ~DNSD_TAG) >> 8);
	if (kind == 0)
		on_udp(d);
	else if (kind == 1)
		on_accept(d);
	else if (kind == 2 && slot < DNSD_MAX_TCP && d->conn[slot].fd >= 0)
		on_tcp(d, slot);
}

int dnsd_new(struct dnsd **out, const strv *allow, struct run_report *rep, int epfd, cordon_error *err)
{
	struct dnsd *d = calloc(1, sizeof(*d));
	if (!d)
		return cordon_oom(err);
	d->epfd = epfd;
	d->udp = d->tcp = -1;
	d->rep = rep;
	for (size_t i = 0; i < DNSD_MAX_TCP; i++)
		d->conn[i].fd = -1;
	for (size_t i = 0; i < allow->n; i++)
		if (strv_push(&d->allow, allow->v[i]) < 0) {
			dnsd_free(d);
			return cordon_oom(err);
		}
	rep->net.dns.enabled = true;
	rep->net.dns.names_max = DNSD_MAX_NAMES;
	*out = d;
	return 0;
}

int dnsd_take(struct dnsd *d, int fd, bool tcp, cordon_error *err)
{
	int *slot = tcp ? &d->tcp : &d->udp;
	if (*slot >= 0) {
		close(fd);
		return cordon_err(err, EEXIST, "the run's resolver: a second %s socket", tcp ? "TCP" : "UDP");
	}
	*slot = fd;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = DNSD_TAG | (tcp ? 1 : 0)};
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return cordon_err_errno(err, "the run's resolver: watch its %s socket", tcp ? "TCP" : "UDP");
	return 0;
}

void dnsd_free(struct dnsd *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < DNSD_MAX_TCP; i++)
		tcp_close(d, i);
	if (d->udp >= 0)
		close(d->udp);
	if (d->tcp >= 0)
		close(d->tcp);
	for (size_t i = 0; i < d->nnames; i++)
		free(d->names[i]);
	strv_free(&d->allow);
	free(d);
}
