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
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
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

/* An opened connection's legs do not read and write their sockets one
 * record a syscall (a 5-byte header, the record, then an EAGAIN): each SSL
 * object reads and writes one end of a BIO pair, and the proxy moves the
 * other end's rings (ring bytes each way) with one recv or send, many
 * records at a time, in and out of the ring itself.
 *
 * tls_pair: give s its end of a new pair; *net the network end (the
 * caller's, tls_net_free). 0, or -1 (OpenSSL's error queue). */
int tls_pair(SSL *s, BIO **net, size_t ring);
/* Ciphertext from the socket into the ring: >0 bytes, 0 the peer's end (the
 * SSL side then reads EOF), -1 with errno: EAGAIN nothing now, ENOBUFS the
 * ring is full. */
ssize_t tls_fill(int fd, BIO *net);
/* Ciphertext from the ring to the socket, as much as it takes (*moved set
 * if any went): 0, or -1 on a connection error. */
int tls_flush(int fd, BIO *net, bool *moved);
/* Ciphertext waiting in the ring for the socket. */
size_t tls_net_pending(BIO *net);
/* s can return more without the socket: a record already decrypted, or
 * ciphertext in its ring. */
bool tls_read_pending(SSL *s);
void tls_net_free(BIO *net);

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
	int (*pair)(SSL *s, BIO **net, size_t ring);
	ssize_t (*fill)(int fd, BIO *net);
	int (*flush)(int fd, BIO *net, bool *moved);
	size_t (*net_pending)(BIO *net);
	bool (*read_pending)(SSL *s);
	void (*net_free)(BIO *net);
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
