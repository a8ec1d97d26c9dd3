/* cgroup v1: one directory in each of the memory, pids and cpuacct
 * hierarchies, under our own cgroup there. An attach by PID (v1_attach,
 * cgroup.procs) waits for an RCU grace period: a run's init joins by
 * itself instead (sup-steps.c, sup_send_cgroup_join). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cgroup-v1.h"
#include "error.h"
#include "cgroup.h"

enum { V1_MEMORY, V1_PIDS, V1_CPUACCT };
const char *const cg_v1_controllers[3] = {"memory", "pids", "cpuacct"};
#define ctrl cg_v1_controllers

static int v1_dirs(struct cgroup *cg, cordon_error *err)
{
	struct cg_host own = {0};
	const struct cg_host *h = cg->host ? cg->host : &own;
	if (!cg->host && cg_host_read(&own) < 0)
		return cordon_err_errno(err, "read /proc/self/mountinfo and /proc/self/cgroup");
	for (int i = 0; i < 3; i++) {
		char mp[2048], self[2048];
		int r = 0;
		if (cg_mount_point_in(h, ctrl[i], false, mp, sizeof(mp)) < 0)
			r = cordon_err(err, 0, "the %s controller is not mounted", ctrl[i]);
		else if (cg_self_path_in(h, ctrl[i], self, sizeof(self)) < 0)
			r = cordon_err(err, 0, "cannot find our own %s cgroup", ctrl[i]);
		else
			snprintf(cg->dirs[i], sizeof(cg->dirs[i]), "%s%s/%s", mp, self, cg->name);
		if (r < 0) {
			cg_host_free(&own);
			return r;
		}
	}
	cg_host_free(&own);
	return 0;
}

static int v1_create(struct cgroup *cg, const struct cg_limits *lim, cordon_error *err)
{
	if (v1_dirs(cg, err) < 0) {
		for (int i = 0; i < 3; i++)
			cg->dirs[i][0] = '\0';
		return -1;
	}
	for (int i = 0; i < 3; i++) {
		if (mkdir(cg->dirs[i], 0755) < 0) {
			/* The message first: the names are cleared after it. */
			int r = cordon_err_errno(err, "mkdir %s", cg->dirs[i]);
			for (int j = i; j < 3; j++)
				cg->dirs[j][0] = '\0';
			return r;
		}
		cg->ndirs = i + 1;
	}
	cg->created = true;
	cg->has_memory = cg->has_pids = true;
	const char *mem = cg->dirs[V1_MEMORY];
	if (lim->memory) {
		char v[32];
		snprintf(v, sizeof(v), "%llu", (unsigned long long)lim->memory);
		if (cg_write(mem, "memory.limit_in_bytes", v, err) < 0)
			return -1;
		/* No swap: memory+swap gets the same limit where swap accounting exists. */
		char memsw[4300];
		snprintf(memsw, sizeof(memsw), "%s/memory.memsw.limit_in_bytes", mem);
		if (access(memsw, F_OK) == 0 &&
		    cg_write(mem, "memory.memsw.limit_in_bytes", v, err) < 0)
			return -1;
		cg_write(mem, "memory.swappiness", "0", NULL);
	}
	if (lim->pids) {
		char v[32];
		snprintf(v, sizeof(v), "%llu", (unsigned long long)lim->pids);
		if (cg_write(cg->dirs[V1_PIDS], "pids.max", v, err) < 0)
			return -1;
	}
	return 0;
}

static int v1_attach(struct cgroup *cg, pid_t pid, cordon_error *err)
{
	char v[32];
	snprintf(v, sizeof(v), "%d", (int)pid);
	for (int i = 0; i < cg->ndirs; i++)
		if (cg_write(cg->dirs[i], "cgroup.procs", v, err) < 0)
			return -1;
	return 0;
}

static int v1_usage(struct cgroup *cg, struct cg_usage *u)
{
	memset(u, 0, sizeof(*u));
	if (cg_read_u64(cg->dirs[V1_CPUACCT], "cpuacct.usage_user", &u->cpu_user_ns) == 0 &&
	    cg_read_u64(cg->dirs[V1_CPUACCT], "cpuacct.usage_sys", &u->cpu_sys_ns) == 0)
		u->have_cpu = true;
	if (cg_read_u64(cg->dirs[V1_MEMORY], "memory.max_usage_in_bytes", &u->peak_memory) == 0)
		u->have_memory = true;
	cg_read_key(cg->dirs[V1_MEMORY], "memory.oom_control", "oom_kill", &u->oom_kills);
	cg_read_key(cg->dirs[V1_PIDS], "pids.events", "max", &u->pids_max_hits);
	return 0;
}

static void v1_destroy(struct cgroup *cg)
{
	for (int i = 0; i < cg->ndirs; i++)
		if (cg->dirs[i][0])
			rmdir(cg->dirs[i]);
	cg->ndirs = 0;
}

const struct cgroup_ops cgroup_v1_ops = {"v1", v1_create, v1_attach, v1_usage, v1_destroy};
