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
#include "pol-parse.h"
#include "unit.h"
#include "model.h"
#include "policy.h"
#include "observe.h"
#include "seccomp-policy.h"
#include "systab.h"

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
		{"{\"network\": {\"allow\": [\"a.test:80\"], \"transparent\": true}}", all | SYS_R_HOSTSOCK},
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

/* Issue 27 item 7: cordon's own syscall table (lib/systab.c), compared with
 * libseccomp's names and with the compiled filter. */
static const struct {
	uint32_t arch, scmp;
	const char *name;
} systab_arches[] = {
	{AUDIT_ARCH_X86_64, SCMP_ARCH_X86_64, "x86_64"},
	{AUDIT_ARCH_AARCH64, SCMP_ARCH_AARCH64, "aarch64"},
};

static void test_systab_agrees_with_libseccomp(void **st)
{
	for (size_t a = 0; a < sizeof(systab_arches) / sizeof(systab_arches[0]); a++) {
		uint32_t arch = systab_arches[a].arch, scmp = systab_arches[a].scmp;
		const char *an = systab_arches[a].name;
		int max = systab_max(arch);
		/* The newest calls of Linux 6.18, numbered as the kernel's tables. */
		assert_int_equal(max, 469);
		const struct { const char *name; int nr; } newest[] = {
			{"statmount", 457}, {"listmount", 458}, {"lsm_get_self_attr", 459},
			{"lsm_set_self_attr", 460}, {"lsm_list_modules", 461}, {"mseal", 462},
			{"setxattrat", 463}, {"getxattrat", 464}, {"listxattrat", 465},
			{"removexattrat", 466}, {"open_tree_attr", 467}, {"file_getattr", 468},
			{"file_setattr", 469}, {"futex_requeue", 456}, {"fchmodat2", 452},
		};
		for (size_t i = 0; i < sizeof(newest) / sizeof(newest[0]); i++)
			if (systab_number(arch, newest[i].name) != newest[i].nr)
				fail_msg("%s: %s is %d, expected %d", an, newest[i].name,
					 systab_number(arch, newest[i].name), newest[i].nr);
		/* Wherever libseccomp names a number, the table has the same name;
		 * a libseccomp that knows a call above the table's highest is
		 * newer than it: the call must be added and decided. */
		for (int nr = 0; nr < 1100; nr++) {
			char *lib = seccomp_syscall_resolve_num_arch(scmp, nr);
			const char *ours = systab_name(arch, nr);
			if (lib && (!ours || strcmp(lib, ours) != 0))
				fail_msg("%s %d: libseccomp says %s, the table %s%s", an, nr, lib, ours ? ours : "nothing",
					 nr > max ? " (newer than the table: add it, decide it in docs/seccomp.md)" : "");
			free(lib);
			if (ours && systab_number(arch, ours) != nr)
				fail_msg("%s: %s twice in the table", an, ours);
			int n = ours ? seccomp_syscall_resolve_name_arch(scmp, ours) : __NR_SCMP_ERROR;
			if (n >= 0 && n != nr)
				fail_msg("%s: %s is %d in the table, %d for libseccomp", an, ours, nr, n);
		}
	}
	assert_int_equal(systab_number(AUDIT_ARCH_X86_64, "uretprobe"), 335);
	assert_int_equal(systab_number(AUDIT_ARCH_X86_64, "uprobe"), 336);
	assert_int_equal(systab_number(AUDIT_ARCH_AARCH64, "uretprobe"), -1);
	assert_int_equal(systab_max(AUDIT_ARCH_I386), -1);
}

/* What the filter does with call nr and no arguments, from the table alone:
 * the deny list refused, socket(AF_UNSPEC) refused, clone3 and openat2
 * ENOSYS, connect recorded, the rest allowed; above the table: ENOSYS
 * (newer than cordon). */
static uint32_t expected_action(int nr, bool notify)
{
	uint32_t deny = notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ERRNO | EPERM;
	if (systab_newer(nr))
		return notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ERRNO | ENOSYS;
	const char *name = systab_name(systab_native(), nr);
	if (!name)
		return SECCOMP_RET_ALLOW;
	for (const char *const *d = seccomp_default_deny; *d; d++)
		if (strcmp(*d, name) == 0)
			return deny;
	if (strcmp(name, "socket") == 0)
		return deny;
	if (strcmp(name, "clone3") == 0)
		return notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ERRNO | ENOSYS;
	if (strcmp(name, "openat2") == 0)
		return SECCOMP_RET_ERRNO | ENOSYS;
	if (strcmp(name, "connect") == 0 && notify) /* recorded, not decided */
		return SECCOMP_RET_USER_NOTIF;
	return SECCOMP_RET_ALLOW;
}

