/* lib/dns.c: queries as glibc's res_mkquery writes them, what is refused,
 * and the answers byte by byte. */
#include "unit.h"
#include <arpa/nameser.h>
#include <resolv.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "dns.h"
#include "sup-dns.h"

static int mkq(const char *name, int type, uint8_t *out)
{
	int n = res_mkquery(QUERY, name, C_IN, type, NULL, 0, NULL, out, DNS_MSG_MAX);
	assert_true(n > 12);
	return n;
}

static void test_parse(void **st)
{
	uint8_t m[DNS_MSG_MAX];
	struct dns_query q;
	int n = mkq("Api.Example.COM", T_A, m);
	assert_int_equal(dns_parse_query(m, (size_t)n, &q), 0);
	assert_string_equal(q.name, "api.example.com");
	assert_int_equal(q.qtype, DNS_T_A);
	assert_int_equal(q.qclass, 1);
	assert_int_equal(q.id, (m[0] << 8) | m[1]);
	assert_false(q.odd);
	assert_int_equal(q.qlen, (size_t)n - 12);
	n = mkq("db.internal.", T_AAAA, m);
	assert_int_equal(dns_parse_query(m, (size_t)n, &q), 0);
	assert_string_equal(q.name, "db.internal");
	assert_int_equal(q.qtype, DNS_T_AAAA);
	/* the root, and an odd byte */
	n = mkq(".", T_A, m);
	assert_int_equal(dns_parse_query(m, (size_t)n, &q), 0);
	assert_string_equal(q.name, "");
	n = mkq("a\\032b.example", T_A, m);
	assert_int_equal(dns_parse_query(m, (size_t)n, &q), 0);
	assert_string_equal(q.name, "a?b.example");
	assert_true(q.odd);
	/* the longest name: 253 characters */
	char longest[254];
	memset(longest, 'a', 253);
	for (int i = 63; i < 253; i += 64)
		longest[i] = '.';
	longest[253] = '\0';
	n = mkq(longest, T_A, m);
	assert_int_equal(dns_parse_query(m, (size_t)n, &q), 0);
	assert_string_equal(q.name, longest);
}

static void test_refused(void **st)
{
	uint8_t m[DNS_MSG_MAX + 16];
	struct dns_query q;
	int n = mkq("example.com", T_A, m);
	uint8_t c[DNS_MSG_MAX + 16];
	/* short, a response: nothing to answer */
	assert_int_equal(dns_parse_query(m, 11, &q), -1);
	memcpy(c, m, (size_t)n);
	c[2] |= 0x80;
	assert_int_equal(dns_parse_query(c, (size_t)n, &q), -1);
	/* an opcode other than QUERY */
	memcpy(c, m, (size_t)n);
	c[2] |= 2 << 3;
	assert_int_equal(dns_parse_query(c, (size_t)n, &q), DNS_NOTIMP);
	assert_int_equal(q.qlen, 0);
	/* two questions, an answer, truncated in the name or the type */
	memcpy(c, m, (size_t)n);
	c[5] = 2;
	assert_int_equal(dns_parse_query(c, (size_t)n, &q), DNS_FORMERR);
	memcpy(c, m, (size_t)n);
	c[7] = 1;
	assert_int_equal(dns_parse_query(c, (size_t)n, &q), DNS_FORMERR);
	for (int k = 12; k < n; k++)
		assert_int_equal(dns_parse_query(m, (size_t)k, &q), DNS_FORMERR);
	/* a compression pointer in the question, a label over 63 */
	memcpy(c, m, (size_t)n);
	c[12] = 0xc0;
	assert_int_equal(dns_parse_query(c, (size_t)n, &q), DNS_FORMERR);
	memcpy(c, m, (size_t)n);
	c[12] = 64;
	assert_int_equal(dns_parse_query(c, (size_t)n, &q), DNS_FORMERR);
	/* a name over 253 characters (wire: 4 labels of 63 and one of 2) */
	uint8_t big[300] = {0};
	size_t o = 12;
	big[5] = 1;
	for (int i = 0; i < 4; i++) {
		big[o++] = 63;
		memset(big + o, 'a', 63);
		o += 63;
	}
	big[o++] = 2;
	big[o++] = 'a';
	big[o++] = 'a';
	big[o++] = 0;
	big[o + 1] = 1, big[o + 3] = 1;
	assert_int_equal(dns_parse_query(big, o + 4, &q), DNS_FORMERR);
	/* another class; more than 512 bytes */
	memcpy(c, m, (size_t)n);
	c[n - 1] = 3;
	assert_int_equal(dns_parse_query(c, (size_t)n, &q), DNS_REFUSED);
	memcpy(c, m, (size_t)n);
	assert_int_equal(dns_parse_query(c, DNS_MSG_MAX + 1, &q), DNS_FORMERR);
}

