/* The run's own resolver (network.transparent, issue 33): the supervisor
 * answers DNS for the run on sockets init made in the run's network
 * namespace (CORDON_DNS_ADDR:53, UDP and TCP), never asking any server.
 *
 * A name that a network.allow entry matches on any port gets a synthetic
 * address of cordon's own (198.18.0.0/15 for A, fd63:6f72:646e::/48 for
 * AAAA), one per name, kept in a bounded table that maps it back to the
 * name (for the connect step: the rules see the name, not an address).
 * Any other name is NXDOMAIN at once and a `network` denial "dns NAME".
 * Bounds: DNSD_MAX_NAMES names (then SERVFAIL, counted), DNSD_MAX_TCP TCP
 * connections (the oldest closed for a new one), DNS_MSG_MAX bytes a
 * message, DNSD_UDP_BURST datagrams per wake-up. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include "error.h"
#include "report.h"
#include "strv.h"

#define DNSD_TAG (1ULL << 60) /* epoll data of the resolver's fds */
#define DNSD_MAX_NAMES 4096
#define DNSD_MAX_TCP 16
#define DNSD_UDP_BURST 64
#define DNSD_TTL 300

struct dnsd;

/* allow: network.allow's host:port patterns (copied). */
int dnsd_new(struct dnsd **out, const strv *allow, struct run_report *rep, int epfd, cordon_error *err);
/* Take a socket init made: the UDP one, or the TCP listening one. */
int dnsd_take(struct dnsd *d, int fd, bool tcp, cordon_error *err);
/* An epoll event whose data has DNSD_TAG. */
void dnsd_event(struct dnsd *d, uint64_t data, uint32_t events);
/* The name a synthetic address stands for (AF_INET or AF_INET6), or NULL. */
const char *dnsd_name_of(const struct dnsd *d, const struct sockaddr *sa, socklen_t len);
/* Close everything; the totals are in the report as they go. */
void dnsd_free(struct dnsd *d);

/* Pure helpers (tested directly): is name declared by a host:port pattern
 * on some port? The synthetic address of table index i (i < DNSD_MAX_NAMES). */
bool dnsd_declared(const strv *allow, const char *name);
void dnsd_synth_v4(size_t i, uint8_t out[4]);
void dnsd_synth_v6(size_t i, uint8_t out[16]);
