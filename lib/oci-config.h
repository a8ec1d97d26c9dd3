/* cordon-oci's view of a bundle's config.json (lib/oci-config.c): the
 * config's types, its loader and the parsers of update's resources and
 * exec's process. Everything returns errors in a cordon_error. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cordon.h"
#include "json.h"
#include "strv.h"

#define OCI_VERSION "1.1.0"
#define OCI_DEFAULT_ROOT "/run/cordon-oci"
/* Bounds on a config (an engine's is a few KiB; a 13 MB one with 200,000
 * mounts once took 460 MB and 28 s to load): */
#define OCI_CONFIG_MAX (4u << 20)
#define OCI_MOUNTS_MAX 4096

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

struct oci_egress_run;

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
	/* set by create, not the config: the image's privileged files held
	 * read-only (oci-privguard.h), its rootfs being reachable by others */
	bool priv_guard;
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
	/* run.cordon.policy's network section (oci-egress.h), or NULL; set by
	 * oci_egress_load, not by oci_config_load */
	cordon_policy *egress;
	/* its TLS interception and credential broker (oci-egress.h): the
	 * secrets, the run's CA; set by oci_egress_prepare at create (never by
	 * explain), NULL when the proxy opens no TLS */
	struct oci_egress_run *egress_run;
	/* A pod's egress (oci-egress.h, oci-pod.h). The sandbox container's
	 * pod network namespace (the config's path; init gets a namespace of
	 * its own instead, the supervisor makes the proxy's upstream sockets
	 * in this one), or NULL. */
	char *pod_net;
	/* A container of such a pod: the proxy is its sandbox's (no listener,
	 * no proxy of its own); ns_path[OCI_NS_NET] the sandbox's namespace. */
	bool pod_proxy;
	/* Such a container's view of its sandbox's TLS and secrets, read by
	 * oci_pod_join from the sandbox's state directory (OCI_POD_CA,
	 * OCI_POD_SECRETS: oci_egress_pod_publish wrote them at its create):
	 * the run's CA bundle (public) and "NAME PLACEHOLDER" lines, or NULL. */
	char *pod_ca;
	size_t pod_ca_len;
	char *pod_secrets;
	/* A pod's sandbox holding its egress: the ports its supervisor relays
	 * in from the pod's network namespace (oci-inbound.h; set by
	 * oci_inbound_load at create). */
	uint16_t inbound[16];
	size_t ninbound;
};

/* Read BUNDLE/config.json. Errors name the file and "LINE:COL". */
int oci_config_load(const char *bundle, struct oci_config *c, cordon_error *err);
/* The same; *raw (if not NULL, on success) gets the bytes parsed, for
 * create to keep (the caller frees it). */
int oci_config_load_raw(const char *bundle, struct oci_config *c, buf *raw, cordon_error *err);
/* The copy create kept in the state directory dirfd (config.json, not
 * through a link), its relative paths taken from bundle: start, exec and
 * delete read this one, never the bundle's, which may have changed since. */
int oci_config_load_kept(int dirfd, const char *bundle, struct oci_config *c, cordon_error *err);
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
