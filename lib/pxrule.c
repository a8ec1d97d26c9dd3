/* The egress rules beyond host:port (pxrule.h): parsed, copied, matched
 * against a request (method, path, upgrade), and a rule's host:port
 * against a connection's target. Pure; fuzzed and unit-tested. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "cleanup.h"
#include "error.h"
#include "pxrule.h"

bool pxrule_restricted(const struct net_rule *r)
{
	return r->methods.n || r->paths.n || !r->upgrade;
}

static bool tchar(int c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

const char *pxrule_pattern_error(const char *p)
{
	if (p[0] != '/')
		return "a path pattern starts with '/'";
	if (strlen(p) >= PXRULE_PATH_MAX)
		return "a path pattern is at most 8191 bytes";
	size_t segs = 0;
	for (const char *s = p + 1;; segs++) {
		const char *e = strchr(s, '/');
		size_t l = e ? (size_t)(e - s) : strlen(s);
		if (l == 0 && e)
			return "an empty segment (\"//\")";
		if (memchr(s, '*', l) && !(l == 1 || (l == 2 && s[1] == '*')))
			return "'*' and '**' stand for whole segments only";
		for (size_t i = 0; i < l; i++)
			if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f || s[i] == '?' || s[i] == '#' || s[i] == '\\' ||
			    s[i] == '%')
				return "a segment holds a space, control character, '?', '#', '%' or '\\'";
		if ((l == 1 && s[0] == '.') || (l == 2 && s[0] == '.' && s[1] == '.'))
			return "a \".\" or \"..\" segment";
		if (!e)
			break;
		s = e + 1;
	}
	if (segs + 1 > PXRULE_MAX_SEGMENTS)
		return "at most 32 segments";
	return NULL;
}

static int add_unique(strv *v, const char *s)
{
	return strv_contains(v, s) ? 0 : strv_push(v, s);
}

int pxrule_add(struct net_rules *rs, const char *host, const strv *methods, const strv *paths, bool upgrade,
	       cordon_error *err)
{
	struct net_rule r = {.upgrade = upgrade};
	for (size_t i = 0; methods && i < methods->n; i++) {
		char m[32];
		const char *s = methods->v[i];
		size_t l = strlen(s);
		if (l == 0 || l >= sizeof(m))
			goto bad_method;
		for (size_t k = 0; k <= l; k++) {
			if (k < l && !tchar((unsigned char)s[k]))
				goto bad_method;
			m[k] = (char)toupper((unsigned char)s[k]);
		}
		if (add_unique(&r.methods, m) < 0)
			goto oom;
		continue;
	bad_method:
		strv_free(&r.methods);
		return cordon_err(err, 0, "\"%.40s\" is not an HTTP method (a token of at most 31 characters)", s);
	}
	for (size_t i = 0; paths && i < paths->n; i++) {
		const char *why = pxrule_pattern_error(paths->v[i]);
		if (why) {
			strv_free(&r.methods);
			strv_free(&r.paths);
			return cordon_err(err, 0, "path \"%.80s\": %s", paths->v[i], why);
		}
		if (add_unique(&r.paths, paths->v[i]) < 0)
			goto oom;
	}
	if (!pxrule_restricted(&r))
		for (size_t i = 0; i < rs->n; i++)
			if (!pxrule_restricted(&rs->v[i]) && strcasecmp(rs->v[i].host, host) == 0)
				return 0;
	struct net_rule *v = realloc(rs->v, (rs->n + 1) * sizeof(*v));
	if (!v || !(r.host = strdup(host))) {
		if (v)
			rs->v = v;
		goto oom;
	}
	rs->v = v;
	rs->v[rs->n++] = r;
	return 0;
oom:
	strv_free(&r.methods);
	strv_free(&r.paths);
	return cordon_oom(err);
}

int pxrule_copy(struct net_rules *dst, const struct net_rules *src)
{
	cordon_error e = {0};
	for (size_t i = 0; i < src->n; i++)
		if (pxrule_add(dst, src->v[i].host, &src->v[i].methods, &src->v[i].paths, src->v[i].upgrade, &e) < 0)
			return -1;
	return 0;
}

void pxrule_free(struct net_rules *rs)
{
	for (size_t i = 0; i < rs->n; i++) {
		free(rs->v[i].host);
		strv_free(&rs->v[i].methods);
		strv_free(&rs->v[i].paths);
	}
	free(rs->v);
	rs->v = NULL;
	rs->n = 0;
}

/* ---- segments ---- */

struct segs {
	char *s[PXRULE_MAX_SEGMENTS + 1];
	size_t n;
	char mem[PXRULE_PATH_MAX];
};

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
}

