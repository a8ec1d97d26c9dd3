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
#include "cleanup.h"
#include "error.h"
#include "proxy.h"
#include "pxhttp.h"
#include "tls.h"

#define HDR_MAX PROXY_HDR_MAX
/* Pipes start at the kernel's default (64 KiB) and grow, four-fold at a
 * time up to PIPE_MAX, while a transfer keeps them full. Together they may
 * pin at most PIPE_BUDGET of kernel memory, whatever the run does with its
 * PROXY_MAX_CONNS connections: a run that opens many streams and reads none
 * cannot make the supervisor hold more than that. */
#define PIPE_MAX (1u << 20)
#define PIPE_BUDGET (64u << 20)
/* Every socket buffer of a relay is fixed as asked for (the kernel doubles
 * it and stops autotuning it): an upstream that sends while the run reads
 * nothing fills 2 x UP_RCVBUF of receive buffer, not the megabytes tcp_rmem
 * would allow. The upstream's receive buffer is the larger one: it is the
 * TCP window of downloads over real round trips (about 300 KiB of window:
 * some 6 MB/s at 50 ms). The client's side is the run's own loopback, and
 * uploads get SOCK_BUF. The sockets' buffers and the pipes together stay
 * within MEM_BUDGET per run: a connection that would not fit is refused
 * (503), a pipe that would not fit does not grow. */
#define UP_RCVBUF (256u << 10)
#define SOCK_BUF (64u << 10)
#define MEM_BUDGET (256u << 20)
/* What one relay's sockets take of it, as the kernel sizes them (twice what
 * was asked), and what it takes at least: that and its two pipes' start. */
#define CONN_SOCK_MEM (2u * (UP_RCVBUF + 3u * SOCK_BUF))
#define CONN_BASE_MEM (CONN_SOCK_MEM + 2u * 65536u)
/* fds the supervisor keeps for itself (outputs, report, cgroup files) out
 * of RLIMIT_NOFILE: the proxy takes at most FDS_PER_CONN per connection
 * from the rest. */
#define FD_RESERVE 256
#define FDS_PER_CONN 6
/* A request that is not complete after this long is refused and recorded. */
#define REQUEST_TIMEOUT_NS (10ULL * 1000000000ULL)
/* An opened TLS connection: two handshakes, each within REQUEST_TIMEOUT_NS
 * of the accept. Each leg's records go through a BIO pair, not the socket
 * (tls.h, tls_fill): two rings of TLS_RING, one each way. Those four rings and
 * what the two SSL objects hold (a record in and out each) count against
 * MEM_BUDGET as TLS_CONN_MEM. */
#define TLS_RING (64u << 10)
#define TLS_CONN_MEM (4u * TLS_RING + (96u << 10))

enum cstate { C_REQUEST, C_RESOLVING, C_CONNECTING, C_HANDSHAKE, C_RELAY, C_DEAD };

struct conn {
	int cfd, ufd;
	int cu[2], uc[2]; /* client->upstream and upstream->client pipes */
	size_t cu_len, uc_len, cu_cap, uc_cap; /* bytes in each pipe, and its size */
	enum cstate st;
	int proto;        /* PROTO_*, as the parser found it */
	int socks_stage;  /* 0: greeting, 1: request */
	char hdr[HDR_MAX];
	size_t hlen;
	char host[256];
	uint16_t port;
	char target[300];
	bool literal;     /* the matching rule names this address literally */
	buf to_up, to_down; /* bytes to send before the spliced stream */
	size_t up_off, down_off;
	bool c_eof, u_eof, u_shut, c_shut;
	uint64_t up, down;
	uint64_t t_accept; /* CLOCK_MONOTONIC ns */
	size_t sock_mem;   /* the socket buffers this relay may fill, in the budget */
	struct gaicb gai;
	struct addrinfo hints;
	struct sigevent sev;
	size_t ep; /* endpoint stats index */
	uint32_t c_ev, u_ev; /* registered interest */
	struct pxhttp *http; /* requests read (plain HTTP): no splice, see on_http */
	/* Opened TLS: the client's leg (our leaf) and the upstream's. */
	bool tls, c_hs, u_hs, u_bad, tls_mem;
	SSL *cssl, *ussl;
	BIO *cnet, *unet;    /* the network ends of their BIO pairs */
	bool c_rd, u_rd;     /* the socket may have bytes (an event since the last EAGAIN) */
	char u_why[160];     /* why the upstream's certificate was not accepted */
};

struct proxy {
	int epfd, lfd;
	strv allow;
	const struct net_rules *rules;
	struct run_report *rep;
	struct conn *c[PROXY_MAX_CONNS];
	size_t nlive, max_conns;
	size_t pipe_bytes; /* the size of all pipes, against PIPE_BUDGET */
	size_t mem;        /* pipes and socket buffers, against MEM_BUDGET */
	int tfd;           /* a 1 s tick: request timeouts, paused accept */
	bool paused;       /* out of fds: the listening socket is not watched */
	bool ticking;      /* the tick is armed (only while it has work) */
	struct proxy_tls tls;
	SSL_CTX *up_ctx;   /* upstream TLS, verified (only with tls.ca) */
	redactor *echo;    /* injected values (and their forms) -> placeholders */
};

/* ---- rules and addresses (pure) ---- */

static void strip_brackets(const char *in, char *out, size_t outsz)
{
	size_t n = strlen(in);
	if (n >= 2 && in[0] == '[' && in[n - 1] == ']')
		snprintf(out, outsz, "%.*s", (int)(n - 2), in + 1);
	else
		snprintf(out, outsz, "%s", in);
}

static bool is_ip_literal(const char *h)
{
	unsigned char b[16];
	return inet_pton(AF_INET, h, b) == 1 || inet_pton(AF_INET6, h, b) == 1;
}

bool proxy_rule_matches(const char *rule, const char *host, uint16_t port, bool *literal)
{
	const char *colon = strrchr(rule, ':');
	if (!colon)
		return false;
	const char *rport = colon + 1;
	if (strcmp(rport, "*") != 0) {
		char *end;
		long p = strtol(rport, &end, 10);
		if (*end || p != port)
			return false;
	}
	char raw[300], rhost[300], h[300];
	snprintf(raw, sizeof(raw), "%.*s", (int)(colon - rule), rule);
	strip_brackets(raw, rhost, sizeof(rhost));
	strip_brackets(host, h, sizeof(h));
	if (literal)
		*literal = false;
	/* The literal name localhost in a rule is the host's loopback, as
	 * 127.0.0.1 and [::1] are: it matches those and the name itself, and
	 * is never looked up (any other name leading to loopback stays refused). */
	if (strcasecmp(rhost, "localhost") == 0) {
		bool m = strcasecmp(h, "localhost") == 0 || strcmp(h, "127.0.0.1") == 0 || strcmp(h, "::1") == 0;
		if (literal)
			*literal = m;
		return m;
	}
	if (rhost[0] == '*' && rhost[1] == '.') {
		size_t sl = strlen(rhost + 1), hl = strlen(h);
		return hl > sl && strcasecmp(h + hl - sl, rhost + 1) == 0;
	}
	if (is_ip_literal(rhost) && is_ip_literal(h)) {
		unsigned char a[16] = {0}, b[16] = {0};
		int fa = strchr(rhost, ':') ? AF_INET6 : AF_INET, fb = strchr(h, ':') ? AF_INET6 : AF_INET;
		if (fa != fb || inet_pton(fa, rhost, a) != 1 || inet_pton(fb, h, b) != 1 || memcmp(a, b, 16) != 0)
			return false;
		if (literal)
			*literal = true;
		return true;
	}
	return strcasecmp(rhost, h) == 0;
}

