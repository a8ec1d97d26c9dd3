/* The session worker: one per session, the boundary's supervisor (run.c)
 * with hooks that turn init into an exec agent (session-agent.c). See
 * session.h for the processes and channels, docs/api.md for the API.
 *
 * Rules this file keeps:
 * - It never blocks: the control socket, init's socket and every exec's
 *   output pipes are served by run.c's epoll loop; a reply socket whose
 *   client is slow gets a bounded queue (EXEC_QUEUE_MAX); past it the
 *   exec's output is no longer read (flow control: its process waits on its
 *   write) until the client has taken some. Output is dropped only when no
 *   client reads it any more (counted in the result; the hash and counts
 *   always cover everything).
 * - A client that goes away mid-stream does not stop its exec: it runs on
 *   to its end or its timeout, and its result stays available (GET).
 * - Output goes through the run's redactor and the policy's output limit,
 *   per exec, as cordon run does for its command. */
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
#include "cleanup.h"
#include "cordon-pty.h"
#include "error.h"
#include "hash.h"
#include "json.h"
#include "policy.h"
#include "redact.h"
#include "report.h"
#include "run.h"
#include "serve-ipc.h"
#include "session.h"
#include "session-cg.h"
#include "sync.h"
#include "units.h"

extern char **environ;

#define EXEC_QUEUE_MAX (8u << 20)
#define FILE_MAX (64u << 20)
#define LIST_MAX 100000

enum { K_CTL = 1, K_OUT, K_TIMER, K_IDLE, K_REPLY, K_CLIENT, K_PTYIN };

static uint64_t tag(int kind, uint32_t idx)
{
	return RUN_HOOK_TAG | ((uint64_t)kind << 32) | idx;
}

struct sx_exec {
	char id[24];
	strv argv;
	bool running, done;
	int slot;
	int out[2];          /* read ends, -1 at EOF */
	struct redact_stream rs[2];
	sha256_ctx *h[2];
	uint64_t raw, bytes[2];
	/* The hash budget (CORDON_OUTPUT_HASH, as cordon run's): bytes of each
	 * stream still to hash, and hashed; past it, sha[] is the prefix's. */
	uint64_t hash_left[2], hashed[2];
	bool hash_over[2];
	char sha[2][65];
	uint64_t dropped;
	bool paused;         /* out[] off the epoll set: the client's queue is full */
	bool draining;       /* finalize reads what is left: no pause */
	int reply;           /* to the client's stream; -1 once it is gone */
	buf queue;           /* packets not yet sent (emit) */
	size_t qoff;
	bool reply_wait;     /* EPOLLOUT registered */
	int timer;
	uint64_t *den0;      /* unattributed denial counts at the start */
	int pid;             /* in the run's PID namespace: its process group */
	size_t nden0;
	int wstatus;
	bool exited;
	struct sx_usage usage;
	bool cg_cpu;        /* cg_cpu_ns read from the exec's cgroup (session-cg.h) */
	uint64_t cg_cpu_ns;
	/* CLOCK_MONOTONIC: when the server had the whole request (its
	 * "t_req_ns"; 0 if it gave none) and when the exec's process called
	 * execve (the agent's MSG_SX_STARTED). */
	uint64_t t_req, t_exec;
	const char *status;  /* once done */
	const char *forced;  /* killed, timeout, output-limit: why we ended it */
	char error[512];
	char *result;        /* the result event's JSON, once done */
	/* A pty exec: the master (init's, passed at start), and the client's
	 * upgraded connection relayed to it both ways. */
	bool pty;
	int ptm;
	int client;
	buf cq;              /* output not yet written to the client */
	size_t cqoff;
	buf pin;             /* input that came before the master did */
	struct pty_input in; /* input for the master (lib/pty.c), once it came */
	bool in_ready;       /* in is set up */
	bool ptm_wait;       /* the master is registered for EPOLLOUT */
	bool client_eof;     /* the client shut its side: the pty's end of input */
	bool client_reg;     /* client is in the epoll set */
	bool client_gone;    /* it came and went: its output is dropped (counted) */
	uint64_t input_dropped;
	/* A background exec: no client waits on it; its packets stay queued
	 * (flow control as for a slow reader) for a reader that comes for
	 * them ("output"), each taking what it reads. fetching: that reader
	 * takes fetch_left bytes of the queue (what was there) and goes. */
	bool background, fetching;
	size_t fetch_left;
};

struct sx_file {
	bool used;
	int op;
	int reply;
	int body;            /* PUT: the bytes, in a memfd */
	char path[1024];
};

struct sx {
	char id[40];
	cordon_policy *pol;
	struct run_report *rep;
	int ctl, sock, epfd, idle;
	uint64_t idle_ns;
	bool ready, ended, ending;
	const char *end_reason;
	int create_reply;    /* the POST /v1/sessions waiting for ready */
	int end_reply;       /* the DELETE waiting for the report */
	struct sx_exec *ex;
	size_t nex;
	int slot_ex[SX_SLOTS]; /* slot -> index in ex, -1 free */
	struct sx_file files[16];
	buf evidence;        /* the files API's entries, JSON objects joined by "," */
	size_t nevidence;
	/* A warm session (cordon serve --warm): built before any client asked
	 * for it, handed out by a "claim" request; until then its idle timer
	 * is off and it takes no other request. */
	bool warm, claimed;
	/* Claimed for a one-shot run (POST /v1/runs): its report's outcome is
	 * its one exec's, as cordon run's is its command's. */
	bool oneshot;
	int wall_timer;
	uint64_t t_ready, pool_ns;
	uint64_t out_hash;   /* each exec's hash budget per stream */
	char report_path[4096];
	bool published;      /* the report written and the DELETE answered */
	/* The session's workspace (as the run sees it: the same path) and
	 * its working directory (the policy's cwd, else the workspace):
	 * a relative files-API path or exec cwd is the cwd's. */
	char ws[4096], cwd[4096];
};

/* A relative path (files API, an exec's cwd) is the session's cwd's:
 * "." is the cwd itself. False if it does not fit. */
static bool sx_abs(const struct sx *s, const char *p, char *out, size_t sz)
{
	if (p[0] == '/')
		return snprintf(out, sz, "%s", p) < (int)sz;
	bool dot = strcmp(p, ".") == 0;
	return snprintf(out, sz, "%s%s%s", s->cwd, dot ? "" : "/", dot ? "" : p) < (int)sz;
}

/* "workspace" and "cwd", for the session's creation, claim and GET. */
static void sx_paths_json(const struct sx *s, jwriter *w)
{
	jw_key(w, "workspace");
	jw_str(w, s->ws);
	jw_key(w, "cwd");
	jw_str(w, s->cwd);
}

static void reply_json(int sock, const char *json);

/* The answer to a session's creation (or claim), on one line as before:
 * {"id":"s-...",["warm":true,]"workspace":"...","cwd":"..."}. */
static void reply_created(const struct sx *s, int sock, bool warm)
{
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "id");
	jw_str(&w, s->id);
	if (warm) {
		jw_key(&w, "warm");
		jw_bool(&w, true);
	}
	sx_paths_json(s, &w);
	jw_obj_end(&w);
	if (jw_finish(&w) == 0) {
		/* The writer's newlines and indents are formatting (a string's
		 * are escaped), and so is the space after a key's colon. */
		size_t o = 0;
		bool in_str = false;
		for (size_t i = 0; i < w.out.len; i++) {
			char ch = w.out.p[i];
			if (in_str && ch == '\\' && i + 1 < w.out.len) {
				w.out.p[o++] = ch;
				w.out.p[o++] = w.out.p[++i];
				continue;
			}
			if (ch == '"')
				in_str = !in_str;
			if (!in_str && (ch == '\n' || ch == ' '))
				continue;
			w.out.p[o++] = ch;
		}
		w.out.p[o] = '\0';
		reply_json(sock, w.out.p);
	}
	buf_free(&w.out);
}

static void reply_json(int sock, const char *json)
{
	if (sock >= 0)
		ipc_send(sock, json, strlen(json), NULL, 0, MSG_DONTWAIT);
}

static void reply_error(int sock, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void reply_error(int sock, int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "code");
	jw_int(&w, code);
	jw_key(&w, "error");
	jw_str(&w, msg);
	jw_obj_end(&w);
	if (jw_finish(&w) == 0)
		reply_json(sock, w.out.p);
	buf_free(&w.out);
}

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

static void new_id(char *out, size_t sz, const char *prefix)
{
	uint8_t r[8] = {0};
	if (getrandom(r, sizeof(r), 0) != sizeof(r)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		memcpy(r, &ts.tv_nsec, sizeof(long) < 8 ? sizeof(long) : 8);
	}
	snprintf(out, sz, "%s%02x%02x%02x%02x%02x%02x%02x%02x", prefix, r[0], r[1], r[2], r[3], r[4], r[5],
		 r[6], r[7]);
}

