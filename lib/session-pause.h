/* Pause and resume of a session (session-pause.c; docs/api.md, "Pause and
 * resume"): the cgroup freezer, the session's stopped clocks, the pauses
 * in its report. */
#pragma once
#include "strv.h"
#include "session-worker.h"

/* "pause": every process frozen, the wall, idle and exec timers stopped
 * with their time left kept. Idempotent. 409 where the session has no
 * freezer or its wall time is already up. */
void sx_do_pause(struct sx *s, int reply);
/* "resume": thawed, the timers armed with the time they had left.
 * Idempotent. */
void sx_do_resume(struct sx *s, int reply);
/* The session ends while paused (DELETE, the server gone, a kill):
 * thawed first, the pause closed. Nothing if it is not paused. */
void sx_pause_end(struct sx *s);
/* The report's part: "paused": [{"start", "end"}] (seconds since the
 * session was handed to its client), "paused_seconds", and
 * "paused_omitted" past SX_PAUSES_MAX; each followed by ", ". */
void sx_pauses_json(const struct sx *s, buf *b);
