/* Theory of operation
 * ===================
 * Processes and threads:
 *   supervisor  cordon itself, on the host (this file). Owns every resource
 *               of the run; its main thread runs one epoll loop (a table of
 *               sources, sup-loop.c). Two kinds of helper thread, each
 *               joined before the run returns: the seccomp observer
 *               (sup-observe.c, sleeps in SECCOMP_IOCTL_NOTIF_RECV; it alone
 *               writes the report's denials while it runs), and per output
 *               stream a hashing thread once the stream turns out to be bulk
 *               (sup-stream.c).
 *   init        PID 1 of the run's new user, mount, PID, IPC, UTS, network and
 *               cgroup namespaces, created by clone3 (child-init.c). Builds the
 *               view, drops everything, forks the command, reaps orphans,
 *               reports the command's status and exits: the kernel then kills
 *               every process left in the PID namespace (daemons included).
 *   command     PID 2: execs the task's argv.
 * Channels (sync.h):
 *   sock        SOCK_SEQPACKET pair; frames sized to their content (a header,
 *               then an error or a path if the type carries one), optionally
 *               with one fd:
 *               sync 1 (P->C MSG_GO1): uid/gid maps are written; init starts
 *                   building the system part of the view.
 *               meanwhile P makes the v1 cgroup, which init joins itself
 *                   (MSG_CGJOIN + fd: its "tasks" file, to which init
 *                   writes "0"; a move by PID waits for an RCU grace period),
 *                   prepares idmapped trees (sent as MSG_TREE + fd), names
 *                   the run's cgroup directories for its view (MSG_CGROUP),
 *                   sends the change set's layers in overlay mode as root
 *                   (MSG_OVERLAY + fd).
 *               view (P->C MSG_VIEW): every input of the view sent; init
 *                   builds it (mounts_finish, pivot_root, its namespaces)
 *                   while P sends the seccomp program (MSG_FILTER),
 *                   snapshots the writable paths (direct mode) or stamps
 *                   the change set's start (overlay mode: changeset_begin).
 *               sync 2 (P->C MSG_GO2): init drops its privileges, applies
 *                   Landlock and seccomp and starts the command.
 *               C->P: MSG_ERROR (setup failed; the command never started),
 *                   MSG_CHECK_RO (a check's workspace stayed read-only),
 *                   MSG_LISTENER + fd, MSG_PROXY_FD + fd, MSG_PTY + fd (--pty:
 *                   the master of the run's own pty), MSG_EXEC_OK,
 *                   MSG_EXIT (the command's wait status). One handler
 *                   (on_msg) serves the loop and the drain after init's exit.
 *   out/err     pipes from the command, streamed through by the loop.
 *   pidfd       of init: its exit ends the run.
 * If the supervisor dies (even SIGKILL), init gets SIGKILL (PDEATHSIG), and
 * with PID 1 gone the kernel kills the whole run.
 *
 * The supervisor's order (child-init.c lists the child's), each step with why:
 *   1. secrets read          once, before any step that can fail, so every
 *                            message after is redacted
 *   2. pre-flight            pol-plan.c: plan, model (paths, then env, limits,
 *                            syscalls once the ceiling is applied), ceiling,
 *                            ledger; refused before any process exists, as
 *                            `cordon explain` says
 *   3. inputs hashed         the evidence names what the command was given
 *   4. layers prepared       from the model: the environment (+ the secrets'
 *                            values), ids and maps (creds_prepare), mount steps
 *                            (mounts_prepare), Landlock rules, seccomp's
 *                            observer, rlimits; the weaker-enforcement
 *                            fallbacks decided here, the degraded boundary
 *                            first (sup-degrade.c: no namespaces to be had
 *                            and allow_weaker "namespaces": no view, no maps,
 *                            Landlock on the host's paths, the process group)
 *   5. cgroup v2             created before clone: init is born in it
 *   6. clone3                init in its namespaces (and v2 cgroup)
 *   7. uid/gid maps, sync 1  init may start its view
 *   8. non-dumpable          not before: init inherits the flag, and its
 *                            uid_map must stay ours to write
 *   9. cgroup v1, trees      while init mounts: attach, idmapped trees, the
 *                            cgroup's paths for its view (sup-steps.c); the
 *                            degraded boundary as root: the writable paths
 *                            handed to the run's uid
 *  10. seccomp compiled      after clone, overlapping init's mounts
 *  11. snapshot, sync 2      the writable paths as they were before the run
 *  12. event loop            output, limits, signals, messages, until init
 *                            has exited and the pipes are drained (sup-loop.c);
 *                            the degraded boundary: init's process group
 *                            killed at its exit (sup_degrade_reap)
 *  13. usage, outcome        sup-outcome.c decides status from the facts
 *                            (sup-finish.c)
 *  14. outputs, sweep, give-back, cleanup (sup-finish.c); in overlay mode
 *                            the task check first, on the change set
 *                            (sup-check.c), then the apply
 * This file keeps that order, every step named in it; the steps' bodies
 * are in the files named. */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "sup-run.h"
