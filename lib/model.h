/* The boundary model: the run's world, described once. Every path the run
 * can see is one entry here, with what it is (kind), where it comes from
 * (source, for explain), its Landlock access, the observer's class, whether
 * it may be absent on this host, and a one-line reason. It is built in the
 * pre-flight (run_plan_build), as plain data (no fds), and the layers derive
 * from it: Landlock's rules (landlock_prepare), the observer's view
 * (view_build), `cordon explain`'s paths, and the plan's checks on secret
 * mounts and the workspace. Adding a visible path is one entry in model.c. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "policy.h"
#include "strv.h"
#include "cgroup.h"
#include "creds.h"

/* The observer's classes (view.c). */
enum view_class {
	VIEW_OUTSIDE, /* not in the view: the host's file is hidden */
	VIEW_ROOT,    /* a directory of the read-only root (ancestor of a mount) */
	VIEW_RO,      /* inside a read-only bind */
	VIEW_RW,      /* inside a writable bind or tmpfs */
	VIEW_PROC,    /* /proc: the kernel decides */
	VIEW_DEV,     /* /dev (read-only tmpfs of device nodes) */
	VIEW_PROTECTED, /* a protected path (protect.h): the observer refuses writes */
	VIEW_MASKED,  /* cordon-oci: a maskedPaths entry, hidden (an open of it is a denial) */
};

enum model_kind {
	MK_ROOT,    /* "/": the read-only tmpfs root itself */
	MK_RO_BIND, /* a host path, read-only */
	MK_RW_BIND, /* a host path, writable */
	MK_TMPFS,   /* a fresh tmpfs (size, mode) */
	MK_PROC,    /* the run's own /proc */
	MK_DEV,     /* the minimal /dev (a tmpfs of device nodes, read-only) */
	MK_DEVPTS,  /* a private devpts instance */
	MK_SYMLINK, /* the same symlink the host has (target) */
	MK_FILE,    /* a file cordon writes for the run (/etc/hosts) */
	MK_DEVICE,  /* a host character device bound in /dev */
	MK_SECRET,  /* a secret's directory: a private tmpfs of 0400 files */
	MK_CGROUP,  /* the run's own cgroup, read-only */
	MK_PROTECT, /* a protected path in a writable one: the view's own tree, read-only */
	MK_PIN,     /* a directory above a protected path: bound onto itself (no rename) */
	MK_CA_BUNDLE, /* the run's CA bundle (CORDON_CA_FILE) bound read-only over a host's
		       * standard bundle file (clients that ignore SSL_CERT_FILE) */
	/* cordon-oci's (lib/oci-model.c): */
	MK_KERNFS,  /* a kernel filesystem of the config (sysfs, mqueue): the kernel's permissions */
	MK_MASK,    /* a maskedPaths entry: /dev/null or an empty read-only tmpfs over it */
	MK_MOUNT,   /* another filesystem the config mounts by type (source, type) */
	MK_RESOLV,  /* /etc/resolv.conf written for the run's own resolver
		     * (network.transparent, issue 33), read-only */
};

/* entry flags */
#define MODEL_SYSTEM (1u << 0)    /* cordon's fixed view, the same for every run */
#define MODEL_OPTIONAL (1u << 1)  /* may be absent in the view: no Landlock error */
#define MODEL_ABSENT (1u << 2)    /* not on this host: nothing of it exists */
#define MODEL_IF_CGROUP (1u << 3) /* only where the run gets its own cgroup */
#define MODEL_FROM_HOST (1u << 4) /* shaped by the host: a top-level link, or a directory */
#define MODEL_NOT_YET (1u << 5)   /* MK_PROTECT absent at the start: nothing mounted, the
				   * observer refuses its creation */
#define MODEL_MASKED (1u << 6)    /* MK_PROTECT: an empty read-only tmpfs over it, not read-only */
#define MODEL_SCRATCH (1u << 7)   /* MK_RO_BIND, a task check's workspace: writable through an
				   * overlay whose upper layer is a tmpfs of .size bytes,
				   * thrown away with the check (overlay.h) */
/* The scratch's size where the check has no memory limit; with one, half of
 * it (its pages are the check's memory: the other half stays for the
 * check, which gets ENOSPC when the scratch is full, not the OOM killer). */
#define CHECK_SCRATCH_DEFAULT_SIZE (256ULL << 20)

/* Landlock access meaning "every right the kernel's ABI has". */
#define MODEL_LL_ALL UINT64_MAX

