/* The egress proxy's request parser: HTTP CONNECT, absolute-form HTTP and
 * SOCKS5, and a refused request's target as far as it was sent. Pure (no
 * syscalls); fuzzed (tests/fuzz/fuzz_proxy.c). */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "pxparse.h"
#include "pxaddr.h"
#include "proxy.h"
#include "redact-stream.h"
#include "redact.h"

/* ---- the request parser (pure; fuzzed) ---- */

static bool parse_port(const char *s, uint16_t *out)
{
	if (!*s || strlen(s) > 5)
		return false;
	unsigned long v = 0;
	for (const char *p = s; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return false;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v < 1 || v > 65535)
		return false;
	*out = (uint16_t)v;
	return true;
}

/* "host:port" or "[v6]:port" (port optional when defport != 0). */
static bool split_hostport(const char *in, uint16_t defport, char *host, size_t hostsz, uint16_t *port)
{
	char tmp[600];
	if (snprintf(tmp, sizeof(tmp), "%s", in) >= (int)sizeof(tmp) || !tmp[0])
		return false;
	char *h = tmp, *colon;
	if (tmp[0] == '[') {
		char *rb = strchr(tmp, ']');
		if (!rb)
			return false;
		*rb = '\0';
		h = tmp + 1;
		colon = rb[1] == ':' ? rb + 1 : NULL;
		if (rb[1] && !colon)
			return false;
	} else {
		colon = strrchr(tmp, ':');
		if (colon && strchr(tmp, ':') != colon)
			return false; /* a bare IPv6 address needs brackets */
	}
	if (colon) {
		*colon = '\0';
		if (!parse_port(colon + 1, port))
			return false;
	} else if (defport) {
		*port = defport;
	} else {
		return false;
	}
	if (!*h || strlen(h) >= hostsz)
		return false;
	for (const char *p = h; *p; p++) /* a name or an address, nothing else */
		if (!(isalnum((unsigned char)*p) || *p == '.' || *p == '-' || *p == '_' || *p == ':'))
			return false;
	snprintf(host, hostsz, "%s", h);
	return true;
}