static void arm_idle(struct sx *s)
{
	if (s->idle < 0 || !s->idle_ns)
		return;
	struct itimerspec its = {{0, 0}, {(time_t)(s->idle_ns / 1000000000ULL), (long)(s->idle_ns % 1000000000ULL)}};
	timerfd_settime(s->idle, 0, &its, NULL);
}

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
static void reply_detach(struct sx *s, struct sx_exec *x)
{
	if (x->reply >= 0)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, x->reply, NULL);
	x->reply_wait = x->fetching = false;
	close_fd(&x->reply);
}

static void reply_hangup(struct sx *s, struct sx_exec *x)
{
	if (x->reply < 0)
		return;
	if (x->background) {
		reply_detach(s, x);
		return;
	}
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, x->reply, NULL);
	x->reply_wait = false;
	close_fd(&x->reply);
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

static void queue_flush(struct sx *s, struct sx_exec *x)
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
			close_fd(&x->reply);
			break;
		}
		x->qoff += 8 + len;
		if (x->fetching && (x->fetch_left -= x->fetch_left < 8 + len ? x->fetch_left : 8 + len) == 0) {
			reply_detach(s, x); /* what was there when it came */
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
			close_fd(&x->reply);
	}
}

static void emit(struct sx *s, struct sx_exec *x, const char *json, size_t len, bool droppable,
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
		queue_flush(s, x);
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
			emit(s, x, b.p, b.len, true, k);
		else
			x->dropped += k;
		buf_free(&b);
	}
}

#define PTY_EARLY_INPUT_MAX 65536

static void client_watch(struct sx *s, struct sx_exec *x);

static void out_resume(struct sx *s, struct sx_exec *x);

static void client_drop(struct sx *s, struct sx_exec *x)
{
	if (x->client_reg)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, x->client, NULL);
	x->client_reg = false;
	close_fd(&x->client);
	x->client_gone = true;
	out_resume(s, x);
}

static void client_flush(struct sx *s, struct sx_exec *x)
{
	while (x->client >= 0 && x->cqoff < x->cq.len) {
		ssize_t w = send(x->client, x->cq.p + x->cqoff, x->cq.len - x->cqoff, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (w <= 0) { /* gone: the exec runs on (docs/api.md) */
			client_drop(s, x);
			break;
		}
		x->cqoff += (size_t)w;
	}
	if (x->cqoff >= x->cq.len)
		x->cq.len = x->cqoff = 0;
	out_resume(s, x);
	client_watch(s, x);
}

/* What the client's connection is watched for: its input while it is
 * open and the pty's input queue has room (a client that types faster than
 * the exec reads waits, nothing is dropped), output while some is queued. */
static void client_watch(struct sx *s, struct sx_exec *x)
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
	client_flush(s, x);
	out_pause(s, x);
}

/* Write the pty's queued input (lib/pty.c's struct pty_input, as cordon run
 * --pty does): what the master does not take at once waits for EPOLLOUT;
 * only what it refuses (its side is gone) is dropped, and counted. */
static void pty_flush(struct sx *s, struct sx_exec *x)
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
	client_watch(s, x);
}

/* Input for a pty exec. A client may type before the exec's master has
 * come from the agent: that much is kept (bounded; beyond it dropped and
 * counted in input_dropped) and queued when it comes. */
static void pty_input(struct sx *s, struct sx_exec *x, const uint8_t *p, size_t n)
{
	if (!x->in_ready) {
		if (x->pin.len + n > PTY_EARLY_INPUT_MAX || buf_append(&x->pin, p, n) < 0)
			x->input_dropped += n;
		return;
	}
	if (pty_input_push(&x->in, p, n) < 0)
		x->input_dropped += n;
	pty_flush(s, x);
}

static void client_in(struct sx *s, struct sx_exec *x)
{
	uint8_t b[16384];
	/* No more than the queue takes: the rest waits in the socket. */
	size_t q = x->in_ready ? x->in.pending.len - x->in.off : x->pin.len;
	size_t cap = x->in_ready ? PTY_INPUT_MAX : PTY_EARLY_INPUT_MAX;
	size_t room = q >= cap ? 0 : cap - q < sizeof(b) ? cap - q : sizeof(b);
	if (!room) {
		client_watch(s, x);
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
			client_drop(s, x);
			return;
		}
		if (x->in_ready) {
			pty_input_eof(&x->in);
			pty_flush(s, x);
		}
		client_watch(s, x);
		return;
	}
	pty_input(s, x, b, (size_t)n);
}

static void out_bytes(struct sx *s, struct sx_exec *x, int i, const uint8_t *p, size_t n, bool eof)
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

static void signal_exec(struct sx *s, struct sx_exec *x, int sig, const char *why)
{
	if (!x->running || x->slot < 0)
		return;
	if (why && !x->forced)
		x->forced = why;
	cordon_error e = {0};
	e.code = sig;
	sync_send(s->sock, MSG_SX_SIGNAL, x->slot, &e, -1);
	sxcg_signal(x->slot, sig); /* and what left its groups (session-cg.h) */
}

static void read_out(struct sx *s, struct sx_exec *x, int i)
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
			out_bytes(s, x, i, NULL, 0, true);
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, x->out[i], NULL);
			close_fd(&x->out[i]);
			return;
		}
		size_t take = (size_t)n;
		if (lim->set && x->raw + take > lim->value) {
			take = x->raw >= lim->value ? 0 : (size_t)(lim->value - x->raw);
			signal_exec(s, x, SIGKILL, "output-limit");
		}
		x->raw += take;
		if (take)
			out_bytes(s, x, i, b, take, false);
	}
}

static void usage_json(jwriter *w, const struct sx_exec *x)
{
	const struct sx_usage *u = &x->usage;
	jw_key(w, "usage");
	jw_obj_begin(w);
	jw_key(w, "cpu_user_seconds");
	jw_double(w, (double)u->cpu_user_ns / 1e9);
	jw_key(w, "cpu_sys_seconds");
	jw_double(w, (double)u->cpu_sys_ns / 1e9);
	jw_key(w, "peak_memory_bytes");
	jw_uint(w, u->max_rss);
	jw_key(w, "wall_seconds");
	jw_double(w, (double)u->wall_ns / 1e9);
	if (x->cg_cpu) {
		jw_key(w, "cgroup_cpu_seconds");
		jw_double(w, (double)x->cg_cpu_ns / 1e9);
	}
	if (x->t_req && x->t_exec >= x->t_req) {
		jw_key(w, "start_to_exec_seconds");
		jw_double(w, (double)(x->t_exec - x->t_req) / 1e9);
	}
	jw_obj_end(w);
}

static char *redact_cb(void *ctx, const char *str)
{
	return redact_string(ctx, str);
}

/* The most of an exec result's argv, and of its denials, listed (JSON
 * bytes each): with the rest (error at most 512) well within one packet. */
#define RESULT_LIST_MAX (24u * 1024u)