/* 0/8 (this network), 10/8, 100.64/10 (CGNAT), 127/8, 169.254/16
 * (link-local, cloud metadata), 172.16/12, 192.0.0/24, 192.168/16, 198.18/15
 * (benchmarking), 224/4 (multicast), 240/4 (reserved, and 255.255.255.255). */
static bool v4_forbidden(uint32_t a)
{
	uint8_t o1 = (uint8_t)(a >> 24), o2 = (uint8_t)(a >> 16);
	return o1 == 0 || o1 == 10 || o1 == 127 || (o1 == 100 && (o2 & 0xc0) == 64) ||
	       (o1 == 169 && o2 == 254) || (o1 == 172 && (o2 & 0xf0) == 16) || (o1 == 192 && o2 == 168) ||
	       (o1 == 192 && o2 == 0 && (uint8_t)(a >> 8) == 0) || (o1 == 198 && (o2 & 0xfe) == 18) ||
	       o1 >= 224;
}

static bool v4_at(const uint8_t *b, int i0, int i1, int i2, int i3)
{
	return v4_forbidden((uint32_t)b[i0] << 24 | (uint32_t)b[i1] << 16 | (uint32_t)b[i2] << 8 | b[i3]);
}

/* IPv6: ::/96 (unspecified, loopback, IPv4-compatible) and ::ffff:0:0/96
 * (IPv4-mapped) carry a v4 address; so do NAT64 64:ff9b::/96 and the local
 * 64:ff9b:1::/48 (at any of the RFC 6052 positions a /48../96 prefix puts
 * it), and 6to4 2002::/16. Those are refused when the v4 address is.
 * fc00::/7 (ULA, where cloud metadata lives too), fe80::/10 (link-local),
 * fec0::/10 (site-local) and ff00::/8 (multicast) are refused outright. */
bool proxy_addr_forbidden(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return v4_forbidden(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	if (sa->sa_family != AF_INET6)
		return true;
	const uint8_t *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	static const uint8_t zero[12], mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff},
				       nat64[12] = {0, 0x64, 0xff, 0x9b}, nat64l[6] = {0, 0x64, 0xff, 0x9b, 0, 1};
	if (memcmp(b, zero, 12) == 0 || memcmp(b, mapped, 12) == 0 || memcmp(b, nat64, 12) == 0)
		return v4_at(b, 12, 13, 14, 15);
	if (memcmp(b, nat64l, 6) == 0) /* /96, and /48, /56, /64 (byte 8 is reserved): zeros there are padding */
		return v4_at(b, 12, 13, 14, 15) || (b[6] && v4_at(b, 6, 7, 9, 10)) || (b[7] && v4_at(b, 7, 9, 10, 11)) ||
		       (b[9] && v4_at(b, 9, 10, 11, 12));
	if (b[0] == 0x20 && b[1] == 0x02)
		return v4_at(b, 2, 3, 4, 5);
	return (b[0] == 0xfe && (b[1] & 0x80) == 0x80) /* fe80::/10 and fec0::/10 */ || (b[0] & 0xfe) == 0xfc ||
	       b[0] == 0xff;
}

/* ---- stats ---- */

static size_t endpoint(struct proxy *px, const char *target)
{
	struct run_report *r = px->rep;
	for (size_t i = 0; i < r->net.nep; i++)
		if (strcmp(r->net.ep[i].target, target) == 0)
			return i;
	struct net_endpoint *e = realloc(r->net.ep, (r->net.nep + 1) * sizeof(*e));
	if (!e)
		return SIZE_MAX;
	r->net.ep = e;
	memset(&e[r->net.nep], 0, sizeof(*e));
	snprintf(e[r->net.nep].target, sizeof(e[r->net.nep].target), "%s", target);
	return r->net.nep++;
}

/* ---- connections ---- */

static uint64_t tag(size_t slot, int kind)
{
	return PROXY_TAG | (uint64_t)slot << 8 | (uint64_t)kind;
}

static void set_interest(struct proxy *px, size_t slot, int fd, uint32_t *cur, uint32_t want, int kind)
{
	if (fd < 0 || *cur == want)
		return;
	struct epoll_event ev = {.events = want, .data.u64 = tag(slot, kind)};
	epoll_ctl(px->epfd, EPOLL_CTL_MOD, fd, &ev);
	*cur = want;
}

/* The 1 s tick runs only while a request is unfinished or accept is paused:
 * an idle proxy does not wake the supervisor. */
static void tick_arm(struct proxy *px, bool on)
{
	if (px->ticking == on || px->tfd < 0)
		return;
	struct itimerspec its = {.it_interval = {on, 0}, .it_value = {on, 0}};
	if (timerfd_settime(px->tfd, 0, &its, NULL) == 0)
		px->ticking = on;
}

/* Out of fds, the listening socket stays readable and accept keeps failing:
 * it is not watched until a connection closes or the next tick. */
static void pause_accept(struct proxy *px)
{
	struct epoll_event ev = {.events = 0, .data.u64 = tag(0, 0)};
	if (!px->paused && epoll_ctl(px->epfd, EPOLL_CTL_MOD, px->lfd, &ev) == 0)
		px->paused = true;
	tick_arm(px, true);
}

static void resume_accept(struct proxy *px)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(0, 0)};
	if (px->paused && epoll_ctl(px->epfd, EPOLL_CTL_MOD, px->lfd, &ev) == 0)
		px->paused = false;
}

static void conn_close(struct proxy *px, size_t slot)
{
	struct conn *c = px->c[slot];
	if (!c)
		return;
	/* A lookup that cannot be cancelled still writes into c->gai: the
	 * connection stays allocated (C_DEAD, fds closed) until it is done. */
	bool pending = c->st == C_RESOLVING && gai_cancel(&c->gai) == EAI_NOTCANCELED;
	if (c->st == C_DEAD)
		pending = gai_error(&c->gai) == EAI_INPROGRESS;
	if (c->gai.ar_result && !pending) {
		freeaddrinfo(c->gai.ar_result);
		c->gai.ar_result = NULL;
	}
	if (c->ep != SIZE_MAX && c->ep < px->rep->net.nep) {
		px->rep->net.ep[c->ep].up += c->up;
		px->rep->net.ep[c->ep].down += c->down;
	}
	px->pipe_bytes -= c->cu_cap + c->uc_cap;
	px->mem -= c->cu_cap + c->uc_cap + c->sock_mem;
	c->cu_cap = c->uc_cap = 0;
	c->sock_mem = 0;
	px->rep->net.up += c->up;
	px->rep->net.down += c->down;
	int *fds[] = {&c->cfd, &c->ufd, &c->cu[0], &c->cu[1], &c->uc[0], &c->uc[1]};
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]); /* closing removes it from epoll */
			*fds[i] = -1;
		}
	c->up = c->down = 0;
	const struct tls_ops *T = px->tls.ops;
	if (c->cssl)
		T->ssl_free(c->cssl); /* frees the pair's SSL end */
	if (c->ussl)
		T->ssl_free(c->ussl);
	if (c->cnet)
		T->net_free(c->cnet);
	if (c->unet)
		T->net_free(c->unet);
	c->cssl = c->ussl = NULL;
	c->cnet = c->unet = NULL;
	if (c->tls_mem) {
		px->mem -= TLS_CONN_MEM;
		c->tls_mem = false;
	}
	if (c->http) {
		pxhttp_free(c->http);
		free(c->http);
		c->http = NULL;
	}
	buf_free(&c->to_up);
	buf_free(&c->to_down);
	if (pending) {
		c->st = C_DEAD;
		return;
	}
	free(c);
	px->c[slot] = NULL;
	px->nlive--;
	resume_accept(px);
}

