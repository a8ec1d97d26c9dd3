/* Ended sessions of `cordon serve` (docs/api.md, "Ended sessions"): their
 * directories (STATE/sessions/ID: report.json, owner, work/) are kept, the
 * newest --keep-sessions of them, so that a client finds the report of a
 * session that ended without it (a timeout, a lease that ran out); older
 * ones are removed as hostile trees (serve_rm_tree). */
#pragma once
#include <stdbool.h>
#include <sys/types.h>
#include "json.h"
#include "strv.h"

/* serve-run.c's removal of a tree a run made, under parent (no link
 * followed, no mount crossed). */
void serve_rm_tree(int parent, const char *name);

/* At start: the ended sessions a previous server left, oldest first, with
 * the retention applied. */
/* A previous server's session whose worker still ends (it holds its
 * session's directory LOCK_EX until its report is written) is waited
 * for, at most wait_ns in all, before it is judged. */
void kept_sessions_init(const char *state_dir, int keep, uint64_t wait_ns);
/* A session whose worker has exited: kept (if it left a report), the
 * oldest beyond the retention let go. Quick (no removal): callable under
 * the server's lock, so that the session is never neither running nor
 * kept. */
void kept_session_add(const char *id);
/* Remove what kept_session_add let go (outside any lock). */
void kept_sessions_trim(void);
/* The owner file of a session's directory: who may see it once ended. */
void kept_owner_write(const char *id, uid_t uid);
/* Is id an ended session that is kept, and uid's (or uid root)? */
bool kept_session_visible(const char *id, uid_t uid);
/* Its report (at most 64 MiB): 0, or -1 with errno. */
int kept_session_report(const char *id, buf *out);
/* The kept sessions uid may see, as list entries
 * {"id", "state": "ended"} into w (an open array). */
void kept_sessions_list(jwriter *w, uid_t uid);
