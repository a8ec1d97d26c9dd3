/* Snapshots of a session's workspace (session-snap.c; docs/api.md,
 * "Snapshots"): a copy of the workspace's overlay upper layer (its changes
 * over the lower tree, upper-copy.h) taken with the session's processes
 * frozen, kept in the session's own directory of the server's state
 * (<state>/sessions/<id>/snapshots/<sid>, mode 0700), bounded by the
 * policy's limits.snapshots, removed with the session. */
#pragma once
#include "json.h"
#include "session-worker.h"

/* limits.snapshots where the policy sets none. */
#define SX_SNAP_BUDGET_DEFAULT (1ULL << 30)
/* A snapshot copies at most this many entries (CORDON_SNAPSHOT_MAX_ENTRIES
 * lowers it) and this many directory levels. */
#define SX_SNAP_MAX_ENTRIES 200000
#define SX_SNAP_MAX_DEPTH 256

/* "snapshot": a new snapshot; its {"snapshot", "bytes", "files",
 * "entries", "created"}, or 409 (no overlay), 429 (the budget), 413 (past
 * the bounds), 503 (the processes did not freeze). */
void sx_do_snapshot(struct sx *s, int reply);
/* "snapshots": {"snapshots": [...], "bytes", "budget"}. */
void sx_do_snapshots(struct sx *s, int reply);
/* "snapshot_delete" {"snapshot": sid}. */
void sx_do_snapshot_delete(struct sx *s, const jnode *req, int reply);
/* "snapshot_changeset" {"snapshot": sid}: a sealed change set made from
 * the snapshot (changeset_derive: the session's change set's layers, the
 * workspace's holding the snapshot), kept for `cordon apply`: {"dir",
 * "snapshot", "hosts", "bytes", "files", "entries"}; 404, 409 (no change
 * set), 429 (its bytes past limits.snapshots, with those made before). */
void sx_do_snapshot_changeset(struct sx *s, const jnode *req, int reply);
/* The session is over: every snapshot removed, with their directory. */
void sx_snaps_end(struct sx *s);
/* The layer of the session's change set that its workspace is (the one a
 * snapshot copies), or -1 (no overlay workspace). */
int sx_workspace_layer(const struct sx *s);
/* The session's snapshot budget (limits.snapshots, else the default),
 * which bounds a restore's staging too. */
uint64_t sx_snap_budget(const struct sx *s);
