/* What the supervisor hands the sandbox's side of a run: PID 1 of the new
 * namespaces ("init", child-init.h) and the command it starts (exec.h).
 * The spec alone: plain data, built before clone. */
#pragma once
#include <stdbool.h>
#include "creds.h"
#include "landlock.h"
#include "mounts.h"
#include "cordon-pty.h"
#include "plan.h"
#include "seccomp-policy.h"

struct sandbox_spec {
	const struct run_plan *plan;
	const struct mount_steps *mounts; /* mounts_prepare of plan->model */
	int *tree_fds;        /* per plan mount, filled from MSG_TREE frames */
	char *const *overlay_dirs; /* per plan mount (mount_plan.overlay_dirs), or NULL */
	int *overlay_trees;   /* per plan mount, filled from MSG_OVERLAY frames (as root) */
	const struct overlay_sub *overlay_subs; /* mount_plan.overlay_subs, or NULL */
	int *layer_fds;       /* the workspace's stack (policy ws_layers), filled from
			       * MSG_LAYER frames; nlayers of them */
	size_t nlayers;
	char *const *argv;
	char *const *envp;
	struct rlimit_plan rl;
	bool unshare_cgroupns; /* v1: the cgroup was attached after clone */
	const struct landlock_plan *landlock;
	bool seccomp;          /* a filter comes at sync 2 (false: accepted weaker) */
	const struct secret_value *secrets; /* file deliveries */
	size_t nsecrets;
	unsigned char *cs_key; /* the change set's sealing key, held from before the
				* clone to sync 2 (changeset_begin): init's copy
				* is zeroed at once, as a secret's value is; or NULL */
	size_t cs_key_len;
	const char *ca_pem;    /* the run's CA bundle (CORDON_CA_FILE), or NULL */
	size_t ca_len;
	bool proxy;            /* egress declared: listen on 127.0.0.1:PROXY_PORT */
	bool dns;              /* network.transparent: UDP and TCP CORDON_DNS_ADDR:53 too */
	bool sockdiag;         /* send the supervisor a checked NETLINK_SOCK_DIAG socket
				* of the run's netns (MSG_DIAG_FD; sockdiag.h) */
	struct cgroup_view *cgview; /* filled from MSG_CGROUP frames */
	int stdin_fd;          /* /dev/null for the command's fd 0 when cordon's is
				* a terminal, else -1 (fd 0 is passed as it is) */
	bool pty;              /* --pty: the command's 0, 1, 2 are a pty of the
				* run's own devpts; its master goes to the
				* supervisor (MSG_PTY) */
	struct pty_winsize pty_size; /* its size at start */
	const struct creds_plan *creds; /* identities and maps (creds_prepare) */
	bool session;          /* init stays up as an exec agent (session-agent.c) */
	/* The degraded boundary (allow_weaker "namespaces", docs/hosts.md):
	 * init is cordon's plain child, in no namespace of its own; it builds
	 * no view, and drops to run_uid/gid (the run's host identity) instead
	 * of entering U2. */
	bool degraded;
	uid_t run_uid;
	gid_t run_gid;
};