/* The exec's result, once it ended and its output was read. */
static void finalize(struct sx *s, struct sx_exec *x)
{
	/* What its pipes still hold is read whatever the queue (bounded: the
	 * exec's process is gone, the pipes hold what they hold). */
	x->paused = false;
	x->draining = true;
	for (int i = 0; i < 2; i++) {
		if (x->out[i] >= 0) {
			read_out(s, x, i);
			if (x->out[i] >= 0) { /* a process it left holds the pipe: end here */
				out_bytes(s, x, i, NULL, 0, true);
				epoll_ctl(s->epfd, EPOLL_CTL_DEL, x->out[i], NULL);
				close_fd(&x->out[i]);
			}
		}
		sha256_final_hex(x->h[i], x->sha[i]); /* frees it */
		x->h[i] = NULL;
		redact_stream_free(&x->rs[i]);
	}
	close_fd(&x->timer);
	if (x->ptm_wait)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, x->ptm, NULL);
	x->ptm_wait = false;
	close_fd(&x->ptm);
	if (x->in_ready) {
		/* What the exec never read. */
		x->input_dropped += x->in.pending.len - x->in.off;
		pty_input_free(&x->in);
		x->in_ready = false;
	}
	if (x->client >= 0) {
		client_flush(s, x);
		if (x->client >= 0) {
			/* What it has not taken yet is lost: counted. */
			x->dropped += x->cq.len - x->cqoff;
			shutdown(x->client, SHUT_WR);
			client_drop(s, x);
		}
	}
	int code = -1, sig = 0;
	if (x->exited && WIFEXITED(x->wstatus))
		code = WEXITSTATUS(x->wstatus);
	else if (x->exited && WIFSIGNALED(x->wstatus))
		sig = WTERMSIG(x->wstatus);
	if (!x->status) {
		/* Once ended by us, it stays so: a leader that escaped the
		 * signal (another process group) and exited later is no "ok". */
		if (x->forced)
			x->status = x->forced;
		else if (!x->exited)
			x->status = "session-ended";
		else if (sig)
			x->status = "signaled";
		else
			x->status = code == 0 ? "ok" : "exit";
	}
	jwriter w = {0};
	w.filter = redact_cb;
	w.filter_ctx = s->rep->redact;
	jw_obj_begin(&w);
	jw_key(&w, "type");
	jw_str(&w, "result");
	jw_key(&w, "exec");
	jw_str(&w, x->id);
	/* The result is one packet to the server (IPC_MAX_PACKET), whatever
	 * the exec made: its argv and its denials are listed up to a share
	 * of it each, and what was left out is counted. */
	size_t argv_left = 0, den_left = 0, mark = w.out.len;
	jw_key(&w, "argv");
	jw_arr_begin(&w);
	for (size_t i = 0; i < x->argv.n; i++) {
		size_t before = w.out.len;
		bool first = w.first[w.depth];
		if (w.out.len - mark < RESULT_LIST_MAX)
			jw_str(&w, x->argv.v[i]);
		if (w.out.len - mark > RESULT_LIST_MAX) {
			w.out.len = before; /* undo it */
			w.first[w.depth] = first;
			argv_left = x->argv.n - i;
			break;
		}
	}
	jw_arr_end(&w);
	if (argv_left) {
		jw_key(&w, "argv_omitted");
		jw_uint(&w, argv_left);
	}
	jw_key(&w, "status");
	jw_str(&w, x->status);
	jw_key(&w, "exit_code");
	if (code >= 0)
		jw_int(&w, code);
	else
		jw_null(&w);
	jw_key(&w, "signal");
	if (sig) {
		char name[32];
		snprintf(name, sizeof(name), "SIG%s", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
		jw_str(&w, name);
	} else {
		jw_null(&w);
	}
	if (x->error[0]) {
		jw_key(&w, "error");
		jw_str(&w, x->error);
	}
	jw_key(&w, "denials");
	jw_arr_begin(&w);
	mark = w.out.len;
	pthread_mutex_lock(&s->rep->denial_lock);
	for (size_t i = 0; i < s->rep->ndenials; i++) {
		const struct denial *d = &s->rep->denials[i];
		/* Its own (made by a process of its group), and what no
		 * process is known for that was made while it ran. */
		uint64_t c = d->unattributed - (i < x->nden0 ? x->den0[i] : 0);
		for (size_t j = 0; x->pid > 0 && j < s->rep->nby_group; j++)
			if (s->rep->by_group[j].idx == i && s->rep->by_group[j].pgid == x->pid)
				c += s->rep->by_group[j].count;
		if (!c)
			continue;
		if (w.out.len - mark > RESULT_LIST_MAX) {
			den_left++;
			continue;
		}
		jw_obj_begin(&w);
		jw_key(&w, "kind");
		jw_str(&w, d->kind);
		jw_key(&w, "target");
		jw_str(&w, d->target);
		jw_key(&w, "count");
		jw_uint(&w, c);
		jw_obj_end(&w);
	}
	/* Its group's entries go: a later exec may get the same pid. */
	size_t k = 0;
	for (size_t j = 0; j < s->rep->nby_group; j++)
		if (x->pid <= 0 || s->rep->by_group[j].pgid != x->pid)
			s->rep->by_group[k++] = s->rep->by_group[j];
	s->rep->nby_group = k;
	pthread_mutex_unlock(&s->rep->denial_lock);
	jw_arr_end(&w);
	if (den_left) {
		jw_key(&w, "denials_omitted");
		jw_uint(&w, den_left);
	}
	usage_json(&w, x);
	for (int i = 0; i < 2; i++) {
		jw_key(&w, i ? "stderr" : "stdout");
		jw_obj_begin(&w);
		jw_key(&w, "bytes");
		jw_uint(&w, x->bytes[i]);
		jw_key(&w, "sha256");
		if (x->hash_over[i]) {
			/* As cordon run's report says it (report.c). */
			jw_null(&w);
			jw_key(&w, "hash_skipped");
			jw_str(&w, "byte-budget");
			jw_key(&w, "hashed_bytes");
			jw_uint(&w, x->hashed[i]);
			jw_key(&w, "prefix_sha256");
		}
		jw_str(&w, x->sha[i]);
		jw_obj_end(&w);
	}
	jw_key(&w, "dropped_bytes");
	jw_uint(&w, x->dropped);
	if (x->pty) {
		jw_key(&w, "pty");
		jw_bool(&w, true);
		jw_key(&w, "input_dropped_bytes");
		jw_uint(&w, x->input_dropped);
	}
	jw_obj_end(&w);
	jw_finish(&w);
	/* One line: the writer's newlines are formatting (a string's are
	 * escaped), and so are the spaces that indent after them. */
	size_t o = 0;
	for (size_t i = 0; w.out.p && i < w.out.len; i++) {
		if (w.out.p[i] == '\n') {
			while (i + 1 < w.out.len && w.out.p[i + 1] == ' ')
				i++;
			continue;
		}
		w.out.p[o++] = w.out.p[i];
	}
	w.out.len = o;
	if (w.out.p && buf_append(&w.out, "\n", 1) == 0) {
		x->result = strdup(w.out.p);
		x->running = false;
		x->done = true;
		emit(s, x, w.out.p, w.out.len, false, 0);
	}
	x->running = false;
	x->done = true;
	buf_free(&w.out);
	free(x->den0);
	x->den0 = NULL;
	if (x->slot >= 0)
		s->slot_ex[x->slot] = -1;
	x->slot = -1;
	if (x->qoff >= x->queue.len)
		close_fd(&x->reply);
	arm_idle(s);
}

/* ---- requests from the server ---- */

static struct sx_exec *find_exec(struct sx *s, const char *id)
{
	for (size_t i = 0; id && i < s->nex; i++)
		if (strcmp(s->ex[i].id, id) == 0)
			return &s->ex[i];
	return NULL;
}

static int parse_signal(const char *name)
{
	static const struct {
		const char *n;
		int s;
	} t[] = {{"TERM", SIGTERM}, {"KILL", SIGKILL}, {"INT", SIGINT}, {"HUP", SIGHUP}, {"QUIT", SIGQUIT},
		 {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"STOP", SIGSTOP}, {"CONT", SIGCONT}, {"ALRM", SIGALRM}};
	if (!name)
		return -1;
	if (strncmp(name, "SIG", 3) == 0)
		name += 3;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(name, t[i].n) == 0)
			return t[i].s;
	return -1;
}

