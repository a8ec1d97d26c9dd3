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

/* The directory of the key that seals this user's change sets:
 * $CORDON_STATE_DIR if set (absolute), else /var/lib/cordon for root, else
 * $XDG_STATE_HOME/cordon or ~/.local/state/cordon. Made 0700 on first use;
 * the key (changeset.key, 32 random bytes, 0600) must be the user's own and
 * nobody else's. Masked in every run's view (model.c). -1: no such place. */
int changeset_keydir(char *out, size_t sz);
/* The directories of change sets this user's cordon made (the list beside
 * the key), appended to out; 0 (nothing added) where there is no key
 * directory. -1 and err where there is one that cannot be used (a run may
 * have changed the mode of a directory on its way, to leave the kept change
 * sets listed there unmasked): no run should start then. */
int changeset_registered(strv *out, cordon_error *err);
/* Can the key be kept from a run with these paths (canonical; writable[i]
 * for a writable one)? Not where a symbolic link on the way to the key's
 * directory lies in a writable path (the run could point it at a key of its
 * own), nor where the way cannot be walked (a directory that cannot be
 * searched: a run may have changed its mode) and the run would see there:
 * -1 and err saying which. */
int changeset_key_guard(const char *const *paths, const bool *writable, size_t n, cordon_error *err);
/* Make the user's change-set key if there is none (checked either way). */
int changeset_key_ensure(cordon_error *err);
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
	int64_t started_ns;               /* CLOCK_REALTIME, when the run started (stamp_floor_ns) */
	uid_t uid;                        /* the owner applied files get */
	gid_t gid;
	uid_t run_uid;                    /* the run's host identity: it wrote upper/ and work/ */
	gid_t run_gid;
	strv protect;                     /* the run's protected names (protect.h) */
	char keydir[4096];                /* changeset_keydir() when opened or made ("" none) */
	bool no_key;                      /* changeset_create failed: no change-set key to seal it with */
	bool squatted;                    /* changeset_create failed: BASE's CHANGESET_DIRNAME[-UID]
					   * is someone else's (a file, a link, another owner) */
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
	long crash_after;  /* test hook: SIGKILL itself after this many entries (0 = never) */
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

/* The default ignore list: caches a run regenerates and git's index (the
 * host's git refreshes its own: a `git status` on the host after the run
 * must not make the apply refuse; changeset_ignore_kind). NULL-terminated; each pattern is an
 * fnmatch(3) glob (FNM_PATHNAME) of one or more components, matched
 * against the last components of an entry's path at any depth, and
 * everything below an entry it matches is ignored with it. */
extern const char *const changeset_ignore_defaults[];
/* Does the default ignore list name path (relative), or a directory above
 * it? */
bool changeset_ignored(const char *path);
/* 0: not named; 1: named, never applied (caches); 2: .git/index, applied
 * only where the host's has not changed since the run started (the host's
 * git refreshes its own; a changed one is no conflict, the host's stays). */
int changeset_ignore_kind(const char *path);
/* Remove from the upper layers what a default apply leaves out (the
 * ignore list as classify judges it: caches, and .git/index where the
 * host's changed since the run started), so that the task check, which runs
 * on the change set before the apply, sees what the host gets (F4). Each
 * entry goes whole (a directory with all below it, a whiteout: the host's
 * entry shows again); hostile tree: fd-based, never followed, bounded
 * depth and entries. `--no-ignore` cannot bring them back afterwards.
 * dropped (may be NULL): how many were removed. 0, or -1 with err naming
 * the entry (some may be removed already). */
int changeset_drop_ignored(struct changeset *cs, size_t *dropped, cordon_error *err);
/* Does pattern (a path or fnmatch(3) glob with FNM_PATHNAME, relative; "*"
 * never crosses a "/", "**" is no more than "*") select path (relative, as
 * changeset_list names it)? 1: the path or a directory above it matches (it
 * is selected); 2: not selected, but a match may lie below it (path could be
 * a directory on the way); 0: neither. */
int changeset_selects(const char *pattern, const char *path);
/* A selection pattern as given (a path relative to the workspace, "./"
 * and trailing "/" allowed, or absolute below the workspace root) made the
 * form changeset_selects takes, into out; -1 and err naming it where it is
 * empty, holds a "." or ".." component, or is absolute elsewhere. */
int changeset_select_normalize(const struct changeset *cs, const char *pattern, char *out, size_t sz,
			       cordon_error *err);

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
/* Open an existing change set (its meta, layers and protected names): DIR
 * must be a directory of the caller's own (root too: its meta and host files
 * say where the apply writes), not writable by others, and sealed by this
 * user's key where it lies (seal): one a run laid out, or one moved or
 * copied, is refused (EPERM). */
int changeset_open(struct changeset *cs, const char *dir, cordon_error *err);
void changeset_close(struct changeset *cs);
/* Layer i's "upper" or "work" directory, O_PATH; -1 and err on failure. */
int changeset_layer_fd(const struct changeset *cs, size_t i, const char *which, cordon_error *err);

/* Every change, as the report's outputs: created and modified files and
 * links (regular files hashed), deleted entries, paths relative to base (or
 * absolute). What an apply would not apply goes to held (refused,
 * protected; conflicts are not looked for). Walks only the upper
 * directories: O(changes). steps (may be NULL): the synced steps its
 * apply takes (CHANGESET_MAX_APPLY_STEPS). */
int changeset_list(const struct changeset *cs, const char *base, struct file_list *out,
		   const struct changeset_held *held, size_t *steps, cordon_error *err);
/* Apply it to the host: per entry atomic (renamed into place), journalled
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
/* Remove it; an interrupted apply is first rolled back from the journal. */
int changeset_discard(struct changeset *cs, cordon_error *err);
/* Was an apply of it interrupted (a journal is there)? */
/* One journal record (cs-rollback.c: the format). */
struct changeset_jrec {
	char kind; /* 'C', 'M' or 'B' */
	size_t layer;
	long long arg;
	char *rel; /* relative; no empty, "." or ".." component */
};

/**
 * changeset_parse_journal() - the records of a journal, strictly framed.
 * @text, @len: the journal's bytes (hostile: the names are the run's).
 * @nlayers:    the change set's layer count; a record of another is refused.
 * @where:      the journal's name, for the error.
 * @out, @n:    the records, in order; release with changeset_jrecs_free.
 * A record cut by the end of text (a crash while writing it) is dropped.
 * Returns 0, or -1 (EBADMSG naming where and the offset; *out NULL).
 */
int changeset_parse_journal(const char *text, size_t len, size_t nlayers, const char *where,
			    struct changeset_jrec **out, size_t *n, cordon_error *err);
void changeset_jrecs_free(struct changeset_jrec *j, size_t n);

bool changeset_interrupted(const struct changeset *cs);

/* Protected control files (issue 15): whether the entry at rel (relative to
 * layer's host directory) is held back from an apply. plain_dir: the
 * entry is a directory that replaces nothing on the host (new, or merged
 * into a host directory); only such an entry may be applied above a
 * protected name. why gets the name. */
bool changeset_held_back(const struct changeset *cs, size_t layer, const char *rel, int dir, char *why, size_t whysz);
