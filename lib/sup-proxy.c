/* The egress proxy (proxy.h) in the supervisor's loop: accepting, a request
 * read and decided against the rules (pxparse.c, pxrule.c), the name
 * resolved and the address checked (pxaddr.c), the upstream connected, then
 * spliced through pipes or read (pxio.c, pxtls-conn.c); the tick, the events,
 * the proxy made and freed. Connections and budgets: pxconn.[ch]. */
#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <openssl/ssl.h>
#include "sup-proxy.h"
#include "clock.h"
#include "cleanup.h"
#include "error.h"
#include "proxy.h"
#include "pxaddr.h"
#include "pxhttp.h"
#include "pxio.h"
#include "pxtls-conn.h"
#include "sup-handoff.h"
#include "tls.h"
#include "pxconn.h"

/* One eventfd for the whole process, never closed: a lookup's notification
 * may run after the proxy that started it is gone, and must not write into
 * an fd number that has been reused since. */
static int dns_efd = -1;
static pthread_once_t dns_once = PTHREAD_ONCE_INIT;

static void dns_efd_open(void)
{
	dns_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

static void dns_notify(union sigval v)
{
	uint64_t one = 1;
	if (write(v.sival_int, &one, sizeof(one)) < 0) { /* the counter is full: a wake-up is due anyway */ }
}

static void start_connect(struct proxy *px, size_t slot, const struct sockaddr *sa, socklen_t len);
static void connected(struct proxy *px, size_t slot);

static void resolved(struct proxy *px, size_t slot)
{
	struct conn *c = px->c[slot];
	int e = gai_error(&c->gai);
	if (e == EAI_INPROGRESS)
		return;
	if (e != 0 || !c->gai.ar_result) {
		px_refuse(px, slot, "cordon: the name does not resolve", 4 /* host unreachable */, 502);
		return;
	}
	/* The first address that may be used; the connection goes to exactly it. */
	for (struct addrinfo *ai = c->gai.ar_result; ai; ai = ai->ai_next) {
		if (!proxy_addr_forbidden(ai->ai_addr)) {
			start_connect(px, slot, ai->ai_addr, ai->ai_addrlen);
			return;
		}
	}
	px_deny(px, slot, "it resolves to a loopback, link-local or private address, which a name may not lead to");
}

static void decided(struct proxy *px, size_t slot)
{
	struct conn *c = px->c[slot];
	host_port(c->target, sizeof(c->target), c->host, c->port);
	bool allowed = false, lit = false;
	for (size_t i = 0; i < px->allow.n && !allowed; i++)
		allowed = proxy_rule_matches(px->allow.v[i], c->host, c->port, &lit);
	c->literal = lit;
	if (!allowed) {
		px_deny(px, slot, "not a declared endpoint");
		return;
	}
	/* Plain HTTP is read request by request (rules, the request log); a
	 * CONNECT to a host that only method/path rules admit, or that a
	 * secret goes to, is opened (TLS ends here); any other tunnel to such a
	 * host would pass unread: refused. */
	bool scoped = pxhttp_scoped(px->rules, c->host, c->port), secret_host = false;
	for (size_t i = 0; i < px->tls.nsec && !secret_host; i++)
		secret_host = pxhttp_secret_scoped(&px->tls.sec[i], c->host, c->port);
	/* A transparent connection: TLS if its first byte begins a handshake
	 * (sniffed, not read), else plain HTTP in origin form. */
	bool plain = c->proto == PROTO_TRANSPARENT && !c->sniff_tls;
	c->tls = (c->proto == PROTO_CONNECT || (c->proto == PROTO_TRANSPARENT && c->sniff_tls)) && px->up_ctx &&
		 (scoped || secret_host);
	if (c->proto != PROTO_FORWARD && !plain && scoped && !c->tls) {
		px_deny(px, slot, "only method/path rules admit this host, and a tunnel's requests cannot be read");
		return;
	}
	if (c->proto == PROTO_TRANSPARENT && !plain && !c->tls) {
		/* TLS to a host a secret goes to, with no CA to open it: its
		 * requests could not be read (the proxy's CONNECT would pass
		 * unread; here nothing else admits it). */
		px_deny(px, slot, "a secret is injected to this host, and its TLS cannot be opened here");
		return;
	}
	if (c->tls && c->to_up.len) {
		/* The client's TLS must begin after the answer (it is read by a
		 * TLS endpoint of ours, not relayed). */
		px_deny_malformed(px, slot, "cordon: send the TLS handshake after the CONNECT answer", 1, 400);
		return;
	}
	if (c->tls && px->mem + TLS_CONN_MEM > MEM_BUDGET) {
		px->rep->net.over_limit++;
		px_refuse(px, slot, "cordon: the proxy's memory budget is spent", 1, 503);
		return;
	}
	if (c->tls) {
		px->mem += TLS_CONN_MEM;
		c->tls_mem = true;
	}
	if (c->proto == PROTO_FORWARD || c->tls || plain) {
		c->http = malloc(sizeof(*c->http));
		if (!c->http) {
			px_refuse(px, slot, "cordon: out of memory", 1, 502);
			return;
		}
		pxhttp_init(c->http, px->rules, px->rep, c->host, c->port, c->target, c->proto == PROTO_FORWARD);
		c->http->plain = plain;
		c->http->tls = c->tls;
		c->http->sec = px->tls.sec;
		c->http->nsec = px->tls.nsec;
		c->http->echo = px->echo;
		c->http->mem = &px->mem; /* what its filter holds, in the budget */
		c->http->mem_max = MEM_BUDGET;
	}
	/* Literal addresses: no lookup. A literal that the rule names as such
	 * may be anything (127.0.0.1:8080 means the host's loopback). */
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	/* localhost, allowed by a localhost rule: the host's 127.0.0.1. */
	const char *h = c->literal && strcasecmp(c->host, "localhost") == 0 ? "127.0.0.1" : c->host;
	if (inet_pton(AF_INET, h, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(c->port);
	} else if (inet_pton(AF_INET6, h, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(c->port);
	}
	/* A pinned name (network.resolve, with transparent): the address the
	 * policy names for it, as the transparent path connects to. */
	socklen_t pl = 0;
	bool pin = !ss.ss_family && !c->literal && pxrule_pin(px->resolve, c->host, c->port, &ss, &pl);
	if (ss.ss_family) {
		if (!c->literal && !pin && proxy_addr_forbidden((struct sockaddr *)&ss)) {
			px_deny(px, slot, "a loopback, link-local or private address must be named literally by the rule");
			return;
		}
		start_connect(px, slot, (struct sockaddr *)&ss, ss.ss_family == AF_INET ? sizeof(*s4) : sizeof(*s6));
		return;
	}
	c->st = C_RESOLVING;
	c->hints.ai_socktype = SOCK_STREAM;
	c->hints.ai_family = AF_UNSPEC;
	c->gai.ar_name = c->host;
	c->gai.ar_service = NULL;
	c->gai.ar_request = &c->hints;
	/* Done lookups are told by a thread writing to an eventfd, never by a
	 * signal: one that arrives after the run (and cordon_run) is over would
	 * kill the process that called it. */
	c->sev.sigev_notify = SIGEV_THREAD;
	c->sev.sigev_notify_function = dns_notify;
	c->sev.sigev_value.sival_int = dns_efd;
	struct gaicb *list[] = {&c->gai};
	px_set_interest(px, slot, c->cfd, &c->c_ev, 0, 1);
	if (getaddrinfo_a(GAI_NOWAIT, list, 1, &c->sev) != 0)
		px_refuse(px, slot, "cordon: name resolution failed", 4, 502);
}

static void start_connect(struct proxy *px, size_t slot, const struct sockaddr *sa, socklen_t len)
{
	struct conn *c = px->c[slot];
	/* Only now is it a connection to a declared endpoint (a name refused
	 * after its lookup is a denial, not an endpoint). */
	c->ep = px_endpoint(px, c->target);
	px->rep->net.conns++;
	if (c->ep != SIZE_MAX)
		px->rep->net.ep[c->ep].conns++;
	struct sockaddr_storage ss;
	memcpy(&ss, sa, len);
	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = htons(c->port);
	else
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(c->port);
	c->ufd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->ufd < 0) {
		px_refuse(px, slot, "cordon: socket", 1, 502);
		return;
	}
	int one = 1, rb = UP_RCVBUF, sb = SOCK_BUF;
	setsockopt(c->ufd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* Before connect(): the window scale it announces fits the buffer. */
	setsockopt(c->ufd, SOL_SOCKET, SO_RCVBUF, &rb, sizeof(rb));
	setsockopt(c->ufd, SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb));
	int r = connect(c->ufd, (struct sockaddr *)&ss, len);
	if (r < 0 && errno != EINPROGRESS) {
		px_refuse(px, slot, "cordon: connection failed", errno == ECONNREFUSED ? 5 : 4, 502);
		return;
	}
	c->st = C_CONNECTING;
	/* A loopback handshake is often over by now: then no wake-up to wait for. */
	struct pollfd pf = {.fd = c->ufd, .events = POLLOUT};
	bool done = r == 0 || poll(&pf, 1, 0) == 1;
	struct epoll_event ev = {.events = done ? 0 : EPOLLOUT, .data.u64 = px_tag(slot, 2)};
	epoll_ctl(px->epfd, EPOLL_CTL_ADD, c->ufd, &ev);
	c->u_ev = ev.events;
	if (done) {
		connected(px, slot); /* sets both sockets' interest */
		return;
	}
	px_set_interest(px, slot, c->cfd, &c->c_ev, 0, 1);
}

static void on_request(struct proxy *px, size_t slot)
{
	struct conn *c = px->c[slot];
	ssize_t n = recv(c->cfd, c->hdr + c->hlen, HDR_MAX - c->hlen, MSG_DONTWAIT);
	if (n <= 0) {
		if (n < 0 && errno == EAGAIN)
			return;
		if (n == 0 && c->hlen) /* left half way through a request */
			px_deny_malformed(px, slot, "cordon: incomplete request", 1, 400);
		else
			px_conn_close(px, slot);
		return;
	}
	c->hlen += (size_t)n;
	struct proxy_request r;
	int st = proxy_parse_request(c->hdr, c->hlen, &r);
	c->proto = r.proto;
	if (r.proto == PROTO_SOCKS && r.greeting && !c->socks_stage) {
		px_say(c->cfd, "\x05\x00", 2); /* no authentication */
		c->socks_stage = 1;
	}
	switch (st) {
	case PR_MORE:
		buf_free(&r.upstream);
		return;
	case PR_OK:
		snprintf(c->host, sizeof(c->host), "%s", r.host);
		c->port = r.port;
		buf_free(&c->to_up);
		c->to_up = r.upstream;
		decided(px, slot);
		return;
	case PR_NOAUTH:
		buf_free(&r.upstream);
		px_say(c->cfd, "\x05\xff", 2);
		proxy_partial_target(px->rep->redact, c->hdr, c->hlen, c->target, sizeof(c->target));
		report_add_denial(px->rep, "network", c->target);
		px->rep->net.denied++;
		px_conn_close(px, slot);
		return;
	default:
		buf_free(&r.upstream);
		px_deny_malformed(px, slot, "cordon: this proxy takes CONNECT host:port, absolute http:// requests and SOCKS5 CONNECT",
			       st == PR_BADADDR ? 8 : st == PR_BADCMD ? 7 : 1, 400);
		return;
	}
}


static void on_relay(struct proxy *px, size_t slot);

static void connected(struct proxy *px, size_t slot)
{
	struct conn *c = px->c[slot];
	int err = 0;
	socklen_t l = sizeof(err);
	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &l) < 0 || err) {
		px_refuse(px, slot, "cordon: the endpoint refused or is unreachable", err == ECONNREFUSED ? 5 : 4, 502);
		return;
	}
	if (c->tls) {
		px_tls_start(px, slot);
		return;
	}
	if (c->http) {
		px_http_start(px, slot);
		return;
	}
	if (pipe2(c->cu, O_NONBLOCK | O_CLOEXEC) < 0 || pipe2(c->uc, O_NONBLOCK | O_CLOEXEC) < 0) {
		px_refuse(px, slot, "cordon: out of pipes", 1, 502);
		return;
	}
	int cap = fcntl(c->cu[1], F_GETPIPE_SZ), cap2 = fcntl(c->uc[1], F_GETPIPE_SZ);
	c->cu_cap = cap > 0 ? (size_t)cap : 65536;
	c->uc_cap = cap2 > 0 ? (size_t)cap2 : 65536;
	if (px->pipe_bytes + c->cu_cap + c->uc_cap > PIPE_BUDGET - PIPE_RESERVE) {
		/* Pipes that grew earlier took the budget: this connection's start
		 * at one page each, from the reserve (they grow once there is room
		 * again). */
		int a = fcntl(c->cu[1], F_SETPIPE_SZ, 4096), b = fcntl(c->uc[1], F_SETPIPE_SZ, 4096);
		if (a > 0)
			c->cu_cap = (size_t)a;
		if (b > 0)
			c->uc_cap = (size_t)b;
	}
	if (px->pipe_bytes + c->cu_cap + c->uc_cap > PIPE_BUDGET) {
		/* Not even that fits: the budget holds, the connection is refused. */
		c->cu_cap = c->uc_cap = 0;
		px->rep->net.over_limit++;
		px_refuse(px, slot, "cordon: the proxy's pipes are at their budget", 1, 503);
		return;
	}
	px->pipe_bytes += c->cu_cap + c->uc_cap;
	px->mem += c->cu_cap + c->uc_cap;
	px->mem -= CONN_BASE_MEM - CONN_SOCK_MEM; /* the pipes' reservation */
	c->sock_mem = CONN_SOCK_MEM;
	/* The client waits for this answer before it sends anything: first,
	 * and only once the relay is sure (a refusal above is its answer, not
	 * bytes in a tunnel it was told is open). */
	if (c->proto == PROTO_CONNECT)
		buf_printf(&c->to_down, "HTTP/1.1 200 Connection established\r\n\r\n");
	else if (c->proto == PROTO_SOCKS)
		buf_append(&c->to_down, "\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00", 10);
	if (c->to_down.len) {
		ssize_t n = send(c->cfd, c->to_down.p, c->to_down.len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0)
			c->down_off = (size_t)n; /* the rest, if any, goes before the relayed bytes */
	}
	c->st = C_RELAY;
	/* From here on both sockets are watched edge-triggered for both
	 * directions, registered once: the relay pumps until the kernel says
	 * EAGAIN, so no wake-up is lost and no epoll_ctl is needed per chunk. */
	px_set_interest(px, slot, c->cfd, &c->c_ev, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, 1);
	px_set_interest(px, slot, c->ufd, &c->u_ev, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, 2);
	/* Say so (and pass on what followed the request) now, not a wake-up later. */
	on_relay(px, slot);
}

