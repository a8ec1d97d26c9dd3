/* One captured output stream of the command: read from the pipe, count, hash,
 * forward to cordon's own stdout/stderr as it arrives, with backpressure: while
 * a chunk is waiting for the destination, the pipe is not read (the command
 * blocks on a full pipe rather than cordon buffering without bound). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "hash.h"
#include "strv.h"

struct out_stream {
	int in_fd;        /* read end of the command's pipe, or -1 at EOF */
	int out_fd;       /* our own dup of stdout/stderr */
	bool out_pollable;
	bool out_broken;  /* destination gone (EPIPE): keep counting, stop writing */
	uint64_t bytes;   /* bytes captured (as forwarded) */
	sha256_ctx *hash;
	buf pending;      /* captured, not yet forwarded */
	size_t pending_off;
};

int stream_init(struct out_stream *s, int in_fd, int dest_fd);
/* Read what is available, at most budget bytes (the rest of the output
 * limit). Returns bytes taken, 0 at EOF (in_fd closed and set to -1), or -1
 * on error. If more than budget was available, *over is set. */
ssize_t stream_read(struct out_stream *s, uint64_t budget, bool *over);
/* Try to forward pending bytes. Returns 1 if all flushed, 0 if the
 * destination would block (wait for EPOLLOUT), -1 on error. */
int stream_flush(struct out_stream *s);
bool stream_has_pending(const struct out_stream *s);
/* Finish: hash hex, close fds. */
void stream_finish(struct out_stream *s, char sha[65]);
