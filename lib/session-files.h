/* The session's files API (session-files.c): read, write, delete and list
 * below the workspace (done by the agent, MSG_SX_FILE), each answered to
 * its client and noted in the session's evidence. */
#pragma once
#include "json.h"
#include "session-worker.h"

void sx_do_file(struct sx *s, const jnode *req, int reply, int body);
void sx_file_result(struct sx *s, int k, int err, int fd);
