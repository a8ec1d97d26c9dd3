/* The policy model: what a task asks for. Parsed strictly from JSON and from
 * command-line flags; immutable once a run starts. No syscalls here but reading
 * the policy file. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cordon.h"
#include "pol-opts.h"
#include "strv.h"
#include "pxrule.h"

enum mount_mode { MOUNT_RO, MOUNT_RW, MOUNT_TMPFS };
/* Where a setting came from (reported by explain and the report). */
enum source { SRC_DEFAULT, SRC_POLICY, SRC_FLAG, SRC_CEILING };
const char *source_name(enum source s);
const char *mount_mode_name(enum mount_mode m);

struct cordon_mount {
	enum mount_mode mode;
	char *path;     /* absolute, lexically normalised; the host path */
	uint64_t size;  /* tmpfs size in bytes, 0 = kernel default */
	enum source src;
	/* The invoking user's own tree (rw, or a path the task could write, seen
	 * read-only by its check): idmapped when cordon runs as root, so that the
	 * run reaches it as its owner would (a 0700 workspace included). */
	bool owned;
	/* A writable directory that is a home (protect_is_home): every
	 * dot-entry at its top is protected (set by the plan). */
	bool home;
	/* A task check's workspace: writable, its writes thrown away (an
	 * overlay on a tmpfs of the check's; model.h MODEL_SCRATCH). */
	bool scratch;
	/* Where the run sees it (--rw HOST:PATH, an image's workspace), or
	 * NULL: at path itself. Absolute, normalised, not / nor in cordon's
	 * own /proc, /dev, /tmp (policy_mount_at_check). */
	char *at;
};

enum limit_id { LIM_WALL, LIM_CPU, LIM_MEMORY, LIM_PIDS, LIM_OUTPUT, LIM_FILE_SIZE, LIM_COUNT };
/* JSON key in policy.limits, and the name used in report.limits_hit. */
const char *limit_name(enum limit_id id);
/* Name of the matching command-line flag, e.g. "--time-limit". */
const char *limit_flag(enum limit_id id);
struct cordon_limit {
	bool set;
	uint64_t value; /* ns for time limits, bytes for sizes, count for pids */
	enum source src;
};

struct cordon_secret {
	char *name;
	char *from_env;   /* host variable name, or NULL */
	char *from_file;  /* host file path, or NULL */
	char *mount;      /* deliver as a file at this path instead of env */
	bool allow_short;
	/* "inject" (issue 16): the run gets a placeholder (placeholder prefix +
	 * 128 random bits, new per run), and the proxy puts the value in its
	 * place on requests to these hosts (host:port patterns). */
	bool inject;
	strv inject_hosts;
	char *placeholder;      /* prefix, or NULL */
	bool in_header, in_query;
	bool allow_plaintext;   /* also on plain HTTP (else TLS only) */
};

struct ledger_event {
	bool alloc;
	char *name;
	uint64_t bytes;
	int line, col;
};
struct ledger {
	struct ledger_event *ev;
	size_t n;
};

/* allow_weaker's names, in this order (pol-ceiling.c's table): "namespaces"
 * accepts the degraded boundary of a host without user namespaces
 * (docs/hosts.md), "network" a declared endpoint there without a bound on
 * the network. */
enum weaker { WEAK_CGROUP = 1, WEAK_LANDLOCK = 2, WEAK_SECCOMP = 4, WEAK_WORKSPACE = 8, WEAK_NAMESPACES = 16,
	      WEAK_NETWORK = 32 };
/* filesystem.workspace_mode / --workspace-mode (README, "Workspace modes"). */
enum workspace_mode { WS_DIRECT, WS_OVERLAY, WS_REVIEW };
/* filesystem.on_failure / --on-failure: an overlay run that did not end ok. */
enum on_failure { ONF_APPLY, ONF_DISCARD, ONF_KEEP };
const char *workspace_mode_name(enum workspace_mode m);
int workspace_mode_parse(const char *s, enum workspace_mode *out);
const char *on_failure_name(enum on_failure f);
int on_failure_parse(const char *s, enum on_failure *out);

#define NET_RESOLVE_MAX 64 /* network.resolve: pins per policy */

