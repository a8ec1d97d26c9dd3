/* Issue 16: method/path rules, HTTP/1.1 framing, and the proxy's reading of
 * requests on a connection (pure code: no sockets). */
#include <arpa/inet.h>
#include <stdio.h>
#include "pxhttp-resp.h"
#include "redact-stream.h"
#include "unit.h"
#include "http1.h"
#include "pxfixture.h"

static void test_path_patterns(void **st)
{
	assert_true(pxrule_path_matches("/repos/acme/**", "/repos/acme"));
	assert_true(pxrule_path_matches("/repos/acme/**", "/repos/acme/x/y?q=1"));
	assert_true(pxrule_path_matches("/repos/*/issues", "/repos/acme/issues"));
	assert_false(pxrule_path_matches("/repos/*/issues", "/repos/a/b/issues"));
	assert_false(pxrule_path_matches("/repos/acme/**", "/repos/acmex"));
	assert_true(pxrule_path_matches("/**/x", "/a/b/c/x"));
	assert_true(pxrule_path_matches("/", "/?a=b"));
	assert_false(pxrule_path_matches("/", "/a"));
	/* what a server would resolve elsewhere matches nothing */
	assert_false(pxrule_path_matches("/pub/**", "/pub/../priv"));
	assert_false(pxrule_path_matches("/pub/**", "/pub/%2e%2E/priv"));
	assert_false(pxrule_path_matches("/pub/**", "/pub/a%2fb"));
	assert_false(pxrule_path_matches("/pub/**", "/pub\\..\\priv"));
	assert_false(pxrule_path_matches("/pub/**", "/pub/%zz"));
	/* matched on the part before '#' but forwarded whole; "..;" is ".." to Tomcat */
	assert_false(pxrule_path_matches("/pub/**", "/pub/a.txt#/../../priv/b.txt"));
	assert_false(pxrule_path_matches("/pub/**", "/pub/..;/priv/b.txt"));
	assert_false(pxrule_path_matches("/pub/**", "/pub/.;x/b.txt"));
	assert_false(pxrule_path_matches("/pub/**", "/pub/%2e%2e;x/priv"));
	assert_true(pxrule_path_matches("/pub/**", "/pub/a;v=1/b"));
	assert_false(pxrule_path_matches("/pub/**", "*"));
	assert_true(pxrule_path_matches("/pub/a", "/pub/%61"));
	assert_non_null(pxrule_pattern_error("/a/**x"));
	assert_non_null(pxrule_pattern_error("a"));
	assert_non_null(pxrule_pattern_error("/a//b"));
	assert_non_null(pxrule_pattern_error("/a/../b"));
	assert_non_null(pxrule_pattern_error("/a?b"));
	assert_null(pxrule_pattern_error("/a/*/**"));
}

static struct net_rule mk(const char *methods, const char *paths, bool upgrade)
{
	struct net_rule r = {.host = (char *)"h:443", .upgrade = upgrade};
	char tmp[200];
	for (int k = 0; k < 2; k++) {
		const char *src = k ? paths : methods;
		if (!src)
			continue;
		snprintf(tmp, sizeof(tmp), "%s", src);
		for (char *s = strtok(tmp, " "); s; s = strtok(NULL, " "))
			strv_push(k ? &r.paths : &r.methods, s);
	}
	return r;
}

static void test_within(void **st)
{
	struct net_rule c = mk("GET HEAD", "/repos/acme/**", false);
	struct net_rule t1 = mk("GET", "/repos/acme/x/** /repos/acme/* /repos/acme", false);
	struct net_rule t2 = mk("GET POST", "/repos/acme/**", false);
	struct net_rule t3 = mk("GET", "/repos/**", false);
	struct net_rule t4 = mk(NULL, "/repos/acme/x", false);
	struct net_rule t5 = mk("GET", "/repos/acme/x", true);
	struct net_rule t6 = mk("GET", "/**/acme/x", false);
	assert_true(pxrule_within(&t1, &c));
	assert_false(pxrule_within(&t2, &c));
	assert_false(pxrule_within(&t3, &c));
	assert_false(pxrule_within(&t4, &c)); /* any method */
	assert_false(pxrule_within(&t5, &c)); /* upgrade */
	assert_false(pxrule_within(&t6, &c));
	struct net_rule any = mk(NULL, NULL, true);
	assert_true(pxrule_within(&t2, &any));
	assert_false(pxrule_within(&any, &c));
	assert_true(pxrule_admits(&c, "GET", "/repos/acme/a?x", false));
	assert_false(pxrule_admits(&c, "GET", "/repos/acme/a", true));
	assert_false(pxrule_admits(&c, "POST", "/repos/acme/a", false));
	char d[200];
	pxrule_describe(&c, d, sizeof(d));
	assert_string_equal(d, "h:443 methods GET,HEAD paths /repos/acme/**");
	struct net_rule *all[] = {&c, &t1, &t2, &t3, &t4, &t5, &t6, &any};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		strv_free(&all[i]->methods);
		strv_free(&all[i]->paths);
	}
}

