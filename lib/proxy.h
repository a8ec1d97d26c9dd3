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
 * (and the other classes proxy_addr_forbidden lists) are refused unless the
 * rule names that address literally, so DNS cannot turn an allowed name into
 * 127.0.0.1. Lookups complete through an eventfd (never a signal); requests
 * time out; connections are capped by the fd limit and a memory budget. Data moves with splice(2) through one
 * pipe per direction; connections and buffers are bounded.
 *
 * What its parts share is here; each declares its functions in a header of
 * its own name: sup-proxy.h (its life in the loop), pxparse.h (the request
 * parser), pxaddr.h (the refused address classes), pxconn.h (connections),
 * pxio.h, pxtls-conn.h, pxhttp.h, pxhttp-resp.h, pxrule.h. */
#pragma once
#include <signal.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <stdint.h>
#include "report.h"
#include "strv.h"

#define PROXY_PORT 3128
#define PROXY_TAG (1ULL << 63) /* epoll data of proxy fds */
#define PROXY_MAX_CONNS 1024

struct proxy;

/* Pure helpers (tested directly): proxy_rule_matches is the rules' (pxrule.c). */
#include "pxrule.h"
