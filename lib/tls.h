/* TLS for the egress proxy (issue 16): a CA made for each run, leaf certificates minted from it per host,
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

/* Everything the supervisor calls of TLS, as one table (tls_ops_get).
 * OpenSSL's libssl, linked statically, brings 19,000 relocations of its
 * method tables that the loader applies at every start (about 100 page
 * faults and 1 ms here), while only a run that opens TLS connections uses
 * it: the cordon program loads it as a module (cordon-tls.so beside the
 * executable, lib/tls-load.c) on the first call; the library, cordon-serve
 * and the tests link it (lib/tls-static.c). */
struct tls_ops {
	int (*ca_new)(struct tls_ca **out, unsigned valid_secs, cordon_error *err);
	void (*ca_free)(struct tls_ca *ca);
	const char *(*ca_pem)(const struct tls_ca *ca, size_t *len);
	SSL_CTX *(*leaf_ctx)(struct tls_ca *ca, const char *host, cordon_error *err);
	SSL_CTX *(*upstream_ctx)(const char *ca_file, cordon_error *err);
	SSL *(*upstream_ssl)(SSL_CTX *ctx, const char *host);
	/* OpenSSL's own, for the proxy's connections */
	void (*ctx_free)(SSL_CTX *ctx);
	SSL *(*ssl_new)(SSL_CTX *ctx);
	void (*ssl_free)(SSL *s);
	int (*set_fd)(SSL *s, int fd);
	void (*set_accept_state)(SSL *s);
	void (*set_connect_state)(SSL *s);
	int (*do_handshake)(SSL *s);
	int (*get_error)(const SSL *s, int ret);
	int (*read_ex)(SSL *s, void *buf, size_t num, size_t *got);
	int (*write_ex)(SSL *s, const void *buf, size_t num, size_t *put);
	int (*shutdown)(SSL *s);
	long (*get_verify_result)(const SSL *s);
	const char *(*verify_error_string)(long v);
	void (*err_clear)(void);
	unsigned long (*err_peek)(void);
	void (*err_string_n)(unsigned long e, char *buf, size_t len);
};
/* The table tls.c fills (the module's one exported symbol). */
extern const struct tls_ops tls_module_ops;
/* The table, loading the module first where the program does so; NULL
 * with err set if it cannot be had. */
const struct tls_ops *tls_ops_get(cordon_error *err);