/* One direction of a relay: a pending prefix, then the pipe between the two
 * sockets. `from` is drained into the pipe, the pipe into `to`. */
struct way {
	struct proxy *px;
	int from, pipe_w, pipe_r, to;
	size_t *len, *cap;
	buf *pend;
	size_t *off;
	bool *eof;
	uint64_t *count;
	bool count_pend; /* the prefix is the client's (request, early data), not ours */
};

/* A transfer that fills its pipe gets a bigger one, within the budget. */
static void grow_pipe(const struct way *w)
{
	size_t want = *w->cap * 4 > PIPE_MAX ? PIPE_MAX : *w->cap * 4;
	if (want <= *w->cap || w->px->pipe_bytes - *w->cap + want > PIPE_BUDGET - PIPE_RESERVE ||
	    w->px->mem - *w->cap + want > MEM_BUDGET)
		return;
	int got = fcntl(w->pipe_w, F_SETPIPE_SZ, (int)want);
	if (got <= 0) /* the pipe stays as it is (e.g. pipe-user-pages-soft) */
		return;
	w->px->pipe_bytes = w->px->pipe_bytes - *w->cap + (size_t)got;
	w->px->mem = w->px->mem - *w->cap + (size_t)got;
	*w->cap = (size_t)got;
}

/* Move what can move without blocking. Returns 1 if any byte moved, 0 if
 * not, -1 on a connection error. */
