/* The boundary model: for a given policy and host, the model itself and what
 * each layer derives from it (Landlock's rules, the observer's classes,
 * explain's lines, the plan's checks). */
#include <linux/landlock.h>
#include <stdio.h>
#include "mounts-prep.h"
#include "unit.h"
#include "cleanup.h"
#include "compat.h"
#include "cgroup.h"
#include "explain.h"
#include "landlock.h"
#include "mounts.h"
#include "ns.h"
#include "seccomp-policy.h"
#include "sup-env.h"
#include "protect.h"
#include "sup-after.h"
#include "sup-run.h"
#include "view.h"

#define FS(x) LANDLOCK_ACCESS_FS_##x
#define RO (FS(EXECUTE) | FS(READ_FILE) | FS(READ_DIR))
#define RD (FS(READ_FILE) | FS(READ_DIR))
#define DEVA (FS(READ_FILE) | FS(WRITE_FILE) | FS(READ_DIR) | LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define ALL MODEL_LL_ALL

/* Two hosts: Debian's merged /usr (the links are symlinks, the CPU files
 * exist), and an old split layout (/bin, /lib and /lib64 are directories,
 * no CPU files in /sys). */
static int merged_host(const char *path, bool follow, char *target, size_t tsz)
{
	static const char *const links[][2] = {{"/bin", "usr/bin"}, {"/sbin", "usr/sbin"},
					       {"/lib", "usr/lib"}, {"/lib64", "usr/lib64"}};
	if (follow)
		return strncmp(path, "/sys/devices/system/cpu/", 24) == 0 ? 'f' : 0;
	for (size_t i = 0; i < 4; i++)
		if (strcmp(path, links[i][0]) == 0) {
			snprintf(target, tsz, "%s", links[i][1]);
			return 'l';
		}
	return 0;
}

static int split_host(const char *path, bool follow, char *target, size_t tsz)
{
	if (follow)
		return 0;
	return strcmp(path, "/bin") == 0 || strcmp(path, "/lib") == 0 || strcmp(path, "/lib64") == 0 ? 'd' : 0;
}

static struct cordon_mount mounts[] = {
	{MOUNT_RW, "/work/ws", 0, SRC_DEFAULT}, {MOUNT_RO, "/work/ws/ro", 0, SRC_FLAG},
	{MOUNT_RO, "/opt/data", 0, SRC_POLICY}, {MOUNT_TMPFS, "/scratch", 16 << 20, SRC_FLAG},
};

struct fixture {
	cordon_policy *p;
	struct run_plan plan;
	struct cordon_secret sec[3];
	char *devs[2];
};

/* The tests of cordon's own view leave the protected paths out (all
 * unprotected); test_protected_entries has them. */
static bool with_protect;

static void setup(struct fixture *f, model_probe_fn host)
{
	cordon_error e;
	memset(f, 0, sizeof(*f));
	f->p = policy_new();
	for (size_t i = 0; !with_protect && protect_defaults[i]; i++)
		assert_int_equal(policy_add_protect(f->p, true, protect_defaults[i], &e), 0);
	if (with_protect) {
		assert_int_equal(policy_add_protect(f->p, false, "Makefile", &e), 0);
		assert_int_equal(policy_add_protect(f->p, true, ".idea/", &e), 0);
	}
	f->sec[0] = (struct cordon_secret){.name = "A", .mount = "/run/secrets/A"};
	f->sec[1] = (struct cordon_secret){.name = "B", .mount = "/run/secrets/B"};
	f->sec[2] = (struct cordon_secret){.name = "C"}; /* in the environment */
	f->p->secrets = f->sec;
	f->p->nsecrets = 3;
	f->devs[0] = "/dev/fuse";
	f->plan.mounts = mounts;
	f->plan.nmounts = 4;
	f->plan.devices = (strv){f->devs, 1, 2};
	snprintf(f->plan.check_files, sizeof(f->plan.check_files), "/srv/checks");
	snprintf(f->plan.check_dir, sizeof(f->plan.check_dir), "/check-00112233445566778899aabbccddeeff");
	assert_int_equal(model_build_on(&f->plan.model, &f->plan, f->p, host, &e), 0);
}

static void teardown(struct fixture *f)
{
	model_free(&f->plan.model);
	f->p->secrets = NULL;
	f->p->nsecrets = 0;
	policy_free(f->p);
}

struct want_entry {
	const char *path;
	enum model_kind kind;
	enum source src;
	uint64_t ll;
	enum view_class view;
	unsigned flags;
};

static void check_model(const struct boundary_model *m, const struct want_entry *w, size_t nw)
{
	if (m->n != nw)
		fail_msg("%zu entries, expected %zu", m->n, nw);
	for (size_t i = 0; i < nw; i++) {
		const struct model_entry *e = &m->e[i];
		if (strcmp(e->path, w[i].path) != 0 || e->kind != w[i].kind || e->source != w[i].src ||
		    e->landlock != w[i].ll || e->view != w[i].view || e->flags != w[i].flags)
			fail_msg("entry %zu: %s %s src %d ll %#llx view %d flags %#x; expected %s %s src %d ll %#llx view %d flags %#x",
				 i, e->path, model_kind_name(e->kind), e->source, (unsigned long long)e->landlock,
				 e->view, e->flags, w[i].path, model_kind_name(w[i].kind), w[i].src,
				 (unsigned long long)w[i].ll, w[i].view, w[i].flags);
		assert_non_null(e->reason);
	}
}

#define S MODEL_SYSTEM
#define OPT MODEL_OPTIONAL
#define ABS MODEL_ABSENT
#define FH MODEL_FROM_HOST
/* cordon's own view on a host, then the task's paths (the same on both). */
#define SYSTEM_HEAD \
	{"/", MK_ROOT, SRC_DEFAULT, FS(READ_DIR), VIEW_OUTSIDE, S}, \
	{"/usr", MK_RO_BIND, SRC_DEFAULT, RO, VIEW_RO, S}, \
	{"/etc", MK_RO_BIND, SRC_DEFAULT, RO, VIEW_RO, S}, \
	{"/etc/hosts", MK_FILE, SRC_DEFAULT, 0, VIEW_RO, S | OPT}
