/* TLS for the egress proxy (issue 16, step 2; not wired into the proxy
 * yet): a CA made for each run, leaf certificates minted from it per host,
 * and the context for the upstream leg.
 *
 * The CA is EC P-256, valid for the run (from an hour before now, for
 * valid_secs), its key only in this process's memory: nothing of it is
 * written anywhere; tls_ca_free frees it (OpenSSL clears key memory). Leaves
 * share one EC P-256 key, are cached per host (at most TLS_LEAF_CACHE; the
 * oldest goes first), carry the host as a DNS or IP subjectAltName and
 * answer ALPN with http/1.1 only. */
#pragma once
#include <stddef.h>
#include <openssl/ssl.h>
#include "error.h"

#define TLS_LEAF_CACHE 64

struct tls_ca;

/* Make the run's CA. */
int tls_ca_new(struct tls_ca **out, unsigned valid_secs, cordon_error *err);
void tls_ca_free(struct tls_ca *ca);
/* The CA's certificate, PEM (owned by ca). */
const char *tls_ca_pem(const struct tls_ca *ca, size_t *len);
/* A server context presenting a leaf for host (a name, or an IPv4/IPv6
 * literal without brackets), cached: owned by ca. NULL on error. */
SSL_CTX *tls_leaf_ctx(struct tls_ca *ca, const char *host, cordon_error *err);
/* The client context for upstream connections: peers verified against
 * ca_file (PEM) if given, else the host's trust store; TLS 1.2 at least;
 * ALPN http/1.1. The caller frees it (SSL_CTX_free). Set SNI and the name
 * to verify per connection with tls_upstream_ssl. */
SSL_CTX *tls_upstream_ctx(const char *ca_file, cordon_error *err);
/* A client SSL for host on ctx: SNI (names only) and hostname or IP
 * verification set. NULL on error. */
SSL *tls_upstream_ssl(SSL_CTX *ctx, const char *host);
