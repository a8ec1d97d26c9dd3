/* The compiled filter, run through a classic-BPF interpreter over a table of
 * (arch, syscall, arguments) -> action: the decision the kernel will make,
 * checked without loading anything (cf. libseccomp's bpf-sim tests). */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "unit.h"
#include "model.h"
#include "policy.h"
#include "observe.h"
#include "seccomp-policy.h"

static uint32_t run_bpf(const struct sock_filter *f, unsigned len, const struct seccomp_data *d)
{
	uint32_t A = 0, X = 0, M[BPF_MEMWORDS] = {0};
	for (unsigned pc = 0; pc < len; pc++) {
		const struct sock_filter *i = &f[pc];
		uint32_t k = i->k, src;
		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
			if (BPF_MODE(i->code) == BPF_ABS) {
				assert_true(k + 4 <= sizeof(*d));
				memcpy(&A, (const char *)d + k, 4);
			} else if (BPF_MODE(i->code) == BPF_IMM) {
				A = k;
			} else if (BPF_MODE(i->code) == BPF_MEM) {
				A = M[k];
			} else {
				fail_msg("unsupported LD mode %#x", i->code);
			}
			break;
		case BPF_LDX:
			X = BPF_MODE(i->code) == BPF_MEM ? M[k] : k;
			break;
		case BPF_ST:
			M[k] = A;
			break;
		case BPF_STX:
			M[k] = X;
			break;
		case BPF_ALU:
			src = BPF_SRC(i->code) == BPF_X ? X : k;
			switch (BPF_OP(i->code)) {
			case BPF_ADD: A += src; break;
			case BPF_SUB: A -= src; break;
			case BPF_AND: A &= src; break;
			case BPF_OR: A |= src; break;
			case BPF_LSH: A <<= src; break;
			case BPF_RSH: A >>= src; break;
			case BPF_NEG: A = -A; break;
			default: fail_msg("unsupported ALU op %#x", i->code);
			}
			break;
		case BPF_JMP:
			src = BPF_SRC(i->code) == BPF_X ? X : k;
			if (BPF_OP(i->code) == BPF_JA) {
				pc += k;
				break;
			}
			bool t;
			switch (BPF_OP(i->code)) {
			case BPF_JEQ: t = A == src; break;
			case BPF_JGT: t = A > src; break;
			case BPF_JGE: t = A >= src; break;
			case BPF_JSET: t = (A & src) != 0; break;
			default: fail_msg("unsupported JMP op %#x", i->code); t = false;
			}
			pc += t ? i->jt : i->jf;
			break;
		case BPF_RET:
			return BPF_RVAL(i->code) == BPF_A ? A : k;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				X = A;
			else
				A = X;
			break;
		default:
			fail_msg("unsupported class %#x", i->code);
		}
	}
	fail_msg("filter fell off its end");
	return 0;
}

struct call {
	const char *what;
	uint32_t arch;
	int nr;           /* -1: use name */
	const char *name;
	uint64_t args[6];
	uint32_t action;  /* SECCOMP_RET_* (action part only) */
	uint32_t data;    /* errno for ERRNO */
};

static uint32_t decide(const struct seccomp_plan *sp, const struct call *c)
{
	struct seccomp_data d;
	memset(&d, 0, sizeof(d));
	d.arch = c->arch;
	d.nr = c->nr >= 0 ? c->nr : seccomp_syscall_resolve_name(c->name);
	memcpy(d.args, c->args, sizeof(d.args));
	return run_bpf(sp->insns, sp->len, &d);
}

#define X86_64 AUDIT_ARCH_X86_64
#define I386 AUDIT_ARCH_I386
#define N(name) X86_64, -1, name

