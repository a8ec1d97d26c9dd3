/* Walking a change set's upper directories (cs-walk.c; each layer's, beside
 * its host directory): the helpers every walk uses, selecting and ignoring
 * (changeset_apply_opts: select, no_ignore), the plan before an apply,
 * listing the changes (changeset_list), and leaving out what the default
 * apply leaves out (changeset_drop_ignored). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "changeset.h"
#include "cs-internal.h"
#include "error.h"
#include "strv.h"

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

/* Every change, as the report's outputs: created and modified files and
 * links (regular files hashed), deleted entries, paths relative to base (or
 * absolute). What an apply would not apply goes to held (refused,
 * protected; conflicts are not looked for). Walks only the upper
 * directories: O(changes). steps (may be NULL): the synced steps its
 * apply takes (CHANGESET_MAX_APPLY_STEPS). */
int changeset_list(const struct changeset *cs, const char *base, struct file_list *out,
		   const struct changeset_held *held, size_t *steps, cordon_error *err);

/* One walk over each layer's upper directory (and the host's
 * beside it); a visit returns 1 to descend into a directory, 0 not to, -1
 * on error. */
struct walk {
	const struct changeset *cs;
	size_t layer;
	char rel[REL_MAX]; /* the current entry, relative to the layer */
	size_t entries;
	size_t steps; /* list: the apply's synced steps (changeset_list) */
	size_t files; /* list: files and links (synced in groups) */
	/* list */
	const char *base;
	struct file_list *out;
	const struct changeset_held *held; /* what is not applied (each may be NULL) */
	char held_rel[REL_MAX]; /* the last entry listed as protected: not its entries again */
	/* conflicts */
	strv *conflicts;
	bool rmdir_after; /* apply: an upper directory goes once emptied */
	/* apply: called with a directory's U and H when its entries are done */
	int (*level_end)(struct walk *w, int U, int H, cordon_error *err);
	/* apply: what is selected and ignored (changeset_apply_opts) */
	const struct changeset_apply_opts *sel;
	bool planning;      /* the walk before the apply (cs_plan_visit) */
	size_t *hits;       /* planning: per pattern, entries it selected */
	size_t *ign_hits;   /* planning: per pattern, ignored entries it selected */
	strv needed;        /* "LAYER/REL" of each directory on the way to a
			     * selected entry (sorted once planned) */
	size_t needed_layer;
	char needed_last[REL_MAX]; /* the last directory noted (its ancestors were) */
	size_t left;        /* apply: entries not selected, kept */
	bool planned;       /* the plan walk ran: needed is complete */
	size_t dropped;     /* changeset_drop_ignored: entries removed */
	/* list: a directory past CHANGESET_MAX_DEPTH is left out and the walk
	 * goes on (deep_cut set: the list is truncated), rather than ending
	 * the walk there and losing every entry after it. */
	bool skip_deep, deep_cut;
};

typedef int (*visit_fn)(struct walk *w, int U, int H, const char *name, const struct stat *st, cordon_error *err);

enum sel_class { SEL_TAKE, SEL_IGNORED, SEL_LEFT, SEL_PATH };

bool cs_is_whiteout(const struct stat *st);
bool cs_is_opaque(int dfd);
const char *cs_special_name(mode_t m);
int cs_push_name(struct walk *w, const char *name, size_t *saved, cordon_error *err);
int cs_host_path(const struct walk *w, char *out, size_t sz);
int cs_add_held(strv *s, const char *path, const char *why, cordon_error *err);
strv *cs_held_list(const struct walk *w, int which);
int cs_held_dir(int U, const char *name, const struct stat *st, bool host, const struct stat *hs);
bool cs_changed_since(const struct walk *w, const struct stat *st, bool host, const struct stat *hs);
const char *cs_display_path(const struct walk *w, char *out, size_t sz);
enum sel_class cs_classify(struct walk *w, int U, const char *name, const struct stat *st, bool host,
			       const struct stat *hs);
int cs_cmp_str(const void *a, const void *b);
bool cs_is_needed(const struct walk *w);
int cs_plan_visit(struct walk *w, int U, int H, const char *name, const struct stat *st, cordon_error *err);
int cs_walk_dir(struct walk *w, int U, int H, int depth, visit_fn fn, cordon_error *err);
int cs_for_each_layer(struct walk *w, visit_fn fn, cordon_error *err);
