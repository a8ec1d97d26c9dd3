#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sup-stream.h"
#include "cleanup.h"
#include "redact-stream.h"

/* The command's pipe is grown to this (F_SETPIPE_SZ, where the host allows
 * it), and splice(2) moves up to this much per call: a bulk writer fills a
 * quarter of it between two wake-ups of the loop (sup-run.c, COALESCE_NS). */
#define CHUNK (1024 * 1024)
/* Bytes per read(2), where cordon must see the bytes (to redact or hash
 * them): each read and the write after it copy what the writer has just
 * put in the pipe, while it is still in the cache, and the loop does not
 * sleep after a read. 1 MiB reads with a sleep after each cost a relay
 * with secrets about 7 % of its throughput (bench/relay.sh). */
#define READ_CHUNK (128 * 1024)
/* One call of stream_read moves at most this much before the event loop
 * looks at the other fds again. */
#define LOOP_MAX (4 * CHUNK)

/* Hashing on a thread of its own once a stream turns out to be bulk: SHA-256
 * costs more than the rest of the relay together (about half the
 * supervisor's time at 1 GB/s), so the relay thread only reads into a ring
 * of slots and the hash thread digests them in order. A stream that never
 * delivers a large read is hashed inline and starts no thread.
 *
 * Only where a core is left for it: a bulk writer and the reader of
 * cordon's output keep two cores busy between them (a bare pipe does), so
 * on a machine with two the thread only adds its hand-overs, and the hash
 * inline costs less CPU for the same throughput (bench/relay.sh, CPU s/GB). */
#define HQ_SLOTS 4
#define HQ_SLOT (1024 * 1024)
#define HQ_START (32 * 1024) /* a read this large: bulk */

struct hashq {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t work, space;
	uint8_t *slot[HQ_SLOTS];
	size_t len[HQ_SLOTS];
	unsigned head, tail; /* slots [head, tail) wait for the hash thread */
	size_t fill;         /* bytes in slot tail, not yet handed over */
	bool stop;
	sha256_ctx *ctx;
};

static void *hashq_main(void *arg)
{
	struct hashq *q = arg;
	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (q->head == q->tail && !q->stop)
			pthread_cond_wait(&q->work, &q->mu);
		if (q->head == q->tail)
			break;
		unsigned i = q->head % HQ_SLOTS;
		pthread_mutex_unlock(&q->mu);
		sha256_update(q->ctx, q->slot[i], q->len[i]);
		pthread_mutex_lock(&q->mu);
		q->head++;
		pthread_cond_signal(&q->space);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

/* A core for the hash thread: more than two CPUs this process may run on. */
static bool hash_thread_pays(void)
{
	static int pays = -1;
	if (pays < 0) {
		cpu_set_t set;
		pays = sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 2;
	}
	return pays;
}

static struct hashq *hashq_start(sha256_ctx *ctx)
{
	if (!hash_thread_pays())
		return NULL;
	struct hashq *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->ctx = ctx;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->work, NULL);
	pthread_cond_init(&q->space, NULL);
	for (int i = 0; i < HQ_SLOTS; i++)
		if (!(q->slot[i] = malloc(HQ_SLOT)))
			goto fail;
	/* The supervisor blocks every signal it handles (signalfd): so does
	 * the new thread, which inherits the mask. */
	if (pthread_create(&q->th, NULL, hashq_main, q) != 0)
		goto fail;
	return q;
fail:
	for (int i = 0; i < HQ_SLOTS; i++)
		free(q->slot[i]);
	free(q);
	return NULL;
}

/* Hand the slot being filled to the hash thread; wait for a free one. */
static void hashq_publish(struct hashq *q)
{
	pthread_mutex_lock(&q->mu);
	q->len[q->tail % HQ_SLOTS] = q->fill;
	q->tail++;
	q->fill = 0;
	pthread_cond_signal(&q->work);
	while (q->tail - q->head == HQ_SLOTS)
		pthread_cond_wait(&q->space, &q->mu);
	pthread_mutex_unlock(&q->mu);
}