static void test_default_policy_table(void **st)
{
	cordon_policy *p = policy_new();
	struct seccomp_plan sp;
	cordon_error e;
	assert_int_equal(seccomp_build(p, true, observer_calls, &sp, &e), 0);
	const struct call table[] = {
		{"plain read", N("read"), {0}, SECCOMP_RET_ALLOW, 0},
		{"mount", N("mount"), {0}, SECCOMP_RET_USER_NOTIF, 0},
		{"bpf", N("bpf"), {0}, SECCOMP_RET_USER_NOTIF, 0},
		{"io_uring_setup", N("io_uring_setup"), {0}, SECCOMP_RET_USER_NOTIF, 0},
		{"keyctl", N("keyctl"), {0}, SECCOMP_RET_USER_NOTIF, 0},
		{"kexec_load", N("kexec_load"), {0}, SECCOMP_RET_USER_NOTIF, 0},
		{"unshare(CLONE_NEWUSER)", N("unshare"), {CLONE_NEWUSER}, SECCOMP_RET_USER_NOTIF, 0},
		{"unshare(CLONE_FILES)", N("unshare"), {CLONE_FILES}, SECCOMP_RET_ALLOW, 0},
		{"clone(thread)", N("clone"), {CLONE_VM | CLONE_THREAD | CLONE_SIGHAND}, SECCOMP_RET_ALLOW, 0},
		{"clone(CLONE_NEWNET)", N("clone"), {CLONE_NEWNET | SIGCHLD}, SECCOMP_RET_USER_NOTIF, 0},
		{"clone(CLONE_NEWTIME)", N("clone"), {0x80}, SECCOMP_RET_USER_NOTIF, 0},
		{"clone3", N("clone3"), {0}, SECCOMP_RET_USER_NOTIF, 0},
		{"ioctl(TIOCSTI)", N("ioctl"), {0, TIOCSTI}, SECCOMP_RET_USER_NOTIF, 0},
		{"ioctl(TIOCSTI) high bits", N("ioctl"), {0, 0xffffffff00000000ULL | TIOCSTI}, SECCOMP_RET_USER_NOTIF, 0},
		{"ioctl(TCGETS)", N("ioctl"), {0, 0x5401}, SECCOMP_RET_ALLOW, 0},
		{"personality query", N("personality"), {0xffffffff}, SECCOMP_RET_ALLOW, 0},
		{"personality(PER_LINUX32)", N("personality"), {8}, SECCOMP_RET_ALLOW, 0},
		{"personality(ADDR_NO_RANDOMIZE)", N("personality"), {0x0040000}, SECCOMP_RET_USER_NOTIF, 0},
		{"personality(READ_IMPLIES_EXEC)", N("personality"), {0x0400000}, SECCOMP_RET_USER_NOTIF, 0},
		{"socket(AF_INET, STREAM)", N("socket"), {AF_INET, SOCK_STREAM}, SECCOMP_RET_ALLOW, 0},
		{"socket(AF_INET6, DGRAM|CLOEXEC)", N("socket"), {AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC}, SECCOMP_RET_ALLOW, 0},
		{"socket(AF_UNIX)", N("socket"), {AF_UNIX, SOCK_STREAM}, SECCOMP_RET_ALLOW, 0},
		{"socket(AF_NETLINK, ROUTE)", N("socket"), {AF_NETLINK, SOCK_RAW, 0}, SECCOMP_RET_ALLOW, 0},
		{"socket(AF_NETLINK, AUDIT)", N("socket"), {AF_NETLINK, SOCK_RAW, 9}, SECCOMP_RET_USER_NOTIF, 0},
		{"socket(AF_PACKET)", N("socket"), {17, SOCK_RAW}, SECCOMP_RET_USER_NOTIF, 0},
		{"socket(AF_VSOCK)", N("socket"), {40, SOCK_STREAM}, SECCOMP_RET_USER_NOTIF, 0},
		{"socket(99)", N("socket"), {99, SOCK_STREAM}, SECCOMP_RET_USER_NOTIF, 0},
		{"socket(AF_INET, RAW)", N("socket"), {AF_INET, SOCK_RAW}, SECCOMP_RET_USER_NOTIF, 0},
		{"openat (observed)", N("openat"), {0}, SECCOMP_RET_USER_NOTIF, 0},
		{"execve (observed)", N("execve"), {0}, SECCOMP_RET_USER_NOTIF, 0},
		{"stat (not observed)", N("newfstatat"), {0}, SECCOMP_RET_ALLOW, 0},
		{"connect (observed)", N("connect"), {3, 0x1000, 16}, SECCOMP_RET_USER_NOTIF, 0},
		{"sendto to an address (observed)", N("sendto"), {3, 0x1000, 1, 0, 0x2000, 16}, SECCOMP_RET_USER_NOTIF, 0},
		{"send (sendto without address)", N("sendto"), {3, 0x1000, 1, 0, 0, 0}, SECCOMP_RET_ALLOW, 0},
		{"ptrace (inside the run)", N("ptrace"), {0}, SECCOMP_RET_ALLOW, 0},
		/* Privilege bits: the mode is an integer the filter sees. */
		{"chmod 0755", N("chmod"), {0x1000, 0755}, SECCOMP_RET_ALLOW, 0},
		{"chmod 04755", N("chmod"), {0x1000, 04755}, SECCOMP_RET_USER_NOTIF, 0},
		{"chmod 02755", N("chmod"), {0x1000, 02755}, SECCOMP_RET_USER_NOTIF, 0},
		{"chmod 01777 (sticky)", N("chmod"), {0x1000, 01777}, SECCOMP_RET_ALLOW, 0},
		{"fchmod 06755", N("fchmod"), {3, 06755}, SECCOMP_RET_USER_NOTIF, 0},
		{"fchmod 0644", N("fchmod"), {3, 0644}, SECCOMP_RET_ALLOW, 0},
		{"fchmodat 04755", N("fchmodat"), {(uint64_t)-100, 0x1000, 04755}, SECCOMP_RET_USER_NOTIF, 0},
		{"fchmodat 0700", N("fchmodat"), {(uint64_t)-100, 0x1000, 0700}, SECCOMP_RET_ALLOW, 0},
		{"fchmodat2 04755", N("fchmodat2"), {(uint64_t)-100, 0x1000, 04755, 0}, SECCOMP_RET_USER_NOTIF, 0},
		{"mknod S_IFREG|04755", N("mknod"), {0x1000, 0104755}, SECCOMP_RET_USER_NOTIF, 0},
		{"mknodat S_IFREG|02755", N("mknodat"), {3, 0x1000, 0102755}, SECCOMP_RET_USER_NOTIF, 0},
		{"creat 04755", N("creat"), {0x1000, 04755}, SECCOMP_RET_USER_NOTIF, 0},
		{"openat2 (ENOSYS)", N("openat2"), {0}, SECCOMP_RET_ERRNO, 0},
		{"x32 getpid", X86_64, 0x40000000 | 39, NULL, {0}, SECCOMP_RET_KILL_PROCESS, 0},
		{"i386 getpid", I386, 20, NULL, {0}, SECCOMP_RET_KILL_PROCESS, 0},
		{"i386 mount", I386, 21, NULL, {0}, SECCOMP_RET_KILL_PROCESS, 0},
		{"aarch64", AUDIT_ARCH_AARCH64, 172, NULL, {0}, SECCOMP_RET_KILL_PROCESS, 0},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		uint32_t r = decide(&sp, &table[i]);
		if ((r & SECCOMP_RET_ACTION_FULL) != table[i].action)
			fail_msg("%s: action %#x, expected %#x", table[i].what, r & SECCOMP_RET_ACTION_FULL,
				 table[i].action);
	}
	seccomp_plan_free(&sp);
	policy_free(p);
}

