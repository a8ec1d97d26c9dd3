/* The run's filesystem view as the supervisor models it, to classify the
 * paths that the observer sees (pure: no syscalls but at construction). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "model.h"


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

/* Derive from the boundary model: every entry in effect under conds
 * (MODEL_IF_*) with a class of its own, and its top-level symlinks. */
int view_build(const struct boundary_model *m, unsigned conds, struct view *v, cordon_error *err);
/* Remove the entries of class cls at path. */
void view_drop(struct view *v, const char *path, enum view_class cls);
/* Add the model's entries that need cond (MODEL_IF_CGROUP) once it holds. */
int view_add_cond(struct view *v, const struct boundary_model *m, unsigned cond, cordon_error *err);
void view_free(struct view *v);
int view_add(struct view *v, const char *path, enum view_class cls, cordon_error *err);
/* Classify an absolute path (normalised here; top-level links resolved). The
 * resolved path is written to out. */
enum view_class view_classify(const struct view *v, const char *path, char *out, size_t outsz);

/* Does a protected path (VIEW_PROTECTED) lie strictly below resolved? A
 * directory renamed or linked there could bring one along. */
bool view_protects_below(const struct view *v, const char *resolved);

/* The observer's prediction: would the boundary deny this operation?
 *  write: the operation creates, writes, truncates, removes or renames.
 *  host_exists: whether the path exists on the host (for hidden files). */
bool view_denies(enum view_class cls, const char *resolved, bool write, bool host_exists);
