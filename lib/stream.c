#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "cleanup.h"
#include "stream.h"

#define CHUNK 65536

int stream_init(struct out_stream *s, int in_fd, int dest_fd, const redactor *r, const char *prefix)
{
	memset(s, 0, sizeof(*s));
	s->in_fd = in_fd;
	s->out_fd = fcntl(dest_fd, F_DUPFD_CLOEXEC, 3);
	s->prefix = prefix;
	s->at_line_start = true;
	redact_stream_init(&s->rs, r);
	s->hash = sha256_new();
	if (!s->hash)
		return -1;
	if (s->out_fd >= 0) {
		/* epoll refuses regular files: those never block, write directly. */
		int ep = epoll_create1(EPOLL_CLOEXEC);
		struct epoll_event ev = {.events = EPOLLOUT};
		s->out_pollable = ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, s->out_fd, &ev) == 0;
		if (ep >= 0)
			close(ep);
	} else {
		s->out_broken = true;
	}
	return 0;
}

/* Redacted bytes: into the evidence (count, hash), then out with the prefix. */
static int take_redacted(struct out_stream *s, const char *p, size_t n)
{
	sha256_update(s->hash, p, n);
	s->bytes += n;
	if (s->out_broken || !n)
		return 0;
	if (!s->prefix)
		return buf_append(&s->pending, p, n);
	for (size_t i = 0; i < n; i++) {
		if (s->at_line_start && buf_append(&s->pending, s->prefix, strlen(s->prefix)) < 0)
			return -1;
		if (buf_append(&s->pending, &p[i], 1) < 0)
			return -1;
		s->at_line_start = p[i] == '\n';
	}
	return 0;
}

ssize_t stream_read(struct out_stream *s, uint64_t budget, bool *over)
{
	char tmp[CHUNK];
	*over = false;
	if (s->in_fd < 0)
		return 0;
	ssize_t n = read(s->in_fd, tmp, sizeof(tmp));
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -1;
	buf red = {0};
	if (n == 0) {
		close(s->in_fd);
		s->in_fd = -1;
		int r = redact_flush(&s->rs, &red) < 0 || take_redacted(s, red.p, red.len) < 0 ? -1 : 0;
		buf_wipe(&red);
		return r;
	}
	size_t take = (size_t)n;
	if ((uint64_t)take > budget) {
		take = (size_t)budget;
		*over = true;
	}
	s->raw_bytes += take;
	int r = redact_feed(&s->rs, (const uint8_t *)tmp, take, &red);
	explicit_bzero(tmp, (size_t)n);
	if (r == 0)
		r = take_redacted(s, red.p, red.len);
	buf_wipe(&red);
	return r < 0 ? -1 : n;
}

bool stream_has_pending(const struct out_stream *s)
{
	return s->pending.len > s->pending_off;
}

int stream_flush(struct out_stream *s)
{
	while (stream_has_pending(s)) {
		size_t len = s->pending.len - s->pending_off;
		if (s->out_pollable) {
			/* Only write what cannot block: poll first, and at most a page
			 * per write once the destination reports room. */
			struct pollfd p = {s->out_fd, POLLOUT, 0};
			if (poll(&p, 1, 0) <= 0 || !(p.revents & (POLLOUT | POLLERR | POLLHUP)))
				return 0;
			if (len > 4096)
				len = 4096;
		}
		ssize_t n = write(s->out_fd, s->pending.p + s->pending_off, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			/* EPIPE and the like: the reader went away; what was read is
			 * still counted and hashed, just no longer forwarded. */
			s->out_broken = true;
			s->dest_gone = errno == EPIPE;
			break;
		}
		s->pending_off += (size_t)n;
	}
	s->pending.len = 0;
	s->pending_off = 0;
	return 1;
}

void stream_finish(struct out_stream *s, char sha[65])
{
	/* What the redactor still held (the run was stopped mid-stream). */
	buf red = {0};
	if (redact_flush(&s->rs, &red) == 0)
		take_redacted(s, red.p, red.len);
	buf_wipe(&red);
	redact_stream_free(&s->rs);
	/* Blocking writes for what is left: the run is over. */
	s->out_pollable = false;
	stream_flush(s);
	sha256_final_hex(s->hash, sha);
	s->hash = NULL;
	if (s->in_fd >= 0)
		close(s->in_fd);
	if (s->out_fd >= 0)
		close(s->out_fd);
	s->in_fd = s->out_fd = -1;
	buf_wipe(&s->pending);
}
