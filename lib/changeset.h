/* A run's change set: what an overlay-mode run wrote, kept apart from the
 * host until it is applied (README, "Workspace modes").
 *
 * On disk, DIR = <parent of the workspace>/.cordon-changes/<id> (root's;
 * another user's: .cordon-changes-UID, so that users sharing a parent such
 * as /tmp each have theirs), mode 0700, owned by the invoking user:
 *   meta              "cordon-changes 1", started (CLOCK_REALTIME ns), owner
 *                     uid and gid, the run's host uid and gid (owner of each
 *                     upper/: checked by changeset_open), number of layers:
 *                     written by cordon
 *   protect           the run's protected names (protect.h), each ended by
 *                     a NUL: what an apply holds back, later ones too
 *   <i>/host          layer i's host directory (raw bytes, no newline)
 *   <i>/upper <i>/work   overlayfs upper and work directories of layer i
 *   <i>/backup/<n>    host entries an apply replaced or deleted (rollback)
 *   journal           an apply in progress: what it did so far
 *   seal              HMAC-SHA-256 (hex), under the user's change-set key
 *                     (changeset_keydir), of the set's own canonical path,
 *                     meta, host paths and protected names: a run that can
 *                     write a directory can lay out a change set there that
 *                     names /etc; changeset_open opens only sealed ones
 * Everything in an upper directory was written by the run and is hostile:
 * it is opened beneath its directory's fd with openat2 (RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV), fstat'd,
 * never followed, and the walks are bounded (entries, depth). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cordon.h"
#include "protect.h" /* CHANGESET_DIRNAME, changeset_dirname (the names) */
#include "snapshot.h"
#include "strv.h"

#define CHANGESET_MAX_LAYERS 64
#define CHANGESET_MAX_ENTRIES 200000
#define CHANGESET_MAX_DEPTH 256
/* The apply at the end of a run syncs its journal once per directory,
 * deletion and group of files (steps, from changeset_list): a change set of
 * more is kept, not applied, so that what the supervisor spends after a run
 * is bounded (a `cordon apply` of it is the user's to start). */
#define CHANGESET_MAX_APPLY_STEPS 1000

struct changeset {
	char dir[4096];
	int dirfd; /* DIR, O_DIRECTORY */
	size_t nlayers;
	char *host[CHANGESET_MAX_LAYERS]; /* each layer's host directory */
	int64_t started_ns;               /* CLOCK_REALTIME, when the run started (changeset_begin) */
	int64_t made_ns;                  /* stamp_now_ns() at changeset_create */
	unsigned char key[32];            /* the sealing key, from create to begin (wiped then) */
	bool key_held;
	uid_t uid;                        /* the owner applied files get */
	gid_t gid;
	uid_t run_uid;                    /* the run's host identity: it wrote upper/ and work/ */
	gid_t run_gid;
	strv protect;                     /* the run's protected names (protect.h) */
	char keydir[4096];                /* changeset_keydir() when opened or made ("" none) */
	bool no_key;                      /* changeset_create failed: no change-set key to seal it with */
	bool squatted;                    /* changeset_create failed: BASE's CHANGESET_DIRNAME[-UID]
					   * is someone else's (a file, a link, another owner) */
	/* A listing of a session's snapshot (cordon changes --snapshot-upper):
	 * the layer only_layer alone, its upper directory upper_at instead of
	 * its own ("" none: every layer, each its own). */
	size_t only_layer;
	char upper_at[4096];
};

/* What a listing or an apply found that it does not apply; each may be NULL.
 *  refused    "PATH: why", never applied: FIFOs, sockets, device nodes
 *  protected  PATH: at or below a protected name, or above one and not a
 *             plain directory (a file, link, deletion or replaced directory
 *             .git would take .git/config along); applied only with
 *             include_protected
 *  conflicts  PATH: a host entry it would replace or delete changed since
 *             the run started (hold_conflicts); applied with force */
struct changeset_held {
	strv *refused;
	strv *protected;
	strv *conflicts;
};

/* What an apply (or a listing) found that it will not apply: device nodes,
 * FIFOs, sockets; and, for `cordon apply`, host files changed since the run
 * started. One line each, naming the path. */
