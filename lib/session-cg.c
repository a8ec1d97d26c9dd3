/* Per-exec cgroups of a session (session-cg.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cgroup-v2.h"
#include "clock.h"
#include "error.h"
#include "session.h"
#include "session-cg.h"
#include "sync.h"

static struct {
	bool on, v2, home_sent;
	int ndirs;
	char dirs[CG_MAX_CTRL][4096];
	bool made[SX_SLOTS];
	uint64_t cpu0[SX_SLOTS];
	/* The freezer (sxcg_freeze): v2 the session's cgroup itself; v1 a
	 * cgroup of its own in the freezer hierarchy (fz_made: ours to
	 * remove). "" where the host has none. */
	char fz[4096];
	bool fz_made, frozen;
} G;

/* v1: the session's freezer cgroup, <freezer mount><our path>/<the run's
 * cgroup name> (cgroup_reap_stale finds it if this worker dies), with
 * every process of the session's pids cgroup moved in. Called before the
 * first exec: what init forks later is born in it (the agent moves itself
 * only in the hierarchies of G.dirs). */
static void v1_freezer(const struct cgroup *cg)
{
	struct cg_host h = {0};
	char mp[2048], self[2048], d[4200], p[4300];
	if (cg->ndirs < 2 || cg_host_read(&h) < 0)
		return;
	bool ok = cg_mount_point_in(&h, "freezer", false, mp, sizeof(mp)) == 0 &&
		  cg_self_path_in(&h, "freezer", self, sizeof(self)) == 0;
	cg_host_free(&h);
	if (!ok || snprintf(d, sizeof(d), "%s%s/%s", mp, strcmp(self, "/") == 0 ? "" : self, cg->name) >= (int)sizeof(d) ||
	    (mkdir(d, 0755) < 0 && errno != EEXIST))
		return;
	snprintf(G.fz, sizeof(G.fz), "%s", d);
	G.fz_made = true;
	snprintf(p, sizeof(p), "%s/cgroup.procs", cg->dirs[1]);
	FILE *f = fopen(p, "re");
	long pid;
	int n = 0;
	while (f && fscanf(f, "%ld", &pid) == 1 && n++ < 100000) {
		char v[32];
		snprintf(v, sizeof(v), "%ld", pid);
		if (cg_write(G.fz, "cgroup.procs", v, NULL) < 0 && kill((pid_t)pid, 0) == 0) {
			/* One left out could not be frozen: no freezer at all. */
			G.fz[0] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
	if (!f || n == 0)
		G.fz[0] = '\0';
}

void sxcg_session(const struct cgroup *cg)
{
	if (!cg || !cg->ndirs)
		return;
	G.v2 = cg->ops == &cgroup_v2_ops;
	G.ndirs = G.v2 ? 1 : cg->ndirs;
	for (int i = 0; i < G.ndirs; i++)
		snprintf(G.dirs[i], sizeof(G.dirs[i]), "%s", cg->dirs[i]);
	G.on = true;
	if (G.v2) {
		/* cgroup.freeze: Linux 5.2 and later. */
		char p[4300];
		snprintf(p, sizeof(p), "%s/cgroup.freeze", G.dirs[0]);
		if (access(p, W_OK) == 0)
			snprintf(G.fz, sizeof(G.fz), "%s", G.dirs[0]);
	} else {
		v1_freezer(cg);
	}
}

bool sxcg_can_freeze(void)
{
	return G.on && G.fz[0];
}

/* Is the freezer's state what was asked (frozen or thawed)? v2: read
 * through ev where it is the descriptor polled (kernfs keeps POLLPRI up
 * until that one reads the change: read elsewhere, each poll came back at
 * once and the wait was a busy loop). */
static bool fz_reached_ev(bool freeze, int ev)
{
	if (G.v2 && ev >= 0) {
		char b[256];
		ssize_t n = pread(ev, b, sizeof(b) - 1, 0);
		if (n <= 0)
			return false;
		b[n] = '\0';
		const char *k = strstr(b, "frozen ");
		return k && k[7] == (freeze ? '1' : '0');
	}
	if (G.v2) {
		uint64_t v = 2;
		return cg_read_key(G.fz, "cgroup.events", "frozen", &v) == 0 && v == (freeze ? 1 : 0);
	}
	char p[4300], st[32] = "";
	snprintf(p, sizeof(p), "%s/freezer.state", G.fz);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, st, sizeof(st) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	st[n] = '\0';
	return strncmp(st, freeze ? "FROZEN" : "THAWED", 6) == 0;
}

static bool fz_reached(bool freeze)
{
	return fz_reached_ev(freeze, -1);
}

int sxcg_freeze(bool freeze, unsigned wait_ms, bool *reached, cordon_error *err)
{
	*reached = false;
	if (!sxcg_can_freeze())
		return cordon_err(err, 0, "the session has no freezer cgroup (cgroup v2's cgroup.freeze, or the v1 freezer hierarchy)");
	if (G.v2 ? cg_write(G.fz, "cgroup.freeze", freeze ? "1" : "0", err) < 0
		 : cg_write(G.fz, "freezer.state", freeze ? "FROZEN" : "THAWED", err) < 0)
		return cordon_err_wrap(err, "%s the session's cgroup %s", freeze ? "freeze" : "thaw", G.fz);
	G.frozen = freeze;
	/* Bounded: v2 says so in cgroup.events (POLLPRI on a change), v1
	 * moves from FREEZING to FROZEN as its tasks stop (read again). v1
	 * asks each task to freeze once, when FROZEN is written: one running
	 * then that sleeps next in a freezable wait the kernel does not break
	 * (a vfork parent waiting for a child frozen before its exec: dash
	 * vforks every command) is never frozen, and the cgroup stays
	 * FREEZING for good. Each rewrite of FROZEN asks every task again,
	 * and the kernel freezes such a sleeper where it sleeps. */
	char p[4300];
	snprintf(p, sizeof(p), "%s/cgroup.events", G.fz);
	int ev = G.v2 ? open(p, O_RDONLY | O_CLOEXEC) : -1;
	uint64_t until = mono_ns() + (uint64_t)wait_ms * 1000000ULL;
	unsigned naps = 0;
	while (!(*reached = fz_reached_ev(freeze, ev))) {
		uint64_t now = mono_ns();
		if (now >= until)
			break;
		int ms = (int)((until - now) / 1000000ULL);
		if (ev >= 0) {
			struct pollfd pf = {ev, POLLPRI, 0};
			poll(&pf, 1, ms < 10 ? ms : 10);
		} else {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
			if (freeze && ++naps % 10 == 0)
				(void)cg_write(G.fz, "freezer.state", "FROZEN", NULL);
		}
	}
	if (ev >= 0)
		close(ev);
	return 0;
}

bool sxcg_frozen(void)
{
	if (!sxcg_can_freeze())
		return false;
	if (fz_reached(true))
		return true;
	/* v1 still FREEZING past the pause's wait: asked again (above). */
	if (!G.v2 && G.frozen)
		(void)cg_write(G.fz, "freezer.state", "FROZEN", NULL);
	return fz_reached(true);
}

static void slot_dir(int i, int slot, char *out, size_t sz)
{
	snprintf(out, sz, "%s/exec-%d", G.dirs[i], slot);
}

/* The directory whose cgroup.procs lists the exec's processes: v2 its
 * only one, v1 the pids hierarchy's (pids.max stops a fork loop there). */
static int members_dir(void)
{
	return G.v2 ? 0 : 1;
}

static uint64_t cpu_of(int slot)
{
	char d[4200];
	uint64_t v = 0, s = 0;
	if (G.v2) {
		slot_dir(0, slot, d, sizeof(d));
		if (cg_read_key(d, "cpu.stat", "usage_usec", &v) == 0)
			return v * 1000;
	} else if (G.ndirs > 2) {
		slot_dir(2, slot, d, sizeof(d));
		if (cg_read_u64(d, "cpuacct.usage", &s) == 0)
			return s;
	}
	return 0;
}

/* Every pid in the slot's cgroup.procs gets sig; the count sent. */
static int signal_members(int slot, int sig)
{
	char d[4200];
	slot_dir(members_dir(), slot, d, sizeof(d));
	char p[4300];
	snprintf(p, sizeof(p), "%s/cgroup.procs", d);
	FILE *f = fopen(p, "re");
	if (!f)
		return 0;
	int n = 0;
	long pid;
	while (fscanf(f, "%ld", &pid) == 1 && n < 100000)
		if (pid > 0 && kill((pid_t)pid, sig) == 0)
			n++;
	fclose(f);
	return n;
}

static void kill_all(int slot)
{
	char d[4200];
	slot_dir(members_dir(), slot, d, sizeof(d));
	if (G.v2 && cg_write(d, "cgroup.kill", "1", NULL) == 0)
		return;
	/* v1 (or a v2 without cgroup.kill, before 5.14): no new process in
	 * it, then every member killed until it is empty. */
	if (!G.v2)
		cg_write(d, "pids.max", "0", NULL);
	for (int pass = 0; pass < 1000 && signal_members(slot, SIGKILL) > 0; pass++) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

static void remove_slot(int slot)
{
	char d[4200];
	for (int i = 0; i < G.ndirs; i++) {
		slot_dir(i, slot, d, sizeof(d));
		/* Killed processes leave their cgroup as they exit: a few tries. */
		for (int k = 0; k < 200 && rmdir(d) < 0 && errno == EBUSY; k++) {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
	}
	G.made[slot] = false;
}

/* The file the agent writes "0" to, to move itself: on v1 "tasks", its
 * one thread (a move by PID, or of a whole process through cgroup.procs,
 * takes the kernel's threadgroup lock for writing, which waits for an RCU
 * grace period: twice per exec); v2 has only cgroup.procs for a process
 * outside a threaded subtree. */
static const char *join_file(void)
{
	return G.v2 ? "cgroup.procs" : "tasks";
}

void sxcg_exec_begin(int sock, int slot)
{
	if (!G.on || slot < 0 || slot >= SX_SLOTS)
		return;
	char d[4200], p[4300];
	cordon_error e = {0};
	if (!G.home_sent) {
		/* Where the agent comes back to: the session's own cgroup. */
		for (int i = 0; i < G.ndirs; i++) {
			snprintf(p, sizeof(p), "%s/%s", G.dirs[i], join_file());
			int fd = open(p, O_WRONLY | O_CLOEXEC);
			if (fd < 0)
				return; /* no exec cgroups: the exec is still ended by its groups */
			e.code = i;
			sync_send(sock, MSG_SX_CGROUP, -1, &e, fd);
			close(fd);
		}
		G.home_sent = true;
	}
	if (G.made[slot]) {
		kill_all(slot);
		remove_slot(slot);
	}
	for (int i = 0; i < G.ndirs; i++) {
		slot_dir(i, slot, d, sizeof(d));
		if (mkdir(d, 0755) < 0 && errno != EEXIST)
			return;
		G.made[slot] = true;
	}
	if (!G.v2) {
		/* A v1 pids cgroup that an earlier kill left at 0. */
		slot_dir(1, slot, d, sizeof(d));
		cg_write(d, "pids.max", "max", NULL);
	}
	G.cpu0[slot] = cpu_of(slot);
	for (int i = 0; i < G.ndirs; i++) {
		slot_dir(i, slot, d, sizeof(d));
		snprintf(p, sizeof(p), "%s/%s", d, join_file());
		int fd = open(p, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return;
		e.code = i;
		sync_send(sock, MSG_SX_CGROUP, slot, &e, fd);
		close(fd);
	}
}

void sxcg_signal(int slot, int sig)
{
	if (!G.on || slot < 0 || slot >= SX_SLOTS || !G.made[slot])
		return;
	if (sig == SIGKILL)
		kill_all(slot);
	else
		signal_members(slot, sig);
}

bool sxcg_exec_end(int slot, uint64_t *cpu_ns)
{
	if (!G.on || slot < 0 || slot >= SX_SLOTS || !G.made[slot])
		return false;
	/* What the exec left running ends with it (its group: the agent). */
	kill_all(slot);
	uint64_t c = cpu_of(slot);
	*cpu_ns = c >= G.cpu0[slot] ? c - G.cpu0[slot] : 0;
	return c > 0;
}

void sxcg_thaw(void)
{
	bool reached;
	if (G.frozen)
		sxcg_freeze(false, 1000, &reached, NULL);
}

void sxcg_end(void)
{
	sxcg_thaw();
	for (int s = 0; G.on && s < SX_SLOTS; s++)
		if (G.made[s]) {
			kill_all(s);
			remove_slot(s);
		}
	if (G.fz_made) {
		/* Its processes (init's) are gone or going: a few tries. */
		for (int k = 0; k < 200 && rmdir(G.fz) < 0 && errno == EBUSY; k++) {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
		G.fz_made = false;
	}
}
