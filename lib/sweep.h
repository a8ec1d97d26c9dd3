/* The second layer against privilege bits, after every run: everything the
 * run leaves is hostile. Seccomp refuses the calls that set S_ISUID/S_ISGID
 * (seccomp-policy.h); this sweep clears any such bit, and any
 * security.capability attribute, that got onto a file the run created or
 * changed in a writable path, and puts back the mode and owner of each
 * writable root (the workspace directory itself) as they were before the
 * run. Every file is opened beneath a pinned root with openat2
 * (RESOLVE_BENEATH|NO_SYMLINKS|NO_MAGICLINKS|NO_XDEV, O_PATH|O_NOFOLLOW) and
 * fstat'ed; a symlink is never followed. What was done is listed in the
 * report ("privilege_cleared", "root_restored"). */
#pragma once
#include <stdbool.h>
#include <sys/stat.h>
#include "snapshot.h"

/* One thing the sweep changed back. */
struct fix {
	char *path;     /* relative to the workspace if below it, else absolute */
	char what[128]; /* e.g. "mode 06755 -> 0755", "security.capability removed" */
};
struct fix_list {
	struct fix *f;
	size_t n;
};
void fix_list_free(struct fix_list *l);

struct sweep_root {
	char *path;
	int fd; /* O_PATH, opened before the run */
	struct stat st;
};
struct sweep {
	struct sweep_root *r;
	size_t n;
};

/* Before the run: pin each writable root and record its mode and owner. A
 * root that cannot be opened is left out (the run cannot bind it either). */
int sweep_pin(struct sweep *sw, const char *const *roots, size_t n, cordon_error *err);
/* After the run, when no process of it is left: put each root's mode and
 * owner back (into *restored), then clear privilege bits and file
 * capabilities on the changed files (into *cleared). With truncated set (the
 * change list is incomplete) every file below the roots is checked. base:
 * the workspace, for relative names. */
void sweep_run(struct sweep *sw, const struct file_list *changed, bool truncated, const char *base,
	       struct fix_list *cleared, struct fix_list *restored);
void sweep_free(struct sweep *sw);
