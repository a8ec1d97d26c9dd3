/* cordon as an OCI runtime (docs/oci.md): the bundle's config.json, the state
 * directory, the lifecycle (create, start, kill, delete) and the container's
 * init. The CLI is cli/oci-main.c; everything here returns errors in a
 * cordon_error and prints nothing. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cordon.h"
#include "json.h"
#include "strv.h"

#define OCI_VERSION "1.1.0"
#define OCI_DEFAULT_ROOT "/run/cordon-oci"

/* --- config.json (lib/oci-config.c) --- */
enum oci_ns { OCI_NS_PID, OCI_NS_NET, OCI_NS_IPC, OCI_NS_UTS, OCI_NS_MNT, OCI_NS_USER, OCI_NS_CGROUP,
	      OCI_NS_TIME, OCI_NS_N };
extern const char *const oci_ns_names[OCI_NS_N];  /* spec names: "pid", "network", ... */
extern const char *const oci_ns_proc[OCI_NS_N];   /* /proc/PID/ns names: "pid", "net", ... */
extern const int oci_ns_flags[OCI_NS_N];

struct oci_mount {
	char *dest, *type, *source;
	unsigned long flags, clear;  /* MS_* to set; MS_RDONLY etc. the options clear */
	unsigned long prop;          /* MS_PRIVATE|MS_SLAVE|MS_SHARED|MS_UNBINDABLE (|MS_REC) or 0 */
	bool bind, rec;
	char *data;                  /* the options the kernel takes as data ("mode=755,size=...") */
};
struct oci_idmap { uint32_t inner, outer, size; };
struct oci_rlimit { int res; uint64_t soft, hard; };
struct oci_hook { char *path; strv args, env; int timeout; };
enum oci_hook_kind { OCI_H_PRESTART, OCI_H_CREATE_RUNTIME, OCI_H_CREATE_CONTAINER, OCI_H_START_CONTAINER,
		     OCI_H_POSTSTART, OCI_H_POSTSTOP, OCI_H_N };
extern const char *const oci_hook_names[OCI_H_N];
struct oci_hooks { struct oci_hook *h; size_t n; };

struct oci_seccomp_rule {
	strv names;
	int action; uint32_t errno_ret; bool has_errno;
	struct { unsigned idx; uint64_t value, value2; int op; } args[6];
	unsigned nargs;
};
struct oci_seccomp {
	bool present;
	int default_action; uint32_t default_errno; bool has_default_errno;
	strv arches, flags;
	struct oci_seccomp_rule *rules; size_t nrules;
};

struct oci_config {
	char *bundle;     /* absolute, as given with --bundle */
	char *root;       /* root.path, absolute */
	bool readonly;
	char *hostname, *domainname;
	/* process */
	bool terminal;
	unsigned cons_h, cons_w;
	strv args, env;
	char *cwd;
	uid_t uid; gid_t gid; gid_t *agids; size_t nagids;
	bool has_umask; mode_t umask;
	struct oci_rlimit *rl; size_t nrl;
	bool nnp;
	bool has_oom; int oom;
	bool has_caps;
	uint64_t caps[5];  /* bounding, effective, inheritable, permitted, ambient */
	/* linux */
	bool ns_new[OCI_NS_N];
	char *ns_path[OCI_NS_N];
	struct oci_idmap *uidm, *gidm; size_t nuidm, ngidm;
	struct oci_mount *mounts; size_t nmounts;
	strv masked, ro_paths;
	strv sysctl_k, sysctl_v;
	unsigned long rootfs_prop;
	char *cgroups_path;
	/* resources */
	int64_t mem_limit, mem_swap, mem_reservation; /* -1 = unset */
	int64_t pids_limit;
	uint64_t cpu_shares; int64_t cpu_quota; uint64_t cpu_period;
	char *cpus, *mems;
	struct oci_dev { char type; int64_t major, minor; char *path; uint32_t mode; uid_t uid; gid_t gid;
			 bool has_mode, has_uid, has_gid; } *devices;
	size_t ndevices;
	struct oci_devrule { bool allow; char type; int64_t major, minor; char *access; } *devrules;
	size_t ndevrules;
	struct oci_seccomp seccomp;
	struct oci_hooks hooks[OCI_H_N];
	strv ann_k, ann_v;
	jnode *json;      /* the parsed file, kept for annotations in state */
};

