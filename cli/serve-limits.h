/* cordon serve: what one client can take of the server itself (docs/api.md,
 * "Limits of the server"): request bodies within one byte budget for all
 * connections, and connections that have not yet shown who they are
 * limited apart and closed at a header deadline (issue 27, items 4 and 5);
 * per client, a share of the connections and of the budget, root's slice
 * kept, and a deadline for each body (review of 27.4/27.5, F1 and F2). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <microhttpd.h>
#include "strv.h"

/* An option of these limits: 1 taken (v its value), 0 not one of them, -1
 * bad value (a line printed). */
int limits_option(const char *o, const char *v);

/* ---- request bodies (item 4) ---- */

/* What one request's body holds of the budget, and in whose name. */
typedef struct {
	size_t n;
	struct lclient *cl;
} body_hold;

/* Make room in b for n more bytes, taken from the budget every request
 * body shares (--body-budget, default 256 MiB) and from the share of it of
 * c's client (a quarter; on the Unix socket the clients other than root
 * three quarters together); *h: what this body holds of it, capacity
 * included (b is grown here, never by buf_append). hint: the declared
 * length (Content-Length), taken at once, or 0. Returns 0, or -1 when the
 * budget or the client's share has not that much left (nothing taken). */
int body_grow(struct MHD_Connection *c, buf *b, body_hold *h, size_t n, size_t hint);
/* Give back what b held (b freed). */
void body_release(buf *b, body_hold *h);

/* ---- connections (item 5; per client: review F1, F2) ---- */

/* The MHD options: MHD_OPTION_NOTIFY_CONNECTION. tcp: --listen (an
 * address is what a client is; loopback is one address), else a Unix
 * socket (its peer's uid is). Starts the deadline's thread. */
int limits_start(bool tcp, unsigned max_conns);
void limits_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		   enum MHD_ConnectionNotificationCode code);
/* The request's headers are in and it was authenticated: no longer counted
 * as unknown, no header deadline; the connection is its client's (at most
 * --connections-per-client of them, root's slice kept on the Unix socket)
 * and its body's deadline starts (--body-timeout). Returns 0, or -1 when
 * the client holds as many connections as it may (answer 503 and close). */
int limits_authenticated(struct MHD_Connection *c);
/* The request's body is all in: its deadline is off. */
void limits_body_done(struct MHD_Connection *c);
