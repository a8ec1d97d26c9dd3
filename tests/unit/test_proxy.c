#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include "pxaddr.h"
#include "pxparse.h"
#include "unit.h"
#include "proxy.h"
#include "pxfixture.h"

static int parse(const char *s, struct proxy_request *r)
{
	return proxy_parse_request(s, strlen(s), r);
}

static void test_http(void **st)
{
	struct proxy_request r;
	assert_int_equal(parse("CONNECT api.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\nEARLY", &r), PR_OK);
	assert_int_equal(r.proto, PROTO_CONNECT);
	assert_string_equal(r.host, "api.example.com");
	assert_int_equal(r.port, 443);
	assert_int_equal(r.upstream.len, 5); /* early data passed on */
	buf_free(&r.upstream);
	assert_int_equal(parse("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n", &r), PR_OK);
	assert_string_equal(r.host, "2001:db8::1");
	buf_free(&r.upstream);
	assert_int_equal(parse("GET http://h.test/a/b?c HTTP/1.1\r\nHost: h.test\r\nProxy-Authorization: x\r\nConnection: keep-alive\r\n\r\n", &r), PR_OK);
	assert_int_equal(r.proto, PROTO_FORWARD);
	assert_int_equal(r.port, 80);
	buf_append(&r.upstream, "", 0);
	assert_string_equal(r.upstream.p, "GET /a/b?c HTTP/1.1\r\nHost: h.test\r\nConnection: close\r\n\r\n");
	buf_free(&r.upstream);
	const char *bad[] = {
		"CONNECT h.test HTTP/1.1\r\n\r\n",             /* no port */
		"CONNECT h.test:443x HTTP/1.1\r\n\r\n",        /* trailing garbage in the port */
		"CONNECT evil.test:443@ok.test HTTP/1.1\r\n\r\n",
		"CONNECT h.test:0 HTTP/1.1\r\n\r\n",
		"CONNECT h.test:70000 HTTP/1.1\r\n\r\n",
		"CONNECT 2001:db8::1:443 HTTP/1.1\r\n\r\n",    /* IPv6 without brackets */
		"GET http://user@evil.test/ HTTP/1.1\r\n\r\n", /* userinfo */
		"GET https://h.test/ HTTP/1.1\r\n\r\n",
		"GET /relative HTTP/1.1\r\n\r\n",
		"CONNECT h.test:443 HTTP/1.1 extra\r\n\r\n",
		"CONNECT h%2e:443 HTTP/1.1\r\n\r\n",
		"CONNECT h.test:443 SPDY/3\r\n\r\n",
		/* a bare LF or CR inside the header: a second Host for a
		 * lenient server, or an obs-fold after a bare LF */
		"GET http://h.test/ HTTP/1.1\r\nX-A: a\nHost: evil.test\r\n\r\n",
		"GET http://h.test/ HTTP/1.1\r\nX-A: a\n Host: evil.test\r\n\r\n",
		"GET http://h.test/ HTTP/1.1\r\nX-A: a\rHost: evil.test\r\n\r\n",
		"CONNECT h.test:443 HTTP/1.1\r\nX-A: a\nHost: evil.test\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (pxfix_rc_str(bad[i]) != PR_BAD)
			fail_msg("accepted: %s", bad[i]);
	}
	assert_int_equal(pxfix_rc_str("CONNECT h.test:443 HTTP/1.1\r\n"), PR_MORE);
	char big[PROXY_HDR_MAX + 10];
	memset(big, 'a', sizeof(big));
	assert_int_equal(pxfix_rc(big, sizeof(big)), PR_BAD);
}

static void test_socks(void **st)
{
	struct proxy_request r;
	const char ok4[] = "\x05\x01\x00" "\x05\x01\x00\x01\x7f\x00\x00\x01\x1f\x90";
	assert_int_equal(proxy_parse_request(ok4, sizeof(ok4) - 1, &r), PR_OK);
	assert_string_equal(r.host, "127.0.0.1");
	assert_int_equal(r.port, 8080);
	buf_free(&r.upstream);
	const char dom[] = "\x05\x01\x00" "\x05\x01\x00\x03\x06" "h.test" "\x01\xbb";
	assert_int_equal(proxy_parse_request(dom, sizeof(dom) - 1, &r), PR_OK);
	assert_string_equal(r.host, "h.test");
	assert_int_equal(r.port, 443);
	buf_free(&r.upstream);
	const char nul[] = "\x05\x01\x00" "\x05\x01\x00\x03\x06" "h\0test" "\x01\xbb";
	assert_int_equal(pxfix_rc(nul, sizeof(nul) - 1), PR_BADADDR);
	const char bind_[] = "\x05\x01\x00" "\x05\x02\x00\x01\x7f\x00\x00\x01\x1f\x90";
	assert_int_equal(pxfix_rc(bind_, sizeof(bind_) - 1), PR_BADCMD);
	const char auth[] = "\x05\x01\x02";
	assert_int_equal(pxfix_rc(auth, sizeof(auth) - 1), PR_NOAUTH);
	assert_int_equal(pxfix_rc(ok4, 6), PR_MORE);
}