static void hashq_add(struct hashq *q, const uint8_t *p, size_t n)
{
	while (n) {
		size_t k = HQ_SLOT - q->fill < n ? HQ_SLOT - q->fill : n;
		memcpy(q->slot[q->tail % HQ_SLOTS] + q->fill, p, k);
		q->fill += k;
		p += k;
		n -= k;
		if (q->fill == HQ_SLOT)
			hashq_publish(q);
	}
}

/* Everything handed over and digested; the thread is gone. */
static void hashq_finish(struct hashq *q)
{
	if (q->fill)
		hashq_publish(q);
	pthread_mutex_lock(&q->mu);
	q->stop = true;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->th, NULL);
	for (int i = 0; i < HQ_SLOTS; i++)
		free(q->slot[i]);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->work);
	pthread_cond_destroy(&q->space);
	free(q);
}

/* Hash what the budget still allows of n bytes of the stream. */
static void stream_hash(struct out_stream *s, const void *p, size_t n)
{
	if (n > s->hash_left) {
		s->hash_over = true;
		n = (size_t)s->hash_left;
	}
	if (!n)
		return;
	s->hash_left -= n;
	s->hashed += n;
	if (s->hq)
		hashq_add(s->hq, p, n);
	else
		sha256_update(s->hash, p, n);
}

/* A pipe destination as a description of our own, with O_NONBLOCK: the
 * caller's (shared with whoever else holds that stdout) is left alone. */
static int reopen_pipe_nonblock(int fd)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	return open(p, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
}

static void choose_mode(struct out_stream *s, int dest_fd)
{
	struct stat st;
	if (fstat(dest_fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
		int fd = reopen_pipe_nonblock(dest_fd);
		if (fd >= 0) {
			/* Grown, never shrunk: 1 MiB per write (or tee) instead of
			 * 64 KiB, and the reader wakes a sixteenth as often. */
			int sz = fcntl(fd, F_GETPIPE_SZ);
			if (sz >= 0 && sz < CHUNK && fcntl(fd, F_SETPIPE_SZ, CHUNK) < 0) { /* stays as it was */ }
			s->out_fd = fd;
			s->mode = OUT_NONBLOCK;
			s->out_pollable = true;
			return;
		}
	}
	s->out_fd = fcntl(dest_fd, F_DUPFD_CLOEXEC, 3);
	if (s->out_fd < 0)
		return;
	if (S_ISSOCK(st.st_mode)) {
		s->mode = OUT_SOCKET;
		s->out_pollable = true;
		return;
	}
	/* epoll refuses regular files (and /dev/null): those never block,
	 * write directly. */
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLOUT};
	s->out_pollable = ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, s->out_fd, &ev) == 0;
	if (ep >= 0)
		close(ep);
	s->mode = s->out_pollable ? OUT_POLL : OUT_BLOCKING;
}

int stream_init(struct out_stream *s, int in_fd, int dest_fd, const redactor *r, const char *prefix,
		uint64_t hash_budget)
{
	memset(s, 0, sizeof(*s));
	s->in_fd = in_fd;
	s->hash_left = hash_budget;
	s->out_fd = -1;
	s->prefix = prefix;
	s->at_line_start = true;
	redact_stream_init(&s->rs, r);
	s->redacting = redactor_nnames(r) > 0;
	s->hash = sha256_new();
	if (!s->hash)
		return -1;
	if (s->redacting && !(s->rbuf = secmem_alloc(READ_CHUNK, NULL)))
		return -1;
	/* Best effort: the host's pipe-max-size or the user's pipe quota may
	 * refuse, and the pipe keeps its 64 KiB. */
	s->big_pipe = fcntl(in_fd, F_SETPIPE_SZ, CHUNK) >= CHUNK; /* else the loop never sleeps */
	choose_mode(s, dest_fd);
	if (s->out_fd < 0)
		s->out_broken = true;
	return 0;
}

/* Redacted bytes with a prefix per line: into the evidence (count, hash),
 * then out with the prefix. */
