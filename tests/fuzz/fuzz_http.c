/* libFuzzer target (issue 16): the HTTP/1.1 framing and the request reading
 * the proxy does on plain-HTTP connections, both sides hostile. The first
 * byte splits the input into client bytes and upstream bytes; both are fed in
 * small pieces. Whatever goes upstream must start with a request line the
 * rules admitted; path matching and pattern containment must not crash.
 * With the response filter on, responses are re-framed (its own chunks).
 * Each request head upstream carries one Host, the checked authority, and
 * one Connection, the proxy's; no trailer field goes upstream. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "pxhttp-resp.h"
#include "pxhttp.h"
#include "pxrule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t split = (size_t)data[0] * (size - 1) / 255, step = (size_t)(data[1] % 7) + 1;
	const char *d = (const char *)data + 1;
	size_t n = size - 1;
	static struct run_report rep;
	static struct net_rules rs;
	static bool init;
	static strv here, there;
	static struct pxhttp_secret sec[2];
	static redactor *echo;
	if (!init) {
		strv_push(&here, "127.0.0.1:80");
		strv_push(&there, "other.example:443");
		sec[0] = (struct pxhttp_secret){"A", "PH1xyz", (const uint8_t *)"VALUE1", 6, &here, true, true, false, 0};
		sec[1] = (struct pxhttp_secret){"B", "PH2abc", (const uint8_t *)"VALUE2", 6, &there, true, true, false, 1};
		cordon_error e = {0};
		strv m = {0}, p = {0};
		strv_push(&m, "GET");
		strv_push(&p, "/pub/**");
		pxrule_add(&rs, "127.0.0.1:80", &m, &p, false, &e);
		/* the response filter: values (and forms) back to placeholders */
		echo = redactor_new();
		redactor_literal(echo);
		for (int k = 0; k < 2; k++)
			redactor_add_secret(echo, sec[k].placeholder, sec[k].value, sec[k].len, &e);
		redactor_compile(echo, &e);
		strv_free(&m);
		strv_free(&p);
		init = true;
	}
	report_init(&rep);
	struct pxhttp *h = malloc(sizeof(*h));
	pxhttp_init(h, &rs, &rep, "127.0.0.1", 80, "127.0.0.1:80", data[1] & 0x80);
	h->tls = data[1] & 0x40;
	h->sec = sec;
	h->nsec = 2;
	h->echo = data[1] & 0x20 ? echo : NULL;
	buf up = {0}, down = {0};
	for (size_t i = 0; i < split; i += step)
		if (pxhttp_client(h, d + i, i + step > split ? split - i : step, &up, &down) < 0)
			break;
	for (size_t i = split; i < n; i += step)
		pxhttp_upstream(h, d + i, i + step > n ? n - i : step, &down);
	pxhttp_upstream_eof(h, &down);
	/* Secrets: B's placeholder never goes upstream (it is not for this
	 * host), nor B's value unless the client wrote it itself (the run
	 * never has it; a substitution cannot make it: A's value ends in "1");
	 * A's value only over TLS. */
	if (up.len && !h->req_opaque &&
	    (memmem(up.p, up.len, "PH2abc", 6) || (memmem(up.p, up.len, "VALUE2", 6) && !memmem(d, split, "VALUE2", 6))))
		abort();
	if (up.len && !h->tls && memmem(up.p, up.len, "VALUE1", 6) && !memmem(d, split, "VALUE1", 6))
		abort();
	/* What went upstream: only GETs (the one rule's method). */
	if (up.len && !h->req_opaque && memcmp(up.p, "GET ", 4) != 0)
		abort();
	for (size_t i = 0; i < rep.net.nreq; i++)
		if (rep.net.req[i].status != 403 && strcmp(rep.net.req[i].method, "GET") != 0)
			abort();
	/* Issue 27.2: every request head that went upstream has exactly one
	 * Host, the connection's authority (127.0.0.1:80; port 80 is the
	 * default of plain HTTP, where the proxy writes it itself). Read again
	 * as the upstream reads it, up to an Upgrade (opaque after). */
	static struct h1 rp;
	memset(&rp, 0, sizeof(rp));
	for (size_t off = 0; off < up.len;) {
		size_t used;
		bool trailer = rp.st == S_TRAILER;
		int r = h1_feed(&rp, up.p + off, up.len - off, &used);
		/* Issue 27.2 review: no trailer field goes upstream (the last
		 * chunk ends with the empty line alone). */
		if (trailer && r != H1_ERR && r != H1_NEED && (r != H1_END || used != 2))
			abort();
		off += used;
		if (r == H1_NEED || r == H1_ERR)
			break;
		if (r != H1_HEAD)
			continue;
		/* One Connection, the proxy's: the client's is hop-by-hop. */
		size_t conns = 0;
		for (size_t i = 0; i < rp.msg.nh; i++)
			conns += rp.msg.h[i].name_len == 10 && strncasecmp(rp.msg.head + rp.msg.h[i].name, "connection", 10) == 0;
		if (conns != 1)
			abort();
		const char *want = h->forward ? "127.0.0.1" : "127.0.0.1:80";
		size_t hosts = 0;
		for (size_t i = 0; i < rp.msg.nh; i++)
			if (rp.msg.h[i].name_len == 4 && strncasecmp(rp.msg.head + rp.msg.h[i].name, "host", 4) == 0) {
				hosts++;
				if (rp.msg.h[i].value_len != strlen(want) || memcmp(rp.msg.head + rp.msg.h[i].value, want, strlen(want)) != 0)
					abort();
			}
		if (hosts != 1)
			abort();
		if (rp.msg.upgrade && rp.msg.conn_upgrade)
			break;
		h1_body_for(&rp, NULL);
	}
	pxhttp_free(h);
	free(h);
	buf_free(&up);
	buf_free(&down);
	report_free(&rep);
	/* Patterns from the input: no crash, and a pattern lies within itself. */
	char pat[200];
	size_t pl = n < sizeof(pat) - 1 ? n : sizeof(pat) - 1;
	memcpy(pat, d, pl);
	pat[pl] = '\0';
	pxrule_path_matches("/a/**/b/*", pat);
	if (!memchr(pat, '\0', pl) && !pxrule_pattern_error(pat)) {
		struct net_rule r = {.host = (char *)"h:1"};
		strv_push(&r.paths, pat);
		if (!pxrule_within(&r, &r))
			abort();
		strv_free(&r.paths);
	}
	return 0;
}