#include "ident.h"
#include "seccomp-cache.h"
#include "cs-seal.h"
#include "ca-bundle.h"
#include "cgroup-v2.h"
#include "cs-walk.h"
#include "mounts-prep.h"
#include "pol-opts.h"
#include "pol-plan.h"
#include "sup-proxy.h"
#include "sup-dns.h"
#include "sup-handoff.h"
#include "sup-state.h"
#include "sup-loop.h"
#include "sup-steps.h"
#include "sup-finish.h"
#include "sup-check.h"
#include "hostwhy.h"
#include "sup-degrade.h"
#include "sup-degrade-net.h"

/* The model's environment, then the secrets' values (only known now). */
static int build_env(struct sup *s, cordon_error *err)
{
	const strv *menv = &s->plan.model.run.env;
	for (size_t i = 0; i < menv->n; i++)
		if (strv_push(&s->env, menv->v[i]) < 0)
			return cordon_oom(err);
	return sup_env_add_secrets(s->sec, &s->env, &s->env_secret_start, err);
}

/* Limits that need a cgroup: create it (and on v1 attach pid). Where none
 * can be had, fall back to rlimits only if the policy accepts it. */
/* The run's cgroup (cgroup_start; the fallback is the layer's). */
static int cgroup_setup(struct sup *s, pid_t pid, cordon_error *err)
{
	const struct model_run *mr = &s->plan.model.run;
	if (cgroup_start(&s->cgp, &s->cg, &mr->cg, pid, &s->have_cg, err) < 0)
		return -1;
	if (s->have_cg)
		sup_trace(s, "cgroup created");
	else /* No cgroup: the per-process rlimits are all there is. */
		s->spec.rl = mr->rl_nocg;
	return 0;
}

int run_cgroup_preflight(const cordon_policy *p, struct cg_refusal *why, cordon_error *err)
{
	memset(why, 0, sizeof(*why));
	bool want = p->limits[LIM_MEMORY].set || p->limits[LIM_PIDS].set || p->limits[LIM_CPU].set;
	if (!want || (p->allow_weaker & WEAK_CGROUP))
		return 0;
	struct cg_prep cp;
	if (cgroup_prepare(&cp, policy_opts(p)->cgroup, want, false, err) < 0) {
		why->no_hierarchy = cp.no_hierarchy;
		return -1;
	}
	/* The very step a run takes: create the cgroup with its limits, then
	 * remove it again. */
	struct cgroup cg;
	struct cg_limits cl = {
		p->limits[LIM_MEMORY].set ? p->limits[LIM_MEMORY].value : 0,
		p->limits[LIM_PIDS].set ? p->limits[LIM_PIDS].value : 0,
	};
	bool made;
	memset(&cg, 0, sizeof(cg));
	if (cgroup_start(&cp, &cg, &cl, 0, &made, err) < 0) {
		why->missing = cg.missing;
		cgroup_prep_free(&cp);
		return -1;
	}
	if (made)
		cp.ops->destroy(&cg);
	cgroup_prep_free(&cp);
	return 0;
}

/* Landlock and seccomp: probed, then prepared here (the filter compiled by
 * libseccomp), applied by init. A layer the host lacks is a setup error
 * unless the policy accepts the weaker boundary. */
static int prepare_filters(struct sup *s, cordon_error *err)
{
	const cordon_policy *p = s->pol;
	/* Each layer decides its own fallback (allow_weaker). The run's own
	 * cgroup is in the model, in effect if it gets one (send_cgroup_view). */
	unsigned conds = (s->cgops ? MODEL_IF_CGROUP : 0) | (s->degraded ? LANDLOCK_HOST_VIEW : 0);
	if (landlock_prepare_run(p, &s->plan.model, conds, PROXY_PORT, &s->landlock, err) < 0)
		return -1;
	s->spec.landlock = &s->landlock;
	bool filter;
	if (seccomp_prepare_run(p, &filter, &s->notify, err) < 0)
		return -1;
	/* The observer reads the run's own view and network namespace. */
	if (s->degraded)
		s->notify = false;
	if (!filter)
		return 0;
	s->spec.seccomp = true; /* compiled after clone, sent at sync 2 */
	if (s->notify) {
		/* the budget first: a bad one is refused before anything is held */
		int64_t burst, refill;
		if (notify_budget_parse(opts_getenv(policy_opts(p)->envp, "CORDON_NOTIFY_BUDGET"), &burst, &refill,
					err) < 0)
			return -1;
		if (observer_init(&s->obs, &s->plan, p, p->net_allow.n > 0, s->ovl.active, err) < 0) {
			observer_free(&s->obs); /* what it made before it failed */
			return -1;
		}
		s->have_obs = true;
		/* init makes the observer's sock_diag socket (sockdiag.h) */
		s->spec.sockdiag = !s->obs.strict_ports;
		s->obs.budget_burst = burst;
		s->obs.budget_refill = refill;
	}
	sup_trace(s, "landlock and seccomp prepared");
	return 0;
}

/* Before clone: identities, environment, rlimits, and on cgroup v2 the
 * cgroup itself (the child is cloned straight into it). */
/* The secrets, read once per invocation, before any step that can fail
 * (run_once): a report or message about a failure (a missing bind whose path
 * or command line carries a value) is redacted from the first one on. */
static void load_secrets(struct sup *s)
{
	struct secret_cache *sc = s->opts->sc;
	if (sc->loaded)
		return;
	sc->loaded = true;
	sc->rc = secrets_load(s->pol, &sc->sec, &sc->err);
	/* The report redacts with it from now on (and owns it), also when
	 * a later secret failed to load. */
	s->rep->redact = sc->sec.redact;
	sc->sec.redact = NULL;
}

