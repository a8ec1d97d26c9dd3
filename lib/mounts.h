/* The filesystem view: a fresh tmpfs root, populated with binds, tmpfs, /proc
 * and a minimal /dev, entered with pivot_root. */
#pragma once
#include <stdbool.h>
#include "cordon.h"
#include "policy.h"

struct mount_plan {
	const struct cordon_mount *mounts; /* effective list, parents first */
	size_t n;
	/* Per mount: a detached, already-configured tree prepared by the parent
	 * (idmapped rw binds when cordon runs as root), or -1. */
	const int *tree_fds;
};

/* Parent side: for each rw bind, clone the host tree and idmap it so that
 * files the run creates belong to host_uid/gid while the run's own host
 * identity is sandbox_uid. fds[i] = -1 for the others. Needs host
 * CAP_SYS_ADMIN; call only when cordon runs as root. */
int mounts_prepare_idmapped(const struct cordon_mount *m, size_t n, int userns_fd, int *fds,
			    cordon_error *err);

/* Child side (in the new user + mount namespaces, with capabilities): build
 * the view and pivot_root into it. On return "/" is the sandbox root. */
int mounts_apply(const struct mount_plan *plan, cordon_error *err);
