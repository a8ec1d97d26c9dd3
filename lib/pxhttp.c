/* The proxy's reading of HTTP requests (pxhttp.h): each request head
 * checked (Host, Connection, the rules, placeholders where they may not
 * go), secrets injected, rewritten for the upstream or refused on record;
 * the connection's state and budget. Responses: pxhttp-resp.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "proxy.h"
#include "pxaddr.h"
#include "base64.h"
#include "pxhttp.h"
#include "redact-stream.h"

bool pxhttp_scoped(const struct net_rules *rules, const char *host, uint16_t port)
{
	bool any = false;
	for (size_t i = 0; i < rules->n; i++) {
		if (!proxy_rule_matches(rules->v[i].host, host, port, NULL))
			continue;
		if (!pxrule_restricted(&rules->v[i]))
			return false;
		any = true;
	}
	return any;
}

void pxhttp_init(struct pxhttp *h, const struct net_rules *rules, struct run_report *rep, const char *host,
		 uint16_t port, const char *target, bool forward)
{
	memset(h, 0, sizeof(*h));
	h->rules = rules;
	h->rep = rep;
	snprintf(h->host, sizeof(h->host), "%s", host);
	h->port = port;
	snprintf(h->target, sizeof(h->target), "%s", target);
	h->forward = forward;
	h->resp.response = true;
}

void pxhttp_free(struct pxhttp *h)
{
	buf_free(&h->cin);
	buf_free(&h->refusal);
	if (h->es.r)
		redact_stream_free(&h->es);
	if (h->mem)
		*h->mem -= h->charged;
	h->charged = 0;
}

/* Count what the echo filter holds now; false if that is past the budget. */
bool pxhttp_charge(struct pxhttp *h)
{
	if (!h->mem)
		return true;
	size_t m = h->es.r ? redact_stream_mem(&h->es) : 0;
	*h->mem = *h->mem - h->charged + m;
	h->charged = m;
	return m == 0 || *h->mem <= h->mem_max;
}

/* The echo filter would hold more than the proxy's budget has room for: what
 * it holds cannot go out unfiltered, so it is dropped and the connection
 * ends (the client sees the response cut short). */
void pxhttp_over_budget(struct pxhttp *h)
{
	h->rep->net.over_limit++;
	redact_stream_free(&h->es);
	memset(&h->es, 0, sizeof(h->es));
	h->rf = PXHTTP_RF_RAW;
	h->done = true;
	pxhttp_charge(h);
}

/* The path of a target, query left out, redacted in full before it is cut
 * (a secret in a path leaves no prefix behind). */
static void clean_path(const struct pxhttp *h, const char *path, char *out, size_t outsz)
{
	size_t n = strcspn(path, "?#");
	char *raw = strndup(path, n);
	char *red = raw && h->rep->redact ? redact_string(h->rep->redact, raw) : NULL;
	const char *src = red ? red : raw && !h->rep->redact ? raw : "(unredactable)";
	pxrule_target_path(src, out, outsz);
	if (raw)
		explicit_bzero(raw, n);
	free(raw);
	free(red);
}

static size_t log_request(struct pxhttp *h, const char *method, const char *path)
{
	struct run_report *r = h->rep;
	if (r->net.nreq >= NET_REQUESTS_MAX) {
		r->net.req_omitted++;
		return SIZE_MAX;
	}
	struct net_request *v = realloc(r->net.req, (r->net.nreq + 1) * sizeof(*v));
	if (!v) {
		r->net.req_omitted++;
		return SIZE_MAX;
	}
	r->net.req = v;
	struct net_request *q = &v[r->net.nreq];
	memset(q, 0, sizeof(*q));
	snprintf(q->method, sizeof(q->method), "%s", method);
	snprintf(q->target, sizeof(q->target), "%s", h->target);
	clean_path(h, path, q->path, sizeof(q->path));
	return r->net.nreq++;
}

struct net_request *pxhttp_entry(struct pxhttp *h, size_t log)
{
	return log < h->rep->net.nreq ? &h->rep->net.req[log] : NULL;
}

/* The origin-form of an absolute http:// target on a forward connection, if
 * it names this connection's host and port; else NULL. */