/* TLS interception (issue 16): a CA for this run, only when the proxy
 * opens some connections; the run's view gets a bundle of the host's CAs
 * and its certificate (never its key: that stays in this process). */
static int prepare_tls(struct sup *s, cordon_error *err)
{
	const cordon_policy *p = s->pol;
	if (!p->net_allow.n || !policy_intercepts(p))
		return 0;
	/* Valid for the run's wall time and an hour, at most 7 days. A
	 * session's clocks stop while it is paused (serve's --max-pause): its
	 * certificates last the 7 days, or a pause would outlive them. */
	uint64_t wall = p->limits[LIM_WALL].set && !s->spec.session ? p->limits[LIM_WALL].value / 1000000000ULL : 0;
	unsigned valid = wall && wall < 7 * 86400 ? (unsigned)wall + 3600 : 7 * 86400;
	if (!(s->tls = tls_ops_get(err)) || s->tls->ca_new(&s->ca, valid, err) < 0)
		return -1;
	size_t pl;
	const char *pem = s->tls->ca_pem(s->ca, &pl);
	if (ca_bundle_build(&s->ca_bundle, pem, pl, err) < 0)
		return -1;
	s->spec.ca_pem = s->ca_bundle.p;
	s->spec.ca_len = s->ca_bundle.len;
	/* The secrets the proxy injects, in the policy's order (the report's
	 * names are indexed by it). */
	for (size_t i = 0; s->sec && i < s->sec->n; i++)
		s->npsec += s->sec->v[i].placeholder != NULL;
	if (s->npsec && !(s->psec = calloc(s->npsec, sizeof(*s->psec))))
		return cordon_oom(err);
	for (size_t i = 0, k = 0; s->sec && i < s->sec->n; i++) {
		const struct secret_value *v = &s->sec->v[i];
		if (!v->placeholder)
			continue;
		s->psec[k++] = (struct pxhttp_secret){v->name, v->placeholder, v->value, v->len, &v->pol->inject_hosts,
						      v->pol->in_header, v->pol->in_query, v->pol->allow_plaintext, i};
	}
	return 0;
}

static int prepare(struct sup *s, cordon_error *err)
{
	const cordon_policy *p = s->pol;
	struct secret_cache *sc = s->opts->sc;
	load_secrets(s);
	if (sc->rc < 0) {
		*err = sc->err;
		return -1;
	}
	s->sec = &sc->sec;
	s->spec.secrets = sc->sec.v;
	s->spec.nsecrets = sc->sec.n;
	if (build_env(s, err) < 0 || prepare_tls(s, err) < 0)
		return -1;
	s->privileged = ident_euid() == 0;
	s->host_uid = getuid();
	s->host_gid = getgid();
	/* A serve client's run: the client is the invoking user (policy.h). */
	if (s->privileged && p->for_client) {
		s->host_uid = p->client_uid;
		s->host_gid = p->client_gid;
	}
	if (s->privileged) {
		s->sb_uid = SANDBOX_HOST_BASE + (uid_t)getpid();
		s->sb_gid = SANDBOX_HOST_BASE + (gid_t)getpid();
	} else {
		s->sb_uid = s->host_uid;
		s->sb_gid = s->host_gid;
	}
	if (sup_degrade_decide(s, err) < 0)
		return -1;
	const char *oh = policy_opts(s->pol)->output_hash;
	s->out_hash = OUTPUT_HASH_BYTES;
	if (oh && parse_size(oh, &s->out_hash, err) < 0)
		return cordon_err_wrap(err, "output hash budget (CORDON_OUTPUT_HASH)");
	/* The cgroup layer decides its fallback (allow_weaker "cgroup"). */
	if (cgroup_prepare(&s->cgp, policy_opts(p)->cgroup, s->plan.model.run.needs_cgroup,
			   p->allow_weaker & WEAK_CGROUP, err) < 0)
		return -1;
	s->cgops = s->cgp.ops;
	s->spec.plan = &s->plan;
	if (!s->degraded && mounts_prepare(&s->plan.model, &s->mounts, err) < 0)
		return -1;
	s->spec.mounts = &s->mounts;
	s->spec.cgview = &s->cgview;
	s->spec.proxy = p->net_allow.n > 0;
	s->spec.dns = s->spec.proxy && p->net_transparent;
	creds_prepare(s->host_uid, s->host_gid, s->sb_uid, s->sb_gid, s->privileged, &s->creds);
	s->spec.creds = &s->creds;
	s->spec.envp = s->env.v;
	if (overlay_prepare(&s->ovl, p, &s->plan, s->host_uid, s->host_gid, s->sb_uid, s->sb_gid, s->rep, err) < 0)
		return -1;
	s->spec.overlay_dirs = s->ovl.dirs;
	if (s->ovl.active && s->ovl.cs.key_held) {
		s->spec.cs_key = s->ovl.cs.key;
		s->spec.cs_key_len = sizeof(s->ovl.cs.key);
	}
	if (overlay_view_prepare(&s->view, s->opts->view, &s->plan, err) < 0)
		return -1;
	if (s->view.dirs)
		s->spec.overlay_dirs = s->view.dirs;
	s->spec.overlay_subs = s->view.subs;
	if (s->ovl.active || s->view.dirs) {
		s->spec.overlay_trees = malloc(s->plan.nmounts * sizeof(int));
		if (!s->spec.overlay_trees)
			return cordon_oom(err);
		for (size_t i = 0; i < s->plan.nmounts; i++)
			s->spec.overlay_trees[i] = -1;
	}
	/* One per mount, and one more for a check's files. */
	s->spec.tree_fds = calloc(s->plan.nmounts + 1, sizeof(int));
	if (!s->spec.tree_fds)
		return cordon_oom(err);
	for (size_t i = 0; i <= s->plan.nmounts; i++)
		s->spec.tree_fds[i] = -1;
	if (p->ws_layers.n) {
		s->spec.layer_fds = malloc(p->ws_layers.n * sizeof(int));
		if (!s->spec.layer_fds)
			return cordon_oom(err);
		s->spec.nlayers = p->ws_layers.n;
		for (size_t i = 0; i < p->ws_layers.n; i++)
			s->spec.layer_fds[i] = -1;
	}
	s->spec.rl = s->plan.model.run.rl;
	if (sup_degrade_layers(s, err) < 0 || prepare_filters(s, err) < 0 || sup_degrade_ca(s, err) < 0)
		return -1;
	/* Made before clone (v1 too: init joins it after clone), so that
	 * init is cloned with the rlimit fallback where none can be made
	 * (cgroup_setup). Before, v1's was made after clone, and a failure
	 * then left the run with neither (outside review attack20). */
	if (s->cgops && cgroup_setup(s, 0, err) < 0)
		return -1;
	if (s->cgp.rlimits_only)
		s->spec.rl = s->plan.model.run.rl_nocg;
	/* v1: init joins after clone, then makes its cgroup namespace. */
	if (s->have_cg && s->cgops != &cgroup_v2_ops)
		s->spec.unshare_cgroupns = !s->degraded;
	return 0;
}