static void test_add_validates(void **st)
{
	struct net_rules rs = {0};
	cordon_error err = {0};
	strv m = {0}, p = {0};
	strv_push(&m, "get");
	strv_push(&p, "/x/**");
	assert_int_equal(pxrule_add(&rs, "h:80", &m, &p, false, &err), 0);
	assert_string_equal(rs.v[0].methods.v[0], "GET");
	assert_int_equal(pxrule_add(&rs, "h:80", NULL, NULL, true, &err), 0);
	assert_int_equal(pxrule_add(&rs, "h:80", NULL, NULL, true, &err), 0);
	assert_int_equal(rs.n, 2); /* the unrestricted twin once */
	strv_push(&m, "G\x01T");
	assert_int_equal(pxrule_add(&rs, "h:80", &m, NULL, false, &err), -1);
	assert_non_null(strstr(err.msg, "not an HTTP method"));
	strv_free(&m);
	strv_free(&p);
	pxrule_free(&rs);
}

/* Feed a whole stream, collecting what each event passes on. */
static int run(struct h1 *p, const char *s, int *heads, int *ends, size_t *body)
{
	size_t off = 0, n = strlen(s);
	*heads = *ends = 0;
	*body = 0;
	for (;;) {
		size_t used;
		int r = h1_feed(p, s + off, n - off, &used);
		off += used;
		if (r == H1_ERR)
			return -1;
		if (r == H1_HEAD) {
			(*heads)++;
			h1_body_for(p, p->response ? "GET" : NULL);
		} else if (r == H1_END) {
			(*ends)++;
			*body += used;
		} else if (r == H1_DATA) {
			*body += used;
		} else if (off >= n) {
			return 0;
		}
	}
}

static void test_http1_framing(void **st)
{
	struct h1 *p = calloc(1, sizeof(*p));
	int h, e;
	size_t b;
	assert_int_equal(run(p, "GET / HTTP/1.1\r\nHost: a\r\n\r\nPOST /x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
				"PUT /y HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=1\r\nabc\r\n0\r\nT: v\r\n\r\n"
				"GET /z HTTP/1.1\r\n\r\n", &h, &e, &b), 0);
	assert_int_equal(h, 4);
	assert_int_equal(e, 4); /* a body-less message ends on the feed after its head */
	assert_int_equal(b, 3 + strlen("3;x=1\r\nabc\r\n0\r\nT: v\r\n\r\n"));
	static const char *const bad[] = {
		"GET / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
		"GET / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
		"GET / HTTP/1.1\r\nX: a\nHost: b\r\n\r\n",
		"GET / HTTP/1.1\r\nHost : b\r\n\r\n",
		"GET / HTTP/1.1\r\n folded\r\n\r\n",
		"GET  / HTTP/1.1\r\n\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\naXY",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(p, 0, sizeof(*p));
		assert_int_equal(run(p, bad[i], &h, &e, &b), -1);
	}
	/* responses: 100 then 200 with a length; HEAD-like and 204 have none */
	memset(p, 0, sizeof(*p));
	p->response = true;
	assert_int_equal(run(p, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
				"HTTP/1.1 204 No Content\r\n\r\n", &h, &e, &b), 0);
	assert_int_equal(h, 3);
	assert_int_equal(b, 2);
	/* to EOF */
	memset(p, 0, sizeof(*p));
	p->response = true;
	assert_int_equal(run(p, "HTTP/1.0 200 OK\r\n\r\nall of it", &h, &e, &b), 0);
	assert_int_equal(h1_eof(p), H1_END);
	free(p);
}

static void test_pxhttp_each_request_checked(void **st)
{
	struct pxfix *f = *st;
	struct run_report *rep = &f->rep;
	cordon_error err = {0};
	strv m = {0}, p = {0};
	strv_push(&m, "GET");
	strv_push(&p, "/pub/**");
	assert_int_equal(pxrule_add(&f->rs, "127.0.0.1:8080", &m, &p, false, &err), 0);
	struct pxhttp *h = pxfix_open_at(f, "127.0.0.1", 8080, "127.0.0.1:8080", true, 0);
	buf *up = &f->up, *down = &f->down;
	const char *req = "GET http://127.0.0.1:8080/pub/a?k=v HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nProxy-Authorization: x\r\n\r\n"
			  "GET http://127.0.0.1:8080/priv HTTP/1.1\r\n\r\n";
	assert_int_equal(pxhttp_client(h, req, strlen(req), up, down), 0);
	assert_string_equal(pxfix_str(up), "GET /pub/a?k=v HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nConnection: close\r\n\r\n");
	assert_int_equal(down->len, 0); /* the refusal waits for the first response */
	const char *resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
	assert_int_equal(pxhttp_upstream(h, resp, strlen(resp), down), 0);
	assert_int_equal(rep->net.nreq, 1); /* the second waited, unread, for the first's answer */
	up->len = 0;
	assert_int_equal(pxhttp_client(h, NULL, 0, up, down), 0); /* as the proxy does once an answer ends */
	assert_int_equal(up->len, 0);
	assert_int_equal(buf_append(down, "", 1), 0);
	assert_non_null(strstr(down->p, "ok"));
	assert_non_null(strstr(down->p, "HTTP/1.1 403 Forbidden"));
	assert_non_null(strstr(down->p, "cordon: GET 127.0.0.1:8080/priv: no rule of network.allow admits it "
				       "(127.0.0.1:8080 methods GET paths /pub/**)"));
	assert_true(h->done);
	assert_int_equal(rep->net.nreq, 2);
	assert_string_equal(rep->net.req[0].path, "/pub/a");
	assert_int_equal(rep->net.req[0].status, 200);
	assert_int_equal(rep->net.req[1].status, 403);
	assert_int_equal(rep->ndenials, 1);
	assert_string_equal(rep->denials[0].target, "GET 127.0.0.1:8080/priv");
	/* another origin on the connection is refused too */
	pxhttp_free(h);
	pxfix_open_at(f, "127.0.0.1", 8080, "127.0.0.1:8080", true, 0);
	const char *other = "GET http://127.0.0.2:8080/pub/a HTTP/1.1\r\n\r\n";
	assert_int_equal(pxhttp_client(h, other, strlen(other), up, down), 0);
	assert_int_equal(up->len, 0);
	assert_true(h->done);
	pxhttp_free(h);
	strv_free(&m);
	strv_free(&p);
}

