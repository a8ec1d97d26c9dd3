/* The session's state and report (session-report.c): GET's answer, the
 * session report's JSON, and publishing it at the end. */
#pragma once
#include "session-worker.h"

void sx_do_get(struct sx *s, int reply);
void sx_publish(struct sx *s);
void sx_h_report(void *ctx);