static int parent_setup(struct sup *s, cordon_error *err)
{
	if ((!s->degraded && creds_apply_maps(s->pid, &s->creds, err) < 0) ||
	    sync_send(s->sock, MSG_GO1, 0, NULL, -1) < 0) /* sync 1 */
		return -1;
	sup_trace(s, "maps written, sync 1 sent");
	/* Not ptrace-able by other processes of the invoking user from here on.
	 * (Not earlier when unprivileged: init inherits the flag, and a
	 * non-dumpable init's uid_map is not ours to write.) */
	prctl(PR_SET_DUMPABLE, 0);
	if (s->have_cg && s->cgops != &cgroup_v2_ops) {
		/* v1: init moves itself in (sup_send_cgroup_join: no grace
		 * period waited for); the degraded boundary's init is moved by
		 * PID. */
		if (s->degraded ? s->cg.ops->attach(&s->cg, s->pid, err) < 0 : sup_send_cgroup_join(s, err) < 0)
			return -1;
		sup_trace(s, "cgroup attached");
	}
	if (s->degraded) {
		if (sup_degrade_hand_over(s, err) < 0)
			return -1;
	} else if (sup_send_idmapped_trees(s, err) < 0 || sup_send_cgroup_view(s, err) < 0 ||
	    (s->privileged && overlay_send_layers(&s->ovl, s->sock, err) < 0) ||
	    (s->privileged && overlay_send_view(&s->view, s->sock, err) < 0))
		return -1;
	/* What the writable roots hold now, before init makes its mount
	 * points in them (mounts_finish): direct mode's snapshot, which its
	 * outputs are judged against, and the pins the sweep restores. */
	const char *roots[256];
	size_t n = sup_writable_roots(s, roots, ARRAY_SIZE(roots));
	if ((!s->ovl.active && snapshot_take(&s->before, roots, n, err) < 0) || sweep_pin(&s->sweep, roots, n, err) < 0 ||
	    (!s->ovl.active && sup_keep_pins(s, err) < 0))
		return -1;
	sup_trace(s, "snapshot taken");
	/* Init builds the view from here, while the steps below are taken. */
	if (sync_send(s->sock, MSG_VIEW, 0, NULL, -1) < 0)
		return cordon_err_errno(err, "send the view's go");
	sup_trace(s, "view's inputs sent");
	if (s->spec.seccomp) {
		/* Compiled here, while init builds its view, not before clone;
		 * or, when an earlier run compiled the same, from the user's
		 * cache (seccomp-cache.h), stored there after it is sent. */
		char key[65];
		bool hit;
		if (seccomp_build_cached(&s->plan.model.run, s->notify,
					 s->pol->no_file_reports && !model_protects(&s->plan.model) ? NULL : observer_calls,
					 &s->seccomp, &hit, key, err) < 0)
			return -1;
		if (sync_send(s->sock, MSG_FILTER, s->seccomp.notify, NULL, s->seccomp.memfd) < 0)
			return cordon_err_errno(err, "send the seccomp filter");
		sup_trace(s, hit ? "seccomp filter from the cache and sent" : "seccomp filter compiled and sent");
		if (key[0]) {
			seccomp_cache_store(key, &s->seccomp);
			sup_trace(s, "seccomp filter stored in the cache");
		}
	}
	/* The change set's start stamp: after the work above, so that the
	 * coarse clock's tick it may wait for has come by now (and init's
	 * view is built meanwhile); before sync 2, so before any write of
	 * the run's. */
	if (s->ovl.active && overlay_begin(&s->ovl, err) < 0)
		return -1;
	sup_trace(s, "change set begun, sync 2 sent");
	if (sync_send(s->sock, MSG_GO2, 0, NULL, -1) < 0) /* sync 2 */
		return cordon_err_errno(err, "sync 2");
	return 0;
}

