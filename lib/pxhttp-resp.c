/* The proxy's reading of HTTP responses (pxhttp.h): each matched with its
 * request, its status and bytes logged, injected values in its head and
 * body put back to their placeholders (through the echo filter, within the
 * proxy's budget), a coded or unreadable one cut off, a refusal sent after
 * the responses before it. No syscalls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "pxhttp-resp.h"
#include "proxy.h"
#include "pxhttp.h"
#include "redact-stream.h"

static void resp_done(struct pxhttp *h)
{
	if (!h->nq)
		return;
	memmove(h->q, h->q + 1, (h->nq - 1) * sizeof(h->q[0]));
	h->nq--;
}

/* ---- responses: values back to placeholders ---- */

static bool name_is(const struct h1_msg *m, size_t i, const char *want)
{
	return m->h[i].name_len == strlen(want) && strncasecmp(m->head + m->h[i].name, want, m->h[i].name_len) == 0;
}

/* A response head for the client. With the echo filter: a value the
 * upstream echoed goes back as its placeholder, and since that changes the
 * body's length, a Content-Length body is re-framed: chunked to an HTTP/1.1
 * peer, else (HTTP/1.0 on either side) sent to the connection's close. A
 * chunked body is re-chunked; a body to EOF keeps its framing. */
static int put_resp_head(struct pxhttp *h, const struct pxhttp_pending *q, buf *to_down)
{
	const struct h1_msg *m = &h->resp.msg;
	int st = h->resp.st;
	h->rf = PXHTTP_RF_RAW;
	if (!h->echo)
		return buf_append(to_down, m->head, m->head_len);
	if (st == S_CSIZE)
		h->rf = PXHTTP_RF_CHUNK;
	else if (st == S_EOF)
		h->rf = PXHTTP_RF_SAME;
	else if (st == S_BODY)
		h->rf = q && q->minor >= 1 && m->minor >= 1 ? PXHTTP_RF_CHUNK : PXHTTP_RF_CLOSE;
	bool reframe = st == S_BODY;
	buf hd = {0};
	const char *eol = memmem(m->head, m->head_len, "\r\n", 2);
	buf_append(&hd, m->head, (size_t)(eol - m->head) + 2);
	for (size_t i = 0; i < m->nh; i++) {
		const char *ls = m->head + m->h[i].name, *ve = m->head + m->h[i].value + m->h[i].value_len;
		const char *le = memmem(ve, m->head_len - (size_t)(ve - m->head), "\r\n", 2);
		if (reframe && name_is(m, i, "content-length"))
			continue;
		if (h->rf == PXHTTP_RF_CLOSE && (name_is(m, i, "connection") || name_is(m, i, "keep-alive")))
			continue;
		buf_append(&hd, ls, (size_t)(le - ls) + 2);
	}
	if (reframe)
		buf_printf(&hd, "%s\r\n", h->rf == PXHTTP_RF_CHUNK ? "Transfer-Encoding: chunked" : "Connection: close");
	buf_append(&hd, "\r\n\0", 3);
	char *red = hd.p ? redact_string(h->echo, hd.p) : NULL;
	buf_free(&hd);
	if (!red)
		return -1;
	int rc = buf_append(to_down, red, strlen(red));
	free(red);
	if (h->rf != PXHTTP_RF_RAW && !h->es.r)
		redact_stream_init(&h->es, h->echo);
	return rc;
}

static void put_chunk(buf *out, const buf *b)
{
	if (b->len) {
		buf_printf(out, "%zx\r\n", b->len);
		buf_append(out, b->p, b->len);
		buf_append(out, "\r\n", 2);
	}
}

/* Body bytes d[0..n) that the parser took in state st, for the client
 * through the echo filter; r is what the parser returned. The filter holds
 * back what may begin a value, so a value split across reads (or chunks) is
 * found; a chunked body's framing is the proxy's own. */
static int put_resp_body(struct pxhttp *h, int st, const char *d, size_t n, int r, buf *to_down)
{
	bool chunked = h->resp.msg.chunked, end = r == H1_END;
	buf o = {0};
	int rc = 0;
	if (!chunked || st == S_CDATA) {
		rc = redact_feed(&h->es, (const uint8_t *)d, n, &o);
		if (rc == 0 && end && !chunked)
			rc = redact_flush(&h->es, &o);
		if (h->rf == PXHTTP_RF_CHUNK) {
			put_chunk(to_down, &o);
			if (end && !chunked)
				buf_append(to_down, "0\r\n\r\n", 5);
		} else {
			buf_append(to_down, o.p, o.len);
		}
	} else if (st == S_CSIZE && h->resp.st == S_TRAILER) { /* the last chunk: what was held, then ours */
		rc = redact_flush(&h->es, &o);
		put_chunk(to_down, &o);
		buf_append(to_down, "0\r\n", 3);
	} else if (st == S_TRAILER) { /* trailer lines, filtered as they are */
		rc = redact_feed(&h->es, (const uint8_t *)d, n, &o);
		if (rc == 0 && end)
			rc = redact_flush(&h->es, &o);
		buf_append(to_down, o.p, o.len);
	} /* else chunk framing: dropped (ours replaces it) */
	buf_free(&o);
	if (end) {
		if (h->rf == PXHTTP_RF_CLOSE)
			h->done = true; /* the body ran to the close: nothing more on this connection */
		h->rf = PXHTTP_RF_RAW;
	}
	return rc;
}

/* A response head with a content coding other than identity, or a
 * transfer coding other than chunked: the echo filter cannot read its body. */