#define SYSTEM_MID \
	{"/tmp", MK_TMPFS, SRC_DEFAULT, ALL, VIEW_RW, S}, \
	{"/proc", MK_PROC, SRC_DEFAULT, FS(READ_FILE) | FS(READ_DIR) | FS(WRITE_FILE), VIEW_PROC, S}, \
	{"/dev", MK_DEV, SRC_DEFAULT, DEVA, VIEW_DEV, S}, \
	{"/dev/null", MK_DEVICE, SRC_DEFAULT, 0, VIEW_DEV, S}, \
	{"/dev/zero", MK_DEVICE, SRC_DEFAULT, 0, VIEW_DEV, S}, \
	{"/dev/full", MK_DEVICE, SRC_DEFAULT, 0, VIEW_DEV, S}, \
	{"/dev/random", MK_DEVICE, SRC_DEFAULT, 0, VIEW_DEV, S}, \
	{"/dev/urandom", MK_DEVICE, SRC_DEFAULT, 0, VIEW_DEV, S}, \
	{"/dev/tty", MK_DEVICE, SRC_DEFAULT, 0, VIEW_DEV, S}, \
	{"/dev/pts", MK_DEVPTS, SRC_DEFAULT, 0, VIEW_DEV, S}, \
	{"/dev/shm", MK_TMPFS, SRC_DEFAULT, ALL, VIEW_RW, S}, \
	{"/dev/ptmx", MK_SYMLINK, SRC_DEFAULT, 0, VIEW_OUTSIDE, S}, \
	{"/dev/fd", MK_SYMLINK, SRC_DEFAULT, 0, VIEW_OUTSIDE, S}, \
	{"/dev/stdin", MK_SYMLINK, SRC_DEFAULT, 0, VIEW_OUTSIDE, S}, \
	{"/dev/stdout", MK_SYMLINK, SRC_DEFAULT, 0, VIEW_OUTSIDE, S}, \
	{"/dev/stderr", MK_SYMLINK, SRC_DEFAULT, 0, VIEW_OUTSIDE, S}
#define CGROUP {"/sys/fs/cgroup", MK_CGROUP, SRC_DEFAULT, RD, VIEW_RO, S | OPT | MODEL_IF_CGROUP}
#define TASK \
	{"/work/ws", MK_RW_BIND, SRC_DEFAULT, ALL, VIEW_RW, 0}, \
	{"/work/ws/ro", MK_RO_BIND, SRC_FLAG, RO, VIEW_RO, 0}, \
	{"/opt/data", MK_RO_BIND, SRC_POLICY, RO, VIEW_RO, 0}, \
	{"/scratch", MK_TMPFS, SRC_FLAG, ALL, VIEW_RW, 0}, \
	{"/dev/fuse", MK_DEVICE, SRC_POLICY, DEVA & ~FS(READ_DIR), VIEW_RW, 0}, \
	{"/run/secrets", MK_SECRET, SRC_POLICY, RD, VIEW_RO, 0}, \
	{"/check-00112233445566778899aabbccddeeff", MK_RO_BIND, SRC_POLICY, RO, VIEW_RO, 0}

static void test_model_merged_host(void **st)
{
	struct fixture f;
	setup(&f, merged_host);
	const struct want_entry w[] = {
		SYSTEM_HEAD,
		{"/bin", MK_SYMLINK, SRC_DEFAULT, 0, VIEW_OUTSIDE, S | FH},
		{"/sbin", MK_SYMLINK, SRC_DEFAULT, 0, VIEW_OUTSIDE, S | FH},
		{"/lib", MK_SYMLINK, SRC_DEFAULT, 0, VIEW_OUTSIDE, S | FH},
		{"/lib32", MK_SYMLINK, SRC_DEFAULT, RO, VIEW_RO, S | FH | ABS},
		{"/lib64", MK_SYMLINK, SRC_DEFAULT, 0, VIEW_OUTSIDE, S | FH},
		{"/libx32", MK_SYMLINK, SRC_DEFAULT, RO, VIEW_RO, S | FH | ABS},
		SYSTEM_MID,
		{"/sys/devices/system/cpu/online", MK_RO_BIND, SRC_DEFAULT, FS(READ_FILE), VIEW_RO, S | OPT},
		{"/sys/devices/system/cpu/possible", MK_RO_BIND, SRC_DEFAULT, FS(READ_FILE), VIEW_RO, S | OPT},
		{"/sys/devices/system/cpu/present", MK_RO_BIND, SRC_DEFAULT, FS(READ_FILE), VIEW_RO, S | OPT},
		CGROUP,
		TASK,
	};
	check_model(&f.plan.model, w, ARRAY_SIZE(w));
	assert_string_equal(f.plan.model.e[4].target, "usr/bin");
	teardown(&f);
}

static void test_model_split_host(void **st)
{
	struct fixture f;
	setup(&f, split_host);
	const struct want_entry w[] = {
		SYSTEM_HEAD,
		{"/bin", MK_RO_BIND, SRC_DEFAULT, RO, VIEW_RO, S | FH},
		{"/sbin", MK_SYMLINK, SRC_DEFAULT, RO, VIEW_RO, S | FH | ABS},
		{"/lib", MK_RO_BIND, SRC_DEFAULT, RO, VIEW_RO, S | FH},
		{"/lib32", MK_SYMLINK, SRC_DEFAULT, RO, VIEW_RO, S | FH | ABS},
		{"/lib64", MK_RO_BIND, SRC_DEFAULT, RO, VIEW_RO, S | FH},
		{"/libx32", MK_SYMLINK, SRC_DEFAULT, RO, VIEW_RO, S | FH | ABS},
		SYSTEM_MID,
		{"/sys/devices/system/cpu/online", MK_RO_BIND, SRC_DEFAULT, FS(READ_FILE), VIEW_RO, S | OPT | ABS},
		{"/sys/devices/system/cpu/possible", MK_RO_BIND, SRC_DEFAULT, FS(READ_FILE), VIEW_RO, S | OPT | ABS},
		{"/sys/devices/system/cpu/present", MK_RO_BIND, SRC_DEFAULT, FS(READ_FILE), VIEW_RO, S | OPT | ABS},
		CGROUP,
		TASK,
	};
	check_model(&f.plan.model, w, ARRAY_SIZE(w));
	teardown(&f);
}

struct want_rule {
	const char *path;
	uint64_t access;
	bool optional;
};

static void check_rules(const struct landlock_plan *lp, const struct want_rule *w, size_t nw)
{
	if (lp->n != nw)
		fail_msg("%zu rules, expected %zu", lp->n, nw);
	for (size_t i = 0; i < nw; i++)
		if (strcmp(lp->rules[i].path, w[i].path) != 0 || lp->rules[i].access != w[i].access ||
		    lp->rules[i].optional != w[i].optional)
			fail_msg("rule %zu: %s %#llx %d; expected %s %#llx %d", i, lp->rules[i].path,
				 (unsigned long long)lp->rules[i].access, lp->rules[i].optional, w[i].path,
				 (unsigned long long)w[i].access, w[i].optional);
}

/* Landlock: one rule per entry that names an access, masked to the ABI; the
 * cgroup only where the run gets one; nothing absent on the host. */
