/* The supervisor's finishing (steps 13 and 14 of sup-run.c): usage and the
 * outcome, the output streams' totals, the outputs (a snapshot's diff or the
 * change set), the privilege sweep, the workspace given back, and the
 * teardown of everything the run held. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "sup-finish.h"
#include "ident.h"
#include "sup-degrade-net.h"
#include "sup-degrade.h"
#include "clock.h"
#include "layers.h"
#include "snapshot.h"
#include "cleanup.h"
#include "cs-seal.h"
#include "hash.h"
#include "mounts-prep.h"
#include "pol-plan.h"
#include "sup-proxy.h"
#include "sup-degrade.h"

/* The facts the outcome is decided from (sup-outcome.c). */
static void classify(struct sup *s, const struct cg_usage *u)
{
	struct run_report *r = s->rep;
	struct run_facts f;
	run_facts_init(&f);
	f.setup_failed = s->setup_failed;
	f.reason = r->reason;
	f.exec_ok = s->exec_ok;
	f.cmd_forked = s->cmd_forked;
	f.got_exit = s->got_exit;
	f.wstatus = s->wstatus;
	f.init_code = s->init_code;
	f.init_status = s->init_status;
	f.forced = s->forced;
	f.forced_signal = s->forced_signal;
	f.oom_kills = u->oom_kills;
	f.pids_max_hits = u->pids_max_hits;
	f.cpu_limit_set = s->pol->limits[LIM_CPU].set;
	f.cpu_limit_ns = s->pol->limits[LIM_CPU].value;
	f.cpu_used_ns = u->cpu_user_ns + u->cpu_sys_ns;
	f.seccomp = s->spec.seccomp;
	memcpy(f.limits_hit, r->limits_hit, sizeof(f.limits_hit));
	struct run_outcome o;
	run_outcome_decide(&f, &o);
	r->status = o.status;
	r->exit_code = o.exit_code;
	r->signal = o.signal;
	memcpy(r->limits_hit, o.limits_hit, sizeof(r->limits_hit));
	snprintf(r->reason, sizeof(r->reason), "%s", o.reason);
	if (o.foreign_abi_kill)
		report_add_denial(r, "syscall", "foreign-abi (killed)");
}

/* After the run (every process of it is gone with its pid namespace): what
 * belongs to the run's host uid below a handed-over bind goes back to the
 * invoking user, new files included. Idempotent. */
static void give_back_workspace(struct sup *s)
{
	if (!s->handed)
		return;
	for (size_t i = 0; i < s->plan.nmounts; i++) {
		if (!s->handed[i])
			continue;
		cordon_error e;
		if (mounts_chown_tree(s->plan.mounts[i].path, s->sb_uid, s->sb_gid, s->host_uid, s->host_gid, &e) < 0)
			snprintf(s->rep->enf.workspace_ownership_reason, sizeof(s->rep->enf.workspace_ownership_reason),
				 "NOT given back, some files still belong to uid %u: %s", (unsigned)s->sb_uid, e.msg);
	}
	free(s->handed);
	s->handed = NULL;
}

/* Direct mode: below a nested repository (.git at any depth) the observer
 * guards names, not modes: a run's `chmod 0777 vendor/lib/.git/hooks`
 * reached the host, and any local user could then put a hook in (outside
 * review 12). What the run changed there (its ctime) loses the group and
 * other write it gained, and its ACLs (root_restored). Both walks are
 * sorted by path. */
static void tighten_protected(struct sup *s, const struct snapshot *before, const struct snapshot *after)
{
	strv names;
	cordon_error e = {0};
	if (protect_effective(s->pol, &names, NULL, &e) < 0)
		return;
	size_t i = 0, j = 0;
	while (j < after->n) {
		const struct snap_entry *a = i < before->n ? &before->e[i] : NULL, *b = &after->e[j];
		int c = a ? strcmp(snap_path(before, a), snap_path(after, b)) : 1;
		if (c < 0) {
			i++;
			continue;
		}
		/* New at this path (a repository renamed into place: `mv
		 * vendor/lib vendor/lib2`, outside review 13): no group or
		 * other write at all; else what it gained. */
		mode_t was = c > 0 ? 0 : a->mode;
		j++;
		if (c == 0)
			i++;
		if ((c == 0 && a->ctime_ns == b->ctime_ns) || b->root >= after->nroots)
			continue;
		const char *path = snap_path(after, b), *rel = path + after->rootlen[b->root];
		while (*rel == '/')
			rel++;
		if (*rel && protect_match(&names, rel, 0, NULL, 0))
			sweep_tighten_at(after->rootfd[b->root], rel, was, path, s->plan.workspace,
					 &s->rep->root_restored);
	}
	strv_free(&names);
}

