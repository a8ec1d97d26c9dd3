#include <errno.h>
#include <linux/personality.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "seccomp-policy.h"
#include "cleanup.h"
#include "error.h"
#include "model.h"
#include "seccomp-tables.h"
#include "systab.h"

#define NEWER_PREFIX_LEN 6u

static bool in_list(const strv *l, const char *name)
{
	return strv_contains(l, name);
}

int seccomp_syscall_number(const char *name)
{
	int nr = systab_number(systab_native(), name);
	return nr >= 0 ? nr : seccomp_syscall_resolve_name(name);
}

/* The program's first instructions: a call of the native ABI numbered above
 * the table's highest (lib/systab.h) is newer than cordon and refused with
 * ENOSYS, as an unknown call is on an older kernel (libc falls back, as for
 * clone3), through the supervisor when it reports (it answers ENOSYS and
 * records "syscall N (newer than cordon's table)"). libseccomp cannot say
 * "every number above": it only adds rules for numbers it is given. Another
 * ABI, -1 (a tracer's skipped call) and, on x86-64, x32 numbers (bit 30) go
 * on to libseccomp's program, which kills the first and the last. */
static unsigned newer_prefix(struct sock_filter *f, bool notify)
{
	uint32_t deny = notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA);
	unsigned n = 0;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, systab_native(), 0, NEWER_PREFIX_LEN - 2);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, NEWER_PREFIX_LEN - 4, 0);
#else
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, NEWER_PREFIX_LEN - 4, 0);
#endif
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, (uint32_t)systab_max(systab_native()), 0, 1);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, deny);
	return n;
}

static int rule(scmp_filter_ctx c, uint32_t act, const char *name, unsigned n,
		const struct scmp_arg_cmp *cmp, cordon_error *err)
{
	int nr = seccomp_syscall_number(name);
	if (nr == __NR_SCMP_ERROR)
		return cordon_err(err, 0, "seccomp: unknown system call %s", name);
	int r = seccomp_rule_add_array(c, act, nr, n, cmp);
	if (r < 0)
		return cordon_err(err, -r, "seccomp: rule for %s", name);
	return 0;
}

static int priv_nr[SECCOMP_N_PRIV_CALLS];
static pthread_once_t priv_once = PTHREAD_ONCE_INIT;

static void priv_resolve(void)
{
	for (size_t i = 0; i < SECCOMP_N_PRIV_CALLS; i++)
		priv_nr[i] = seccomp_syscall_number(seccomp_priv_calls[i].name);
}

/* The privilege-bit call with number nr, or NULL. */
static const struct priv_call *seccomp_priv_call(int nr)
{
	pthread_once(&priv_once, priv_resolve);
	for (size_t i = 0; i < SECCOMP_N_PRIV_CALLS; i++)
		if (priv_nr[i] == nr && nr != __NR_SCMP_ERROR)
			return &seccomp_priv_calls[i];
	return NULL;
}

/* open's mode counts only when it creates: O_CREAT, or O_TMPFILE's own bit. */
#define PRIV_CREATE_FLAGS {O_CREAT, 020000000 /* __O_TMPFILE */}

mode_t seccomp_priv_bits(int nr, const uint64_t args[6])
{
	const struct priv_call *pc = seccomp_priv_call(nr);
	if (!pc)
		return 0;
	if (pc->flags >= 0) {
		const uint64_t create[] = PRIV_CREATE_FLAGS;
		if (!(args[pc->flags] & (create[0] | create[1])))
			return 0;
	}
	return (mode_t)(args[pc->mode] & (S_ISUID | S_ISGID));
}

int seccomp_add_priv_rules(scmp_filter_ctx c, uint32_t deny, cordon_error *err)
{
	const uint64_t bits[] = {S_ISUID, S_ISGID}, create[] = PRIV_CREATE_FLAGS;
	for (size_t i = 0; i < SECCOMP_N_PRIV_CALLS; i++) {
		const struct priv_call *pc = &seccomp_priv_calls[i];
		for (size_t b = 0; b < ARRAY_SIZE(bits); b++) {
			struct scmp_arg_cmp m[2] = {{(unsigned)pc->mode, SCMP_CMP_MASKED_EQ, bits[b], bits[b]}};
			if (pc->flags < 0) {
				if (rule(c, deny, pc->name, 1, m, err) < 0)
					return -1;
				continue;
			}
			for (size_t f = 0; f < ARRAY_SIZE(create); f++) {
				m[1] = (struct scmp_arg_cmp){(unsigned)pc->flags, SCMP_CMP_MASKED_EQ, create[f], create[f]};
				if (rule(c, deny, pc->name, 2, m, err) < 0)
					return -1;
			}
		}
	}
	return 0;
}

