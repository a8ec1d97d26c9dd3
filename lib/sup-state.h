/* The supervisor's state for one run (struct sup), shared by the files of
 * its sequence: sup-run.c (the order), sup-loop.c (the event loop),
 * sup-steps.c (the steps between the syncs), sup-finish.c (usage, outputs,
 * teardown), sup-check.c (the task check); and the few helpers they all use
 * (sup-state.c). Internal to the supervisor. */
#ifndef CORDON_SUP_STATE_H
#define CORDON_SUP_STATE_H

#include <stddef.h>
#include "cgroup.h"
#include "cleanup.h"
#include "compat.h"
#include "creds.h"
#include "error.h"
#include "hash.h"
#include "units.h"
#include "mounts.h"
#include "landlock.h"
#include "ns.h"
#include "observe.h"
#include "sockdiag.h"
#include "overlay.h"
#include "proxy.h"
#include "pxhttp.h"
#include "tls.h"
#include "cordon-pty.h"
#include "sup-run.h"
#include "sandbox.h"
#include "secrets.h"
#include "sup-stream.h"
#include "sync.h"
#include "sweep.h"
#include "sup-env.h"
#include "protect.h"
#include "sup-outcome.h"
#include "sup-after.h"
#include "child-init.h"

/* epoll data of the caller's cancel_fd (cordon_run_options) */
#define CANCEL_TAG (1ULL << 61)

#include "seccomp-policy.h"
#include "snapshot.h"

#define SETUP_TIMEOUT_NS (30ULL * 1000000000ULL)

/* How a run's output is handled: the task's goes to stdout/stderr; a
 * check's goes to stderr, every line prefixed. */
/* Secrets are read once per cordon_run, before the first boundary: the
 * task check reuses the same bytes (a secret file in a writable path that the
 * run replaced, with a symlink to /etc/shadow say, is never read again). */
struct secret_cache {
	bool loaded;
	int rc;
	cordon_error err;
	struct secrets sec; /* sec.redact moves to the first report */
};

struct run_opts {
	bool to_stderr;
	const char *prefix;
	struct secret_cache *sc;
	const struct run_hooks *hooks; /* a session (session.h), or NULL */
	const struct overlay_run *view; /* a check's: the task's change set (overlay.h) */
};

struct sup {
	bool coalesce; /* the last loop round moved a bulk read: sleep before waiting */
	const cordon_policy *pol;
	const struct run_opts *opts;
	struct run_report *rep;
	struct run_plan plan;
	struct sandbox_spec spec;
	strv env;
	size_t env_secret_start; /* env[k >= this] carry secret values */
	const struct secrets *sec; /* the run's cache (struct secret_cache) */
	const struct cgroup_ops *cgops; /* = cgp.ops */
	struct cg_prep cgp;
	struct cgroup cg;
	bool have_cg;
	struct cgroup_view cgview; /* init's copy is filled from MSG_CGROUP */
	bool privileged;
	uid_t host_uid, sb_uid;
	gid_t host_gid, sb_gid;
	/* per plan mount: rw bind without idmapped mounts, whose files were
	 * handed to sb_uid for the run (give_back_workspace undoes it) */
	bool *handed;
	/* The degraded boundary (sup-degrade.h): no namespaces of its own */
	bool degraded;
	/* and the proxy kept: the run's connects answered from its seccomp
	 * listener (sup-degrade-net.h; -1 until it arrives, and after) */
	bool degraded_proxy;
	/* read the run as its uid (a root cordon without CAP_SYS_PTRACE) */
	bool dnet_as_run;
	int dnet_listener;
	char ca_dir[64]; /* and TLS interception: the run's CA bundle's (sup_degrade_ca) */
	/* runtime */
	int sock, pidfd, epfd, timer, cpu_timer, sigfd;
	pid_t pid;
	struct out_stream out[2];
	uint64_t out_hash; /* hash budget of each output stream */
	bool exec_ok, got_exit, init_dead, setup_failed;
	bool setup_broken_pipe; /* the reason is a send that broke because init had gone */
	/* Init had forked the command when cordon killed the run, before its
	 * MSG_EXEC_OK came (sup_kill_run): the command may have run. */
	bool cmd_forked;
	int wstatus;
	int init_code, init_status; /* how init ended (waitid), 0 = not yet */
	enum run_status forced; /* ST_COUNT = none */
	int forced_signal;
	uint64_t t_start, t_exec, t_end;
	struct snapshot before;
	struct overlay_run ovl; /* workspace mode; the change set (overlay.h) */
	struct overlay_run view; /* a check's: the task's change set over its binds */
	struct sweep sweep; /* writable roots pinned before the run */
	struct landlock_plan landlock;
	struct mount_steps mounts; /* what init mounts, decided here */
	struct creds_plan creds;   /* the run's identities and maps */
	struct seccomp_plan seccomp;
	struct observer obs;
	bool have_obs;
	struct proxy *proxy;
	struct dnsd *dns;  /* network.transparent: the run's resolver (sup-dns.h) */
	struct handoff *handoff; /* network.transparent: the proxy's way in (sup-handoff.h) */
	/* TLS interception: the run's CA (its key only here), the bundle the
	 * run trusts (host CAs + the run's), the secrets to inject. */
	struct tls_ca *ca;
	const struct tls_ops *tls; /* with ca */
	buf ca_bundle;
	struct pxhttp_secret *psec;
	size_t npsec;
	bool notify;
	/* --pty: the run's own pty, relayed to cordon's terminal (cordon-pty.h) */
	bool pty_mode;
	struct pty_relay pty;
	/* A session's: the run's mount namespace, held from the clone to the
	 * end of cleanup() (-1 if it could not be opened). */
	int mntns;
	/* CORDON_TRACE_TIMING=1: phase timestamps on stderr (a diagnostic). */
	bool trace;
	uint64_t t0;
	buf trace_buf;
};

/* sup-state.c: the helpers every part of the sequence uses. */
uint64_t sup_now_ns(void);
/* CORDON_TRACE_TIMING=1: a phase's timestamp, printed at cleanup. */
void sup_trace(struct sup *s, const char *phase);
/* The first failure is the report's reason; the run is a setup error. */
void sup_setup_error(struct sup *s, const cordon_error *e);
/* Kill the run (init, and with it every process of it), for why. */
void sup_kill_run(struct sup *s, enum run_status why);
void sup_wipe_secret_copies(struct sup *s);
void sup_close_fd(int *fd);
/* The plan's writable binds (at most max), into roots. */
size_t sup_writable_roots(const struct sup *s, const char **roots, size_t max);

#endif
