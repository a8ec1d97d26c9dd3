/* cgroup v2 device rules as an eBPF program (cgroup-devbpf.h). The program
 * is written here instruction by instruction, as runc and crun do (no
 * compiler, no libbpf): it reads the device's type, access, major and minor
 * from struct bpf_cgroup_dev_ctx and tries the rules from the last to the
 * first, so that the first match is the rule that wins; nothing matched is
 * 0 (refused). No helper call, no map: the verifier's simplest case. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include "cgroup-devbpf.h"
#include "error.h"

#define INSN(c, d, s, o, i) ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define LDX_W(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define ALU_K(op, d, i) INSN(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define MOV_X(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define JNE32_K(d, i, o) INSN(BPF_JMP32 | BPF_JNE | BPF_K, d, 0, o, i)
#define JNE_K(d, i, o) INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, i)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* The access letters as BPF_DEVCG_ACC_* bits; -1 for another letter. */
static int access_bits(const char *a)
{
	if (!a || !*a)
		return BPF_DEVCG_ACC_MKNOD | BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE;
	int bits = 0;
	for (; *a; a++) {
		switch (*a) {
		case 'r':
			bits |= BPF_DEVCG_ACC_READ;
			break;
		case 'w':
			bits |= BPF_DEVCG_ACC_WRITE;
			break;
		case 'm':
			bits |= BPF_DEVCG_ACC_MKNOD;
			break;
		default:
			return -1;
		}
	}
	return bits;
}

int cg_devbpf_check(const struct cg_devrule *r, size_t n, cordon_error *err)
{
	for (size_t i = 0; i < n; i++) {
		if (r[i].type != 'a' && r[i].type != 'c' && r[i].type != 'b')
			return cordon_err(err, EINVAL, "device rule %zu: type '%c' is not a, c or b", i, r[i].type);
		if (access_bits(r[i].access) < 0)
			return cordon_err(err, EINVAL, "device rule %zu: access \"%s\" is not letters of rwm", i, r[i].access);
		if (r[i].major < -1 || r[i].major > UINT32_MAX || r[i].minor < -1 || r[i].minor > UINT32_MAX)
			return cordon_err(err, EINVAL, "device rule %zu: a device number out of range", i);
	}
	return 0;
}

/* The program: a prologue, a block per rule (last rule first), refuse. At
 * most 9 instructions a rule; the caller sizes insns for it. */
static size_t compile(const struct cg_devrule *r, size_t n, struct bpf_insn *p)
{
	size_t k = 0;
	/* r2 = type, r3 = access, r4 = major, r5 = minor */
	p[k++] = LDX_W(BPF_REG_2, BPF_REG_1, 0);
	p[k++] = ALU_K(BPF_AND, BPF_REG_2, 0xffff);
	p[k++] = LDX_W(BPF_REG_3, BPF_REG_1, 0);
	p[k++] = ALU_K(BPF_RSH, BPF_REG_3, 16);
	p[k++] = LDX_W(BPF_REG_4, BPF_REG_1, 4);
	p[k++] = LDX_W(BPF_REG_5, BPF_REG_1, 8);
	for (size_t i = n; i-- > 0;) {
		const struct cg_devrule *x = &r[i];
		int acc = access_bits(x->access);
		bool any_acc = acc == (BPF_DEVCG_ACC_MKNOD | BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE);
		/* The block's length, to know how far each test jumps. */
		size_t len = (x->type != 'a') + (any_acc ? 0 : 3) + (x->major >= 0) + (x->minor >= 0) + 2;
		size_t start = k;
#define SKIP ((short)(len - (k - start) - 1))
		if (x->type != 'a') {
			p[k] = JNE32_K(BPF_REG_2, x->type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK, 0);
			p[k].off = SKIP;
			k++;
		}
		if (!any_acc) {
			/* asked & ~allowed != 0: not this rule's */
			p[k++] = MOV_X(BPF_REG_1, BPF_REG_3);
			p[k++] = ALU_K(BPF_AND, BPF_REG_1, ~acc & 7);
			p[k] = JNE_K(BPF_REG_1, 0, 0);
			p[k].off = SKIP;
			k++;
		}
		if (x->major >= 0) {
			p[k] = JNE32_K(BPF_REG_4, (int32_t)(uint32_t)x->major, 0);
			p[k].off = SKIP;
			k++;
		}
		if (x->minor >= 0) {
			p[k] = JNE32_K(BPF_REG_5, (int32_t)(uint32_t)x->minor, 0);
			p[k].off = SKIP;
			k++;
		}
#undef SKIP
		p[k++] = ALU_K(BPF_MOV, BPF_REG_0, x->allow ? 1 : 0);
		p[k++] = EXIT();
		if (len == 2)
			return k; /* matches every device: what is below it is never reached (the verifier refuses dead code) */
	}
	p[k++] = ALU_K(BPF_MOV, BPF_REG_0, 0);
	p[k++] = EXIT();
	return k;
}

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

