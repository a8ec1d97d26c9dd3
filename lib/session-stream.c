/* A session exec's streams: its output read, redacted, hashed and queued
 * for its client as NDJSON events (flow control: a slow reader pauses the
 * exec's pipes), and a pty exec's client connection relayed both ways. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "session-stream.h"
#include "cleanup.h"
#include "cordon-pty.h"
#include "error.h"
#include "hash.h"
#include "json.h"
#include "policy.h"
#include "redact-stream.h"
#include "redact.h"
#include "report.h"
#include "serve-ipc.h"
#include "session-util.h"
#include "session.h"
#include "session-cg.h"
#include "sync.h"
#include "units.h"
#include "session-worker.h"

/* ---- the exec's event stream ---- */

/* Flow control (docs/api.md, "dropped_bytes"): the exec's output is read
 * only while its client's queue has room, or no client reads it any more. */
static bool queue_full(const struct sx_exec *x)
{
	return x->pty ? !x->client_gone && x->cq.len - x->cqoff > EXEC_QUEUE_MAX
		      : (x->reply >= 0 || x->background) && x->queue.len - x->qoff > EXEC_QUEUE_MAX;
}

/* Out of the epoll set while paused (a hang-up, always reported, would
 * spin), back in after. */
static void out_watch(struct sx *s, struct sx_exec *x, bool on)
{
	for (int i = 0; i < 2; i++)
		if (x->out[i] >= 0) {
			struct epoll_event ev = {.events = EPOLLIN,
						 .data.u64 = tag(K_OUT, (uint32_t)(x - s->ex) * 2 + (uint32_t)i)};
			epoll_ctl(s->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, x->out[i], &ev);
		}
	x->paused = !on;
}

static void out_pause(struct sx *s, struct sx_exec *x)
{
	if (!x->paused && !x->draining && queue_full(x))
		out_watch(s, x, false);
}

/* Read again once the queue is down to half (or its reader is gone). */
static void out_resume(struct sx *s, struct sx_exec *x)
{
	if (!x->paused)
		return;
	size_t q = x->pty ? x->cq.len - x->cqoff : x->queue.len - x->qoff;
	if ((x->pty ? x->client_gone : x->reply < 0 && !x->background) || q <= EXEC_QUEUE_MAX / 2)
		out_watch(s, x, true);
}

/* The client's stream is in the epoll set from the exec's start: for
 * EPOLLOUT while packets wait, and always for its hang-up (the server
 * closed it: the client went away), which ends the lease's hold
 * (K_IDLE) and the flow control. */
static int reply_watch(struct sx *s, struct sx_exec *x, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.u64 = tag(K_REPLY, (uint32_t)(x - s->ex))};
	int r = epoll_ctl(s->epfd, EPOLL_CTL_MOD, x->reply, &ev);
	return r < 0 && errno == ENOENT ? epoll_ctl(s->epfd, EPOLL_CTL_ADD, x->reply, &ev) : r;
}

/* A background exec's reader goes: what it did not take stays queued. */
void sx_reply_detach(struct sx *s, struct sx_exec *x)
{
	if (x->reply >= 0)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, x->reply, NULL);
	x->reply_wait = x->fetching = false;
	sx_close_fd(&x->reply);
}

void sx_reply_hangup(struct sx *s, struct sx_exec *x)
{
	if (x->reply < 0)
		return;
	if (x->background) {
		sx_reply_detach(s, x);
		return;
	}
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, x->reply, NULL);
	x->reply_wait = false;
	sx_close_fd(&x->reply);
	/* What it never got is output no client received. */
	for (size_t o = x->qoff; o + 8 <= x->queue.len;) {
		uint32_t len, data;
		memcpy(&len, x->queue.p + o, 4);
		memcpy(&data, x->queue.p + o + 4, 4);
		x->dropped += data;
		o += 8 + len;
	}
	x->queue.len = x->qoff = 0;
	out_resume(s, x);
}

void sx_queue_flush(struct sx *s, struct sx_exec *x)
{
	while (x->reply >= 0 && x->qoff < x->queue.len) {
		uint32_t len;
		memcpy(&len, x->queue.p + x->qoff, 4);
		if (ipc_send(x->reply, x->queue.p + x->qoff + 8, len, NULL, 0, MSG_DONTWAIT) < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
				if (!x->reply_wait)
					x->reply_wait = reply_watch(s, x, EPOLLOUT) == 0;
				return;
			}
			/* The client is gone: the exec runs on (docs/api.md). */
			if (x->reply_wait)
				epoll_ctl(s->epfd, EPOLL_CTL_DEL, x->reply, NULL);
			x->reply_wait = false;
			sx_close_fd(&x->reply);
			break;
		}
		x->qoff += 8 + len;
		if (x->fetching && (x->fetch_left -= x->fetch_left < 8 + len ? x->fetch_left : 8 + len) == 0) {
			sx_reply_detach(s, x); /* what was there when it came */
			break;
		}
	}
	if (x->qoff > (1u << 20) && x->qoff > x->queue.len / 2) { /* what was sent goes */
		memmove(x->queue.p, x->queue.p + x->qoff, x->queue.len - x->qoff);
		x->queue.len -= x->qoff;
		x->qoff = 0;
	}
	out_resume(s, x);
	if (x->qoff >= x->queue.len) {
		x->queue.len = 0;
		x->qoff = 0;
		if (x->reply_wait && x->reply >= 0)
			reply_watch(s, x, 0);
		x->reply_wait = false;
		if (x->done)
			sx_close_fd(&x->reply);
	}
}