struct cordon_policy {
	struct cordon_mount *mounts;
	size_t nmounts;
	strv env;          /* NAME=VALUE, later entries win */
	strv net_allow;    /* host:port patterns */
	char *upstream_ca; /* network.upstream_ca: PEM file trusted for the proxy's TLS upstreams, or NULL */
	struct net_rules net_rules; /* every network.allow entry, with its methods and paths (pxrule.h) */
	uint16_t loopback_ports[64]; /* network.loopback_ports: TCP inside the run */
	bool net_transparent; /* network.transparent (issue 33, experimental): the run's own resolver */
	strv net_resolve;     /* network.resolve: "name=address" pins, at most NET_RESOLVE_MAX */
	size_t nloopback_ports;
	struct cordon_secret *secrets;
	size_t nsecrets;
	struct cordon_limit limits[LIM_COUNT];
	/* limits.snapshots: a session's snapshots at most this many bytes
	 * (0: not set; the session's default, session-snap.h). */
	uint64_t snapshots_max;
	strv sys_allow, sys_deny;
	strv inputs;       /* absolute paths */
	char *check;
	/* The check object: files (absolute host directory, bound read-only at
	 * CHECK_FILES_DIR in the check's view), cwd (in the check's view), env
	 * (NAME=VALUE, after the policy's own). */
	char *check_files;
	char *check_cwd;
	strv check_env;
	bool is_check; /* this is a check's policy: check_files is mounted */
	/* A check's policy: the task's writable paths (canonical, as its plan
	 * decided them), which check_files must not overlap. */
	strv check_writable;
	bool has_ledger;
	struct ledger ledger;
	char *cwd;         /* in-sandbox working directory, NULL = host cwd */
	/* "root" / --rootfs: an unpacked image directory whose top-level entries
	 * replace the host's /usr, /etc, /bin... in the view (absolute, as given;
	 * the plan resolves and checks it: rootfs.h), or NULL: the host's. */
	char *root;
	/* filesystem.workspace / --workspace: a directory of the image (root)
	 * as the workspace, seen at this path (absolute, normalised), its
	 * writes kept as a change set, never applied into the image; NULL:
	 * the workspace is decided as without an image (docs/images.md). */
	char *image_workspace;
	bool kill_on_violation;
	bool no_file_reports; /* "report_file_denials": false */
	unsigned allow_weaker; /* enum weaker bits */
	char *file;        /* policy file path, for messages */
	unsigned sections; /* SEC_* bits: which top-level keys the JSON had */
	char *ceiling_file; /* --ceiling (not a policy key) */
	strv devices;      /* filesystem.devices / --dev: host character devices, absolute under /dev */
	/* filesystem.protect / --protect and filesystem.unprotect / --unprotect:
	 * names relative to every writable path, normalised (protect.h). */
	strv protect, unprotect;
	enum workspace_mode workspace_mode; /* filesystem.workspace_mode; overlay by default */
	/* Set by the policy or the flag: then only allow_weaker "workspace"
	 * lets it fall back to direct; the default falls back where the
	 * kernel cannot have overlay, with the reason in the report. */
	bool workspace_mode_asked;
	enum on_failure on_failure;         /* filesystem.on_failure */
	long test_apply_crash_after; /* tests only (hidden CLI flag): the apply SIGKILLs itself after N entries */
	/* cordon serve's client (a root server only, never a policy key): the
	 * run is the client's, not root's. Its writable trees are idmapped to
	 * client_uid/gid (root's files below them are not the run's) and what
	 * it makes belongs to the client, as if the client ran cordon itself. */
	bool for_client;
	/* cordon serve's stacked fork (never a policy key; layers.h): the host
	 * directories of the workspace's shared lower layers, top first, under
	 * its own directory: the run's overlay has them as lower layers. */
	strv ws_layers;
	/* and the file listing them, removed once the end has made the
	 * workspace's directory whole (layers_materialize); NULL: none */
	char *ws_layers_list;
	uid_t client_uid;
	gid_t client_gid;
	/* The caller's options (include/cordon.h), borrowed for the length of
	 * a run or an explain; NULL: the defaults. Read through policy_opts. */
	const struct cordon_run_options *opts;
};

enum {
	SEC_FILESYSTEM = 1, SEC_NETWORK = 2, SEC_SECRETS = 4, SEC_LIMITS = 8, SEC_SYSCALLS = 16,
	SEC_ENFORCEMENT = 32, SEC_FS_READ = 64, SEC_FS_WRITE = 128, SEC_FS_TMPFS = 256,
	SEC_NET_ALLOW = 512, SEC_NET_PORTS = 1024, SEC_SYS_ALLOW = 2048,
};