struct model_entry {
	const char *path;       /* in the view (static, or owned by the model or the plan) */
	enum model_kind kind;
	enum source source;
	uint64_t landlock;      /* LANDLOCK_ACCESS_FS_*, before the ABI mask; 0 = no rule of its own */
	enum view_class view;   /* the observer's class; VIEW_OUTSIDE = no entry of its own */
	unsigned flags;         /* MODEL_* */
	const char *reason;     /* one line: why the run sees it */
	/* kind-specific */
	const char *host;       /* binds: the host path (usually = path) */
	const char *target;     /* MK_SYMLINK: the link's target (as the host has it);
				 * MK_PROTECT: its name in the writable path */
	const char *mode;       /* tmpfs (MK_TMPFS, MK_DEV, MK_SECRET, MK_CGROUP): its root's mode */
	uint64_t size;          /* the same: bytes (0 = the kernel's default) */
	bool noexec;            /* mounted noexec */
	long mount;             /* index in run_plan.mounts, or -1 */
	long tree;              /* index of the tree the supervisor may prepare for it
				 * (sandbox_spec.tree_fds), or -1 */
	/* The line `cordon explain` prints for it (and the entries after it
	 * that have none): path and mode; NULL = covered by an earlier line. */
	const char *explain_path, *explain_mode;
};

/* The run's world beside its paths: what the command's environment is, which
 * limits hold it and by what means, which calls its filter refuses. Built
 * by model_build_run once the operator's ceiling has had its say (the
 * ceiling may lower limits); the supervisor, init and the filter take these
 * and keep no rule of their own. */
struct model_run {
	bool built;
	/* The command's environment (sup-env.c) without the secrets delivered
	 * as variables: their values are read at run time and appended
	 * (sup_env_add_secrets), last, so they win. */
	strv env;
	size_t env_declared;   /* env[0..env_declared): the defaults and the policy's own
				* variables (explain lists these names); after them
				* cordon's: the check's directory, the proxy's, the CA's */
	struct cordon_limit limits[LIM_COUNT]; /* every limit as the ceiling left it, with its
						* source; the fields below say how each holds */
	bool needs_cgroup;     /* a memory, pids or CPU limit: without a cgroup
				* the run fails unless allow_weaker "cgroup" */
	struct cg_limits cg;   /* the cgroup's memory and pids limits (0 = none) */
	uint64_t cpu_ns;       /* CPU time of the whole run (the supervisor's check; 0 = none) */
	uint64_t wall_ns;      /* wall time from exec (the supervisor's timer; 0 = none) */
	struct rlimit_plan rl; /* the per-process limits init sets in every run */
	struct rlimit_plan rl_nocg; /* the same where the run gets no cgroup: rl,
				     * plus RLIMIT_AS and RLIMIT_NPROC for memory and pids */
	strv sys_deny;         /* the calls the filter refuses outright (seccomp_deny_list) */
	unsigned sys_rules;    /* its other rules in effect (SYS_R_*, seccomp_rules) */
	/* The syscall plan as the policy shaped it (explain): the default
	 * list (seccomp_default_deny), the calls syscalls.allow re-allows and
	 * syscalls.deny adds (as written), and what a denial does. */
	const char *const *sys_default;
	strv sys_allow, sys_deny_policy;
	bool kill_on_violation, file_reports;
};

struct boundary_model {
	struct model_entry *e;
	size_t n;
	strv owned; /* strings the entries point to */
	struct model_run run;
};

struct run_plan;
/* Build the model of plan (its mounts, devices, check files) and of p's
 * secrets delivered as files. plan may be NULL: cordon's own view only (what
 * explain shows when the plan fails). Looks at the host's system links and
 * optional files once (lstat, readlink, access). */
int model_build(struct boundary_model *m, const struct run_plan *plan, const cordon_policy *p,
		cordon_error *err);
void model_free(struct boundary_model *m);
/* The run's part (struct model_run) of policy p, whose limits are final (the
 * ceiling applied): check_dir is a check's directory in its view, or "". */
int model_build_run(struct boundary_model *m, const cordon_policy *p, const char *check_dir,
		    cordon_error *err);
/* How the model sees the host: for a path, 'd' (a directory), 'l' (a
 * symlink; its target in target), 'h' (a regular file with more than one
 * link), 'r' (anything else that exists), 'L' (a
 * component above it is a symlink: not followed), 'f' (follow: it exists)
 * or 0 (absent). Without follow no link is followed anywhere (openat2 from
 * /). model_probe_host asks the kernel; tests pass their own. */
typedef int (*model_probe_fn)(const char *path, bool follow, char *target, size_t tsz);
int model_build_on(struct boundary_model *m, const struct run_plan *plan, const cordon_policy *p,
		   model_probe_fn probe, cordon_error *err);
/* Has the model a protected path (MK_PROTECT)? The observer then traps the
 * path calls even without file reports: it refuses writes to them. */
bool model_protects(const struct boundary_model *m);
/* Is the entry in effect, given the conditions that hold (MODEL_IF_*)? */
bool model_entry_active(const struct model_entry *e, unsigned conds);
const char *model_kind_name(enum model_kind k);

/* cordon's own view, and the questions asked of it (lib/model-sys.c). */
#include "model-sys.h"