static void test_rules(void **st)
{
	bool lit;
	assert_true(proxy_rule_matches("api.example.com:443", "API.example.com", 443, &lit));
	assert_false(lit);
	assert_false(proxy_rule_matches("api.example.com:443", "api.example.com", 80, NULL));
	assert_true(proxy_rule_matches("*.example.com:443", "a.b.example.com", 443, NULL));
	assert_false(proxy_rule_matches("*.example.com:443", "example.com", 443, NULL));
	assert_false(proxy_rule_matches("*.example.com:443", "evilexample.com", 443, NULL));
	assert_false(proxy_rule_matches("*.example.com:443", "example.com.evil.test", 443, NULL));
	assert_true(proxy_rule_matches("h.test:*", "h.test", 1, NULL));
	assert_true(proxy_rule_matches("127.0.0.1:8080", "127.0.0.1", 8080, &lit));
	assert_true(lit);
	assert_true(proxy_rule_matches("[::1]:80", "::1", 80, &lit));
	assert_true(lit);
	assert_false(proxy_rule_matches("127.0.0.1:8080", "localhost", 8080, NULL));
	/* The name localhost in a rule is the host's loopback, never a lookup. */
	assert_true(proxy_rule_matches("localhost:8080", "LOCALHOST", 8080, &lit));
	assert_true(lit);
	assert_true(proxy_rule_matches("localhost:8080", "127.0.0.1", 8080, &lit));
	assert_true(lit);
	assert_true(proxy_rule_matches("localhost:8080", "[::1]", 8080, &lit));
	assert_true(lit);
	assert_false(proxy_rule_matches("localhost:8080", "localhost", 8081, NULL));
	assert_false(proxy_rule_matches("localhost:8080", "evil.test", 8080, &lit));
	assert_false(lit);
}