static const char *origin_form(const struct pxhttp *h, const char *t)
{
	if (!h->forward)
		return t[0] == '/' || strcmp(t, "*") == 0 ? t : NULL;
	if (strncasecmp(t, "http://", 7) != 0)
		return NULL;
	const char *a = t + 7, *slash = strchr(a, '/');
	size_t al = slash ? (size_t)(slash - a) : strlen(a);
	char auth[300], want[300];
	if (al >= sizeof(auth))
		return NULL;
	snprintf(auth, sizeof(auth), "%.*s", (int)al, a);
	host_port(want, sizeof(want), h->host, h->port);
	size_t wl = strlen(want) - strlen(strrchr(want, ':'));
	bool same = strcasecmp(auth, want) == 0 ||
		    (h->port == 80 && strlen(auth) == wl && strncasecmp(auth, want, wl) == 0);
	if (!same)
		return NULL;
	return slash ? slash : "/";
}

/* ---- Host (issue 27.2) ---- */

/* The authority this connection was decided on, as a Host value: the port
 * left out where it is the scheme's (80 read as plain HTTP, 443 opened). */
static void authority(const struct pxhttp *h, char *out, size_t outsz)
{
	snprintf(out, outsz, strchr(h->host, ':') ? "[%s]" : "%s", h->host);
	if (h->port != (h->forward || h->plain ? 80 : 443))
		snprintf(out + strlen(out), outsz - strlen(out), ":%u", h->port);
}

/* Is the Host value v[0..n) this connection's authority? Host name (or
 * address) equal but for case, nothing added (no trailing dot, no
 * userinfo); the port, if given, in plain decimal and equal, else the
 * scheme's default (80 plain, 443 opened) must be the connection's port. */
static bool host_is_ours(const struct pxhttp *h, const char *v, size_t n)
{
	const char *hn = v, *port = NULL;
	size_t hl = n, pl = 0;
	bool v6 = strchr(h->host, ':') != NULL;
	if (n && v[0] == '[') {
		const char *rb = memchr(v, ']', n);
		if (!rb || !v6)
			return false;
		hn = v + 1;
		hl = (size_t)(rb - hn);
		size_t rest = n - (size_t)(rb + 1 - v);
		if (rest) {
			if (rb[1] != ':')
				return false;
			port = rb + 2;
			pl = rest - 1;
		}
	} else {
		const char *c = memchr(v, ':', n);
		if (v6)
			return false;
		if (c) {
			hl = (size_t)(c - v);
			port = c + 1;
			pl = n - hl - 1;
		}
	}
	if (hl != strlen(h->host) || strncasecmp(hn, h->host, hl) != 0)
		return false;
	if (!port)
		return h->port == (h->forward || h->plain ? 80 : 443);
	if (pl == 0 || pl > 5 || port[0] == '0')
		return false;
	unsigned long pv = 0;
	for (size_t i = 0; i < pl; i++) {
		if (port[i] < '0' || port[i] > '9')
			return false;
		pv = pv * 10 + (unsigned long)(port[i] - '0');
	}
	return pv == h->port;
}

/* What is wrong with the request's Host, or NULL: at most one, and that one
 * this connection's authority (none: the proxy writes it). */
static const char *host_problem(const struct pxhttp *h, const struct h1_msg *m, bool *absent)
{
	size_t hosts = 0;
	const char *why = NULL;
	for (size_t i = 0; i < m->nh; i++) {
		if (m->h[i].name_len != 4 || strncasecmp(m->head + m->h[i].name, "host", 4) != 0)
			continue;
		if (++hosts > 1)
			return "more than one Host header";
		if (!host_is_ours(h, m->head + m->h[i].value, m->h[i].value_len))
			why = "a Host other than the connection's authority";
	}
	*absent = hosts == 0;
	return why;
}

/* ---- secrets ---- */

bool pxhttp_secret_scoped(const struct pxhttp_secret *s, const char *host, uint16_t port)
{
	for (size_t i = 0; i < s->hosts->n; i++)
		if (proxy_rule_matches(s->hosts->v[i], host, port, NULL))
			return true;
	return false;
}

/* The credentials of an "Authorization: Basic" value, decoded (NULL if it
 * is not one). */
