/* A session exec's streams (session-stream.c): its output read, redacted,
 * hashed and queued for its client as NDJSON events (flow control: a slow
 * reader pauses the exec's pipes), and a pty exec's client connection
 * relayed both ways. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "session-worker.h"

void sx_reply_detach(struct sx *s, struct sx_exec *x);
void sx_reply_hangup(struct sx *s, struct sx_exec *x);
void sx_queue_flush(struct sx *s, struct sx_exec *x);
void sx_emit(struct sx *s, struct sx_exec *x, const char *json, size_t len, bool droppable,
		 uint64_t data_bytes);
void sx_client_drop(struct sx *s, struct sx_exec *x);
void sx_client_flush(struct sx *s, struct sx_exec *x);
void sx_client_watch(struct sx *s, struct sx_exec *x);
void sx_pty_flush(struct sx *s, struct sx_exec *x);
void sx_pty_input(struct sx *s, struct sx_exec *x, const uint8_t *p, size_t n);
void sx_client_in(struct sx *s, struct sx_exec *x);
void sx_out_bytes(struct sx *s, struct sx_exec *x, int i, const uint8_t *p, size_t n, bool eof);
void sx_signal_exec(struct sx *s, struct sx_exec *x, int sig, const char *why);
void sx_read_out(struct sx *s, struct sx_exec *x, int i);