static int spawn_and_supervise(struct sup *s, cordon_error *err)
{
	int sv[2] = {-1, -1}, po[2] = {-1, -1}, pe[2] = {-1, -1};
	/* A terminal on cordon's stdin is never the command's: it gets
	 * /dev/null instead (README, "Standard input"). Pipes and files are
	 * passed as they are. */
	s->spec.stdin_fd = -1;
	/* --pty: init's own stdin is /dev/null too; the command's is the pty. */
	if ((s->pty_mode || isatty(STDIN_FILENO)) && (s->spec.stdin_fd = open("/dev/null", O_RDONLY | O_NOCTTY | O_CLOEXEC)) < 0)
		return cordon_err_errno(err, "open /dev/null for the command's stdin");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		int e = errno;
		sup_close_fd(&sv[0]); sup_close_fd(&sv[1]); sup_close_fd(&po[0]); sup_close_fd(&po[1]);
		sup_close_fd(&pe[0]); sup_close_fd(&pe[1]); sup_close_fd(&s->spec.stdin_fd);
		return cordon_err(err, e, "socketpair/pipe");
	}
	/* Signals that stop the run are read from a signalfd by the loop. */
	sigset_t mask, old;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	if (s->pty_mode)
		sigaddset(&mask, SIGWINCH);
	sigprocmask(SIG_BLOCK, &mask, &old);
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

	struct cordon_clone_args ca;
	memset(&ca, 0, sizeof(ca));
	int pidfd = -1;
	ca.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
		   CLONE_NEWNET | CLONE_PIDFD;
	if (s->degraded) /* none of its own (sup-degrade.h) */
		ca.flags = CLONE_PIDFD;
	ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
	ca.exit_signal = SIGCHLD;
	if (s->have_cg && s->cg.dirfd >= 0) {
		/* v2: born in the run's cgroup and its own cgroup namespace. */
		ca.flags |= CLONE_INTO_CGROUP | (s->degraded ? 0 : CLONE_NEWCGROUP);
		ca.cgroup = (uint64_t)s->cg.dirfd;
	}
	if (s->pty_mode) {
		/* cordon's terminal goes raw here; pty_relay_end puts it back on
		 * every way out below (a signal ends the run through the loop). */
		pty_relay_begin(&s->pty, STDIN_FILENO, policy_opts(s->pol)->stdout_fd);
		s->spec.pty = true;
		s->spec.pty_size = s->pty.ws;
	}
	s->t_start = sup_now_ns();
	sup_trace(s, "clone3");
	pid_t pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	/* A container's profile may answer clone3 ENOSYS (for libc to fall
	 * back to clone, whose flags it can read): the degraded boundary
	 * asks for no namespace, so clone does, and the v2 cgroup is joined
	 * before sync 1 (sup_degrade_join_cgroup). */
	bool late_cg = false;
	if (pid < 0 && errno == ENOSYS && s->degraded) {
		late_cg = (ca.flags & CLONE_INTO_CGROUP) != 0;
		pid = (pid_t)syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, NULL, &pidfd, NULL, 0);
	}
	if (pid == 0) {
		close(sv[0]);
		close(po[0]);
		close(pe[0]);
		sandbox_init_main(&s->spec, sv[1], po[1], pe[1]);
	}
	int clone_errno = errno;
	sup_wipe_secret_copies(s);
	sup_close_fd(&s->spec.stdin_fd);
	close(sv[1]);
	close(po[1]);
	close(pe[1]);
	s->sock = sv[0];
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		if (s->pty_mode)
			pty_relay_end(&s->pty);
		sigprocmask(SIG_SETMASK, &old, NULL);
		/* Said as explain says it (hostwhy.h): the cause, not the errno. */
		char why[256];
		hostwhy_userns(clone_errno, s->privileged, why, sizeof(why));
		return cordon_err(err, 0, "%s; clone3 into new user, mount, pid, ipc, uts and network namespaces: %s", why,
				  strerror(clone_errno));
	}
	s->pid = pid;
	s->pidfd = pidfd;
	cordon_error cge = {0};
	if (late_cg && sup_degrade_join_cgroup(s, &cge) < 0) {
		sup_setup_error(s, &cge);
		sup_kill_run(s, ST_SETUP_ERROR);
	}
	/* The run's network namespace, from init (our child, its PID pinned)
	 * before the command runs: where the observer asks which loopback
	 * listeners the run has (sockdiag.h). */
	if (s->spec.sockdiag)
		s->obs.diag = sockdiag_adopt(pid, -1); /* its socket from init (MSG_DIAG_FD) */
	/* A session holds its mount namespace: when init exits, the kernel
	 * does not take the view down (its umounts wait for RCU grace
	 * periods: 1-460 ms measured at load 8-10, when init's exit was
	 * 1 ms with the namespace held) before init can be reaped. The report
	 * is complete once init is reaped and the outputs collected; the
	 * session answers then (run_hooks.on_report), and the view goes at
	 * sup_cleanup(). Best effort: without it, init's exit does it. */
	if (s->spec.session) {
		char ns[64];
		snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)pid);
		s->mntns = open(ns, O_RDONLY | O_CLOEXEC);
	}
	/* The supervisor's own fds: the soft RLIMIT_NOFILE up to the hard one,
	 * here, after the clone, so that the run keeps the limit it was given.
	 * The proxy sizes its connection cap from it. Put back once the proxy
	 * is closed: whatever the caller starts next gets its own limit. */
	struct rlimit nofile, nofile_was;
	bool nofile_raised = false;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile_was = nofile;
		nofile.rlim_cur = nofile.rlim_max;
		nofile_raised = setrlimit(RLIMIT_NOFILE, &nofile) == 0;
	}
	s->rep->enf.user_ns = s->rep->enf.pid_ns = s->rep->enf.net_ns = s->rep->enf.mount_ns = !s->degraded;
	s->rep->enf.sandbox_host_uid = s->sb_uid;
	const struct cordon_run_options *ro = policy_opts(s->pol);
	stream_init(&s->out[0], po[0], s->opts->to_stderr ? ro->stderr_fd : ro->stdout_fd, s->rep->redact,
		    s->opts->prefix, s->out_hash);
	stream_init(&s->out[1], pe[0], ro->stderr_fd, s->rep->redact, s->opts->prefix, s->out_hash);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	s->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	s->cpu_timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	cordon_error e = {0};
	struct epoll_event cancel_ev = {.events = EPOLLIN | EPOLLONESHOT, .data.u64 = CANCEL_TAG};
	struct proxy_tls ptls = {s->ca, s->tls, s->pol->upstream_ca, s->psec, s->npsec};
	if (s->spec.proxy && s->epfd >= 0 &&
	    proxy_new(&s->proxy, &s->pol->net_allow, &s->pol->net_rules, &ptls, s->rep, s->epfd, &e) < 0) {
		sup_setup_error(s, &e);
		sup_kill_run(s, ST_SETUP_ERROR);
	}
	if (s->spec.dns && s->epfd >= 0 && dnsd_new(&s->dns, &s->pol->net_allow, s->rep, s->epfd, &e) < 0) {
		sup_setup_error(s, &e);
		sup_kill_run(s, ST_SETUP_ERROR);
	}
	if (s->dns && s->proxy)
		proxy_set_resolve(s->proxy, &s->pol->net_resolve);
	if (s->dns && s->have_obs) {
		s->obs.dns = s->dns;
		s->obs.net_allow = &s->pol->net_allow;
		s->obs.net_resolve = &s->pol->net_resolve;
		s->obs.net_rules = &s->pol->net_rules;
		s->obs.psec = s->psec;
		s->obs.npsec = s->npsec;
		/* Ports whose requests are read go to the proxy (sup-handoff.h). */
		if (s->proxy && (handoff_new(&s->handoff, &e) < 0 || proxy_set_handoff(s->proxy, s->handoff, &e) < 0)) {
			sup_setup_error(s, &e);
			sup_kill_run(s, ST_SETUP_ERROR);
		}
		s->obs.handoff = s->handoff;
	}
	/* The degraded boundary's proxy: no listener of its own, only the
	 * connections the supervisor makes for the run (sup-degrade-net.h). */
	if (s->degraded_proxy && s->proxy &&
	    (handoff_new(&s->handoff, &e) < 0 || proxy_set_handoff(s->proxy, s->handoff, &e) < 0)) {
		sup_setup_error(s, &e);
		sup_kill_run(s, ST_SETUP_ERROR);
	}
	if (s->epfd < 0 || s->timer < 0 || s->cpu_timer < 0 || s->sigfd < 0 ||
	    sup_ep_add(s->epfd, s->sock, EPOLLIN) < 0 || sup_ep_add(s->epfd, s->pidfd, EPOLLIN) < 0 ||
	    sup_ep_add(s->epfd, s->out[0].in_fd, EPOLLIN) < 0 || sup_ep_add(s->epfd, s->out[1].in_fd, EPOLLIN) < 0 ||
	    sup_ep_add(s->epfd, s->timer, EPOLLIN) < 0 || sup_ep_add(s->epfd, s->cpu_timer, EPOLLIN) < 0 ||
	    sup_ep_add(s->epfd, s->sigfd, EPOLLIN) < 0 ||
	    (ro->cancel_fd > 0 && epoll_ctl(s->epfd, EPOLL_CTL_ADD, ro->cancel_fd, &cancel_ev) < 0)) {
		cordon_err_errno(&e, "supervisor event loop");
		sup_setup_error(s, &e);
		sup_kill_run(s, ST_SETUP_ERROR);
	} else {
		sup_arm_timer(s->timer, SETUP_TIMEOUT_NS);
		if (parent_setup(s, &e) < 0) {
			sup_setup_error(s, &e);
			sup_kill_run(s, ST_SETUP_ERROR);
		}
	}
	s->rep->enf.cgroup = s->have_cg ? s->cgops->name : "none";
	sup_event_loop(s);
	if (s->pty_mode)
		pty_relay_end(&s->pty);
	/* The proxy's connections go before anything else is read (outputs need
	 * fds too); its totals are in the report from here on. */
	proxy_free(s->proxy);
	s->proxy = NULL;
	/* The observer reads the resolver's names (a connect to one): it
	 * stops first (init is gone: nothing is left to answer). */
	if (s->dns && s->have_obs)
		observer_stop(&s->obs);
	dnsd_free(s->dns);
	s->dns = NULL;
	sup_degrade_net_stop(s);
	handoff_free(s->handoff); /* after the observer and the proxy */
	s->handoff = NULL;
	if (nofile_raised)
		setrlimit(RLIMIT_NOFILE, &nofile_was);
	/* Make sure init is gone and reaped. */
	if (!s->init_dead) {
		syscall(SYS_pidfd_send_signal, s->pidfd, SIGKILL, NULL, 0);
		sup_degrade_reap(s);
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		if (waitid(P_PIDFD, (id_t)s->pidfd, &si, WEXITED) == 0) {
			s->init_code = si.si_code;
			s->init_status = si.si_status;
		}
		s->t_end = sup_now_ns();
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return 0;
}

