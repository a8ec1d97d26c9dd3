/* Why this host refuses what cordon needs, in words (issue 35, docs/hosts.md):
 * each missing capability named with its cause, the same text from
 * `cordon explain` and from a refused run. Reads /proc only. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* This process's seccomp mode (/proc/self/status): 0 none, 1 strict,
 * 2 filter; -1 unknown. A filter is how containers, gVisor-like sandboxes
 * and cordon itself refuse calls. */
int hostwhy_seccomp_mode(void);

/* Why creating a user namespace failed with err (clone3's errno):
 * "user namespaces: disabled by sysctl user.max_user_namespaces=0", "user
 * namespaces: refused by seccomp (ENOSYS from clone3)", ... */
void hostwhy_userns(int err, bool privileged, char *out, size_t n);

/* Why Landlock is missing, from landlock_create_ruleset's errno:
 * "Landlock: not in this kernel (ENOSYS)", "Landlock: built in, not
 * enabled (EOPNOTSUPP: lsm= at boot)", "Landlock: refused by seccomp ...". */
void hostwhy_landlock(int err, char *out, size_t n);

/* A system call cordon itself needs that failed with err: under a seccomp
 * filter, "CALL: refused by seccomp (ENOSYS): cordon runs inside a sandbox
 * that filters it (cordon nested in cordon, a container's profile)"; else
 * "" (nothing to add). */
void hostwhy_call(const char *call, int err, char *out, size_t n);