static void test_answer(void **st)
{
	uint8_t m[DNS_MSG_MAX], a[DNS_MSG_MAX];
	struct dns_query q;
	int n = mkq("db.internal", T_A, m);
	assert_int_equal(dns_parse_query(m, (size_t)n, &q), 0);
	const uint8_t v4[4] = {198, 18, 0, 1};
	int len = dns_build_answer(&q, DNS_NOERROR, v4, 4, 5, a, sizeof(a));
	assert_int_equal(len, 12 + (n - 12) + 16);
	assert_int_equal(a[0], m[0]);
	assert_int_equal(a[1], m[1]);
	assert_int_equal(a[2], 0x80 | 0x04 | 0x01);
	assert_int_equal(a[3], 0x80);
	assert_int_equal(a[5], 1);
	assert_int_equal(a[7], 1);
	assert_memory_equal(a + 12, m + 12, (size_t)n - 12);
	const uint8_t rr[] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 5, 0, 4, 198, 18, 0, 1};
	assert_memory_equal(a + n, rr, sizeof(rr));
	/* glibc reads it back */
	ns_msg h;
	ns_rr r;
	assert_int_equal(ns_initparse(a, len, &h), 0);
	assert_int_equal(ns_parserr(&h, ns_s_an, 0, &r), 0);
	assert_string_equal(ns_rr_name(r), "db.internal");
	assert_int_equal(ns_rr_rdlen(r), 4);
	/* an address that does not fit the type is left out; NXDOMAIN */
	const uint8_t v6[16] = {0xfd, 0x63};
	len = dns_build_answer(&q, DNS_NOERROR, v6, 16, 5, a, sizeof(a));
	assert_int_equal(len, n);
	assert_int_equal(a[7], 0);
	len = dns_build_answer(&q, DNS_NXDOMAIN, NULL, 0, 0, a, sizeof(a));
	assert_int_equal(len, n);
	assert_int_equal(a[3] & 0x0f, DNS_NXDOMAIN);
	/* AAAA */
	n = mkq("db.internal", T_AAAA, m);
	assert_int_equal(dns_parse_query(m, (size_t)n, &q), 0);
	len = dns_build_answer(&q, DNS_NOERROR, v6, 16, 5, a, sizeof(a));
	assert_int_equal(len, n + 28);
	assert_memory_equal(a + n + 12, v6, 16);
	/* too small a buffer; a FORMERR without its question */
	assert_int_equal(dns_build_answer(&q, DNS_NOERROR, v6, 16, 5, a, (size_t)n + 27), -1);
	m[12] = 0xc0;
	assert_int_equal(dns_parse_query(m, (size_t)n, &q), DNS_FORMERR);
	assert_int_equal(dns_build_answer(&q, DNS_FORMERR, NULL, 0, 0, a, sizeof(a)), 12);
	assert_int_equal(a[5], 0);
	assert_int_equal(a[3] & 0x0f, DNS_FORMERR);
}

/* sup-dns.c's pure parts: which names are declared, the synthetic
 * addresses, and back from an address to its name. */
static void test_declared(void **st)
{
	strv allow = {0};
	const char *rules[] = {"db.internal:8080", "*.example.com:443", "svc.test:*", "127.0.0.1:9", "[::1]:22"};
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		assert_int_equal(strv_push(&allow, rules[i]), 0);
	assert_true(dnsd_declared(&allow, "db.internal"));
	assert_true(dnsd_declared(&allow, "api.example.com"));
	assert_true(dnsd_declared(&allow, "a.b.example.com"));
	assert_true(dnsd_declared(&allow, "svc.test"));
	assert_false(dnsd_declared(&allow, "example.com"));
	assert_false(dnsd_declared(&allow, "db.internal.evil"));
	assert_false(dnsd_declared(&allow, "evilexample.com"));
	assert_false(dnsd_declared(&allow, ""));
	strv_free(&allow);
	uint8_t a[16];
	char t[INET6_ADDRSTRLEN];
	dnsd_synth_v4(0, a);
	assert_string_equal(inet_ntop(AF_INET, a, t, sizeof(t)), "198.18.0.1");
	dnsd_synth_v4(DNSD_MAX_NAMES - 1, a);
	assert_string_equal(inet_ntop(AF_INET, a, t, sizeof(t)), "198.18.16.0");
	dnsd_synth_v6(0, a);
	assert_string_equal(inet_ntop(AF_INET6, a, t, sizeof(t)), "fd63:6f72:646e::1");
	/* a table with two names; addresses map back, others do not */
	struct run_report rep;
	memset(&rep, 0, sizeof(rep));
	struct dnsd *d = NULL;
	strv none = {0};
	cordon_error e;
	assert_int_equal(dnsd_new(&d, &none, &rep, -1, &e), 0);
	struct sockaddr_in s4 = {.sin_family = AF_INET};
	dnsd_synth_v4(0, (uint8_t *)&s4.sin_addr);
	assert_null(dnsd_name_of(d, (struct sockaddr *)&s4, sizeof(s4)));
	dnsd_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse), cmocka_unit_test(test_refused), cmocka_unit_test(test_answer),
		cmocka_unit_test(test_declared),
	};
	return cmocka_run_group_tests_name("dns", tests, NULL, NULL);
}