static int pump(const struct way *w)
{
	int moved = 0;
	/* Read first, so that what just arrived goes out in this same call. */
	if (!*w->eof && *w->len < *w->cap) {
		ssize_t n = splice(w->from, NULL, w->pipe_w, NULL, *w->cap - *w->len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n > 0) {
			*w->len += (size_t)n;
			moved = 1;
			if (*w->len >= *w->cap / 4 * 3)
				grow_pipe(w);
		} else if (n == 0) {
			*w->eof = true;
			moved = 1;
		} else if (errno != EAGAIN) {
			return -1;
		}
	}
	while (w->pend->len > *w->off) {
		ssize_t n = send(w->to, w->pend->p + *w->off, w->pend->len - *w->off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN ? moved : -1; /* the rest must go first */
		*w->off += (size_t)n;
		if (w->count_pend)
			*w->count += (uint64_t)n;
		moved = 1;
	}
	if (*w->len) {
		ssize_t n = splice(w->pipe_r, NULL, w->to, NULL, *w->len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n > 0) {
			*w->len -= (size_t)n;
			*w->count += (uint64_t)n;
			moved = 1;
		} else if (n < 0 && errno != EAGAIN) {
			return -1;
		}
	}
	return moved;
}

static void on_relay(struct proxy *px, size_t slot)
{
	struct conn *c = px->c[slot];
	if (c->http) {
		px_on_http(px, slot);
		return;
	}
	const struct way up = {px, c->cfd, c->cu[1], c->cu[0], c->ufd, &c->cu_len, &c->cu_cap, &c->to_up, &c->up_off,
			       &c->c_eof, &c->up, true};
	const struct way down = {px, c->ufd, c->uc[1], c->uc[0], c->cfd, &c->uc_len, &c->uc_cap, &c->to_down,
				 &c->down_off, &c->u_eof, &c->down, false};
	int rounds = 0, a, b;
	do {
		a = pump(&up);
		b = pump(&down);
		if (a < 0 || b < 0) {
			px_conn_close(px, slot);
			return;
		}
	} while ((a || b) && ++rounds < RELAY_ROUNDS);
	/* Half-close: pass an EOF on once everything before it is through. */
	if (c->c_eof && !c->cu_len && c->to_up.len == c->up_off && !c->u_shut) {
		shutdown(c->ufd, SHUT_WR);
		c->u_shut = true;
	}
	if (c->u_eof && !c->uc_len && c->to_down.len == c->down_off && !c->c_shut) {
		shutdown(c->cfd, SHUT_WR);
		c->c_shut = true;
	}
	if (c->u_shut && c->c_shut) {
		px_conn_close(px, slot);
		return;
	}
	if (rounds == RELAY_ROUNDS) {
		/* Still moving: yield to the other connections. Re-registering an
		 * edge-triggered socket queues a new event if it is ready. */
		struct epoll_event ev = {.events = c->c_ev, .data.u64 = px_tag(slot, 1)};
		epoll_ctl(px->epfd, EPOLL_CTL_MOD, c->cfd, &ev);
		ev = (struct epoll_event){.events = c->u_ev, .data.u64 = px_tag(slot, 2)};
		epoll_ctl(px->epfd, EPOLL_CTL_MOD, c->ufd, &ev);
	}
}

/* A connection accepted (fd): its slot, or SIZE_MAX (fd closed; over the
 * limit, told so where it speaks HTTP). */
static size_t new_conn(struct proxy *px, int fd, bool say)
{
	size_t slot = 0;
	while (slot < px->max_conns && px->c[slot])
		slot++;
	bool fits = slot < px->max_conns && px->mem + CONN_BASE_MEM <= MEM_BUDGET;
	struct conn *c = fits ? calloc(1, sizeof(*c)) : NULL;
	if (!c) {
		/* Bounded: over the limit, the client is told and let go. */
		px->rep->net.over_limit++;
		if (say)
			px_say(fd, "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n", 55);
		close(fd);
		return SIZE_MAX;
	}
	c->cfd = fd;
	c->ufd = c->cu[0] = c->cu[1] = c->uc[0] = c->uc[1] = -1;
	c->ep = SIZE_MAX;
	c->t_accept = mono_ns();
	/* Reserved now (SO_RCVBUF/SO_SNDBUF come from the listening
	 * socket); the pipes' share turns into their real size once made. */
	c->sock_mem = CONN_BASE_MEM;
	px->mem += c->sock_mem;
	px->c[slot] = c;
	px->nlive++;
	/* TCP_NODELAY comes from the listening socket (proxy_listen). */
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = px_tag(slot, 1)};
	epoll_ctl(px->epfd, EPOLL_CTL_ADD, fd, &ev);
	c->c_ev = EPOLLIN;
	px_tick_arm(px, true);
	return slot;
}

