/* The egress proxy's life in the supervisor's event loop (sup-proxy.c; what
 * the proxy does and refuses: proxy.h): made, given init's listening
 * socket, fed epoll events and finished lookups, freed. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "proxy.h"
#include "report.h"
#include "strv.h"

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
/* network.transparent: network.resolve's pins ("name=address"), where a
 * pinned name's connections go, as the transparent path's (borrowed). */
void proxy_set_resolve(struct proxy *px, const strv *resolve);
/* network.transparent: the connections of ports whose requests are read
 * (method/path rules, an injected secret) come in through h's listener,
 * each for the name:port announced for it (sup-handoff.h; borrowed: it
 * outlives the proxy). They are read as a CONNECT to name:port is: TLS
 * (its first byte a handshake record) opened, anything else as plain
 * HTTP in origin form. */
struct handoff;
int proxy_set_handoff(struct proxy *px, struct handoff *h, cordon_error *err);
/* Take the listening socket init made (in the run's network namespace). */
int proxy_listen(struct proxy *px, int lfd, cordon_error *err);
/* An epoll event whose data has PROXY_TAG. */
void proxy_event(struct proxy *px, uint64_t data, uint32_t events);
/* Finish the lookups that are done (their eventfd woke the loop). */
void proxy_dns_ready(struct proxy *px);
/* Close everything; record totals in the report. */
void proxy_free(struct proxy *px);
