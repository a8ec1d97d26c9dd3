/* The policy's effective views (pol-view.c): the mounts a run gets (the
 * policy's, the workspace's, the defaults), sorted, and the policy a task
 * check runs under. */
#pragma once
#include <stddef.h>
#include "policy.h"

/* The effective mount list for a run: the default boundary (system
 * directories ro, workspace rw, /tmp, /proc, /dev are handled by mounts.c)
 * plus explicit mounts, sorted so parents precede children. An explicit mount
 * of the same path replaces a default one; two explicit mounts of one path
 * with different modes are refused. The caller frees with mounts_free(). */
int policy_effective_mounts(const cordon_policy *p, const char *workspace,
			    struct cordon_mount **out, size_t *nout, cordon_error *err);

/* Sort component-wise so that a parent always precedes its children. */
void mounts_sort(struct cordon_mount *m, size_t n);

/* The policy of a task check: the same boundary, with every path the task
 * could write (the workspace included) read-only; no check, ledger or inputs.
 * NULL if memory ran out. */
cordon_policy *policy_for_check(const cordon_policy *p, const char *workspace);