/* A transparent connection's first byte: a TLS handshake record or not.
 * Peeked: what it is stays for the reader. */
static void on_sniff(struct proxy *px, size_t slot)
{
	struct conn *c = px->c[slot];
	unsigned char b;
	ssize_t n = recv(c->cfd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		px_conn_close(px, slot);
		return;
	}
	c->sniff_tls = b == 0x16;
	decided(px, slot);
}

/* Transparent connections for ports whose requests are read: each for the
 * name:port announced for its source port (name "": the proxy's own, a
 * degraded boundary's connect to it); any other closed at once. */
static void on_handoff(struct proxy *px)
{
	for (;;) {
		struct sockaddr_storage ss = {0};
		socklen_t l = sizeof(ss);
		int fd = accept4(handoff_fd(px->handoff), (struct sockaddr *)&ss, &l, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return; /* out of fds: the announcement expires; the run's connection sees its end */
		char name[256];
		uint16_t port = 0, src = 0;
		if (ss.ss_family == AF_INET && ((struct sockaddr_in *)&ss)->sin_addr.s_addr == htonl(INADDR_LOOPBACK))
			src = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		if (!handoff_claim(px->handoff, src, name, sizeof(name), &port)) {
			close(fd);
			continue;
		}
		/* The buffers an accepted socket has from the listening one
		 * (proxy_listen): fixed, as CONN_SOCK_MEM counts them. Not the
		 * hand-off listener's (the kernel's, autotuned: megabytes of
		 * send buffer towards a run that reads nothing). */
		int one = 1, sb = SOCK_BUF;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sb, sizeof(sb));
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb));
		if (!name[0]) {
			/* The degraded boundary's: a connection to the proxy
			 * itself (sup-degrade-net.c), read as an accepted one. */
			size_t slot = new_conn(px, fd, true);
			if (slot != SIZE_MAX)
				on_request(px, slot);
			continue;
		}
		size_t slot = new_conn(px, fd, false);
		if (slot == SIZE_MAX)
			continue;
		struct conn *c = px->c[slot];
		c->proto = PROTO_TRANSPARENT;
		snprintf(c->host, sizeof(c->host), "%s", name);
		c->port = port;
		host_port(c->target, sizeof(c->target), c->host, c->port);
		on_sniff(px, slot);
	}
}