/* Injection: the value swapped in for the placeholder in a header, inside
 * Basic credentials and (when asked) the query; the placeholder refused on
 * a connection its secret does not go to; an echoed value handed back as
 * the placeholder. */
static void test_pxhttp_injects(void **st)
{
	struct pxfix *f = *st;
	struct run_report *rep = &f->rep;
	pxfix_allow(f, "api.example:443");
	pxfix_allow(f, "other.example:443");
	struct pxhttp *h = pxfix_open(f, PXF_INJECT);
	buf *up = &f->up, *down = &f->down;
	/* "u:ph_0123" in Basic is dTpwaF8wMTIz; "u:s3cr3t-value" is dTpzM2NyM3QtdmFsdWU= */
	const char *req = "GET /x?k=ph_0123 HTTP/1.1\r\nHost: api.example\r\nX-Key: a ph_0123 b\r\n"
			  "Authorization: Basic dTpwaF8wMTIz\r\n\r\n";
	assert_int_equal(pxhttp_client(h, req, strlen(req), up, down), 0);
	assert_string_equal(pxfix_str(up), "GET /x?k=s3cr3t-value HTTP/1.1\r\nAccept-Encoding: identity\r\nHost: api.example\r\nX-Key: a s3cr3t-value b\r\n"
				  "Authorization: Basic dTpzM2NyM3QtdmFsdWU=\r\nConnection: keep-alive\r\n\r\n");
	const char *resp = "HTTP/1.1 200 OK\r\nX-Echo: s3cr3t-value\r\nContent-Length: 0\r\n\r\n";
	assert_int_equal(pxhttp_upstream(h, resp, strlen(resp), down), 0);
	buf_append(down, "", 1);
	assert_null(strstr(down->p, "s3cr3t"));
	assert_non_null(strstr(down->p, "X-Echo: ph_0123"));
	assert_int_equal(rep->net.req[0].injected, 1);
	assert_int_equal(rep->net.ninj, 1);
	pxhttp_free(h);
	/* elsewhere, in Basic credentials only: refused, a denial of kind secret */
	pxfix_open_at(f, "other.example", 443, "other.example:443", false, PXF_TLS | PXF_SECRET);
	const char *leak = "GET / HTTP/1.1\r\nAuthorization: Basic dTpwaF8wMTIz\r\n\r\n";
	assert_int_equal(pxhttp_client(h, leak, strlen(leak), up, down), 0);
	assert_int_equal(up->len, 0);
	assert_true(h->done);
	assert_string_equal(rep->denials[rep->ndenials - 1].kind, "secret");
	assert_string_equal(rep->denials[rep->ndenials - 1].target, "TOK -> other.example:443");
	pxhttp_free(h);
	/* in a body, split across reads */
	pxfix_open_at(f, "other.example", 443, "other.example:443", false, PXF_TLS | PXF_SECRET);
	const char *b1 = "POST / HTTP/1.1\r\nContent-Length: 12\r\n\r\nxxph_0", *b2 = "123xx";
	assert_int_equal(pxhttp_client(h, b1, strlen(b1), up, down), 0);
	assert_int_equal(pxhttp_client(h, b2, strlen(b2), up, down), -1);
	buf_append(up, "", 1);
	assert_null(strstr(up->p, "123"));
	pxhttp_free(h);
}

/* Bodies that echo the value: it goes back as the placeholder, also split
 * across reads and chunks and in hex; a Content-Length body is made chunked
 * for an HTTP/1.1 client, runs to the close for an HTTP/1.0 one, and a
 * chunked body is re-chunked (the next response on the connection is read
 * right). */