static void do_exec(struct sx *s, const jnode *req, int reply, int stdin_fd)
{
	const jnode *argv = json_get(req, "argv"), *env = json_get(req, "env"), *cwd = json_get(req, "cwd");
	const jnode *tmo = json_get(req, "timeout_ns"), *pty = json_get(req, "pty");
	const jnode *rows = json_get(req, "rows"), *cols = json_get(req, "cols");
	const jnode *treq = json_get(req, "t_req_ns");
	bool want_pty = pty && pty->type == J_BOOL && pty->b;
	const jnode *bg = json_get(req, "background");
	if (!argv || argv->type != J_ARR || argv->n == 0) {
		reply_error(reply, 400, "argv: a non-empty array of strings is required");
		goto out;
	}
	int slot = -1;
	for (int i = 0; i < SX_SLOTS && slot < 0; i++)
		if (s->slot_ex[i] < 0)
			slot = i;
	if (slot < 0) {
		reply_error(reply, 429, "this session already runs %d execs", SX_SLOTS);
		goto out;
	}
	char cwd_abs[4096] = "";
	if (cwd && cwd->str && cwd->str[0] && !sx_abs(s, cwd->str, cwd_abs, sizeof(cwd_abs))) {
		reply_error(reply, 400, "cwd: too long");
		goto out;
	}
	buf req_text = {0};
	buf_printf(&req_text, "%zu%c%zu%c%s%c", argv->n, 0, env ? env->n : 0, 0, cwd_abs, 0);
	for (size_t i = 0; i < argv->n; i++)
		buf_append(&req_text, argv->items[i]->str, strlen(argv->items[i]->str) + 1);
	for (size_t i = 0; env && i < env->n; i++)
		buf_printf(&req_text, "%s=%s%c", env->keys[i], env->items[i]->str, 0);
	struct sx_exec *nex = realloc(s->ex, (s->nex + 1) * sizeof(*s->ex));
	if (!nex || req_text.len > SX_REQ_MAX) {
		if (nex)
			s->ex = nex;
		buf_free(&req_text);
		reply_error(reply, 400, "the exec request is too large");
		goto out;
	}
	s->ex = nex;
	struct sx_exec *x = &s->ex[s->nex];
	memset(x, 0, sizeof(*x));
	x->out[0] = x->out[1] = x->reply = x->timer = x->ptm = x->client = -1;
	x->slot = slot;
	x->pty = want_pty;
	x->background = !want_pty && bg && bg->type == J_BOOL && bg->b;
	x->t_req = treq && treq->type == J_NUM && treq->num > 0 ? (uint64_t)treq->num : 0;
	new_id(x->id, sizeof(x->id), "e-");
	for (size_t i = 0; i < argv->n; i++)
		strv_push(&x->argv, argv->items[i]->str);
	int po[2] = {-1, -1}, pe[2] = {-1, -1};
	/* A request that fits goes inline in MSG_SX_EXEC's frame. */
	char inl[sizeof(((cordon_error *)0)->msg) - 1];
	uint16_t inl_len = 0;
	int memfd = -1;
	if (!want_pty && req_text.len + sizeof(inl_len) <= sizeof(inl)) {
		inl_len = (uint16_t)req_text.len;
		memcpy(inl, &inl_len, sizeof(inl_len));
		memcpy(inl + sizeof(inl_len), req_text.p, req_text.len);
	} else {
		memfd = ipc_memfd("cordon-exec", req_text.p, req_text.len);
	}
	buf_free(&req_text);
	if ((!inl_len && memfd < 0) || pipe2(po, O_CLOEXEC | O_NONBLOCK) < 0 || pipe2(pe, O_CLOEXEC | O_NONBLOCK) < 0) {
		reply_error(reply, 500, "exec: %s", strerror(errno));
		close_fd(&memfd);
		close_fd(&po[0]); close_fd(&po[1]); close_fd(&pe[0]); close_fd(&pe[1]);
		strv_free(&x->argv);
		goto out;
	}
	/* The write ends block for the command (O_NONBLOCK is on the
	 * description: give it a plain one). */
	fcntl(po[1], F_SETFL, 0);
	fcntl(pe[1], F_SETFL, 0);
	s->nex++;
	s->slot_ex[slot] = (int)(x - s->ex);
	x->running = true;
	x->reply = reply;
	reply = -1;
	{
		struct epoll_event rev = {.events = 0, .data.u64 = tag(K_REPLY, (uint32_t)(x - s->ex))};
		epoll_ctl(s->epfd, EPOLL_CTL_ADD, x->reply, &rev);
	}
	for (int i = 0; i < 2; i++) {
		x->h[i] = sha256_new();
		x->hash_left[i] = s->out_hash;
		redact_stream_init(&x->rs[i], s->rep->redact);
	}
	pthread_mutex_lock(&s->rep->denial_lock);
	x->nden0 = s->rep->ndenials;
	x->den0 = calloc(x->nden0 + 1, sizeof(uint64_t));
	for (size_t i = 0; x->den0 && i < x->nden0; i++)
		x->den0[i] = s->rep->denials[i].unattributed;
	if (!x->den0)
		x->nden0 = 0;
	pthread_mutex_unlock(&s->rep->denial_lock);
	cordon_error e = {0};
	uint32_t idx = (uint32_t)(x - s->ex);
	sxcg_exec_begin(s->sock, slot);
	if (want_pty) {
		/* The pty is made by init, in the session's devpts; its master
		 * comes back with MSG_SX_STARTED. */
		close_fd(&po[0]); close_fd(&po[1]); close_fd(&pe[0]); close_fd(&pe[1]);
		struct winsize ws = {0};
		ws.ws_row = rows && rows->type == J_NUM && rows->num > 0 && rows->num < 10000 ? (unsigned short)rows->num : 24;
		ws.ws_col = cols && cols->type == J_NUM && cols->num > 0 && cols->num < 10000 ? (unsigned short)cols->num : 80;
		e.code = 1;
		memcpy(e.msg, &ws, sizeof(ws));
		sync_send_bytes(s->sock, MSG_SX_EXEC, slot, SX_EXEC_PTY, &ws, sizeof(ws), memfd);
		close(memfd);
	} else {
		if (stdin_fd >= 0) {
			e.code = 0;
			sync_send(s->sock, MSG_SX_FD, slot, &e, stdin_fd);
		}
		e.code = 1;
		sync_send(s->sock, MSG_SX_FD, slot, &e, po[1]);
		e.code = 2;
		sync_send(s->sock, MSG_SX_FD, slot, &e, pe[1]);
		if (inl_len)
			sync_send_bytes(s->sock, MSG_SX_EXEC, slot, SX_EXEC_INLINE, inl, sizeof(inl_len) + inl_len, -1);
		else
			sync_send(s->sock, MSG_SX_EXEC, slot, NULL, memfd);
		close(po[1]);
		close(pe[1]);
		close_fd(&memfd);
		x->out[0] = po[0];
		x->out[1] = pe[0];
		for (int i = 0; i < 2; i++) {
			struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(K_OUT, idx * 2 + (uint32_t)i)};
			epoll_ctl(s->epfd, EPOLL_CTL_ADD, x->out[i], &ev);
		}
	}
	if (tmo && tmo->type == J_NUM && tmo->num > 0) {
		x->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		uint64_t ns = (uint64_t)tmo->num;
		struct itimerspec its = {{0, 0}, {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)}};
		struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(K_TIMER, idx)};
		if (x->timer >= 0) {
			timerfd_settime(x->timer, 0, &its, NULL);
			epoll_ctl(s->epfd, EPOLL_CTL_ADD, x->timer, &ev);
		}
	}
	char ev[96];
	int n = snprintf(ev, sizeof(ev), "{\"type\":\"started\",\"exec\":\"%s\"}\n", x->id);
	if (x->background) {
		/* Its answer is this event alone; its output waits for a reader. */
		reply_json(x->reply, ev);
		reply_detach(s, x);
	} else {
		emit(s, x, ev, (size_t)n, false, 0);
	}
out:
	close_fd(&reply);
	close_fd(&stdin_fd);
}

/* A background exec's output (GET .../exec/{eid}/output): a stream that
 * starts with "started", then what is queued and, with "follow", what
 * comes until its result; without, what was queued when it came. One
 * reader at a time; an ended exec's stream ends with its result. */
static void do_output(struct sx *s, const jnode *req, int reply)
{
	const jnode *id = json_get(req, "exec"), *fo = json_get(req, "follow");
	struct sx_exec *x = find_exec(s, id ? id->str : NULL);
	char ev[96];
	snprintf(ev, sizeof(ev), "{\"type\":\"started\",\"exec\":\"%s\"}\n", x ? x->id : "");
	if (!x) {
		reply_error(reply, 404, "no such exec in this session");
	} else if (!x->background) {
		reply_error(reply, 409, "exec %s is not a background exec: its output went to its own stream", x->id);
	} else if (x->reply >= 0) {
		reply_error(reply, 409, "exec %s already has a reader of its output", x->id);
	} else {
		reply_json(reply, ev);
		if (x->qoff >= x->queue.len) {
			/* Nothing queued: an ended exec's result (a reader before
			 * took its output), or, without follow, nothing. */
			if (x->done && x->result)
				reply_json(reply, x->result);
			if (x->done || (fo && fo->type == J_BOOL && !fo->b))
				goto out;
		}
		x->reply = reply;
		reply = -1;
		x->fetching = fo && fo->type == J_BOOL && !fo->b;
		x->fetch_left = x->queue.len - x->qoff;
		struct epoll_event rev = {.events = 0, .data.u64 = tag(K_REPLY, (uint32_t)(x - s->ex))};
		epoll_ctl(s->epfd, EPOLL_CTL_ADD, x->reply, &rev);
		queue_flush(s, x);
	}
out:
	close_fd(&reply);
}