static void test_landlock_derived(void **st)
{
	struct fixture f;
	setup(&f, split_host);
	struct landlock_plan lp;
	cordon_error e;
	const uint64_t all7 = FS(EXECUTE) | FS(WRITE_FILE) | FS(READ_FILE) | FS(READ_DIR) | FS(REMOVE_DIR) |
			      FS(REMOVE_FILE) | FS(MAKE_CHAR) | FS(MAKE_DIR) | FS(MAKE_REG) | FS(MAKE_SOCK) |
			      FS(MAKE_FIFO) | FS(MAKE_BLOCK) | FS(MAKE_SYM) | FS(REFER) | FS(TRUNCATE) |
			      LANDLOCK_ACCESS_FS_IOCTL_DEV;
	assert_int_equal(landlock_prepare(&f.plan.model, MODEL_IF_CGROUP, 7, NULL, 0, &lp, &e), 0);
	const struct want_rule w[] = {
		{"/", FS(READ_DIR), false}, {"/usr", RO, false}, {"/etc", RO, false}, {"/bin", RO, false},
		{"/lib", RO, false}, {"/lib64", RO, false}, {"/tmp", all7, false},
		{"/proc", FS(READ_FILE) | FS(READ_DIR) | FS(WRITE_FILE), false}, {"/dev", DEVA, false},
		{"/dev/shm", all7, false}, {"/sys/fs/cgroup", RD, true}, {"/work/ws", all7, false},
		{"/work/ws/ro", RO, false}, {"/opt/data", RO, false}, {"/scratch", all7, false},
		{"/dev/fuse", DEVA & ~FS(READ_DIR), false}, {"/run/secrets", RD, false}, {"/check-00112233445566778899aabbccddeeff", RO, false},
	};
	check_rules(&lp, w, ARRAY_SIZE(w));
	landlock_plan_free(&lp);
	/* ABI 1, no cgroup: the masks shrink, the cgroup's rule goes. */
	assert_int_equal(landlock_prepare(&f.plan.model, 0, 1, NULL, 0, &lp, &e), 0);
	assert_int_equal(lp.n, ARRAY_SIZE(w) - 1);
	for (size_t i = 0; i < lp.n; i++) {
		assert_string_not_equal(lp.rules[i].path, "/sys/fs/cgroup");
		assert_int_equal(lp.rules[i].access & (FS(REFER) | FS(TRUNCATE) | LANDLOCK_ACCESS_FS_IOCTL_DEV), 0);
	}
	landlock_plan_free(&lp);
	teardown(&f);
}

/* The observer: each path's class, from the same model (links resolved as
 * the host has them). */
static void test_view_derived(void **st)
{
	struct { model_probe_fn host; const char *p; enum view_class c; const char *resolved; } t[] = {
		{merged_host, "/bin/sh", VIEW_RO, "/usr/bin/sh"},
		{merged_host, "/lib64/ld.so", VIEW_RO, "/usr/lib64/ld.so"},
		{merged_host, "/bin", VIEW_RO, "/usr/bin"},
		{merged_host, "/sys/devices/system/cpu/online", VIEW_RO, NULL},
		{merged_host, "/sys/devices/system/cpu/kernel_max", VIEW_OUTSIDE, NULL},
		{split_host, "/bin/sh", VIEW_RO, "/bin/sh"},
		{split_host, "/sys/devices/system/cpu/online", VIEW_OUTSIDE, NULL},
		{split_host, "/sbin/init", VIEW_OUTSIDE, NULL},
		{merged_host, "/run/secrets/A", VIEW_RO, NULL},
		{merged_host, "/run/other", VIEW_OUTSIDE, NULL},
		{merged_host, "/run", VIEW_ROOT, NULL},
		{merged_host, "/check-00112233445566778899aabbccddeeff/test.py", VIEW_RO, NULL},
		{merged_host, "/dev/fuse", VIEW_RW, NULL},
		{merged_host, "/dev/null", VIEW_DEV, NULL},
		{merged_host, "/dev/stdout", VIEW_DEV, NULL},
		{merged_host, "/dev/pts/0", VIEW_DEV, NULL},
		{merged_host, "/dev/shm/x", VIEW_RW, NULL},
		{merged_host, "/etc/hosts", VIEW_RO, NULL},
		{merged_host, "/work/ws/ro/x", VIEW_RO, NULL},
		{merged_host, "/scratch/x", VIEW_RW, NULL},
		{merged_host, "/sys/fs/cgroup/memory.max", VIEW_OUTSIDE, NULL},
	};
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		struct fixture f;
		struct view v;
		cordon_error e;
		char r[4096];
		setup(&f, t[i].host);
		assert_int_equal(view_build(&f.plan.model, 0, &v, &e), 0);
		enum view_class c = view_classify(&v, t[i].p, r, sizeof(r));
		if (c != t[i].c || (t[i].resolved && strcmp(r, t[i].resolved) != 0))
			fail_msg("%s: class %d (%s), expected %d (%s)", t[i].p, c, r, t[i].c,
				 t[i].resolved ? t[i].resolved : t[i].p);
		/* The cgroup appears once the run gets it. */
		assert_int_equal(view_add_cond(&v, &f.plan.model, MODEL_IF_CGROUP, &e), 0);
		assert_int_equal(view_classify(&v, "/sys/fs/cgroup/memory.max", r, sizeof(r)), VIEW_RO);
		view_free(&v);
		teardown(&f);
	}
}

/* explain: the lines it prints, in order, from the entries that head one. */
static void test_explain_lines(void **st)
{
	struct fixture f;
	setup(&f, merged_host);
	const char *want[][2] = {
		{"/usr", "ro"}, {"/etc", "ro"}, {"/bin /sbin /lib /lib64", "symlink or ro"},
		{"/tmp", "tmpfs (1 GiB)"}, {"/proc", "proc (own PID namespace)"},
		{"/dev", "minimal (null zero full random urandom tty pts; shm: tmpfs 64 MiB)"},
		{"/sys/devices/system/cpu/{online,possible,present}", "ro (CPU counts)"},
		{"/sys/fs/cgroup", "ro (the run's own cgroup)"},
		{"/work/ws", "rw"}, {"/work/ws/ro", "ro"}, {"/opt/data", "ro"}, {"/scratch", "tmpfs"},
	};
	size_t k = 0;
	for (size_t i = 0; i < f.plan.model.n; i++) {
		const struct model_entry *e = &f.plan.model.e[i];
		if (!e->explain_path)
			continue;
		assert_true(k < ARRAY_SIZE(want));
		assert_string_equal(e->explain_path, want[k][0]);
		assert_string_equal(e->explain_mode, want[k][1]);
		k++;
	}
	assert_int_equal(k, ARRAY_SIZE(want));
	teardown(&f);
}

/* A workspace with a git repository (.git/config, .git/hooks), a .vscode
 * directory, and .config as a file; links where the test says. */
