/* network.transparent's ports whose requests must be read (method/path
 * rules, an injected secret; issue 33.1): the run's connection goes to the
 * proxy, not to the endpoint. The observer thread binds a socket of the
 * host's loopback, says here which name:port its source port stands for,
 * connects it to this listener (also on the host's loopback) and hands it
 * in over the run's socket; the proxy accepts here and reads the
 * connection as it reads a CONNECT to name:port (plain HTTP, or TLS it
 * opens). A connection from a source port no one announced (another
 * process of the host) is closed at once.
 *
 * Shared by two threads (the observer announces, the proxy claims), under
 * one lock; one fixed table (HANDOFF_MAX), an announcement not claimed in
 * 10 s dropped. The degraded boundary (sup-degrade-net.h) announces its
 * connects to the proxy itself with the name "": the proxy reads those as
 * connections it accepted (HTTP proxy or SOCKS). Owned by the run's
 * supervisor: made before the proxy and the observer, freed after both. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include "error.h"

#define HANDOFF_MAX 64

struct handoff;

/* The listener on 127.0.0.1 (an ephemeral port), nonblocking. */
int handoff_new(struct handoff **out, cordon_error *err);
void handoff_free(struct handoff *h);
/* The listener's fd (the proxy watches it) and address. */
int handoff_fd(const struct handoff *h);
struct sockaddr_in handoff_addr(const struct handoff *h);
/* A connection from 127.0.0.1:src (socket sock, bound there) will be for
 * name:port. A copy of sock is held until the entry is claimed, withdrawn
 * or replaced, so that no other socket can take that address meanwhile.
 * False when the table is full (or no fd is left for the copy). */
bool handoff_announce(struct handoff *h, int sock, uint16_t src, const char *name, uint16_t port);
/* Its announcement withdrawn (the connect failed). */
void handoff_withdraw(struct handoff *h, uint16_t src);
/* What the connection accepted from 127.0.0.1:src is for (the entry is
 * consumed); false: no one announced it. */
bool handoff_claim(struct handoff *h, uint16_t src, char *name, size_t namesz, uint16_t *port);
/* A socket to the proxy's way in is bound first (127.0.0.1:0, or
 * ::ffff:127.0.0.1 for an IPv6 socket), its source port announced as
 * name:port's, then connected: the hook of connect_begin_hook (arg: a
 * struct handoff_announcer). 0, or an errno (EAGAIN: the table is full,
 * full set). */
struct handoff_announcer {
	struct handoff *h;
	const char *name;
	uint16_t port, src;
	bool full; /* the table had no room */
};
int handoff_bind_announce(int s, void *arg);