/* Split a pattern (decode = false) or a request path (decode = true: each
 * segment percent-decoded; refused: bad escapes, '\', encoded '/', '\' or
 * NUL, "." and ".." segments, also with path parameters: "..;x"; a '#':
 * a request never carries a fragment, and an upstream may read past it).
 * A pattern's path ends at '?' or '#', a request's at '?'. */
static bool split(const char *in, bool decode, struct segs *g)
{
	g->n = 0;
	if (in[0] != '/')
		return false;
	size_t o = 0;
	const char *p = in + 1;
	for (;;) {
		if (g->n >= PXRULE_MAX_SEGMENTS + 1)
			return false;
		g->s[g->n++] = g->mem + o;
		char *seg = g->mem + o;
		for (; *p && *p != '/' && *p != '?' && (decode || *p != '#'); p++) {
			int c = (unsigned char)*p;
			if (decode && (c == '\\' || c == '#'))
				return false;
			if (decode && c == '%') {
				int h = hexval((unsigned char)p[1]), l = h < 0 ? -1 : hexval((unsigned char)p[2]);
				if (l < 0)
					return false;
				c = h << 4 | l;
				if (c == 0 || c == '/' || c == '\\')
					return false;
				p += 2;
			}
			if (o + 2 >= sizeof(g->mem))
				return false;
			g->mem[o++] = (char)c;
		}
		g->mem[o++] = '\0';
		size_t base = strcspn(seg, ";"); /* "..;x" is ".." to many servers */
		if (decode && ((base == 1 && seg[0] == '.') || (base == 2 && seg[0] == '.' && seg[1] == '.')))
			return false;
		if (*p != '/')
			break;
		p++;
	}
	/* "/" alone is the root: no segment. */
	if (g->n == 1 && !g->s[0][0])
		g->n = 0;
	return true;
}

static bool is2(const char *s)
{
	return s[0] == '*' && s[1] == '*' && !s[2];
}

static bool is1(const char *s)
{
	return s[0] == '*' && !s[1];
}

bool pxrule_path_matches(const char *pattern, const char *target)
{
	struct segs P, T, *p = &P, *t = &T; /* 2 x 8.5 KiB of stack */
	if (!split(pattern, false, p) || !split(target, true, t))
		return false;
	/* m[i][j]: pattern segments i.. match path segments j.. */
	bool m[PXRULE_MAX_SEGMENTS + 2][PXRULE_MAX_SEGMENTS + 2] = {{false}};
	for (size_t i = p->n + 1; i-- > 0;)
		for (size_t j = t->n + 1; j-- > 0;) {
			if (i == p->n)
				m[i][j] = j == t->n;
			else if (is2(p->s[i]))
				m[i][j] = m[i + 1][j] || (j < t->n && m[i][j + 1]);
			else
				m[i][j] = j < t->n && (is1(p->s[i]) || strcmp(p->s[i], t->s[j]) == 0) && m[i + 1][j + 1];
		}
	return m[0][0];
}

/* Every path task pattern tp matches, cp matches too (conservative: false
 * when unsure). */
static bool pattern_within(const char *tp, const char *cp)
{
	struct segs P, Q, *p = &P, *q = &Q;
	if (!split(tp, false, p) || !split(cp, false, q))
		return false;
	bool w[PXRULE_MAX_SEGMENTS + 2][PXRULE_MAX_SEGMENTS + 2] = {{false}};
	for (size_t i = p->n + 1; i-- > 0;)
		for (size_t j = q->n + 1; j-- > 0;) {
			if (j == q->n)
				w[i][j] = i == p->n;
			else if (is2(q->s[j]))
				w[i][j] = w[i][j + 1] || (i < p->n && w[i + 1][j]);
			else if (i == p->n || is2(p->s[i]))
				w[i][j] = false;
			else
				w[i][j] = (is1(q->s[j]) || (!is1(p->s[i]) && strcmp(p->s[i], q->s[j]) == 0)) &&
					  w[i + 1][j + 1];
		}
	return w[0][0];
}

bool pxrule_admits(const struct net_rule *r, const char *method, const char *target, bool upgrade)
{
	if (upgrade && !r->upgrade)
		return false;
	if (r->methods.n && !strv_contains(&r->methods, method))
		return false;
	if (!r->paths.n)
		return true;
	for (size_t i = 0; i < r->paths.n; i++)
		if (pxrule_path_matches(r->paths.v[i], target))
			return true;
	return false;
}

bool pxrule_within(const struct net_rule *t, const struct net_rule *c)
{
	if (t->upgrade && !c->upgrade)
		return false;
	if (c->methods.n) {
		if (!t->methods.n)
			return false;
		for (size_t i = 0; i < t->methods.n; i++)
			if (!strv_contains(&c->methods, t->methods.v[i]))
				return false;
	}
	if (!c->paths.n)
		return true;
	if (!t->paths.n)
		return false;
	for (size_t i = 0; i < t->paths.n; i++) {
		bool ok = false;
		for (size_t k = 0; k < c->paths.n && !ok; k++)
			ok = pattern_within(t->paths.v[i], c->paths.v[k]);
		if (!ok)
			return false;
	}
	return true;
}