static bool basic_creds(const char *v, size_t vl, buf *out)
{
	if (vl < 6 || strncasecmp(v, "basic ", 6) != 0)
		return false;
	v += 6, vl -= 6;
	while (vl && (*v == ' ' || *v == '\t'))
		v++, vl--;
	while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
		vl--;
	return b64_decode_buf(v, vl, out);
}

static bool is_auth(const char *n, size_t nl)
{
	return (nl == 13 && strncasecmp(n, "authorization", 13) == 0) ||
	       (nl == 19 && strncasecmp(n, "proxy-authorization", 19) == 0);
}

bool pxhttp_head_has(const struct h1_msg *m, const char *ph)
{
	size_t pl = strlen(ph);
	if (!pl)
		return false;
	if (memmem(m->head, m->head_len, ph, pl))
		return true;
	for (size_t i = 0; i < m->nh; i++) {
		if (!is_auth(m->head + m->h[i].name, m->h[i].name_len))
			continue;
		buf d = {0};
		bool hit = basic_creds(m->head + m->h[i].value, m->h[i].value_len, &d) && d.len && memmem(d.p, d.len, ph, pl);
		buf_wipe(&d);
		if (hit)
			return true;
	}
	return false;
}

/* Append v[0..n) with every placeholder of the secrets in mask replaced by
 * its value. */
static void put_subst(const struct pxhttp *h, uint32_t mask, const char *v, size_t n, buf *out)
{
	size_t i = 0;
	while (i < n) {
		bool hit = false;
		for (size_t k = 0; k < h->nsec && !hit; k++) {
			const struct pxhttp_secret *s = &h->sec[k];
			size_t pl = strlen(s->placeholder);
			if ((mask >> k & 1) && pl && n - i >= pl && memcmp(v + i, s->placeholder, pl) == 0) {
				buf_append(out, s->value, s->len);
				i += pl;
				hit = true;
			}
		}
		if (!hit)
			buf_append(out, v + i++, 1);
	}
}


/* May secret k go on this connection? */
static bool secret_here(const struct pxhttp *h, const struct pxhttp_secret *s)
{
	return pxhttp_secret_scoped(s, h->host, h->port) && (h->tls || s->allow_plaintext);
}

static void secret_refused(struct pxhttp *h, const struct pxhttp_secret *s, buf *out)
{
	char t[600], msg[800];
	snprintf(t, sizeof(t), "%s -> %s", s->name, h->target);
	report_add_denial(h->rep, "secret", t);
	h->rep->net.denied++;
	snprintf(msg, sizeof(msg), "cordon: %s: the placeholder of secret %s goes only to its hosts%s", h->target, s->name,
		 pxhttp_secret_scoped(s, h->host, h->port) ? " over TLS" : "");
	pxhttp_answer(out, 403, msg);
}

/* A request body on its way: a placeholder in it, to where its secret may
 * not go, ends the connection (what came before it went on). */
static bool body_leaks(struct pxhttp *h, const char *d, size_t n)
{
	const struct pxhttp_secret *hit = NULL;
	for (size_t k = 0; k < h->nsec && !hit; k++) {
		const struct pxhttp_secret *s = &h->sec[k];
		size_t pl = strlen(s->placeholder);
		if (!pl || pl > sizeof(h->carry) || secret_here(h, s))
			continue;
		if (memmem(d, n, s->placeholder, pl))
			hit = s;
		/* across the boundary: the carry, then the start of d */
		char w[2 * sizeof(h->carry)];
		size_t wn = h->carry_len, take = n < pl - 1 ? n : pl - 1;
		memcpy(w, h->carry, wn);
		memcpy(w + wn, d, take);
		if (!hit && memmem(w, wn + take, s->placeholder, pl))
			hit = s;
	}
	if (hit) {
		char t[600];
		snprintf(t, sizeof(t), "%s -> %s", hit->name, h->target);
		report_add_denial(h->rep, "secret", t);
		h->rep->net.denied++;
		return true;
	}
	size_t keep = n >= sizeof(h->carry) ? sizeof(h->carry) : n;
	if (h->carry_len + keep > sizeof(h->carry)) {
		size_t drop = h->carry_len + keep - sizeof(h->carry);
		memmove(h->carry, h->carry + drop, h->carry_len - drop);
		h->carry_len -= drop;
	}
	memcpy(h->carry + h->carry_len, d + n - keep, keep);
	h->carry_len += keep;
	return false;
}