static void test_without_notify(void **st)
{
	/* A host without user notification: denials are plain EPERM, clone3
	 * ENOSYS, nothing is observed. */
	cordon_policy *p = policy_new();
	struct seccomp_plan sp;
	cordon_error e;
	assert_int_equal(seccomp_build(p, false, observer_calls, &sp, &e), 0);
	assert_false(sp.observe);
	struct call c1 = {"mount", N("mount"), {0}, 0, 0};
	assert_int_equal(decide(&sp, &c1), SECCOMP_RET_ERRNO | EPERM);
	struct call c2 = {"clone3", N("clone3"), {0}, 0, 0};
	assert_int_equal(decide(&sp, &c2), SECCOMP_RET_ERRNO | ENOSYS);
	struct call c3 = {"openat", N("openat"), {0}, 0, 0};
	assert_int_equal(decide(&sp, &c3), SECCOMP_RET_ALLOW);
	/* Privilege bits: refused without a report. */
	const struct call priv[] = {
		{"chmod 04755", N("chmod"), {0x1000, 04755}, SECCOMP_RET_ERRNO | EPERM, 0},
		{"fchmodat 02755", N("fchmodat"), {3, 0x1000, 02755}, SECCOMP_RET_ERRNO | EPERM, 0},
		{"openat O_CREAT 04755", N("openat"), {3, 0x1000, O_CREAT | O_WRONLY, 04755}, SECCOMP_RET_ERRNO | EPERM, 0},
		{"openat O_TMPFILE 02755", N("openat"), {3, 0x1000, 020200000 | O_RDWR, 02755}, SECCOMP_RET_ERRNO | EPERM, 0},
		{"openat no O_CREAT, junk mode", N("openat"), {3, 0x1000, O_RDONLY, 04755}, SECCOMP_RET_ALLOW, 0},
		{"open O_CREAT 0644", N("open"), {0x1000, O_CREAT | O_WRONLY, 0644}, SECCOMP_RET_ALLOW, 0},
		{"open O_CREAT 06755", N("open"), {0x1000, O_CREAT | O_WRONLY, 06755}, SECCOMP_RET_ERRNO | EPERM, 0},
		{"mknod S_IFREG|04755", N("mknod"), {0x1000, 0104755}, SECCOMP_RET_ERRNO | EPERM, 0},
		{"openat2", N("openat2"), {3, 0x1000, 0x2000, 24}, SECCOMP_RET_ERRNO | ENOSYS, 0},
	};
	for (size_t i = 0; i < sizeof(priv) / sizeof(priv[0]); i++)
		if (decide(&sp, &priv[i]) != priv[i].action)
			fail_msg("%s: %#x, expected %#x", priv[i].what, decide(&sp, &priv[i]), priv[i].action);
	seccomp_plan_free(&sp);
	policy_free(p);
}

