/* cordon mcp's HTTP client (mcp.h): HTTP/1.0 requests, one connection each
 * ("Connection: close"), so an answer ends with its connection and a
 * streamed one (an exec's NDJSON) needs no chunked decoding. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "error.h"
#include "mcp.h"

#define HEAD_MAX 16384
#define BODY_MAX (64u << 20)

static int connect_server(const struct mcp_server *s, cordon_error *err)
{
	int fd;
	if (s->sock[0]) {
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		if (strlen(s->sock) >= sizeof(a.sun_path))
			return cordon_err(err, ENAMETOOLONG, "%s: socket path too long", s->sock);
		strcpy(a.sun_path, s->sock);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			return cordon_err(err, e, "connect %s: %s", s->sock, strerror(e));
		}
		return fd;
	}
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->port)};
	if (inet_pton(AF_INET, s->host, &a.sin_addr) != 1)
		return cordon_err(err, EINVAL, "%s: not an IPv4 address", s->host);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return cordon_err(err, e, "connect %s:%d: %s", s->host, s->port, strerror(e));
	}
	return fd;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int mh_open(const struct mcp_server *s, const char *method, const char *path, const char *body, size_t blen,
	    int *status, buf *rest, cordon_error *err)
{
	int fd = connect_server(s, err);
	if (fd < 0)
		return -1;
	buf h = {0};
	buf_printf(&h, "%s %s HTTP/1.0\r\nHost: cordon\r\nConnection: close\r\nContent-Length: %zu\r\n", method, path,
		   body ? blen : 0);
	if (body)
		buf_printf(&h, "Content-Type: application/json\r\n");
	if (s->token[0])
		buf_printf(&h, "Authorization: Bearer %s\r\n", s->token);
	buf_printf(&h, "\r\n");
	int rc = h.p ? write_all(fd, h.p, h.len) : -1;
	buf_wipe(&h);
	if (rc < 0 || (body && blen && write_all(fd, body, blen) < 0)) {
		close(fd);
		return cordon_err(err, EIO, "%s %s: the server closed the connection", method, path);
	}
	char head[HEAD_MAX + 1];
	size_t got = 0;
	char *end = NULL;
	while (!end) {
		if (got == HEAD_MAX) {
			close(fd);
			return cordon_err(err, EPROTO, "%s %s: answer head too long", method, path);
		}
		ssize_t r = read(fd, head + got, HEAD_MAX - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			close(fd);
			return cordon_err(err, EIO, "%s %s: the server closed the connection", method, path);
		}
		got += (size_t)r;
		head[got] = '\0';
		end = strstr(head, "\r\n\r\n");
	}
	int st = 0;
	if (sscanf(head, "HTTP/1.%*d %d", &st) != 1 || st < 100 || st > 599) {
		close(fd);
		return cordon_err(err, EPROTO, "%s %s: not an HTTP answer", method, path);
	}
	*status = st;
	size_t off = (size_t)(end - head) + 4;
	if (buf_append(rest, head + off, got - off) < 0) {
		close(fd);
		return cordon_oom(err);
	}
	return fd;
}

int mh_request(const struct mcp_server *s, const char *method, const char *path, const char *body, size_t blen,
	       struct http_resp *out, cordon_error *err)
{
	*out = (struct http_resp){0};
	int fd = mh_open(s, method, path, body, blen, &out->status, &out->body, err);
	if (fd < 0)
		return -1;
	char tmp[65536];
	for (;;) {
		ssize_t r = read(fd, tmp, sizeof(tmp));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			close(fd);
			buf_free(&out->body);
			return cordon_err(err, e, "%s %s: reading the answer: %s", method, path, strerror(e));
		}
		if (r == 0)
			break;
		if (out->body.len + (size_t)r > BODY_MAX || buf_append(&out->body, tmp, (size_t)r) < 0) {
			close(fd);
			buf_free(&out->body);
			return cordon_err(err, EFBIG, "%s %s: answer larger than 64 MiB", method, path);
		}
	}
	close(fd);
	if (buf_append(&out->body, "", 1) < 0) { /* NUL-terminated for the caller */
		buf_free(&out->body);
		return cordon_oom(err);
	}
	out->body.len--;
	return 0;
}

int mh_escape(buf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
		bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
			     strchr("/-._~", *p);
		if (buf_append(out, plain ? (const char *)p : e, plain ? 1 : 3) < 0)
			return -1;
	}
	return buf_append(out, "", 1) < 0 ? -1 : 0;
}

void mh_error_text(const struct http_resp *r, char *out, size_t n)
{
	cordon_error e;
	jnode *j = r->body.p ? json_parse(r->body.p, r->body.len, &e) : NULL;
	const jnode *m = json_get(j, "error");
	if (m && m->type == J_STR)
		snprintf(out, n, "%s", m->str);
	else
		snprintf(out, n, "the server answered %d", r->status);
	json_free(j);
}
