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
 * pipe per direction; connections and buffers are bounded. */
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

/* allow: the host patterns; rules: the same entries with their methods and
 * paths (pxrule.h; the caller keeps them alive). */
struct net_rules;
struct tls_ca;
struct tls_ops;
struct pxhttp_secret;
/* TLS interception (issue 16): CONNECTs to a host that restricted rules
 * alone admit, or that a secret is injected to, are opened: the client's
 * TLS ends here with a leaf from the run's CA, its requests are read as
 * plain HTTP is, and go on over TLS verified against the host's store or
 * upstream_ca. */
struct proxy_tls {
	struct tls_ca *ca;          /* NULL: nothing is opened (and such CONNECTs are refused) */
	const struct tls_ops *ops;  /* with ca: the TLS code (tls.h) */
	const char *upstream_ca;    /* PEM file, or NULL: the host's trust store */
	const struct pxhttp_secret *sec; /* the caller keeps them alive */
	size_t nsec;
};
int proxy_new(struct proxy **out, const strv *allow, const struct net_rules *rules, const struct proxy_tls *tls,
	      struct run_report *rep, int epfd, cordon_error *err);
/* Take the listening socket init made (in the run's network namespace). */
int proxy_listen(struct proxy *px, int lfd, cordon_error *err);
/* An epoll event whose data has PROXY_TAG. */
void proxy_event(struct proxy *px, uint64_t data, uint32_t events);
/* Finish the lookups that are done (their eventfd woke the loop). */
void proxy_dns_ready(struct proxy *px);
/* Close everything; record totals in the report. */
void proxy_free(struct proxy *px);

/* The request parser (pure; fuzzed). */
#define PROXY_HDR_MAX 16384
enum { PR_OK, PR_MORE, PR_BAD, PR_NOAUTH, PR_BADADDR, PR_BADCMD };
enum { PROTO_CONNECT = 1, PROTO_FORWARD, PROTO_SOCKS };
struct proxy_request {
	int proto;
	char host[256];
	uint16_t port;
	size_t greeting;  /* SOCKS5: length of the greeting seen (answer it) */
	size_t consumed;
	buf upstream;     /* bytes to send upstream first (rewritten request, early data) */
};
/* Parse what a client sent so far: PR_MORE (incomplete), PR_OK (target
 * known), or an error. Hosts are names or addresses only; ports 1-65535,
 * digits only; an http:// URL carries no userinfo. The caller frees
 * r->upstream. */
int proxy_parse_request(const char *data, size_t len, struct proxy_request *r);
int proxy_parse_socks(const char *data, size_t len, struct proxy_request *r);
/* For the record of a refused or unfinished request: its target as far as
 * it was sent, or a description. With rd, the target is redacted in full
 * first, then cut and made printable (the rest as '?'). */
void proxy_partial_target(const redactor *rd, const char *data, size_t len, char *out, size_t outsz);

/* Pure helpers (tested directly): proxy_rule_matches is the rules' (pxrule.c). */
#include "pxrule.h"
/* Is this address one a name may never lead to (loopback, private, ...)?
 * (pxaddr.c) */
bool proxy_addr_forbidden(const struct sockaddr *sa);
