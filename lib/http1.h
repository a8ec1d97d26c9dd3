/* HTTP/1.1 message framing, for the proxy's read connections (plain HTTP
 * through the forward proxy, and opened TLS): a streaming parser that finds
 * each message head and the end of its body, so that every request on a
 * connection is checked on its own. Pure (no syscalls); fuzzed.
 *
 * Strict where a lenient server could be led to see another request than
 * the one checked: bare CR or LF, obs-fold, whitespace before a colon, a
 * Content-Length that is not one number, Transfer-Encoding with
 * Content-Length, or a request Transfer-Encoding other than "chunked" are
 * refused (H1_ERR). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define H1_HEAD_MAX 16384
#define H1_MAX_HEADERS 128

struct h1_hdr {
	size_t name, name_len, value, value_len; /* offsets into head */
};

/* One parsed head. The strings point into the parser's copy of it. */
struct h1_msg {
	char method[32];
	char *target;       /* request: NUL-terminated copy */
	int status;         /* response */
	int minor;          /* HTTP/1.minor */
	const char *head;   /* the head as received, CRLFCRLF included */
	size_t head_len;
	struct h1_hdr h[H1_MAX_HEADERS];
	size_t nh;
	bool chunked, has_cl, conn_close, conn_upgrade, upgrade, expect_continue;
	uint64_t cl;
};

enum { H1_NEED, H1_HEAD, H1_DATA, H1_END, H1_ERR };
enum { S_HEAD, S_BODY, S_CSIZE, S_CDATA, S_CDATA_END, S_TRAILER, S_EOF, S_OPAQUE };

struct h1 {
	bool response;
	int st;
	char head[H1_HEAD_MAX];
	size_t hlen;
	uint64_t left;      /* S_BODY / S_CDATA: bytes still to come */
	char line[128];     /* chunk-size or trailer line */
	size_t llen;
	size_t tlines;      /* trailer bytes, bounded */
	struct h1_msg msg;
	const char *err;    /* why H1_ERR */
};

/* Feed bytes. Returns:
 *   H1_NEED  everything consumed, nothing complete;
 *   H1_HEAD  a head is complete (p->msg); *used bytes consumed; for a
 *            response the caller then calls h1_body_for() with the request's
 *            method, for a request h1_body_for(p, NULL);
 *   H1_DATA  body bytes (chunk framing included) in data[0..*used): pass on;
 *   H1_END   the message ended (*used consumed, the framing's last bytes
 *            included: pass them on); the next head may follow;
 *   H1_ERR   malformed (p->err says why).
 * In S_OPAQUE (after an Upgrade or CONNECT) everything is H1_DATA. */
int h1_feed(struct h1 *p, const char *data, size_t len, size_t *used);
/* Set how the body after the head just parsed is framed. A response to
 * HEAD, a 1xx, 204 and 304 have none; a 101 (or a 2xx to CONNECT) turns the
 * stream opaque; a response with neither length nor chunking runs to EOF. */
void h1_body_for(struct h1 *p, const char *request_method);
/* The upstream closed: ends a body that runs to EOF (H1_END), else H1_ERR
 * if a message was cut. */
int h1_eof(struct h1 *p);
/* Does the head have this header (case-insensitive name)? Returns the
 * value's length and sets *v, or -1. */
long h1_header(const struct h1_msg *m, const char *name, const char **v);