/* One header value for the upstream: placeholders swapped (inside Basic
 * credentials too: decoded, swapped, encoded again). */
static void put_value(const struct pxhttp *h, uint32_t mask, const char *n, size_t nl, const char *v, size_t vl,
		      buf *out)
{
	buf d = {0};
	if (mask && is_auth(n, nl) && basic_creds(v, vl, &d)) {
		buf s = {0};
		put_subst(h, mask, d.p ? d.p : "", d.len, &s);
		buf_printf(out, "%.*s", 6, v);
		b64_encode(out, s.p ? s.p : "", s.len);
		buf_wipe(&s);
		buf_wipe(&d);
		return;
	}
	buf_wipe(&d);
	put_subst(h, mask, v, vl, out);
}

void pxhttp_answer(buf *out, int code, const char *why)
{
	buf_printf(out,
		   "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n%s\n",
		   code, code == 403 ? "Forbidden" : code == 502 ? "Bad Gateway" : "Bad Request", strlen(why) + 1, why);
}

/* Which rule admits the request; if none, the refusal's text. */
static bool admitted(const struct pxhttp *h, const char *method, const char *path, bool upgrade, buf *why)
{
	bool any = false;
	for (size_t i = 0; i < h->rules->n; i++) {
		const struct net_rule *r = &h->rules->v[i];
		if (!proxy_rule_matches(r->host, h->host, h->port, NULL))
			continue;
		if (pxrule_admits(r, method, path, upgrade))
			return true;
		char d[400];
		pxrule_describe(r, d, sizeof(d));
		buf_printf(why, "%s%s", any ? "; " : "", d);
		any = true;
	}
	return false;
}

/* Is the header value v[0..n), blanks around it aside, want (any case)? */
bool pxhttp_value_is(const char *v, size_t n, const char *want)
{
	while (n && (v[0] == ' ' || v[0] == '\t'))
		v++, n--;
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	return n == strlen(want) && strncasecmp(v, want, n) == 0;
}

/* The tokens of the request's Connection headers, one by one: calls
 * f(tok, len, arg) until it returns true (then true). */
static bool conn_tokens(const struct h1_msg *m, bool (*f)(const char *, size_t, const void *), const void *arg)
{
	for (size_t i = 0; i < m->nh; i++) {
		if (m->h[i].name_len != 10 || strncasecmp(m->head + m->h[i].name, "connection", 10) != 0)
			continue;
		const char *v = m->head + m->h[i].value;
		size_t vl = m->h[i].value_len, k = 0;
		while (k < vl) {
			while (k < vl && (v[k] == ' ' || v[k] == '\t' || v[k] == ','))
				k++;
			size_t s = k;
			while (k < vl && v[k] != ',')
				k++;
			size_t e = k;
			while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
				e--;
			if (e > s && f(v + s, e - s, arg))
				return true;
		}
	}
	return false;
}

struct field {
	const char *n;
	size_t nl;
};

static bool tok_is(const char *t, size_t tl, const void *arg)
{
	const struct field *w = arg;
	return tl == w->nl && strncasecmp(t, w->n, tl) == 0;
}

/* Does the client's Connection name the field n[0..nl) (hop-by-hop: the
 * proxy drops it)? */
static bool conn_names(const struct h1_msg *m, const char *n, size_t nl)
{
	struct field w = {n, nl};
	return conn_tokens(m, tok_is, &w);
}

/* Does header i carry a secret's placeholder (raw, or in Basic credentials)? */
static bool hdr_has_placeholder(const struct pxhttp *h, const struct h1_msg *m, size_t i)
{
	const char *n = m->head + m->h[i].name, *v = m->head + m->h[i].value;
	size_t nl = m->h[i].name_len, vl = m->h[i].value_len;
	buf d = {0};
	bool basic = is_auth(n, nl) && basic_creds(v, vl, &d);
	bool hit = false;
	for (size_t k = 0; k < h->nsec && !hit; k++) {
		const char *ph = h->sec[k].placeholder;
		size_t pl = strlen(ph);
		hit = pl && (memmem(v, vl, ph, pl) || (basic && d.len && memmem(d.p, d.len, ph, pl)));
	}
	buf_wipe(&d);
	return hit;
}