static void join(buf *b, const char *label, const strv *v)
{
	if (!v->n)
		return;
	buf_printf(b, " %s ", label);
	for (size_t i = 0; i < v->n; i++)
		buf_printf(b, "%s%s", i ? "," : "", v->v[i]);
}

void pxrule_describe(const struct net_rule *r, char *out, size_t outsz)
{
	buf b = {0};
	buf_printf(&b, "%s", r->host);
	join(&b, "methods", &r->methods);
	join(&b, "paths", &r->paths);
	if (r->upgrade && pxrule_restricted(r))
		buf_printf(&b, " upgrade");
	snprintf(out, outsz, "%s", b.p ? b.p : r->host);
	buf_free(&b);
}

void pxrule_target_path(const char *target, char *out, size_t outsz)
{
	size_t o = 0;
	for (const char *p = target; *p && *p != '?' && *p != '#' && o + 1 < outsz; p++) {
		unsigned char c = (unsigned char)*p;
		out[o++] = c > ' ' && c < 0x7f ? (char)c : '?';
	}
	if (outsz)
		out[o] = '\0';
}

/* ---- a rule's host:port (moved from sup-proxy.c) ---- */

static void strip_brackets(const char *in, char *out, size_t outsz)
{
	size_t n = strlen(in);
	if (n >= 2 && in[0] == '[' && in[n - 1] == ']')
		snprintf(out, outsz, "%.*s", (int)(n - 2), in + 1);
	else
		snprintf(out, outsz, "%s", in);
}

static bool is_ip_literal(const char *h)
{
	unsigned char b[16];
	return inet_pton(AF_INET, h, b) == 1 || inet_pton(AF_INET6, h, b) == 1;
}

bool proxy_rule_matches(const char *rule, const char *host, uint16_t port, bool *literal)
{
	const char *colon = strrchr(rule, ':');
	if (!colon)
		return false;
	const char *rport = colon + 1;
	if (strcmp(rport, "*") != 0) {
		char *end;
		long p = strtol(rport, &end, 10);
		if (*end || p != port)
			return false;
	}
	char raw[300], rhost[300], h[300];
	snprintf(raw, sizeof(raw), "%.*s", (int)(colon - rule), rule);
	strip_brackets(raw, rhost, sizeof(rhost));
	strip_brackets(host, h, sizeof(h));
	if (literal)
		*literal = false;
	/* The literal name localhost in a rule is the host's loopback, as
	 * 127.0.0.1 and [::1] are: it matches those and the name itself, and
	 * is never looked up (any other name leading to loopback stays refused). */
	if (strcasecmp(rhost, "localhost") == 0) {
		bool m = strcasecmp(h, "localhost") == 0 || strcmp(h, "127.0.0.1") == 0 || strcmp(h, "::1") == 0;
		if (literal)
			*literal = m;
		return m;
	}
	if (rhost[0] == '*' && rhost[1] == '.') {
		size_t sl = strlen(rhost + 1), hl = strlen(h);
		return hl > sl && strcasecmp(h + hl - sl, rhost + 1) == 0;
	}
	if (is_ip_literal(rhost) && is_ip_literal(h)) {
		unsigned char a[16] = {0}, b[16] = {0};
		int fa = strchr(rhost, ':') ? AF_INET6 : AF_INET, fb = strchr(h, ':') ? AF_INET6 : AF_INET;
		if (fa != fb || inet_pton(fa, rhost, a) != 1 || inet_pton(fb, h, b) != 1 || memcmp(a, b, 16) != 0)
			return false;
		if (literal)
			*literal = true;
		return true;
	}
	return strcasecmp(rhost, h) == 0;
}

bool pxrule_pin(const strv *resolve, const char *name, uint16_t port, struct sockaddr_storage *dst, socklen_t *len)
{
	const char *addr = NULL;
	size_t nl = strlen(name);
	for (size_t i = 0; !addr && resolve && i < resolve->n; i++)
		if (strncasecmp(resolve->v[i], name, nl) == 0 && resolve->v[i][nl] == '=')
			addr = resolve->v[i] + nl + 1;
	if (!addr)
		return false;
	memset(dst, 0, sizeof(*dst));
	struct sockaddr_in *s4 = (struct sockaddr_in *)dst;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)dst;
	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		*len = sizeof(*s4);
		return true;
	}
	if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		*len = sizeof(*s6);
		return true;
	}
	return false;
}