/* Read BUNDLE/config.json. Errors name the file and "LINE:COL". */
int oci_config_load(const char *bundle, struct oci_config *c, cordon_error *err);
/* What create refuses in a loaded config (lib/oci-create.c): a rootfs that
 * is a link or no directory, no process, the host's user namespace or a
 * mount namespace it owns, a map to the host's root, a namespace path that
 * cannot be opened. cordon explain --bundle gives the same verdict. */
int oci_config_check(const struct oci_config *c, cordon_error *err);
void oci_config_free(struct oci_config *c);
/* Parse a capability name ("CAP_SYS_ADMIN"); -1 if unknown. */
int oci_cap_number(const char *name);
/* A capability's name by number ("CAP_CHOWN"); "CAP_?" if unknown. */
const char *oci_cap_name(int nr);
/* A signal by name ("TERM", "SIGKILL") or number; -1 if not one. */
int oci_signal_number(const char *s);
/* A resources object as `update --resources` takes it, into c's resource fields. */
int oci_resources_parse(const char *file, const char *text, size_t len, struct oci_config *c, cordon_error *err);
/* The process object of `exec --process` into c's process fields. */
int oci_process_parse(const char *file, const char *text, size_t len, struct oci_config *c, cordon_error *err);

/* --- the state directory (lib/oci-state.c) --- */
enum oci_status { OCI_CREATING, OCI_CREATED, OCI_RUNNING, OCI_STOPPED, OCI_PAUSED };
extern const char *const oci_status_names[];
struct oci_state {
	char id[256];
	char bundle[4096];
	pid_t pid;              /* the workload's init, as the host numbers it */
	uint64_t start_time;    /* its /proc/PID/stat starttime (pid reuse) */
	pid_t sup;              /* the supervisor */
	uint64_t sup_start;
	int slot;               /* the uid/gid range (oci_slot_*) */
	bool started;
	char created[64];       /* RFC 3339 */
	char cgroup[1024];      /* relative cgroup path */
	char report[4096];      /* annotation run.cordon.report, or "" */
	bool paused;
	strv ann_k, ann_v;
	strv poststop;          /* unused: hooks are read again from config */
};
/* Is id a valid container id (letters, digits, "._-+", at most 255)? */
bool oci_id_valid(const char *id);
/* Make ROOT (0700) and ROOT/ID exclusively: the id's existence is the mkdir. */
int oci_state_mkdir(const char *root, const char *id, int *dirfd, cordon_error *err);
/* Open ROOT/ID (ENOENT: "container ID does not exist"). */
int oci_state_open(const char *root, const char *id, int *dirfd, cordon_error *err);
/* flock the state directory (exclusive). */
int oci_state_lock(int dirfd, cordon_error *err);
int oci_state_read(int dirfd, struct oci_state *s, cordon_error *err);
int oci_state_write(int dirfd, const struct oci_state *s, cordon_error *err);
void oci_state_free(struct oci_state *s);
/* The status as of now: creating (no state.json yet), created, running, paused, stopped. */
enum oci_status oci_state_status(int dirfd, const struct oci_state *s);
/* The runtime-spec state JSON. */
int oci_state_json(const struct oci_state *s, enum oci_status st, buf *out);
/* Remove ROOT/ID and what is in it. */
int oci_state_remove(const char *root, const char *id, cordon_error *err);
/* /proc/PID/stat starttime, 0 if the process is gone. */
uint64_t oci_proc_start(pid_t pid);
/* Alive and the same process (start time). */
bool oci_proc_same(pid_t pid, uint64_t start);
/* A pidfd for pid if it is still the process that started at start, else -1. */
int oci_pidfd_same(pid_t pid, uint64_t start);
/* uid/gid slots: each container gets its own 65536 host ids. */
int oci_slot_take(const char *root, int *slot, cordon_error *err);
void oci_slot_release(const char *root, int slot);
#define OCI_SLOT_BASE 0x40000000u
#define OCI_SLOT_SIZE 65536u
#define OCI_SLOTS 1024
/* RFC 3339 UTC time now. */
void oci_now(char *out, size_t outsz);