int seccomp_add_fcap_rules(void *c, uint32_t deny, cordon_error *err)
{
	for (size_t i = 0; i < SECCOMP_N_FCAP_CALLS; i++)
		for (size_t k = 0; k < SECCOMP_N_FCAP_SIZES; k++) {
			struct scmp_arg_cmp a = SCMP_A3(SCMP_CMP_EQ, seccomp_fcap_sizes[k]);
			if (rule(c, deny, seccomp_fcap_calls[i], 1, &a, err) < 0)
				return -1;
		}
	return 0;
}

int seccomp_add_named(void *c, uint32_t act, const char *name, cordon_error *err)
{
	return rule(c, act, name, 0, NULL, err);
}

unsigned seccomp_rules(const cordon_policy *p)
{
	const strv *al = &p->sys_allow, *de = &p->sys_deny;
	unsigned r = 0;
	r |= in_list(al, "clone") ? 0 : SYS_R_CLONE_NS;
	r |= in_list(al, "unshare") ? 0 : SYS_R_UNSHARE_NS;
	r |= in_list(al, "ioctl") ? 0 : SYS_R_IOCTL_TTY;
	r |= in_list(al, "personality") ? 0 : SYS_R_PERSONALITY;
	r |= in_list(al, "socket") ? 0 : SYS_R_SOCKET;
	r |= in_list(al, "clone3") || in_list(de, "clone3") ? 0 : SYS_R_CLONE3;
	r |= in_list(de, "openat2") ? 0 : SYS_R_OPENAT2;
	r |= in_list(de, "connect") ? 0 : SYS_R_CONNECT;
	r |= in_list(de, "sendto") ? 0 : SYS_R_SENDTO;
	r |= p->nloopback_ports && !in_list(de, "bind") ? SYS_R_BIND : 0;
	r |= p->net_transparent ? SYS_R_HOSTSOCK : 0;
	return r;
}

/* socket() refused for every family but the n in keep (and any past the
 * kernel's last, 46 and up). */
static int deny_families_but(scmp_filter_ctx c, uint32_t deny, const int *keep, size_t n, cordon_error *err)
{
	struct scmp_arg_cmp a;
	for (int fam = 0; fam < 46; fam++) {
		bool kept = false;
		for (size_t i = 0; i < n; i++)
			kept |= fam == keep[i];
		a = SCMP_A0(SCMP_CMP_EQ, (uint64_t)fam);
		if (!kept && rule(c, deny, "socket", 1, &a, err) < 0)
			return -1;
	}
	a = SCMP_A0(SCMP_CMP_GE, 46);
	return rule(c, deny, "socket", 1, &a, err);
}

/* The degraded boundary's rules (SYS_R_NO_SOCKET, SYS_R_STREAM_ONLY,
 * SYS_R_KEEP_PGRP): the run shares the host's network and PID namespaces,
 * and its filesystem: a unix socket could connect to any daemon whose
 * socket the run's uid may write (the session bus: systemd-run --user is
 * a way out; outside review attack11b), which no Landlock ABI up to 7
 * refuses. So socket() is refused for unix too; socketpair stays (a pair
 * reaches nothing but itself). */