static bool coded(const struct h1_msg *m)
{
	for (size_t i = 0; i < m->nh; i++) {
		const char *v = m->head + m->h[i].value;
		size_t vl = m->h[i].value_len;
		if (name_is(m, i, "content-encoding") && !pxhttp_value_is(v, vl, "identity"))
			return true;
		if (name_is(m, i, "transfer-encoding") && !pxhttp_value_is(v, vl, "chunked"))
			return true;
	}
	return false;
}

/* With the echo filter on, a response the parser cannot read (or one to no
 * request) cannot be filtered: none of it (held or raw) goes to the client,
 * which gets a 502 if nothing of that response went out yet, and the
 * connection ends on both sides (no more requests read, none injected).
 * Relaying it raw would hand the run whatever value the upstream echoes in
 * it and in every later response on the connection. */
static void unreadable(struct pxhttp *h, bool head_unsent, const char *why, buf *to_down)
{
	char t[600], msg[800];
	bool asked = head_unsent && h->nq;
	snprintf(t, sizeof(t), "%s (a response the proxy cannot read: %s)", h->target, why ? why : "?");
	report_add_denial(h->rep, "network", t);
	h->rep->net.denied++;
	if (asked) {
		if (pxhttp_entry(h, h->q[0].log))
			pxhttp_entry(h, h->q[0].log)->status = 502;
		snprintf(msg, sizeof(msg), "cordon: %s: the upstream's response cannot be read (%s); the connection ends",
			 h->target, why ? why : "?");
		pxhttp_answer(to_down, 502, msg);
	}
	if (h->es.r)
		redact_stream_free(&h->es);
	memset(&h->es, 0, sizeof(h->es));
	h->rf = PXHTTP_RF_RAW;
	h->done = true;
	pxhttp_charge(h);
}

int pxhttp_upstream(struct pxhttp *h, const char *d, size_t n, buf *to_down)
{
	size_t off = 0;
	while (off < n || !h->resp_opaque) {
		if (h->done && !h->resp_opaque)
			break; /* a body sent to the close has ended: nothing after it */
		if (h->resp_opaque) {
			if (h->nq && pxhttp_entry(h, h->q[0].log))
				pxhttp_entry(h, h->q[0].log)->down += n - off;
			buf_append(to_down, d + off, n - off);
			break;
		}
		size_t used, pre = h->resp.st == S_HEAD ? h->resp.hlen : 0;
		int st = h->resp.st;
		int r = h1_feed(&h->resp, d + off, n - off, &used);
		if (r == H1_NEED) {
			off += used;
			if (off >= n)
				break;
			continue;
		}
		if ((r == H1_ERR || (r == H1_HEAD && !h->nq)) && h->echo) {
			unreadable(h, st == S_HEAD, r == H1_ERR ? h->resp.err : "a response to no request", to_down);
			return 0;
		}
		if (r == H1_ERR || (r == H1_HEAD && !h->nq)) {
			/* Not HTTP, or an answer to nothing: relayed as is from here
			 * (the requests were checked on the other side; no value was
			 * injected in this run, so none can come back). */
			h->resp_opaque = true;
			buf_append(to_down, h->resp.head, pre); /* what the parser held back */
			buf_append(to_down, d + off, used);
			off += used;
			continue;
		}
		struct pxhttp_pending *q = h->nq ? &h->q[0] : NULL;
		struct net_request *e = q ? pxhttp_entry(h, q->log) : NULL;
		if (r == H1_HEAD && q->filtered && coded(&h->resp.msg)) {
			unreadable(h, true, "a coded response to a request that carries a value", to_down);
			return 0;
		}
		if (r == H1_HEAD) {
			const struct h1_msg *m = &h->resp.msg;
			h1_body_for(&h->resp, q->method);
			/* Switching to another protocol than websocket (or without
			 * being asked): not relayed, not even the 101. */
			const char *uv;
			if (m->status == 101 && (!q->upgrade || pxhttp_upgrade_not_websocket(m) || h1_header(m, "upgrade", &uv) < 0)) {
				if (e)
					e->status = m->status;
				h->done = true;
				return -1;
			}
			if (put_resp_head(h, q, to_down) < 0)
				return -1;
			if (e) {
				e->status = m->status;
				e->down += m->head_len;
			}
			if (m->status == 101)
				h->resp_opaque = h->req_opaque = true;
			off += used;
			continue;
		}
		if (h->rf == PXHTTP_RF_RAW)
			buf_append(to_down, d + off, used);
		else if (put_resp_body(h, st, d + off, used, r, to_down) < 0)
			return -1;
		if (h->es.r && !pxhttp_charge(h)) {
			pxhttp_over_budget(h);
			return 0;
		}
		if (e)
			e->down += used;
		off += used;
		if (r == H1_END && h->resp.msg.status >= 200)
			resp_done(h);
	}
	pxhttp_flush_refusal(h, to_down);
	return 0;
}

void pxhttp_upstream_eof(struct pxhttp *h, buf *to_down)
{
	if (h->rf == PXHTTP_RF_SAME && h->resp.st == S_EOF) { /* a body to EOF: what was held */
		buf o = {0};
		if (redact_flush(&h->es, &o) == 0)
			buf_append(to_down, o.p, o.len);
		buf_free(&o);
		h->rf = PXHTTP_RF_RAW;
	}
	if (!h->resp_opaque && h1_eof(&h->resp) == H1_END)
		resp_done(h);
	h->resp_opaque = true; /* nothing more comes: a refusal goes out now if due */
	if (h->refused && !h->done) {
		buf_append(to_down, h->refusal.p, h->refusal.len);
		h->done = true;
	}
}