int proxy_parse_request(const char *data, size_t len, struct proxy_request *r)
{
	memset(r, 0, sizeof(*r));
	if (len == 0)
		return PR_MORE;
	if ((uint8_t)data[0] == 5)
		return proxy_parse_socks(data, len, r);
	if ((uint8_t)data[0] == 4)
		return PR_BAD; /* SOCKS4(a): not spoken here; refused at once, not waited on */
	const char *end = memmem(data, len, "\r\n\r\n", 4);
	if (!end)
		return len >= PROXY_HDR_MAX ? PR_BAD : PR_MORE;
	size_t hdr_len = (size_t)(end - data) + 4;
	/* A bare CR or LF inside the header (a line break a lenient server
	 * would honour, "X-A: a\nHost: evil", or an obs-fold after one):
	 * refused, never forwarded. */
	for (size_t i = 0; i < hdr_len; i++)
		if ((data[i] == '\r' && (i + 1 == hdr_len || data[i + 1] != '\n')) ||
		    (data[i] == '\n' && (i == 0 || data[i - 1] != '\r')))
			return PR_BAD;
	const char *eol = memmem(data, hdr_len, "\r\n", 2);
	char line[PROXY_HDR_MAX];
	snprintf(line, sizeof(line), "%.*s", (int)(eol - data), data);
	char method[32], tgt[8192], ver[32], extra;
	if (sscanf(line, "%31s %8191s %31s %c", method, tgt, ver, &extra) != 3 || strncmp(ver, "HTTP/1.", 7) != 0)
		return PR_BAD;
	char path[8192] = "/";
	char hostport[600];
	if (strcmp(method, "CONNECT") == 0) {
		r->proto = PROTO_CONNECT;
		snprintf(hostport, sizeof(hostport), "%s", tgt);
		if (!split_hostport(hostport, 0, r->host, sizeof(r->host), &r->port))
			return PR_BAD;
	} else if (strncasecmp(tgt, "http://", 7) == 0) {
		r->proto = PROTO_FORWARD;
		const char *h = tgt + 7, *slash = strchr(h, '/');
		size_t hl = slash ? (size_t)(slash - h) : strlen(h);
		if (hl >= sizeof(hostport) || memchr(h, '@', hl))
			return PR_BAD; /* no userinfo: one host, the one checked */
		snprintf(hostport, sizeof(hostport), "%.*s", (int)hl, h);
		if (slash)
			snprintf(path, sizeof(path), "%s", slash);
		if (!split_hostport(hostport, 80, r->host, sizeof(r->host), &r->port))
			return PR_BAD;
	} else {
		return PR_BAD;
	}
	if (r->proto == PROTO_FORWARD) {
		/* origin-form upstream; one request per connection. The
		 * request-target wins over any Host the client sent (RFC 9112
		 * 3.2.2): the name that was checked is the name the server sees. */
		buf_printf(&r->upstream, "%s %s %s\r\nHost: %s\r\n", method, path, ver, hostport);
		const char *p = eol + 2;
		while (p < end) {
			const char *e = memmem(p, (size_t)(end - p) + 2, "\r\n", 2);
			size_t l = (size_t)(e - p);
			/* obs-fold, or space before the colon ("Host :"), could carry
			 * a Host past the filter to a lenient server: refused. */
			const char *colon = memchr(p, ':', l);
			if (!colon || colon == p || memchr(p, ' ', (size_t)(colon - p)) || memchr(p, '\t', (size_t)(colon - p))) {
				buf_free(&r->upstream);
				return PR_BAD;
			}
			if (!(l >= 5 && strncasecmp(p, "Host:", 5) == 0) &&
			    !(l >= 11 && strncasecmp(p, "Connection:", 11) == 0) &&
			    !(l >= 17 && strncasecmp(p, "Proxy-Connection:", 17) == 0) &&
			    !(l >= 20 && strncasecmp(p, "Proxy-Authorization:", 20) == 0) &&
			    !(l >= 11 && strncasecmp(p, "Keep-Alive:", 11) == 0))
				buf_printf(&r->upstream, "%.*s\r\n", (int)l, p);
			p = e + 2;
		}
		buf_printf(&r->upstream, "Connection: close\r\n\r\n");
	}
	/* Whatever followed the header (a body, a pipelined TLS hello) goes on. */
	if (buf_append(&r->upstream, data + hdr_len, len - hdr_len) < 0)
		return PR_BAD;
	r->consumed = len;
	return PR_OK;
}

int proxy_parse_socks(const char *data, size_t len, struct proxy_request *r)
{
	const uint8_t *b = (const uint8_t *)data;
	r->proto = PROTO_SOCKS;
	/* greeting: 05 n methods... */
	if (len < 2 || len < 2u + b[1])
		return PR_MORE;
	size_t g = 2u + b[1];
	bool noauth = false;
	for (size_t i = 2; i < g; i++)
		noauth |= b[i] == 0;
	if (!noauth)
		return PR_NOAUTH;
	r->greeting = g;
	/* request: 05 01 00 atyp addr port */
	const uint8_t *q = b + g;
	size_t ql = len - g;
	if (ql < 5)
		return PR_MORE;
	size_t need;
	if (q[3] == 1)
		need = 10;
	else if (q[3] == 4)
		need = 22;
	else if (q[3] == 3)
		need = 7u + q[4];
	else
		return PR_BADADDR;
	if (ql < need)
		return PR_MORE;
	if (q[0] != 5 || q[2] != 0)
		return PR_BAD;
	if (q[1] != 1)
		return PR_BADCMD;
	if (q[3] == 1) {
		inet_ntop(AF_INET, q + 4, r->host, sizeof(r->host));
	} else if (q[3] == 4) {
		inet_ntop(AF_INET6, q + 4, r->host, sizeof(r->host));
	} else {
		if (q[4] == 0 || memchr(q + 5, '\0', q[4]))
			return PR_BADADDR;
		snprintf(r->host, sizeof(r->host), "%.*s", (int)q[4], (const char *)q + 5);
		for (const char *p = r->host; *p; p++)
			if (!(isalnum((unsigned char)*p) || *p == '.' || *p == '-' || *p == '_'))
				return PR_BADADDR;
	}
	r->port = (uint16_t)(q[need - 2] << 8 | q[need - 1]);
	if (r->port == 0)
		return PR_BAD;
	if (buf_append(&r->upstream, data + g + need, len - g - need) < 0)
		return PR_BAD;
	r->consumed = len;
	return PR_OK;
}

