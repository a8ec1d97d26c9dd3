/* linux.seccomp compiled with libseccomp, and cordon's own deny list
 * (seccomp_default_deny, lib/seccomp-policy.c) as a second filter stacked on it: the
 * kernel applies the stricter answer of the two, so the config cannot allow
 * back what cordon denies. Loaded by the container's init just before it
 * executes the process; init's deny list goes to a listener the supervisor
 * holds (lib/oci-observe.c), which answers EPERM (ENOSYS to a call newer
 * than cordon's table) and reports the denials. The deny list is built with
 * libseccomp but numbered by cordon's own table (lib/systab.c) and loaded
 * as cordon run's filter is, behind the same instructions for newer calls
 * (seccomp_plan_export). */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "oci-seccomp.h"
#include "error.h"
#include "oci-config.h"
#include "seccomp-policy.h"
#include "observe.h"
#include "policy.h"
#include "landlock.h"

static uint32_t act_of(int a, bool has_errno, uint32_t e, uint32_t def_errno)
{
	uint32_t act = (uint32_t)a;
	if ((act & SECCOMP_RET_ACTION_FULL) == SCMP_ACT_ERRNO(0))
		return SCMP_ACT_ERRNO(has_errno ? e : def_errno);
	if ((act & SECCOMP_RET_ACTION_FULL) == SCMP_ACT_TRACE(0))
		return SCMP_ACT_TRACE(has_errno ? e : def_errno);
	return act;
}

static uint32_t arch_of(const char *n)
{
	static const struct { const char *n; uint32_t a; } t[] = {
		{"SCMP_ARCH_X86", SCMP_ARCH_X86}, {"SCMP_ARCH_X86_64", SCMP_ARCH_X86_64},
		{"SCMP_ARCH_X32", SCMP_ARCH_X32}, {"SCMP_ARCH_AARCH64", SCMP_ARCH_AARCH64},
		{"SCMP_ARCH_ARM", SCMP_ARCH_ARM},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(n, t[i].n) == 0)
			return t[i].a;
	return 0;
}

/* The config's profile hands calls to a listener of its own: the kernel
 * allows one listener per filter chain, so cordon's deny list answers EPERM
 * itself there. */
static bool config_notifies(const struct oci_seccomp *s)
{
	if (!s->present)
		return false;
	bool n = ((uint32_t)s->default_action & SECCOMP_RET_ACTION_FULL) == SCMP_ACT_NOTIFY;
	for (size_t i = 0; i < s->nrules; i++)
		n |= ((uint32_t)s->rules[i].action & SECCOMP_RET_ACTION_FULL) == SCMP_ACT_NOTIFY;
	return n;
}

int oci_seccomp_load(const struct oci_config *c, cordon_error *err)
{
	return oci_seccomp_load_notify(c, NULL, err);
}

/* cordon's deny list as a program (plan): every call of seccomp_default_deny
 * by number from cordon's table (libseccomp 2.5.4 names no call past 456),
 * answered deny (EPERM, or the listener's); no setuid or setgid file and no
 * file capability out of the container; and the calls newer than the table
 * answered ENOSYS first, as cordon run's filter does. */
static int deny_list(const struct oci_config *c, bool notify, struct seccomp_plan *plan, cordon_error *err)
{
	scmp_filter_ctx d = seccomp_init(SCMP_ACT_ALLOW);
	if (!d)
		return cordon_err(err, ENOMEM, "seccomp: out of memory");
	uint32_t deny = notify ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EPERM);
	int r = 0;
	for (const char *const *n = seccomp_default_deny; *n && r == 0; n++)
		r = seccomp_add_named(d, deny, *n, err);
	/* No setuid or setgid file: the root is idmapped, so a file root in
	 * the container makes is the host's root's, and with the bit any host
	 * user who reaches the bundle would run it as root (outside review of
	 * cordon-oci, 1). openat2 keeps its mode in memory, out of a filter's
	 * reach: ENOSYS, and libc falls back to openat, as cordon run does. */
	if (r == 0)
		r = seccomp_add_priv_rules(d, deny, err);
	if (r == 0)
		r = seccomp_add_named(d, SCMP_ACT_ERRNO(ENOSYS), "openat2", err);
	/* No file capability, for the same reason: root inside holds
	 * CAP_SETFCAP (the config's to grant; podman's default set does), and
	 * security.capability on the idmapped root is a host file capability.
	 * The filter cannot read the name but reads the size: the two a
	 * capability can have are refused. setxattrat keeps its size in a
	 * struct in memory: ENOSYS, and a tool falls back to setxattr. */
	if (r == 0)
		r = seccomp_add_fcap_rules(d, deny, err);
	if (r == 0)
		r = seccomp_add_named(d, SCMP_ACT_ERRNO(ENOSYS), "setxattrat", err);
	/* With the listener, the path calls cordon run's observer watches
	 * (observer_calls), answered CONTINUE: the kernel decides, the
	 * supervisor reports what the container's model says it denies
	 * (lib/oci-model.h: a write in a read-only mount or readonlyPaths, an
	 * open of a maskedPaths entry), as cordon run does with file reports. */
	for (const char *const *n = observer_calls; notify && r == 0 && *n; n++)
		r = seccomp_add_named(d, SCMP_ACT_NOTIFY, *n, err);
	/* run.cordon.policy (its network section: the container's own netns,
	 * the proxy the one way out): connect goes to the supervisor, which
	 * lets it through and records one that bypasses the proxy, as cordon
	 * run's observer does; with network.loopback_ports bind too (Landlock
	 * holds TCP to the declared ports; those it refuses are recorded) */
	if (r == 0 && notify && c->egress)
		r = seccomp_add_named(d, SCMP_ACT_NOTIFY, "connect", err);
	if (r == 0 && notify && c->egress && c->egress->nloopback_ports && landlock_abi() >= 4)
		r = seccomp_add_named(d, SCMP_ACT_NOTIFY, "bind", err);
	if (r == 0)
		r = seccomp_plan_export(d, notify, plan, err);
	seccomp_release(d);
	if (r < 0)
		return r;
	plan->notify = notify;
	/* the program is in memory; init loads it with one seccomp(2) */
	close(plan->memfd);
	plan->memfd = -1;
	return 0;
}