static void test_pxhttp_response_bodies(void **st)
{
	struct pxfix *f = *st;
	struct run_report *rep = &f->rep;
	pxfix_allow(f, "api.example:443");
	struct pxhttp *h = pxfix_open(f, PXF_INJECT);
	buf *up = &f->up, *down = &f->down;
	const char *req = "GET /a HTTP/1.1\r\nHost: api.example\r\nAccept-Encoding: gzip\r\nX-Key: ph_0123\r\n\r\n"
			  "GET /b HTTP/1.1\r\nHost: api.example\r\nAccept-Encoding: gzip\r\n\r\n";
	assert_int_equal(pxhttp_client(h, req, strlen(req), up, down), 0);
	buf_append(up, "", 1);
	/* the request with the value asks for no compression; the other keeps
	 * it, and goes once the first is answered */
	assert_string_equal(up->p, "GET /a HTTP/1.1\r\nAccept-Encoding: identity\r\nHost: api.example\r\nX-Key: s3cr3t-value\r\nConnection: keep-alive\r\n\r\n");
	/* hex of "s3cr3t-value" is 7333637233742d76616c7565 */
	const char *r1[] = {"HTTP/1.1 200 OK\r\nContent-Length: 44\r\n\r\nk=s3cr3", "t-value h=7333637233742d76616c7",
			    "565 e\n", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nx s3c\r\n",
			    "9\r\nr3t-value\r\n2\r\n!\n\r\n0\r\nT: s3cr3t-value\r\n\r\n"};
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(pxhttp_upstream(h, r1[i], strlen(r1[i]), down), 0);
		if (i == 2) {
			up->len = 0;
			assert_int_equal(pxhttp_client(h, NULL, 0, up, down), 0);
			assert_string_equal(pxfix_str(up), "GET /b HTTP/1.1\r\nHost: api.example\r\nAccept-Encoding: gzip\r\nConnection: keep-alive\r\n\r\n");
		}
	}
	assert_string_equal(pxfix_str(down), "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
				    "2\r\nk=\r\n" "a\r\nph_0123 h=\r\n" "a\r\nph_0123 e\n\r\n" "0\r\n\r\n"
				    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
				    "2\r\nx \r\n" "9\r\nph_0123!\n\r\n" "0\r\nT: ph_0123\r\n\r\n");
	assert_int_equal(h->nq, 0);
	assert_false(h->done);
	assert_int_equal(rep->net.req[0].down, strlen(r1[0]) + strlen(r1[1]) + strlen(r1[2]));
	pxhttp_free(h);
	/* HTTP/1.0: no chunks; the body runs to the close */
	pxfix_open(f, PXF_INJECT);
	const char *req0 = "GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
	const char *r0 = "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 14\r\n\r\n[s3cr3t-value]"
			 "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx"; /* nothing after the close-framed body */
	assert_int_equal(pxhttp_client(h, req0, strlen(req0), up, down), 0);
	assert_int_equal(pxhttp_upstream(h, r0, strlen(r0), down), 0);
	assert_string_equal(pxfix_str(down), "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n[ph_0123]");
	assert_true(h->done);
	pxhttp_free(h);
	/* a body to EOF keeps its framing; what was held comes at the end */
	pxfix_open(f, PXF_INJECT);
	const char *re = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nv=s3cr3t-value\ns3cr";
	assert_int_equal(pxhttp_client(h, req0, strlen(req0), up, down), 0);
	assert_int_equal(pxhttp_upstream(h, re, strlen(re), down), 0);
	pxhttp_upstream_eof(h, down);
	assert_string_equal(pxfix_str(down), "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nv=ph_0123\ns3cr");
	pxhttp_free(h);
}

/* Review 4 F1: a response the parser cannot read (two Content-Lengths,
 * broken chunk framing after half the value, an answer to no request, a
 * body after a HEAD answer) with a secret injected: nothing of it (held or
 * raw) reaches the client, which gets a 502 if nothing of that response went
 * out; the connection ends and no later request is read (or injected). */
static void test_pxhttp_unreadable_response(void **st)
{
	struct pxfix *f = *st;
	struct run_report *rep = &f->rep;
	pxfix_allow(f, "api.example:443");
	struct pxhttp *h = f->h;
	buf *up = &f->up, *down = &f->down;
	static const struct {
		const char *method, *resp;
		bool b502;
	} c[] = {
		{"GET", "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nContent-Length: 1\r\n\r\ns3cr3t-value", true},
		{"GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
			"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\ns3cr3t-value", false},
		{"GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\ns3cr3t\r\nZZ\r\n-value", false},
		{"HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 16\r\n\r\nX: s3cr3t-value\r\n\r\n", false},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		pxfix_open(f, PXF_INJECT);
		char req[200];
		snprintf(req, sizeof(req), "%s / HTTP/1.1\r\nX-Key: ph_0123\r\n\r\n", c[i].method);
		assert_int_equal(pxhttp_client(h, req, strlen(req), up, down), 0);
		uint64_t denied = rep->net.denied;
		assert_int_equal(pxhttp_upstream(h, c[i].resp, strlen(c[i].resp), down), 0);
		assert_true(h->done);
		buf_append(down, "", 1);
		assert_null(strstr(down->p, "s3cr3t"));
		assert_null(strstr(down->p, "-value"));
		assert_int_equal(strncmp(down->p, "HTTP/1.1 502 Bad Gateway", 24) == 0, c[i].b502);
		assert_string_equal(rep->denials[rep->ndenials - 1].kind, "network");
		assert_int_equal(rep->net.denied, denied + 1);
		/* a later request: not read, not injected */
		size_t before = up->len;
		assert_int_equal(pxhttp_client(h, req, strlen(req), up, down), 0);
		assert_int_equal(up->len, before);
		pxhttp_free(h);
	}
}