static const char *planted;
static int protect_host(const char *path, bool follow, char *target, size_t tsz)
{
	static const char *const dirs[] = {"/work/ws", "/work/ws/.git", "/work/ws/.git/hooks", "/work/ws/.vscode"};
	if (follow)
		return 0;
	if (planted && strcmp(path, planted) == 0) {
		snprintf(target, tsz, "/etc");
		return strcmp(path, "/work/ws/.git/config") == 0 ? 'h' : 'l';
	}
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		if (strcmp(path, dirs[i]) == 0)
			return 'd';
	return strcmp(path, "/work/ws/.git/config") == 0 || strcmp(path, "/work/ws/.config") == 0 ? 'r' : 0;
}

static const struct model_entry *find(const struct boundary_model *m, const char *path, size_t *at)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->e[i].path, path) == 0) {
			if (at)
				*at = i;
			return &m->e[i];
		}
	return NULL;
}

/* Protected paths: one entry per name in the writable path (present: to
 * be bound read-only; absent: refused by the observer), a pin for each
 * directory on the way, pins first; the policy's own names added, the
 * unprotected ones gone; none in read-only paths or tmpfs; no Landlock
 * rule of their own; the observer's class; a planted link refuses. */
static void test_protected_entries(void **st)
{
	struct fixture f;
	with_protect = true;
	setup(&f, protect_host);
	const struct boundary_model *m = &f.plan.model;
	struct { const char *p; enum model_kind k; enum source src; unsigned flags; } w[] = {
		{"/work/ws/.git", MK_PIN, SRC_DEFAULT, 0},
		{"/work/ws/.git/config", MK_PROTECT, SRC_DEFAULT, 0},
		{"/work/ws/.git/hooks", MK_PROTECT, SRC_DEFAULT, 0},
		{"/work/ws/.git/info", MK_PROTECT, SRC_DEFAULT, MODEL_NOT_YET},
		{"/work/ws/.vscode", MK_PROTECT, SRC_DEFAULT, 0},
		{"/work/ws/.envrc", MK_PROTECT, SRC_DEFAULT, MODEL_NOT_YET},
		{"/work/ws/.bashrc", MK_PROTECT, SRC_DEFAULT, MODEL_NOT_YET},
		{"/work/ws/.config/fish", MK_PROTECT, SRC_DEFAULT, MODEL_NOT_YET},
		{"/work/ws/.cargo/config.toml", MK_PROTECT, SRC_DEFAULT, MODEL_NOT_YET},
		{"/work/ws/Makefile", MK_PROTECT, SRC_POLICY, MODEL_NOT_YET},
	};
	size_t pin = 0, cfg = 0;
	for (size_t i = 0; i < ARRAY_SIZE(w); i++) {
		const struct model_entry *e = find(m, w[i].p, NULL);
		if (!e || e->kind != w[i].k || e->source != w[i].src || e->flags != w[i].flags || e->landlock != 0) {
			fail_msg("%s: %s", w[i].p, e ? model_kind_name(e->kind) : "missing");
			return;
		}
		assert_int_equal(e->view, w[i].k == MK_PIN ? VIEW_OUTSIDE : VIEW_PROTECTED);
		assert_non_null(e->reason);
		if (w[i].k == MK_PROTECT)
			assert_non_null(e->explain_path);
	}
	find(m, "/work/ws/.git", &pin);
	find(m, "/work/ws/.git/config", &cfg);
	assert_true(pin < cfg);
	assert_null(find(m, "/work/ws/.idea", NULL));     /* unprotected */
	const struct model_entry *cf = find(m, "/work/ws/.config", NULL); /* a file: itself read-only */
	assert_true(cf && cf->kind == MK_PROTECT && cf->flags == 0 && strcmp(cf->target, ".config") == 0);
	assert_null(find(m, "/work/ws/ro/.envrc", NULL)); /* read-only: nothing to protect */
	assert_null(find(m, "/scratch/.envrc", NULL));    /* a tmpfs: nothing of the host */
	assert_true(model_protects(m));
	/* Landlock: no rule of their own (it cannot narrow a writable tree). */
	struct landlock_plan lp;
	cordon_error e;
	assert_int_equal(landlock_prepare(m, MODEL_IF_CGROUP, 7, NULL, 0, &lp, &e), 0);
	for (size_t i = 0; i < lp.n; i++)
		assert_false(path_has_prefix(lp.rules[i].path, "/work/ws/.git"));
	landlock_plan_free(&lp);
	/* The observer's classes. */
	struct view v;
	char r[4096];
	assert_int_equal(view_build(m, 0, &v, &e), 0);
	assert_int_equal(view_classify(&v, "/work/ws/.git/hooks/pre-commit", r, sizeof(r)), VIEW_PROTECTED);
	assert_int_equal(view_classify(&v, "/work/ws/.git/objects/ab/cd", r, sizeof(r)), VIEW_RW);
	assert_int_equal(view_classify(&v, "/work/ws/.envrc", r, sizeof(r)), VIEW_PROTECTED);
	assert_int_equal(view_classify(&v, "/work/ws/.envrc2", r, sizeof(r)), VIEW_RW);
	assert_true(view_protects_below(&v, "/work/ws/.git"));
	assert_true(view_protects_below(&v, "/work/ws/.config"));
	assert_false(view_protects_below(&v, "/work/ws/.git/config"));
	assert_false(view_protects_below(&v, "/work/ws/src"));
	assert_true(view_denies(VIEW_PROTECTED, "/work/ws/.envrc", true, false));
	assert_false(view_denies(VIEW_PROTECTED, "/work/ws/.envrc", false, false));
	view_free(&v);
	teardown(&f);
	/* A link at a protected path, or on the way to one: refused. */
	const char *links[] = {"/work/ws/.vscode", "/work/ws/.git", "/work/ws/.git/config"};
	const char *why[] = {"is a symbolic link", "is a symbolic link", "has another hard link"};
	for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
		planted = links[i];
		memset(&f, 0, sizeof(f));
		f.p = policy_new();
		f.plan.mounts = mounts;
		f.plan.nmounts = 4;
		assert_int_equal(model_build_on(&f.plan.model, &f.plan, f.p, protect_host, &e), -1);
		assert_non_null(strstr(e.msg, why[i]));
		assert_non_null(strstr(e.msg, links[i]));
		policy_free(f.p);
	}
	planted = NULL;
	with_protect = false;
}

/* After the run: a protected path absent at the start that exists now (or
 * is a link now) is a file denial; one still absent is not; a present one
 * is not looked at. */
