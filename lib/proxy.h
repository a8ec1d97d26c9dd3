/* The egress proxy: runs in the supervisor's event loop, outside the
 * boundary, on a listening socket that init created inside the run's own
 * network namespace (127.0.0.1:PROXY_PORT there). One port speaks HTTP
 * CONNECT, absolute-form HTTP and SOCKS5 (remote DNS); only declared
 * endpoints are reached; every attempt is counted, every refusal recorded.
 *
 * Rules: "host:port", "*.domain:port", IPv4/[IPv6] literals, "host:*".
 * Names are resolved here (getaddrinfo_a, never blocking the loop) and the
 * connection goes to the very address that was checked. Loopback,
 * link-local, cloud metadata, private, multicast and unspecified addresses
 * are refused unless the rule names that address literally, so DNS cannot
 * turn an allowed name into 127.0.0.1. Data moves with splice(2) through one
 * pipe per direction; connections and buffers are bounded. */
#pragma once
#include <signal.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <stdint.h>
#include "report.h"

#define PROXY_PORT 3128
#define PROXY_TAG (1ULL << 63) /* epoll data of proxy fds */
#define PROXY_DNS_SIGNAL (SIGRTMIN + 1)
#define PROXY_MAX_CONNS 1024

struct proxy;

int proxy_new(struct proxy **out, const strv *allow, struct run_report *rep, int epfd, cordon_error *err);
/* Take the listening socket init made (in the run's network namespace). */
int proxy_listen(struct proxy *px, int lfd, cordon_error *err);
/* An epoll event whose data has PROXY_TAG. */
void proxy_event(struct proxy *px, uint64_t data, uint32_t events);
/* PROXY_DNS_SIGNAL arrived: finish the lookups that are done. */
void proxy_dns_ready(struct proxy *px);
/* Close everything; record totals in the report. */
void proxy_free(struct proxy *px);

/* Pure helpers (tested directly). */
bool proxy_rule_matches(const char *rule, const char *host, uint16_t port, bool *literal);
/* Is this address one a name may never lead to (loopback, private, ...)? */
bool proxy_addr_forbidden(const struct sockaddr *sa);
