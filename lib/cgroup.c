#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "cgroup-v1.h"
#include "cgroup-v2.h"
#include "cleanup.h"
#include "compat.h"
#include "error.h"
#include "cgroup.h"
#include "cgroup-util.h"

static bool v2_has_controllers(const struct cg_host *h)
{
	char dir[4200];
	return cg_v2_self_dir_in(h, dir, sizeof(dir)) == 0 && cg_v2_has(dir, "memory") && cg_v2_has(dir, "pids");
}

/* Every question about the host's hierarchies is answered from one read of
 * /proc/self/mountinfo and one of /proc/self/cgroup. */
const struct cgroup_ops *cgroup_detect(const char *force, cordon_error *err)
{
	if (force && *force)
		return cgroup_detect_in(force, NULL, err);
	struct cg_host h;
	if (cg_host_read(&h) < 0)
		return NULL;
	const struct cgroup_ops *ops = cgroup_detect_in(force, &h, err);
	cg_host_free(&h);
	return ops;
}

const struct cgroup_ops *cgroup_detect_in(const char *force, const struct cg_host *h, cordon_error *err)
{
	char mp[2048];
	if (force && *force) {
		if (strcmp(force, "v2") == 0) {
			if ((h && h->mountinfo ? cg_mount_point_in(h, NULL, true, mp, sizeof(mp))
					       : cg_mount_point(NULL, true, mp, sizeof(mp))) < 0) {
				cordon_err(err, 0, "CORDON_CGROUP=v2 but no cgroup2 hierarchy is mounted");
				return NULL;
			}
			return &cgroup_v2_ops;
		}
		if (strcmp(force, "v1") == 0)
			return &cgroup_v1_ops;
		if (strcmp(force, "none") == 0)
			return NULL;
		cordon_err(err, 0, "CORDON_CGROUP=%s: expected v1, v2 or none", force);
		return NULL;
	}
	if (!h || !h->mountinfo || !h->cgroup)
		return NULL;
	const struct cgroup_ops *ops = NULL;
	if (v2_has_controllers(h))
		ops = &cgroup_v2_ops;
	else if (cg_mount_point_in(h, "memory", false, mp, sizeof(mp)) == 0 &&
		 cg_mount_point_in(h, "pids", false, mp, sizeof(mp)) == 0 &&
		 cg_mount_point_in(h, "cpuacct", false, mp, sizeof(mp)) == 0)
		ops = &cgroup_v1_ops;
	else if (cg_mount_point_in(h, NULL, true, mp, sizeof(mp)) == 0)
		ops = &cgroup_v2_ops; /* accounting only; limits will be refused */
	return ops;
}

int cgroup_create(struct cgroup *cg, const struct cgroup_ops *ops, const struct cg_limits *lim,
		  const struct cg_host *host, cordon_error *err)
{
	static unsigned counter;
	memset(cg, 0, sizeof(*cg));
	cg->ops = ops;
	cg->dirfd = -1;
	cg->host = host && host->mountinfo && host->cgroup ? host : NULL;
	snprintf(cg->name, sizeof(cg->name), "cordon-%d-%u", (int)getpid(), counter++);
	int r = ops->create(cg, lim, err);
	cg->host = NULL;
	if (r < 0) {
		ops->destroy(cg);
		return cordon_err_wrap(err, "cgroup %s", ops->name);
	}
	return 0;
}

/* Is pid (pinned by its pidfd) in a cgroup named leaf, in any hierarchy? */
static bool in_leaf(int pid, const char *leaf)
{
	char f[64], line[4400];
	snprintf(f, sizeof(f), "/proc/%d/cgroup", pid);
	_cleanup_fclose_ FILE *fp = fopen(f, "re");
	size_t l = strlen(leaf);
	while (fp && fgets(line, sizeof(line), fp)) {
		size_t n = strcspn(line, "\n");
		if (n > l && line[n - l - 1] == '/' && memcmp(line + n - l, leaf, l) == 0)
			return true;
	}
	return false;
}

/* Every process in the leftover cgroup path (named leaf) killed, where
 * there is no cgroup.kill (cgroup v1, v2 before 5.14). The degraded
 * boundary has no PID namespace to end a run with its init: what the
 * command started outlives a SIGKILLed supervisor there. Each pid is pinned
 * by a pidfd and checked to be in the cgroup after, so a pid reused since
 * cgroup.procs was read is not signalled; its end is waited for (out of
 * the look's budget) before the cgroup is removed. Bounded rounds: one that
 * forked meanwhile is killed in the next; what is still there is the next
 * look's. */
