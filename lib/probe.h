/* What this host can enforce, probed at run time (never from the kernel
 * version string). */
#pragma once
#include <stdbool.h>
#include "cordon.h"

struct host_features {
	bool userns;          /* user namespaces can be created by this caller */
	int landlock_abi;     /* 0 = none */
	bool seccomp;         /* seccomp filters */
	bool seccomp_notify;  /* SECCOMP_RET_USER_NOTIF */
	const char *cgroup;   /* "v1", "v2" or "none" */
	bool cgroup_memory, cgroup_pids;
	bool privileged;      /* cordon runs as root (uid 0) */
	/* Why a layer is missing (hostwhy.h), "" when it is there. */
	char userns_why[256], landlock_why[256];
};

void probe_host(struct host_features *f, const char *cgroup_force);