static int degraded_rules(scmp_filter_ctx c, uint32_t deny, unsigned rules, const strv *deny_list, cordon_error *err)
{
	if ((rules & SYS_R_NO_SOCKET) && rule(c, deny, "socket", 0, NULL, err) < 0)
		return -1;
	if (rules & SYS_R_STREAM_ONLY) {
		if (deny_families_but(c, deny, (const int[]){AF_INET, AF_INET6}, 2, err) < 0)
			return -1;
		const int fams[] = {AF_INET, AF_INET6};
		const int types[] = {SOCK_DGRAM, SOCK_RAW, SOCK_RDM, SOCK_SEQPACKET, SOCK_DCCP, SOCK_PACKET};
		for (size_t f = 0; f < ARRAY_SIZE(fams); f++)
			for (size_t t = 0; t < ARRAY_SIZE(types); t++) {
				struct scmp_arg_cmp ft[2] = {SCMP_A0(SCMP_CMP_EQ, (uint64_t)fams[f]),
							     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, (uint64_t)types[t])};
				if (rule(c, deny, "socket", 2, ft, err) < 0)
					return -1;
			}
	}
	if (rules & SYS_R_DEGRADED_NET) {
		/* Nothing the supervisor did not make connects: Landlock (ABI
		 * 4+) refuses every TCP connect and bind of the run, and the
		 * supervisor never lets a connect continue. TCP Fast Open's
		 * connect is not Landlock's to see: refused by its flag. */
		struct scmp_arg_cmp fo2 = SCMP_A2(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN);
		struct scmp_arg_cmp fo3 = SCMP_A3(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN);
		const struct {
			const char *name;
			uint32_t act;
			const struct scmp_arg_cmp *cmp;
		} r[] = {{"connect", SCMP_ACT_NOTIFY, NULL},
			 {"bind", SCMP_ACT_ERRNO(EACCES), NULL},
			 {"listen", SCMP_ACT_ERRNO(EACCES), NULL},
			 {"sendto", SCMP_ACT_ERRNO(EOPNOTSUPP), &fo3},
			 {"sendmsg", SCMP_ACT_ERRNO(EOPNOTSUPP), &fo2},
			 {"sendmmsg", SCMP_ACT_ERRNO(EOPNOTSUPP), &fo3}};
		for (size_t i = 0; i < ARRAY_SIZE(r); i++) /* a call the policy denies stays denied */
			if (!in_list(deny_list, r[i].name) && rule(c, r[i].act, r[i].name, r[i].cmp ? 1 : 0, r[i].cmp, err) < 0)
				return -1;
	}
	if ((rules & SYS_R_KEEP_PGRP) && (rule(c, deny, "setsid", 0, NULL, err) < 0 ||
					  rule(c, deny, "setpgid", 0, NULL, err) < 0))
		return -1;
	return 0;
}

static int add_conditional(scmp_filter_ctx c, uint32_t deny, unsigned rules, const strv *deny_list,
			   cordon_error *err)
{
	struct scmp_arg_cmp a;
	if (seccomp_add_priv_rules(c, deny, err) < 0)
		return -1;
	/* New namespaces through clone/unshare, one rule per flag (rules OR). */
	for (size_t i = 0; i < SECCOMP_N_NS_FLAGS; i++) {
		a = SCMP_A0(SCMP_CMP_MASKED_EQ, seccomp_ns_flags[i].flag, seccomp_ns_flags[i].flag);
		if (((rules & SYS_R_CLONE_NS) && rule(c, deny, "clone", 1, &a, err) < 0) ||
		    ((rules & SYS_R_UNSHARE_NS) && rule(c, deny, "unshare", 1, &a, err) < 0))
			return -1;
	}
	/* Terminal injection. */
	if (rules & SYS_R_IOCTL_TTY) {
		const unsigned long req[] = {TIOCSTI, TIOCLINUX};
		for (size_t i = 0; i < ARRAY_SIZE(req); i++) {
			a = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, req[i]);
			if (rule(c, deny, "ioctl", 1, &a, err) < 0)
				return -1;
		}
	}
	if (rules & SYS_R_PERSONALITY) {
		for (size_t i = 0; i < SECCOMP_N_BAD_PERSONA; i++) {
			a = SCMP_A0(SCMP_CMP_MASKED_EQ, seccomp_bad_persona[i] | 0x80000000UL, seccomp_bad_persona[i]);
			if (rule(c, deny, "personality", 1, &a, err) < 0)
				return -1;
		}
	}
	if (rules & SYS_R_SOCKET) {
		/* Families other than unix, inet, inet6 and (route-only) netlink. */
		if (deny_families_but(c, deny, (const int[]){AF_UNIX, AF_INET, AF_INET6, AF_NETLINK}, 4, err) < 0)
			return -1;
		struct scmp_arg_cmp nl[2] = {SCMP_A0(SCMP_CMP_EQ, AF_NETLINK), SCMP_A2(SCMP_CMP_NE, 0)};
		if (rule(c, deny, "socket", 2, nl, err) < 0)
			return -1;
		/* Raw and packet sockets on inet: a boundary matter, not only a
		 * capability one, so they are refused and reported. */
		const int fams[] = {AF_INET, AF_INET6};
		const int types[] = {SOCK_RAW, SOCK_PACKET};
		for (size_t f = 0; f < 2; f++)
			for (size_t t = 0; t < 2; t++) {
				struct scmp_arg_cmp rw[2] = {SCMP_A0(SCMP_CMP_EQ, (uint64_t)fams[f]),
							     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, (uint64_t)types[t])};
				if (rule(c, deny, "socket", 2, rw, err) < 0)
					return -1;
			}
	}
	return degraded_rules(c, deny, rules, deny_list, err);
}