static void do_get(struct sx *s, int reply)
{
	jwriter w = {0};
	w.filter = redact_cb;
	w.filter_ctx = s->rep->redact;
	jw_obj_begin(&w);
	jw_key(&w, "id");
	jw_str(&w, s->id);
	jw_key(&w, "state");
	jw_str(&w, s->ending ? "ending" : "running");
	sx_paths_json(s, &w);
	jw_key(&w, "execs");
	jw_arr_begin(&w);
	for (size_t i = 0; i < s->nex; i++) {
		jw_obj_begin(&w);
		jw_key(&w, "id");
		jw_str(&w, s->ex[i].id);
		jw_key(&w, "state");
		jw_str(&w, s->ex[i].done ? "done" : "running");
		jw_key(&w, "argv");
		jw_str_array(&w, (const char *const *)s->ex[i].argv.v, s->ex[i].argv.n);
		if (s->ex[i].done) {
			jw_key(&w, "status");
			jw_str(&w, s->ex[i].status);
		}
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	if (jw_finish(&w) == 0 && w.out.len < IPC_MAX_PACKET - 1)
		reply_json(reply, w.out.p);
	else if (w.out.p) {
		int fd = ipc_memfd("cordon-reply", w.out.p, w.out.len);
		const char *j = "{\"body\":\"fd\"}";
		ipc_send(reply, j, strlen(j), &fd, fd >= 0, MSG_DONTWAIT);
		close_fd(&fd);
	}
	buf_free(&w.out);
}

static void do_file(struct sx *s, const jnode *req, int reply, int body)
{
	const jnode *act = json_get(req, "action"), *path = json_get(req, "path");
	static const char *const ops[] = {NULL, "read", "write", "delete", "list"};
	int op = 0;
	for (int i = 1; i <= SX_FILE_LIST && act && act->str; i++)
		if (strcmp(act->str, ops[i]) == 0)
			op = i;
	/* path_hex: the path's bytes (any name, UTF-8 or not); path: the same
	 * as a JSON string, for older servers. */
	const jnode *hex = json_get(req, "path_hex");
	char raw[sizeof(s->files[0].path)];
	const char *p = path && path->type == J_STR ? path->str : NULL;
	if (hex && hex->type == J_STR && hex->str) {
		size_t hl = strlen(hex->str), i;
		for (i = 0; hl % 2 == 0 && i < hl / 2 && i + 1 < sizeof(raw); i++) {
			unsigned v;
			if (sscanf(hex->str + 2 * i, "%2x", &v) != 1 || !v || !isxdigit((unsigned char)hex->str[2 * i]) ||
			    !isxdigit((unsigned char)hex->str[2 * i + 1]))
				break;
			raw[i] = (char)v;
		}
		raw[i] = '\0';
		p = hl % 2 == 0 && i == hl / 2 ? raw : NULL;
	}
	char absp[sizeof(s->files[0].path)];
	if (p && p[0] && p[0] != '/' && sx_abs(s, p, absp, sizeof(absp)))
		p = absp; /* relative: the session's cwd's */
	if (!op || !p || p[0] != '/' || strlen(p) >= sizeof(s->files[0].path)) {
		reply_error(reply, 400, "path: an absolute path (as the session sees it) or one relative to its cwd, of at most 1023 bytes, is required");
		goto out;
	}
	int k = -1;
	for (int i = 0; i < (int)(sizeof(s->files) / sizeof(s->files[0])) && k < 0; i++)
		if (!s->files[i].used)
			k = i;
	if (k < 0) {
		reply_error(reply, 429, "too many file operations at once in this session");
		goto out;
	}
	struct sx_file *f = &s->files[k];
	f->used = true;
	f->op = op;
	f->reply = reply;
	f->body = body;
	reply = body = -1;
	snprintf(f->path, sizeof(f->path), "%s", p);
	cordon_error e = {0};
	e.code = op;
	const jnode *par = json_get(req, "parents");
	if (op == SX_FILE_WRITE && par && par->type == J_BOOL && par->b)
		e.code |= SX_FILE_PARENTS;
	snprintf(e.msg, sizeof(e.msg), "%s", f->path);
	sync_send(s->sock, MSG_SX_FILE, k, &e, -1);
out:
	close_fd(&reply);
	close_fd(&body);
}

static void evidence_add(struct sx *s, const struct sx_file *f, uint64_t bytes, const char *sha, int err)
{
	jwriter w = {0};
	w.filter = redact_cb;
	w.filter_ctx = s->rep->redact;
	static const char *const ops[] = {NULL, "read", "write", "delete", "list"};
	jw_obj_begin(&w);
	jw_key(&w, "op");
	jw_str(&w, ops[f->op]);
	jw_key(&w, "path");
	jw_str(&w, f->path);
	if (!err && (f->op == SX_FILE_READ || f->op == SX_FILE_WRITE)) {
		jw_key(&w, "bytes");
		jw_uint(&w, bytes);
		jw_key(&w, "sha256");
		jw_str(&w, sha);
	}
	jw_key(&w, "error");
	if (err)
		jw_str(&w, strerror(err));
	else
		jw_null(&w);
	jw_obj_end(&w);
	if (jw_finish(&w) == 0 && s->nevidence < 100000) {
		if (s->nevidence++)
			buf_append(&s->evidence, ",", 1);
		buf_append(&s->evidence, w.out.p, w.out.len);
	}
	buf_free(&w.out);
}

static int errno_http(int e)
{
	switch (e) {
	case ENOENT:
		return 404;
	case EACCES:
	case EPERM:
	case EROFS:
		return 403;
	case EFBIG:
	case ENOSPC:
	case EDQUOT:
		return 413;
	default:
		return 400;
	}
}

static void list_dir(struct sx *s, int fd, int reply, struct sx_file *f)
{
	int dfd = dup(fd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		close_fd(&dfd);
		reply_error(reply, 500, "list %s: %s", f->path, strerror(errno));
		return;
	}
	jwriter w = {0};
	w.filter = redact_cb;
	w.filter_ctx = s->rep->redact;
	jw_obj_begin(&w);
	jw_key(&w, "entries");
	jw_arr_begin(&w);
	size_t n = 0;
	for (struct dirent *de; (de = readdir(d)) && n < LIST_MAX;) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		struct stat st;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		const char *t = S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "dir" :
				S_ISLNK(st.st_mode) ? "symlink" : "other";
		jw_obj_begin(&w);
		jw_key(&w, "name");
		jw_str(&w, de->d_name);
		size_t nl = strlen(de->d_name);
		if (!json_utf8_valid(de->d_name, nl)) {
			/* "name" shows it with U+FFFD; these are its bytes, for
			 * ?path= (percent-encoded) to reach it. */
			buf b = {0};
			if (b64_encode(&b, de->d_name, nl) == 0 && buf_append(&b, "", 1) == 0) {
				jw_key(&w, "name_b64");
				jw_str(&w, b.p);
			}
			buf_free(&b);
		}
		jw_key(&w, "type");
		jw_str(&w, t);
		jw_key(&w, "size");
		jw_uint(&w, (uint64_t)st.st_size);
		jw_key(&w, "mode");
		char m[8];
		snprintf(m, sizeof(m), "%04o", (unsigned)(st.st_mode & 07777));
		jw_str(&w, m);
		jw_obj_end(&w);
		n++;
	}
	closedir(d);
	jw_arr_end(&w);
	jw_obj_end(&w);
	if (jw_finish(&w) == 0) {
		int mfd = ipc_memfd("cordon-list", w.out.p, w.out.len);
		const char *j = "{\"body\":\"fd\"}";
		if (mfd >= 0)
			ipc_send(reply, j, strlen(j), &mfd, 1, MSG_DONTWAIT);
		close_fd(&mfd);
	}
	buf_free(&w.out);
}

static void file_result(struct sx *s, int k, int err, int fd)
{
	if (k < 0 || k >= (int)(sizeof(s->files) / sizeof(s->files[0])) || !s->files[k].used) {
		close_fd(&fd);
		return;
	}
	struct sx_file *f = &s->files[k];
	char sha[65] = "";
	uint64_t bytes = 0;
	if (err || (fd < 0 && f->op != SX_FILE_DELETE)) {
		err = err ? err : EIO;
		reply_error(f->reply, errno_http(err), "%s: %s", f->path, strerror(err));
	} else if (f->op == SX_FILE_READ) {
		buf b = {0};
		if (ipc_read_fd(fd, FILE_MAX, &b) < 0) {
			err = errno;
			reply_error(f->reply, errno_http(err), "%s: %s", f->path, strerror(err));
		} else {
			bytes = b.len;
			sha256_hex(b.p ? b.p : "", b.len, sha);
			int mfd = ipc_memfd("cordon-file", b.p ? b.p : "", b.len);
			const char *j = "{\"body\":\"fd\"}";
			if (mfd >= 0)
				ipc_send(f->reply, j, strlen(j), &mfd, 1, MSG_DONTWAIT);
			else
				reply_error(f->reply, 500, "%s: %s", f->path, strerror(errno));
			close_fd(&mfd);
		}
		buf_wipe(&b);
	} else if (f->op == SX_FILE_WRITE) {
		buf b = {0};
		int rc = f->body >= 0 ? ipc_read_fd(f->body, FILE_MAX, &b) : 0;
		size_t off = 0;
		while (rc == 0 && off < b.len) {
			ssize_t w = write(fd, b.p + off, b.len - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rc = -1;
				break;
			}
			off += (size_t)w;
		}
		if (rc < 0) {
			err = errno ? errno : EIO;
			reply_error(f->reply, errno_http(err), "%s: %s", f->path, strerror(err));
		} else {
			bytes = b.len;
			sha256_hex(b.p ? b.p : "", b.len, sha);
			char j[160];
			snprintf(j, sizeof(j), "{\"bytes\":%zu,\"sha256\":\"%s\"}", b.len, sha);
			reply_json(f->reply, j);
		}
		buf_wipe(&b);
	} else if (f->op == SX_FILE_DELETE) {
		reply_json(f->reply, "{}");
	} else {
		list_dir(s, fd, f->reply, f);
	}
	evidence_add(s, f, bytes, sha, err);
	close_fd(&fd);
	close_fd(&f->reply);
	close_fd(&f->body);
	f->used = false;
	arm_idle(s);
}

