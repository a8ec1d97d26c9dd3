#include <linux/capability.h>
#include <linux/securebits.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "error.h"
#include "creds.h"
#include "ident.h"
#include "ns.h"

static int capset_all(bool full)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	uint32_t v = full ? 0xffffffffu : 0;
	for (int i = 0; i < 2; i++)
		d[i] = (struct __user_cap_data_struct){v, v, 0};
	return (int)syscall(SYS_capset, &h, d);
}

/* Become uid/gid of the current user namespace (the mapped identity) while
 * keeping its full capability set, so the new root's files belong to a
 * mapped user. */
static int creds_become_ns_user(uid_t uid, gid_t gid, cordon_error *err)
{
	/* Drop supplementary groups inherited from the host (only possible
	 * when setgroups is allowed, i.e. cordon runs as root). */
	if (setgroups(0, NULL) < 0 && errno != EPERM)
		return cordon_err_errno(err, "setgroups");
	if (setresgid(gid, gid, gid) < 0)
		return cordon_err_errno(err, "setresgid");
	/* From an unmapped identity to the namespace's own user: the capability
	 * set of the new namespace is kept (permitted -> effective for uid 0;
	 * unchanged for the unprivileged caller, whose uid does not change). */
	if (setresuid(uid, uid, uid) < 0)
		return cordon_err_errno(err, "setresuid");
	ident_forget();
	if (capset_all(true) < 0)
		return cordon_err_errno(err, "capset");
	return 0;
}

void creds_prepare(uid_t host_uid, gid_t host_gid, uid_t run_uid, gid_t run_gid, bool privileged,
		   struct creds_plan *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->u1_uid_map, sizeof(out->u1_uid_map), "%u %u 1\n", (unsigned)host_uid, (unsigned)run_uid);
	snprintf(out->u1_gid_map, sizeof(out->u1_gid_map), "%u %u 1\n", (unsigned)host_gid, (unsigned)run_gid);
	out->u1_deny_setgroups = !privileged;
	out->ns_uid = host_uid;
	out->ns_gid = host_gid;
	snprintf(out->u2_uid_map, sizeof(out->u2_uid_map), "%u %u 1\n", (unsigned)SANDBOX_UID, (unsigned)host_uid);
	snprintf(out->u2_gid_map, sizeof(out->u2_gid_map), "%u %u 1\n", (unsigned)SANDBOX_GID, (unsigned)host_gid);
}

int creds_apply_maps(pid_t pid, const struct creds_plan *cp, cordon_error *err)
{
	return ns_write_maps(pid, cp->u1_uid_map, cp->u1_gid_map, cp->u1_deny_setgroups, err);
}

int creds_apply_init(const struct creds_plan *cp, cordon_error *err)
{
	return creds_become_ns_user(cp->ns_uid, cp->ns_gid, err);
}

int creds_enter_nested(const struct creds_plan *cp, cordon_error *err)
{
	return ns_enter_nested(cp->u2_uid_map, cp->u2_gid_map, err);
}

int creds_drop_all(cordon_error *err)
{
	return creds_drop_to(SANDBOX_UID, SANDBOX_GID, err);
}

int creds_drop_to(uid_t uid, gid_t gid, cordon_error *err)
{
	if (setgroups(0, NULL) < 0 && errno != EPERM)
		return cordon_err_errno(err, "setgroups");
	if (setresgid(gid, gid, gid) < 0)
		return cordon_err_errno(err, "setresgid(%u)", (unsigned)gid);
	/* The degraded boundary's ordinary user has no capability at all:
	 * it can neither drop the bounding set nor lock securebits (both need
	 * CAP_SETPCAP), and needs neither: with no_new_privs (below) no exec
	 * gains a capability. */
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return cordon_err_errno(err, "capget");
	bool none = !(d[0].permitted | d[1].permitted | d[0].effective | d[1].effective);
	/* Capabilities are numbered 0 to the kernel's last one without a gap:
	 * the first EINVAL is past it (41 calls on 6.x, not 64). */
	for (int c = 0; !none && c <= 63; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				break;
			return cordon_err_errno(err, "PR_CAPBSET_DROP %d", c);
		}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return cordon_err_errno(err, "PR_CAP_AMBIENT_CLEAR_ALL");
	if (!none && prctl(PR_SET_SECUREBITS, SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_SETUID_FIXUP |
		  SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_NOROOT | SECBIT_NOROOT_LOCKED, 0, 0, 0) < 0)
		return cordon_err_errno(err, "PR_SET_SECUREBITS");
	if (setresuid(uid, uid, uid) < 0)
		return cordon_err_errno(err, "setresuid(%u)", (unsigned)uid);
	ident_forget();
	if (capset_all(false) < 0)
		return cordon_err_errno(err, "capset (drop)");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return cordon_err_errno(err, "PR_SET_NO_NEW_PRIVS");
	return 0;
}

static int set_rl(int res, rlim_t soft, rlim_t hard, const char *name, cordon_error *err)
{
	struct rlimit rl = {soft, hard};
	if (setrlimit(res, &rl) < 0)
		return cordon_err_errno(err, "setrlimit(%s)", name);
	return 0;
}

int creds_apply_rlimits(const struct rlimit_plan *p, cordon_error *err)
{
	if (set_rl(RLIMIT_CORE, 0, 0, "RLIMIT_CORE", err) < 0)
		return -1;
	if (p->fsize && set_rl(RLIMIT_FSIZE, p->fsize, p->fsize, "RLIMIT_FSIZE", err) < 0)
		return -1;
	/* Per-process backstop: SIGXCPU at the limit, SIGKILL one second later. */
	if (p->cpu_sec && set_rl(RLIMIT_CPU, p->cpu_sec, p->cpu_sec + 1, "RLIMIT_CPU", err) < 0)
		return -1;
	if (p->as && set_rl(RLIMIT_AS, p->as, p->as, "RLIMIT_AS", err) < 0)
		return -1;
	if (p->nproc && set_rl(RLIMIT_NPROC, p->nproc, p->nproc, "RLIMIT_NPROC", err) < 0)
		return -1;
	return 0;
}