struct conn_check {
	const struct pxhttp *h;
	const struct h1_msg *m;
	const char *why;
};

static bool tok_refused(const char *t, size_t tl, const void *arg)
{
	struct conn_check *c = (struct conn_check *)arg;
	if ((tl == 4 && strncasecmp(t, "host", 4) == 0)) {
		c->why = "Connection names Host (hop-by-hop fields are dropped; Host is not one)";
		return true;
	}
	if ((tl == 14 && strncasecmp(t, "content-length", 14) == 0) ||
	    (tl == 17 && strncasecmp(t, "transfer-encoding", 17) == 0)) {
		c->why = "Connection names the body's framing (hop-by-hop fields are dropped)";
		return true;
	}
	for (size_t i = 0; i < c->m->nh; i++)
		if (c->m->h[i].name_len == tl && strncasecmp(c->m->head + c->m->h[i].name, t, tl) == 0 &&
		    hdr_has_placeholder(c->h, c->m, i)) {
			c->why = "Connection names a header a secret is injected into (hop-by-hop fields are dropped)";
			return true;
		}
	return false;
}

/* A Connection that names a field the proxy must not drop (RFC 9110 7.6.1:
 * the fields it names are hop-by-hop, dropped here): Host, the body's
 * framing, or a header carrying a secret's placeholder. NULL if none. */
static const char *connection_problem(const struct pxhttp *h, const struct h1_msg *m)
{
	struct conn_check c = {h, m, NULL};
	conn_tokens(m, tok_refused, &c);
	return c.why;
}

/* Copy the head for the upstream: origin-form target; on a forward
 * connection the checked host as Host and one request per connection (on
 * an opened one the client's Host, checked, or the checked authority if it
 * sent none); the proxy's own headers never go on. */
static void rewrite_head(const struct pxhttp *h, const struct h1_msg *m, const char *path, bool upgrade,
			 uint32_t hmask, uint32_t qmask, bool add_host, buf *out)
{
	buf_printf(out, "%s ", m->method);
	put_subst(h, qmask, path, strlen(path), out);
	buf_printf(out, " HTTP/1.%d\r\n", m->minor);
	bool filtered = (hmask | qmask) && h->echo;
	if (filtered)
		buf_printf(out, "Accept-Encoding: identity\r\n");
	for (size_t i = 0; i < m->nh; i++) {
		const char *n = m->head + m->h[i].name;
		size_t nl = m->h[i].name_len;
		static const char *const drop[] = {"host", "connection", "proxy-connection", "proxy-authorization",
						   "keep-alive"};
		bool skip = false;
		for (size_t k = 0; k < sizeof(drop) / sizeof(drop[0]) && !skip; k++)
			skip = strlen(drop[k]) == nl && strncasecmp(n, drop[k], nl) == 0;
		if (!h->forward && nl == 4 && strncasecmp(n, "host", 4) == 0)
			skip = false;
		/* Hop-by-hop: what the client's Connection names is not sent on
		 * (issue 27.2 review; the websocket's Upgrade aside). */
		if (!skip && conn_names(m, n, nl) && !(upgrade && nl == 7 && strncasecmp(n, "upgrade", 7) == 0))
			skip = true;
		/* A request that carries a value: its answer comes uncompressed,
		 * so that an echo of the value can be found in it (identity
		 * asked for below: no Accept-Encoding means any coding, RFC
		 * 9110 12.5.3), and no transfer coding but chunked. */
		if (filtered && nl == 15 && strncasecmp(n, "accept-encoding", 15) == 0)
			skip = true;
		if (filtered && nl == 2 && strncasecmp(n, "te", 2) == 0 &&
		    !pxhttp_value_is(m->head + m->h[i].value, m->h[i].value_len, "trailers"))
			skip = true;
		if (!skip) {
			buf_printf(out, "%.*s", (int)(m->h[i].value - m->h[i].name), m->head + m->h[i].name);
			put_value(h, hmask, n, nl, m->head + m->h[i].value, m->h[i].value_len, out);
			buf_printf(out, "\r\n");
		}
	}
	if (h->forward) {
		char hp[300];
		authority(h, hp, sizeof(hp));
		buf_printf(out, "Host: %s\r\nConnection: %s\r\n", hp, upgrade ? "Upgrade" : "close");
	} else {
		if (add_host) {
			char hp[300];
			authority(h, hp, sizeof(hp));
			buf_printf(out, "Host: %s\r\n", hp); /* none came: the upstream gets the checked one */
		}
		/* The proxy's own Connection, with the client's wish to close
		 * (HTTP/1.0: to keep it) */
		bool close = m->conn_close || (m->minor == 0 && !conn_names(m, "keep-alive", 10));
		buf_printf(out, "Connection: %s\r\n", upgrade ? "Upgrade" : close ? "close" : "keep-alive");
	}
	buf_printf(out, "\r\n");
}