static void kill_procs(const char *path, const char *leaf, int *budget_ms)
{
	char f[4500];
	snprintf(f, sizeof(f), "%s/cgroup.procs", path);
	for (int round = 0; round < 16; round++) {
		_cleanup_fclose_ FILE *fp = fopen(f, "re");
		int pid;
		bool any = false;
		while (fp && fscanf(fp, "%d", &pid) == 1) {
			int pfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
			if (pfd < 0)
				continue;
			if (in_leaf(pid, leaf) && syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0) == 0) {
				struct pollfd p = {pfd, POLLIN, 0};
				if (*budget_ms > 0 && poll(&p, 1, 100) == 0)
					*budget_ms -= 100;
				any = true;
			}
			close(pfd);
		}
		if (!any)
			return;
	}
}

/* v2: after cgroup.kill the processes are dying, not gone: rmdir says
 * EBUSY until cgroup.events says "populated 0" (an exit that unmaps much
 * memory takes a while). Waited for (POLLPRI on a change), out of a budget
 * shared by one look (*budget_ms; a process stuck in D is the next look's).
 * Read through the descriptor polled: kernfs takes a change as seen only
 * when that one reads it, and keeps POLLPRI up until then (a frozen
 * leftover's "frozen 0" made the wait a busy loop). */
static void wait_unpopulated(const char *path, int *budget_ms)
{
	char p[4500], b[256];
	snprintf(p, sizeof(p), "%s/cgroup.events", path);
	_cleanup_close_ int ev = open(p, O_RDONLY | O_CLOEXEC);
	while (ev >= 0 && *budget_ms > 0) {
		ssize_t n = pread(ev, b, sizeof(b) - 1, 0);
		if (n <= 0)
			return;
		b[n] = '\0';
		const char *k = strstr(b, "populated ");
		if (!k || k[10] != '1')
			return;
		struct pollfd pf = {ev, POLLPRI, 0};
		int ms = *budget_ms < 50 ? *budget_ms : 50;
		if (poll(&pf, 1, ms) == 0)
			*budget_ms -= ms;
		else
			*budget_ms -= 1;
	}
}

/* The leftover's own child cgroups first (a session's exec-N, one level;
 * the run cannot make cgroups there): rmdir of one with children is EBUSY. */
static void remove_children(const char *path)
{
	_cleanup_closedir_ DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)) && n++ < 4096)
		if (e->d_type == DT_DIR && e->d_name[0] != '.')
			(void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
}

/* Is pid in a run's cgroup (one named cordon-PID-N, or below it: a
 * session's exec-N), in any hierarchy? Then it is a run's process, never a
 * supervisor: a supervisor stays outside its runs' cgroups, and one run's
 * cannot make cgroups. */
static bool in_a_run(int pid)
{
	char f[64], line[4400];
	snprintf(f, sizeof(f), "/proc/%d/cgroup", pid);
	_cleanup_fclose_ FILE *fp = fopen(f, "re");
	while (fp && fgets(line, sizeof(line), fp)) {
		line[strcspn(line, "\n")] = '\0';
		for (char *c = strchr(line, '/'); c; c = strchr(c + 1, '/')) {
			int p, end = 0;
			unsigned n;
			if (sscanf(c + 1, "cordon-%d-%u%n", &p, &n, &end) == 2 && end > 0 &&
			    (c[1 + end] == '/' || !c[1 + end]))
				return true;
		}
	}
	return false;
}

/* Has pid exited, its parent not yet waited for it (a zombie)? */
static bool exited(int pid)
{
	char f[64], st[512];
	snprintf(f, sizeof(f), "/proc/%d/stat", pid);
	_cleanup_close_ int fd = open(f, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, st, sizeof(st) - 1);
	if (n <= 0)
		return false;
	st[n] = '\0';
	const char *r = strrchr(st, ')');
	return r && r[1] == ' ' && (r[2] == 'Z' || r[2] == 'X');
}

/* Is the supervisor of the cgroup named after pid (run: cordon-PID-N)
 * alive? Not where no process has the PID, or it has exited (a zombie:
 * /proc says it is in no cgroup then); and not where the PID is a run's
 * process: one of a leftover's (this one's or another's) that forked until
 * the kernel gave it the dead supervisor's PID (without a PID namespace,
 * the degraded boundary's, a run's processes are the host's), or kept it
 * as a zombie child it never waits for. The leftover was passed over at
 * every look. */
static bool supervisor_alive(int pid, bool run)
{
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return false;
	if (pid <= 0)
		return true;
	return !exited(pid) && !(run && in_a_run(pid));
}