/* Review 4 F2: a request that carries a value asks for identity (no
 * Accept-Encoding would mean any coding) and keeps TE only as "trailers"; a
 * response to it with a content coding, or a transfer coding other than
 * chunked, is refused: 502, on record, the connection ends. A request
 * without a value keeps its headers and may get a coded answer. */
static void test_pxhttp_coded_response(void **st)
{
	struct pxfix *f = *st;
	struct run_report *rep = &f->rep;
	pxfix_allow(f, "api.example:443");
	struct pxhttp *h = f->h;
	buf *up = &f->up, *down = &f->down;
	static const char *const resp[] = {
		"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
	};
	for (size_t i = 0; i < 2; i++) {
		pxfix_open(f, PXF_INJECT);
		const char *req = "GET /a HTTP/1.1\r\nHost: api.example\r\nTE: gzip\r\nAccept-Encoding: gzip\r\nX-Key: ph_0123\r\n\r\n";
		assert_int_equal(pxhttp_client(h, req, strlen(req), up, down), 0);
		assert_string_equal(pxfix_str(up), "GET /a HTTP/1.1\r\nAccept-Encoding: identity\r\nHost: api.example\r\nX-Key: s3cr3t-value\r\nConnection: keep-alive\r\n\r\n");
		uint64_t denied = rep->net.denied;
		assert_int_equal(pxhttp_upstream(h, resp[i], strlen(resp[i]), down), 0);
		buf_append(down, "", 1);
		assert_int_equal(strncmp(down->p, "HTTP/1.1 502 Bad Gateway", 24), 0);
		assert_null(strstr(down->p, "abc"));
		assert_true(h->done);
		assert_int_equal(rep->net.denied, denied + 1);
		pxhttp_free(h);
	}
	/* TE: trailers stays; without a value nothing changes and gzip passes */
	pxfix_open(f, PXF_INJECT);
	const char *req = "GET /a HTTP/1.1\r\nHost: api.example\r\nTE: trailers\r\nX-Key: ph_0123\r\n\r\nGET /b HTTP/1.1\r\nHost: api.example\r\nTE: gzip\r\nAccept-Encoding: gzip\r\n\r\n";
	assert_int_equal(pxhttp_client(h, req, strlen(req), up, down), 0);
	assert_string_equal(pxfix_str(up), "GET /a HTTP/1.1\r\nAccept-Encoding: identity\r\nHost: api.example\r\nTE: trailers\r\nX-Key: s3cr3t-value\r\nConnection: keep-alive\r\n\r\n");
	const char *r2a = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx";
	const char *r2 = "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc";
	assert_int_equal(pxhttp_upstream(h, r2a, strlen(r2a), down), 0);
	up->len = 0;
	assert_int_equal(pxhttp_client(h, NULL, 0, up, down), 0);
	assert_string_equal(pxfix_str(up), "GET /b HTTP/1.1\r\nHost: api.example\r\nTE: gzip\r\nAccept-Encoding: gzip\r\nConnection: keep-alive\r\n\r\n");
	assert_int_equal(pxhttp_upstream(h, r2, strlen(r2), down), 0);
	buf_append(down, "", 1);
	assert_non_null(strstr(down->p, "abc"));
	assert_false(h->done);
	pxhttp_free(h);
}

/* A pipelined request waits, unread, for the answer to the one before it:
 * when that answer ends the connection (unreadable with a value injected,
 * or a switch nobody asked for), the waiting request never goes upstream,
 * and while it waits nothing more is read from the client. */