int seccomp_deny_list(const cordon_policy *p, strv *out)
{
	for (const char *const *n = seccomp_default_deny; *n; n++)
		if (!in_list(&p->sys_allow, *n) && strv_push(out, *n) < 0)
			return -1;
	for (size_t i = 0; i < p->sys_deny.n; i++) {
		bool dup = false;
		for (const char *const *n = seccomp_default_deny; *n; n++)
			dup |= strcmp(*n, p->sys_deny.v[i]) == 0;
		if (!dup && strv_push(out, p->sys_deny.v[i]) < 0)
			return -1;
	}
	return 0;
}

int seccomp_build(const cordon_policy *p, bool notify, const char *const *observe,
		  struct seccomp_plan *out, cordon_error *err)
{
	/* The plan of p alone (the syscall part of model_build_run). */
	struct model_run r = {.sys_rules = seccomp_rules(p), .sys_deny_policy = p->sys_deny};
	if (seccomp_deny_list(p, &r.sys_deny) < 0) {
		strv_free(&r.sys_deny);
		memset(out, 0, sizeof(*out));
		out->memfd = -1;
		return cordon_oom(err);
	}
	int rc = seccomp_build_from(&r, notify, observe, out, err);
	strv_free(&r.sys_deny);
	return rc;
}

int seccomp_plan_export(void *c, bool notify, struct seccomp_plan *out, cordon_error *err)
{
	_cleanup_close_ int fd = -1;
	int r = -1;
	/* Export the BPF through a memfd (libseccomp 2.5 has no memory export). */
	fd = memfd_create("cordon-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || (r = seccomp_export_bpf(c, fd)) < 0)
		return cordon_err(err, r < 0 ? -r : errno, "seccomp: export the filter");
	off_t size = lseek(fd, 0, SEEK_CUR);
	if (size <= 0 || size % (off_t)sizeof(struct sock_filter) || size / 8 > 65535) {
		r = cordon_err(err, 0, "seccomp: bad filter size %lld", (long long)size);
		goto fail;
	}
	if (size / (off_t)sizeof(struct sock_filter) + NEWER_PREFIX_LEN > BPF_MAXINSNS) {
		r = cordon_err(err, 0, "seccomp: the filter is too long (%lld instructions)",
			       (long long)(size / (off_t)sizeof(struct sock_filter)));
		goto fail;
	}
	out->insns = malloc((size_t)size + NEWER_PREFIX_LEN * sizeof(struct sock_filter));
	if (!out->insns || pread(fd, out->insns + NEWER_PREFIX_LEN, (size_t)size, 0) != size) {
		r = cordon_err(err, errno ? errno : 12, "seccomp: read the filter");
		goto fail;
	}
	/* The calls newer than the table first; then libseccomp's program,
	 * whose jumps are relative, as exported. The memfd gets the whole. */
	size += (off_t)(newer_prefix(out->insns, notify) * sizeof(struct sock_filter));
	out->len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
	if (ftruncate(fd, 0) < 0 || pwrite(fd, out->insns, (size_t)size, 0) != size) {
		r = cordon_err_errno(err, "seccomp: write the filter");
		goto fail;
	}
	/* Sealed: neither side can change the program once it is built. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		r = cordon_err_errno(err, "seccomp: seal the filter");
		goto fail;
	}
	out->memfd = TAKE_FD(fd);
	return 0;
fail:
	free(out->insns);
	out->insns = NULL;
	out->len = 0;
	return r;
}

int seccomp_build_from(const struct model_run *plan, bool notify, const char *const *observe,
		       struct seccomp_plan *out, cordon_error *err)
{
	const strv *deny_list = &plan->sys_deny, *denied = &plan->sys_deny_policy;
	unsigned rules = plan->sys_rules;
	memset(out, 0, sizeof(*out));
	out->memfd = -1;
	out->notify = seccomp_plan_listens(notify, rules);
	out->observe = observe && notify;
	scmp_filter_ctx c = seccomp_init(SCMP_ACT_ALLOW);
	if (!c)
		return cordon_err(err, 12, "seccomp_init");
	int r = -1;
	uint32_t deny = notify ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EPERM);
	/* Another ABI on this kernel (i386 through int 0x80, x32) is killed,
	 * not merely unlisted: the list below only names native calls. */
	if (seccomp_attr_set(c, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0) {
		cordon_err(err, 0, "seccomp: bad-arch action");
		goto out;
	}
	for (size_t i = 0; i < deny_list->n; i++)
		if (rule(c, deny, deny_list->v[i], 0, NULL, err) < 0)
			goto out;
	/* clone3 keeps its flags in memory, out of the filter's reach: every
	 * call fails with ENOSYS (libc falls back to clone, which the rules
	 * above inspect). With notification the supervisor answers that ENOSYS
	 * itself, after reading the flags only to report namespace requests. */
	if ((rules & SYS_R_CLONE3) &&
	    rule(c, notify ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL, err) < 0)
		goto out;
	if (add_conditional(c, deny, rules, deny_list, err) < 0)
		goto out;
	/* openat2 keeps its mode in memory too: ENOSYS, and libc falls back to
	 * openat, whose mode the rules above inspect. Not reported: it is not
	 * a denial, only a way round a check. */
	if ((rules & SYS_R_OPENAT2) && rule(c, SCMP_ACT_ERRNO(ENOSYS), "openat2", 0, NULL, err) < 0)
		goto out;
	/* connect: recorded when it bypasses the proxy (never decided here: the
	 * run has no route, and Landlock refuses other TCP ports). */
	if (notify && (rules & SYS_R_CONNECT) && rule(c, SCMP_ACT_NOTIFY, "connect", 0, NULL, err) < 0)
		goto out;
	/* sendto with a destination (a datagram to an address of its choosing):
	 * recorded the same way. send() passes none and is never stopped. */
	struct scmp_arg_cmp to = SCMP_A4(SCMP_CMP_NE, 0);
	if (notify && (rules & SYS_R_SENDTO) && rule(c, SCMP_ACT_NOTIFY, "sendto", 1, &to, err) < 0)
		goto out;
	/* bind: only when Landlock holds TCP to the declared loopback ports,
	 * so that a bind it refuses is on record (never decided here). */
	if (notify && (rules & SYS_R_BIND) &&
	    rule(c, SCMP_ACT_NOTIFY, "bind", 0, NULL, err) < 0)
		goto out;
	/* network.transparent: a socket the supervisor hands in is of the
	 * host's network namespace. TCP Fast Open's connect (sendmsg and
	 * sendmmsg keep their address out of reach) would take one anywhere
	 * undecided once it is closed: refused, as a host without Fast Open
	 * refuses it (clients then connect; sendto is the observer's). bind
	 * and listen reach the observer, which refuses them on such a socket
	 * (sup-connect.c) and lets the run's own through. */
	if (rules & SYS_R_HOSTSOCK) {
		struct scmp_arg_cmp fo2 = SCMP_A2(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN);
		struct scmp_arg_cmp fo3 = SCMP_A3(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN);
		if ((!in_list(deny_list, "sendmsg") &&
		     rule(c, SCMP_ACT_ERRNO(EOPNOTSUPP), "sendmsg", 1, &fo2, err) < 0) ||
		    (!in_list(deny_list, "sendmmsg") &&
		     rule(c, SCMP_ACT_ERRNO(EOPNOTSUPP), "sendmmsg", 1, &fo3, err) < 0))
			goto out;
		if (notify && !(rules & SYS_R_BIND) && !in_list(deny_list, "bind") &&
		    rule(c, SCMP_ACT_NOTIFY, "bind", 0, NULL, err) < 0)
			goto out;
		if (notify && !in_list(deny_list, "listen") && rule(c, SCMP_ACT_NOTIFY, "listen", 0, NULL, err) < 0)
			goto out;
	}
	if (out->observe) {
		for (const char *const *n = observe; *n; n++)
			if (!in_list(denied, *n) && rule(c, SCMP_ACT_NOTIFY, *n, 0, NULL, err) < 0)
				goto out;
	}
	r = seccomp_plan_export(c, notify, out, err);
out:
	seccomp_release(c);
	if (r < 0)
		seccomp_plan_free(out);
	return r;
}

int seccomp_prepare_run(const cordon_policy *p, bool *enabled, bool *notify, cordon_error *err)
{
	*enabled = *notify = false;
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) {
		if (!(p->allow_weaker & WEAK_SECCOMP))
			return cordon_err(err, 0, "seccomp is not available on this kernel; set enforcement.allow_weaker [\"seccomp\"] to run without a syscall filter");
		return 0;
	}
	unsigned int act = SECCOMP_RET_USER_NOTIF;
	*notify = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &act) == 0;
	*enabled = true;
	return 0;
}