void sx_emit(struct sx *s, struct sx_exec *x, const char *json, size_t len, bool droppable,
		 uint64_t data_bytes)
{
	(void)droppable;
	if (x->reply < 0 && !x->background) { /* no client reads it any more */
		x->dropped += data_bytes;
		return;
	}
	/* Each packet queued as: u32 length, u32 output bytes in it, JSON. */
	uint32_t l[2] = {(uint32_t)len, (uint32_t)data_bytes};
	if (buf_append(&x->queue, l, 8) < 0 || buf_append(&x->queue, json, len) < 0) {
		x->dropped += data_bytes;
		return;
	}
	if (!x->reply_wait)
		sx_queue_flush(s, x);
	out_pause(s, x);
}

static void emit_data(struct sx *s, struct sx_exec *x, int i, const uint8_t *p, size_t n)
{
	const size_t step = 24 * 1024; /* 32 KiB of base64: a packet with room */
	for (size_t off = 0; off < n; off += step) {
		size_t k = n - off < step ? n - off : step;
		buf b = {0};
		if (buf_printf(&b, "{\"type\":\"%s\",\"data_b64\":\"", i ? "stderr" : "stdout") == 0 &&
		    b64_encode(&b, p + off, k) == 0 && buf_append(&b, "\"}\n", 3) == 0)
			sx_emit(s, x, b.p, b.len, true, k);
		else
			x->dropped += k;
		buf_free(&b);
	}
}

#define PTY_EARLY_INPUT_MAX 65536

static void out_resume(struct sx *s, struct sx_exec *x);

void sx_client_drop(struct sx *s, struct sx_exec *x)
{
	if (x->client_reg)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, x->client, NULL);
	x->client_reg = false;
	sx_close_fd(&x->client);
	x->client_gone = true;
	out_resume(s, x);
}

void sx_client_flush(struct sx *s, struct sx_exec *x)
{
	while (x->client >= 0 && x->cqoff < x->cq.len) {
		ssize_t w = send(x->client, x->cq.p + x->cqoff, x->cq.len - x->cqoff, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (w <= 0) { /* gone: the exec runs on (docs/api.md) */
			sx_client_drop(s, x);
			break;
		}
		x->cqoff += (size_t)w;
	}
	if (x->cqoff >= x->cq.len)
		x->cq.len = x->cqoff = 0;
	out_resume(s, x);
	sx_client_watch(s, x);
}

/* What the client's connection is watched for: its input while it is
 * open and the pty's input queue has room (a client that types faster than
 * the exec reads waits, nothing is dropped), output while some is queued. */
void sx_client_watch(struct sx *s, struct sx_exec *x)
{
	if (x->client < 0)
		return;
	bool in = !x->client_eof && (x->in_ready ? pty_input_room(&x->in) : x->pin.len < PTY_EARLY_INPUT_MAX);
	uint32_t evs = (in ? EPOLLIN : 0) | (x->cq.len ? EPOLLOUT : 0);
	if (!evs) {
		/* Out of the set: a hang-up (always reported) would spin. */
		if (x->client_reg)
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, x->client, NULL);
		x->client_reg = false;
		return;
	}
	struct epoll_event ev = {.events = evs, .data.u64 = tag(K_CLIENT, (uint32_t)(x - s->ex))};
	if (epoll_ctl(s->epfd, x->client_reg ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, x->client, &ev) == 0)
		x->client_reg = true;
}

static void client_out(struct sx *s, struct sx_exec *x, const uint8_t *p, size_t n)
{
	/* Queued before the client came and while it reads (flow control:
	 * nothing more is read past EXEC_QUEUE_MAX); dropped once it is gone. */
	if (x->client_gone || buf_append(&x->cq, p, n) < 0) {
		x->dropped += n;
		return;
	}
	sx_client_flush(s, x);
	out_pause(s, x);
}

/* Write the pty's queued input (lib/cordon-pty.c's struct pty_input, as cordon run
 * --pty does): what the master does not take at once waits for EPOLLOUT;
 * only what it refuses (its side is gone) is dropped, and counted. */
