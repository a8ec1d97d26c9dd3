/* Restore of a session's workspace to one of its snapshots
 * (session-restore.c; docs/api.md, "Restore"). */
#pragma once
#include "json.h"
#include "session-worker.h"

/* "restore" {"snapshot": sid}: every running exec ended (its result's
 * status "restored"), then the workspace's view rebuilt as the snapshot's
 * (sx_restore_step once none runs). 404, 409 (paused, no overlay, a
 * restore or a files call under way). */
void sx_do_restore(struct sx *s, const jnode *req, int reply);
/* An exec ended: the restore waiting for it goes on once none runs. */
void sx_restore_step(struct sx *s);
/* The session ends: a restore waiting is answered 410. */
void sx_restore_end(struct sx *s);