void seccomp_plan_free(struct seccomp_plan *sp)
{
	if (sp->memfd >= 0)
		close(sp->memfd);
	sp->memfd = -1;
	free(sp->insns);
	sp->insns = NULL;
	sp->len = 0;
}

int seccomp_apply(const struct seccomp_plan *sp, int *listener, cordon_error *err)
{
	struct sock_fprog prog = {sp->len, sp->insns};
	unsigned flags = sp->notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
	if (r < 0)
		return cordon_err_errno(err, "seccomp(SECCOMP_SET_MODE_FILTER)");
	*listener = sp->notify ? (int)r : -1;
	return 0;
}

unsigned long seccomp_namespace_flags(void)
{
	unsigned long all = 0;
	for (size_t i = 0; i < SECCOMP_N_NS_FLAGS; i++)
		all |= seccomp_ns_flags[i].flag;
	return all;
}

int seccomp_map_fd(int memfd, bool notify, struct seccomp_plan *out, cordon_error *err)
{
	struct stat st;
	memset(out, 0, sizeof(*out));
	out->memfd = -1;
	if (fstat(memfd, &st) < 0 || st.st_size <= 0 || st.st_size % (off_t)sizeof(struct sock_filter) ||
	    st.st_size / (off_t)sizeof(struct sock_filter) > 65535)
		return cordon_err(err, EINVAL, "seccomp: the filter received is malformed");
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, memfd, 0);
	if (m == MAP_FAILED)
		return cordon_err_errno(err, "seccomp: map the filter");
	out->insns = m;
	out->len = (unsigned short)(st.st_size / (off_t)sizeof(struct sock_filter));
	out->notify = notify;
	return 0;
}