int proxy_set_handoff(struct proxy *px, struct handoff *h, cordon_error *err)
{
	px->handoff = h;
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = px_tag(0, 5)};
	if (epoll_ctl(px->epfd, EPOLL_CTL_ADD, handoff_fd(h), &ev) < 0)
		return cordon_err_errno(err, "proxy: watch the transparent connections' listener");
	return 0;
}

static void on_accept(struct proxy *px)
{
	for (;;) {
		int fd = accept4(px->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				px_pause_accept(px); /* never spin on a socket that stays readable */
			return;
		}
		size_t slot = new_conn(px, fd, true);
		if (slot == SIZE_MAX)
			continue;
		/* The request is often there already: no wake-up to wait for. */
		on_request(px, slot);
	}
}

/* Once a second: requests that are not complete in time are refused. */
static void on_tick(struct proxy *px)
{
	uint64_t x;
	if (read(px->tfd, &x, sizeof(x)) < 0) { /* spurious */ }
	uint64_t now = mono_ns();
	size_t waiting = 0;
	for (size_t i = 0; i < px->max_conns; i++) {
		struct conn *c = px->c[i];
		if (c && c->st == C_REQUEST && c->proto == PROTO_TRANSPARENT && now - c->t_accept >= REQUEST_TIMEOUT_NS)
			px_deny(px, i, "nothing came in time (a port whose requests are read: the client speaks first)");
		else if (c && c->st == C_REQUEST && now - c->t_accept >= REQUEST_TIMEOUT_NS)
			px_deny_malformed(px, i, "cordon: the request was not complete in time", 1, 408);
		else if (c && c->st == C_HANDSHAKE && now - c->t_accept >= REQUEST_TIMEOUT_NS)
			px_conn_close(px, i); /* a TLS handshake that does not finish */
		else if (c && (c->st == C_REQUEST || c->st == C_HANDSHAKE))
			waiting++;
	}
	px_resume_accept(px);
	if (!waiting && !px->paused)
		px_tick_arm(px, false);
}