static int run_check(const cordon_policy *p, struct run_report *rep, struct secret_cache *sc,
		     const struct overlay_run *view, cordon_error *err);

/* Overlay and review mode: the task check runs here, on the change set over
 * the host tree, before anything is applied; a task verdict of fail or
 * error is a run that did not end ok for on_failure (issue 28.1). */
static bool check_before_apply(struct sup *s)
{
	struct run_report *rep = s->rep;
	if (!s->ovl.active || !s->pol->check || s->pol->is_check || s->opts->hooks ||
	    (rep->status != ST_OK && rep->status != ST_EXIT_NONZERO))
		return rep->status == ST_OK;
	cordon_error e = {0};
	/* The check judges what the host gets: what the apply leaves out (the
	 * ignore list) is removed from the change set first (F4). */
	if ((changeset_drop_ignored(&s->ovl.cs, NULL, &e) < 0 && cordon_err_wrap(&e, "the change set before the check")) ||
	    run_check(s->pol, rep, s->opts->sc, &s->ovl, &e) < 0) {
		rep->check_ran = true;
		rep->check_status = ST_SETUP_ERROR;
		rep->check_exit_code = -1;
		rep->task = TASK_ERROR;
		snprintf(rep->check_reason, sizeof(rep->check_reason), "%s", e.msg);
	}
	sup_trace(s, "task check done");
	return rep->status == ST_OK && rep->task != TASK_FAIL && rep->task != TASK_ERROR;
}

