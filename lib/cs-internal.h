/* What the pieces of the change set share (internal; the public header of
 * the set is changeset.h, and each piece has a header of its own name):
 * the length of a relative path, and what changeset.c (its directory and
 * control files: create, open, remove) gives the other pieces: cs-io.c
 * (file I/O), cs-seal.c (the key, the registry and the seal), cs-walk.c
 * (walking the upper layers: select, ignore, list), cs-apply.c (the
 * journalled apply), cs-rollback.c (the journal read back and undone). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "changeset.h"
#include "error.h"
#include "strv.h"

#define REL_MAX 16384

/* lib/changeset.c: what is always held, removal */
bool cs_always_held(const struct changeset *cs, size_t layer, const char *rel, int dir, char *why, size_t whysz);
int cs_rm_at(int dfd, const char *name, int depth);
int cs_rm_layer(struct changeset *cs, const char *name);
int cs_remove_dir(struct changeset *cs, cordon_error *err);