/* A stacked workspace (a fork's, layers.h) at the end: its directory
 * (empty: the run wrote only to its upper layer) made whole, the stack's
 * tree copied in, before the change set is applied (or kept) as for any
 * run. The copy is the server's own (no one else writes in a session's
 * directory): the apply now judges what changed on the host from after
 * it (the change set's start stamp, in memory), else every file of the
 * stack the run changed would be held back as a conflict. Then its list
 * goes (its layers are removed once no session lists them). Where it
 * cannot be made whole, the list stays (the workspace is the directory
 * over its stack), and so does the change set: kept, with the reason. */
/* Is work the session's own workspace directory, the one beside its list
 * of layers? Only that one is made whole. */
static bool beside_list(const struct sup *s, int work)
{
	struct stat st;
	return fstat(work, &st) == 0 && layers_own_workspace(s->pol->ws_layers_list, st.st_dev, st.st_ino);
}

static void stack_whole(struct sup *s)
{
	char parent[4096], *slash;
	cordon_error e = {0};
	snprintf(parent, sizeof(parent), "%s", s->plan.workspace);
	slash = strrchr(parent, '/');
	if (!slash || slash == parent) {
		snprintf(s->rep->changes.reason, sizeof(s->rep->changes.reason),
			 "the workspace %s is a stack of layers with no directory above it: kept", s->plan.workspace);
		return;
	}
	*slash = '\0';
	_cleanup_close_ int pfd = open_root(parent, O_RDONLY | O_DIRECTORY);
	_cleanup_close_ int work = pfd < 0 ? -1 : openat(pfd, slash + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc = work < 0 ? cordon_err_errno(&e, "%s", s->plan.workspace) : 0;
	if (rc == 0 && !beside_list(s, work))
		rc = cordon_err(&e, EPERM, "%s is not the session's own workspace directory", s->plan.workspace);
	_cleanup_close_ int merged = rc == 0 ? layers_merged(work, AT_FDCWD, &s->pol->ws_layers, NULL, &e) : -1;
	if (rc == 0 && merged < 0)
		rc = -1;
	if (rc == 0)
		rc = layers_materialize(merged, pfd, work, ".work-stack", &e);
	/* The start, in memory for the apply now and on disk for a set kept
	 * (and those made from the session's snapshots), from after the copy. */
	if (rc == 0) {
		int64_t now = stamp_floor_ns();
		if (changeset_restart(&s->ovl.cs, now, &(cordon_error){0}) < 0) {
			/* (a set kept then holds its first start: an apply
			 * holds the stack's files back, --force applies them;
			 * those made from its snapshots are never sealed) */
			(void)changeset_orphan(&s->ovl.cs, &(cordon_error){0});
			s->ovl.cs.started_ns = now;
			sup_trace(s, "a change set's start not written past the stack's copy");
		}
	}
	if (rc == 0 && s->pol->ws_layers_list && unlink(s->pol->ws_layers_list) < 0 && errno != ENOENT)
		rc = cordon_err_errno(&e, "%s", s->pol->ws_layers_list);
	if (rc < 0) {
		snprintf(s->rep->changes.reason, sizeof(s->rep->changes.reason),
			 "the workspace's directory could not be made whole from its stack of layers, which it keeps (a fork's): kept, not applied: %s",
			 e.msg);
		/* Those made from its snapshots say so, not "at its end". */
		(void)changeset_orphan(&s->ovl.cs, &(cordon_error){0});
	}
}

static void collect_outputs(struct sup *s, bool apply)
{
	const char *roots[256];
	size_t n = sup_writable_roots(s, roots, ARRAY_SIZE(roots));
	struct snapshot after;
	cordon_error e;
	int64_t since = s->before.taken_ns;
	if (s->ovl.active) {
		/* From the change set (O(changes)), applied, kept or discarded. */
		if (s->pol->ws_layers.n)
			stack_whole(s);
		overlay_finish(&s->ovl, s->pol, apply, s->plan.workspace, s->rep);
		since = s->ovl.cs.started_ns;
	} else if (snapshot_take(&after, roots, n, &e) == 0) {
		snapshot_diff(&s->before, &after, s->plan.workspace, &s->rep->outputs, &e);
		tighten_protected(s, &s->before, &after);
		sup_degrade_protected(s, &s->before, &after);
		snapshot_free(&after);
	}
	/* Secrets written into the files it changed (names, never values):
	 * where they are, on the host or still in the change set. */
	const char *base = s->plan.workspace;
	char upper[4200];
	if (!overlay_on_host(&s->ovl, s->rep)) {
		overlay_scan_root(&s->ovl, s->plan.workspace, upper, sizeof(upper));
		roots[0] = base = upper;
		n = upper[0] ? 1 : 0;
	}
	exposure_scan(s->rep->redact, roots, n, &s->rep->outputs, base, since,
		      &s->rep->exposures, &e);
}

void sup_finish_usage(struct sup *s)
{
	struct run_report *rep = s->rep;
	struct cg_usage u;
	memset(&u, 0, sizeof(u));
	if (s->have_cg)
		s->cg.ops->usage(&s->cg, &u);
	if (!u.have_cpu || !u.have_memory) {
		struct rusage ru;
		if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
			if (!u.have_cpu) {
				u.cpu_user_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000ULL + (uint64_t)ru.ru_utime.tv_usec * 1000ULL;
				u.cpu_sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000ULL + (uint64_t)ru.ru_stime.tv_usec * 1000ULL;
			}
			if (!u.have_memory) {
				u.peak_memory = (uint64_t)ru.ru_maxrss * 1024ULL;
				u.have_memory = true;
			}
		}
	}
	classify(s, &u);
	rep->wall_seconds = (double)(s->t_end - s->t_start) / 1e9;
	if (s->exec_ok)
		rep->setup_seconds = (double)(s->t_exec - s->t_start) / 1e9;
	rep->have_cpu = true;
	rep->cpu_user_ns = u.cpu_user_ns;
	rep->cpu_sys_ns = u.cpu_sys_ns;
	rep->have_memory = u.have_memory;
	rep->peak_memory = u.peak_memory;
	for (int i = 0; i < 2; i++) {
		/* The count after stream_finish: what the redactor still held
		 * (a stream whose reader left while a partial match was held)
		 * goes into the count and the hash there, both or neither. */
		stream_finish(&s->out[i], rep->out[i].sha256);
		rep->out[i].bytes = s->out[i].bytes;
		rep->out[i].hash_skipped = s->out[i].hash_over;
		rep->out[i].hashed_bytes = s->out[i].hashed;
	}
}