static void test_protect_check_after(void **st)
{
	char dir[] = "/tmp/cordon-unit-protect.XXXXXX", a[128], b[128], c[128], d[128], g1[128], g2[128], h1[128],
	     h2[128], h3[128], top[128];
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/.envrc", dir);   /* created by "the run" */
	snprintf(b, sizeof(b), "%s/.vscode", dir);  /* still absent */
	snprintf(c, sizeof(c), "%s/.npmrc", dir);   /* a link now */
	snprintf(d, sizeof(d), "%s/.bashrc", dir);  /* present at the start */
	snprintf(g1, sizeof(g1), "%s/.config/fish", dir); /* .config absent: so is this */
	snprintf(g2, sizeof(g2), "%s/.config/git", dir);
	snprintf(h1, sizeof(h1), "%s/.git/config", dir); /* .git made, config absent */
	snprintf(h2, sizeof(h2), "%s/.git/hooks", dir);  /* .git made, hooks made */
	snprintf(h3, sizeof(h3), "%s/.git/info", dir);   /* after a present one */
	struct model_entry e[] = {
		{.path = a, .target = ".envrc", .kind = MK_PROTECT, .flags = MODEL_NOT_YET},
		{.path = b, .target = ".vscode", .kind = MK_PROTECT, .flags = MODEL_NOT_YET},
		{.path = c, .target = ".npmrc", .kind = MK_PROTECT, .flags = MODEL_NOT_YET},
		{.path = d, .target = ".bashrc", .kind = MK_PROTECT},
		{.path = g1, .target = ".config/fish", .kind = MK_PROTECT, .flags = MODEL_NOT_YET},
		{.path = g2, .target = ".config/git", .kind = MK_PROTECT, .flags = MODEL_NOT_YET},
		{.path = h1, .target = ".git/config", .kind = MK_PROTECT, .flags = MODEL_NOT_YET},
		{.path = h2, .target = ".git/hooks", .kind = MK_PROTECT, .flags = MODEL_NOT_YET},
		{.path = h3, .target = ".git/info", .kind = MK_PROTECT, .flags = MODEL_NOT_YET},
	};
	snprintf(top, sizeof(top), "%s/.git", dir);
	assert_int_equal(mkdir(top, 0700), 0);
	assert_int_equal(mkdir(h2, 0700), 0);
	assert_int_equal(mkdir(h3, 0700), 0);
	struct run_plan plan;
	memset(&plan, 0, sizeof(plan));
	plan.model.e = e;
	plan.model.n = ARRAY_SIZE(e);
	FILE *f = fopen(a, "w");
	assert_non_null(f);
	fclose(f);
	f = fopen(d, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(symlink("/etc/passwd", c), 0);
	struct run_report rep;
	report_init(&rep);
	assert_int_equal(protect_check_after(&plan, &rep), 4);
	assert_int_equal(rep.ndenials, 4);
	assert_string_equal(rep.denials[0].target, a);
	assert_string_equal(rep.denials[1].target, c);
	assert_string_equal(rep.denials[2].target, h2);
	assert_string_equal(rep.denials[3].target, h3);
	report_free(&rep);
	unlink(a), unlink(c), unlink(d), rmdir(h2), rmdir(h3), rmdir(top), rmdir(dir);
}

/* The names a policy may give. */
static void test_protect_names(void **st)
{
	struct { const char *in, *out; } ok[] = {
		{".git/hooks/", ".git/hooks"}, {"a//b", "a/b"}, {"Makefile", "Makefile"}, {".x", ".x"},
	};
	const char *bad[] = {"", "/etc/passwd", "../x", "a/../b", ".", "./a"};
	char out[4096];
	cordon_error e;
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		assert_int_equal(protect_check_name(ok[i].in, out, sizeof(out), &e), 0);
		assert_string_equal(out, ok[i].out);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (protect_check_name(bad[i], out, sizeof(out), &e) == 0)
			fail_msg("\"%s\" accepted", bad[i]);
	/* Unprotecting a directory takes everything below it. */
	cordon_policy *p = policy_new();
	strv l;
	assert_int_equal(policy_add_protect(p, true, ".git", &e), 0);
	assert_int_equal(protect_effective(p, &l, NULL, &e), 0);
	for (size_t i = 0; i < l.n; i++)
		assert_false(path_has_prefix(l.v[i], ".git") || strncmp(l.v[i], ".git/", 5) == 0);
	assert_true(strv_contains(&l, ".gitmodules"));
	assert_true(strv_contains(&l, ".envrc"));
	strv_free(&l);
	policy_free(p);
}

/* The plan's checks: a secret's directory may not be in a top-level
 * directory of cordon's own view; an implicit workspace may not be a
 * system directory the view shows. */
static void test_system_checks(void **st)
{
	struct { const char *p; const char *top; } t[] = {
		{"/sys/fs/cgroup/s", "/sys"}, {"/sys/x/s", "/sys"}, {"/usr/local/s", "/usr"},
		{"/etc/s", "/etc"}, {"/lib32/s", "/lib32"}, {"/libx32/s", "/libx32"}, {"/tmp/s", "/tmp"},
		{"/proc/s", "/proc"}, {"/dev/shm/s", "/dev"}, {"/run/secrets/s", NULL},
		{"/libfoo/s", NULL}, {"/usrx/s", NULL},
	};
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		const char *top = model_system_top(t[i].p);
		if (t[i].top ? !top || strcmp(top, t[i].top) != 0 : top != NULL)
			fail_msg("%s: %s, expected %s", t[i].p, top ? top : "none", t[i].top ? t[i].top : "none");
	}
	assert_true(model_is_system_dir("/usr"));
	assert_true(model_is_system_dir("/lib32"));
	assert_true(model_is_system_dir("/sbin"));
	assert_false(model_is_system_dir("/tmp"));
	assert_false(model_is_system_dir("/sys"));
	assert_false(model_is_system_dir("/usr/bin"));
}


/* The mount steps an entry gets (mounts_prepare), by its kind; 0 = none. */
static int want_ops(const struct model_entry *e, enum mount_op ops[2])
{
	bool sys = e->flags & MODEL_SYSTEM;
	if ((e->flags & MODEL_ABSENT) || e->kind == MK_ROOT ||
	    ((e->kind == MK_PROTECT || e->kind == MK_PIN) && (e->flags & MODEL_NOT_YET)))
		return 0;
	switch (e->kind) {
	case MK_RO_BIND: ops[0] = sys ? MO_SYSTEM_BIND : MO_TASK; return 1;
	case MK_RW_BIND: ops[0] = MO_TASK; return 1;
	case MK_TMPFS: ops[0] = sys ? MO_TMPFS : MO_TASK; return 1;
	case MK_PROC: ops[0] = MO_PROC; return 1;
	case MK_DEV: ops[0] = MO_DEV; ops[1] = MO_DEV_SEAL; return 2;
	case MK_DEVPTS: ops[0] = MO_DEVPTS; return 1;
	case MK_SYMLINK: ops[0] = MO_SYMLINK; return 1;
	case MK_FILE: ops[0] = MO_HOSTS; return 1;
	case MK_DEVICE: ops[0] = sys ? MO_DEV_NODE : MO_DEV_DEVICE; return 1;
	case MK_SECRET: ops[0] = MO_SECRET_DIR; return 1;
	case MK_CGROUP: ops[0] = MO_CGROUP; return 1;
	case MK_PROTECT: case MK_PIN: ops[0] = MO_PROTECT; return 1;
	case MK_CA_BUNDLE: ops[0] = MO_CA_BUNDLE; return 1;
	default: return 0;
	}
}