void proxy_event(struct proxy *px, uint64_t data, uint32_t events)
{
	int kind = (int)(data & 0xff);
	size_t slot = (size_t)((data & ~PROXY_TAG) >> 8);
	if (kind == 0) {
		on_accept(px);
		return;
	}
	if (kind == 3) {
		uint64_t x;
		if (read(dns_efd, &x, sizeof(x)) < 0) { /* another proxy's wake-up took it */ }
		proxy_dns_ready(px);
		return;
	}
	if (kind == 4) {
		on_tick(px);
		return;
	}
	if (kind == 5) {
		on_handoff(px);
		return;
	}
	if (slot >= PROXY_MAX_CONNS || !px->c[slot])
		return;
	struct conn *c = px->c[slot];
	/* The client's socket stays in the set with no interest while its
	 * upstream is looked up or connected, and a hang-up or an error is
	 * reported anyway, level-triggered: the client is gone, so is the
	 * connection (else every wait returns at once until the connect ends:
	 * outside review of cordon-oci, 2). */
	if (kind == 1 && (events & (EPOLLHUP | EPOLLERR)) && (c->st == C_RESOLVING || c->st == C_CONNECTING)) {
		px_conn_close(px, slot);
		return;
	}
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
		if (kind == 1)
			c->c_rd = true;
		else if (kind == 2)
			c->u_rd = true;
	}
	switch (c->st) {
	case C_REQUEST:
		if (kind == 1 && c->proto == PROTO_TRANSPARENT)
			on_sniff(px, slot);
		else if (kind == 1)
			on_request(px, slot);
		break;
	case C_CONNECTING:
		if (kind == 2)
			connected(px, slot);
		break;
	case C_HANDSHAKE:
		px_on_handshake(px, slot);
		break;
	case C_RELAY:
		if (events & EPOLLERR)
			px_conn_close(px, slot);
		else
			on_relay(px, slot);
		break;
	default:
		break;
	}
}