void seccomp_unmap(struct seccomp_plan *sp)
{
	if (sp->insns)
		munmap(sp->insns, (size_t)sp->len * sizeof(struct sock_filter));
	sp->insns = NULL;
	sp->len = 0;
}

int seccomp_apply_fd(int memfd, bool notify, int *listener, cordon_error *err)
{
	struct seccomp_plan sp;
	if (seccomp_map_fd(memfd, notify, &sp, err) < 0)
		return -1;
	int r = seccomp_apply(&sp, listener, err);
	seccomp_unmap(&sp);
	return r;
}

static const char *family_name(uint64_t f)
{
	static const char *const names[46] = {
		[0] = "AF_UNSPEC", [3] = "AF_AX25", [4] = "AF_IPX", [5] = "AF_APPLETALK",
		[6] = "AF_NETROM", [7] = "AF_BRIDGE", [8] = "AF_ATMPVC", [9] = "AF_X25",
		[11] = "AF_ROSE", [12] = "AF_DECnet", [13] = "AF_NETBEUI", [14] = "AF_SECURITY",
		[15] = "AF_KEY", [16] = "AF_NETLINK", [17] = "AF_PACKET", [18] = "AF_ASH",
		[19] = "AF_ECONET", [20] = "AF_ATMSVC", [21] = "AF_RDS", [22] = "AF_SNA",
		[23] = "AF_IRDA", [24] = "AF_PPPOX", [25] = "AF_WANPIPE", [26] = "AF_LLC",
		[27] = "AF_IB", [28] = "AF_MPLS", [29] = "AF_CAN", [30] = "AF_TIPC",
		[31] = "AF_BLUETOOTH", [32] = "AF_IUCV", [33] = "AF_RXRPC", [34] = "AF_ISDN",
		[35] = "AF_PHONET", [36] = "AF_IEEE802154", [37] = "AF_CAIF", [38] = "AF_ALG",
		[39] = "AF_NFC", [40] = "AF_VSOCK", [41] = "AF_KCM", [42] = "AF_QIPCRTR",
		[43] = "AF_SMC", [44] = "AF_XDP", [45] = "AF_MCTP",
	};
	return f < 46 && names[f] ? names[f] : NULL;
}

