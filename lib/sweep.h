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
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
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
	bool keep_only; /* sweep_keep's: its mode and owner restored, not walked */
	bool absent;    /* sweep_keep's, not there before the run (fd -1): if the
			 * run made a directory there, it gets no group or other
			 * write and no ACL */
	/* Its POSIX ACLs before the run (access, default; NULL: none): a
	 * default ACL a run adds gives what it likes to everything made
	 * there later. */
	char *acl[2];
	size_t acl_len[2];
};

/* The full walk's bounds (SECURITY.md, "What a run leaves behind"): entries
 * looked at, supervisor time, bytes of names held. Reaching one stops the
 * walk and marks the sweep incomplete (never silently). */
#define SWEEP_MAX_ENTRIES 1000000
#define SWEEP_BUDGET_NS (5ull * 1000000000ull)
#define SWEEP_MAX_NAME_BYTES (64u << 20)
/* A regular file whose ctime is older than the pin by more than this was
 * not touched by the run: its security.capability is not looked up. */
#define SWEEP_CTIME_SLACK_S 60

struct sweep {
	struct sweep_root *r;
	size_t n;
	struct timespec start; /* CLOCK_REALTIME at pin time */
	/* The bounds, SWEEP_* by default (tests lower them). */
	uint64_t max_entries, budget_ns;
	size_t max_name_bytes;
};

/* How the sweep went (report "privilege_sweep", present when incomplete). */
struct sweep_status {
	bool walked;     /* every file below the roots was looked at (a full walk ran) */
	bool incomplete; /* some file below a root may not have been looked at */
	char reason[160];
	uint64_t entries; /* entries the full walk looked at */
};

/* Before the run: pin each writable root and record its mode and owner. Each
 * is opened from / with no symlink and no magic link on its path; one that
 * has a symlink on its path now is an error, one that does not exist is left
 * out (the run cannot bind it either). */
int sweep_pin(struct sweep *sw, const char *const *roots, size_t n, cordon_error *err);
/* After sweep_pin: directories inside the roots whose mode and owner are
 * put back after the run too, without a walk of their own (the pinned
 * directories above protected names: a run in direct mode can chmod them,
 * and a world-writable .git lets any local user put hooks in). One absent
 * now (above a protected name that is absent too) is looked at after the
 * run: a directory the run made there loses group and other write and its
 * ACLs (`mkdir -m 0777 .cargo` let anyone put a config.toml in). */
int sweep_keep(struct sweep *sw, const char *const *paths, size_t n, cordon_error *err);
/* rootfd/rel (opened beneath it, no link followed; a link is left alone)
 * loses the group and other write it has beyond before (its mode before the
 * run) and its POSIX ACLs; each change added to restored under path. */
void sweep_tighten_at(int rootfd, const char *rel, mode_t before, const char *path, const char *base,
		      struct fix_list *restored);
/* After the run, when no process of it is left: put each root's mode and
 * owner back (into *restored), then clear privilege bits and file
 * capabilities on the changed files (into *cleared). With truncated set (the
 * change list is incomplete), or when a listed file cannot be opened
 * beneath its root, every file below the roots is checked, walking from
 * directory fd to directory fd (no path string is resolved, no depth
 * limit), within the bounds above. *status says whether it was complete.
 * base: the workspace, for relative names. */
void sweep_run(struct sweep *sw, const struct file_list *changed, bool truncated, const char *base,
	       struct fix_list *cleared, struct fix_list *restored, struct sweep_status *status);
void sweep_free(struct sweep *sw);