static bool forbidden(const char *a)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	if (strchr(a, ':')) {
		((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
		inet_pton(AF_INET6, a, &((struct sockaddr_in6 *)&ss)->sin6_addr);
	} else {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		inet_pton(AF_INET, a, &((struct sockaddr_in *)&ss)->sin_addr);
	}
	return proxy_addr_forbidden((struct sockaddr *)&ss);
}

static void test_addresses(void **st)
{
	const char *no[] = {"127.0.0.1", "127.8.9.10", "10.1.2.3", "172.16.0.1", "172.31.255.255",
			    "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1",
			    "255.255.255.255", "::1", "::", "fe80::1", "fc00::1", "fd12::3",
			    "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1"};
	const char *yes[] = {"8.8.8.8", "93.184.216.34", "172.32.0.1", "100.128.0.1", "2606:4700::1111",
			     "::ffff:8.8.8.8"};
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (!forbidden(no[i]))
			fail_msg("%s allowed", no[i]);
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (forbidden(yes[i]))
			fail_msg("%s refused", yes[i]);
}

/* Issue 11: every class a name may not lead to, one row each, with the
 * neighbours just outside it that must stay reachable. */
static void test_address_classes(void **st)
{
	static const struct {
		const char *addr;
		bool refused;
	} t[] = {
		{"100.64.0.0", true},          {"100.127.255.255", true},   {"100.63.255.255", false},
		{"198.18.0.1", true},          {"198.19.255.255", true},    {"198.20.0.1", false},
		{"0.1.2.3", true},             {"240.0.0.1", true},         {"255.255.255.255", true},
		{"239.255.255.250", true},     {"192.0.0.170", true},       {"1.1.1.1", false},
		/* NAT64, well-known prefix: the embedded v4 decides */
		{"64:ff9b::127.0.0.1", true},  {"64:ff9b::169.254.169.254", true}, {"64:ff9b::10.0.0.1", true},
		{"64:ff9b::8.8.8.8", false},
		/* NAT64, local-use /48: at the /48 and the /96 positions */
		{"64:ff9b:1:7f00:1::", true},  {"64:ff9b:1::127.0.0.1", true}, {"64:ff9b:1::8.8.8.8", false},
		{"64:ff9b:1:a9fe:00:a9fe::", true},
		/* 6to4 */
		{"2002:7f00:1::1", true},      {"2002:a9fe:a9fe::", true},  {"2002:0808:0808::1", false},
		/* IPv4-compatible and IPv4-mapped */
		{"::127.0.0.1", true},         {"::10.1.2.3", true},        {"::8.8.8.8", false},
		{"::ffff:100.64.1.1", true},   {"::ffff:198.18.0.1", true}, {"::ffff:0.0.0.0", true},
		{"::ffff:1.1.1.1", false},
		/* site-local, ULA, link-local, multicast */
		{"fec0::1", true},             {"feff::1", true},           {"fc00::1", true},
		{"fdff:ffff::1", true},        {"fd00:ec2::254", true},     {"febf::1", true},
		{"ff05::2", true},             {"fe00::1", false},          {"2001:db9::1", false},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (forbidden(t[i].addr) != t[i].refused)
			fail_msg("%s: %s", t[i].addr, t[i].refused ? "allowed" : "refused");
	/* A rule naming such an address literally still matches it literally. */
	bool lit = false;
	assert_true(proxy_rule_matches("[64:ff9b::7f00:1]:80", "64:ff9b::127.0.0.1", 80, &lit));
	assert_true(lit);
	assert_true(proxy_rule_matches("100.64.0.1:80", "100.64.0.1", 80, &lit));
	assert_true(lit);
}

/* Issue 11: the request-target wins over the client's Host. */
static void test_host_rewritten(void **st)
{
	struct proxy_request r;
	assert_int_equal(parse("GET http://ok.test:8080/x HTTP/1.1\r\nAccept: */*\r\nHost: evil.test\r\nhost:evil2.test\r\n\r\n", &r), PR_OK);
	buf_append(&r.upstream, "", 0);
	assert_string_equal(r.upstream.p, "GET /x HTTP/1.1\r\nHost: ok.test:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n");
	buf_free(&r.upstream);
	assert_int_equal(parse("GET http://ok.test/ HTTP/1.1\r\n\r\n", &r), PR_OK);
	buf_append(&r.upstream, "", 0);
	assert_string_equal(r.upstream.p, "GET / HTTP/1.1\r\nHost: ok.test\r\nConnection: close\r\n\r\n");
	buf_free(&r.upstream);
	/* a folded line could smuggle a header past the filter */
	assert_int_equal(pxfix_rc_str("GET http://ok.test/ HTTP/1.1\r\nX-A: 1\r\n Host: evil.test\r\n\r\n"), PR_BAD);
	assert_int_equal(pxfix_rc_str("GET http://ok.test/ HTTP/1.1\r\nHost : evil.test\r\n\r\n"), PR_BAD);
	assert_int_equal(pxfix_rc_str("GET http://ok.test/ HTTP/1.1\r\nHost\t: evil.test\r\n\r\n"), PR_BAD);
	assert_int_equal(pxfix_rc_str("GET http://ok.test/ HTTP/1.1\r\nno colon here\r\n\r\n"), PR_BAD);
}

/* Issue 10/11: SOCKS4 is refused at once, and refused or unfinished
 * requests name their target as far as it was sent. */
static void test_partial_target(void **st)
{
	const char s4[] = "\x04\x01\x00\x50\x0a\x01\x02\x03user";
	assert_int_equal(pxfix_rc(s4, sizeof(s4) - 1), PR_BAD);
	static const struct {
		const char *in;
		size_t len;
		const char *out;
	} t[] = {
		{"\x04\x01\x00\x50\x0a\x01\x02\x03user", 12, "10.1.2.3:80"},
		{"\x04\x01", 2, "(incomplete socks4 request)"},
		{"\x05\x01\x00\x05\x01\x00\x03\x06h.test\x01", 15, "(incomplete socks5 request)"},
		{"\x05\x01\x00\x05\x02\x00\x03\x06h.test\x01\xbb", 16, "h.test:443"},
		{"CONNECT h.test:443 HTTP/1.1\r\nHo", 31, "h.test:443"},
		{"CONNECT evil.test:443@ok.test HTTP/1.1\r\n\r\n", 42, "evil.test:443@ok.test"},
		{"GET http://a.test/\x01x", 20, "http://a.test/?x"},
		{"garbage", 7, "garbage"},
		{"", 0, "(empty request)"},
		{"\r\n", 2, "(malformed request)"},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char out[300];
		proxy_partial_target(NULL, t[i].in, t[i].len, out, sizeof(out));
		if (strcmp(out, t[i].out) != 0)
			fail_msg("row %zu: got %s, want %s", i, out, t[i].out);
	}
}

/* A long target with a secret at its end: redacted in full before the
 * cut, so no prefix of the value is left; a SOCKS domain with spaces in
 * its secret is redacted before the spaces become '?'. */
static void test_partial_target_redacted(void **st)
{
	static const char sec[] = "SuperSecretValue123", sp[] = "Secret With Spaces 42";
	redactor *rd = pxfix_redactor(false, "S1", sec, "S2", sp, NULL);
	char req[600], out[300];
	snprintf(req, sizeof(req), "GET /%0187d%s HTTP/1.1\r\n\r\n", 0, sec);
	proxy_partial_target(rd, req, strlen(req), out, sizeof(out));
	assert_null(strstr(out, "SuperSecret"));
	assert_null(strstr(out, "Super"));
	char so[64] = "\x05\x01\x00\x05\x01\x00\x03";
	size_t n = 7;
	so[n++] = (char)strlen(sp);
	memcpy(so + n, sp, strlen(sp));
	n += strlen(sp);
	so[n++] = 1;
	so[n++] = (char)0xbb;
	proxy_partial_target(rd, so, n, out, sizeof(out));
	assert_string_equal(out, "[REDACTED:S2]:443");
	redactor_free(rd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http), cmocka_unit_test(test_socks), cmocka_unit_test(test_rules),
		cmocka_unit_test(test_addresses), cmocka_unit_test(test_address_classes),
		cmocka_unit_test(test_host_rewritten), cmocka_unit_test(test_partial_target),
		cmocka_unit_test(test_partial_target_redacted),
	};
	return cmocka_run_group_tests_name("proxy", tests, NULL, NULL);
}
