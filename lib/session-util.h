/* The session worker's small helpers (session-util.c), below every other
 * session file: paths relative to the session's cwd, replies on a client's
 * socket, ids, the idle timer, the redaction filter of the JSON writer. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "json.h"
#include "session-worker.h"

/* A relative path (files API, an exec's cwd) is the session's cwd's:
 * "." is the cwd itself. False if it does not fit. */
bool sx_abs(const struct sx *s, const char *p, char *out, size_t sz);
void sx_paths_json(const struct sx *s, jwriter *w);
void sx_reply_json(int sock, const char *json);
void sx_close_fd(int *fd);
void sx_new_id(char *out, size_t sz, const char *prefix);
void sx_arm_idle(struct sx *s);
void sx_reply_error(int sock, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
char *sx_redact_cb(void *ctx, const char *str);
/* The session's lower tree, as its run's overlay has it below the upper
 * layer: the workspace's directory, or (a stacked fork) a detached,
 * read-only overlay of it over its layers (layers_merged; mnt, if not
 * NULL: its mount's fd, else -1). A directory fd, or -1 and err. */
int sx_lower_open(const struct sx *s, int *mnt, cordon_error *err);
/* Is the run's workspace the session's own directory (s->ws), which a
 * restore rewrites and a fork starts from? Not a host tree (a cwd in a
 * write path) nor an image's: false, with why (a 409's message). */
bool sx_ws_own(const struct sx *s, char *why, size_t wsz);