static int run_once(const cordon_policy *p, char *const argv[], struct run_report *rep,
		    const struct run_opts *opts, cordon_error *err)
{
	struct sup s;
	memset(&s, 0, sizeof(s));
	s.seccomp.memfd = -1;
	if (ident_euid() == 0)
		prctl(PR_SET_DUMPABLE, 0);
	else /* the command's run cleared it; its check's init must be
	      * dumpable for its uid_map to be ours to write */
		prctl(PR_SET_DUMPABLE, 1);
	s.pol = p;
	s.opts = opts;
	s.rep = rep;
	s.forced = ST_COUNT;
	s.t0 = sup_now_ns();
	/* Not a check's run: its output goes to stderr, prefixed. */
	s.pty_mode = policy_opts(p)->pty && !opts->to_stderr;
	s.pty.master = -1;
	s.pty.in_fd = -1;
	s.pty.host.fd = -1;
	s.trace = policy_opts(p)->trace_timing;
	s.sock = s.pidfd = s.epfd = s.timer = s.cpu_timer = s.sigfd = s.mntns = s.dnet_listener = -1;
	s.out[0].in_fd = s.out[1].in_fd = s.out[0].out_fd = s.out[1].out_fd = -1;
	for (int i = 0; i < LIM_COUNT; i++)
		rep->limits[i] = p->limits[i];
	for (size_t i = 0; argv[i]; i++)
		if (strv_push(&rep->command, argv[i]) < 0)
			return cordon_oom(err);
	_cleanup_free_ char *canon = policy_canonical_json(p);
	if (!canon)
		return cordon_oom(err);
	sha256_hex(canon, strlen(canon), rep->policy_sha256);
	for (size_t i = 0; i < p->nsecrets; i++)
		strv_push(&rep->secrets, p->secrets[i].name);

	load_secrets(&s);
	cordon_error e = {0};
	if (run_preflight((cordon_policy *)p, &s.plan, rep, &e) < 0) {
		if (rep->status == ST_INFEASIBLE || rep->status == ST_UNAUTHORIZED) {
			struct run_facts f;
			struct run_outcome o;
			run_facts_init(&f);
			f.refused = rep->status;
			f.reason = e.msg;
			run_outcome_decide(&f, &o);
			rep->status = o.status;
			snprintf(rep->reason, sizeof(rep->reason), "%s", o.reason);
		} else {
			sup_setup_error(&s, &e);
		}
		run_plan_free(&s.plan);
		return 0;
	}
	/* The ceiling may have supplied limits: the report shows them. */
	for (int i = 0; i < LIM_COUNT; i++)
		rep->limits[i] = p->limits[i];
	/* Inputs are hashed before the run starts: the evidence names what the
	 * command was given, not what it left behind. */
	if (p->inputs.n) {
		strv in = {0};
		int rc = run_plan_inputs(&s.plan, &p->inputs, &in, &e);
		if (rc == 0)
			rc = files_hash_tree((const char *const *)in.v, in.n, s.plan.workspace, &rep->inputs, &e);
		strv_free(&in);
		if (rc < 0) {
			sup_setup_error(&s, &e);
			run_plan_free(&s.plan);
			return 0;
		}
	}
	sup_trace(&s, "preflight done");
	s.spec.argv = argv;
	s.spec.session = opts->hooks != NULL;
	if (prepare(&s, &e) < 0) {
		sup_setup_error(&s, &e);
	} else {
		s.spec.argv = argv;
		if (spawn_and_supervise(&s, &e) < 0)
			sup_setup_error(&s, &e);
	}
	if (opts->hooks)
		opts->hooks->on_end(opts->hooks->ctx);
	/* The observer's denials are the report's from here on. */
	if (s.have_obs) {
		observer_stop(&s.obs);
		s.rep->notify.present = true;
		s.rep->notify.answered = s.obs.budget.answered;
		s.rep->notify.throttled = s.obs.budget.throttled;
		s.rep->notify.held_seconds = (double)s.obs.budget.held_ns / 1e9;
		s.rep->net.transparent.handed_in = atomic_load(&s.obs.conn_counts.handed_in);
		s.rep->net.transparent.proxied = atomic_load(&s.obs.conn_counts.proxied);
		s.rep->net.transparent.refused = atomic_load(&s.obs.conn_counts.refused);
		s.rep->net.transparent.failed = atomic_load(&s.obs.conn_counts.failed);
		s.rep->net.transparent.over_limit = atomic_load(&s.obs.conn_counts.over_limit);
		s.rep->net.transparent.pending_max = CONNECTOR_MAX;
		if (atomic_load(&s.obs.violated) && s.pol->kill_on_violation && s.forced == ST_COUNT &&
		    !s.setup_failed) {
			s.forced = ST_DENIED;
			/* The violation was the command's: it ran, even when
			 * the observer's kill reached init before init had said
			 * so (MSG_EXEC_OK). Its outputs are collected. */
			if (!s.exec_ok)
				s.cmd_forked = true;
		}
	}
	if (s.pid > 0) {
		sup_finish_usage(&s);
		/* Overlay and review mode: the task check, on the change set,
		 * before anything is applied. */
		bool apply = s.ovl.active && check_before_apply(&s);
		sup_finish_outputs(&s, apply);
	}
	/* The report is complete: a session answers before the teardown. */
	if (opts->hooks && opts->hooks->on_report && s.pid > 0) {
		opts->hooks->on_report(opts->hooks->ctx);
		sup_trace(&s, "report handed over");
	}
	sup_cleanup(&s);
	return 0;
}