static void test_pxhttp_pipelined_request_waits(void **st)
{
	struct pxfix *f = *st;
	struct run_report *rep = &f->rep;
	pxfix_allow(f, "api.example:443");
	struct pxhttp *h = f->h;
	buf *up = &f->up, *down = &f->down;
	static const char *ends[] = {"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",
				     "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n"};
	for (size_t i = 0; i < 2; i++) {
		pxfix_open(f, PXF_INJECT);
		size_t nreq = rep->net.nreq;
		const char *req = "GET /1 HTTP/1.1\r\nHost: api.example\r\nX-Key: ph_0123\r\n\r\nGET /2 HTTP/1.1\r\nHost: api.example\r\nX-Key: ph_0123\r\n\r\n";
		assert_int_equal(pxhttp_client(h, req, strlen(req), up, down), 0);
		assert_string_equal(pxfix_str(up), "GET /1 HTTP/1.1\r\nAccept-Encoding: identity\r\nHost: api.example\r\nX-Key: s3cr3t-value\r\nConnection: keep-alive\r\n\r\n");
		up->len = 0;
		assert_int_equal(rep->net.nreq, nreq + 1);
		assert_false(pxhttp_want_client(h)); /* it holds what it has, reads no more */
		pxhttp_upstream(h, ends[i], strlen(ends[i]), down);
		assert_true(h->done);
		assert_int_equal(pxhttp_client(h, NULL, 0, up, down), 0);
		assert_int_equal(up->len, 0);
		assert_int_equal(rep->net.nreq, nreq + 1);
		pxhttp_free(h);
	}
	/* an answer that ends well lets it go on */
	pxfix_open(f, 0);
	const char *req = "GET /1 HTTP/1.1\r\nHost: api.example\r\n\r\nGET /2 HTTP/1.1\r\nHost: api.example\r\n\r\n";
	assert_int_equal(pxhttp_client(h, req, strlen(req), up, down), 0);
	const char *ok = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx";
	assert_int_equal(pxhttp_upstream(h, ok, strlen(ok), down), 0);
	assert_true(pxhttp_want_client(h));
	assert_int_equal(pxhttp_client(h, NULL, 0, up, down), 0);
	assert_string_equal(pxfix_str(up), "GET /1 HTTP/1.1\r\nHost: api.example\r\nConnection: keep-alive\r\n\r\nGET /2 HTTP/1.1\r\nHost: api.example\r\nConnection: keep-alive\r\n\r\n");
	pxhttp_free(h);
}

/* A GET, HEAD or TRACE with a body is refused, nothing of it upstream: an
 * upstream that ignores such a body would read it as a request of its own
 * (outside review 6: a DELETE smuggled past a GET-only rule). */