void sx_pty_flush(struct sx *s, struct sx_exec *x)
{
	if (!x->in_ready)
		return;
	size_t before = x->in.pending.len - x->in.off;
	int r = pty_input_flush(&x->in);
	if (r < 0)
		x->input_dropped += before;
	bool wait = r == 0;
	if (wait != x->ptm_wait && x->ptm >= 0) {
		struct epoll_event ev = {.events = EPOLLOUT, .data.u64 = tag(K_PTYIN, (uint32_t)(x - s->ex))};
		if (epoll_ctl(s->epfd, wait ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, x->ptm, &ev) == 0)
			x->ptm_wait = wait;
	}
	sx_client_watch(s, x);
}

/* Input for a pty exec. A client may type before the exec's master has
 * come from the agent: that much is kept (bounded; beyond it dropped and
 * counted in input_dropped) and queued when it comes. */
void sx_pty_input(struct sx *s, struct sx_exec *x, const uint8_t *p, size_t n)
{
	if (!x->in_ready) {
		if (x->pin.len + n > PTY_EARLY_INPUT_MAX || buf_append(&x->pin, p, n) < 0)
			x->input_dropped += n;
		return;
	}
	if (pty_input_push(&x->in, p, n) < 0)
		x->input_dropped += n;
	sx_pty_flush(s, x);
}

void sx_client_in(struct sx *s, struct sx_exec *x)
{
	uint8_t b[16384];
	/* No more than the queue takes: the rest waits in the socket. */
	size_t q = x->in_ready ? x->in.pending.len - x->in.off : x->pin.len;
	size_t cap = x->in_ready ? PTY_INPUT_MAX : PTY_EARLY_INPUT_MAX;
	size_t room = q >= cap ? 0 : cap - q < sizeof(b) ? cap - q : sizeof(b);
	if (!room) {
		sx_client_watch(s, x);
		return;
	}
	ssize_t n = recv(x->client, b, room, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		/* The client closed, or shut down its side: the end of the
		 * pty's input (VEOF, as at the end of cordon run --pty's stdin);
		 * its output goes on until the exec ends. Seen again (a
		 * hang-up) or an error: the client is gone. */
		bool again = x->client_eof;
		x->client_eof = true;
		if (n < 0 || again) {
			sx_client_drop(s, x);
			return;
		}
		if (x->in_ready) {
			pty_input_eof(&x->in);
			sx_pty_flush(s, x);
		}
		sx_client_watch(s, x);
		return;
	}
	sx_pty_input(s, x, b, (size_t)n);
}

void sx_out_bytes(struct sx *s, struct sx_exec *x, int i, const uint8_t *p, size_t n, bool eof)
{
	buf r = {0};
	int rc = n ? redact_feed(&x->rs[i], p, n, &r) : 0;
	if (eof && rc == 0) /* what it held back; an error leaves nothing more */
		(void)redact_flush(&x->rs[i], &r);
	if (r.len) {
		/* Hashed up to the budget; counted, relayed and limited all
		 * the same past it. */
		size_t h = r.len;
		if (h > x->hash_left[i]) {
			x->hash_over[i] = true;
			h = (size_t)x->hash_left[i];
		}
		if (h)
			sha256_update(x->h[i], r.p, h);
		x->hash_left[i] -= h;
		x->hashed[i] += h;
		x->bytes[i] += r.len;
		if (x->pty)
			client_out(s, x, (const uint8_t *)r.p, r.len);
		else
			emit_data(s, x, i, (const uint8_t *)r.p, r.len);
	}
	buf_wipe(&r);
}

void sx_signal_exec(struct sx *s, struct sx_exec *x, int sig, const char *why)
{
	if (!x->running || x->slot < 0)
		return;
	if (why && !x->forced)
		x->forced = why;
	/* Not started yet: until its MSG_SX_STARTED the agent may be in the
	 * exec's cgroup, starting it, and a KILL of that cgroup would end the
	 * agent and so the session. Sent when it has started (session.c). */
	if (x->pid <= 0) {
		x->kill_pending = sig;
		return;
	}
	cordon_error e = {0};
	e.code = sig;
	sync_send(s->sock, MSG_SX_SIGNAL, x->slot, &e, -1);
	/* A KILL also reaches what left its groups (session-cg.h); any other
	 * signal goes once to each of the exec's processes (the agent's). */
	if (sig == SIGKILL)
		sxcg_signal(x->slot, sig);
}

void sx_read_out(struct sx *s, struct sx_exec *x, int i)
{
	uint8_t b[65536];
	const struct cordon_limit *lim = &s->pol->limits[LIM_OUTPUT];
	while (x->out[i] >= 0 && !x->paused) {
		ssize_t n = read(x->out[i], b, sizeof(b));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) { /* EOF; a pty master's EIO once its last holder is gone */
			sx_out_bytes(s, x, i, NULL, 0, true);
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, x->out[i], NULL);
			sx_close_fd(&x->out[i]);
			return;
		}
		size_t take = (size_t)n;
		if (lim->set && x->raw + take > lim->value) {
			take = x->raw >= lim->value ? 0 : (size_t)(lim->value - x->raw);
			sx_signal_exec(s, x, SIGKILL, "output-limit");
		}
		x->raw += take;
		if (take)
			sx_out_bytes(s, x, i, b, take, false);
	}
}