/* The task check: after the command completed (ok or exit-nonzero; a run
 * stopped by a limit or a policy kill leaves the task "not-run"), the check
 * command runs in a fresh boundary with the same policy and the outputs
 * visible read-only; its exit status alone decides the task verdict
 * (sup-check.c). */
static int run_check(const cordon_policy *p, struct run_report *rep, struct secret_cache *sc,
		     const struct overlay_run *view, cordon_error *err)
{
	cordon_policy *cp;
	if (sup_check_policy(p, rep, view, &cp, err) < 0)
		return -1;
	if (!cp)
		return 0;
	char *argv[] = {"/bin/sh", "-c", p->check, NULL};
	struct run_report crep;
	report_init(&crep);
	/* Same secrets, same bytes, same redactor (lent, not owned). */
	crep.redact = rep->redact;
	struct run_opts o = {true, "check: ", sc, NULL, view};
	int r = run_once(cp, argv, &crep, &o, err);
	crep.redact = NULL;
	if (r == 0)
		r = sup_check_verdict(rep, &crep, cp, err);
	report_free(&crep);
	policy_free(cp);
	return r;
}

int run_command(cordon_policy *p, char *const argv[], struct run_report *rep,
	       cordon_error *err)
{
	/* A reader of our output that goes away must not kill the supervisor
	 * (the run would lose its report): EPIPE instead, for this run only.
	 * The command gets default signal handling back before exec. */
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);
	/* The run sets the dumpable flag as its steps need (run_once,
	 * parent_setup); the caller gets its own back (include/cordon.h). */
	int dumpable = prctl(PR_GET_DUMPABLE);
	struct secret_cache sc;
	memset(&sc, 0, sizeof(sc));
	struct run_opts o = {false, NULL, &sc, NULL, NULL};
	cordon_state_dir_hold(true);
	int r = run_once(p, argv, rep, &o, err);
	/* (in overlay and review mode the check ran before the apply) */
	if (r == 0 && p->check && !rep->check_ran && (rep->status == ST_OK || rep->status == ST_EXIT_NONZERO))
		r = run_check(p, rep, &sc, NULL, err);
	cordon_state_dir_hold(false);
	secrets_free(&sc.sec);
	if (dumpable >= 0)
		prctl(PR_SET_DUMPABLE, dumpable);
	sigaction(SIGPIPE, &old, NULL);
	return r;
}

int cordon_session_run(cordon_policy *p, struct run_report *rep, const struct run_hooks *h,
		       cordon_error *err)
{
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);
	struct secret_cache sc;
	memset(&sc, 0, sizeof(sc));
	struct run_opts o = {false, NULL, &sc, h, NULL};
	char *argv[] = {"cordon-session", NULL};
	int r = run_once(p, argv, rep, &o, err);
	secrets_free(&sc.sec);
	sigaction(SIGPIPE, &old, NULL);
	return r;
}
