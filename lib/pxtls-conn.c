/* The egress proxy's opened TLS: the client's handshake (a leaf from the
 * run's CA) and the upstream's (verified), then the connection is read as
 * HTTP (pxio.c); an unverified upstream is refused on record. */
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
#include "pxtls-conn.h"
#include "pxconn.h"
#include "pxio.h"

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
	if (T->write_ex(c->cssl, r, (size_t)n, &put) == 1) /* best effort, as px_say() */
		T->shutdown(c->cssl);
	T->err_clear();
	T->flush(c->cfd, c->cnet, &m);
	px_conn_close(px, slot);
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
void px_on_handshake(struct proxy *px, size_t slot)
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
			px_conn_close(px, slot);
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
	px_on_http(px, slot);
}

/* The upstream's TCP is up: the client hears 200, and both TLS legs
 * begin. */
void px_tls_start(struct proxy *px, size_t slot)
{
	struct conn *c = px->c[slot];
	const struct tls_ops *T = px->tls.ops;
	cordon_error e = {0};
	SSL_CTX *leaf = T->leaf_ctx(px->tls.ca, c->host, &e);
	c->cssl = leaf ? T->ssl_new(leaf) : NULL;
	c->ussl = T->upstream_ssl(px->up_ctx, c->host);
	if (!c->cssl || !c->ussl || T->pair(c->cssl, &c->cnet, TLS_RING) < 0 || T->pair(c->ussl, &c->unet, TLS_RING) < 0) {
		T->err_clear();
		px_refuse(px, slot, "cordon: TLS setup failed", 1, 502);
		return;
	}
	T->set_accept_state(c->cssl);
	T->set_connect_state(c->ussl);
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	/* The client sent nothing after its CONNECT (decided): the socket's
	 * buffer is empty and takes these few bytes whole. A transparent
	 * connection asked nothing: its handshake is under way. */
	if (c->proto != PROTO_TRANSPARENT &&
	    send(c->cfd, ok, sizeof(ok) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)(sizeof(ok) - 1)) {
		px_conn_close(px, slot);
		return;
	}
	c->st = C_HANDSHAKE;
	c->c_rd = c->u_rd = true;
	px_set_interest(px, slot, c->cfd, &c->c_ev, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, 1);
	px_set_interest(px, slot, c->ufd, &c->u_ev, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, 2);
	px_on_handshake(px, slot);
}