/* Does an explain line's path ("/bin /sbin ...", ".../cpu/{online,...}")
 * name path, or a directory above it? */
static bool explains(const char *line, const char *path)
{
	char first[4096];
	size_t l = strcspn(line, " {");
	snprintf(first, sizeof(first), "%.*s", (int)(l > 1 && line[l - 1] == '/' ? l - 1 : l), line);
	return path_has_prefix(path, first);
}

/* Every entry of the model, on both hosts, with and without protected
 * paths: the mounts init makes for it, its Landlock rule, its class for the
 * observer and its explain line all follow from the entry alone, and no
 * layer has a path the model lacks. Making a path visible is one entry. */
static void test_every_entry_agrees(void **st)
{
	model_probe_fn hosts[] = {merged_host, split_host, protect_host};
	for (size_t h = 0; h < ARRAY_SIZE(hosts); h++) {
		struct fixture f;
		cordon_error e;
		with_protect = hosts[h] == protect_host;
		planted = NULL;
		setup(&f, hosts[h]);
		const struct boundary_model *m = &f.plan.model;
		struct mount_steps ms;
		struct landlock_plan lp;
		struct view v;
		assert_int_equal(mounts_prepare(m, &ms, &e), 0);
		assert_int_equal(landlock_prepare(m, MODEL_IF_CGROUP, 7, NULL, 0, &lp, &e), 0);
		assert_int_equal(view_build(m, 0, &v, &e), 0);
		assert_int_equal(view_add_cond(&v, m, MODEL_IF_CGROUP, &e), 0);
		size_t nsteps = 0, nrules = 0;
		for (size_t i = 0; i < m->n; i++) {
			const struct model_entry *x = &m->e[i];
			/* mounts: exactly the steps its kind says, in place */
			enum mount_op ops[2];
			int nw = want_ops(x, ops), got = 0;
			for (size_t k = 0; k < ms.n; k++) {
				if (ms.v[k].e != x)
					continue;
				if (got >= nw || ms.v[k].op != ops[got])
					fail_msg("%s (%s): mount step %s unexpected", x->path, model_kind_name(x->kind),
						 mount_op_name(ms.v[k].op));
				/* cordon's own view (and the task's devices, in
				 * /dev before it is sealed) before sync 2, the
				 * task's after, the cgroup last */
				bool early = k < ms.nbegin;
				if (early != (((x->flags & MODEL_SYSTEM) && x->kind != MK_CGROUP) || x->kind == MK_DEVICE))
					fail_msg("%s: mounted %s sync 2", x->path, early ? "before" : "after");
				got++;
			}
			if (got != nw)
				fail_msg("%s (%s): %d mount steps, expected %d", x->path, model_kind_name(x->kind), got, nw);
			nsteps += (size_t)got;
			/* Landlock: a rule of its own iff it names an access */
			const struct landlock_rule *r = NULL;
			for (size_t k = 0; k < lp.n; k++)
				if (strcmp(lp.rules[k].path, x->path) == 0)
					r = &lp.rules[k];
			bool rule = x->landlock && model_entry_active(x, MODEL_IF_CGROUP);
			if (rule != (r != NULL))
				fail_msg("%s: Landlock rule %s", x->path, r ? "without an access in the model" : "missing");
			if (r && (!r->access || (r->access & ~(x->landlock & lp.fs)) ||
				  r->optional != !!(x->flags & MODEL_OPTIONAL)))
				fail_msg("%s: Landlock %#llx optional %d, model %#llx flags %#x", x->path,
					 (unsigned long long)r->access, r->optional, (unsigned long long)x->landlock, x->flags);
			nrules += rule;
			/* the observer: its class */
			char res[4096];
			if (x->view != VIEW_OUTSIDE && !(x->flags & MODEL_ABSENT) &&
			    view_classify(&v, x->path, res, sizeof(res)) != x->view)
				fail_msg("%s: class %d, model %d", x->path, view_classify(&v, x->path, res, sizeof(res)),
					 x->view);
			/* explain: a line names a path of its own, with a mode */
			if (x->explain_path && (!x->explain_mode || !explains(x->explain_path, x->path)))
				fail_msg("%s: explain line '%s'", x->path, x->explain_path);
		}
		/* nothing in any layer that is not an entry */
		assert_int_equal(ms.n, nsteps);
		assert_int_equal(lp.n, nrules);
		view_free(&v);
		landlock_plan_free(&lp);
		mount_steps_free(&ms);
		teardown(&f);
	}
	with_protect = false;
}

/* A host with Debian's bundle as a file and another name for it as a link. */
static int ca_host(const char *path, bool follow, char *target, size_t tsz)
{
	if (!follow && strcmp(path, "/etc/ssl/certs/ca-certificates.crt") == 0)
		return 'r';
	if (!follow && strcmp(path, "/etc/ssl/cert.pem") == 0) {
		snprintf(target, tsz, "certs/ca-certificates.crt");
		return 'l';
	}
	return merged_host(path, follow, target, tsz);
}

/* TLS interception: the run's CA bundle over each standard bundle file the
 * host has (not over a link), after the CA's own directory; one mount step,
 * read-only for the observer, an explain line; none without interception. */
