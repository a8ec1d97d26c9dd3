/* cgroup v2 device rules (lib/cgroup-devbpf.c): what cgroup v1's devices
 * controller does, as an eBPF program of type BPF_PROG_TYPE_CGROUP_DEVICE
 * attached to the cgroup (v2 has no devices files). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cordon.h"

/* One rule, as linux.resources.devices and cgroup v1's devices.allow say it:
 * type 'a' (any), 'c' or 'b'; major/minor -1 for any; access a subset of
 * "rwm" (NULL or empty: all three). Later rules win over earlier ones; a
 * device no rule matches is refused. */
struct cg_devrule {
	bool allow;
	char type;
	int64_t major, minor;
	const char *access;
};

/* Check the rules (type, numbers, access letters); -1 with the rule's index
 * named in err. Nothing is loaded. */
int cg_devbpf_check(const struct cg_devrule *r, size_t n, cordon_error *err);

/* Compile the rules, load the program and attach it to the cgroup directory
 * dirfd (BPF_F_ALLOW_MULTI), then detach the programs of this type attached
 * there before (an update replaces the rules; there is never a moment with
 * none). Needs CAP_SYS_ADMIN (or CAP_BPF) on the host: EPERM otherwise. */
int cg_devbpf_apply(int dirfd, const struct cg_devrule *r, size_t n, cordon_error *err);

/* How many device programs are attached to dirfd itself (not inherited);
 * -1 with errno. */
int cg_devbpf_count(int dirfd);
