/* network.transparent's byte counts (issue 33.1): a connection the
 * supervisor makes and hands in has no relay, so the supervisor never sees
 * its bytes; the kernel counts them (tcp_info's bytes_acked, sent and
 * acknowledged, and bytes_received). At the hand-in the socket's cookie,
 * addresses and endpoint (name:port) go in a table here; when the kernel
 * frees the socket it says so with its last tcp_info (sock_diag's destroy
 * broadcast, SKNLGRP_INET{,6}_TCP_DESTROY, of the host's network
 * namespace), and at the run's end the ones still open are looked up by
 * their addresses and cookie (inet_diag, one socket each). The counts go
 * to the report's network.endpoints and totals, as the proxy's do.
 *
 * Bounds: TALLY_MAX connections open at once, TALLY_TARGETS endpoints
 * (past either, a connection is counted in `uncounted`, not in bytes); one
 * fixed table; the broadcast is read into one buffer. The broadcast names
 * every TCP socket freed in the host's namespace: the connector thread
 * reads it as it comes (never more than its socket's buffer behind; a
 * lost message leaves that connection to the end's lookup, or uncounted).
 * Shared by the observer and the connector threads under one lock. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include "error.h"
#include "report.h"

#define TALLY_MAX 4096
#define TALLY_TARGETS 1024

struct tally;

/* The diag socket, subscribed to the destroy broadcast where the kernel
 * lets it (else the end's lookups only). */
int tally_new(struct tally **out, cordon_error *err);
/* The socket the connector watches (readable: call tally_drain). */
int tally_fd(const struct tally *t);
/* sock was handed in for name:port; peer: where it connects. */
void tally_add(struct tally *t, int sock, const struct sockaddr *peer, const char *name, uint16_t port);
/* Read the broadcast: the sockets of ours that are gone, counted. */
void tally_drain(struct tally *t);
/* The run is over: read the broadcast, look up the rest, and add each
 * endpoint's connections and bytes to rep's network section (endpoints,
 * totals) and the uncounted to network.transparent. */
void tally_finish(struct tally *t, struct run_report *rep);
void tally_free(struct tally *t);
