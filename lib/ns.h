/* User-namespace identity: uid/gid maps, and the throwaway user namespace
 * that describes an idmapped mount (parent side, needs host CAP_SYS_ADMIN). */
#pragma once
#include <stdbool.h>
#include <sys/types.h>
#include "cordon.h"

/* The uid and gid the command has inside the boundary. */
#define SANDBOX_UID 1000
#define SANDBOX_GID 1000
/* When cordon runs as root, each run gets its own unprivileged host uid:
 * SANDBOX_HOST_BASE + supervisor pid (pids are below 2^22), far above any
 * /etc/subuid range, so concurrent runs never share a host identity. */
#define SANDBOX_HOST_BASE 0x30000000u

/* Write /proc/PID/{uid_map,setgroups,gid_map}: SANDBOX_UID -> host_uid. If
 * !privileged, setgroups is denied first (the kernel requires it). */
int ns_write_maps(pid_t pid, uid_t host_uid, gid_t host_gid, bool privileged, cordon_error *err);

/* Create a user namespace mapping inside_uid -> outside_uid (and gids
 * likewise) and return an fd to it, for MOUNT_ATTR_IDMAP. */
int ns_idmap_userns(uid_t inside_uid, uid_t outside_uid, gid_t inside_gid, gid_t outside_gid,
		    cordon_error *err);

/* Bring up "lo" in the current network namespace. */
int ns_loopback_up(cordon_error *err);
