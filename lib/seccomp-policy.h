/* The syscall layer: a libseccomp filter compiled in the supervisor, loaded
 * by init with one raw seccomp(2) call.
 *
 * Actions:
 *  - the default deny list (seccomp-policy.c, docs/seccomp.md) and syscalls.deny:
 *    SECCOMP_RET_USER_NOTIF; the supervisor names the call, counts it, and
 *    always answers EPERM. The decision is the filter's: a notification only
 *    records it (and if the supervisor is gone the call fails with ENOSYS).
 *    Without user notification on the host: SECCOMP_RET_ERRNO(EPERM), unreported.
 *  - path syscalls (open, exec, unlink, rename, ...): USER_NOTIF answered with
 *    CONTINUE, so the supervisor can record file denials; the kernel (mount
 *    view, read-only binds, Landlock) decides. Off when not reporting.
 *  - clone3: ENOSYS, so libc falls back to clone, whose flags are inspectable.
 *  - privilege bits: chmod, fchmod, fchmodat, fchmodat2 with S_ISUID or
 *    S_ISGID in the mode; open/openat (O_CREAT or O_TMPFILE), creat, mknod,
 *    mknodat creating with them: denied like the deny list, never allowed
 *    back by syscalls.allow. A S_ISGID chmod of a directory is refused
 *    too (letting it through raced with a rename that swapped a file in).
 *    openat2: ENOSYS (its mode is in memory), unreported.
 *  - any other ABI (i386 via int 0x80, x32): the process is killed.
 *  - a native call numbered above cordon's table (lib/systab.h): ENOSYS,
 *    reported as "syscall N (newer than cordon's table)" (notification). */
#pragma once
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <sys/types.h>
#include "policy.h"

struct seccomp_plan {
	struct sock_filter *insns;
	unsigned short len;
	int memfd;     /* the same program, sealed read-only, for init */
	bool notify;   /* deny rules report through user notification */
	bool observe;  /* path syscalls are observed */
};

/* The filter's rules beyond the calls it refuses outright: which are in
 * effect is the syscall plan's (model_run.sys_rules), decided once from
 * syscalls.allow and syscalls.deny by seccomp_rules. */
enum {
	SYS_R_CLONE_NS = 1u << 0,    /* clone with a CLONE_NEW* flag (not allowed "clone") */
	SYS_R_UNSHARE_NS = 1u << 1,  /* unshare with one (not allowed "unshare") */
	SYS_R_IOCTL_TTY = 1u << 2,   /* ioctl TIOCSTI, TIOCLINUX (not allowed "ioctl") */
	SYS_R_PERSONALITY = 1u << 3, /* personality's unsafe personas (not allowed "personality") */
	SYS_R_SOCKET = 1u << 4,      /* socket families but unix, inet, inet6 and route
				      * netlink; raw and packet inet (not allowed "socket") */
	SYS_R_CLONE3 = 1u << 5,      /* clone3: ENOSYS (neither allowed nor denied) */
	SYS_R_OPENAT2 = 1u << 6,     /* openat2: ENOSYS (not denied) */
	SYS_R_CONNECT = 1u << 7,     /* connect recorded, with notification (not denied) */
	SYS_R_SENDTO = 1u << 8,      /* sendto to an address recorded (not denied) */
	SYS_R_BIND = 1u << 9,        /* bind recorded: loopback ports declared (not denied) */
	SYS_R_HOSTSOCK = 1u << 10,   /* network.transparent: sendmsg/sendmmsg with MSG_FASTOPEN
				      * refused (EOPNOTSUPP); bind and listen notified, so that
				      * a socket handed in (the host's) is never bound or
				      * listening (each not denied) */
	/* The degraded boundary's (no namespaces, docs/hosts.md): */
	SYS_R_NO_SOCKET = 1u << 11,  /* socket refused, every family (no network declared:
				      * the host's network is the run's; a unix socket would
				      * reach the host's daemons); socketpair stays */
	SYS_R_STREAM_ONLY = 1u << 12, /* socket: families but inet and inet6 refused (unix
				      * too), and inet sockets but SOCK_STREAM (datagram, raw...) */
	SYS_R_KEEP_PGRP = 1u << 13,  /* setsid, setpgid refused: the run's process group is
				      * how it is reaped (no PID namespace) */
	SYS_R_DEGRADED_NET = 1u << 14, /* endpoints kept behind the proxy: connect is a user
				      * notification whatever the deny rules do (the plan
				      * listens), answered by the supervisor, never continued
				      * (sup-degrade-net.h); bind and listen refused (EACCES);
				      * sendto, sendmsg and sendmmsg with MSG_FASTOPEN (a
				      * connect Landlock does not see) refused (EOPNOTSUPP) */
};
/* Does a filter built with notify and rules have a listener? */
static inline bool seccomp_plan_listens(bool notify, unsigned rules)
{
	return notify || (rules & SYS_R_DEGRADED_NET);
}
/* The SYS_R_* rules policy p leaves in effect. The privilege-bit rules are
 * always in (no syscalls.allow entry lifts them). */
