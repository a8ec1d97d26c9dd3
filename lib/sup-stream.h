/* One captured output stream of the command: read from the pipe, redact,
 * count, hash, forward to cordon's own stdout/stderr as it arrives, with
 * backpressure: while a chunk is waiting for the destination, the pipe is not
 * read (the command blocks on a full pipe rather than cordon buffering without
 * bound).
 *
 * Speed: the command's pipe grown to 1 MiB (F_SETPIPE_SZ, best effort), so
 * a bulk writer need not wait for cordon; reads of up to 128 KiB, each
 * while the bytes are still in the cache (sup-stream.c, READ_CHUNK).
 * Without secrets and without a prefix the bytes are read straight into
 * the pending buffer (no copy before the write). A destination that is a
 * pipe is reopened through /proc/self/fd as a new open file description
 * with O_NONBLOCK (never set on the caller's shared description), and grown
 * to 1 MiB (never shrunk), so whole reads are written without a poll
 * before each page; a socket is written with MSG_DONTWAIT; anything else
 * that can block (a terminal) gets a poll and at most a page per write, as
 * before. The hashed bytes are always read, hashed and written from
 * cordon's own buffer (never tee(2): the command can change a page it put in
 * its pipe by reference after it was forwarded). On a machine with more than two
 * CPUs, once a read brings 32 KiB or more, hashing moves to a thread of its
 * own (sup-stream.c, struct hashq); on two, the writer and the reader keep both
 * busy and the hash is cheaper inline.
 *
 * The hash has a budget (hash_left, the run option output_hash, 64 MiB by
 * default): SHA-256 costs more CPU than the relay itself, so a stream is
 * hashed up to the budget and past it only counted, redacted and limited;
 * the report then says the hash was skipped and how many bytes it covers.
 * Once the budget is spent, pipe to pipe without secrets or prefix,
 * splice(2) moves the command's pages to the destination without a copy
 * (repeated while both pipes have room, up to 4 MiB per event), each call
 * bounded by what is left of the output limit. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "hash.h"
#include "redact-stream.h"
#include "redact.h"
#include "strv.h"

enum out_mode {
	OUT_BLOCKING, /* regular file or unknown: plain writes */
	OUT_POLL,     /* may block: poll, then at most PIPE_BUF per write */
	OUT_NONBLOCK, /* our own O_NONBLOCK description of a pipe */
	OUT_SOCKET,   /* send(MSG_DONTWAIT) */
};

struct out_stream {
	int in_fd;        /* read end of the command's pipe, or -1 at EOF */
	int out_fd;       /* our own dup (or reopened pipe) of stdout/stderr */
	bool out_pollable; /* epoll can wait for EPOLLOUT on out_fd */
	enum out_mode mode;
	bool out_broken;  /* nothing to forward to: keep counting, stop writing */
	bool dest_gone;   /* the reader went away (EPIPE): the command should learn it too */
	uint64_t raw_bytes; /* captured from the command (the output limit) */
	uint64_t bytes;   /* of the redacted stream (the evidence) */
	sha256_ctx *hash;
	uint64_t hash_left; /* bytes the hash may still take (the budget) */
	uint64_t hashed;  /* bytes hashed (a prefix of the redacted stream) */
	bool hash_over;   /* bytes went past the budget unhashed */
	struct hashq *hq; /* the hash thread of a bulk stream, or NULL */
	bool hq_tried;    /* hashq_start was asked (once per stream) */
	struct redact_stream rs;
	bool redacting;
	uint8_t *rbuf;    /* read buffer when redacting (secret memory: raw output) */
	bool tee_blocked; /* splice found the destination full */
	bool no_tee;      /* splice refused (not two pipes): plain reads */
	bool big_pipe;    /* the command's pipe took CHUNK bytes (F_SETPIPE_SZ) */
	bool spliced;     /* the last stream_read moved bytes by splice(2) */
	const char *prefix; /* put at the start of every forwarded line, or NULL */
	bool at_line_start;
	buf pending;      /* redacted, not yet forwarded */
	size_t pending_off;
};

/* hash_budget: bytes of the (redacted) stream hashed at most. */
int stream_init(struct out_stream *s, int in_fd, int dest_fd, const redactor *r, const char *prefix,
		uint64_t hash_budget);
/* Read what is available, at most budget raw bytes (the rest of the output
 * limit). Returns bytes read, 0 at EOF (in_fd closed and set to -1), or -1
 * on error. If more than budget was available, *over is set. */
ssize_t stream_read(struct out_stream *s, uint64_t budget, bool *over);
/* Try to forward pending bytes. Returns 1 if all flushed, 0 if the
 * destination would block (wait for EPOLLOUT), -1 on error. */
int stream_flush(struct out_stream *s);
bool stream_has_pending(const struct out_stream *s);
/* Finish: release held bytes, hash hex (of the first s->hashed bytes, all
 * of them unless s->hash_over), close fds. */
void stream_finish(struct out_stream *s, char sha[65]);