static void test_policy_adjustments(void **st)
{
	const char *j = "{\"syscalls\": {\"allow\": [\"mount\", \"personality\"], \"deny\": [\"uname\", \"ptrace\"]}}";
	cordon_policy *p = policy_new();
	cordon_error e;
	assert_int_equal(policy_load_json(p, j, strlen(j), "p", "/", &e), 0);
	struct seccomp_plan sp;
	assert_int_equal(seccomp_build(p, true, NULL, &sp, &e), 0);
	struct call allowed = {"mount re-allowed", N("mount"), {0}, 0, 0};
	assert_int_equal(decide(&sp, &allowed), SECCOMP_RET_ALLOW);
	struct call pers = {"personality re-allowed", N("personality"), {0x0040000}, 0, 0};
	assert_int_equal(decide(&sp, &pers), SECCOMP_RET_ALLOW);
	struct call denied = {"uname denied", N("uname"), {0}, 0, 0};
	assert_int_equal(decide(&sp, &denied) & SECCOMP_RET_ACTION_FULL, SECCOMP_RET_USER_NOTIF);
	struct call pt = {"ptrace denied", N("ptrace"), {0}, 0, 0};
	assert_int_equal(decide(&sp, &pt) & SECCOMP_RET_ACTION_FULL, SECCOMP_RET_USER_NOTIF);
	struct call open = {"openat not observed", N("openat"), {0}, 0, 0};
	assert_int_equal(decide(&sp, &open), SECCOMP_RET_ALLOW);
	/* Not observed, yet creating a setuid file is still refused. */
	struct call suid = {"openat O_CREAT 04755", N("openat"), {3, 0x1000, O_CREAT | O_WRONLY, 04755}, 0, 0};
	assert_int_equal(decide(&sp, &suid) & SECCOMP_RET_ACTION_FULL, SECCOMP_RET_USER_NOTIF);
	seccomp_plan_free(&sp);
	policy_free(p);
}

/* The conditional rules are the syscall plan's (model_run.sys_rules),
 * decided once from the policy (seccomp_rules, a table here); the filter
 * compiled from a plan follows the plan, not the policy. */