struct changeset_apply_opts {
	bool force;        /* apply over host files changed since the run started */
	bool hold_conflicts; /* not force: hold each such entry back (conflicts)
			      * instead of refusing the whole apply */
	bool include_protected; /* apply entries at protected paths too */
	long crash_after;  /* test hook: SIGKILL itself after this many entries (0 = never; < 0: once
			    * applied, before the set is removed) */
	/* Only the entries at or below these paths or globs (changeset_selects;
	 * relative to layer 0's host directory, or absolute); none: all. A
	 * pattern that selects nothing refuses the apply (EINVAL, naming it),
	 * except when an interrupted apply is completed. What is not selected
	 * stays in the change set. */
	const char *const *select;
	size_t nselect;
	/* Apply what the default ignore list names (changeset_ignored) too;
	 * without it, such entries are neither applied nor conflict-checked,
	 * and go with the change set when nothing else is left in it. */
	bool no_ignore;
	/* Each entry applied (may be NULL): the change as changeset_list names
	 * it, and the path as it lists it (relative to layer 0's host directory,
	 * or absolute); a new directory is not an entry. */
	void (*applied)(void *ctx, enum change c, const char *path);
	void *applied_ctx;
	/* Out (may be NULL): entries not applied because they were not
	 * selected (left in the change set) and because they were ignored. */
	size_t *left;
	size_t *ignored;
};

/**
 * changeset_create() - a new, empty change set for a run.
 * @cs:    filled; release with changeset_close.
 * @base:  directory that receives CHANGESET_DIRNAME (the workspace's parent).
 * @hosts: the host directory of each layer (canonical), @n of them.
 * @uid, @gid:         owner of the change set and of the files it applies.
 * @run_uid, @run_gid: who writes the upper and work directories (the
 *                     run's host identity): they are handed to it.
 * @protect: the run's protected names (protect_effective), recorded in it.
 * Returns 0 or -1 with err set.
 */
int changeset_create(struct changeset *cs, const char *base, const char *const *hosts, size_t n, uid_t uid,
		     gid_t gid, uid_t run_uid, gid_t run_gid, const strv *protect, cordon_error *err);
/* The run starts: its start stamp (stamp_floor_after_ns of the moment the
 * set was made: any tick's wait left is taken here, not at create), its
 * meta and its seal written. Call it before the run's command may start;
 * until then the change set is not a change set changeset_open takes.
 * Returns 0 or -1 with err set. */
int changeset_begin(struct changeset *cs, cordon_error *err);
/* A new change set beside src (in the same CHANGESET_DIRNAME[-UID]
 * directory) like it: its layers' host directories, owner, run identity,
 * protected names and start (an apply judges conflicts from the same
 * point), sealed; each layer's upper directory empty but layer's, a copy
 * (upper_copy, bounded by lim) of the directory upper: a session's
 * snapshot kept to apply (issue 38). pending: its seal is kept under the
 * name "pending" (changeset_open refuses it, EBUSY, saying why) until
 * changeset_restart of src seals it: a stacked fork's, whose host tree
 * holds the fork's start only from its end. On failure nothing of it is
 * left. */
struct ucopy_limits;
struct ucopy_stat;
int changeset_derive(struct changeset *cs, const struct changeset *src, size_t layer, int upper, bool pending,
		     const struct ucopy_limits *lim, struct ucopy_stat *st, cordon_error *err);
/* The set starts anew at started (a stacked fork's workspace made whole at
 * its end, sup-finish.c: what the copy wrote is no change since the start
 * for an apply to hold back), its meta and seal written again; so do the
 * sets derived from it pending (changeset_derive), sealed then. 0, or -1
 * with err set (the first failure; the others are still tried). */
int changeset_restart(struct changeset *cs, int64_t started, cordon_error *err);
/* The sets derived from cs pending that will never be sealed (its stack
 * could not be made whole at its end): marked "orphaned" instead, which
 * changeset_open names. 0, or -1 and err. */
int changeset_orphan(struct changeset *cs, cordon_error *err);
/* Open an existing change set (its meta, layers and protected names): DIR
 * must be a directory of the caller's own (root too: its meta and host files
 * say where the apply writes), not writable by others, and sealed by this
 * user's key where it lies (seal): one a run laid out, or one moved or
 * copied, is refused (EPERM). */
int changeset_open(struct changeset *cs, const char *dir, cordon_error *err);
void changeset_close(struct changeset *cs);
/* Layer i's "upper" or "work" directory, O_PATH; -1 and err on failure. */
int changeset_layer_fd(const struct changeset *cs, size_t i, const char *which, cordon_error *err);

/* Was an apply of it interrupted (a journal is there)? */
bool changeset_interrupted(const struct changeset *cs);

/* Protected control files (issue 15): whether the entry at rel (relative to
 * layer's host directory) is held back from an apply. plain_dir: the
 * entry is a directory that replaces nothing on the host (new, or merged
 * into a host directory); only such an entry may be applied above a
 * protected name. why gets the name. */
bool changeset_held_back(const struct changeset *cs, size_t layer, const char *rel, int dir, char *why, size_t whysz);
