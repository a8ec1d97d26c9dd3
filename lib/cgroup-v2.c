/* cgroup v2: one directory under our own cgroup; the child is cloned straight
 * into it (clone3 CLONE_INTO_CGROUP), so there is no separate attach. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cgroup-v2.h"
#include "cleanup.h"
#include "error.h"
#include "cgroup.h"

static int v2_create(struct cgroup *cg, const struct cg_limits *lim, cordon_error *err)
{
	char parent[4200];
	bool busy = false;
	if ((cg->host ? cg_v2_self_dir_in(cg->host, parent, sizeof(parent)) : cg_v2_self_dir(parent, sizeof(parent))) < 0)
		return cordon_err(err, 0, "no cgroup2 hierarchy, or our own cgroup2 path, was found");
	/* Make memory and pids available to our children where the parent has them. */
	if (cg_v2_has(parent, "memory") || cg_v2_has(parent, "pids")) {
		char want[64] = "";
		if (cg_v2_has(parent, "memory"))
			strcat(want, "+memory ");
		if (cg_v2_has(parent, "pids"))
			strcat(want, "+pids ");
		if (cg_v2_has(parent, "cpu"))
			strcat(want, "+cpu");
		cordon_error e2;
		if (cg_v2_enable(parent, want, &e2) < 0 && e2.code == EBUSY)
			busy = true; /* other processes share our cgroup */
	}
	snprintf(cg->dirs[0], sizeof(cg->dirs[0]), "%s/%s", parent, cg->name);
	if (mkdir(cg->dirs[0], 0755) < 0) {
		cg->dirs[0][0] = '\0';
		return cordon_err_errno(err, "mkdir %s/%s", parent, cg->name);
	}
	cg->ndirs = 1;
	cg->created = true;
	char path[4300];
	snprintf(path, sizeof(path), "%s/memory.max", cg->dirs[0]);
	cg->has_memory = access(path, F_OK) == 0;
	snprintf(path, sizeof(path), "%s/pids.max", cg->dirs[0]);
	cg->has_pids = access(path, F_OK) == 0;
	/* Without delegation the controllers cannot be enabled below a cgroup
	 * that has processes of its own (a login session's scope, say). */
	const char *hint = busy ? " (cordon's cgroup has other processes; run it alone in a delegated cgroup, e.g. systemd-run --scope -p Delegate=yes cordon run ...)" : "";
	if (lim->memory) {
		if (!cg->has_memory) {
			cg->missing = cg_v2_has(parent, "memory") ? NULL : "memory";
			return cordon_err(err, 0, "the memory controller is not available in %s%s", parent, hint);
		}
		char v[32];
		snprintf(v, sizeof(v), "%llu", (unsigned long long)lim->memory);
		if (cg_write(cg->dirs[0], "memory.max", v, err) < 0)
			return -1;
		cg_write(cg->dirs[0], "memory.swap.max", "0", NULL);
		cg_write(cg->dirs[0], "memory.oom.group", "1", NULL);
	}
	if (lim->pids) {
		if (!cg->has_pids) {
			cg->missing = cg_v2_has(parent, "pids") ? NULL : "pids";
			return cordon_err(err, 0, "the pids controller is not available in %s%s", parent, hint);
		}
		char v[32];
		snprintf(v, sizeof(v), "%llu", (unsigned long long)lim->pids);
		if (cg_write(cg->dirs[0], "pids.max", v, err) < 0)
			return -1;
	}
	cg->dirfd = open(cg->dirs[0], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cg->dirfd < 0)
		return cordon_err_errno(err, "open %s", cg->dirs[0]);
	return 0;
}

static int v2_attach(struct cgroup *cg, pid_t pid, cordon_error *err)
{
	char v[32];
	snprintf(v, sizeof(v), "%d", (int)pid);
	return cg_write(cg->dirs[0], "cgroup.procs", v, err);
}

static int v2_usage(struct cgroup *cg, struct cg_usage *u)
{
	memset(u, 0, sizeof(*u));
	uint64_t us;
	if (cg_read_key(cg->dirs[0], "cpu.stat", "user_usec", &us) == 0) {
		u->cpu_user_ns = us * 1000;
		if (cg_read_key(cg->dirs[0], "cpu.stat", "system_usec", &us) == 0)
			u->cpu_sys_ns = us * 1000;
		u->have_cpu = true;
	}
	if (cg_read_u64(cg->dirs[0], "memory.peak", &u->peak_memory) == 0)
		u->have_memory = true;
	cg_read_key(cg->dirs[0], "memory.events", "oom_kill", &u->oom_kills);
	cg_read_key(cg->dirs[0], "pids.events", "max", &u->pids_max_hits);
	return 0;
}

static void v2_destroy(struct cgroup *cg)
{
	if (cg->dirfd >= 0) {
		close(cg->dirfd);
		cg->dirfd = -1;
	}
	if (cg->ndirs && cg->dirs[0][0]) {
		cg_write(cg->dirs[0], "cgroup.kill", "1", NULL);
		rmdir(cg->dirs[0]);
	}
	cg->ndirs = 0;
}

const struct cgroup_ops cgroup_v2_ops = {"v2", v2_create, v2_attach, v2_usage, v2_destroy};