static int take_prefixed(struct out_stream *s, const char *p, size_t n)
{
	stream_hash(s, p, n);
	s->bytes += n;
	if (s->out_broken || !n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s->at_line_start && buf_append(&s->pending, s->prefix, strlen(s->prefix)) < 0)
			return -1;
		if (buf_append(&s->pending, &p[i], 1) < 0)
			return -1;
		s->at_line_start = p[i] == '\n';
	}
	return 0;
}

/* Bytes appended to pending since mark: count and hash them where they lie;
 * drop them again if there is nowhere to forward them. */
static void take_in_place(struct out_stream *s, size_t mark)
{
	size_t n = s->pending.len - mark;
	if (!n)
		return;
	stream_hash(s, s->pending.p + mark, n);
	s->bytes += n;
	if (s->out_broken)
		s->pending.len = mark;
}

static int reserve(buf *b, size_t n)
{
	if (b->cap - b->len >= n)
		return 0;
	char *p = realloc(b->p, b->len + n);
	if (!p)
		return -1;
	b->p = p;
	b->cap = b->len + n;
	return 0;
}

/* What was read, through the redactor: straight into pending, or via a
 * temporary buffer when lines get a prefix. */
static int take_raw(struct out_stream *s, const uint8_t *in, size_t n, bool eof)
{
	if (s->prefix) {
		buf red = {0};
		int r = (n ? redact_feed(&s->rs, in, n, &red) : 0) < 0 || (eof && redact_flush(&s->rs, &red) < 0) ||
				take_prefixed(s, red.p, red.len) < 0 ? -1 : 0;
		buf_wipe(&red);
		return r;
	}
	size_t mark = s->pending.len;
	if ((n && redact_feed(&s->rs, in, n, &s->pending) < 0) || (eof && redact_flush(&s->rs, &s->pending) < 0))
		return -1;
	take_in_place(s, mark);
	return 0;
}

/* Pipe to pipe without redaction, once the hash budget is spent: splice(2)
 * moves the command's pages to the destination and nothing is copied. While
 * the hash lasts, the bytes are read, hashed and written from cordon's own
 * buffer instead: a page the command put in its pipe by reference (vmsplice,
 * or splice from its own file) can change after a tee(2) forwarded it, so
 * the reader would get other bytes than the ones hashed. Repeats while both
 * sides have room, up to LOOP_MAX. Returns bytes moved, 0 to use the
 * ordinary path instead (also at the output limit: its read finds whether
 * there is more), or 1 with tee_blocked set when the destination is full.
 * Never more than budget: each call asks for at most what is left of it. */