void sup_finish_outputs(struct sup *s, bool apply)
{
	/* Outputs: on every outcome, the workspace keeps what was written. */
	if (s->exec_ok || s->cmd_forked || s->ovl.active)
		collect_outputs(s, apply);
	sup_trace(s, "outputs collected");
	/* No process of the run is left (init's exit waited for them): what
	 * the run left in the writable paths is swept, the roots put back as
	 * they were at sync 2 (after a hand-over to the run's uid, if any). */
	bool on_host = overlay_on_host(&s->ovl, s->rep); /* else nothing of the run's reached it */
	sweep_run(&s->sweep, on_host ? &s->rep->outputs : NULL, on_host && s->rep->outputs.truncated, s->plan.workspace,
		  &s->rep->privilege_cleared, &s->rep->root_restored, &s->rep->privilege_sweep);
	sup_trace(s, "privilege sweep done");
	/* A protected path absent at the start that exists now: reported. */
	protect_check_after(&s->plan, s->rep);
	/* After the outputs' snapshot (the chown changes every ctime) and the
	 * sweep (which restores the roots to their owner at sync 2). */
	give_back_workspace(s);
	if (s->trace && s->have_obs)
		buf_printf(&s->trace_buf, "  seccomp notifications: %llu (synchronous wake-up: %s)\n",
			   (unsigned long long)s->obs.notifications, s->obs.sync_wakeup ? "yes" : "no");
	if (s->trace && sockdiag_failures(s->obs.diag))
		buf_printf(&s->trace_buf, "  sock_diag queries failed: %u\n", sockdiag_failures(s->obs.diag));
}