static void test_pxhttp_get_with_body_refused(void **st)
{
	struct pxfix *f = *st;
	struct run_report *rep = &f->rep;
	cordon_error err = {0};
	strv methods = {0}, paths = {0};
	strv_push(&methods, "GET");
	strv_push(&methods, "HEAD");
	strv_push(&paths, "/pub/**");
	assert_int_equal(pxrule_add(&f->rs, "api.example:443", &methods, &paths, false, &err), 0);
	strv_free(&methods);
	strv_free(&paths);
	struct pxhttp *h = f->h;
	buf *up = &f->up, *down = &f->down;
	static const char *reqs[] = {
		"GET /pub/a HTTP/1.1\r\nContent-Length: 38\r\n\r\nDELETE /priv/b HTTP/1.1\r\nX: y\r\n\r\n",
		"HEAD /pub/a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	};
	for (size_t i = 0; i < 2; i++) {
		pxfix_open(f, PXF_TLS);
		size_t denials = rep->ndenials;
		pxhttp_client(h, reqs[i], strlen(reqs[i]), up, down);
		assert_int_equal(up->len, 0);
		buf_append(down, "", 1);
		assert_non_null(strstr(down->p, "403"));
		assert_int_equal(rep->ndenials, denials + 1);
		pxhttp_free(h);
	}
	/* without a body, as before */
	pxfix_open(f, 0);
	const char *get = "GET /pub/a HTTP/1.1\r\nContent-Length: 0\r\n\r\n";
	assert_int_equal(pxhttp_client(h, get, strlen(get), up, down), 0);
	assert_true(up->len > 0);
	pxhttp_free(h);
}

/* What the echo filter holds back (a body that ends in what may begin a
 * value) is counted in the proxy's memory while it is held, and given back
 * when the connection goes; a filter that would take the count past the
 * budget ends the connection instead of growing (nothing it held goes out
 * unfiltered), counted as over_limit. */
static void test_pxhttp_filter_memory_counted(void **st)
{
	struct pxfix *f = *st;
	struct run_report *rep = &f->rep;
	pxfix_allow(f, "api.example:443");
	struct pxhttp *h = f->h;
	buf *up = &f->up, *down = &f->down;
	const char *req = "GET / HTTP/1.1\r\nX-Key: ph_0123\r\n\r\n";
	const char *resp = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc s3cr";
	for (int tight = 0; tight < 2; tight++) {
		size_t mem = 1000; /* the rest of the proxy's */
		pxfix_open(f, PXF_INJECT);
		h->mem = &mem, h->mem_max = tight ? 2000 : 1u << 30;
		uint64_t over = rep->net.over_limit;
		assert_int_equal(pxhttp_client(h, req, strlen(req), up, down), 0);
		assert_int_equal(pxhttp_upstream(h, resp, strlen(resp), down), 0);
		buf_append(down, "", 1);
		assert_null(strstr(down->p, "s3cr"));
		if (!tight) {
			assert_true(mem > 1000 + 64 * 1024); /* its window, at least */
			assert_int_equal(mem, 1000 + redact_stream_mem(&h->es));
			assert_false(h->done);
		} else {
			assert_int_equal(mem, 1000);
			assert_true(h->done);
			assert_int_equal(rep->net.over_limit, over + 1);
		}
		pxhttp_free(h);
		assert_int_equal(mem, 1000);
	}
}

/* Issue 27.2: on a connection the proxy reads, the upstream gets exactly one
 * Host, the authority the decision was taken on; a request with another
 * (or two) is refused (403, logged, a denial) and nothing of it, least of
 * all an injected value, goes upstream. */
struct host_case {
	const char *host;
	uint16_t port;
	bool forward;
	const char *req;
	const char *want; /* the upstream's Host line, or NULL: refused */
};

static void test_pxhttp_host_is_the_authority(void **st)
{
	static const struct host_case c[] = {
		{"localhost", 8443, false, "GET / HTTP/1.1\r\nHost: localhost:8443\r\nX-Key: ph_0123\r\n\r\n", "Host: localhost:8443"},
		{"localhost", 8443, false, "GET / HTTP/1.1\r\nHost: LocalHost:8443\r\nX-Key: ph_0123\r\n\r\n", "Host: LocalHost:8443"},
		{"localhost", 8443, false, "GET / HTTP/1.0\r\nX-Key: ph_0123\r\n\r\n", "Host: localhost:8443"},
		{"localhost", 8443, false, "GET / HTTP/1.1\r\nX-Key: ph_0123\r\n\r\n", "Host: localhost:8443"},
		{"localhost", 8443, false, "GET / HTTP/1.1\r\nHost: attacker-tenant.example\r\nX-Key: ph_0123\r\n\r\n", NULL},
		{"localhost", 8443, false, "GET / HTTP/1.1\r\nHost: localhost\r\nX-Key: ph_0123\r\n\r\n", NULL},
		{"localhost", 8443, false, "GET / HTTP/1.1\r\nHost: localhost:443\r\nX-Key: ph_0123\r\n\r\n", NULL},
		{"localhost", 8443, false, "GET / HTTP/1.1\r\nHost: localhost.:8443\r\nX-Key: ph_0123\r\n\r\n", NULL},
		{"localhost", 8443, false, "GET / HTTP/1.1\r\nHost: localhost:08443\r\nX-Key: ph_0123\r\n\r\n", NULL},
		{"localhost", 8443, false, "GET / HTTP/1.1\r\nHost: localhost:\r\nX-Key: ph_0123\r\n\r\n", NULL},
		{"localhost", 8443, false, "GET / HTTP/1.1\r\nHost: localhost:8443:1\r\nX-Key: ph_0123\r\n\r\n", NULL},
		{"localhost", 8443, false, "GET / HTTP/1.1\r\nHost: u@localhost:8443\r\nX-Key: ph_0123\r\n\r\n", NULL},
		{"localhost", 8443, false, "GET / HTTP/1.1\r\nHost:\r\nX-Key: ph_0123\r\n\r\n", NULL},
		{"localhost", 8443, false, "GET / HTTP/1.1\r\nHost: [::1]:8443\r\nX-Key: ph_0123\r\n\r\n", NULL},
		{"localhost", 8443, false, "GET / HTTP/1.1\r\nHost: localhost:8443\r\nhost: localhost:8443\r\nX-Key: ph_0123\r\n\r\n", NULL},
		{"localhost", 8443, false, "GET / HTTP/1.1\r\nHost: localhost:8443\r\nHOST: evil.example\r\nX-Key: ph_0123\r\n\r\n", NULL},
		{"localhost", 8443, false, "GET http://localhost:8443/ HTTP/1.1\r\nHost: localhost:8443\r\n\r\n", NULL},
		{"api.example", 443, false, "GET / HTTP/1.1\r\nHost: api.example\r\n\r\n", "Host: api.example"},
		{"api.example", 443, false, "GET / HTTP/1.1\r\nHost: api.example:443\r\n\r\n", "Host: api.example:443"},
		{"api.example", 443, false, "GET / HTTP/1.1\r\nHost: api.example:80\r\n\r\n", NULL},
		{"::1", 8443, false, "GET / HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n", "Host: [::1]:8443"},
		{"::1", 8443, false, "GET / HTTP/1.1\r\nHost: ::1:8443\r\n\r\n", NULL},
		{"127.0.0.1", 80, true, "GET http://127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "Host: 127.0.0.1"},
		{"127.0.0.1", 80, true, "GET http://127.0.0.1:80/ HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n", "Host: 127.0.0.1"},
		{"127.0.0.1", 80, true, "GET http://127.0.0.1/ HTTP/1.0\r\n\r\n", "Host: 127.0.0.1"},
		{"127.0.0.1", 80, true, "GET http://127.0.0.1/ HTTP/1.1\r\nHost: other.example\r\n\r\n", NULL},
		{"127.0.0.1", 80, true, "GET http://127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n", NULL},
		{"127.0.0.1", 8080, true, "GET http://127.0.0.1:8080/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", NULL},
	};
	struct pxfix *f = *st;
	struct run_report *rep = &f->rep;
	static const char *const allow[] = {"localhost:8443", "api.example:443", "[::1]:8443", "127.0.0.1:80", "127.0.0.1:8080"};
	for (size_t i = 0; i < sizeof(allow) / sizeof(allow[0]); i++)
		pxfix_allow(f, allow[i]);
	struct pxhttp *h = f->h;
	buf *up = &f->up, *down = &f->down;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char auth[300];
		snprintf(auth, sizeof(auth), strchr(c[i].host, ':') ? "[%s]:%u" : "%s:%u", c[i].host, c[i].port);
		pxfix_scope(f, auth);
		pxfix_open_at(f, c[i].host, c[i].port, auth, c[i].forward, c[i].forward ? PXF_SECRET : PXF_TLS | PXF_SECRET);
		uint64_t denied = rep->net.denied;
		assert_int_equal(pxhttp_client(h, c[i].req, strlen(c[i].req), up, down), 0);
		pxhttp_upstream_eof(h, down);
		buf_append(up, "", 1);
		buf_append(down, "", 1);
		if (!c[i].want) {
			if (up->len != 1 || !strstr(down->p, "HTTP/1.1 403 Forbidden") || rep->net.denied != denied + 1)
				fail_msg("case %zu: not refused: up %s down %s", i, up->p, down->p);
			assert_int_equal(rep->net.req[rep->net.nreq - 1].status, 403);
		} else {
			size_t n = 0;
			for (const char *p = up->p; (p = strcasestr(p, "\r\nHost:")); p++)
				n++;
			if (n != 1 || !strstr(up->p, c[i].want) || rep->net.denied != denied)
				fail_msg("case %zu: up %s down %s", i, up->p, down->p);
		}
		pxhttp_free(h);
	}
	/* keep-alive: a second request with another Host on the same connection */
	pxfix_scope(f, "localhost:8443");
	pxfix_open_at(f, "localhost", 8443, "localhost:8443", false, PXF_TLS | PXF_SECRET);
	const char *two = "GET /1 HTTP/1.1\r\nHost: localhost:8443\r\nX-Key: ph_0123\r\n\r\n"
			  "GET /2 HTTP/1.1\r\nHost: attacker-tenant.example\r\nX-Key: ph_0123\r\n\r\n";
	assert_int_equal(pxhttp_client(h, two, strlen(two), up, down), 0);
	const char *ok = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx";
	assert_int_equal(pxhttp_upstream(h, ok, strlen(ok), down), 0);
	assert_int_equal(pxhttp_client(h, NULL, 0, up, down), 0);
	buf_append(up, "", 1);
	buf_append(down, "", 1);
	assert_string_equal(up->p, "GET /1 HTTP/1.1\r\nHost: localhost:8443\r\nX-Key: s3cr3t-value\r\nConnection: keep-alive\r\n\r\n");
	assert_non_null(strstr(down->p, "HTTP/1.1 403 Forbidden"));
	assert_non_null(strstr(down->p, "a Host other than the connection's authority"));
	assert_int_equal(rep->net.req[rep->net.nreq - 1].status, 403);
	assert_string_equal(rep->denials[rep->ndenials - 1].target, "GET localhost:8443/2 (a Host other than the connection's authority)");
	pxhttp_free(h);
}

/* network.resolve's pins, as the proxy and the transparent path read them. */
static void test_pins(void **st)
{
	strv res = {.v = (char *[]){"db.internal=127.0.0.1", "v6.test=::1", "bad.test=x", "db=10.0.0.1"}, .n = 4};
	struct sockaddr_storage ss;
	socklen_t len = 0;
	assert_true(pxrule_pin(&res, "DB.internal", 5432, &ss, &len));
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
	assert_int_equal(len, sizeof(*s4));
	assert_int_equal(ntohs(s4->sin_port), 5432);
	assert_int_equal(ntohl(s4->sin_addr.s_addr), 0x7f000001);
	assert_true(pxrule_pin(&res, "v6.test", 22, &ss, &len));
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(len, sizeof(struct sockaddr_in6));
	assert_false(pxrule_pin(&res, "bad.test", 1, &ss, &len));
	assert_false(pxrule_pin(&res, "db.internal.evil", 1, &ss, &len)); /* the whole name only */
	assert_false(pxrule_pin(&res, "d", 1, &ss, &len));
	assert_false(pxrule_pin(NULL, "db.internal", 1, &ss, &len));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_patterns), cmocka_unit_test(test_within),
		cmocka_unit_test(test_add_validates), cmocka_unit_test(test_http1_framing),
		cmocka_unit_test(test_pins),
		PXFIX_TEST(test_pxhttp_each_request_checked), PXFIX_TEST(test_pxhttp_injects),
		PXFIX_TEST(test_pxhttp_response_bodies),
		PXFIX_TEST(test_pxhttp_unreadable_response),
		PXFIX_TEST(test_pxhttp_coded_response),
		PXFIX_TEST(test_pxhttp_pipelined_request_waits),
		PXFIX_TEST(test_pxhttp_get_with_body_refused),
		PXFIX_TEST(test_pxhttp_filter_memory_counted),
		PXFIX_TEST(test_pxhttp_host_is_the_authority), /* issue 27.2 */
	};
	return cmocka_run_group_tests_name("pxrule", tests, NULL, NULL);
}