static void test_ca_bundle_entries(void **st)
{
	struct fixture f;
	cordon_error e;
	setup(&f, ca_host);
	for (size_t i = 0; i < f.plan.model.n; i++)
		assert_int_not_equal(f.plan.model.e[i].kind, MK_CA_BUNDLE);
	model_free(&f.plan.model);
	f.sec[2].inject = true;
	assert_int_equal(strv_push(&f.p->net_allow, "api.example:443"), 0);
	assert_int_equal(model_build_on(&f.plan.model, &f.plan, f.p, ca_host, &e), 0);
	const struct boundary_model *m = &f.plan.model;
	size_t n = 0, dir = SIZE_MAX, at = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (m->e[i].kind == MK_SECRET && strcmp(m->e[i].path, CORDON_CA_DIR) == 0)
			dir = i;
		if (m->e[i].kind == MK_CA_BUNDLE)
			n++, at = i;
	}
	assert_int_equal(n, 1);
	assert_true(dir < at);
	const struct model_entry *x = &m->e[at];
	assert_string_equal(x->path, "/etc/ssl/certs/ca-certificates.crt");
	assert_string_equal(x->host, CORDON_CA_FILE);
	assert_int_equal(x->landlock, 0); /* /etc's rule reads it */
	assert_non_null(x->explain_path);
	struct mount_steps ms;
	assert_int_equal(mounts_prepare(m, &ms, &e), 0);
	size_t steps = 0;
	for (size_t k = 0; k < ms.n; k++)
		if (ms.v[k].e == x) {
			assert_int_equal(ms.v[k].op, MO_CA_BUNDLE);
			assert_true(k >= ms.nbegin);
			steps++;
		}
	assert_int_equal(steps, 1);
	mount_steps_free(&ms);
	struct view v;
	char res[4096];
	assert_int_equal(view_build(m, 0, &v, &e), 0);
	assert_int_equal(view_classify(&v, x->path, res, sizeof(res)), VIEW_RO);
	view_free(&v);
	teardown(&f);
}

/* The rest of the run's world: its environment, limits and syscall plan,
 * as the supervisor, init and the filter take them from the model. */
static void test_run_part(void **st)
{
	struct fixture f;
	cordon_error e;
	setup(&f, merged_host);
	cordon_policy *p = f.p;
	assert_int_equal(strv_push(&p->env, "A=1"), 0);
	assert_int_equal(strv_push(&p->env, "PATH=/opt/bin"), 0);
	assert_int_equal(strv_push(&p->env, "A=2"), 0);
	p->limits[LIM_MEMORY] = (struct cordon_limit){.set = true, .value = 64 << 20};
	p->limits[LIM_PIDS] = (struct cordon_limit){.set = true, .value = 32};
	p->limits[LIM_CPU] = (struct cordon_limit){.set = true, .value = 1500000000ULL};
	p->limits[LIM_WALL] = (struct cordon_limit){.set = true, .value = 9000000000ULL};
	p->limits[LIM_FILE_SIZE] = (struct cordon_limit){.set = true, .value = 1 << 20};
	assert_int_equal(strv_push(&p->sys_allow, "bpf"), 0);
	assert_int_equal(strv_push(&p->sys_deny, "mount"), 0);   /* already in the defaults */
	assert_int_equal(strv_push(&p->sys_deny, "sched_setaffinity"), 0);
	assert_int_equal(model_build_run(&f.plan.model, p, f.plan.check_dir, &e), 0);
	const struct model_run *r = &f.plan.model.run;
	assert_true(r->built);
	/* the environment: defaults not overridden, the last of each name, the
	 * check's directory; no secret (C is delivered as a variable) */
	const char *want_env[] = {"HOME=/tmp", "LANG=C.UTF-8", "TERM=dumb", "PATH=/opt/bin", "A=2",
				  "CORDON_CHECK_DIR=/check-00112233445566778899aabbccddeeff"};
	assert_int_equal(r->env.n, ARRAY_SIZE(want_env));
	for (size_t i = 0; i < ARRAY_SIZE(want_env); i++)
		assert_string_equal(r->env.v[i], want_env[i]);
	/* the same as the supervisor's builder, secrets aside */
	strv env = {0};
	size_t start;
	assert_int_equal(sup_env_build(p, f.plan.check_dir, NULL, &env, &start, &e), 0);
	assert_int_equal(env.n, r->env.n);
	assert_int_equal(start, env.n);
	strv_free(&env);
	/* limits: the cgroup's, the timers', init's rlimits, the fallback */
	assert_true(r->needs_cgroup);
	assert_int_equal(r->cg.memory, 64 << 20);
	assert_int_equal(r->cg.pids, 32);
	assert_int_equal(r->cpu_ns, 1500000000ULL);
	assert_int_equal(r->wall_ns, 9000000000ULL);
	assert_int_equal(r->rl.fsize, 1 << 20);
	assert_int_equal(r->rl.cpu_sec, 2);
	assert_int_equal(r->rl.as, 0);
	assert_int_equal(r->rl.nproc, 0);
	assert_int_equal(r->rl_nocg.fsize, 1 << 20);
	assert_int_equal(r->rl_nocg.as, 64 << 20);
	assert_int_equal(r->rl_nocg.nproc, 32);
	/* syscalls: the defaults minus the allowed, plus the others denied,
	 * once each; the filter compiled from it is the policy's */
	size_t ndef = 0, nmount = 0;
	while (seccomp_default_deny[ndef])
		ndef++;
	assert_int_equal(r->sys_deny.n, ndef - 1 + 1);
	for (size_t i = 0; i < r->sys_deny.n; i++) {
		assert_string_not_equal(r->sys_deny.v[i], "bpf");
		nmount += strcmp(r->sys_deny.v[i], "mount") == 0;
	}
	assert_int_equal(nmount, 1);
	assert_string_equal(r->sys_deny.v[r->sys_deny.n - 1], "sched_setaffinity");
	struct seccomp_plan a, b;
	assert_int_equal(seccomp_build(p, true, NULL, &a, &e), 0);
	assert_int_equal(seccomp_build_from(r, true, NULL, &b, &e), 0);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.insns, b.insns, a.len * sizeof(*a.insns));
	seccomp_plan_free(&a);
	seccomp_plan_free(&b);
	/* no limit: nothing to enforce, no cgroup needed */
	cordon_policy *q = policy_new();
	struct boundary_model m2 = {0};
	assert_int_equal(model_build_run(&m2, q, "", &e), 0);
	assert_false(m2.run.needs_cgroup);
	assert_int_equal(m2.run.rl_nocg.as | m2.run.rl_nocg.nproc | m2.run.rl.fsize | m2.run.cpu_ns | m2.run.wall_ns, 0);
	model_free(&m2);
	policy_free(q);
	teardown(&f);
}

/* JSON without the whitespace between tokens, for matching. */
static void compact_json(char *s)
{
	bool in_str = false;
	char *o = s;
	for (char *c = s; *c; c++) {
		if (in_str && *c == '\\' && c[1]) {
			*o++ = *c++;
			*o++ = *c;
			continue;
		}
		if (*c == '"')
			in_str = !in_str;
		if (in_str || !strchr(" \n\t", *c))
			*o++ = *c;
	}
	*o = 0;
}

/* explain's env, limits and syscalls lines are the model's (struct
 * model_run), not the policy's: an entry changed in the model shows, a
 * policy value the model lacks does not. */