/* --- cgroups (lib/oci-cgroup.c) --- */
/* Make the container's cgroup (path relative to the hierarchy roots) in every
 * hierarchy its resources need, write the limits, and attach pid. */
int oci_cgroup_create(const struct oci_config *c, const char *path, pid_t pid, cordon_error *err);
/* Apply a resources update to an existing container's cgroup. */
int oci_cgroup_update(const struct oci_config *c, const char *path, cordon_error *err);
/* Freeze (true) or thaw. */
int oci_cgroup_freeze(const char *path, bool freeze, cordon_error *err);
bool oci_cgroup_frozen(const char *path);
/* The pids in the container's cgroup. */
int oci_cgroup_pids(const char *path, pid_t **pids, size_t *n);
/* Remove the cgroup in every hierarchy (after the processes are gone). */
int oci_cgroup_remove(const char *path, cordon_error *err);
/* Usage for the report. */
int oci_cgroup_usage(const char *path, uint64_t *cpu_ns, uint64_t *peak_mem, uint64_t *oom_kills);
/* The default path for id ("/cordon-oci/ID"), or cgroupsPath as given
 * (--systemd-cgroup: "slice:prefix:name" → "/slice/prefix-name.scope"). */
int oci_cgroup_path(const struct oci_config *c, const char *id, bool systemd, char *out, size_t outsz,
		    cordon_error *err);

/* --- seccomp (lib/oci-seccomp.c) --- */
/* init: load linux.seccomp (if any) and cordon's deny list as a second filter. */
int oci_seccomp_load(const struct oci_config *c, cordon_error *err);
/* The same, with the deny list's calls sent to a listener (*listener, or -1
 * where the config's profile has a listener of its own: then EPERM). */
int oci_seccomp_load_notify(const struct oci_config *c, int *listener, cordon_error *err);

/* --- the lifecycle (lib/oci-create.c, oci-supervisor.c, oci-verbs.c, oci-exec.c, oci-common.c, oci-init.c) --- */
struct oci_create_opts {
	const char *root, *id, *bundle, *pid_file, *console_socket;
	bool systemd_cgroup, no_pivot;
	bool detach_stdio;   /* run: keep the caller's stdio (false: it is create's) */
	int preserve_fds;    /* --preserve-fds N: descriptors 3..3+N-1 go to init as well */
};
/* create: on return 0 the container is "created" and its supervisor runs
 * detached; *pid is the init. */
int oci_create(const struct oci_create_opts *o, pid_t *pid, cordon_error *err);
int oci_start(const char *root, const char *id, cordon_error *err);
int oci_kill(const char *root, const char *id, int sig, bool all, cordon_error *err);
int oci_delete(const char *root, const char *id, bool force, cordon_error *err);
int oci_pause(const char *root, const char *id, bool pause, cordon_error *err);
int oci_update(const char *root, const char *id, const char *file, cordon_error *err);
int oci_ps(const char *root, const char *id, pid_t **pids, size_t *n, cordon_error *err);
struct oci_exec_opts {
	const char *process_file, *pid_file, *console_socket, *cwd, *user;
	strv env, args;
	bool detach, tty;
};
/* exec: *status is the process's wait status (not detached). */
int oci_exec(const char *root, const char *id, const struct oci_exec_opts *o, int *status, cordon_error *err);
/* Wait for a container's init to exit (run): its wait status if it is our child. */
int oci_wait(const char *root, const char *id, int *status, cordon_error *err);
/* The features JSON. */
int oci_features_json(buf *out);
/* Run hooks of kind k with the state on stdin, in order; the first that fails
 * (exit status, signal, timeout) stops them and is the error. */
int oci_hooks_run(const struct oci_config *c, enum oci_hook_kind k, const char *state_json, cordon_error *err);
/* poststart and poststop (the spec: "the runtime MUST log a warning, but the
 * remaining hooks and lifecycle continue"): every hook runs; each failure
 * goes to the warning callback. Returns how many failed. */
int oci_hooks_run_warn(const struct oci_config *c, enum oci_hook_kind k, const char *state_json);
/* The library prints nothing: warnings (a failed poststart or poststop hook)
 * go to fn, which the program sets (cordon-oci: stderr and --log). */
void oci_set_warn(void (*fn)(const char *msg));
void oci_warn(const cordon_error *e);
