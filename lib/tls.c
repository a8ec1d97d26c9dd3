#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include "tls.h"

/* The most a network.upstream_ca file may hold (the Debian bundle is
 * about 220 KB). */
#define TLS_CA_FILE_MAX (4 << 20)

struct leaf {
	char host[256];
	SSL_CTX *ctx;
	unsigned long used;
};

struct tls_ca {
	EVP_PKEY *key, *leaf_key;
	X509 *cert;
	char *pem;
	size_t pem_len;
	unsigned valid_secs;
	struct leaf leaves[TLS_LEAF_CACHE];
	unsigned long clock;
};

static int ssl_err(cordon_error *err, const char *what)
{
	char b[256];
	unsigned long e = ERR_get_error();
	ERR_error_string_n(e, b, sizeof(b));
	ERR_clear_error();
	return cordon_err(err, 0, "tls: %s: %s", what, e ? b : "failed");
}

static bool add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX c;
	X509V3_set_ctx_nodb(&c);
	X509V3_set_ctx(&c, issuer, cert, NULL, NULL, 0);
	X509_EXTENSION *ex = X509V3_EXT_conf_nid(NULL, &c, nid, value);
	bool ok = ex && X509_add_ext(cert, ex, -1) == 1;
	X509_EXTENSION_free(ex);
	return ok;
}

/* A certificate with a random serial, valid from an hour ago for secs. */
static X509 *cert_new(EVP_PKEY *pub, const char *cn, unsigned secs)
{
	X509 *x = X509_new();
	unsigned char serial[16];
	BIGNUM *bn = NULL;
	if (!x || RAND_bytes(serial, sizeof(serial)) != 1)
		goto fail;
	serial[0] &= 0x7f; /* positive */
	bn = BN_bin2bn(serial, sizeof(serial), NULL);
	X509_NAME *name = X509_get_subject_name(x);
	if (!bn || !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) || X509_set_version(x, 2) != 1 ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), (long)secs) || X509_set_pubkey(x, pub) != 1 ||
	    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1, 0) != 1)
		goto fail;
	BN_free(bn);
	return x;
fail:
	BN_free(bn);
	X509_free(x);
	return NULL;
}

