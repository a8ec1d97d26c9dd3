/* The filesystem view: a fresh tmpfs root, populated with binds, tmpfs, /proc
 * and a minimal /dev, entered with pivot_root. */
#pragma once
#include <stdbool.h>
#include "cordon.h"
#include "policy.h"
#include "secrets.h"
#include "model.h"

/* The run's own cgroup, shown read-only at /sys/fs/cgroup: on v2 its
 * directory is that path, on v1 each controller's directory is a directory
 * below it (on a small read-only tmpfs). Host paths, opened through the old
 * root. Nothing above the run's cgroup is visible: no siblings, no parents. */
#define CGVIEW_MAX 4
struct cgroup_view {
	char path[CGVIEW_MAX][1024];
	char name[CGVIEW_MAX][16]; /* v1 controller; "" on v2 */
	size_t n;
	bool v2;
};

/* The run's hostname (its own UTS namespace). */
#define CORDON_HOSTNAME "cordon"
/* network.transparent: where the run's resolver listens, in its namespace */
#define CORDON_DNS_ADDR "127.0.0.53"
#define CORDON_DNS_IPV4 0x7f000035u /* the same, host order */
#define CORDON_DNS_PORT 53
/* Default tmpfs sizes (README, "Default sizes"): without them a tmpfs may
 * grow to half of the host's RAM. /tmp and any --tmpfs given without a
 * size: 1 GiB; /dev/shm: 64 MiB, as Docker's. --tmpfs /tmp:SIZE,
 * --tmpfs /dev/shm:SIZE (or the policy's filesystem.tmpfs) mount a tmpfs
 * of that size in their place. */
#define CORDON_TMPFS_DEFAULT_SIZE (1ULL << 30)
#define CORDON_SHM_DEFAULT_SIZE (64ULL << 20)

/* What the child mounts is the boundary model (model.h), walked in order:
 * plain data built by the supervisor before clone, so nothing is allocated
 * here. The rest is what only exists at run time. */
struct mount_plan {
	/* Per model entry's tree (model_entry.tree): a detached,
	 * already-configured tree prepared by the parent (idmapped rw binds
	 * when cordon runs as root), or -1. */
	const int *tree_fds;
	/* Secrets delivered as files: a private tmpfs per directory, the file
	 * 0400, owned by the command's user. */
	const struct secret_value *secrets;
	size_t nsecrets;
	const struct cgroup_view *cgview; /* or NULL */
	/* Per plan mount (model_entry.mount): the host directory of its change
	 * set's layer (overlay.h: upper/ and work/ in it), or NULL: a rw bind
	 * with one becomes an overlay. NULL: none at all. */
	char *const *overlay_dirs;
	/* Per plan mount: the layer directory as a detached tree the
	 * supervisor cloned (as root: the run's uid may not pass the
	 * directories above it), or -1: init opens overlay_dirs itself. */
	const int *overlay_trees;
	/* The run's CA bundle (PEM), written 0444 as CORDON_CA_FILE; or NULL. */
	const char *ca_pem;
	size_t ca_len;
	/* Out: why a task check's workspace stayed read-only (overlay.h,
	 * MODEL_SCRATCH; code = its plan mount index), msg "" if it did not. */
	cordon_error *scratch_note;
	/* Per plan mount: a task check's view below a layer's path (overlay.h),
	 * or NULL. */
	const struct overlay_sub *overlay_subs;
	/* The workspace's stack of shared lower layers (layers.h), top first:
	 * detached trees under its overlay's lower one; the workspace's path. */
	const int *ws_layers;
	size_t nws_layers;
	const char *ws_path;
};

/* Child side (in the new user + mount namespaces, with capabilities), in two
 * steps so that the supervisor can prepare the task's idmapped trees while the
 * child builds the rest:
 *  mounts_begin:  base tmpfs, pivot, new root, the model's system entries
 *                 (system dirs, /tmp, /proc, /dev with the task's devices).
 *  mounts_finish: the task's binds and tmpfs, secrets, a check's files, the
 *                 run's cgroup, then pivot_root into the view; on return "/"
 *                 is the sandbox root. */
/* What init does for each model entry, decided by the supervisor before
 * clone (mounts_prepare, which may allocate) and done by init in order
 * (mounts_begin, mounts_finish: no allocation, no decision but "is the host
 * file there" for an optional one and "did the supervisor send a tree"). */
enum mount_op {
	MO_SYSTEM_BIND, /* a read-only bind of cordon's view (optional: skipped if absent) */
	MO_SYMLINK,     /* the link, as the model says */
	MO_HOSTS,       /* /etc/hosts, written */
	MO_TMPFS,       /* a fresh tmpfs (mode, size, noexec) */
	MO_PROC,        /* the run's /proc */
	MO_DEV,         /* /dev's tmpfs; its nodes follow, then MO_DEV_SEAL */
	MO_DEV_NODE,    /* a standard node, bound from the host */
	MO_DEV_DEVICE,  /* a host device the task was granted */
	MO_DEVPTS,      /* a private devpts */
	MO_DEV_SEAL,    /* /dev made read-only (its own mounts stay writable) */
	MO_TASK,        /* the task's bind (or the tree sent for it) or tmpfs */
	MO_SECRET_DIR,  /* a secret directory's tmpfs and files */
	MO_PROTECT,     /* a protected path or a pin, bound onto itself */
	MO_CGROUP,      /* the run's cgroup, as the supervisor names it */
	MO_CA_BUNDLE,   /* the run's CA bundle bound over a host's bundle file */
	MO_RESOLV,      /* /etc/resolv.conf naming the run's own resolver, written */
};
struct mount_step {
	const struct model_entry *e;
	enum mount_op op;
};
struct mount_steps {
	struct mount_step *v;
	size_t n;
	size_t nbegin; /* v[0..nbegin) in mounts_begin, the rest in mounts_finish */
};
const char *mount_op_name(enum mount_op op);

struct mount_ctx {
	int oldroot, newroot;
	const struct mount_steps *steps;
};
int mounts_begin(struct mount_ctx *mc, cordon_error *err);
int mounts_finish(struct mount_ctx *mc, const struct mount_plan *plan, cordon_error *err);

/* openat2 of path below dirfd, never following a link, never leaving it
 * (mounts.c; the supervisor's side shares it). */
int mounts_openat2_nofollow(int dirfd, const char *path, int flags);