void proxy_dns_ready(struct proxy *px)
{
	for (size_t i = 0; i < px->max_conns; i++) {
		struct conn *c = px->c[i];
		if (!c || gai_error(&c->gai) == EAI_INPROGRESS)
			continue;
		if (c->st == C_RESOLVING)
			resolved(px, i);
		else if (c->st == C_DEAD)
			px_conn_close(px, i);
	}
}

void proxy_set_resolve(struct proxy *px, const strv *resolve)
{
	px->resolve = resolve;
}

int proxy_new(struct proxy **out, const strv *allow, const struct net_rules *rules, const struct proxy_tls *tls,
	      struct run_report *rep, int epfd, cordon_error *err)
{
	struct proxy *px = calloc(1, sizeof(*px));
	if (!px)
		return cordon_oom(err);
	px->epfd = epfd;
	px->lfd = px->tfd = -1;
	px->rep = rep;
	px->rules = rules;
	if (tls)
		px->tls = *tls;
	if (px->tls.ca && !(px->up_ctx = px->tls.ops->upstream_ctx(px->tls.upstream_ca, err))) {
		free(px);
		return cordon_err_wrap(err, "proxy");
	}
	/* What the upstreams say is filtered on every connection whose requests
	 * are read: a value echoed back (by a secret's host, or by another that
	 * got it from there) reaches the run as its placeholder. */
	if (px->tls.nsec) {
		if (!(px->echo = redactor_new())) {
			proxy_free(px);
			return cordon_oom(err);
		}
		redactor_literal(px->echo);
		for (size_t i = 0; i < px->tls.nsec; i++)
			if (redactor_add_secret(px->echo, px->tls.sec[i].placeholder, px->tls.sec[i].value, px->tls.sec[i].len,
						err) < 0) {
				proxy_free(px);
				return cordon_err_wrap(err, "proxy: response filter");
			}
		if (redactor_compile(px->echo, err) < 0) {
			proxy_free(px);
			return cordon_err_wrap(err, "proxy: response filter");
		}
	}
	/* As many connections as the supervisor's fds allow after its own. */
	struct rlimit rl;
	size_t fds = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (size_t)rl.rlim_cur : 1024;
	px->max_conns = fds > FD_RESERVE + FDS_PER_CONN ? (fds - FD_RESERVE) / FDS_PER_CONN : 1;
	if (px->max_conns > PROXY_MAX_CONNS)
		px->max_conns = PROXY_MAX_CONNS;
	rep->net.enabled = true;
	rep->net.max_conns = px->max_conns;
	for (size_t i = 0; i < allow->n; i++)
		if (strv_push(&px->allow, allow->v[i]) < 0) {
			proxy_free(px);
			return cordon_oom(err);
		}
	pthread_once(&dns_once, dns_efd_open);
	px->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = px_tag(0, 3)};
	if (dns_efd < 0 || px->tfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, dns_efd, &ev) < 0) {
		cordon_err_errno(err, "proxy: eventfd/timerfd");
		proxy_free(px);
		return -1;
	}
	ev.data.u64 = px_tag(0, 4);
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, px->tfd, &ev) < 0) {
		cordon_err_errno(err, "proxy: watch the timer");
		proxy_free(px);
		return -1;
	}
	*out = px;
	return 0;
}