static void test_explain_run_part(void **st)
{
	struct fixture f;
	cordon_error e;
	setup(&f, merged_host);
	cordon_policy *p = f.p;
	assert_int_equal(strv_push(&p->env, "A=1"), 0);
	p->limits[LIM_MEMORY] = (struct cordon_limit){.set = true, .value = 64 << 20, .src = SRC_FLAG};
	assert_int_equal(strv_push(&p->sys_allow, "bpf"), 0);
	assert_int_equal(model_build_run(&f.plan.model, p, f.plan.check_dir, &e), 0);
	struct model_run *r = &f.plan.model.run;
	/* the policy changes after the model was built: explain must not see it */
	assert_int_equal(strv_push(&p->env, "POLICY_ONLY=1"), 0);
	p->limits[LIM_PIDS] = (struct cordon_limit){.set = true, .value = 7, .src = SRC_POLICY};
	assert_int_equal(strv_push(&p->sys_deny, "policy_only_call"), 0);
	p->kill_on_violation = true;
	/* and the model changes: explain must */
	free(r->env.v[0]);
	r->env.v[0] = strdup("MODEL_VAR=1"); /* in the declared part (PATH before) */
	assert_non_null(r->env.v[0]);
	r->limits[LIM_MEMORY].value = 99 << 20;
	r->limits[LIM_FILE_SIZE] = (struct cordon_limit){.set = true, .value = 4096, .src = SRC_CEILING};
	assert_int_equal(strv_push(&r->sys_deny_policy, "model_call"), 0);
	struct host_features hf = {.userns = true, .landlock_abi = 6, .seccomp = true, .cgroup = "v2"};
	struct run_report rep;
	report_init(&rep);
	strv devs = {0};
	char *argv[] = {"/bin/true", NULL};
	char *js = explain_render_model(p, argv, true, &hf, &f.plan, &f.plan.model, r, &devs, &rep, true, "would run");
	char *tx = explain_render_model(p, argv, false, &hf, &f.plan, &f.plan.model, r, &devs, &rep, true, "would run");
	assert_non_null(js);
	assert_non_null(tx);
	compact_json(js);
	/* env: the declared part of the model's environment, by name; not
	 * cordon's own (the check's directory) */
	assert_non_null(strstr(js, "\"env\":[\"MODEL_VAR\",\"HOME\",\"LANG\",\"TERM\",\"A\"]"));
	assert_non_null(strstr(tx, "env: MODEL_VAR HOME LANG TERM A\n"));
	assert_null(strstr(js, "POLICY_ONLY"));
	assert_null(strstr(js, "CORDON_CHECK_DIR"));
	/* limits, with their sources */
	assert_non_null(strstr(js, "\"limits\":{\"memory\":{\"value\":103809024,\"source\":\"flag\"},"
				   "\"file_size\":{\"value\":4096,\"source\":\"ceiling\"}}"));
	assert_non_null(strstr(tx, "  memory     99 MiB (flag)\n"));
	assert_null(strstr(js, "\"pids\""));
	/* syscalls */
	assert_non_null(strstr(js, "\"allow\":[\"bpf\"],\"deny\":[\"model_call\"],\"on_violation\":\"report\""));
	assert_non_null(strstr(tx, "; re-allowed: bpf; also denied: model_call; on violation: report\n"));
	assert_null(strstr(js, "policy_only_call"));
	free(js);
	free(tx);
	report_free(&rep);
	teardown(&f);
}

/* The identities are decided before clone, the maps' text included: init
 * formats nothing. As root the run has a host uid of its own; unprivileged,
 * the invoking user's, and setgroups is denied for the gid map. */
static void test_creds_plan(void **st)
{
	struct creds_plan c;
	creds_prepare(0, 0, SANDBOX_HOST_BASE + 42, SANDBOX_HOST_BASE + 42, true, &c);
	assert_string_equal(c.u1_uid_map, "0 805306410 1\n");
	assert_string_equal(c.u1_gid_map, "0 805306410 1\n");
	assert_false(c.u1_deny_setgroups);
	assert_int_equal(c.ns_uid, 0);
	assert_string_equal(c.u2_uid_map, "1000 0 1\n");
	assert_string_equal(c.u2_gid_map, "1000 0 1\n");
	creds_prepare(1234, 100, 1234, 100, false, &c);
	assert_string_equal(c.u1_uid_map, "1234 1234 1\n");
	assert_string_equal(c.u1_gid_map, "100 100 1\n");
	assert_true(c.u1_deny_setgroups);
	assert_int_equal(c.ns_uid, 1234);
	assert_int_equal(c.ns_gid, 100);
	assert_string_equal(c.u2_uid_map, "1000 1234 1\n");
	assert_string_equal(c.u2_gid_map, "1000 100 1\n");
}

/* explain's verdict is the cgroup layer's own decision: no hierarchy
 * (cgroup_prepare) or a controller our cgroup lacks (the cgroup made by
 * cgroup_start), named by the layer, not by a probe of explain's. */
static void test_refusal_named_by_the_layer(void **st)
{
	(void)st;
	cordon_policy *p = policy_new();
	assert_non_null(p);
	struct cordon_run_options o;
	cordon_run_options_init(&o);
	p->opts = &o;
	p->limits[LIM_MEMORY] = (struct cordon_limit){.set = true, .value = 64 << 20};
	struct cg_refusal why;
	cordon_error e = {0};
	o.cgroup = "none";
	assert_int_equal(run_cgroup_preflight(p, &why, &e), -1);
	assert_true(why.no_hierarchy);
	assert_null(why.missing);
	p->allow_weaker |= WEAK_CGROUP;
	assert_int_equal(run_cgroup_preflight(p, &why, &e), 0);
	p->allow_weaker &= ~WEAK_CGROUP;
	/* v2 where our cgroup2 cgroup offers no memory controller (a hybrid
	 * host such as this one) */
	char dir[4200];
	o.cgroup = "v2";
	if (cg_v2_self_dir(dir, sizeof(dir)) == 0 && !cg_v2_has(dir, "memory")) {
		assert_int_equal(run_cgroup_preflight(p, &why, &e), -1);
		assert_false(why.no_hierarchy);
		assert_string_equal(why.missing, "memory");
	}
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_merged_host), cmocka_unit_test(test_model_split_host),
		cmocka_unit_test(test_landlock_derived), cmocka_unit_test(test_view_derived),
		cmocka_unit_test(test_explain_lines), cmocka_unit_test(test_system_checks),
		cmocka_unit_test(test_protected_entries), cmocka_unit_test(test_protect_names),
		cmocka_unit_test(test_protect_check_after), cmocka_unit_test(test_every_entry_agrees),
		cmocka_unit_test(test_ca_bundle_entries), cmocka_unit_test(test_run_part),
		cmocka_unit_test(test_explain_run_part), cmocka_unit_test(test_creds_plan),
		cmocka_unit_test(test_refusal_named_by_the_layer),
	};
	return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