void seccomp_denial_target(int nr, const uint64_t args[6], char *out, size_t outsz)
{
	const char *known = systab_name(systab_native(), nr);
	char *name = known ? NULL : seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
	const char *n = known ? known : name;
	if (!n) {
		snprintf(out, outsz, "syscall %d%s", nr, systab_newer(nr) ? " (newer than cordon's table)" : "");
		return;
	}
	const struct priv_call *pc;
	if (strcmp(n, "clone") == 0 || strcmp(n, "unshare") == 0 || strcmp(n, "clone3") == 0) {
		char flags[256] = "";
		for (size_t i = 0; i < SECCOMP_N_NS_FLAGS; i++)
			if (args[0] & seccomp_ns_flags[i].flag) {
				if (flags[0])
					strncat(flags, "|", sizeof(flags) - strlen(flags) - 1);
				strncat(flags, seccomp_ns_flags[i].name, sizeof(flags) - strlen(flags) - 1);
			}
		snprintf(out, outsz, "%s(%s)", n, flags);
	} else if (strcmp(n, "ioctl") == 0) {
		uint32_t req = (uint32_t)args[1];
		snprintf(out, outsz, "ioctl(%s)", req == TIOCSTI ? "TIOCSTI" : req == TIOCLINUX ? "TIOCLINUX" : "?");
	} else if (strcmp(n, "socket") == 0) {
		const char *fam = family_name(args[0]);
		int type = (int)(args[1] & 0xf);
		if ((args[0] == AF_INET || args[0] == AF_INET6) && (type == SOCK_RAW || type == SOCK_PACKET))
			snprintf(out, outsz, "socket(%s, %s)", args[0] == AF_INET ? "AF_INET" : "AF_INET6",
				 type == SOCK_RAW ? "SOCK_RAW" : "SOCK_PACKET");
		else if (args[0] == AF_NETLINK)
			snprintf(out, outsz, "socket(AF_NETLINK, protocol %llu)", (unsigned long long)args[2]);
		else if (fam)
			snprintf(out, outsz, "socket(%s)", fam);
		else
			snprintf(out, outsz, "socket(%llu)", (unsigned long long)args[0]);
	} else if ((pc = seccomp_priv_call(nr))) {
		snprintf(out, outsz, "%s(mode 0%o)", n, (unsigned)(args[pc->mode] & 07777));
	} else if (strcmp(n, "setxattr") == 0 || strcmp(n, "lsetxattr") == 0 || strcmp(n, "fsetxattr") == 0) {
		snprintf(out, outsz, "%s(size %llu)", n, (unsigned long long)args[3]);
	} else if (strcmp(n, "personality") == 0) {
		snprintf(out, outsz, "personality(0x%llx)", (unsigned long long)(uint32_t)args[0]);
	} else {
		snprintf(out, outsz, "%s", n);
	}
	free(name);
}