static void end_session(struct sx *s, const char *why)
{
	if (s->ending)
		return;
	s->ending = true;
	if (!s->end_reason)
		s->end_reason = why;
	sync_send(s->sock, MSG_SX_END, 0, NULL, -1);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A warm session handed to a client: from now on it is a session like any
 * other. Its idle timer starts now, and so does its wall time (the policy's
 * limit, re-armed: the time it waited in the pool is not the client's). */
static bool do_claim(struct sx *s, const jnode *req, int reply)
{
	if (!s->warm || s->claimed) {
		reply_error(reply, 409, "the session is not in the warm pool");
		return false;
	}
	s->claimed = true;
	s->pool_ns = mono_ns() - s->t_ready;
	const jnode *os = json_get(req, "oneshot");
	s->oneshot = os && os->type == J_BOOL && os->b;
	const jnode *idle = json_get(req, "idle_timeout_ns");
	s->idle_ns = idle && idle->type == J_NUM && idle->num > 0 ? (uint64_t)idle->num : 0;
	if (s->idle_ns && s->idle < 0 && (s->idle = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) >= 0) {
		struct epoll_event ie = {.events = EPOLLIN, .data.u64 = tag(K_IDLE, 0)};
		epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->idle, &ie);
	}
	if (s->pol->limits[LIM_WALL].set && s->wall_timer >= 0) {
		uint64_t ns = s->pol->limits[LIM_WALL].value;
		struct itimerspec its = {{0, 0}, {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)}};
		timerfd_settime(s->wall_timer, 0, &its, NULL);
	}
	reply_created(s, reply, true);
	return true;
}

static void on_ctl(struct sx *s)
{
	char *b = malloc(IPC_MAX_PACKET);
	int fds[IPC_MAX_FDS], nfds = 0;
	ssize_t n = b ? ipc_recv(s->ctl, b, IPC_MAX_PACKET, fds, &nfds) : -1;
	if (n <= 0) {
		free(b);
		if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			/* The server is gone: so is the session (its report is
			 * written all the same). */
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->ctl, NULL);
			end_session(s, "server-gone");
		}
		return;
	}
	int reply = nfds > 0 ? fds[0] : -1, extra = nfds > 1 ? fds[1] : -1;
	cordon_error e;
	jnode *req = json_parse(b, (size_t)n, &e);
	free(b);
	const jnode *opn = req ? json_get(req, "op") : NULL;
	const char *op = opn && opn->str ? opn->str : "";
	arm_idle(s);
	/* A warm one-shot run's exec claims its session on the way ("claim":
	 * true, and the claim's "oneshot"): one message from the server, not
	 * a claim's round trip before it. */
	const jnode *cl = strcmp(op, "exec") == 0 ? json_get(req, "claim") : NULL;
	if (cl && cl->type == J_BOOL && cl->b && !do_claim(s, req, -1)) {
		reply_error(reply, 409, "the session is not in the warm pool");
	} else if (s->warm && !s->claimed && strcmp(op, "claim") != 0 && strcmp(op, "end") != 0) {
		reply_error(reply, 409, "the session is in the warm pool");
	} else if (s->ending && strcmp(op, "end") != 0) {
		/* Ended by its DELETE: 409 while it ends; by itself (a timeout):
		 * it has ended for the client (410). */
		bool deleted = s->end_reason && strcmp(s->end_reason, "deleted") == 0;
		if (deleted)
			reply_error(reply, 409, "the session is ending");
		else
			reply_error(reply, 410, "the session has ended (%s)", s->end_reason ? s->end_reason : "by itself");
	} else if (strcmp(op, "claim") == 0) {
		do_claim(s, req, reply);
	} else if (strcmp(op, "exec") == 0) {
		do_exec(s, req, reply, extra);
		reply = extra = -1;
	} else if (strcmp(op, "get") == 0) {
		do_get(s, reply);
	} else if (strcmp(op, "exec_get") == 0 || strcmp(op, "signal") == 0) {
		const jnode *id = json_get(req, "exec");
		struct sx_exec *x = find_exec(s, id ? id->str : NULL);
		if (!x) {
			reply_error(reply, 404, "no such exec in this session");
		} else if (op[0] == 'e') {
			if (x->result)
				reply_json(reply, x->result);
			else {
				char j[96];
				snprintf(j, sizeof(j), "{\"exec\":\"%s\",\"state\":\"running\"}", x->id);
				reply_json(reply, j);
			}
		} else {
			const jnode *sn = json_get(req, "signal");
			int sig = parse_signal(sn ? sn->str : NULL);
			if (sig < 0)
				reply_error(reply, 400, "signal: one of TERM, KILL, INT, HUP, QUIT, USR1, USR2, STOP, CONT, ALRM");
			else if (!x->running)
				reply_error(reply, 409, "exec %s has already ended", x->id);
			else {
				signal_exec(s, x, sig, "killed");
				reply_json(reply, "{}");
			}
		}
	} else if (strcmp(op, "output") == 0) {
		do_output(s, req, reply);
		reply = -1;
	} else if (strcmp(op, "attach") == 0 || strcmp(op, "resize") == 0) {
		const jnode *id = json_get(req, "exec");
		struct sx_exec *x = find_exec(s, id ? id->str : NULL);
		if (!x || !x->pty) {
			reply_error(reply, 404, "no such pty exec in this session");
		} else if (op[0] == 'a') {
			if (x->client < 0 && extra >= 0 && !x->running) {
				/* It ended before the client came: what it wrote, then EOF. */
				if (x->cq.len > x->cqoff &&
				    send(extra, x->cq.p + x->cqoff, x->cq.len - x->cqoff, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
					/* the client is gone already */
				}
				shutdown(extra, SHUT_WR);
				x->cq.len = x->cqoff = 0;
			} else if (x->client < 0 && extra >= 0) {
				x->client = extra;
				extra = -1;
				struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(K_CLIENT, (uint32_t)(x - s->ex))};
				x->client_reg = epoll_ctl(s->epfd, EPOLL_CTL_ADD, x->client, &ev) == 0;
				const jnode *pre = json_get(req, "input_b64");
				if (pre && pre->str) {
					size_t l = strlen(pre->str);
					uint8_t *d = malloc(l / 4 * 3 + 4);
					ssize_t dl = d ? b64_decode(pre->str, l, d) : -1;
					if (dl > 0)
						pty_input(s, x, d, (size_t)dl);
					free(d);
				}
				client_flush(s, x);
			}
			reply_json(reply, "{}");
		} else {
			const jnode *r = json_get(req, "rows"), *c = json_get(req, "cols");
			struct pty_winsize ws = {0};
			ws.rows = r && r->type == J_NUM && r->num >= 1 && r->num < 10000 ? (unsigned short)r->num : 0;
			ws.cols = c && c->type == J_NUM && c->num >= 1 && c->num < 10000 ? (unsigned short)c->num : 0;
			if (!ws.rows || !ws.cols)
				reply_error(reply, 400, "rows and cols: integers from 1 to 9999 are required");
			else if (x->ptm < 0 || pty_set_winsize(x->ptm, &ws) < 0)
				reply_error(reply, 409, "exec %s has no pty any more", x->id);
			else
				reply_json(reply, "{}");
		}
	} else if (strcmp(op, "file") == 0) {
		do_file(s, req, reply, extra);
		reply = extra = -1;
	} else if (strcmp(op, "end") == 0) {
		if (s->end_reply < 0) {
			s->end_reply = reply;
			reply = -1;
		}
		end_session(s, "deleted");
	} else {
		reply_error(reply, 400, "unknown request");
	}
	json_free(req);
	close_fd(&reply);
	close_fd(&extra);
}