/* The raw bytes t[0..tl) (NUL as '?'), redacted in full, then printable
 * bytes only (the rest as '?') and cut to at most cap bytes: a secret is
 * replaced before any cut can leave a prefix of it. */
static void put_target(const redactor *rd, const uint8_t *t, size_t tl, size_t cap, bool with_port,
		       unsigned port, char *out, size_t outsz)
{
	char *raw = malloc(tl + 1);
	if (!raw) {
		snprintf(out, outsz, "(malformed request)");
		return;
	}
	for (size_t i = 0; i < tl; i++)
		raw[i] = t[i] ? (char)t[i] : '?';
	raw[tl] = '\0';
	char *red = rd ? redact_string(rd, raw) : NULL;
	const char *src = red ? red : raw;
	if (rd && !red)
		src = "(unredactable)"; /* out of memory: nothing of it on record */
	char clean[256];
	size_t o = 0;
	for (size_t i = 0; src[i] && o + 1 < sizeof(clean) && o < cap; i++) {
		uint8_t ch = (uint8_t)src[i];
		clean[o++] = (ch > ' ' && ch < 0x7f) ? (char)ch : '?';
	}
	clean[o] = '\0';
	if (with_port)
		snprintf(out, outsz, "%s:%u", clean, port);
	else
		snprintf(out, outsz, "%s", clean);
	explicit_bzero(raw, tl);
	free(raw);
	free(red);
}

void proxy_partial_target(const redactor *rd, const char *data, size_t len, char *out, size_t outsz)
{
	const uint8_t *b = (const uint8_t *)data;
	snprintf(out, outsz, "(empty request)");
	if (len == 0 || outsz < 2)
		return;
	if (b[0] == 4) { /* SOCKS4: 04 cmd port(2) ipv4(4) */
		if (len >= 8)
			snprintf(out, outsz, "%u.%u.%u.%u:%u", b[4], b[5], b[6], b[7], (unsigned)(b[2] << 8 | b[3]));
		else
			snprintf(out, outsz, "(incomplete socks4 request)");
		return;
	}
	if (b[0] == 5) { /* 05 n methods... | 05 cmd 00 atyp addr port(2), whatever cmd */
		size_t g = len >= 2 ? 2u + b[1] : len + 1;
		const uint8_t *q = b + g;
		size_t ql = len > g ? len - g : 0, need = 0;
		char host[256] = "";
		if (ql >= 5 && q[3] == 1 && ql >= (need = 10))
			inet_ntop(AF_INET, q + 4, host, sizeof(host));
		else if (ql >= 5 && q[3] == 4 && ql >= (need = 22))
			inet_ntop(AF_INET6, q + 4, host, sizeof(host));
		else if (ql >= 5 && q[3] == 3 && ql >= (need = 7u + q[4])) {
			if (q[4]) {
				put_target(rd, q + 5, q[4], 255, true, (unsigned)(q[need - 2] << 8 | q[need - 1]),
					   out, outsz);
				return;
			}
		}
		if (host[0])
			host_port(out, outsz, host, (unsigned)(q[need - 2] << 8 | q[need - 1]));
		else
			snprintf(out, outsz, "(incomplete socks5 request)");
		return;
	}
	/* HTTP: the request-target if there is one, else the start of the line. */
	size_t n = 0;
	while (n < len && data[n] != '\r' && data[n] != '\n')
		n++;
	const char *t = data, *sp = memchr(data, ' ', n);
	size_t tl = n;
	if (sp) {
		const char *sp2 = memchr(sp + 1, ' ', n - (size_t)(sp + 1 - data));
		t = sp + 1;
		tl = sp2 ? (size_t)(sp2 - t) : n - (size_t)(t - data);
	}
	if (tl == 0) {
		snprintf(out, outsz, "(malformed request)");
		return;
	}
	put_target(rd, (const uint8_t *)t, tl, 200, false, 0, out, outsz);
}