/* Best effort: a reply of a few bytes to a socket we are about to close. */
static void say(int fd, const char *s, size_t n)
{
	if (send(fd, s, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* the client left; nothing to tell */
	}
}

static void refuse(struct proxy *px, size_t slot, const char *why, int socks_code, int http_code)
{
	struct conn *c = px->c[slot];
	if (c->proto == PROTO_SOCKS) {
		char r[10] = {5, (char)socks_code, 0, 1, 0, 0, 0, 0, 0, 0};
		say(c->cfd, r, sizeof(r));
	} else {
		char msg[600];
		int n = snprintf(msg, sizeof(msg),
				 "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n%s\n",
				 http_code, http_code == 403 ? "Forbidden" : http_code == 502 ? "Bad Gateway" :
				 http_code == 408 ? "Request Timeout" : http_code == 503 ? "Service Unavailable" : "Bad Request",
				 strlen(why) + 1, why);
		say(c->cfd, msg, (size_t)n);
	}
	conn_close(px, slot);
}

static void deny(struct proxy *px, size_t slot, const char *why)
{
	struct conn *c = px->c[slot];
	report_add_denial(px->rep, "network", c->target);
	px->rep->net.denied++;
	char msg[512];
	snprintf(msg, sizeof(msg), "cordon: %s: %s", c->target, why);
	refuse(px, slot, msg, 2 /* not allowed by ruleset */, 403);
}

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
static void deny_malformed(struct proxy *px, size_t slot, const char *why, int socks_code, int http_code);

static void resolved(struct proxy *px, size_t slot)
{
	struct conn *c = px->c[slot];
	int e = gai_error(&c->gai);
	if (e == EAI_INPROGRESS)
		return;
	if (e != 0 || !c->gai.ar_result) {
		refuse(px, slot, "cordon: the name does not resolve", 4 /* host unreachable */, 502);
		return;
	}
	/* The first address that may be used; the connection goes to exactly it. */
	for (struct addrinfo *ai = c->gai.ar_result; ai; ai = ai->ai_next) {
		if (!proxy_addr_forbidden(ai->ai_addr)) {
			start_connect(px, slot, ai->ai_addr, ai->ai_addrlen);
			return;
		}
	}
	deny(px, slot, "it resolves to a loopback, link-local or private address, which a name may not lead to");
}

static void decided(struct proxy *px, size_t slot)
{
	struct conn *c = px->c[slot];
	snprintf(c->target, sizeof(c->target), strchr(c->host, ':') ? "[%s]:%u" : "%s:%u", c->host, c->port);
	bool allowed = false, lit = false;
	for (size_t i = 0; i < px->allow.n && !allowed; i++)
		allowed = proxy_rule_matches(px->allow.v[i], c->host, c->port, &lit);
	c->literal = lit;
	if (!allowed) {
		deny(px, slot, "not a declared endpoint");
		return;
	}
	/* Plain HTTP is read request by request (rules, the request log); a
	 * CONNECT to a host that only method/path rules admit, or that a
	 * secret goes to, is opened (TLS ends here); any other tunnel to such a
	 * host would pass unread: refused. */
	bool scoped = pxhttp_scoped(px->rules, c->host, c->port), secret_host = false;
	for (size_t i = 0; i < px->tls.nsec && !secret_host; i++)
		secret_host = pxhttp_secret_scoped(&px->tls.sec[i], c->host, c->port);
	c->tls = c->proto == PROTO_CONNECT && px->up_ctx && (scoped || secret_host);
	if (c->proto != PROTO_FORWARD && scoped && !c->tls) {
		deny(px, slot, "only method/path rules admit this host, and a tunnel's requests cannot be read");
		return;
	}
	if (c->tls && c->to_up.len) {
		/* The client's TLS must begin after the answer (it is read by a
		 * TLS endpoint of ours, not relayed). */
		deny_malformed(px, slot, "cordon: send the TLS handshake after the CONNECT answer", 1, 400);
		return;
	}
	if (c->tls && px->mem + TLS_CONN_MEM > MEM_BUDGET) {
		px->rep->net.over_limit++;
		refuse(px, slot, "cordon: the proxy's memory budget is spent", 1, 503);
		return;
	}
	if (c->tls) {
		px->mem += TLS_CONN_MEM;
		c->tls_mem = true;
	}
	if (c->proto == PROTO_FORWARD || c->tls) {
		c->http = malloc(sizeof(*c->http));
		if (!c->http) {
			refuse(px, slot, "cordon: out of memory", 1, 502);
			return;
		}
		pxhttp_init(c->http, px->rules, px->rep, c->host, c->port, c->target, !c->tls);
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
	if (ss.ss_family) {
		if (!c->literal && proxy_addr_forbidden((struct sockaddr *)&ss)) {
			deny(px, slot, "a loopback, link-local or private address must be named literally by the rule");
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
	set_interest(px, slot, c->cfd, &c->c_ev, 0, 1);
	if (getaddrinfo_a(GAI_NOWAIT, list, 1, &c->sev) != 0)
		refuse(px, slot, "cordon: name resolution failed", 4, 502);
}

static void start_connect(struct proxy *px, size_t slot, const struct sockaddr *sa, socklen_t len)
{
	struct conn *c = px->c[slot];
	/* Only now is it a connection to a declared endpoint (a name refused
	 * after its lookup is a denial, not an endpoint). */
	c->ep = endpoint(px, c->target);
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
		refuse(px, slot, "cordon: socket", 1, 502);
		return;
	}
	int one = 1, rb = UP_RCVBUF, sb = SOCK_BUF;
	setsockopt(c->ufd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* Before connect(): the window scale it announces fits the buffer. */
	setsockopt(c->ufd, SOL_SOCKET, SO_RCVBUF, &rb, sizeof(rb));
	setsockopt(c->ufd, SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb));
	int r = connect(c->ufd, (struct sockaddr *)&ss, len);
	if (r < 0 && errno != EINPROGRESS) {
		refuse(px, slot, "cordon: connection failed", errno == ECONNREFUSED ? 5 : 4, 502);
		return;
	}
	c->st = C_CONNECTING;
	/* A loopback handshake is often over by now: then no wake-up to wait for. */
	struct pollfd pf = {.fd = c->ufd, .events = POLLOUT};
	bool done = r == 0 || poll(&pf, 1, 0) == 1;
	struct epoll_event ev = {.events = done ? 0 : EPOLLOUT, .data.u64 = tag(slot, 2)};
	epoll_ctl(px->epfd, EPOLL_CTL_ADD, c->ufd, &ev);
	c->u_ev = ev.events;
	if (done) {
		connected(px, slot); /* sets both sockets' interest */
		return;
	}
	set_interest(px, slot, c->cfd, &c->c_ev, 0, 1);
}

/* ---- the request parser (pure; fuzzed) ---- */

static bool parse_port(const char *s, uint16_t *out)
{
	if (!*s || strlen(s) > 5)
		return false;
	unsigned long v = 0;
	for (const char *p = s; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return false;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v < 1 || v > 65535)
		return false;
	*out = (uint16_t)v;
	return true;
}

/* "host:port" or "[v6]:port" (port optional when defport != 0). */
static bool split_hostport(const char *in, uint16_t defport, char *host, size_t hostsz, uint16_t *port)
{
	char tmp[600];
	if (snprintf(tmp, sizeof(tmp), "%s", in) >= (int)sizeof(tmp) || !tmp[0])
		return false;
	char *h = tmp, *colon;
	if (tmp[0] == '[') {
		char *rb = strchr(tmp, ']');
		if (!rb)
			return false;
		*rb = '\0';
		h = tmp + 1;
		colon = rb[1] == ':' ? rb + 1 : NULL;
		if (rb[1] && !colon)
			return false;
	} else {
		colon = strrchr(tmp, ':');
		if (colon && strchr(tmp, ':') != colon)
			return false; /* a bare IPv6 address needs brackets */
	}
	if (colon) {
		*colon = '\0';
		if (!parse_port(colon + 1, port))
			return false;
	} else if (defport) {
		*port = defport;
	} else {
		return false;
	}
	if (!*h || strlen(h) >= hostsz)
		return false;
	for (const char *p = h; *p; p++) /* a name or an address, nothing else */
		if (!(isalnum((unsigned char)*p) || *p == '.' || *p == '-' || *p == '_' || *p == ':'))
			return false;
	snprintf(host, hostsz, "%s", h);
	return true;
}

int proxy_parse_request(const char *data, size_t len, struct proxy_request *r)
{
	memset(r, 0, sizeof(*r));
	if (len == 0)
		return PR_MORE;
	if ((uint8_t)data[0] == 5)
		return proxy_parse_socks(data, len, r);
	if ((uint8_t)data[0] == 4)
		return PR_BAD; /* SOCKS4(a): not spoken here; refused at once, not waited on */
	const char *end = memmem(data, len, "\r\n\r\n", 4);
	if (!end)
		return len >= PROXY_HDR_MAX ? PR_BAD : PR_MORE;
	size_t hdr_len = (size_t)(end - data) + 4;
	/* A bare CR or LF inside the header (a line break a lenient server
	 * would honour, "X-A: a\nHost: evil", or an obs-fold after one):
	 * refused, never forwarded. */
	for (size_t i = 0; i < hdr_len; i++)
		if ((data[i] == '\r' && (i + 1 == hdr_len || data[i + 1] != '\n')) ||
		    (data[i] == '\n' && (i == 0 || data[i - 1] != '\r')))
			return PR_BAD;
	const char *eol = memmem(data, hdr_len, "\r\n", 2);
	char line[PROXY_HDR_MAX];
	snprintf(line, sizeof(line), "%.*s", (int)(eol - data), data);
	char method[32], tgt[8192], ver[32], extra;
	if (sscanf(line, "%31s %8191s %31s %c", method, tgt, ver, &extra) != 3 || strncmp(ver, "HTTP/1.", 7) != 0)
		return PR_BAD;
	char path[8192] = "/";
	char hostport[600];
	if (strcmp(method, "CONNECT") == 0) {
		r->proto = PROTO_CONNECT;
		snprintf(hostport, sizeof(hostport), "%s", tgt);
		if (!split_hostport(hostport, 0, r->host, sizeof(r->host), &r->port))
			return PR_BAD;
	} else if (strncasecmp(tgt, "http://", 7) == 0) {
		r->proto = PROTO_FORWARD;
		const char *h = tgt + 7, *slash = strchr(h, '/');
		size_t hl = slash ? (size_t)(slash - h) : strlen(h);
		if (hl >= sizeof(hostport) || memchr(h, '@', hl))
			return PR_BAD; /* no userinfo: one host, the one checked */
		snprintf(hostport, sizeof(hostport), "%.*s", (int)hl, h);
		if (slash)
			snprintf(path, sizeof(path), "%s", slash);
		if (!split_hostport(hostport, 80, r->host, sizeof(r->host), &r->port))
			return PR_BAD;
	} else {
		return PR_BAD;
	}
	if (r->proto == PROTO_FORWARD) {
		/* origin-form upstream; one request per connection. The
		 * request-target wins over any Host the client sent (RFC 9112
		 * 3.2.2): the name that was checked is the name the server sees. */
		buf_printf(&r->upstream, "%s %s %s\r\nHost: %s\r\n", method, path, ver, hostport);
		const char *p = eol + 2;
		while (p < end) {
			const char *e = memmem(p, (size_t)(end - p) + 2, "\r\n", 2);
			size_t l = (size_t)(e - p);
			/* obs-fold, or space before the colon ("Host :"), could carry
			 * a Host past the filter to a lenient server: refused. */
			const char *colon = memchr(p, ':', l);
			if (!colon || colon == p || memchr(p, ' ', (size_t)(colon - p)) || memchr(p, '\t', (size_t)(colon - p))) {
				buf_free(&r->upstream);
				return PR_BAD;
			}
			if (!(l >= 5 && strncasecmp(p, "Host:", 5) == 0) &&
			    !(l >= 11 && strncasecmp(p, "Connection:", 11) == 0) &&
			    !(l >= 17 && strncasecmp(p, "Proxy-Connection:", 17) == 0) &&
			    !(l >= 20 && strncasecmp(p, "Proxy-Authorization:", 20) == 0) &&
			    !(l >= 11 && strncasecmp(p, "Keep-Alive:", 11) == 0))
				buf_printf(&r->upstream, "%.*s\r\n", (int)l, p);
			p = e + 2;
		}
		buf_printf(&r->upstream, "Connection: close\r\n\r\n");
	}
	/* Whatever followed the header (a body, a pipelined TLS hello) goes on. */
	if (buf_append(&r->upstream, data + hdr_len, len - hdr_len) < 0)
		return PR_BAD;
	r->consumed = len;
	return PR_OK;
}

int proxy_parse_socks(const char *data, size_t len, struct proxy_request *r)
{
	const uint8_t *b = (const uint8_t *)data;
	r->proto = PROTO_SOCKS;
	/* greeting: 05 n methods... */
	if (len < 2 || len < 2u + b[1])
		return PR_MORE;
	size_t g = 2u + b[1];
	bool noauth = false;
	for (size_t i = 2; i < g; i++)
		noauth |= b[i] == 0;
	if (!noauth)
		return PR_NOAUTH;
	r->greeting = g;
	/* request: 05 01 00 atyp addr port */
	const uint8_t *q = b + g;
	size_t ql = len - g;
	if (ql < 5)
		return PR_MORE;
	size_t need;
	if (q[3] == 1)
		need = 10;
	else if (q[3] == 4)
		need = 22;
	else if (q[3] == 3)
		need = 7u + q[4];
	else
		return PR_BADADDR;
	if (ql < need)
		return PR_MORE;
	if (q[0] != 5 || q[2] != 0)
		return PR_BAD;
	if (q[1] != 1)
		return PR_BADCMD;
	if (q[3] == 1) {
		inet_ntop(AF_INET, q + 4, r->host, sizeof(r->host));
	} else if (q[3] == 4) {
		inet_ntop(AF_INET6, q + 4, r->host, sizeof(r->host));
	} else {
		if (q[4] == 0 || memchr(q + 5, '\0', q[4]))
			return PR_BADADDR;
		snprintf(r->host, sizeof(r->host), "%.*s", (int)q[4], (const char *)q + 5);
		for (const char *p = r->host; *p; p++)
			if (!(isalnum((unsigned char)*p) || *p == '.' || *p == '-' || *p == '_'))
				return PR_BADADDR;
	}
	r->port = (uint16_t)(q[need - 2] << 8 | q[need - 1]);
	if (r->port == 0)
		return PR_BAD;
	if (buf_append(&r->upstream, data + g + need, len - g - need) < 0)
		return PR_BAD;
	r->consumed = len;
	return PR_OK;
}

/* The raw bytes t[0..tl) (NUL as '?'), redacted in full, then printable
 * bytes only (the rest as '?') and cut to at most cap bytes: a secret is
 * replaced before any cut can leave a prefix of it. */
static void put_target(const redactor *rd, const uint8_t *t, size_t tl, size_t cap, bool with_port,
		       unsigned port, char *out, size_t outsz)
{
	char *raw = malloc(tl + 1);
	if (!raw) {
		snprintf(out, outsz, "(malformed request)");
		return;
	}
	for (size_t i = 0; i < tl; i++)
		raw[i] = t[i] ? (char)t[i] : '?';
	raw[tl] = '\0';
	char *red = rd ? redact_string(rd, raw) : NULL;
	const char *src = red ? red : raw;
	if (rd && !red)
		src = "(unredactable)"; /* out of memory: nothing of it on record */
	char clean[256];
	size_t o = 0;
	for (size_t i = 0; src[i] && o + 1 < sizeof(clean) && o < cap; i++) {
		uint8_t ch = (uint8_t)src[i];
		clean[o++] = (ch > ' ' && ch < 0x7f) ? (char)ch : '?';
	}
	clean[o] = '\0';
	if (with_port)
		snprintf(out, outsz, "%s:%u", clean, port);
	else
		snprintf(out, outsz, "%s", clean);
	explicit_bzero(raw, tl);
	free(raw);
	free(red);
}

void proxy_partial_target(const redactor *rd, const char *data, size_t len, char *out, size_t outsz)
{
	const uint8_t *b = (const uint8_t *)data;
	snprintf(out, outsz, "(empty request)");
	if (len == 0 || outsz < 2)
		return;
	if (b[0] == 4) { /* SOCKS4: 04 cmd port(2) ipv4(4) */
		if (len >= 8)
			snprintf(out, outsz, "%u.%u.%u.%u:%u", b[4], b[5], b[6], b[7], (unsigned)(b[2] << 8 | b[3]));
		else
			snprintf(out, outsz, "(incomplete socks4 request)");
		return;
	}
	if (b[0] == 5) { /* 05 n methods... | 05 cmd 00 atyp addr port(2), whatever cmd */
		size_t g = len >= 2 ? 2u + b[1] : len + 1;
		const uint8_t *q = b + g;
		size_t ql = len > g ? len - g : 0, need = 0;
		char host[256] = "";
		if (ql >= 5 && q[3] == 1 && ql >= (need = 10))
			inet_ntop(AF_INET, q + 4, host, sizeof(host));
		else if (ql >= 5 && q[3] == 4 && ql >= (need = 22))
			inet_ntop(AF_INET6, q + 4, host, sizeof(host));
		else if (ql >= 5 && q[3] == 3 && ql >= (need = 7u + q[4])) {
			if (q[4]) {
				put_target(rd, q + 5, q[4], 255, true, (unsigned)(q[need - 2] << 8 | q[need - 1]),
					   out, outsz);
				return;
			}
		}
		if (host[0])
			snprintf(out, outsz, q[3] == 4 ? "[%s]:%u" : "%s:%u", host, (unsigned)(q[need - 2] << 8 | q[need - 1]));
		else
			snprintf(out, outsz, "(incomplete socks5 request)");
		return;
	}
	/* HTTP: the request-target if there is one, else the start of the line. */
	size_t n = 0;
	while (n < len && data[n] != '\r' && data[n] != '\n')
		n++;
	const char *t = data, *sp = memchr(data, ' ', n);
	size_t tl = n;
	if (sp) {
		const char *sp2 = memchr(sp + 1, ' ', n - (size_t)(sp + 1 - data));
		t = sp + 1;
		tl = sp2 ? (size_t)(sp2 - t) : n - (size_t)(t - data);
	}
	if (tl == 0) {
		snprintf(out, outsz, "(malformed request)");
		return;
	}
	put_target(rd, (const uint8_t *)t, tl, 200, false, 0, out, outsz);
}

/* A request that was not understood, or not finished in time: refused, and
 * on record with as much of its target as could be read. */
static void deny_malformed(struct proxy *px, size_t slot, const char *why, int socks_code, int http_code)
{
	struct conn *c = px->c[slot];
	proxy_partial_target(px->rep->redact, c->hdr, c->hlen, c->target, sizeof(c->target));
	report_add_denial(px->rep, "network", c->target);
	px->rep->net.denied++;
	refuse(px, slot, why, socks_code, http_code);
}

static void on_request(struct proxy *px, size_t slot)
{
	struct conn *c = px->c[slot];
	ssize_t n = recv(c->cfd, c->hdr + c->hlen, HDR_MAX - c->hlen, MSG_DONTWAIT);
	if (n <= 0) {
		if (n < 0 && errno == EAGAIN)
			return;
		if (n == 0 && c->hlen) /* left half way through a request */
			deny_malformed(px, slot, "cordon: incomplete request", 1, 400);
		else
			conn_close(px, slot);
		return;
	}
	c->hlen += (size_t)n;
	struct proxy_request r;
	int st = proxy_parse_request(c->hdr, c->hlen, &r);
	c->proto = r.proto;
	if (r.proto == PROTO_SOCKS && r.greeting && !c->socks_stage) {
		say(c->cfd, "\x05\x00", 2); /* no authentication */
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
		say(c->cfd, "\x05\xff", 2);
		proxy_partial_target(px->rep->redact, c->hdr, c->hlen, c->target, sizeof(c->target));
		report_add_denial(px->rep, "network", c->target);
		px->rep->net.denied++;
		conn_close(px, slot);
		return;
	default:
		buf_free(&r.upstream);
		deny_malformed(px, slot, "cordon: this proxy takes CONNECT host:port, absolute http:// requests and SOCKS5 CONNECT",
			       st == PR_BADADDR ? 8 : st == PR_BADCMD ? 7 : 1, 400);
		return;
	}
}

static void on_relay(struct proxy *px, size_t slot);

/* Rounds of pumping per wake-up before other connections get their turn. */
#define RELAY_ROUNDS 16
/* A read connection holds at most this much on its way, each direction. */
#define HTTP_IO_CAP (64u << 10)

/* One side of a read connection: its socket, or its TLS over it. Both as
 * recv/send: >0 bytes, 0 end, -1 with errno (EAGAIN: not now). */
static ssize_t io_ret(const struct tls_ops *T, SSL *s, int ok, size_t n)
{
	if (ok == 1)
		return (ssize_t)n;
	int e = T->get_error(s, ok);
	T->err_clear();
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		errno = EAGAIN;
		return -1;
	}
	if (e == SSL_ERROR_ZERO_RETURN)
		return 0;
	errno = EPROTO;
	return -1;
}

/* *rd: the socket may have bytes (an event came since the last EAGAIN);
 * with it false, no recv is tried. */
static ssize_t io_recv(const struct tls_ops *T, int fd, SSL *s, BIO *net, bool *rd, char *b, size_t n)
{
	if (!s) {
		if (!*rd) {
			errno = EAGAIN;
			return -1;
		}
		ssize_t k = recv(fd, b, n, MSG_DONTWAIT);
		if (k < 0 && errno == EAGAIN)
			*rd = false;
		return k;
	}
	size_t total = 0;
	for (;;) {
		size_t got = 0;
		int ok = T->read_ex(s, b + total, n - total, &got);
		total += ok == 1 ? got : 0;
		/* Records already in (a record, or the ring): one call takes them. */
		if (ok == 1 && total < n && T->read_pending(s))
			continue;
		if (total)
			return (ssize_t)total;
		if (ok == 1 || T->get_error(s, ok) != SSL_ERROR_WANT_READ || !*rd)
			return io_ret(T, s, ok, got);
		T->err_clear();
		ssize_t k = T->fill(fd, net);
		if (k < 0 && errno != EAGAIN && errno != ENOBUFS)
			return -1;
		if (k < 0 && errno == ENOBUFS) { /* a full ring and no record in it: cannot be TLS */
			errno = EPROTO;
			return -1;
		}
		if (k <= 0)
			*rd = false; /* EAGAIN: wait for an event; 0: the SSL side reads the end next */
		if (k < 0)
			return -1;
	}
}

static ssize_t io_send(const struct tls_ops *T, int fd, SSL *s, const char *b, size_t n)
{
	if (!s)
		return send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	size_t put = 0;
	int ok = T->write_ex(s, b, n, &put);
	return io_ret(T, s, ok, put);
}

/* Send what is pending (through TLS: records into the ring, the ring to the
 * socket, again while the socket takes it); -1 on a connection error. lazy:
 * the ring goes to the socket only once it is half full or full (more
 * records come this round: one send for several). */
static int flush_out(const struct tls_ops *T, int fd, SSL *s, BIO *net, buf *b, size_t *off, uint64_t *count, bool *moved, bool lazy)
{
	for (;;) {
		while (*off < b->len) {
			ssize_t n = io_send(T, fd, s, b->p + *off, b->len - *off);
			if (n < 0 && errno != EAGAIN)
				return -1;
			if (n < 0)
				break;
			*off += (size_t)n;
			*count += (uint64_t)n;
			*moved = true;
		}
		if (!s)
			break;
		size_t before = T->net_pending(net);
		if (lazy && *off == b->len && before < TLS_RING / 2)
			break;
		if (T->flush(fd, net, moved) < 0)
			return -1;
		if (*off == b->len || T->net_pending(net) == before)
			break; /* all is in the ring, or the socket took none of it */
	}
	if (*off == b->len)
		b->len = *off = 0;
	return 0;
}

/* A connection whose requests are read (pxhttp.h): bytes go through user
 * space, each way bounded by HTTP_IO_CAP. */
static void on_http(struct proxy *px, size_t slot)
{
	struct conn *c = px->c[slot];
	struct pxhttp *h = c->http;
	const struct tls_ops *T = px->tls.ops;
	char tmp[65536];
	int rounds = 0;
	bool moved;
	for (;;) {
		moved = false;
		if (!c->c_eof && !h->done && c->to_up.len - c->up_off < HTTP_IO_CAP && pxhttp_want_client(h)) {
			ssize_t n = io_recv(T, c->cfd, c->cssl, c->cnet, &c->c_rd, tmp, sizeof(tmp));
			if (n > 0 && pxhttp_client(h, tmp, (size_t)n, &c->to_up, &c->to_down) < 0)
				h->done = true;
			if (n == 0)
				c->c_eof = true;
			if (n < 0 && errno != EAGAIN)
				goto gone;
			moved |= n >= 0;
		}
		if (h->done && !h->req_opaque)
			c->to_up.len = c->up_off = 0; /* ended (refused, or an answer that ends it): nothing more goes up */
		if (flush_out(T, c->ufd, c->ussl, c->unet, &c->to_up, &c->up_off, &c->up, &moved, true) < 0)
			goto gone;
		if (!c->u_eof && c->to_down.len - c->down_off < HTTP_IO_CAP) {
			ssize_t n = io_recv(T, c->ufd, c->ussl, c->unet, &c->u_rd, tmp, sizeof(tmp));
			if (n > 0 && pxhttp_upstream(h, tmp, (size_t)n, &c->to_down) < 0)
				goto gone;
			/* The end, or a broken one (a TLS upstream that closes without
			 * close_notify: a body to EOF ends so): what the response
			 * filter held goes out before the connection ends. */
			if (n == 0 || (n < 0 && errno != EAGAIN)) {
				c->u_eof = true;
				pxhttp_upstream_eof(h, &c->to_down);
			}
			moved |= n >= 0;
			/* A response done may let requests that waited go on. */
			if (n > 0 && h->cin.len && pxhttp_client(h, NULL, 0, &c->to_up, &c->to_down) < 0)
				h->done = true;
		}
		if (flush_out(T, c->cfd, c->cssl, c->cnet, &c->to_down, &c->down_off, &c->down, &moved, true) < 0)
			goto gone;
		/* Nothing more came, or this connection had its turn: what the
		 * rings hold goes out now (that may make room to go on). */
		bool turn = moved && ++rounds >= RELAY_ROUNDS;
		if (!moved || turn) {
			moved = false;
			if (flush_out(T, c->ufd, c->ussl, c->unet, &c->to_up, &c->up_off, &c->up, &moved, false) < 0 ||
			    flush_out(T, c->cfd, c->cssl, c->cnet, &c->to_down, &c->down_off, &c->down, &moved, false) < 0)
				goto gone;
			if (!moved || turn)
				break;
		}
	}
	bool down_clear = c->to_down.len == c->down_off && (!c->cnet || !T->net_pending(c->cnet));
	if ((h->done || c->u_eof) && down_clear)
		goto gone; /* all is said (or the upstream is finished) */
	if (c->c_eof && c->to_up.len == c->up_off && !c->u_shut) {
		if (c->ussl) {
			T->shutdown(c->ussl); /* close_notify; the response may still come */
			T->err_clear();
			bool m = false;
			if (T->flush(c->ufd, c->unet, &m) < 0)
				goto gone;
		} else {
			shutdown(c->ufd, SHUT_WR);
		}
		c->u_shut = true;
	}
	if (rounds == RELAY_ROUNDS) {
		struct epoll_event ev = {.events = c->c_ev, .data.u64 = tag(slot, 1)};
		epoll_ctl(px->epfd, EPOLL_CTL_MOD, c->cfd, &ev);
		ev = (struct epoll_event){.events = c->u_ev, .data.u64 = tag(slot, 2)};
		epoll_ctl(px->epfd, EPOLL_CTL_MOD, c->ufd, &ev);
	}
	return;
gone:
	if (c->cnet) { /* records for the client already made: what the socket takes, as if sent at once */
		bool m = false;
		T->flush(c->cfd, c->cnet, &m);
	}
	conn_close(px, slot);
}

/* The upstream is connected: the request bytes seen so far are read again,
 * this time as HTTP. */
static void http_start(struct proxy *px, size_t slot)
{
	struct conn *c = px->c[slot];
	buf_free(&c->to_up);
	c->up_off = c->down_off = 0;
	c->st = C_RELAY;
	c->c_rd = c->u_rd = true;
	/* c->sock_mem stays CONN_BASE_MEM: the parse buffers take the share
	 * two pipes would have. */
	if (pxhttp_client(c->http, c->hdr, c->hlen, &c->to_up, &c->to_down) < 0)
		c->http->done = true;
	set_interest(px, slot, c->cfd, &c->c_ev, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, 1);
	set_interest(px, slot, c->ufd, &c->u_ev, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, 2);
	on_http(px, slot);
}

/* An opened connection whose upstream is not verified: the client hears a
 * 502 over its TLS, and the run's report has it. */
static void tls_upstream_refused(struct proxy *px, size_t slot)
{
	struct conn *c = px->c[slot];
	const struct tls_ops *T = px->tls.ops;
	char msg[800];
	snprintf(msg, sizeof(msg), "cordon: %s: the upstream's TLS was not accepted: %s\n", c->target, c->u_why);
	char r[1200];
	int n = snprintf(r, sizeof(r),
			 "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n%s",
			 strlen(msg), msg);
	size_t put;
	bool m = false;
	if (T->write_ex(c->cssl, r, (size_t)n, &put) == 1) /* best effort, as say() */
		T->shutdown(c->cssl);
	T->err_clear();
	T->flush(c->cfd, c->cnet, &m);
	conn_close(px, slot);
}

/* A handshake's steps on one leg, records in and out through its ring: 1
 * done, 0 waiting for the socket, -1 failed (the reason on OpenSSL's error
 * queue, or a broken socket). */
static int hs_step(const struct tls_ops *T, int fd, SSL *s, BIO *net, bool *rd)
{
	for (;;) {
		int r = T->do_handshake(s);
		int e = r == 1 ? 0 : T->get_error(s, r);
		bool m = false;
		if (T->flush(fd, net, &m) < 0)
			return -1;
		if (r == 1)
			return 1;
		if (e == SSL_ERROR_WANT_WRITE && m)
			continue;
		if (e == SSL_ERROR_WANT_WRITE)
			return 0; /* the ring is full and the socket takes nothing now */
		if (e != SSL_ERROR_WANT_READ)
			return -1;
		if (!*rd)
			return 0;
		ssize_t k = T->fill(fd, net);
		if (k < 0 && errno == EAGAIN) {
			*rd = false;
			return 0;
		}
		if (k < 0)
			return -1; /* a broken socket, or a full ring without a record */
		if (k == 0)
			*rd = false; /* the SSL side reads the end next, and fails */
	}
}

/* Both handshakes, without blocking: the upstream's, verified; then the
 * client's with our leaf. Then the requests are read (on_http). */
static void on_handshake(struct proxy *px, size_t slot)
{
	struct conn *c = px->c[slot];
	const struct tls_ops *T = px->tls.ops;
	if (!c->u_hs && !c->u_bad) {
		int r = hs_step(T, c->ufd, c->ussl, c->unet, &c->u_rd);
		if (r == 1) {
			c->u_hs = true;
		} else if (r < 0) {
			long v = T->get_verify_result(c->ussl);
			unsigned long le = T->err_peek();
			char eb[120] = "the handshake failed";
			if (v != X509_V_OK)
				snprintf(eb, sizeof(eb), "certificate not verified: %s", T->verify_error_string(v));
			else if (le)
				T->err_string_n(le, eb, sizeof(eb));
			snprintf(c->u_why, sizeof(c->u_why), "%s", eb);
			c->u_bad = true;
			/* On record at once, whether or not the client's handshake
			 * ever completes to hear the 502. */
			char t[600];
			snprintf(t, sizeof(t), "%s (upstream TLS: %s)", c->target, c->u_why);
			report_add_denial(px->rep, "network", t);
			px->rep->net.denied++;
		}
		T->err_clear();
	}
	/* The client's handshake only once the upstream's is decided: what
	 * it hears is then known (the service, or a 502), and the refusal is
	 * on record before the client can leave. */
	if (!c->c_hs && (c->u_hs || c->u_bad)) {
		int r = hs_step(T, c->cfd, c->cssl, c->cnet, &c->c_rd);
		T->err_clear();
		if (r == 1)
			c->c_hs = true;
		else if (r < 0) {
			/* The client did not take our certificate, or does not
			 * speak TLS (plain HTTP in a CONNECT tunnel): refused, on
			 * record; no request went anywhere. */
			report_add_denial(px->rep, "network", c->target);
			px->rep->net.denied++;
			conn_close(px, slot);
			return;
		}
	}
	if (c->u_bad && c->c_hs) {
		tls_upstream_refused(px, slot);
		return;
	}
	if (!c->c_hs || !c->u_hs)
		return;
	c->st = C_RELAY;
	c->up_off = c->down_off = 0;
	buf_free(&c->to_up);
	buf_free(&c->to_down);
	on_http(px, slot);
}

/* The upstream's TCP is up: the client hears 200, and both TLS legs
 * begin. */
static void tls_start(struct proxy *px, size_t slot)
{
	struct conn *c = px->c[slot];
	const struct tls_ops *T = px->tls.ops;
	cordon_error e = {0};
	SSL_CTX *leaf = T->leaf_ctx(px->tls.ca, c->host, &e);
	c->cssl = leaf ? T->ssl_new(leaf) : NULL;
	c->ussl = T->upstream_ssl(px->up_ctx, c->host);
	if (!c->cssl || !c->ussl || T->pair(c->cssl, &c->cnet, TLS_RING) < 0 || T->pair(c->ussl, &c->unet, TLS_RING) < 0) {
		T->err_clear();
		refuse(px, slot, "cordon: TLS setup failed", 1, 502);
		return;
	}
	T->set_accept_state(c->cssl);
	T->set_connect_state(c->ussl);
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	/* The client sent nothing after its CONNECT (decided): the socket's
	 * buffer is empty and takes these few bytes whole. */
	if (send(c->cfd, ok, sizeof(ok) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)(sizeof(ok) - 1)) {
		conn_close(px, slot);
		return;
	}
	c->st = C_HANDSHAKE;
	c->c_rd = c->u_rd = true;
	set_interest(px, slot, c->cfd, &c->c_ev, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, 1);
	set_interest(px, slot, c->ufd, &c->u_ev, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, 2);
	on_handshake(px, slot);
}

static void connected(struct proxy *px, size_t slot)
{
	struct conn *c = px->c[slot];
	int err = 0;
	socklen_t l = sizeof(err);
	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &l) < 0 || err) {
		refuse(px, slot, "cordon: the endpoint refused or is unreachable", err == ECONNREFUSED ? 5 : 4, 502);
		return;
	}
	if (c->tls) {
		tls_start(px, slot);
		return;
	}
	if (c->http) {
		http_start(px, slot);
		return;
	}
	if (pipe2(c->cu, O_NONBLOCK | O_CLOEXEC) < 0 || pipe2(c->uc, O_NONBLOCK | O_CLOEXEC) < 0) {
		refuse(px, slot, "cordon: out of pipes", 1, 502);
		return;
	}
	/* The client waits for this answer before it sends anything: first. */
	if (c->proto == PROTO_CONNECT)
		buf_printf(&c->to_down, "HTTP/1.1 200 Connection established\r\n\r\n");
	else if (c->proto == PROTO_SOCKS)
		buf_append(&c->to_down, "\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00", 10);
	if (c->to_down.len) {
		ssize_t n = send(c->cfd, c->to_down.p, c->to_down.len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0)
			c->down_off = (size_t)n; /* the rest, if any, goes before the relayed bytes */
	}
	int cap = fcntl(c->cu[1], F_GETPIPE_SZ);
	c->cu_cap = c->uc_cap = cap > 0 ? (size_t)cap : 65536;
	if (px->pipe_bytes + c->cu_cap + c->uc_cap > PIPE_BUDGET) {
		/* Pipes that grew earlier took the budget: this connection's start
		 * at one page each (they grow once there is room again). */
		int a = fcntl(c->cu[1], F_SETPIPE_SZ, 4096), b = fcntl(c->uc[1], F_SETPIPE_SZ, 4096);
		if (a > 0 && b > 0) {
			c->cu_cap = (size_t)a;
			c->uc_cap = (size_t)b;
		}
	}
	px->pipe_bytes += c->cu_cap + c->uc_cap;
	px->mem += c->cu_cap + c->uc_cap;
	px->mem -= CONN_BASE_MEM - CONN_SOCK_MEM; /* the pipes' reservation */
	c->sock_mem = CONN_SOCK_MEM;
	c->st = C_RELAY;
	/* From here on both sockets are watched edge-triggered for both
	 * directions, registered once: the relay pumps until the kernel says
	 * EAGAIN, so no wake-up is lost and no epoll_ctl is needed per chunk. */
	set_interest(px, slot, c->cfd, &c->c_ev, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, 1);
	set_interest(px, slot, c->ufd, &c->u_ev, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, 2);
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
	if (want <= *w->cap || w->px->pipe_bytes - *w->cap + want > PIPE_BUDGET ||
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
		on_http(px, slot);
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
			conn_close(px, slot);
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
		conn_close(px, slot);
		return;
	}
	if (rounds == RELAY_ROUNDS) {
		/* Still moving: yield to the other connections. Re-registering an
		 * edge-triggered socket queues a new event if it is ready. */
		struct epoll_event ev = {.events = c->c_ev, .data.u64 = tag(slot, 1)};
		epoll_ctl(px->epfd, EPOLL_CTL_MOD, c->cfd, &ev);
		ev = (struct epoll_event){.events = c->u_ev, .data.u64 = tag(slot, 2)};
		epoll_ctl(px->epfd, EPOLL_CTL_MOD, c->ufd, &ev);
	}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void on_accept(struct proxy *px)
{
	for (;;) {
		int fd = accept4(px->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				pause_accept(px); /* never spin on a socket that stays readable */
			return;
		}
		size_t slot = 0;
		while (slot < px->max_conns && px->c[slot])
			slot++;
		bool fits = slot < px->max_conns && px->mem + CONN_BASE_MEM <= MEM_BUDGET;
		struct conn *c = fits ? calloc(1, sizeof(*c)) : NULL;
		if (!c) {
			/* Bounded: over the limit, the client is told and let go. */
			px->rep->net.over_limit++;
			say(fd, "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n", 55);
			close(fd);
			continue;
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
		struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(slot, 1)};
		epoll_ctl(px->epfd, EPOLL_CTL_ADD, fd, &ev);
		c->c_ev = EPOLLIN;
		tick_arm(px, true);
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
		if (c && c->st == C_REQUEST && now - c->t_accept >= REQUEST_TIMEOUT_NS)
			deny_malformed(px, i, "cordon: the request was not complete in time", 1, 408);
		else if (c && c->st == C_HANDSHAKE && now - c->t_accept >= REQUEST_TIMEOUT_NS)
			conn_close(px, i); /* a TLS handshake that does not finish */
		else if (c && (c->st == C_REQUEST || c->st == C_HANDSHAKE))
			waiting++;
	}
	resume_accept(px);
	if (!waiting && !px->paused)
		tick_arm(px, false);
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
	if (slot >= PROXY_MAX_CONNS || !px->c[slot])
		return;
	struct conn *c = px->c[slot];
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
		if (kind == 1)
			c->c_rd = true;
		else if (kind == 2)
			c->u_rd = true;
	}
	switch (c->st) {
	case C_REQUEST:
		if (kind == 1)
			on_request(px, slot);
		break;
	case C_CONNECTING:
		if (kind == 2)
			connected(px, slot);
		break;
	case C_HANDSHAKE:
		on_handshake(px, slot);
		break;
	case C_RELAY:
		if (events & EPOLLERR)
			conn_close(px, slot);
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
			conn_close(px, i);
	}
}

int proxy_new(struct proxy **out, const strv *allow, const struct net_rules *rules, const struct proxy_tls *tls,
	      struct run_report *rep, int epfd, cordon_error *err)
{
	struct proxy *px = calloc(1, sizeof(*px));
	if (!px)
		return cordon_err(err, 12, "out of memory");
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
			return cordon_err(err, 12, "out of memory");
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
			return cordon_err(err, 12, "out of memory");
		}
	pthread_once(&dns_once, dns_efd_open);
	px->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(0, 3)};
	if (dns_efd < 0 || px->tfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, dns_efd, &ev) < 0) {
		cordon_err_errno(err, "proxy: eventfd/timerfd");
		proxy_free(px);
		return -1;
	}
	ev.data.u64 = tag(0, 4);
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
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(0, 0)};
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
		conn_close(px, i);
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
		conn_close(px, i);
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