/* A cgroup named cordon-PID-N whose supervisor is not alive is a leftover. */
static void reap_dir(const char *parent, int *budget_ms)
{
	_cleanup_closedir_ DIR *d = opendir(parent);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		int pid;
		unsigned n;
		bool run = sscanf(e->d_name, "cordon-%d-%u", &pid, &n) == 2;
		if (!run && sscanf(e->d_name, CG_V2_LEAF_FMT, &pid) != 1)
			continue;
		if (supervisor_alive(pid, run))
			continue;
		char path[4400];
		snprintf(path, sizeof(path), "%s/%s", parent, e->d_name);
		/* A paused session's v1 freezer cgroup (session-cg.c) is
		 * thawed first: a frozen process does not die. */
		cg_write(path, "freezer.state", "THAWED", NULL);
		if (cg_write(path, "cgroup.kill", "1", NULL) == 0)
			wait_unpopulated(path, budget_ms);
		else
			kill_procs(path, e->d_name, budget_ms);
		remove_children(path);
		rmdir(path);
	}
}

void cgroup_reap_stale(const struct cgroup_ops *ops, const struct cg_host *host)
{
	/* The freezer first: a leftover frozen there (a paused session's)
	 * is thawed before any kill, for a v1-frozen process does not die of
	 * SIGKILL; looked at last, the other hierarchies' kills waited for
	 * nothing and their cgroups stayed. */
	static const char *const v1[] = {"freezer", "memory", "pids", "cpuacct"};
	char mp[2048], self[2048], dir[4200];
	/* The look's whole wait for dying processes, every hierarchy and
	 * leftover together (a process stuck in D is the next look's). */
	int budget_ms = 1000;
	struct cg_host own = {0};
	const struct cg_host *h = host && host->mountinfo && host->cgroup ? host : &own;
	if (h == &own && cg_host_read(&own) < 0)
		return;
	if (ops == &cgroup_v2_ops) {
		if (cg_v2_self_dir_in(h, dir, sizeof(dir)) == 0)
			reap_dir(dir, &budget_ms);
		cg_host_free(&own);
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(v1); i++) {
		if (cg_mount_point_in(h, v1[i], false, mp, sizeof(mp)) == 0 &&
		    cg_self_path_in(h, v1[i], self, sizeof(self)) == 0) {
			snprintf(dir, sizeof(dir), "%s%s", mp, self);
			reap_dir(dir, &budget_ms);
		}
	}
	cg_host_free(&own);
}

#define CG_WEAKER "set enforcement.allow_weaker [\"cgroup\"] to accept per-process rlimits instead"

int cgroup_fallback(bool need, bool weak_ok, const char *failure, cordon_error *err)
{
	if (!need || weak_ok)
		return 0;
	if (failure)
		return cordon_err(err, 0, "%s (the memory, pids and cpu limits need a cgroup; " CG_WEAKER ")", failure);
	return cordon_err(err, 0, "no usable cgroup hierarchy on this host (the memory, pids and cpu limits need one; " CG_WEAKER ")");
}

int cgroup_prepare(struct cg_prep *cp, const char *force, bool need, bool weak_ok, cordon_error *err)
{
	cordon_error cgerr = {0};
	memset(cp, 0, sizeof(*cp));
	cp->need = need;
	cp->weak_ok = weak_ok;
	/* One read of the host serves detection, creation and the reaping of
	 * leftovers (cg_host_read leaves both NULL where it fails: each
	 * question is then "none"). */
	if (!force || strcmp(force, "none") != 0)
		cg_host_read(&cp->host);
	cp->ops = cgroup_detect_in(force, &cp->host, &cgerr);
	if (!cp->ops)
		cgroup_prep_free(cp); /* nothing more to ask */
	if (!cp->ops && cgerr.msg[0])
		return cordon_err(err, 0, "%s", cgerr.msg);
	if (!cp->ops && cgroup_fallback(need, weak_ok, NULL, err) < 0) {
		cp->no_hierarchy = true;
		return -1;
	}
	cp->rlimits_only = !cp->ops;
	return 0;
}

void cgroup_prep_free(struct cg_prep *cp)
{
	cg_host_free(&cp->host);
}

int cgroup_start(const struct cg_prep *cp, struct cgroup *cg, const struct cg_limits *lim, pid_t pid, bool *have,
		 cordon_error *err)
{
	cordon_error cgerr = {0};
	*have = false;
	if (!cp->ops)
		return 0;
	if (cgroup_create(cg, cp->ops, lim, &cp->host, &cgerr) < 0)
		return cgroup_fallback(cp->need, cp->weak_ok, cgerr.msg, err);
	*have = true;
	return pid > 0 ? cg->ops->attach(cg, pid, err) : 0;
}