static void refuse(struct pxhttp *h, const char *method, const char *path, const char *rules)
{
	char p[256], target[600], msg[1200];
	clean_path(h, path, p, sizeof(p));
	snprintf(target, sizeof(target), "%s %s%s", method, h->target, p[0] == '/' ? p : "");
	report_add_denial(h->rep, "network", target);
	h->rep->net.denied++;
	snprintf(msg, sizeof(msg), "cordon: %s: no rule of network.allow admits it (%s)", target, rules);
	pxhttp_answer(&h->refusal, 403, msg);
	h->refused = true;
}

/* A request refused before it goes anywhere: logged with status 403. */
static void refuse_logged(struct pxhttp *h, const char *method, const char *path, const char *why)
{
	size_t log = log_request(h, method, path);
	if (pxhttp_entry(h, log))
		pxhttp_entry(h, log)->status = 403;
	refuse(h, method, path, why);
}

/* A request whose Host is not exactly the connection's authority (issue
 * 27.2): a front end that routes by Host would take it (and a credential
 * injected into it) to another tenant, past the rules checked here.
 * Refused, logged with status 403, a denial. */
static void refuse_host(struct pxhttp *h, const char *method, const char *path, const char *why)
{
	size_t log = log_request(h, method, path);
	if (pxhttp_entry(h, log))
		pxhttp_entry(h, log)->status = 403;
	char p[256], target[900], auth[300], msg[1400];
	clean_path(h, path, p, sizeof(p));
	authority(h, auth, sizeof(auth));
	snprintf(target, sizeof(target), "%s %s%s (%s)", method, h->target, p[0] == '/' ? p : "", why);
	report_add_denial(h->rep, "network", target);
	h->rep->net.denied++;
	snprintf(msg, sizeof(msg), "cordon: %s %s%s: %s; a request on this connection goes with Host: %s (or none)",
		 method, h->target, p[0] == '/' ? p : "", why, auth);
	pxhttp_answer(&h->refusal, 403, msg);
	h->refused = true;
}

/* A request refused for what it is, whatever the rules (an upgrade to
 * another protocol than websocket, hop-by-hop fields the proxy cannot drop):
 * logged with status 403, a denial naming why, and why in the 403. */
static void refuse_because(struct pxhttp *h, const char *method, const char *path, const char *why)
{
	size_t log = log_request(h, method, path);
	if (pxhttp_entry(h, log))
		pxhttp_entry(h, log)->status = 403;
	char p[256], target[900], msg[1200];
	clean_path(h, path, p, sizeof(p));
	snprintf(target, sizeof(target), "%s %s%s (%s)", method, h->target, p[0] == '/' ? p : "", why);
	report_add_denial(h->rep, "network", target);
	h->rep->net.denied++;
	snprintf(msg, sizeof(msg), "cordon: %s %s%s: %s", method, h->target, p[0] == '/' ? p : "", why);
	pxhttp_answer(&h->refusal, 403, msg);
	h->refused = true;
}

/* An Upgrade header other than exactly "websocket"? After a 101 the
 * connection's bytes go on unread: h2c, say, would carry requests to any
 * host or path past every check (issue 27.2 review). */
bool pxhttp_upgrade_not_websocket(const struct h1_msg *m)
{
	for (size_t i = 0; i < m->nh; i++)
		if (m->h[i].name_len == 7 && strncasecmp(m->head + m->h[i].name, "upgrade", 7) == 0 &&
		    !pxhttp_value_is(m->head + m->h[i].value, m->h[i].value_len, "websocket"))
			return true;
	return false;
}

