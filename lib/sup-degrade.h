/* The degraded boundary (issue 35.2, docs/hosts.md): a host that refuses
 * the run's namespaces (a container's seccomp profile, gVisor, cordon
 * nested in cordon) runs it without them only when the policy accepts it
 * (enforcement.allow_weaker "namespaces", within the ceiling). The steps
 * sup-run.c calls in its order; what they lose is in the report
 * (enforcement.degraded) and containment says "weaker". */
#ifndef CORDON_SUP_DEGRADE_H
#define CORDON_SUP_DEGRADE_H
#include <sched.h>
#include "sup-state.h"

/* Step 4, first: are the namespaces to be had? If not and the policy
 * accepts it, s->degraded, the run's identity (never privileged: the
 * invoking uid when that is not root, else a uid of its own) and the
 * report's list of what is lost; refused where nothing would hold
 * (no Landlock: nothing between the run and the filesystem; endpoints
 * where the proxy cannot bound the run (sup_degrade_proxy) without
 * allow_weaker "network"; what needs a view: --rootfs, a tmpfs, a
 * path seen elsewhere than on the host, a check's scratch, a session). */
int sup_degrade_decide(struct sup *s, cordon_error *err);
/* The namespaces a run is cloned into (sup-run.c's clone3), as probed. */
#define SUP_DEGRADE_NS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET)
/* Those refusals alone, for a host whose namespaces are refused for the
 * reason why (hostwhy_userns): `cordon explain`'s verdict and the run's
 * in the same words. check_view: a task check over the change set. */
int sup_degrade_check(const cordon_policy *p, const struct run_plan *plan, bool session, bool check_view,
		      const char *why, cordon_error *err);
/* Can the degraded boundary keep the proxy (sup-degrade-net.h) on this
 * host, Landlock at ABI abi? Landlock must refuse the run's own TCP
 * connect and bind (ABI 4) and seccomp notify. If not, why (n > 0): what
 * it needs, said as "where ..." continues it. */
bool sup_degrade_proxy(int abi, char *why, size_t n);
/* Where it can: are the run's connects to be read as the run's uid (a root
 * cordon without CAP_SYS_PTRACE: sup-degrade-net.c becomes that uid for
 * each read)? */
bool sup_degrade_proxy_as_run(void);
/* Step 4, after the layers are prepared: what the degraded boundary changes
 * in them (no workspace overlay, no observer, the seccomp rules that keep
 * the run's process group and refuse the sockets it may not have; with
 * endpoints, the proxy kept behind the connect rule (SYS_R_DEGRADED_NET),
 * or its variables gone with allow_weaker "network"). */
int sup_degrade_layers(struct sup *s, cordon_error *err);
/* Step 4, once Landlock is prepared: with the proxy kept and TLS
 * interception, the run's CA bundle (no view to put it at CORDON_CA_DIR)
 * as a file of the host's, /tmp/cordon-ca-PID-START-XXXXXX/ca.pem (0444,
 * its directory 0755, read by Landlock's rule; PID and START this
 * supervisor's PID and start time), named by the CA variables; the host's
 * own bundles are not covered. Removed by sup_degrade_ca_remove. */
int sup_degrade_ca(struct sup *s, cordon_error *err);
void sup_degrade_ca_remove(struct sup *s);
/* The leftover look (sup-finish.c): each such directory of this euid whose
 * supervisor is gone (SIGKILLed: no PID with that start time) is removed,
 * its ca.pem and then itself; a live supervisor's is never touched. */
void sup_degrade_ca_reap(void);
/* The run's setup failed after its clone (err, a step's own words:
 * "fsmount proc: ...", "open /proc/N/ns/user: ..."), not asked for the
 * degraded boundary: where the namespaces or the view in them cannot be had
 * (podman's default profile: masked /proc), err is prefixed with the cause
 * in `cordon explain`'s words (sup_setup_error). */
void sup_degrade_why_failed(struct sup *s, cordon_error *err);
/* Step 6, where clone3 is refused (the degraded boundary clones with clone,
 * which cannot place init in a cgroup): init joins the run's v2 cgroup
 * before sync 1, so that the command is born there. */
int sup_degrade_join_cgroup(struct sup *s, cordon_error *err);
/* Step 9, as root: the writable paths handed to the run's uid for the run
 * (give_back_workspace returns them), as without idmapped mounts. */
int sup_degrade_hand_over(struct sup *s, cordon_error *err);
/* After the run, direct mode's snapshots of the writable paths (before:
 * at sync 2, after the hand-over; after: before the give-back): Landlock
 * grants a writable path whole, so its protected paths (.git/config,
 * .git/hooks, ...) are not held in the degraded boundary. Each entry at
 * or below one that the run created, changed or deleted is a denial
 * ("file", its host path): containment "violations", never "weaker". */
void sup_degrade_protected(struct sup *s, const struct snapshot *before, const struct snapshot *after);
/* Init has exited (a zombie until reaped, so its pid, the run's process
 * group, is not reused): every process left in that group is killed. */
void sup_degrade_reap(struct sup *s);

#endif