/* The ids of the device programs attached to dirfd itself (at most max). */
static int query(int dirfd, uint32_t *ids, uint32_t max)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.query.target_fd = (uint32_t)dirfd;
	a.query.attach_type = BPF_CGROUP_DEVICE;
	a.query.prog_ids = (uint64_t)(uintptr_t)ids;
	a.query.prog_cnt = max;
	if (sys_bpf(BPF_PROG_QUERY, &a) < 0)
		return -1;
	return (int)(a.query.prog_cnt < max ? a.query.prog_cnt : max);
}

int cg_devbpf_count(int dirfd)
{
	uint32_t ids[64];
	return query(dirfd, ids, 64);
}

int cg_devbpf_apply(int dirfd, const struct cg_devrule *r, size_t n, cordon_error *err)
{
	if (cg_devbpf_check(r, n, err) < 0)
		return -1;
	if (n > 4096)
		return cordon_err(err, E2BIG, "%zu device rules (4096 at most)", n);
	/* What was attached here before: detached once the new one is on. */
	uint32_t old[64];
	int nold = query(dirfd, old, 64);
	if (nold < 0)
		return cordon_err_errno(err, "query the cgroup's device programs (BPF_PROG_QUERY)");

	struct bpf_insn *p = calloc(n * 9 + 8, sizeof(*p));
	if (!p)
		return cordon_err(err, ENOMEM, "device program");
	size_t cnt = compile(r, n, p);
	char log[4096] = "";
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	a.insns = (uint64_t)(uintptr_t)p;
	a.insn_cnt = (uint32_t)cnt;
	a.license = (uint64_t)(uintptr_t) "GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	int prog = (int)sys_bpf(BPF_PROG_LOAD, &a);
	if (prog < 0 && errno == ENOSPC) {
		/* only the log did not fit: load again without it */
		a.log_buf = 0;
		a.log_size = 0;
		a.log_level = 0;
		prog = (int)sys_bpf(BPF_PROG_LOAD, &a);
	}
	int e = errno;
	free(p);
	if (prog < 0) {
		log[strcspn(log, "\n")] = '\0'; /* the verifier's first complaint */
		return cordon_err(err, e, "load the device program (%zu instructions)%s%s", cnt, *log ? ": " : "", log);
	}
	memset(&a, 0, sizeof(a));
	a.target_fd = (uint32_t)dirfd;
	a.attach_bpf_fd = (uint32_t)prog;
	a.attach_type = BPF_CGROUP_DEVICE;
	a.attach_flags = BPF_F_ALLOW_MULTI;
	if (sys_bpf(BPF_PROG_ATTACH, &a) < 0) {
		e = errno;
		close(prog);
		return cordon_err(err, e, "attach the device program to the cgroup");
	}
	close(prog); /* the attachment holds it */
	int r_ = 0;
	for (int i = 0; i < nold; i++) {
		memset(&a, 0, sizeof(a));
		a.prog_id = old[i];
		int fd = (int)sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
		if (fd < 0) {
			if (errno == ENOENT)
				continue; /* gone meanwhile */
			r_ = cordon_err_errno(err, "the cgroup's previous device program %u", old[i]);
			continue;
		}
		memset(&a, 0, sizeof(a));
		a.target_fd = (uint32_t)dirfd;
		a.attach_bpf_fd = (uint32_t)fd;
		a.attach_type = BPF_CGROUP_DEVICE;
		if (sys_bpf(BPF_PROG_DETACH, &a) < 0 && errno != ENOENT)
			r_ = cordon_err_errno(err, "detach the cgroup's previous device program %u", old[i]);
		close(fd);
	}
	return r_;
}
