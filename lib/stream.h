/* One captured output stream of the command: read from the pipe, redact,
 * count, hash, forward to cordon's own stdout/stderr as it arrives, with
 * backpressure: while a chunk is waiting for the destination, the pipe is not
 * read (the command blocks on a full pipe rather than cordon buffering without
 * bound). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "hash.h"
#include "redact.h"
#include "strv.h"

struct out_stream {
	int in_fd;        /* read end of the command's pipe, or -1 at EOF */
	int out_fd;       /* our own dup of stdout/stderr */
	bool out_pollable;
	bool out_broken;  /* nothing to forward to: keep counting, stop writing */
	bool dest_gone;   /* the reader went away (EPIPE): the command should learn it too */
	uint64_t raw_bytes; /* captured from the command (the output limit) */
	uint64_t bytes;   /* of the redacted stream (the evidence) */
	sha256_ctx *hash;
	struct redact_stream rs;
	const char *prefix; /* put at the start of every forwarded line, or NULL */
	bool at_line_start;
	buf pending;      /* redacted, not yet forwarded */
	size_t pending_off;
};

int stream_init(struct out_stream *s, int in_fd, int dest_fd, const redactor *r, const char *prefix);
/* Read what is available, at most budget raw bytes (the rest of the output
 * limit). Returns bytes read, 0 at EOF (in_fd closed and set to -1), or -1
 * on error. If more than budget was available, *over is set. */
ssize_t stream_read(struct out_stream *s, uint64_t budget, bool *over);
/* Try to forward pending bytes. Returns 1 if all flushed, 0 if the
 * destination would block (wait for EPOLLOUT), -1 on error. */
int stream_flush(struct out_stream *s);
bool stream_has_pending(const struct out_stream *s);
/* Finish: release held bytes, hash hex, close fds. */
void stream_finish(struct out_stream *s, char sha[65]);
