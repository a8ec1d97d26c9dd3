/* probe-restrict MODE CMD [ARG...]: runs CMD under a seccomp filter that
 * makes this host look like a restricted one (issue 35, docs/hosts.md):
 *   nouserns   clone3 is ENOSYS (as Docker's default profile answers it) and
 *              clone/unshare with CLONE_NEWUSER are EPERM: no user namespace
 *   nolandlock the landlock_* calls are ENOSYS (as gVisor)
 *   neither    both: no user namespace and no Landlock (the degraded
 *              boundary is refused there whatever allow_weaker says)
 *   noseccomp  no user namespace, and prctl(PR_GET_SECCOMP) is EINVAL (as a
 *              kernel without CONFIG_SECCOMP answers it)
 *   nonotify   no user namespace, and seccomp(SECCOMP_GET_ACTION_AVAIL) is
 *              EOPNOTSUPP (as a kernel before 5.0 answers it for user
 *              notification): the degraded boundary cannot keep the proxy
 * Static, raw BPF: nothing but the kernel. x86_64 only (else it runs CMD
 * unfiltered and says so on stderr, exit 3). */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NR_OFF offsetof(struct seccomp_data, nr)
#define ARCH_OFF offsetof(struct seccomp_data, arch)
#define ARG0_OFF offsetof(struct seccomp_data, args[0])
#define ERRNO(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: probe-restrict nouserns|nolandlock|neither|noseccomp|nonotify CMD [ARG...]\n");
		return 2;
	}
#ifndef __x86_64__
	fprintf(stderr, "probe-restrict: x86_64 only\n");
	return 3;
#else
	struct sock_filter userns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARCH_OFF),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR_OFF),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ERRNO(ENOSYS)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_OFF),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ERRNO(EPERM)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter landlock[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARCH_OFF),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR_OFF),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 444, 0, 2), /* landlock_create_ruleset */
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 446, 1, 0), /* landlock_restrict_self */
		BPF_STMT(BPF_RET | BPF_K, ERRNO(ENOSYS)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter noseccomp[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARCH_OFF),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR_OFF),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_OFF),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_GET_SECCOMP, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ERRNO(EINVAL)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter nonotify[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARCH_OFF),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR_OFF),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_seccomp, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_OFF),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_GET_ACTION_AVAIL, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ERRNO(EOPNOTSUPP)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog, also = {0, NULL};
	if (strcmp(argv[1], "nouserns") == 0)
		prog = (struct sock_fprog){sizeof(userns) / sizeof(userns[0]), userns};
	else if (strcmp(argv[1], "nolandlock") == 0)
		prog = (struct sock_fprog){sizeof(landlock) / sizeof(landlock[0]), landlock};
	else if (strcmp(argv[1], "neither") == 0) {
		prog = (struct sock_fprog){sizeof(userns) / sizeof(userns[0]), userns};
		also = (struct sock_fprog){sizeof(landlock) / sizeof(landlock[0]), landlock};
	} else if (strcmp(argv[1], "noseccomp") == 0) {
		prog = (struct sock_fprog){sizeof(userns) / sizeof(userns[0]), userns};
		also = (struct sock_fprog){sizeof(noseccomp) / sizeof(noseccomp[0]), noseccomp};
	} else if (strcmp(argv[1], "nonotify") == 0) {
		prog = (struct sock_fprog){sizeof(userns) / sizeof(userns[0]), userns};
		also = (struct sock_fprog){sizeof(nonotify) / sizeof(nonotify[0]), nonotify};
	} else {
		fprintf(stderr, "probe-restrict: unknown mode %s\n", argv[1]);
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0 ||
	    (also.len && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &also) < 0)) {
		perror("probe-restrict: seccomp");
		return 2;
	}
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
#endif
}
