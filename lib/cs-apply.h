/* Applying a change set to the host (cs-apply.c): the journal, each record
 * on disk before its step; the backups; one entry applied. The walk is
 * cs-walk.c's; the undo is cs-rollback.c's. */
#pragma once
#include "changeset.h"
#include "error.h"

/* Apply a change set to the host: per entry atomic (renamed into place), journalled
 * (each record on disk before its step), then removed. Without force or
 * hold_conflicts, a host entry changed since the run started refuses the
 * whole apply, naming it. An interrupted apply is completed by calling this
 * again (without the conflict check) or rolled back by changeset_discard.
 * What is held back (held) stays in the change set; setuid and setgid bits
 * are dropped. Returns 0, 1 where the run changed nothing (every upper
 * layer empty: the change set is removed, nothing journalled or synced),
 * or -1 with err set (the change set is kept). */
int changeset_apply(struct changeset *cs, const struct changeset_apply_opts *o, const struct changeset_held *held,
		    cordon_error *err);

/* Did the run change nothing (every upper layer empty, no apply under
 * way)? One open and a getdents or two per layer. */
bool changeset_unchanged(const struct changeset *cs);
