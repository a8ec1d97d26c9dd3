/* The egress proxy's connection table: a connection's epoll interest, the
 * proxy's tick and paused accept, closing a connection (its share of the
 * budgets returned), refusals and denials on record, endpoint stats. */
#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "pxconn.h"

/* ---- stats ---- */

size_t px_endpoint(struct proxy *px, const char *target)
{
	return report_net_endpoint(px->rep, target);
}

/* ---- connections ---- */

uint64_t px_tag(size_t slot, int kind)
{
	return PROXY_TAG | (uint64_t)slot << 8 | (uint64_t)kind;
}

void px_set_interest(struct proxy *px, size_t slot, int fd, uint32_t *cur, uint32_t want, int kind)
{
	if (fd < 0 || *cur == want)
		return;
	struct epoll_event ev = {.events = want, .data.u64 = px_tag(slot, kind)};
	epoll_ctl(px->epfd, EPOLL_CTL_MOD, fd, &ev);
	*cur = want;
}

/* The 1 s tick runs only while a request is unfinished or accept is paused:
 * an idle proxy does not wake the supervisor. */
void px_tick_arm(struct proxy *px, bool on)
{
	if (px->ticking == on || px->tfd < 0)
		return;
	struct itimerspec its = {.it_interval = {on, 0}, .it_value = {on, 0}};
	if (timerfd_settime(px->tfd, 0, &its, NULL) == 0)
		px->ticking = on;
}

/* Out of fds, the listening socket stays readable and accept keeps failing:
 * it is not watched until a connection closes or the next tick. */
void px_pause_accept(struct proxy *px)
{
	struct epoll_event ev = {.events = 0, .data.u64 = px_tag(0, 0)};
	if (!px->paused && epoll_ctl(px->epfd, EPOLL_CTL_MOD, px->lfd, &ev) == 0)
		px->paused = true;
	px_tick_arm(px, true);
}

void px_resume_accept(struct proxy *px)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = px_tag(0, 0)};
	if (px->paused && epoll_ctl(px->epfd, EPOLL_CTL_MOD, px->lfd, &ev) == 0)
		px->paused = false;
}

void px_conn_close(struct proxy *px, size_t slot)
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
	px_resume_accept(px);
}

/* Best effort: a reply of a few bytes to a socket we are about to close. */
void px_say(int fd, const char *s, size_t n)
{
	if (send(fd, s, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* the client left; nothing to tell */
	}
}

void px_refuse(struct proxy *px, size_t slot, const char *why, int socks_code, int http_code)
{
	struct conn *c = px->c[slot];
	if (c->proto == PROTO_SOCKS) {
		char r[10] = {5, (char)socks_code, 0, 1, 0, 0, 0, 0, 0, 0};
		px_say(c->cfd, r, sizeof(r));
	} else {
		char msg[600];
		int n = snprintf(msg, sizeof(msg),
				 "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n%s\n",
				 http_code, http_code == 403 ? "Forbidden" : http_code == 502 ? "Bad Gateway" :
				 http_code == 408 ? "Request Timeout" : http_code == 503 ? "Service Unavailable" : "Bad Request",
				 strlen(why) + 1, why);
		px_say(c->cfd, msg, (size_t)n);
	}
	px_conn_close(px, slot);
}

void px_deny(struct proxy *px, size_t slot, const char *why)
{
	struct conn *c = px->c[slot];
	report_add_denial(px->rep, "network", c->target);
	px->rep->net.denied++;
	char msg[512];
	snprintf(msg, sizeof(msg), "cordon: %s: %s", c->target, why);
	px_refuse(px, slot, msg, 2 /* not allowed by ruleset */, 403);
}

/* A request that was not understood, or not finished in time: refused, and
 * on record with as much of its target as could be read. */
void px_deny_malformed(struct proxy *px, size_t slot, const char *why, int socks_code, int http_code)
{
	struct conn *c = px->c[slot];
	proxy_partial_target(px->rep->redact, c->hdr, c->hlen, c->target, sizeof(c->target));
	report_add_denial(px->rep, "network", c->target);
	px->rep->net.denied++;
	px_refuse(px, slot, why, socks_code, http_code);
}