unsigned seccomp_rules(const cordon_policy *p);
struct model_run;
/* Supervisor: compile the filter for policy p. observe: the path calls to
 * trap for the observer (NULL-terminated; sup-observe.c owns the list), or NULL. */
int seccomp_build(const cordon_policy *p, bool notify, const char *const *observe,
		  struct seccomp_plan *out, cordon_error *err);
/* The calls the filter refuses outright, in the order it adds them: the
 * default list (seccomp_default_deny) minus syscalls.allow, then
 * syscalls.deny's others. Appended to out (the boundary model's). */
int seccomp_deny_list(const cordon_policy *p, strv *out);
/* The filter of a syscall plan (the model's: model_run.sys_deny, sys_rules,
 * and sys_deny_policy, whose calls the observer does not trap again); it
 * reads no policy. seccomp_build is this over the plan of p. */
int seccomp_build_from(const struct model_run *r, bool notify, const char *const *observe,
		       struct seccomp_plan *out, cordon_error *err);
void seccomp_plan_free(struct seccomp_plan *sp);
/* Supervisor, before clone, for a run of policy p: is there a filter at all
 * (*enabled; no seccomp on this kernel is an error unless p accepts weaker
 * enforcement, WEAK_SECCOMP), and can denials be reported through user
 * notification (*notify). The filter itself is compiled after clone. */
int seccomp_prepare_run(const cordon_policy *p, bool *enabled, bool *notify, cordon_error *err);
/* init: load it (no_new_privs must be set). *listener gets the notification
 * fd, or -1. */
int seccomp_apply(const struct seccomp_plan *sp, int *listener, cordon_error *err);
/* init: load the program from the sealed memfd the supervisor sent (mapped,
 * not copied: nothing is allocated in the child). */
int seccomp_apply_fd(int memfd, bool notify, int *listener, cordon_error *err);
/* The same in two steps: the program mapped into *out (before the run's
 * rlimits: RLIMIT_AS is the command's, not init's), then seccomp_apply and
 * seccomp_unmap. */
int seccomp_map_fd(int memfd, bool notify, struct seccomp_plan *out, cordon_error *err);
void seccomp_unmap(struct seccomp_plan *sp);

/* Supervisor: a report target for a denied call, e.g. "unshare(CLONE_NEWUSER)",
 * "ioctl(TIOCSTI)", "socket(AF_PACKET)". */
void seccomp_denial_target(int nr, const uint64_t args[6], char *out, size_t outsz);
/* A call that can set a privilege bit on a file: the argument index of its
 * mode, of open's flags, dirfd, path, fd-or-dirfd for AT_EMPTY_PATH and *at
 * flags (-1: none). */
struct priv_call {
	const char *name;
	int mode, flags, dirfd, path, atflags;
	bool chmod; /* changes an existing file's mode (else: creates one) */
};
/* The privilege bits (S_ISUID|S_ISGID) call nr with args asks for; 0 if none,
 * or if it is not such a call, or an open that creates nothing. */
mode_t seccomp_priv_bits(int nr, const uint64_t args[6]);
/* Rules on filter c (a scmp_filter_ctx) answering deny to every call that
 * can put S_ISUID or S_ISGID on a file (the chmod family with either bit, an
 * open, creat or mknod that creates with either): cordon run's, and
 * cordon-oci's deny list (an idmapped root's files are the host's). */
int seccomp_add_priv_rules(void *c, uint32_t deny, cordon_error *err);
/* Rules on filter c answering deny to setxattr, lsetxattr and fsetxattr
 * with a value of 20 or 24 bytes, the only sizes a file capability
 * (security.capability) can have: cordon-oci's deny list, where root inside
 * holds CAP_SETFCAP and its idmapped root's files are the host's. Another
 * attribute of exactly those sizes is refused too (the filter cannot read
 * the name). cordon run has no capability to write one (docs/seccomp.md). */
int seccomp_add_fcap_rules(void *c, uint32_t deny, cordon_error *err);
/* A rule answering act to every call of name (cordon's table first, then
 * libseccomp's names: a call libseccomp does not know is still numbered). */
int seccomp_add_named(void *c, uint32_t act, const char *name, cordon_error *err);
/* Export filter c as a plan (out->insns, len, memfd; notify and observe are
 * left to the caller): libseccomp's program behind the instructions that
 * refuse calls newer than cordon's table (ENOSYS; USER_NOTIF with notify,
 * for the listener to answer ENOSYS and report). */
int seccomp_plan_export(void *c, bool notify, struct seccomp_plan *out, cordon_error *err);
/* All CLONE_NEW* flags. */
unsigned long seccomp_namespace_flags(void);
/* The native number of system call name: cordon's table (lib/systab.h)
 * first, libseccomp's after it; __NR_SCMP_ERROR if neither knows it. */
int seccomp_syscall_number(const char *name);
/* The default deny list, for explain and docs. NULL-terminated. */
extern const char *const seccomp_default_deny[];
