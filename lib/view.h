/* The run's filesystem view as the supervisor models it, to classify the
 * paths that the observer sees (pure: no syscalls but at construction). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "run.h"

enum view_class {
	VIEW_OUTSIDE, /* not in the view: the host's file is hidden */
	VIEW_ROOT,    /* a directory of the read-only root (ancestor of a mount) */
	VIEW_RO,      /* inside a read-only bind */
	VIEW_RW,      /* inside a writable bind or tmpfs */
	VIEW_PROC,    /* /proc: the kernel decides */
	VIEW_DEV,     /* /dev (read-only tmpfs of device nodes) */
};

struct view_entry {
	char *path;
	enum view_class cls;
};

struct view {
	struct view_entry *e;
	size_t n;
	char *links[8][2]; /* top-level symlinks of the root: "/bin" -> "/usr/bin" */
	size_t nlinks;
};

/* Build from the plan (and the host's top-level symlinks). */
int view_build(const struct run_plan *plan, struct view *v, cordon_error *err);
void view_free(struct view *v);
int view_add(struct view *v, const char *path, enum view_class cls, cordon_error *err);
/* Classify an absolute path (normalised here; top-level links resolved). The
 * resolved path is written to out. */
enum view_class view_classify(const struct view *v, const char *path, char *out, size_t outsz);

/* The observer's prediction: would the boundary deny this operation?
 *  write: the operation creates, writes, truncates, removes or renames.
 *  host_exists: whether the path exists on the host (for hidden files). */
bool view_denies(enum view_class cls, const char *resolved, bool write, bool host_exists);