int oci_seccomp_load_notify(const struct oci_config *c, int *listener, cordon_error *err)
{
	if (listener)
		*listener = -1;
	bool notify = listener && !config_notifies(&c->seccomp);
	/* cordon's deny list, built before the config's profile is loaded
	 * (building it takes calls, memfd_create among them, the profile may
	 * refuse) and loaded after it */
	struct seccomp_plan plan = {.memfd = -1};
	int r = deny_list(c, notify, &plan, err);
	/* no_new_privs is process.noNewPrivileges's to set (libseccomp would
	 * set it again with the profile); without it init still holds
	 * CAP_SYS_ADMIN in its namespace, which seccomp(2) then needs */
	if (r == 0 && c->nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		r = cordon_err_errno(err, "prctl(PR_SET_NO_NEW_PRIVS)");
	if (r < 0) {
		seccomp_plan_free(&plan);
		return r;
	}
	if (c->seccomp.present) {
		const struct oci_seccomp *s = &c->seccomp;
		uint32_t def_errno = s->has_default_errno ? s->default_errno : EPERM;
		scmp_filter_ctx f = seccomp_init(act_of(s->default_action, s->has_default_errno, s->default_errno, EPERM));
		if (!f) {
			seccomp_plan_free(&plan);
			return cordon_err(err, 0, "linux.seccomp: libseccomp refused the default action");
		}
		seccomp_attr_set(f, SCMP_FLTATR_CTL_NNP, c->nnp);
		for (size_t i = 0; i < s->arches.n; i++) {
			uint32_t a = arch_of(s->arches.v[i]);
			if (a && a != seccomp_arch_native())
				seccomp_arch_add(f, a);
		}
		for (size_t i = 0; r == 0 && i < s->nrules; i++) {
			const struct oci_seccomp_rule *rr = &s->rules[i];
			uint32_t act = act_of(rr->action, rr->has_errno, rr->errno_ret, def_errno);
			struct scmp_arg_cmp cmp[6];
			for (unsigned k = 0; k < rr->nargs; k++)
				cmp[k] = (struct scmp_arg_cmp){rr->args[k].idx, (enum scmp_compare)rr->args[k].op,
							       rr->args[k].value, rr->args[k].value2};
			for (size_t k = 0; k < rr->names.n; k++) {
				int nr = seccomp_syscall_resolve_name(rr->names.v[k]);
				if (nr == __NR_SCMP_ERROR)
					continue; /* a call this kernel or libseccomp does not know */
				/* conditions on the same argument: one rule each (runc's reading) */
				bool same = false;
				for (unsigned a = 0; a < rr->nargs; a++)
					for (unsigned b = a + 1; b < rr->nargs; b++)
						same |= rr->args[a].idx == rr->args[b].idx;
				int e = 0;
				if (same)
					for (unsigned a = 0; a < rr->nargs && (e >= 0 || e == -EEXIST); a++)
						e = seccomp_rule_add_array(f, act, nr, 1, &cmp[a]);
				else
					e = seccomp_rule_add_array(f, act, nr, rr->nargs, cmp);
				if (e < 0 && e != -EEXIST && e != -EACCES) {
					r = cordon_err(err, -e, "linux.seccomp: rule for %s", rr->names.v[k]);
					break;
				}
			}
		}
		if (r == 0) {
			int e = seccomp_load(f);
			if (e < 0)
				r = cordon_err(err, -e, "linux.seccomp: loading the filter");
		}
		seccomp_release(f);
	}
	int fd = -1;
	if (r == 0 && seccomp_apply(&plan, &fd, err) < 0)
		r = cordon_err_wrap(err, "seccomp: loading cordon's deny list");
	if (r == 0 && notify)
		*listener = fd;
	seccomp_plan_free(&plan);
	return r;
}
