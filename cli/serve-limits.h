/* cordon serve: what one client can take of the server itself (docs/api.md,
 * "Limits of the server"): request bodies within one byte budget for all
 * connections, and connections that have not yet shown who they are
 * limited apart and closed at a header deadline (issue 27, items 4 and 5). */
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

/* Make room in b for n more bytes, taken from the budget every request
 * body shares (--body-budget, default 256 MiB); *held: what this body holds
 * of it, capacity included (b is grown here, never by buf_append). hint:
 * the declared length (Content-Length), taken at once, or 0. Returns 0, or
 * -1 when the budget has not that much left (nothing taken). */
int body_grow(buf *b, size_t *held, size_t n, size_t hint);
/* Give back what b held (b freed). */
void body_release(buf *b, size_t *held);

/* ---- connections before authentication (item 5) ---- */

/* The MHD options: MHD_OPTION_NOTIFY_CONNECTION. tcp: --listen (an
 * address is what a client is; loopback is one address), else a Unix
 * socket (its peer's uid is). Starts the deadline's thread. */
int limits_start(bool tcp, unsigned max_conns);
void limits_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		   enum MHD_ConnectionNotificationCode code);
/* The request's headers are in and it was authenticated: no longer counted
 * as unknown, no header deadline. */
void limits_authenticated(struct MHD_Connection *c);
