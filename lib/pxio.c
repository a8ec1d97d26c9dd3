/* The egress proxy's read connections: a connection whose requests are
 * read (plain HTTP with restricted rules or injected secrets, or opened
 * TLS), its I/O on either leg (a socket or its TLS), each request through
 * pxhttp.c. */
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
#include "pxio.h"
#include "pxconn.h"
#include "pxhttp-resp.h"

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
void px_on_http(struct proxy *px, size_t slot)
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
		struct epoll_event ev = {.events = c->c_ev, .data.u64 = px_tag(slot, 1)};
		epoll_ctl(px->epfd, EPOLL_CTL_MOD, c->cfd, &ev);
		ev = (struct epoll_event){.events = c->u_ev, .data.u64 = px_tag(slot, 2)};
		epoll_ctl(px->epfd, EPOLL_CTL_MOD, c->ufd, &ev);
	}
	return;
gone:
	if (c->cnet) { /* records for the client already made: what the socket takes, as if sent at once */
		bool m = false;
		T->flush(c->cfd, c->cnet, &m);
	}
	px_conn_close(px, slot);
}

/* The upstream is connected: the request bytes seen so far are read again,
 * this time as HTTP. */
void px_http_start(struct proxy *px, size_t slot)
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
	px_set_interest(px, slot, c->cfd, &c->c_ev, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, 1);
	px_set_interest(px, slot, c->ufd, &c->u_ev, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, 2);
	px_on_http(px, slot);
}