int tls_ca_new(struct tls_ca **out, unsigned valid_secs, cordon_error *err)
{
	struct tls_ca *ca = calloc(1, sizeof(*ca));
	if (!ca)
		return cordon_oom(err);
	ca->valid_secs = valid_secs;
	unsigned char id[8];
	char cn[64];
	BIO *mem = NULL;
	ca->key = EVP_EC_gen("P-256");
	ca->leaf_key = EVP_EC_gen("P-256");
	if (!ca->key || !ca->leaf_key || RAND_bytes(id, sizeof(id)) != 1) {
		ssl_err(err, "make the run's CA key");
		goto fail;
	}
	snprintf(cn, sizeof(cn), "cordon run CA %02x%02x%02x%02x%02x%02x%02x%02x", id[0], id[1], id[2], id[3], id[4],
		 id[5], id[6], id[7]);
	ca->cert = cert_new(ca->key, cn, valid_secs);
	if (!ca->cert || X509_set_issuer_name(ca->cert, X509_get_subject_name(ca->cert)) != 1 ||
	    !add_ext(ca->cert, ca->cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
	    !add_ext(ca->cert, ca->cert, NID_key_usage, "critical,keyCertSign,cRLSign") ||
	    !add_ext(ca->cert, ca->cert, NID_subject_key_identifier, "hash") ||
	    X509_sign(ca->cert, ca->key, EVP_sha256()) <= 0) {
		ssl_err(err, "make the run's CA certificate");
		goto fail;
	}
	mem = BIO_new(BIO_s_mem());
	char *p;
	long n;
	if (!mem || PEM_write_bio_X509(mem, ca->cert) != 1 || (n = BIO_get_mem_data(mem, &p)) <= 0 ||
	    !(ca->pem = strndup(p, (size_t)n))) {
		ssl_err(err, "write the run's CA certificate");
		goto fail;
	}
	ca->pem_len = (size_t)n;
	BIO_free(mem);
	*out = ca;
	return 0;
fail:
	BIO_free(mem);
	tls_ca_free(ca);
	return -1;
}

void tls_ca_free(struct tls_ca *ca)
{
	if (!ca)
		return;
	for (size_t i = 0; i < TLS_LEAF_CACHE; i++)
		SSL_CTX_free(ca->leaves[i].ctx);
	EVP_PKEY_free(ca->key);
	EVP_PKEY_free(ca->leaf_key);
	X509_free(ca->cert);
	free(ca->pem);
	free(ca);
}

const char *tls_ca_pem(const struct tls_ca *ca, size_t *len)
{
	if (len)
		*len = ca->pem_len;
	return ca->pem;
}

static const unsigned char alpn_h1[] = "\x08http/1.1";

/* http/1.1 if the client offers it; no ALPN otherwise (it then speaks
 * HTTP/1.1 or fails), never h2. */
static int alpn_select(SSL *s, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
		       unsigned int inlen, void *arg)
{
	unsigned char *o;
	if (SSL_select_next_proto(&o, outlen, alpn_h1, sizeof(alpn_h1) - 1, in, inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	*out = o;
	return SSL_TLSEXT_ERR_OK;
}

static X509 *leaf_cert(struct tls_ca *ca, const char *host)
{
	X509 *x = cert_new(ca->leaf_key, host, ca->valid_secs);
	unsigned char a[16];
	bool ip = inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1;
	char san[300];
	snprintf(san, sizeof(san), "%s:%s", ip ? "IP" : "DNS", host);
	if (!x || X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) != 1 ||
	    !add_ext(x, ca->cert, NID_basic_constraints, "critical,CA:FALSE") ||
	    !add_ext(x, ca->cert, NID_key_usage, "critical,digitalSignature") ||
	    !add_ext(x, ca->cert, NID_ext_key_usage, "serverAuth") ||
	    !add_ext(x, ca->cert, NID_subject_alt_name, san) ||
	    !add_ext(x, ca->cert, NID_authority_key_identifier, "keyid:always") ||
	    X509_sign(x, ca->key, EVP_sha256()) <= 0) {
		X509_free(x);
		return NULL;
	}
	return x;
}

SSL_CTX *tls_leaf_ctx(struct tls_ca *ca, const char *host, cordon_error *err)
{
	struct leaf *oldest = &ca->leaves[0];
	for (size_t i = 0; i < TLS_LEAF_CACHE; i++) {
		struct leaf *l = &ca->leaves[i];
		if (l->ctx && strcasecmp(l->host, host) == 0) {
			l->used = ++ca->clock;
			return l->ctx;
		}
		if (!l->ctx || (oldest->ctx && l->used < oldest->used))
			oldest = l;
	}
	if (strlen(host) >= sizeof(oldest->host)) {
		cordon_err(err, 0, "tls: a host name longer than 255 bytes");
		return NULL;
	}
	X509 *x = leaf_cert(ca, host);
	SSL_CTX *ctx = x ? SSL_CTX_new(TLS_server_method()) : NULL;
	if (!ctx || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 || SSL_CTX_use_certificate(ctx, x) != 1 ||
	    SSL_CTX_use_PrivateKey(ctx, ca->leaf_key) != 1 || SSL_CTX_add1_chain_cert(ctx, ca->cert) != 1) {
		ssl_err(err, "mint a certificate");
		X509_free(x);
		SSL_CTX_free(ctx);
		return NULL;
	}
	X509_free(x);
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_free(oldest->ctx);
	oldest->ctx = ctx;
	snprintf(oldest->host, sizeof(oldest->host), "%s", host);
	oldest->used = ++ca->clock;
	return ctx;
}

/* network.upstream_ca: a host file named by a policy, maybe a client's of
 * cordon serve (read by root). Opened without blocking (a FIFO or a device
 * never holds the caller), a regular file of at most TLS_CA_FILE_MAX bytes,
 * read into memory and parsed from there. */
static int load_ca_file(SSL_CTX *ctx, const char *path, cordon_error *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return cordon_err(err, errno, "tls: network.upstream_ca %s", path);
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > TLS_CA_FILE_MAX) {
		close(fd);
		return cordon_err(err, 0, "tls: network.upstream_ca %s: not a regular file of at most %d bytes",
				  path, TLS_CA_FILE_MAX);
	}
	char *b = malloc((size_t)st.st_size + 1);
	size_t n = 0;
	while (b && n < (size_t)st.st_size) {
		ssize_t r = read(fd, b + n, (size_t)st.st_size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (!b)
		return cordon_oom(err);
	BIO *bio = BIO_new_mem_buf(b, (int)n);
	STACK_OF(X509_INFO) *inf = bio ? PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL) : NULL;
	X509_STORE *store = SSL_CTX_get_cert_store(ctx);
	int added = 0;
	for (int i = 0; inf && i < sk_X509_INFO_num(inf); i++) {
		X509_INFO *xi = sk_X509_INFO_value(inf, i);
		if (xi->x509 && X509_STORE_add_cert(store, xi->x509) == 1)
			added++;
	}
	sk_X509_INFO_pop_free(inf, X509_INFO_free);
	BIO_free(bio);
	free(b);
	if (!added)
		return ssl_err(err, "load network.upstream_ca (no PEM certificate in it)");
	ERR_clear_error();
	return 0;
}

SSL_CTX *tls_upstream_ctx(const char *ca_file, cordon_error *err)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	if (ctx && ca_file && load_ca_file(ctx, ca_file, err) < 0) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	if (!ctx || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    (!ca_file && SSL_CTX_set_default_verify_paths(ctx) != 1) ||
	    SSL_CTX_set_alpn_protos(ctx, alpn_h1, sizeof(alpn_h1) - 1) != 0) {
		ssl_err(err, ca_file ? "network.upstream_ca" : "load the host's trust store");
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	return ctx;
}

SSL *tls_upstream_ssl(SSL_CTX *ctx, const char *host)
{
	SSL *s = SSL_new(ctx);
	unsigned char a[16];
	bool ip = inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1;
	if (!s)
		return NULL;
	if (ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s), host) != 1
	       : (SSL_set_tlsext_host_name(s, host) != 1 || SSL_set1_host(s, host) != 1)) {
		SSL_free(s);
		return NULL;
	}
	return s;
}