/* ---- run.c hooks ---- */

static void h_ready(void *ctx, int sock, int epfd, int wall_timer, struct run_report *rep)
{
	struct sx *s = ctx;
	s->sock = sock;
	s->epfd = epfd;
	s->wall_timer = wall_timer;
	s->rep = rep;
	s->ready = true;
	s->t_ready = mono_ns();
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(K_CTL, 0)};
	epoll_ctl(epfd, EPOLL_CTL_ADD, s->ctl, &ev);
	if (!s->warm && s->idle_ns && (s->idle = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) >= 0) {
		struct epoll_event ie = {.events = EPOLLIN, .data.u64 = tag(K_IDLE, 0)};
		epoll_ctl(epfd, EPOLL_CTL_ADD, s->idle, &ie);
		arm_idle(s);
	}
	reply_created(s, s->create_reply, false);
	close_fd(&s->create_reply);
}

static bool h_msg(void *ctx, const struct msg *m, int fd)
{
	struct sx *s = ctx;
	int slot = m->value;
	struct sx_exec *x = slot >= 0 && slot < SX_SLOTS && s->slot_ex[slot] >= 0 ? &s->ex[s->slot_ex[slot]] : NULL;
	switch (m->type) {
	case MSG_SX_STARTED:
		if (x && m->err.code > 0) {
			x->pid = m->err.code;
			memcpy(&x->t_exec, m->err.msg, sizeof(x->t_exec));
		}
		if (x && m->err.code < 0) {
			snprintf(x->error, sizeof(x->error), "%s", m->err.msg);
			x->status = "start-error";
			finalize(s, x);
		} else if (x && x->pty && fd >= 0) {
			/* The master: its output is the exec's stdout (a pty
			 * merges both streams), read like a pipe. */
			fcntl(fd, F_SETFL, O_NONBLOCK);
			x->ptm = fd;
			pty_input_init(&x->in, fd);
			x->in_ready = true;
			if (x->pin.len) {
				pty_input(s, x, (const uint8_t *)x->pin.p, x->pin.len);
				buf_free(&x->pin);
			}
			if (x->client_eof) {
				pty_input_eof(&x->in);
				pty_flush(s, x);
			}
			client_watch(s, x);
			x->out[0] = dup(fd);
			close_fd(&x->out[1]);
			if (x->out[0] >= 0) {
				fcntl(x->out[0], F_SETFD, FD_CLOEXEC);
				struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(K_OUT, (uint32_t)(x - s->ex) * 2)};
				epoll_ctl(s->epfd, EPOLL_CTL_ADD, x->out[0], &ev);
			}
			return true;
		}
		return false;
	case MSG_SX_EXIT:
		if (x) {
			x->exited = true;
			x->wstatus = m->err.code;
			memcpy(&x->usage, m->err.msg, sizeof(x->usage));
			x->cg_cpu = sxcg_exec_end(slot, &x->cg_cpu_ns);
			finalize(s, x);
		}
		return false;
	case MSG_SX_FILE_R:
		file_result(s, slot, m->err.code, fd);
		return true;
	}
	return false;
}