static void count_injections(struct pxhttp *h, uint32_t mask)
{
	struct run_report *r = h->rep;
	for (size_t k = 0; k < h->nsec && k < 32; k++) {
		if (!(mask >> k & 1))
			continue;
		size_t i = 0;
		while (i < r->net.ninj && !(r->net.inj[i].secret == h->sec[k].index && strcmp(r->net.inj[i].target, h->target) == 0))
			i++;
		if (i == r->net.ninj) {
			struct net_injection *v = r->net.ninj < NET_INJECTIONS_MAX ? realloc(r->net.inj, (r->net.ninj + 1) * sizeof(*v)) : NULL;
			if (!v)
				continue;
			r->net.inj = v;
			memset(&v[i], 0, sizeof(v[i]));
			v[i].secret = h->sec[k].index;
			snprintf(v[i].target, sizeof(v[i].target), "%s", h->target);
			r->net.ninj++;
		}
		r->net.inj[i].count++;
	}
}

/* A request head: checked, then rewritten for the upstream or refused. */
static int on_head(struct pxhttp *h, buf *to_up)
{
	struct h1_msg *m = &h->req.msg;
	h->nreq++;
	const char *path = origin_form(h, m->target);
	bool upgrade = m->upgrade && m->conn_upgrade;
	if (!path || strcmp(m->method, "CONNECT") == 0) {
		char d[400];
		snprintf(d, sizeof(d), "%s", h->forward ? "another origin than this connection's, or not an absolute http:// target"
						       : "not an origin-form target");
		refuse_logged(h, m->method, "", d);
		return 0;
	}
	/* A GET, HEAD or TRACE with a body: an upstream that ignores such a
	 * body (many do) reads it as a request of its own, one no rule here
	 * checked. Refused. */
	if ((m->chunked || (m->has_cl && m->cl)) &&
	    (strcmp(m->method, "GET") == 0 || strcmp(m->method, "HEAD") == 0 || strcmp(m->method, "TRACE") == 0)) {
		refuse_logged(h, m->method, path, "a GET, HEAD or TRACE request with a body (an upstream may read the body as a request of its own)");
		return 0;
	}
	/* Exactly one Host upstream, the authority checked (issue 27.2). */
	bool no_host = false;
	const char *bad_host = host_problem(h, m, &no_host);
	if (bad_host) {
		refuse_host(h, m->method, path, bad_host);
		return 0;
	}
	if (pxhttp_upgrade_not_websocket(m)) {
		refuse_because(h, m->method, path, "an Upgrade other than websocket (after a 101 the bytes would go on unchecked)");
		return 0;
	}
	const char *hbh = connection_problem(h, m);
	if (hbh) {
		refuse_because(h, m->method, path, hbh);
		return 0;
	}
	buf why = {0};
	bool ok = admitted(h, m->method, path, upgrade, &why);
	size_t log = log_request(h, m->method, path);
	if (!ok) {
		if (pxhttp_entry(h, log))
			pxhttp_entry(h, log)->status = 403;
		refuse(h, m->method, path, why.p ? why.p : "");
		buf_free(&why);
		return 0;
	}
	buf_free(&why);
	/* Secrets: a placeholder goes only where its secret may (swapped for
	 * the value); anywhere else the request is refused. */
	uint32_t hmask = 0, qmask = 0;
	for (size_t k = 0; k < h->nsec && k < 32; k++) {
		const struct pxhttp_secret *s = &h->sec[k];
		if (!pxhttp_head_has(m, s->placeholder))
			continue;
		if (!secret_here(h, s)) {
			if (pxhttp_entry(h, log))
				pxhttp_entry(h, log)->status = 403;
			secret_refused(h, s, &h->refusal);
			h->refused = true;
			return 0;
		}
		if (s->in_header)
			hmask |= 1u << k;
		if (s->in_query)
			qmask |= 1u << k;
	}
	if (pxhttp_entry(h, log))
		for (size_t k = 0; k < h->nsec && k < 32; k++)
			if ((hmask | qmask) >> k & 1)
				pxhttp_entry(h, log)->injected |= 1u << h->sec[k].index;
	if (hmask | qmask)
		count_injections(h, hmask | qmask);
	h->injected |= hmask | qmask;
	h->carry_len = 0;
	size_t before = to_up->len;
	rewrite_head(h, m, path, upgrade, hmask, qmask, no_host, to_up);
	struct pxhttp_pending *q = &h->q[h->nq++];
	snprintf(q->method, sizeof(q->method), "%s", m->method);
	q->log = log;
	q->upgrade = upgrade;
	q->minor = m->minor;
	q->filtered = (hmask | qmask) && h->echo;
	if (pxhttp_entry(h, log))
		pxhttp_entry(h, log)->up += to_up->len - before;
	h1_body_for(&h->req, NULL);
	return 0;
}

