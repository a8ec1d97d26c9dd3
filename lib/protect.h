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
#include <stddef.h>
#include "error.h"
#include "policy.h"
#include "report.h"
#include "strv.h"

/* The directory of change sets (changeset.h) below a workspace's parent:
 * always protected, in every writable path. CHANGESET_DIRNAME for root,
 * CHANGESET_DIRNAME "-UID" for another user. The names are the policy
 * layer's (the model, the mounts, the pre-flight and the observer ask). */
#define CHANGESET_DIRNAME ".cordon-changes"
/* This process's effective user's: CHANGESET_DIRNAME, or -UID appended when
 * not root. */
void changeset_dirname(char *out, size_t sz);
/* The length of path up to and including its first component that is a
 * directory of change sets (changeset_is_dirname); 0 if none is. */
size_t changeset_dirname_in(const char *path);
/* Is name CHANGESET_DIRNAME, or it and "-UID" (anyone's change sets)? */
bool changeset_is_dirname(const char *name);

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

/* THE matcher: is rel (relative to a writable path, normalised, no
 * leading '/') protected by names (protect_effective's list)?
 *  - rel is a name or lies below one (.envrc, .vscode/tasks.json);
 *  - rel lies above a name and is not a plain directory (dir, below): a
 *    file, a link or a directory renamed there would bring the name along
 *    (a file .git is git's pointer to a directory of the run's choosing);
 *  - a name whose first component is .git applies at any depth: it
 *    matches below every directory too (sub/.git/config, a/b/.git/hooks/x,
 *    a file sub/.git), as git finds a repository in every directory;
 *  - a directory .git made where there was none (dir PROTECT_DIR_NEW), at
 *    any depth, while a .git name is protected: git on the host would take
 *    it for a repository (a nested one captures git in its directory).
 * dir: 0 for a file, a link, a rename or anything that replaces what is
 * there; PROTECT_DIR_KEPT for a directory merged into the one there or
 * removed; PROTECT_DIR_NEW for a directory made where nothing was.
 * why (may be NULL) says which name matched. */
enum { PROTECT_DIR_KEPT = 1, PROTECT_DIR_NEW = 2 };
bool protect_match(const strv *names, const char *rel, int dir, char *why, size_t whysz);

/* A home directory as a writable path (issue 27 item 3): the user's $HOME,
 * a home of the password database, or a directory that looks like one
 * (.bashrc, .profile or .config at its top). There the stance is an
 * allow-list: every dot-entry at its top is protected unless a name of
 * filesystem.unprotect lies at or above it (above a name unprotected, a
 * directory may be made or kept). dir is canonical. */
bool protect_is_home(const char *dir);

/* Appends to names the markers of the plan's home writable paths (those
 * with cordon_mount.home) and, if any, the policy's unprotected names:
 * entries that start with '/', which protect_match skips and
 * protect_match_in reads (the change set keeps them with its names). */
struct run_plan;
int protect_add_home(const struct run_plan *plan, const cordon_policy *p, strv *names, cordon_error *err);

/* The top entry name (len bytes) is protected at the top of a home: a
 * dot-entry, or bin (Debian's /etc/skel/.profile puts $HOME/bin first on
 * PATH when it exists; outside review F5 of 27.3). */
bool protect_home_top(const char *name, size_t len);

/* entry is a well-formed marker of protect_add_home's. */
bool protect_marker_valid(const char *entry);


/* protect_match, or protect_home_dotentry for the writable path root. */
bool protect_match_in(const strv *names, const char *root, const char *rel, int dir, char *why, size_t whysz);
