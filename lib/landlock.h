/* Landlock: a second, independent filesystem (and TCP, and scoping) layer
 * that mirrors the mount view, so that a bypass of the mount namespace alone
 * still leaves the run confined. Access masks come from the ABI the kernel
 * reports (never from its version string). */
#pragma once
#include <stdint.h>
#include "model.h"

struct landlock_rule {
	char *path;       /* inside the view */
	uint64_t access;  /* LANDLOCK_ACCESS_FS_* */
	bool optional;    /* absent from the view: no rule, no error */
};

struct landlock_plan {
	int abi;          /* 0 = not available: nothing is applied */
	uint64_t fs, net, scoped;
	struct landlock_rule *rules;
	size_t n;
	uint16_t *tcp_ports; /* TCP ports the run may bind and connect to */
	size_t nports;
	uint16_t connect_port; /* a port the run may only connect to (the proxy), or 0 */
};

/* The kernel's Landlock ABI version, 0 if none. */
int landlock_abi(void);
/* What cordon would use from Landlock that a kernel with this ABI lacks, one
 * line each, NULL-terminated (static strings; empty on ABI 6 and later). The
 * run is still confined by its namespaces; the report and explain name them. */
const char *const *landlock_missing(int abi);
/* Supervisor: rules for the boundary model's paths in effect under conds
 * (MODEL_IF_*), masked to abi. */
/* Supervisor, for a run of policy p: the kernel's ABI, the fallback (no
 * Landlock: an error unless p accepts weaker enforcement, WEAK_LANDLOCK;
 * then out->abi is 0 and nothing is applied), the rules (as
 * landlock_prepare, with p's loopback ports), and the proxy's port when p
 * allows egress (proxy_port). */
struct cordon_policy;
/* A conds bit of landlock_prepare_run: the degraded boundary (no mount
 * namespace, docs/hosts.md). The rules are on the host's own paths, so only
 * entries that are the host's path itself hold a rule: binds seen where
 * they are, the standard devices, /proc read-only; what the view makes
 * (tmpfs, files, secrets, the cgroup) has none. TCP bind and connect are
 * handled (ABI 4+) with no port but the proxy's. */
#define LANDLOCK_HOST_VIEW (1u << 31)
int landlock_prepare_run(const struct cordon_policy *p, const struct boundary_model *m, unsigned conds,
			 int proxy_port, struct landlock_plan *out, cordon_error *err);
int landlock_prepare(const struct boundary_model *m, unsigned conds, int abi, const uint16_t *ports, size_t nports,
		     struct landlock_plan *out, cordon_error *err);
void landlock_plan_free(struct landlock_plan *lp);
/* One more path rule (access within the plan's fs rights). */
int landlock_add_path(struct landlock_plan *lp, const char *path, uint64_t access, cordon_error *err);
/* init, after pivot_root and no_new_privs: create and enforce the ruleset.
 * A path that cannot be opened is an error (never silently dropped). */
int landlock_apply(const struct landlock_plan *lp, cordon_error *err);