static void test_rules_from_the_plan(void **st)
{
	const unsigned all = SYS_R_CLONE_NS | SYS_R_UNSHARE_NS | SYS_R_IOCTL_TTY | SYS_R_PERSONALITY | SYS_R_SOCKET |
			     SYS_R_CLONE3 | SYS_R_OPENAT2 | SYS_R_CONNECT | SYS_R_SENDTO;
	const struct {
		const char *json;
		unsigned rules;
	} table[] = {
		{"{}", all},
		{"{\"syscalls\": {\"allow\": [\"clone\"]}}", all & ~SYS_R_CLONE_NS},
		{"{\"syscalls\": {\"allow\": [\"unshare\", \"ioctl\"]}}", all & ~(SYS_R_UNSHARE_NS | SYS_R_IOCTL_TTY)},
		{"{\"syscalls\": {\"allow\": [\"personality\", \"socket\"]}}", all & ~(SYS_R_PERSONALITY | SYS_R_SOCKET)},
		{"{\"syscalls\": {\"allow\": [\"clone3\"]}}", all & ~SYS_R_CLONE3},
		{"{\"syscalls\": {\"deny\": [\"clone3\", \"openat2\"]}}", all & ~(SYS_R_CLONE3 | SYS_R_OPENAT2)},
		{"{\"syscalls\": {\"deny\": [\"connect\", \"sendto\"]}}", all & ~(SYS_R_CONNECT | SYS_R_SENDTO)},
		{"{\"network\": {\"loopback_ports\": [8080]}}", all | SYS_R_BIND},
		{"{\"network\": {\"loopback_ports\": [8080]}, \"syscalls\": {\"deny\": [\"bind\"]}}", all},
	};
	cordon_error e;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		cordon_policy *p = policy_new();
		if (policy_load_json(p, table[i].json, strlen(table[i].json), "p", "/", &e) < 0)
			fail_msg("%s: %s", table[i].json, e.msg);
		if (seccomp_rules(p) != table[i].rules)
			fail_msg("%s: rules %#x, expected %#x", table[i].json, seccomp_rules(p), table[i].rules);
		policy_free(p);
	}
	/* The default policy's plan, less the terminal and clone3 rules: the
	 * filter lets TIOCSTI and clone3 through although the policy allows
	 * neither. */
	cordon_policy *p = policy_new();
	struct model_run r = {.sys_rules = seccomp_rules(p) & ~(SYS_R_IOCTL_TTY | SYS_R_CLONE3)};
	assert_int_equal(seccomp_deny_list(p, &r.sys_deny), 0);
	struct seccomp_plan sp, full;
	assert_int_equal(seccomp_build_from(&r, true, NULL, &sp, &e), 0);
	assert_int_equal(seccomp_build(p, true, NULL, &full, &e), 0);
	struct call sti = {"ioctl TIOCSTI", N("ioctl"), {0, TIOCSTI}, 0, 0};
	struct call c3 = {"clone3", N("clone3"), {0}, 0, 0};
	assert_int_equal(decide(&sp, &sti), SECCOMP_RET_ALLOW);
	assert_int_equal(decide(&sp, &c3), SECCOMP_RET_ALLOW);
	assert_int_equal(decide(&full, &sti) & SECCOMP_RET_ACTION_FULL, SECCOMP_RET_USER_NOTIF);
	assert_int_equal(decide(&full, &c3) & SECCOMP_RET_ACTION_FULL, SECCOMP_RET_USER_NOTIF);
	seccomp_plan_free(&sp);
	seccomp_plan_free(&full);
	strv_free(&r.sys_deny);
	policy_free(p);
}

static void test_denial_targets(void **st)
{
	char t[256];
	uint64_t a[6] = {CLONE_NEWUSER | CLONE_NEWNS, 0, 0, 0, 0, 0};
	seccomp_denial_target(seccomp_syscall_resolve_name("unshare"), a, t, sizeof(t));
	assert_string_equal(t, "unshare(CLONE_NEWNS|CLONE_NEWUSER)");
	uint64_t b[6] = {0, TIOCSTI, 0, 0, 0, 0};
	seccomp_denial_target(seccomp_syscall_resolve_name("ioctl"), b, t, sizeof(t));
	assert_string_equal(t, "ioctl(TIOCSTI)");
	uint64_t c[6] = {17, SOCK_RAW, 0, 0, 0, 0};
	seccomp_denial_target(seccomp_syscall_resolve_name("socket"), c, t, sizeof(t));
	assert_string_equal(t, "socket(AF_PACKET)");
	uint64_t m[6] = {(uint64_t)-100, 0x1000, 06755, 0, 0, 0};
	seccomp_denial_target(seccomp_syscall_resolve_name("fchmodat"), m, t, sizeof(t));
	assert_string_equal(t, "fchmodat(mode 06755)");
	assert_int_equal(seccomp_priv_bits(seccomp_syscall_resolve_name("fchmodat"), m), 06000);
	uint64_t o[6] = {(uint64_t)-100, 0x1000, O_RDONLY, 04755, 0, 0};
	assert_int_equal(seccomp_priv_bits(seccomp_syscall_resolve_name("openat"), o), 0);
	o[2] = O_CREAT | O_RDWR;
	assert_int_equal(seccomp_priv_bits(seccomp_syscall_resolve_name("openat"), o), 04000);
	uint64_t z[6] = {0};
	seccomp_denial_target(seccomp_syscall_resolve_name("bpf"), z, t, sizeof(t));
	assert_string_equal(t, "bpf");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_policy_table), cmocka_unit_test(test_without_notify),
		cmocka_unit_test(test_policy_adjustments), cmocka_unit_test(test_denial_targets),
		cmocka_unit_test(test_rules_from_the_plan),
	};
	return cmocka_run_group_tests_name("seccomp", tests, NULL, NULL);
}
