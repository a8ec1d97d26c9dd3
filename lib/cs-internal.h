/* What the pieces of the change set share (internal; the public header of
 * the set is changeset.h): lib/changeset.c (its directory and control
 * files: create, open, remove), lib/cs-seal.c (the key, the registry and
 * the seal), lib/cs-walk.c (walking the upper layers: select, ignore,
 * list), lib/cs-apply.c (the journalled apply), lib/cs-rollback.c (the
 * journal read back and undone). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "changeset.h"
#include "error.h"
#include "strv.h"

#define REL_MAX 16384

/* lib/changeset.c: control files, removal */
int cs_write_all(int fd, const void *p, size_t n);
int cs_write_file_at(int dfd, const char *name, const void *data, size_t n, cordon_error *err);
bool cs_control_file_ok(const struct stat *st);
ssize_t cs_read_file_at(int dfd, const char *name, char *out, size_t max);
int cs_dirfd_path(int fd, char *out, size_t sz);
bool cs_always_held(const struct changeset *cs, size_t layer, const char *rel, int dir, char *why, size_t whysz);
int cs_rm_at(int dfd, const char *name, int depth);
int cs_rm_layer(struct changeset *cs, const char *name);
int cs_remove_dir(struct changeset *cs, cordon_error *err);

/* lib/cs-seal.c */
void cs_registry_add(const char *top);
int cs_write_seal(const struct changeset *cs, cordon_error *err);
int cs_check_seal(const struct changeset *cs, cordon_error *err);

/* lib/cs-walk.c: one walk over each layer's upper directory (and the host's
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