void pxhttp_flush_refusal(struct pxhttp *h, buf *to_down)
{
	if (h->refused && !h->done && (h->nq == 0 || h->resp_opaque)) {
		if (!h->resp_opaque)
			buf_append(to_down, h->refusal.p, h->refusal.len);
		h->done = true;
	}
}

int pxhttp_client(struct pxhttp *h, const char *d, size_t n, buf *to_up, buf *to_down)
{
	if (h->done && !h->req_opaque)
		return 0; /* all is said: nothing more is read (or injected) */
	if (h->req_opaque)
		return buf_append(to_up, d, n);
	if (buf_append(&h->cin, d, n) < 0)
		return -1;
	size_t off = 0;
	int rc = 0;
	while (!h->refused && h->nq < PXHTTP_PIPELINE && !h->req_opaque) {
		/* One exchange at a time upstream: a pipelined request waits (in
		 * cin, unread) for the answer to the one before it, so that
		 * nothing after an exchange that is refused or ends the
		 * connection (an unreadable or unasked-for answer) goes out. */
		if (h->nq && h->req.st == S_HEAD)
			break;
		size_t used;
		bool trailer = h->req.st == S_TRAILER;
		int r = h1_feed(&h->req, h->cin.p + off, h->cin.len - off, &used);
		if (r == H1_NEED) {
			off += used;
			break;
		}
		if (r == H1_ERR) {
			char why[200];
			snprintf(why, sizeof(why), "cordon: %s: a malformed request (%s)", h->target, h->req.err);
			report_add_denial(h->rep, "network", h->target);
			h->rep->net.denied++;
			pxhttp_answer(to_down, 400, why);
			rc = -1;
			break;
		}
		if (r == H1_HEAD) {
			off += used;
			on_head(h, to_up);
			continue;
		}
		/* A chunked body's trailer fields are dropped (a Host there, say,
		 * would reach a server that merges trailers unchecked): the last
		 * chunk ends with the empty line alone. */
		if (trailer && (r == H1_DATA || r == H1_END)) {
			if (r == H1_END) {
				buf_append(to_up, "\r\n", 2);
				if (h->nq && pxhttp_entry(h, h->q[h->nq - 1].log))
					pxhttp_entry(h, h->q[h->nq - 1].log)->up += 2;
			}
			off += used;
			continue;
		}
		/* DATA, END: the body (and its framing) goes on as it is,
		 * unless it carries a placeholder where it may not go */
		if (used && h->nsec && body_leaks(h, h->cin.p + off, used)) {
			pxhttp_answer(to_down, 403, "cordon: a secret's placeholder in a request body, to a host it does not go to");
			rc = -1;
			break;
		}
		if (used && h->nq) {
			struct net_request *e = pxhttp_entry(h, h->q[h->nq - 1].log);
			if (e)
				e->up += used;
		}
		buf_append(to_up, h->cin.p + off, used);
		off += used;
	}
	if (h->req_opaque && off < h->cin.len) /* upgraded while bytes waited */
		buf_append(to_up, h->cin.p + off, h->cin.len - off), off = h->cin.len;
	memmove(h->cin.p, h->cin.p + off, h->cin.len - off);
	h->cin.len -= off;
	pxhttp_flush_refusal(h, to_down);
	return rc;
}


bool pxhttp_want_client(const struct pxhttp *h)
{
	/* A waiting request (see pxhttp_client) holds at most what one read
	 * brought: no more is read until it goes on. */
	return !h->refused && (h->req_opaque || (h->nq < PXHTTP_PIPELINE && !(h->nq && h->req.st == S_HEAD && h->cin.len)));
}
