/* The run report: the authoritative result of a run. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "json.h"
#include "policy.h"
#include "exposure.h"
#include "redact.h"
#include "snapshot.h"
#include "sweep.h"
#include "strv.h"

enum run_status {
	ST_OK, ST_EXIT_NONZERO, ST_SIGNALED, ST_TIMEOUT, ST_CPU_LIMIT, ST_MEMORY_LIMIT,
	ST_OUTPUT_LIMIT, ST_FILE_SIZE_LIMIT, ST_DENIED, ST_UNAUTHORIZED, ST_INFEASIBLE,
	ST_SETUP_ERROR, ST_INTERRUPTED, ST_COUNT
};
const char *status_name(enum run_status s);
/* The exit status of `cordon run` for a report (see README, "Exit status"). */
int status_exit_code(enum run_status s, int exit_code, int sig);

enum task_verdict { TASK_NOT_RUN, TASK_PASS, TASK_FAIL, TASK_ERROR };

struct denial {
	char kind[16];
	char target[256];
	uint64_t count;
	uint64_t unattributed; /* of count: made with no process known (the proxy...) */
	bool check; /* made by the task's check (phase "check"), not the command */
};

#include <pthread.h>

struct net_endpoint {
	char target[300];
	uint64_t conns, up, down;
};

/* One request read by the proxy (plain HTTP, opened TLS): its path
 * without the query, redacted. */
struct net_request {
	char method[32];
	char target[300]; /* host:port */
	char path[256];
	int status;       /* 0: no response */
	uint64_t up, down;
	uint32_t injected; /* bit i: the policy's secret i was injected */
};
/* A secret injected to an endpoint, and how often. */
struct net_injection {
	size_t secret;    /* index in the policy's secrets (report.secrets) */
	char target[300];
	uint64_t count;
};
#define NET_INJECTIONS_MAX 256
#define NET_REQUESTS_MAX 1000

/* One requested grant, checked against the operator's ceiling. */
struct grant {
	char kind[16];    /* read, write, tmpfs, input, network, port, secret, limit, syscall, weaker */
	char target[512];
	bool allowed;
	char rule[512];   /* the ceiling entry that allowed it, or why not */
};

struct stream_stats {
	uint64_t bytes;
	char sha256[65];       /* of the first hashed_bytes bytes */
	bool hash_skipped;     /* bytes went past the hash budget */
	uint64_t hashed_bytes;
};

struct enforcement {
	bool user_ns, pid_ns, net_ns, mount_ns;
	int landlock_abi;   /* ABI applied, 0 = not applied */
	bool seccomp;       /* filter applied */
	bool seccomp_notify; /* denials reported through user notification */
	bool file_observer; /* path calls observed for file denials */
	const char *cgroup; /* "v1", "v2", "none" */
	bool idmapped_workspace;
	/* how files the run writes come to belong to the invoking user:
	 * "idmapped", "chown" (no idmapped mounts there), "invoking-uid" (an
	 * ordinary user's run is that user), NULL when nothing is writable */
	const char *workspace_ownership;
	char workspace_ownership_reason[512];
	bool no_new_privs;
	uint32_t sandbox_host_uid;
	/* "overlay", "review", "direct" (NULL: the run never got that far) and
	 * why it is not the mode asked for ("" when it is) */
	const char *workspace_mode;
	char workspace_mode_reason[512];
	/* the fall-back is one the invoking user must hear of at once (the
	 * change sets' directory is someone else's): the CLI prints the
	 * reason on stderr too */
	bool workspace_mode_warn;
	/* The degraded boundary (allow_weaker "namespaces", docs/hosts.md):
	 * what was lost, one line each, and what holds instead; empty when
	 * the run had its namespaces. Containment is then "weaker". */
	char degraded[10][512];
	size_t ndegraded;
};

/* The run's change set (overlay and review modes; README, "Workspace modes"). */
struct changes_report {
	bool present;       /* the run had one */
	const char *state;  /* "applied", "kept", "discarded" */
	char dir[4096];     /* where it is, while it is kept */
	char reason[1024];  /* why it was kept or discarded ("" when applied as asked) */
	strv refused;       /* entries not applied: special files ("path: why") */
	strv protected;     /* entries held back: at protected paths (host paths) */
	strv conflicts;     /* entries held back: the host's changed since the start */
};