static ssize_t splice_read(struct out_stream *s, uint64_t budget)
{
	if (s->hash_left > 0 || s->no_tee || s->mode != OUT_NONBLOCK || s->out_broken || stream_has_pending(s))
		return 0;
	size_t moved = 0;
	while (moved < LOOP_MAX && budget > moved) {
		uint64_t len = budget - moved;
		if (len > CHUNK)
			len = CHUNK;
		ssize_t t = splice(s->in_fd, NULL, s->out_fd, NULL, (size_t)len, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (t < 0 && errno == EAGAIN) {
			if (moved)
				break; /* the command's pipe is empty, or the destination full: epoll says which */
			/* The command's pipe is readable (level-triggered): so the
			 * destination is full. Wait for it as for pending bytes. */
			s->tee_blocked = true;
			return 1;
		}
		if (t <= 0) {
			/* 0: end of input; EPIPE and the rest: the ordinary path says. */
			if (t < 0 && errno != EINTR && errno != EPIPE)
				s->no_tee = true;
			break;
		}
		/* Past the hash budget: counted, not hashed. */
		s->hash_over = true;
		s->raw_bytes += (uint64_t)t;
		s->bytes += (uint64_t)t;
		moved += (size_t)t;
		if ((uint64_t)t < len)
			break; /* drained (or the destination is full): epoll says when there is more */
	}
	return (ssize_t)moved;
}

ssize_t stream_read(struct out_stream *s, uint64_t budget, bool *over)
{
	*over = false;
	s->spliced = false;
	if (s->in_fd < 0)
		return 0;
	if (!s->redacting && !s->prefix) {
		ssize_t t = splice_read(s, budget);
		s->spliced = t > 0 && !s->tee_blocked;
		if (t != 0)
			return t;
	}
	/* Without redaction or prefix, read where the bytes will be written from. */
	bool direct = !s->redacting && !s->prefix;
	uint8_t *dst = s->rbuf;
	if (direct) {
		if (reserve(&s->pending, READ_CHUNK) < 0)
			return -1;
		dst = (uint8_t *)s->pending.p + s->pending.len;
	} else if (!dst) {
		static uint8_t plain[READ_CHUNK]; /* prefix without secrets: not secret */
		dst = plain;
	}
	ssize_t n = read(s->in_fd, dst, READ_CHUNK);
	/* A pty master (--pty) reads EIO once every slave is closed: its end. */
	if (n < 0 && errno == EIO)
		n = 0;
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -1;
	if (n == 0) {
		close(s->in_fd);
		s->in_fd = -1;
		return direct ? 0 : take_raw(s, NULL, 0, true);
	}
	if (!s->hq && n >= HQ_START && !s->hq_tried) {
		s->hq_tried = true;
		s->hq = hashq_start(s->hash); /* NULL: inline, as before */
	}
	size_t take = (size_t)n;
	if ((uint64_t)take > budget) {
		take = (size_t)budget;
		*over = true;
	}
	s->raw_bytes += take;
	if (direct) {
		size_t mark = s->pending.len;
		s->pending.len += take;
		take_in_place(s, mark);
		return n;
	}
	return take_raw(s, dst, take, false) < 0 ? -1 : n;
}

bool stream_has_pending(const struct out_stream *s)
{
	return s->pending.len > s->pending_off || s->tee_blocked;
}

static ssize_t write_some(struct out_stream *s, const char *p, size_t len)
{
	switch (s->mode) {
	case OUT_POLL: {
		/* Only write what cannot block: poll first, and at most PIPE_BUF
		 * per write once the destination reports room. */
		struct pollfd pf = {s->out_fd, POLLOUT, 0};
		if (poll(&pf, 1, 0) <= 0 || !(pf.revents & (POLLOUT | POLLERR | POLLHUP))) {
			errno = EAGAIN;
			return -1;
		}
		return write(s->out_fd, p, len > PIPE_BUF ? PIPE_BUF : len);
	}
	case OUT_SOCKET:
		return send(s->out_fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	default:
		return write(s->out_fd, p, len);
	}
}

int stream_flush(struct out_stream *s)
{
	if (s->tee_blocked) {
		struct pollfd pf = {s->out_fd, POLLOUT, 0};
		if (poll(&pf, 1, 0) <= 0 || !(pf.revents & (POLLOUT | POLLERR | POLLHUP)))
			return 0;
		s->tee_blocked = false;
	}
	while (stream_has_pending(s) && !s->out_broken) {
		ssize_t n = write_some(s, s->pending.p + s->pending_off, s->pending.len - s->pending_off);
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
	take_raw(s, NULL, 0, true);
	redact_stream_free(&s->rs);
	/* Waiting writes for what is left: the run is over. */
	while (stream_flush(s) == 0) {
		struct pollfd pf = {s->out_fd, POLLOUT, 0};
		if (poll(&pf, 1, -1) < 0 && errno != EINTR)
			break;
	}
	if (s->hq)
		hashq_finish(s->hq);
	s->hq = NULL;
	sha256_final_hex(s->hash, sha);
	s->hash = NULL;
	if (s->in_fd >= 0)
		close(s->in_fd);
	if (s->out_fd >= 0)
		close(s->out_fd);
	s->in_fd = s->out_fd = -1;
	/* Without secrets nothing in pending is secret: freed, not wiped (a
	 * wipe of its reserve would fault in every page of it, most never
	 * written: on a VM each fault is an exit). */
	if (s->redacting)
		buf_wipe(&s->pending);
	else
		buf_free(&s->pending);
	secmem_free(s->rbuf);
	s->rbuf = NULL;
}