/* Is a look for other supervisors' leftover cgroups due? Each look reads
 * every parent cgroup directory and signals each cordon-PID found there
 * (four hierarchies on v1: some thirty system calls). So once REAP_EVERY_S
 * per user and cgroup: REAP_STAMP in the state directory (masked in every
 * run: no run can hold it back) holds the SHA-256 of the cgroups
 * (/proc/self/cgroup) of the last run that looked, its mtime when. A look
 * only reads the directories this process's own cgroups are in: one made
 * from another cgroup (a terminal's scope, a service) is none for this
 * one, whose leftovers (in the degraded boundary, with their processes)
 * would otherwise stay for as long as runs elsewhere kept the stamp fresh.
 * No state directory, or no cgroups read: every run looks, as before. */
#define REAP_STAMP "cgroup-reaped"
#define REAP_EVERY_S 60
static bool reap_due(const char *cgroups)
{
	if (!cgroups)
		return true;
	cordon_error e = {0};
	_cleanup_close_ int d = cordon_state_dir_open(false, &e);
	if (d < 0)
		return true;
	char want[65], have[65] = "";
	sha256_hex(cgroups, strlen(cgroups), want);
	struct stat st;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int f = openat(d, REAP_STAMP, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (f >= 0) {
		if (fstat(f, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ident_euid() && st.st_mtime <= now.tv_sec &&
		    now.tv_sec - st.st_mtime < REAP_EVERY_S && pread(f, have, 64, 0) == 64 &&
		    memcmp(have, want, 64) == 0) {
			close(f);
			return false;
		}
		close(f);
	}
	f = openat(d, REAP_STAMP, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (f >= 0) {
		/* (short: no match next time, so a look then) */
		if (write(f, want, 64) == 64)
			(void)futimens(f, NULL);
		close(f);
	}
	return true;
}

void sup_cleanup(struct sup *s)
{
	if (s->mntns >= 0) {
		sup_close_fd(&s->mntns);
		sup_trace(s, "mount namespace released");
	}
	give_back_workspace(s);
	if (s->have_cg)
		s->cg.ops->destroy(&s->cg);
	/* Off the critical path: cgroups of supervisors that were SIGKILLed,
	 * at most once a minute per user and cgroup (a run's own is removed
	 * above), and their degraded runs' CA bundles in /tmp. */
	if (s->cgops && reap_due(s->cgp.host.cgroup)) {
		cgroup_reap_stale(s->cgops, &s->cgp.host);
		sup_degrade_ca_reap();
	} else if (s->degraded) {
		/* (a degraded run may have no cgroup: its look is its own, and a
		 * run with none never reads /tmp, nor takes a cgroup run's
		 * once-a-minute stamp) */
		sup_degrade_ca_reap();
	}
	cgroup_prep_free(&s->cgp);
	sup_trace(s, "cgroups removed");
	if (s->spec.tree_fds) {
		for (size_t i = 0; i <= s->plan.nmounts; i++)
			if (s->spec.tree_fds[i] >= 0)
				close(s->spec.tree_fds[i]);
		free(s->spec.tree_fds);
	}
	snapshot_free(&s->before);
	free(s->spec.overlay_trees);
	free(s->spec.layer_fds);
	overlay_free(&s->ovl);
	overlay_view_free(&s->view);
	sweep_free(&s->sweep);
	proxy_free(s->proxy);
	s->proxy = NULL;
	sup_degrade_net_stop(s);
	sup_degrade_ca_remove(s);
	if (s->ca)
		s->tls->ca_free(s->ca);
	s->ca = NULL;
	buf_free(&s->ca_bundle);
	free(s->psec);
	s->psec = NULL;
	s->npsec = 0;
	landlock_plan_free(&s->landlock);
	mount_steps_free(&s->mounts);
	seccomp_plan_free(&s->seccomp);
	if (s->have_obs)
		observer_free(&s->obs);
	sup_close_fd(&s->sock);
	sup_close_fd(&s->pidfd);
	sup_close_fd(&s->epfd);
	sup_close_fd(&s->timer);
	sup_close_fd(&s->cpu_timer);
	sup_close_fd(&s->sigfd);
	sup_wipe_secret_copies(s);
	for (size_t i = 0; i < s->env.n; i++)
		explicit_bzero(s->env.v[i], strlen(s->env.v[i]));
	strv_free(&s->env);
	run_plan_free(&s->plan);
	if (s->trace && s->trace_buf.p) {
		/* A diagnostic on request only. */
		if (write(STDERR_FILENO, s->trace_buf.p, s->trace_buf.len) < 0) { /* ignore */ }
	}
	buf_free(&s->trace_buf);
}
