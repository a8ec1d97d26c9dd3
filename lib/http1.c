#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "http1.h"

enum { S_DONE = S_OPAQUE + 1 };

static bool tchar(int c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int fail(struct h1 *p, const char *why)
{
	p->err = why;
	return H1_ERR;
}

/* Is the comma-separated list v[0..n) holding token tok? */
static bool has_token(const char *v, size_t n, const char *tok)
{
	size_t tl = strlen(tok), i = 0;
	while (i < n) {
		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		size_t s = i;
		while (i < n && v[i] != ',')
			i++;
		size_t e = i;
		while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (e - s == tl && strncasecmp(v + s, tok, tl) == 0)
			return true;
	}
	return false;
}

static bool is_name(const char *n, size_t l, const char *want)
{
	return strlen(want) == l && strncasecmp(n, want, l) == 0;
}

static int parse_start(struct h1 *p, const char *line, size_t l)
{
	struct h1_msg *m = &p->msg;
	if (p->response) {
		/* HTTP/1.x SP ddd [SP reason] */
		if (l < 12 || memcmp(line, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)line[7]) || line[8] != ' ' ||
		    !isdigit((unsigned char)line[9]) || !isdigit((unsigned char)line[10]) ||
		    !isdigit((unsigned char)line[11]) || (l > 12 && line[12] != ' '))
			return fail(p, "malformed status line");
		m->minor = line[7] - '0';
		m->status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
		return H1_HEAD;
	}
	const char *sp1 = memchr(line, ' ', l);
	if (!sp1 || sp1 == line || (size_t)(sp1 - line) >= sizeof(m->method))
		return fail(p, "malformed request line");
	for (const char *c = line; c < sp1; c++)
		if (!tchar((unsigned char)*c))
			return fail(p, "malformed method");
	const char *t = sp1 + 1, *sp2 = memchr(t, ' ', l - (size_t)(t - line));
	if (!sp2 || sp2 == t || (size_t)(line + l - sp2) != 9 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
	    !isdigit((unsigned char)sp2[8]))
		return fail(p, "malformed request line");
	for (const char *c = t; c < sp2; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return fail(p, "malformed request target");
	snprintf(m->method, sizeof(m->method), "%.*s", (int)(sp1 - line), line);
	m->minor = sp2[8] - '0';
	/* The target is copied over the head's start line (it is not needed as
	 * is): NUL-terminated in place. */
	m->target = (char *)t;
	m->target[sp2 - t] = '\0';
	return H1_HEAD;
}

static int parse_head(struct h1 *p)
{
	struct h1_msg *m = &p->msg;
	memset(m, 0, sizeof(*m));
	char *h = p->head;
	size_t n = p->hlen;
	for (size_t i = 0; i < n; i++)
		if ((h[i] == '\r' && (i + 1 == n || h[i + 1] != '\n')) || (h[i] == '\n' && (i == 0 || h[i - 1] != '\r')) ||
		    h[i] == '\0')
			return fail(p, "a bare CR, LF or NUL in the head");
	m->head = h;
	m->head_len = n;
	const char *eol = memmem(h, n, "\r\n", 2);
	size_t off = (size_t)(eol - h) + 2;
	bool te = false;
	/* The headers first: the start line's target is cut in place after. */
	while (off + 2 < n) {
		const char *line = h + off, *e = memmem(line, n - off, "\r\n", 2);
		size_t l = (size_t)(e - line);
		const char *colon = memchr(line, ':', l);
		if (!colon || colon == line)
			return fail(p, "a header line without a name");
		for (const char *c = line; c < colon; c++)
			if (!tchar((unsigned char)*c))
				return fail(p, "whitespace or a bad character in a header name");
		if (m->nh >= H1_MAX_HEADERS)
			return fail(p, "too many header fields");
		size_t vs = (size_t)(colon + 1 - h), ve = off + l;
		while (vs < ve && (h[vs] == ' ' || h[vs] == '\t'))
			vs++;
		while (ve > vs && (h[ve - 1] == ' ' || h[ve - 1] == '\t'))
			ve--;
		struct h1_hdr *x = &m->h[m->nh++];
		*x = (struct h1_hdr){off, (size_t)(colon - line), vs, ve - vs};
		const char *nm = line, *v = h + vs;
		size_t nl = x->name_len, vl = ve - vs;
		if (is_name(nm, nl, "content-length")) {
			uint64_t cl = 0;
			if (!vl || vl > 18)
				return fail(p, "a bad Content-Length");
			for (size_t i = 0; i < vl; i++) {
				if (!isdigit((unsigned char)v[i]))
					return fail(p, "a bad Content-Length");
				cl = cl * 10 + (uint64_t)(v[i] - '0');
			}
			if (m->has_cl && cl != m->cl)
				return fail(p, "two different Content-Lengths");
			m->has_cl = true;
			m->cl = cl;
		} else if (is_name(nm, nl, "transfer-encoding")) {
			te = true;
			/* chunked must be the last coding; a request may have no other */
			size_t s = vl;
			while (s > 0 && v[s - 1] != ',')
				s--;
			size_t k = s;
			while (k < vl && (v[k] == ' ' || v[k] == '\t'))
				k++;
			m->chunked = vl - k == 7 && strncasecmp(v + k, "chunked", 7) == 0;
			if (!p->response && !(vl == 7 && m->chunked))
				return fail(p, "a request Transfer-Encoding other than chunked");
		} else if (is_name(nm, nl, "connection")) {
			m->conn_close |= has_token(v, vl, "close");
			m->conn_upgrade |= has_token(v, vl, "upgrade");
		} else if (is_name(nm, nl, "upgrade")) {
			m->upgrade = true;
		} else if (is_name(nm, nl, "expect")) {
			m->expect_continue |= has_token(v, vl, "100-continue");
		}
		off += l + 2;
	}
	if (te && m->has_cl) {
		if (!p->response)
			return fail(p, "both Transfer-Encoding and Content-Length");
		m->has_cl = false; /* RFC 9112 6.3: Transfer-Encoding wins */
	}
	if (te && !m->chunked)
		m->has_cl = false;
	return parse_start(p, h, (size_t)(eol - h));
}

void h1_body_for(struct h1 *p, const char *method)
{
	struct h1_msg *m = &p->msg;
	if (p->response) {
		bool connect = method && strcmp(method, "CONNECT") == 0;
		if (m->status == 101 || (connect && m->status / 100 == 2)) {
			p->st = S_OPAQUE;
			return;
		}
		if (m->status < 200 || m->status == 204 || m->status == 304 || (method && strcmp(method, "HEAD") == 0)) {
			p->st = S_DONE;
			return;
		}
		if (m->chunked)
			p->st = S_CSIZE;
		else if (m->has_cl)
			p->st = m->cl ? S_BODY : S_DONE;
		else
			p->st = S_EOF;
	} else {
		p->st = m->chunked ? S_CSIZE : m->has_cl && m->cl ? S_BODY : S_DONE;
	}
	p->left = m->has_cl ? m->cl : 0;
	p->llen = 0;
}

static int feed_head(struct h1 *p, const char *d, size_t len, size_t *used)
{
	size_t i = 0;
	/* Empty lines before a request line are ignored (RFC 9112 2.2). */
	while (p->hlen == 0 && i < len && (d[i] == '\r' || d[i] == '\n'))
		i++;
	size_t old = p->hlen, room = H1_HEAD_MAX - old, take = len - i < room ? len - i : room;
	memcpy(p->head + old, d + i, take);
	size_t from = old > 3 ? old - 3 : 0;
	const char *e = memmem(p->head + from, old + take - from, "\r\n\r\n", 4);
	if (!e) {
		p->hlen = old + take;
		*used = i + take;
		if (p->hlen == H1_HEAD_MAX)
			return fail(p, "the head is longer than 16 KiB");
		return H1_NEED;
	}
	p->hlen = (size_t)(e - p->head) + 4;
	*used = i + (p->hlen - old);
	int r = parse_head(p);
	if (r == H1_HEAD)
		p->st = S_BODY; /* until h1_body_for says otherwise */
	p->hlen = 0;
	return r;
}

/* Trailer lines after the last chunk: passed on, up to the empty line.
 * llen: 0 at a line's start, 1 inside one, 2 after its CR (inside), 3 after
 * a CR at the start. */
static int feed_trailer(struct h1 *p, const char *d, size_t len, size_t *used)
{
	for (size_t i = 0; i < len; i++) {
		char c = d[i];
		if (++p->tlines > H1_HEAD_MAX)
			return fail(p, "trailers longer than 16 KiB");
		if (c == '\n') {
			if (p->llen < 2)
				return fail(p, "a bare LF in the trailers");
			*used = i + 1;
			if (p->llen == 3) {
				p->st = S_HEAD;
				p->llen = 0;
				return H1_END;
			}
			p->llen = 0;
		} else if (p->llen >= 2 || c == '\0') {
			return fail(p, "a bare CR or NUL in the trailers");
		} else if (c == '\r') {
			p->llen = p->llen ? 2 : 3;
		} else {
			p->llen = 1;
		}
	}
	*used = len;
	return H1_DATA;
}

/* A chunk-size line (extensions ignored), byte by byte. */
static int feed_line(struct h1 *p, const char *d, size_t len, size_t *used)
{
	for (size_t i = 0; i < len; i++) {
		char c = d[i];
		if (c != '\n') {
			if (c == '\0' || (p->llen && p->line[p->llen - 1] == '\r'))
				return fail(p, "a bare CR or NUL in chunked framing");
			if (p->llen + 1 >= sizeof(p->line))
				return fail(p, "a chunk-size line longer than 127 bytes");
			p->line[p->llen++] = c;
			continue;
		}
		if (!p->llen || p->line[p->llen - 1] != '\r')
			return fail(p, "a bare LF in chunked framing");
		p->llen--;
		*used = i + 1;
		uint64_t sz = 0;
		size_t k = 0;
		for (; k < p->llen && isxdigit((unsigned char)p->line[k]); k++) {
			if (k >= 15)
				return fail(p, "a chunk size too large");
			int ch = tolower((unsigned char)p->line[k]);
			sz = sz << 4 | (uint64_t)(isdigit(ch) ? ch - '0' : ch - 'a' + 10);
		}
		if (k == 0 || (k < p->llen && p->line[k] != ';' && p->line[k] != ' ' && p->line[k] != '\t'))
			return fail(p, "a bad chunk size");
		p->llen = 0;
		p->tlines = 0;
		p->st = sz ? S_CDATA : S_TRAILER;
		p->left = sz;
		return H1_DATA;
	}
	*used = len;
	return H1_DATA;
}

int h1_feed(struct h1 *p, const char *d, size_t len, size_t *used)
{
	*used = 0;
	switch (p->st) {
	case S_DONE:
		p->st = S_HEAD;
		return H1_END;
	case S_HEAD:
		if (!len)
			return H1_NEED;
		return feed_head(p, d, len, used);
	case S_OPAQUE:
	case S_EOF:
		*used = len;
		return len ? H1_DATA : H1_NEED;
	case S_BODY:
	case S_CDATA:
		if (!len)
			return H1_NEED;
		*used = len < p->left ? len : (size_t)p->left;
		p->left -= *used;
		if (!p->left) {
			if (p->st == S_BODY) {
				p->st = S_HEAD;
				return H1_END;
			}
			p->st = S_CDATA_END;
			p->llen = 0;
		}
		return H1_DATA;
	case S_CDATA_END:
		if (!len)
			return H1_NEED;
		while (*used < len && p->llen < 2) {
			if (d[*used] != "\r\n"[p->llen])
				return fail(p, "chunk data not followed by CRLF");
			p->llen++;
			(*used)++;
		}
		if (p->llen == 2) {
			p->llen = 0;
			p->st = S_CSIZE;
		}
		return H1_DATA;
	case S_CSIZE:
		if (!len)
			return H1_NEED;
		return feed_line(p, d, len, used);
	case S_TRAILER:
		if (!len)
			return H1_NEED;
		return feed_trailer(p, d, len, used);
	default:
		return fail(p, "internal state");
	}
}

int h1_eof(struct h1 *p)
{
	if (p->st == S_EOF) {
		p->st = S_HEAD;
		return H1_END;
	}
	if (p->st == S_HEAD && p->hlen == 0)
		return H1_NEED;
	if (p->st == S_OPAQUE)
		return H1_NEED;
	return fail(p, "the message was cut short");
}

long h1_header(const struct h1_msg *m, const char *name, const char **v)
{
	for (size_t i = 0; i < m->nh; i++)
		if (is_name(m->head + m->h[i].name, m->h[i].name_len, name)) {
			*v = m->head + m->h[i].value;
			return (long)m->h[i].value_len;
		}
	return -1;
}