static void test_systab_against_the_filter(void **st)
{
	uint32_t native = systab_native();
	int max = systab_max(native);
	/* Every name of the deny list is a call of the table (or, for another
	 * architecture's calls, one this one does not have). */
	for (const char *const *d = seccomp_default_deny; *d; d++)
		if (systab_number(native, *d) < 0 && seccomp_syscall_resolve_name(*d) >= 0)
			fail_msg("%s is denied but not in the table", *d);
	assert_true(systab_number(native, "open_tree_attr") >= 0);
	for (int notify = 0; notify < 2; notify++) {
		cordon_policy *p = policy_new();
		struct seccomp_plan sp;
		cordon_error e;
		assert_int_equal(seccomp_build(p, notify, NULL, &sp, &e), 0);
		/* Every number up to the table's highest, then some above it. */
		int nrs[1024], n = 0;
		for (int nr = 0; nr <= max; nr++)
			nrs[n++] = nr;
		const int above[] = {max + 1, max + 2, 600, 1000, 0x3fffffff};
		for (size_t i = 0; i < sizeof(above) / sizeof(above[0]); i++)
			nrs[n++] = above[i];
		for (int i = 0; i < n; i++) {
			struct call c = {"", native, nrs[i], NULL, {0}, 0, 0};
			uint32_t r = decide(&sp, &c), want = expected_action(nrs[i], notify);
			if (r != want)
				fail_msg("notify %d, %d (%s): %#x, expected %#x", notify, nrs[i],
					 systab_name(native, nrs[i]) ? systab_name(native, nrs[i]) : "-", r, want);
		}
		/* -1 (a tracer's skipped call) goes on; x32 and i386 are killed. */
		struct call skip = {"-1", native, -1, NULL, {0}, 0, 0};
		assert_int_equal(decide(&sp, &skip), SECCOMP_RET_ALLOW);
		struct call i386 = {"i386 467", I386, 467, NULL, {0}, 0, 0};
		assert_int_equal(decide(&sp, &i386), SECCOMP_RET_KILL_PROCESS);
		if (native == AUDIT_ARCH_X86_64) {
			struct call x32 = {"x32 600", native, 0x40000000 | 600, NULL, {0}, 0, 0};
			assert_int_equal(decide(&sp, &x32), SECCOMP_RET_KILL_PROCESS);
		}
		seccomp_plan_free(&sp);
		policy_free(p);
	}
}

static void test_systab_names_in_policy_and_reports(void **st)
{
	/* Names libseccomp 2.5.4 does not know, in syscalls.allow and .deny. */
	const char *j = "{\"syscalls\": {\"allow\": [\"statmount\"], \"deny\": [\"mseal\"]}}";
	cordon_policy *p = policy_new();
	cordon_error e;
	if (policy_load_json(p, j, strlen(j), "p", "/", &e) < 0)
		fail_msg("%s", e.msg);
	struct seccomp_plan sp;
	assert_int_equal(seccomp_build(p, true, NULL, &sp, &e), 0);
	uint32_t native = systab_native();
	struct call sm = {"statmount allowed", native, systab_number(native, "statmount"), NULL, {0}, 0, 0};
	struct call ms = {"mseal denied", native, systab_number(native, "mseal"), NULL, {0}, 0, 0};
	struct call ota = {"open_tree_attr", native, systab_number(native, "open_tree_attr"), NULL, {0}, 0, 0};
	assert_int_equal(decide(&sp, &sm), SECCOMP_RET_ALLOW);
	assert_int_equal(decide(&sp, &ms) & SECCOMP_RET_ACTION_FULL, SECCOMP_RET_USER_NOTIF);
	assert_int_equal(decide(&sp, &ota) & SECCOMP_RET_ACTION_FULL, SECCOMP_RET_USER_NOTIF);
	seccomp_plan_free(&sp);
	policy_free(p);
	/* The report names them from the table, and a number above it as such. */
	char t[256];
	uint64_t z[6] = {0};
	seccomp_denial_target(467, z, t, sizeof(t));
	assert_string_equal(t, "open_tree_attr");
	seccomp_denial_target(systab_max(native) + 1, z, t, sizeof(t));
	char want[64];
	snprintf(want, sizeof(want), "syscall %d (newer than cordon's table)", systab_max(native) + 1);
	assert_string_equal(t, want);
	seccomp_denial_target(600, z, t, sizeof(t));
	assert_string_equal(t, "syscall 600 (newer than cordon's table)");
	assert_true(systab_newer(600) && !systab_newer(467) && !systab_newer(-1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_policy_table), cmocka_unit_test(test_without_notify),
		cmocka_unit_test(test_policy_adjustments), cmocka_unit_test(test_denial_targets),
		cmocka_unit_test(test_rules_from_the_plan),
		/* issue 27 item 7 */
		cmocka_unit_test(test_systab_agrees_with_libseccomp), cmocka_unit_test(test_systab_against_the_filter),
		cmocka_unit_test(test_systab_names_in_policy_and_reports),
	};
	return cmocka_run_group_tests_name("seccomp", tests, NULL, NULL);
}