cordon_policy *policy_new(void);
void policy_free(cordon_policy *p);

/* Flag-level setters (source = SRC_FLAG). Relative paths resolve against the
 * current directory. Each validates its argument. */
int policy_add_mount(cordon_policy *p, enum mount_mode mode, const char *spec,
		     enum source src, const char *base_dir, cordon_error *err);
int policy_add_env(cordon_policy *p, const char *assign, cordon_error *err);
/* A host character device shown in the run's /dev (--dev, filesystem.devices):
 * an absolute path under /dev, none of the refused ones. */
int policy_add_device(cordon_policy *p, const char *path, cordon_error *err);
/* A protected path to add (--protect, filesystem.protect) or to grant
 * writes to (--unprotect, filesystem.unprotect): a name relative to every
 * writable path (protect.h). */
int policy_add_protect(cordon_policy *p, bool unprotect, const char *name, cordon_error *err);
/* Why a device path may never be exposed (/dev/mem, /dev/kmem, /dev/port,
 * anything under /dev/mapper), or NULL. */
const char *policy_device_refused(const char *path);
/* The same by device number, so that no other name for one of them (a node
 * made elsewhere in /dev) gets through: mem 1:1, kmem 1:2, port 1:4 and the
 * device-mapper control node 10:236. */
const char *policy_device_refused_number(unsigned major, unsigned minor);
int policy_add_net(cordon_policy *p, const char *endpoint, cordon_error *err);
/* The object form of a network.allow entry (methods, paths: NULL or empty
 * for any; see pxrule.h). */
int policy_add_net_rule(cordon_policy *p, const char *endpoint, const strv *methods, const strv *paths,
			bool upgrade, cordon_error *err);
int policy_add_secret_spec(cordon_policy *p, const char *spec, cordon_error *err);
int policy_set_limit(cordon_policy *p, enum limit_id id, const char *value,
		     enum source src, cordon_error *err);
int policy_set_cwd(cordon_policy *p, const char *path, cordon_error *err);
/* --rootfs DIR (relative to the current directory). */
int policy_set_root(cordon_policy *p, const char *path, cordon_error *err);
int policy_set_check(cordon_policy *p, const char *cmd, cordon_error *err);
/* --workspace PATH: a directory of the image as the workspace. */
int policy_set_image_workspace(cordon_policy *p, const char *path, cordon_error *err);
/* Refuse an in-view path (the PATH of HOST:PATH, an image's workspace)
 * that is not absolute and normal, is /, or lies in cordon's own /proc,
 * /dev or /tmp; what names it for the message. */
int policy_mount_at_check(const char *what, const char *at, cordon_error *err);
/* The workspace mode in effect: review for an image's workspace unless
 * one was asked (then the plan refuses overlay and direct). */
enum workspace_mode policy_workspace_mode(const cordon_policy *p);
/* Where mount m is seen in the run. */
static inline const char *mount_view_path(const struct cordon_mount *m)
{
	return m->at ? m->at : m->path;
}

/* Where a check's "files" are, read-only, in the check's view: outside
 * every path the task could write, so the task cannot plant anything there.
 * The view shows them at CHECK_FILES_DIR-<128 random bits in hex>, new per
 * check (run_plan.check_dir, the check's CORDON_CHECK_DIR); a check.cwd of
 * CHECK_FILES_DIR (or below) names that directory. */
#define CHECK_FILES_DIR "/check"

/* Resolve a user-supplied path (absolute, or relative to base_dir) into an
 * absolute normalised path; refuses relative paths that climb out of base_dir. */
int resolve_user_path(const char *path, const char *base_dir, char *out, size_t outsz,
		      cordon_error *err);
/* The same, a relative path free to leave base_dir (an image directory). */
int resolve_path_any(const char *path, const char *base_dir, char *out, size_t outsz, cordon_error *err);

void mounts_free(struct cordon_mount *m, size_t n);

/* Does the proxy open TLS for this run (restricted rules, or a secret to
 * inject)? Then the run gets the run's CA (CORDON_CA_DIR). */
bool policy_intercepts(const cordon_policy *p);

/* Where the run's CA bundle is in the view (a private tmpfs, read-only). */
#define CORDON_CA_DIR "/run/cordon-ca"
#define CORDON_CA_FILE CORDON_CA_DIR "/ca.pem"

/* A valid environment variable name? */
bool env_name_valid(const char *name);
