/* Issue 16 step 2: the run's CA and the leaves minted from it, checked by
 * a real handshake in memory (a BIO pair): a client that trusts only the
 * run's CA accepts the leaf for the name it asked, gets ALPN http/1.1, and
 * refuses a leaf for another name. */
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include "unit.h"
#include "tls.h"

/* Handshake a client (trusting pem only) against server ctx, asking for
 * name. Returns the client's verify result, or -1 if the handshake failed. */
static long handshake(SSL_CTX *server, const char *pem, size_t pem_len, const char *name, char *alpn,
		      size_t alpn_sz)
{
	SSL_CTX *cctx = tls_upstream_ctx(NULL, NULL);
	assert_non_null(cctx);
	X509_STORE *st = X509_STORE_new();
	BIO *b = BIO_new_mem_buf(pem, (int)pem_len);
	X509 *ca = PEM_read_bio_X509(b, NULL, NULL, NULL);
	assert_non_null(ca);
	X509_STORE_add_cert(st, ca);
	SSL_CTX_set_cert_store(cctx, st); /* only the run's CA */
	SSL *c = tls_upstream_ssl(cctx, name), *s = SSL_new(server);
	BIO *bc, *bs;
	assert_int_equal(BIO_new_bio_pair(&bc, 0, &bs, 0), 1);
	SSL_set_bio(c, bc, bc);
	SSL_set_bio(s, bs, bs);
	SSL_set_connect_state(c);
	SSL_set_accept_state(s);
	int rc = 0, rs = 0;
	for (int i = 0; i < 20 && (rc != 1 || rs != 1); i++) {
		if (rc != 1)
			rc = SSL_do_handshake(c);
		if (rs != 1)
			rs = SSL_do_handshake(s);
		if ((rc <= 0 && SSL_get_error(c, rc) == SSL_ERROR_SSL) || (rs <= 0 && SSL_get_error(s, rs) == SSL_ERROR_SSL))
			break;
	}
	long v = rc == 1 ? SSL_get_verify_result(c) : -1;
	const unsigned char *a;
	unsigned al = 0;
	if (rc == 1)
		SSL_get0_alpn_selected(c, &a, &al);
	snprintf(alpn, alpn_sz, "%.*s", (int)al, al ? (const char *)a : "");
	ERR_clear_error();
	SSL_free(c);
	SSL_free(s);
	SSL_CTX_free(cctx);
	X509_free(ca);
	BIO_free(b);
	return v;
}

static void test_ca_and_leaves(void **st)
{
	struct tls_ca *ca = NULL;
	cordon_error err = {0};
	assert_int_equal(tls_ca_new(&ca, 3600, &err), 0);
	size_t len;
	const char *pem = tls_ca_pem(ca, &len);
	assert_non_null(strstr(pem, "BEGIN CERTIFICATE"));
	assert_null(strstr(pem, "PRIVATE")); /* the key is never written out */
	SSL_CTX *a = tls_leaf_ctx(ca, "api.example.test", &err);
	assert_non_null(a);
	assert_ptr_equal(tls_leaf_ctx(ca, "API.example.test", &err), a); /* cached */
	char alpn[32];
	assert_int_equal(handshake(a, pem, len, "api.example.test", alpn, sizeof(alpn)), X509_V_OK);
	assert_string_equal(alpn, "http/1.1");
	/* the leaf for one name does not pass for another */
	assert_int_equal(handshake(a, pem, len, "other.example.test", alpn, sizeof(alpn)), -1);
	SSL_CTX *ip = tls_leaf_ctx(ca, "127.0.0.1", &err);
	assert_non_null(ip);
	assert_int_equal(handshake(ip, pem, len, "127.0.0.1", alpn, sizeof(alpn)), X509_V_OK);
	/* another run's CA is not trusted */
	struct tls_ca *other = NULL;
	assert_int_equal(tls_ca_new(&other, 3600, &err), 0);
	size_t olen;
	const char *opem = tls_ca_pem(other, &olen);
	assert_int_equal(handshake(a, opem, olen, "api.example.test", alpn, sizeof(alpn)), -1);
	/* the cache is bounded */
	for (int i = 0; i < TLS_LEAF_CACHE + 5; i++) {
		char h[64];
		snprintf(h, sizeof(h), "h%d.example.test", i);
		assert_non_null(tls_leaf_ctx(ca, h, &err));
	}
	tls_ca_free(other);
	tls_ca_free(ca);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ca_and_leaves),
	};
	return cmocka_run_group_tests_name("tls", tests, NULL, NULL);
}