static void h_event(void *ctx, uint64_t data, uint32_t events)
{
	struct sx *s = ctx;
	int kind = (int)((data >> 32) & 0xff);
	uint32_t idx = (uint32_t)data;
	switch (kind) {
	case K_CTL:
		on_ctl(s);
		break;
	case K_OUT:
		if (idx / 2 < s->nex)
			read_out(s, &s->ex[idx / 2], (int)(idx % 2));
		break;
	case K_TIMER:
		if (idx < s->nex) {
			uint64_t v;
			if (read(s->ex[idx].timer, &v, sizeof(v)) < 0) { /* spurious */ }
			signal_exec(s, &s->ex[idx], SIGKILL, "timeout");
		}
		break;
	case K_IDLE: {
		uint64_t v;
		if (read(s->idle, &v, sizeof(v)) < 0) { /* spurious */ }
		/* The lease (docs/api.md): an exec whose client still reads
		 * its stream (or holds its pty open) keeps the session; one
		 * left running by a client that went away does not. */
		bool busy = false;
		for (size_t i = 0; i < s->nex; i++)
			busy |= s->ex[i].running &&
				(s->ex[i].reply >= 0 || (s->ex[i].client >= 0 && !s->ex[i].client_eof));
		if (!busy)
			end_session(s, "idle-timeout");
		else
			arm_idle(s);
		break;
	}
	case K_REPLY:
		if (idx < s->nex && (events & (EPOLLHUP | EPOLLERR)))
			reply_hangup(s, &s->ex[idx]);
		else if (idx < s->nex)
			queue_flush(s, &s->ex[idx]);
		break;
	case K_PTYIN:
		if (idx < s->nex)
			pty_flush(s, &s->ex[idx]);
		break;
	case K_CLIENT:
		if (idx < s->nex && s->ex[idx].client >= 0) {
			if (events & EPOLLOUT)
				client_flush(s, &s->ex[idx]);
			if (s->ex[idx].client >= 0 && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
				client_in(s, &s->ex[idx]);
		}
		break;
	}
	(void)events;
}

static void h_cgroup(void *ctx, const struct cgroup *cg)
{
	(void)ctx;
	sxcg_session(cg);
}

static void h_end(void *ctx)
{
	struct sx *s = ctx;
	s->ended = true;
	sxcg_end();
	for (size_t i = 0; i < s->nex; i++)
		if (s->ex[i].running)
			finalize(s, &s->ex[i]);
	for (size_t i = 0; i < sizeof(s->files) / sizeof(s->files[0]); i++)
		if (s->files[i].used)
			file_result(s, (int)i, ESHUTDOWN, -1);
}

/* ---- the session report ---- */

/* A one-shot's session that itself ended well: the report's status, exit
 * code and signal are its exec's (the session's end is in session.end). */
static void oneshot_outcome(struct sx *s, struct run_report *rep)
{
	if (!s->oneshot || s->nex != 1 || !s->ex[0].done)
		return;
	const struct sx_exec *x = &s->ex[0];
	/* Its output is the run's, as `cordon run` reports it. */
	for (int i = 0; i < 2; i++) {
		rep->out[i].bytes = x->bytes[i];
		snprintf(rep->out[i].sha256, sizeof(rep->out[i].sha256), "%s", x->sha[i]);
		rep->out[i].hash_skipped = x->hash_over[i];
		rep->out[i].hashed_bytes = x->hashed[i];
	}
	if (rep->status != ST_OK)
		return;
	static const struct {
		const char *name;
		enum run_status st;
	} map[] = {{"ok", ST_OK}, {"exit", ST_EXIT_NONZERO}, {"signaled", ST_SIGNALED}, {"killed", ST_SIGNALED},
		   {"timeout", ST_TIMEOUT}, {"output-limit", ST_OUTPUT_LIMIT}, {"start-error", ST_SETUP_ERROR}};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (x->status && strcmp(x->status, map[i].name) == 0)
			rep->status = map[i].st;
	rep->exit_code = x->exited && WIFEXITED(x->wstatus) ? WEXITSTATUS(x->wstatus) : -1;
	rep->signal = x->exited && WIFSIGNALED(x->wstatus) ? WTERMSIG(x->wstatus) : 0;
	if (rep->status == ST_SETUP_ERROR)
		snprintf(rep->reason, sizeof(rep->reason), "%s", x->error);
}

/* cordon.report/1 with the session's own sections, spliced before the
 * report's closing brace. */
static char *session_report(struct sx *s, struct run_report *rep)
{
	char *base = report_to_json(rep);
	if (!base)
		return NULL;
	char *end = strrchr(base, '}');
	if (!end) {
		free(base);
		return NULL;
	}
	buf b = {0};
	buf_append(&b, base, (size_t)(end - base));
	while (b.len && (b.p[b.len - 1] == '\n' || b.p[b.len - 1] == ' '))
		b.len--;
	/* Not asked for by a request or a timer of ours: the server's
	 * SIGTERM (interrupted), the session's wall time, or its own end. */
	const char *end_reason = s->end_reason ? s->end_reason
				 : rep->status == ST_INTERRUPTED ? "server-stopped"
				 : rep->status == ST_TIMEOUT	  ? "wall-timeout"
								  : "ended";
	buf_printf(&b, ",\n  \"session\": {\"id\": \"%s\", \"end\": \"%s\", \"warm\": %s, ", s->id, end_reason,
		   s->warm ? "true" : "false");
	if (s->warm)
		buf_printf(&b, "\"pool_seconds\": %.6f, ", (double)s->pool_ns / 1e9);
	buf_printf(&b, "\"files\": [%s]},\n  \"execs\": [", s->evidence.p ? s->evidence.p : "");
	size_t k = 0;
	for (size_t i = 0; i < s->nex; i++) {
		if (!s->ex[i].result)
			continue;
		const char *r = s->ex[i].result;
		size_t rl = strlen(r);
		while (rl && (r[rl - 1] == '\n'))
			rl--;
		if (k++)
			buf_append(&b, ",", 1);
		buf_append(&b, "\n    ", 5);
		buf_append(&b, r, rl);
	}
	buf_printf(&b, "\n  ]\n}\n");
	free(base);
	return b.p;
}

/* The session's report, written to its file and sent to the DELETE (or
 * the server's end of a one-shot) waiting for it: once, when it is
 * complete (h_report, before the boundary's teardown), or after the run if
 * that never came. */
static void publish(struct sx *s)
{
	if (s->published)
		return;
	s->published = true;
	cordon_error err = {0};
	oneshot_outcome(s, s->rep);
	char *text = session_report(s, s->rep);
	/* A warm session no client took has no report: nothing ran in it
	 * (the server removes its directory). */
	if (text && s->report_path[0] && s->ready && (!s->warm || s->claimed))
		report_write_file(s->report_path, text, &err);
	if (s->end_reply >= 0) {
		int fd = text ? ipc_memfd("cordon-report", text, strlen(text)) : -1;
		const char *j = "{\"body\":\"fd\"}";
		if (fd >= 0)
			ipc_send(s->end_reply, j, strlen(j), &fd, 1, 0);
		else
			reply_error(s->end_reply, 500, "the session's report could not be built");
		close_fd(&fd);
		close_fd(&s->end_reply);
	}
	free(text);
}

static void h_report(void *ctx)
{
	struct sx *s = ctx;
	if (s->ready)
		publish(s);
}

static void sx_free(struct sx *s)
{
	for (size_t i = 0; i < s->nex; i++) {
		struct sx_exec *x = &s->ex[i];
		strv_free(&x->argv);
		free(x->result);
		free(x->den0);
		buf_free(&x->queue);
		buf_free(&x->cq);
		buf_free(&x->pin);
		if (x->in_ready)
			pty_input_free(&x->in);
		close_fd(&x->ptm);
		close_fd(&x->client);
		close_fd(&x->reply);
		close_fd(&x->timer);
		for (int k = 0; k < 2; k++) {
			close_fd(&x->out[k]);
			if (x->h[k]) {
				sha256_free(x->h[k]);
				redact_stream_free(&x->rs[k]);
			}
		}
	}
	free(s->ex);
	buf_free(&s->evidence);
	close_fd(&s->idle);
	close_fd(&s->create_reply);
	close_fd(&s->end_reply);
}

static int setup_policy(struct sx *s, const jnode *cfg, int polfd, cordon_error *err)
{
	const jnode *ceil = json_get(cfg, "ceiling"), *tmo = json_get(cfg, "timeout"),
		    *idle = json_get(cfg, "idle_timeout_ns"), *ws = json_get(cfg, "workspace");
	buf text = {0};
	if (polfd >= 0 && ipc_read_fd(polfd, 16u << 20, &text) < 0) {
		buf_free(&text);
		return cordon_err_errno(err, "policy");
	}
	s->pol = policy_new();
	if (!s->pol) {
		buf_free(&text);
		return cordon_err(err, ENOMEM, "out of memory");
	}
	int rc = 0;
	if (text.len)
		rc = policy_load_json(s->pol, text.p, text.len, "policy", ws && ws->str ? ws->str : "/", err);
	buf_free(&text);
	if (rc < 0)
		return -1;
	if (ceil && ceil->str && !(s->pol->ceiling_file = strdup(ceil->str)))
		return cordon_err(err, ENOMEM, "out of memory");
	const jnode *dflt = json_get(cfg, "default_timeout");
	if (tmo && tmo->str && policy_set_limit(s->pol, LIM_WALL, tmo->str, SRC_FLAG, err) < 0)
		return cordon_err_wrap(err, "timeout");
	/* The server's default only where neither the request nor the policy
	 * has one. */
	if (!tmo && dflt && dflt->str && !s->pol->limits[LIM_WALL].set &&
	    policy_set_limit(s->pol, LIM_WALL, dflt->str, SRC_FLAG, err) < 0)
		return cordon_err_wrap(err, "--session-timeout");
	if (idle && idle->type == J_NUM && idle->num > 0)
		s->idle_ns = (uint64_t)idle->num;
	/* The client's session, from a root server: the run is the client's. */
	const jnode *cu = json_get(cfg, "client_uid"), *cg = json_get(cfg, "client_gid");
	if (cu && cg && cu->type == J_NUM && cg->type == J_NUM) {
		s->pol->for_client = true;
		s->pol->client_uid = (uid_t)cu->num;
		s->pol->client_gid = (gid_t)cg->num;
	}
	return 0;
}

int session_worker_main(int ctl)
{
	struct sx s;
	memset(&s, 0, sizeof(s));
	s.ctl = ctl;
	s.sock = s.epfd = s.idle = s.create_reply = s.end_reply = s.wall_timer = -1;
	for (int i = 0; i < SX_SLOTS; i++)
		s.slot_ex[i] = -1;
	char *b = malloc(IPC_MAX_PACKET);
	int fds[IPC_MAX_FDS], nfds = 0;
	ssize_t n = b ? ipc_recv(ctl, b, IPC_MAX_PACKET, fds, &nfds) : -1;
	if (n <= 0) {
		free(b);
		return 2;
	}
	s.create_reply = nfds > 0 ? fds[0] : -1;
	int polfd = nfds > 1 ? fds[1] : -1;
	cordon_error err = {0};
	jnode *cfg = json_parse(b, (size_t)n, &err);
	free(b);
	const jnode *id = cfg ? json_get(cfg, "id") : NULL, *rp = cfg ? json_get(cfg, "report") : NULL;
	snprintf(s.id, sizeof(s.id), "%s", id && id->str ? id->str : "s-?");
	snprintf(s.report_path, sizeof(s.report_path), "%s", rp && rp->str ? rp->str : "");
	const jnode *wm = cfg ? json_get(cfg, "warm") : NULL;
	s.warm = wm && wm->type == J_BOOL && wm->b;
	const jnode *ws = cfg ? json_get(cfg, "workspace") : NULL;
	if (!cfg || setup_policy(&s, cfg, polfd, &err) < 0 || !ws || !ws->str || chdir(ws->str) < 0) {
		if (!err.msg[0])
			cordon_err_errno(&err, "session workspace");
		reply_error(s.create_reply, 400, "%s", err.msg);
		close_fd(&polfd);
		json_free(cfg);
		policy_free(s.pol);
		sx_free(&s);
		return 1;
	}
	snprintf(s.ws, sizeof(s.ws), "%s", ws->str);
	snprintf(s.cwd, sizeof(s.cwd), "%s", s.pol->cwd ? s.pol->cwd : ws->str);
	close_fd(&polfd);
	json_free(cfg);
	/* The server's environment: the host variables secrets come from,
	 * CORDON_CGROUP, LANG, TERM... as for cordon run. */
	struct cordon_run_options ro;
	cordon_run_options_from_env(&ro, environ);
	s.pol->opts = &ro;
	/* A malformed value: the boundary's setup refuses it (sup-run.c). */
	s.out_hash = OUTPUT_HASH_BYTES;
	cordon_error herr = {0};
	if (ro.output_hash && parse_size(ro.output_hash, &s.out_hash, &herr) < 0)
		s.out_hash = OUTPUT_HASH_BYTES;
	struct run_report rep;
	report_init(&rep);
	rep.attribute = true; /* each exec's denials are its own (finalize) */
	struct run_hooks h = {&s, h_ready, h_msg, h_event, h_end, h_report, h_cgroup};
	s.rep = &rep;
	int rc = cordon_session_run(s.pol, &rep, &h, &err);
	if (!s.ready) {
		/* Never started: the reason, and for the ceiling each excess. */
		int code = rep.status == ST_UNAUTHORIZED ? 403 : rep.status == ST_INFEASIBLE ? 422 : 500;
		char *reason = report_redact(&rep, rc < 0 ? err.msg : rep.reason);
		reply_error(s.create_reply, code, "%s: %s", status_name(rep.status), reason ? reason : "");
		free(reason);
	}
	publish(&s);
	report_free(&rep);
	policy_free(s.pol);
	sx_free(&s);
	return rc < 0 ? 1 : 0;
}
