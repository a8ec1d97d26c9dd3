/* A session exec's life (session-exec.c): started on request, its buffered
 * output fetched, and its result event written once it ended and its
 * output was read. */
#pragma once
#include "json.h"
#include "session-worker.h"

void sx_finalize(struct sx *s, struct sx_exec *x);
struct sx_exec *sx_find_exec(struct sx *s, const char *id);
int sx_parse_signal(const char *name);
void sx_do_exec(struct sx *s, const jnode *req, int reply, int stdin_fd);
void sx_do_output(struct sx *s, const jnode *req, int reply);
