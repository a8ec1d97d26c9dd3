/* Protected paths: control files inside a writable path that the host runs
 * or trusts later, outside any boundary (git hooks and config, editor tasks,
 * shell rc files, package-manager and agent configuration). A run may not
 * write them unless the policy unprotects them.
 *
 * The list is names relative to every writable path: cordon's defaults
 * (protect_defaults), plus filesystem.protect / --protect, minus
 * filesystem.unprotect / --unprotect (a name unprotects itself and every
 * entry below it). The boundary model (model.c) turns each name into one
 * entry per writable path (MK_PROTECT), plus a pin (MK_PIN) for each of its
 * parent directories that exists inside the writable path:
 *  - present at the start: a read-only bind of the view's own tree over it
 *    (recursive), so writes fail with EROFS, and unlink or rename over it
 *    fail with EBUSY (it is a mount point);
 *  - absent: nothing is mounted (nothing is created on the host); the
 *    observer refuses every call that would create or write it (EACCES) and
 *    reports it, and after the run the supervisor looks again (openat2,
 *    no symlinks) and reports any that exists now;
 *  - a pin is a writable bind of a parent directory onto itself: a mount
 *    point cannot be renamed or removed, so `mv .git elsewhere` followed by
 *    a new `.git/config` fails with EBUSY. */
#pragma once
#include <stdbool.h>
#include "error.h"
#include "policy.h"
#include "report.h"
#include "strv.h"

/* cordon's default list (NULL-terminated): README, "Protected paths". */
extern const char *const protect_defaults[];

/* A name of filesystem.protect / unprotect: relative, normalised, without
 * "." or ".." components; a trailing '/' is dropped. Writes the normal form
 * to out. */
int protect_check_name(const char *name, char *out, size_t outsz, cordon_error *err);

/* The effective list for p: defaults and p->protect, minus every name equal
 * to or below one of p->unprotect. out is filled (caller frees); src[i]
 * (if not NULL, room for out->n) says where each came from. */
int protect_effective(const cordon_policy *p, strv *out, enum source **src, cordon_error *err);

struct run_plan;
/* After the run: every protected path that was absent at the start and
 * exists now (or is a link now) is reported as a "file" denial. Opened from
 * / without following any link; never acts on what it finds. Returns the
 * number found. */
int protect_check_after(const struct run_plan *plan, struct run_report *rep);
