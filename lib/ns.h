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

/* Two user namespaces, nested:
 *   U1 (init's, made by clone3): the invoking uid/gid -> the run's host uid/gid.
 *      Its mount, network, UTS and IPC namespaces are owned by U1. Because it
 *      maps the invoking user to the run's identity, U1 is also exactly the
 *      user namespace an idmapped workspace mount needs: no helper process.
 *   U2 (made by init once the view is built): SANDBOX_UID -> init's uid in
 *      U1. The command lives here: uid 1000, no capabilities anywhere, and
 *      none at all in U1, which owns its mounts. */

/* Supervisor: write /proc/PID/{uid_map,setgroups,gid_map} of U1 (the
 * maps' text: creds_prepare). deny_setgroups is required when unprivileged. */
int ns_write_maps(pid_t pid, const char *uid_map, const char *gid_map, bool deny_setgroups,
		  cordon_error *err);

/* init: create U2 with these maps (SANDBOX_UID/GID to our current uid/gid,
 * formatted by creds_prepare). */
int ns_enter_nested(const char *uid_map, const char *gid_map, cordon_error *err);

/* Supervisor, as root: a throwaway user namespace whose maps are the
 * identity except that host uid/gid a (a serve client) and b (the run's
 * host identity) are swapped; an fd of it (O_CLOEXEC), or -1 with err set.
 * As an idmapped mount's mapping it makes exactly the client's files the
 * run's, new files the client's, and leaves every other file its owner's
 * (the run is "other" to them: the client's rights, not root's). */
int ns_swap_userns(uid_t ua, uid_t ub, gid_t ga, gid_t gb, cordon_error *err);

/* Can this process create the namespaces of flags (CLONE_NEW*) as the run
 * does, with clone3 (a child that exits at once), and can the run's view be
 * built there: a fresh proc mounted in
 * them (a container's /proc with masked paths refuses it: EPERM), and as
 * root (privileged) a bind tree cloned (open_tree: a container without
 * CAP_SYS_ADMIN refuses it). false with why said in words (hostwhy.h's for
 * the namespaces). */
bool ns_probe_view(unsigned long flags, bool privileged, char *why, size_t n);

/* Bring up "lo" in the current network namespace. */
int ns_loopback_up(cordon_error *err);
/* network.transparent: one address of the synthetic ranges on lo
 * (NS_SYNTH_V4 as lo:1, and NS_SYNTH_V6 where the run has IPv6), so that
 * getaddrinfo's AI_ADDRCONFIG, which counts no loopback address, finds the
 * run configured for IPv4 and IPv6 and looks the names up. Adds no route
 * out. */
#define NS_SYNTH_V4 0xc613fffeu /* 198.19.255.254 */
int ns_synthetic_addrs(cordon_error *err);