int proxy_listen(struct proxy *px, int lfd, cordon_error *err)
{
	px->lfd = lfd;
	fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);
	/* Every protocol here starts with the client speaking: wake up once, when
	 * the request is there, not also for the handshake before it. */
	int secs = 5, one = 1, sb = SOCK_BUF;
	setsockopt(lfd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &secs, sizeof(secs));
	/* Accepted sockets inherit these: small relayed writes go out at once,
	 * and their buffers are fixed (they are in the budget). */
	setsockopt(lfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &sb, sizeof(sb));
	setsockopt(lfd, SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb));
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = px_tag(0, 0)};
	if (epoll_ctl(px->epfd, EPOLL_CTL_ADD, lfd, &ev) < 0)
		return cordon_err_errno(err, "proxy: watch the listening socket");
	return 0;
}

/* Connections whose lookup could be neither cancelled nor waited for: the
 * lookup still writes into them, so they are never freed (and stay
 * reachable from here). */
static struct conn *orphans[PROXY_MAX_CONNS];
static size_t norphans;

void proxy_free(struct proxy *px)
{
	if (!px)
		return;
	for (size_t i = 0; i < PROXY_MAX_CONNS; i++)
		px_conn_close(px, i);
	/* Lookups still running own their connection's memory: wait for them,
	 * all together, a little; then leave them be. */
	const struct gaicb *l[PROXY_MAX_CONNS];
	int n = 0;
	for (size_t i = 0; i < PROXY_MAX_CONNS; i++)
		if (px->c[i])
			l[n++] = &px->c[i]->gai;
	uint64_t end = mono_ns() + 1000000000ULL;
	while (n > 0) {
		int left = 0;
		for (int i = 0; i < n; i++)
			left += gai_error((struct gaicb *)l[i]) == EAI_INPROGRESS;
		uint64_t now = mono_ns();
		if (!left || now >= end)
			break;
		struct timespec ts = {0, (long)(end - now)};
		if (end - now >= 1000000000ULL)
			ts = (struct timespec){1, 0};
		gai_suspend(l, n, &ts);
	}
	for (size_t i = 0; i < PROXY_MAX_CONNS; i++) {
		px_conn_close(px, i);
		if (px->c[i]) { /* the lookup outlived the wait: never free under it */
			if (norphans < ARRAY_SIZE(orphans))
				orphans[norphans++] = px->c[i];
			px->c[i] = NULL;
		}
	}
	if (px->lfd >= 0)
		close(px->lfd);
	if (px->tfd >= 0)
		close(px->tfd); /* dns_efd stays open: see there */
	if (dns_efd >= 0)
		epoll_ctl(px->epfd, EPOLL_CTL_DEL, dns_efd, NULL);
	strv_free(&px->allow);
	if (px->up_ctx)
		px->tls.ops->ctx_free(px->up_ctx);
	redactor_free(px->echo);
	free(px);
}