struct run_report {
	enum run_status status;
	int exit_code; /* the command's exit code, -1 if it did not exit */
	int signal;    /* signal that ended the command, 0 if none */
	char reason[1024];
	bool limits_hit[LIM_COUNT];
	double wall_seconds, setup_seconds;
	bool have_cpu, have_memory;
	uint64_t cpu_user_ns, cpu_sys_ns, peak_memory;
	struct denial *denials;
	size_t ndenials;
	strv command;
	char policy_sha256[65];
	char rootfs[4096]; /* the image directory the view came from (policy root); "" = the host's */
	/* The workspace when it is a directory of the image (--workspace):
	 * its path in the run (the image's); "" = none. */
	char image_workspace[4096];
	struct file_list inputs, outputs;
	/* The sweep after the run (sweep.h): privilege bits and file
	 * capabilities cleared, writable roots' mode/owner put back. */
	struct fix_list privilege_cleared, root_restored;
	struct sweep_status privilege_sweep; /* incomplete: containment is never clean */
	struct stream_stats out[2];
	strv secrets;
	struct exposure_list exposures; /* secrets found in the files written */
	struct enforcement enf;
	struct changes_report changes;
	/* The change set's directory while the run goes on (a session's
	 * GET .../changes reads it); not part of the report's JSON. */
	char live_changes[4096];
	char live_upper[4096]; /* the workspace's upper directory in it ("": none) */
	char live_workspace[4096]; /* the run's workspace (plan), its lower tree */
	dev_t live_ws_dev;         /* its tree as mounted (0: not known) */
	ino_t live_ws_ino;
	int live_init_pid;     /* the run's init (host pid), while it runs; 0: none */
	enum task_verdict task;
	bool check_ran;
	enum run_status check_status;
	int check_exit_code;
	double check_wall_seconds;
	char check_reason[1024]; /* why the check could not run (task "error") */
	/* The check's workspace (issue 28.2): "scratch" (writable, thrown
	 * away) or "read-only", with the reason; NULL: not said. In the
	 * check's own report: the reason, if it stayed read-only. */
	const char *check_workspace;
	char check_workspace_reason[512];
	bool have_ledger;
	uint64_t ledger_peak;
	/* The seccomp notifications the supervisor answered, and how often and
	 * how long it left the listener unread because the run's budget was
	 * spent (notify-budget.h); present: the run had a listener. */
	struct {
		bool present;
		uint64_t answered, throttled;
		double held_seconds;
	} notify;
	struct cordon_limit limits[LIM_COUNT]; /* effective, with sources */
	redactor *redact;      /* owned: every string of the report goes through it */
	char ceiling_sha256[65]; /* empty: no ceiling */
	char ceiling_path[4096];
	struct grant *grants;  /* owned */
	size_t ngrants;
	strv unauthorized;     /* one line per excess */
	strv writable;         /* host paths the run could write (for the report's own target) */
	struct {
		bool enabled;      /* egress declared: the proxy ran */
		uint64_t conns, denied, up, down;
		uint64_t max_conns;  /* the proxy's cap on connections at once */
		uint64_t over_limit; /* connections refused (503) at the cap or the memory budget */
		struct net_endpoint *ep;
		size_t nep;
		struct net_request *req;  /* at most NET_REQUESTS_MAX */
		size_t nreq;
		uint64_t req_omitted;     /* requests past the cap */
		struct net_injection *inj;
		size_t ninj;
		/* The run's own resolver (network.transparent; sup-dns.h). */
		struct {
			bool enabled;
			uint64_t queries, answered, refused; /* refused: NXDOMAIN, FORMERR, ... */
			uint64_t names, names_max;           /* declared names given an address */
			uint64_t over_limit;                 /* declared names past names_max */
		} dns;
		/* Its connects (sup-connect.c, sup-connector.h). */
		struct {
			uint64_t handed_in, proxied, refused, failed, pending_max, over_limit;
			uint64_t uncounted; /* handed in, bytes not read (sup-tally.h) */
		} transparent;
		/* A pod's inbound relay (cordon-oci, oci-inbound.h); nports 0: none. */
		struct {
			uint16_t ports[16];
			size_t nports;
			uint64_t connections, dropped, failed, full, max_conns;
		} inbound;
	} net;
	/* Denials come from the supervisor loop and the observer thread. */
	pthread_mutex_t denial_lock;
	hindex denial_idx;        /* (kind, target) -> position in denials */
	size_t denial_cap;
	uint64_t denials_omitted; /* refused operations of targets past the cap */
	/* A session (cordon serve): each denial the seccomp observer made, by
	 * the process group (in the run's PID namespace) of the process that
	 * made it, so that an exec's result lists its own; off (NULL) for a
	 * run. Bounded: past DENIAL_GROUPS_MAX entries, a denial counts as
	 * unattributed. */
	struct denial_group {
		uint32_t idx;  /* in denials */
		int32_t pgid;  /* in the run's PID namespace */
		uint64_t count;
	} *by_group;
	size_t nby_group;
	bool attribute;
};

#define DENIAL_GROUPS_MAX 8192

/* Distinct (kind, target) pairs kept; further targets are only counted. */
#define DENIALS_MAX_TARGETS 1024

void report_init(struct run_report *r);
/* The index of target's entry in r's network.endpoints, made (zero) if
 * there is none; SIZE_MAX out of memory. */
size_t report_net_endpoint(struct run_report *r, const char *target);
void report_free(struct run_report *r);
/* Record one more denial of (kind, target): O(1) (a hash index), at most
 * DENIALS_MAX_TARGETS distinct pairs, the rest counted in denials_omitted. */
int report_add_denial(struct run_report *r, const char *kind, const char *target);
/* The same, made by a process of group pgid (in the run's PID namespace;
 * <= 0: not known, as report_add_denial). */
int report_add_denial_by(struct run_report *r, const char *kind, const char *target, int pgid);
/* Add the check's denials (from its own report) as phase "check". */
int report_add_check_denials(struct run_report *r, const struct run_report *check);
/* The canonical JSON form of the effective policy (for policy_sha256) is
 * the policy layer's: pol-canon.h, included here for the callers. */
#include "pol-canon.h"