/* An opened leg's records through a BIO pair (tls.h): the SSL object has
 * one end, the proxy moves the other end's ring to and from the socket in
 * place (BIO_nwrite0/BIO_nread0: no copy), many records a syscall. */
int tls_pair(SSL *s, BIO **net, size_t ring)
{
	BIO *in = NULL;
	*net = NULL;
	if (BIO_new_bio_pair(&in, ring, net, ring) != 1)
		return -1;
	SSL_set_bio(s, in, in); /* s owns its end; *net is the caller's */
	return 0;
}

ssize_t tls_fill(int fd, BIO *net)
{
	char *p = NULL;
	ossl_ssize_t room = BIO_nwrite0(net, &p);
	if (room <= 0) {
		bool full = BIO_should_retry(net);
		ERR_clear_error();
		if (!full)
			return 0; /* written shut: the end was seen */
		errno = ENOBUFS;
		return -1;
	}
	ssize_t n = recv(fd, p, (size_t)room, MSG_DONTWAIT);
	if (n > 0)
		BIO_nwrite(net, &p, (int)n);
	else if (n == 0)
		BIO_shutdown_wr(net);
	return n;
}

int tls_flush(int fd, BIO *net, bool *moved)
{
	char *p = NULL;
	ossl_ssize_t n;
	while ((n = BIO_nread0(net, &p)) > 0) {
		ssize_t k = send(fd, p, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0)
			return errno == EAGAIN ? 0 : -1;
		BIO_nread(net, &p, (int)k);
		*moved = true;
		if (k < n)
			break;
	}
	return 0; /* (an empty ring queues no error: a handshake's stays) */
}

size_t tls_net_pending(BIO *net)
{
	return BIO_ctrl_pending(net);
}

bool tls_read_pending(SSL *s)
{
	return SSL_has_pending(s) || BIO_ctrl_pending(SSL_get_rbio(s));
}

void tls_net_free(BIO *net)
{
	BIO_free(net);
}

/* X509_verify_cert_error_string takes a long; ERR_error_string_n's buffer
 * is a size_t: as in the table. */
__attribute__((visibility("default"))) const struct tls_ops tls_module_ops = {
	.ca_new = tls_ca_new,
	.ca_free = tls_ca_free,
	.ca_pem = tls_ca_pem,
	.leaf_ctx = tls_leaf_ctx,
	.upstream_ctx = tls_upstream_ctx,
	.upstream_ssl = tls_upstream_ssl,
	.ctx_free = SSL_CTX_free,
	.ssl_new = SSL_new,
	.ssl_free = SSL_free,
	.pair = tls_pair,
	.fill = tls_fill,
	.flush = tls_flush,
	.net_pending = tls_net_pending,
	.read_pending = tls_read_pending,
	.net_free = tls_net_free,
	.set_accept_state = SSL_set_accept_state,
	.set_connect_state = SSL_set_connect_state,
	.do_handshake = SSL_do_handshake,
	.get_error = SSL_get_error,
	.read_ex = SSL_read_ex,
	.write_ex = SSL_write_ex,
	.shutdown = SSL_shutdown,
	.get_verify_result = SSL_get_verify_result,
	.verify_error_string = X509_verify_cert_error_string,
	.err_clear = ERR_clear_error,
	.err_peek = ERR_peek_error,
	.err_string_n = ERR_error_string_n,
};
