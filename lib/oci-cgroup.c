/* A container's cgroup: linux.cgroupsPath (default /cordon-oci/ID) in every
 * hierarchy, through cordon's cgroup layer's helpers (lib/cgroup.h: the host's
 * mounts, cg_write, cg_v2_enable). v2 where the memory controller is on the
 * cgroup2 hierarchy, else v1 (one directory per controller; a hybrid host's
 * empty cgroup2 mount is left alone). Only the controllers that exist are
 * used; a limit whose controller is absent is an error naming it. */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "oci-cgroup.h"
#include "cgroup.h"
#include "cgroup-devbpf.h"
#include "error.h"
#include "oci-config.h"
#include "oci-sdpath.h"

static const char *const v1_ctrl[] = {"memory", "pids", "cpu", "cpuacct", "cpuset", "devices", "freezer",
				      "blkio", "net_cls", "perf_event", "hugetlb", "net_prio", NULL};

static bool use_v2(const struct cg_host *h)
{
	char mp[PATH_MAX];
	if (cg_mount_point_in(h, "memory", false, mp, sizeof(mp)) == 0)
		return false;
	return cg_mount_point_in(h, "", true, mp, sizeof(mp)) == 0;
}

static int mkdir_p(const char *dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", dir);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				return -1;
			*s = '/';
		}
	return mkdir(p, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

/* A cgroup directory that exists and has processes in it (as runc, create
 * refuses it: it is another container's or the host's). */
static bool cg_busy(const char *d)
{
	char f[PATH_MAX * 2 + 32];
	snprintf(f, sizeof(f), "%s/cgroup.procs", d);
	FILE *fh = fopen(f, "re");
	if (!fh)
		return false;
	long p;
	bool busy = fscanf(fh, "%ld", &p) == 1;
	fclose(fh);
	return busy;
}

/* v1 cpuset: a new cgroup's cpus and mems are empty; take the parent's. */
static void cpuset_fill(const char *mp, const char *path)
{
	char p[PATH_MAX], cur[PATH_MAX];
	snprintf(p, sizeof(p), "%s", path);
	size_t n = strlen(mp);
	for (char *s = p + 1;; s++) {
		bool end = *s == '\0';
		if (*s == '/' || end) {
			*s = '\0';
			snprintf(cur, sizeof(cur), "%s%s", mp, p);
			for (int k = 0; k < 2; k++) {
				const char *f = k ? "cpuset.mems" : "cpuset.cpus";
				char v[4096] = "", up[PATH_MAX];
				snprintf(up, sizeof(up), "%s", cur);
				char *sl = strrchr(up, '/');
				if (!sl || (size_t)(sl - up) < n)
					continue;
				*sl = '\0';
				char fp[PATH_MAX + 32];
				snprintf(fp, sizeof(fp), "%s/%s", cur, f);
				FILE *fh = fopen(fp, "re");
				if (fh) {
					if (!fgets(v, sizeof(v), fh))
						v[0] = '\0';
					fclose(fh);
				}
				if (v[0] == '\n' || v[0] == '\0') {
					snprintf(fp, sizeof(fp), "%s/%s", up, f);
					fh = fopen(fp, "re");
					if (fh) {
						if (fgets(v, sizeof(v), fh))
							cg_write(cur, f, v, NULL);
						fclose(fh);
					}
				}
			}
			if (end)
				break;
			*s = '/';
		}
	}
}

/* The devices every container is given whatever its rules (as crun and
 * runc do: the default devices, /dev/pts's and /dev/ptmx, /dev/net/tun, and
 * mknod of any), after linux.resources.devices, so that a config's "deny
 * all" leaves /dev/null usable (a shell's `cmd &` opens it). */
static const struct cg_devrule dev_always[] = {
	{true, 'c', -1, -1, "m"}, {true, 'b', -1, -1, "m"}, {true, 'c', 1, 3, NULL}, {true, 'c', 1, 8, NULL},
	{true, 'c', 1, 7, NULL},  {true, 'c', 5, 0, NULL},  {true, 'c', 1, 5, NULL}, {true, 'c', 1, 9, NULL},
	{true, 'c', 5, 1, NULL},  {true, 'c', 136, -1, NULL}, {true, 'c', 5, 2, NULL}, {true, 'c', 10, 200, NULL}};

/* The config's rules in order, then dev_always: *n of them (NULL: no memory). */
static struct cg_devrule *dev_rules(const struct oci_config *c, size_t *n)
{
	size_t na = sizeof(dev_always) / sizeof(dev_always[0]);
	struct cg_devrule *r = calloc(c->ndevrules + na, sizeof(*r));
	if (!r)
		return NULL;
	for (size_t i = 0; i < c->ndevrules; i++) {
		const struct oci_devrule *x = &c->devrules[i];
		r[i] = (struct cg_devrule){x->allow, x->type, x->major, x->minor, x->access};
	}
	memcpy(r + c->ndevrules, dev_always, sizeof(dev_always));
	*n = c->ndevrules + na;
	return r;
}

/* v1 devices: the rules as devices.allow/deny lines. A rule the kernel
 * refuses in a child (wider than the parent) is skipped. */
static int write_dev_rules(const char *d, const struct oci_config *c, cordon_error *err)
{
	size_t n;
	struct cg_devrule *all = dev_rules(c, &n);
	if (!all)
		return cordon_err(err, ENOMEM, "device rules");
	for (size_t i = 0; i < n; i++) {
		const struct cg_devrule *r = &all[i];
		char rule[128], ma[24], mi[24];
		if (r->major < 0)
			snprintf(ma, sizeof(ma), "*");
		else
			snprintf(ma, sizeof(ma), "%" PRId64, r->major);
		if (r->minor < 0)
			snprintf(mi, sizeof(mi), "*");
		else
			snprintf(mi, sizeof(mi), "%" PRId64, r->minor);
		if (r->type == 'a')
			snprintf(rule, sizeof(rule), "a");
		else
			snprintf(rule, sizeof(rule), "%c %s:%s %s", r->type, ma, mi, r->access ? r->access : "rwm");
		cg_write(d, r->allow ? "devices.allow" : "devices.deny", rule, NULL);
	}
	free(all);
	return 0;
}

/* v2 devices: the same rules as an eBPF program on the container's cgroup
 * (lib/cgroup-devbpf.c). Where the program cannot be loaded for want of
 * privilege (a rootless cordon-oci), the rules are left out as crun does;
 * the container still cannot mknod (user namespace). */
static int dev_rules_v2(const char *d, const struct oci_config *c, cordon_error *err)
{
	size_t n;
	struct cg_devrule *r = dev_rules(c, &n);
	if (!r)
		return cordon_err(err, ENOMEM, "device rules");
	cordon_error le;
	int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = fd < 0 ? cordon_err_errno(&le, "cgroup %s", d) : cg_devbpf_apply(fd, r, n, &le);
	if (rc < 0 && fd >= 0 && le.code == EPERM && geteuid() != 0)
		rc = 0;
	if (fd >= 0)
		close(fd);
	free(r);
	return rc < 0 ? cordon_err(err, le.code, "linux.resources.devices: %s", le.msg) : 0;
}

static int write_limits(const struct cg_host *h, bool v2, const struct oci_config *c, const char *path,
			cordon_error *err)
{
	char d[PATH_MAX], v[64];
#define DIR_OF(ctrl)                                                                         \
	(v2 ? (cg_mount_point_in(h, "", true, d, sizeof(d)) == 0 ? (strncat(d, path, sizeof(d) - strlen(d) - 1), 0) : -1) \
	    : (cg_mount_point_in(h, ctrl, false, d, sizeof(d)) == 0 ? (strncat(d, path, sizeof(d) - strlen(d) - 1), 0) : -1))
#define NEED(ctrl)                                                                              \
	do {                                                                                    \
		if (DIR_OF(ctrl) < 0)                                                           \
			return cordon_err(err, 0, "linux.resources: the host has no %s cgroup controller", ctrl); \
	} while (0)
	if (c->mem_limit >= 0 || c->mem_reservation >= 0 || c->mem_swap >= 0) {
		NEED("memory");
		if (c->mem_limit >= 0) {
			snprintf(v, sizeof(v), "%" PRId64, c->mem_limit);
			if (cg_write(d, v2 ? "memory.max" : "memory.limit_in_bytes", c->mem_limit ? v : (v2 ? "max" : "-1"), err) < 0)
				return -1;
		}
		if (c->mem_reservation >= 0) {
			snprintf(v, sizeof(v), "%" PRId64, c->mem_reservation);
			if (cg_write(d, v2 ? "memory.low" : "memory.soft_limit_in_bytes", v, err) < 0)
				return -1;
		}
		if (c->mem_swap >= 0) {
			/* v1: memory+swap; v2: swap alone */
			int64_t s = v2 && c->mem_limit > 0 ? c->mem_swap - c->mem_limit : c->mem_swap;
			snprintf(v, sizeof(v), "%" PRId64, s < 0 ? 0 : s);
			char f[PATH_MAX + 40];
			snprintf(f, sizeof(f), "%s/%s", d, v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes");
			if (access(f, F_OK) == 0 && cg_write(d, v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes", v, err) < 0)
				return -1;
		}
	}
	if (c->pids_limit >= 0) {
		NEED("pids");
		snprintf(v, sizeof(v), "%" PRId64, c->pids_limit);
		if (cg_write(d, "pids.max", c->pids_limit > 0 ? v : "max", err) < 0)
			return -1;
	}
	if (c->cpu_shares || c->cpu_quota || c->cpu_period) {
		NEED("cpu");
		if (v2) {
			if (c->cpu_shares) {
				/* the conversion runc and crun use */
				uint64_t w = 1 + ((c->cpu_shares - 2) * 9999) / 262142;
				snprintf(v, sizeof(v), "%" PRIu64, w);
				if (cg_write(d, "cpu.weight", v, err) < 0)
					return -1;
			}
			if (c->cpu_quota || c->cpu_period) {
				char q[32];
				if (c->cpu_quota > 0)
					snprintf(q, sizeof(q), "%" PRId64, c->cpu_quota);
				else
					snprintf(q, sizeof(q), "max");
				snprintf(v, sizeof(v), "%s %" PRIu64, q, c->cpu_period ? c->cpu_period : 100000);
				if (cg_write(d, "cpu.max", v, err) < 0)
					return -1;
			}
		} else {
			if (c->cpu_shares) {
				snprintf(v, sizeof(v), "%" PRIu64, c->cpu_shares);
				if (cg_write(d, "cpu.shares", v, err) < 0)
					return -1;
			}
			if (c->cpu_period) {
				snprintf(v, sizeof(v), "%" PRIu64, c->cpu_period);
				if (cg_write(d, "cpu.cfs_period_us", v, err) < 0)
					return -1;
			}
			if (c->cpu_quota) {
				snprintf(v, sizeof(v), "%" PRId64, c->cpu_quota);
				if (cg_write(d, "cpu.cfs_quota_us", v, err) < 0)
					return -1;
			}
		}
	}
	if (c->cpus || c->mems) {
		NEED("cpuset");
		if (c->cpus && *c->cpus && cg_write(d, v2 ? "cpuset.cpus" : "cpuset.cpus", c->cpus, err) < 0)
			return -1;
		if (c->mems && *c->mems && cg_write(d, "cpuset.mems", c->mems, err) < 0)
			return -1;
	}
	if (c->ndevrules && !v2 && DIR_OF("devices") == 0 && write_dev_rules(d, c, err) < 0)
		return -1;
	if (c->ndevrules && v2 && DIR_OF("") == 0 && dev_rules_v2(d, c, err) < 0)
		return -1;
	return 0;
#undef NEED
#undef DIR_OF
}

/* pid into the cgroup path of every hierarchy cordon-oci uses (v2: the
 * one; v1: each controller mounted); *joined (if not NULL) counts them. */
static int write_procs(struct cg_host *h, bool v2, const char *path, pid_t pid, int *joined, cordon_error *err)
{
	char pidv[32], mp[PATH_MAX], d[PATH_MAX * 2];
	snprintf(pidv, sizeof(pidv), "%d", (int)pid);
	for (const char *const *k = v1_ctrl; *k; k++) {
		if (v2 ? k != v1_ctrl || cg_mount_point_in(h, "", true, mp, sizeof(mp)) < 0
		       : cg_mount_point_in(h, *k, false, mp, sizeof(mp)) < 0)
			continue;
		snprintf(d, sizeof(d), "%s%s", mp, path);
		if (cg_write(d, "cgroup.procs", pidv, err) < 0)
			return -1;
		if (joined)
			(*joined)++;
	}
	return 0;
}

static int cgroup_make(const struct oci_config *c, const char *path, pid_t pid, bool fresh, cordon_error *err)
{
	struct cg_host h = {0};
	if (cg_host_read(&h) < 0)
		return cordon_err_errno(err, "reading the host's cgroups");
	bool v2 = use_v2(&h);
	char pidv[32], mp[PATH_MAX], d[PATH_MAX * 2];
	snprintf(pidv, sizeof(pidv), "%d", (int)pid);
	int r = 0;
	for (const char *const *k = v1_ctrl; fresh && *k; k++) {
		if (v2 ? k != v1_ctrl || cg_mount_point_in(&h, "", true, mp, sizeof(mp)) < 0
		       : cg_mount_point_in(&h, *k, false, mp, sizeof(mp)) < 0)
			continue;
		snprintf(d, sizeof(d), "%s%s", mp, path);
		if (cg_busy(d)) {
			r = cordon_err(err, 0, "cgroup %s already exists and has processes in it", d);
			goto out;
		}
	}
	if (v2) {
		if (cg_mount_point_in(&h, "", true, mp, sizeof(mp)) < 0) {
			r = cordon_err(err, 0, "no cgroup hierarchy on this host");
			goto out;
		}
		/* enable controllers down to the container's parent */
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s", path);
		for (char *s = p + 1; *s; s++)
			if (*s == '/') {
				*s = '\0';
				snprintf(d, sizeof(d), "%s%s", mp, p);
				mkdir(d, 0755);
				cg_write(d, "cgroup.subtree_control", "+memory +pids +cpu +cpuset", NULL);
				*s = '/';
			}
		snprintf(d, sizeof(d), "%s", mp);
		cg_write(d, "cgroup.subtree_control", "+memory +pids +cpu +cpuset", NULL);
		snprintf(d, sizeof(d), "%s%s", mp, path);
		if (mkdir_p(d) < 0) {
			r = cordon_err_errno(err, "cgroup %s", d);
			goto out;
		}
	} else {
		for (const char *const *k = v1_ctrl; *k; k++) {
			if (cg_mount_point_in(&h, *k, false, mp, sizeof(mp)) < 0)
				continue;
			snprintf(d, sizeof(d), "%s%s", mp, path);
			if (mkdir_p(d) < 0) {
				r = cordon_err_errno(err, "cgroup %s", d);
				goto out;
			}
			if (strcmp(*k, "cpuset") == 0)
				cpuset_fill(mp, path);
		}
	}
	if (write_limits(&h, v2, c, path, err) < 0) {
		r = -1;
		goto out;
	}
	if (pid > 0)
		r = write_procs(&h, v2, path, pid, NULL, err);
out:
	cg_host_free(&h);
	return r;
}

int oci_cgroup_create(const struct oci_config *c, const char *path, pid_t pid, cordon_error *err)
{
	return cgroup_make(c, path, pid, true, err);
}

int oci_cgroup_join(const char *path, pid_t pid, cordon_error *err)
{
	/* into the container's cgroup as it is: nothing made, no limit
	 * written (a process exec adds must neither lift the container's
	 * limits nor run outside them: outside review of cordon-oci 2, F1) */
	struct cg_host h = {0};
	if (cg_host_read(&h) < 0)
		return cordon_err_errno(err, "reading the host's cgroups");
	int joined = 0;
	int r = write_procs(&h, use_v2(&h), path, pid, &joined, err);
	if (r == 0 && !joined)
		r = cordon_err(err, 0, "no cgroup hierarchy on this host to join %s", path);
	cg_host_free(&h);
	return r;
}

int oci_cgroup_update(const struct oci_config *c, const char *path, cordon_error *err)
{
	struct cg_host h = {0};
	if (cg_host_read(&h) < 0)
		return cordon_err_errno(err, "reading the host's cgroups");
	int r = write_limits(&h, use_v2(&h), c, path, err);
	cg_host_free(&h);
	return r;
}

static int dir_for(const char *ctrl_v1, const char *path, char *out, size_t outsz, bool *v2)
{
	struct cg_host h = {0};
	if (cg_host_read(&h) < 0)
		return -1;
	*v2 = use_v2(&h);
	char mp[PATH_MAX];
	int r = cg_mount_point_in(&h, *v2 ? "" : ctrl_v1, *v2, mp, sizeof(mp));
	cg_host_free(&h);
	if (r < 0)
		return -1;
	snprintf(out, outsz, "%s%s", mp, path);
	return 0;
}

int oci_cgroup_freeze(const char *path, bool freeze, cordon_error *err)
{
	char d[PATH_MAX * 2];
	bool v2;
	if (dir_for("freezer", path, d, sizeof(d), &v2) < 0)
		return cordon_err(err, 0, "the host has no freezer cgroup");
	if (v2)
		return cg_write(d, "cgroup.freeze", freeze ? "1" : "0", err);
	return cg_write(d, "freezer.state", freeze ? "FROZEN" : "THAWED", err);
}

bool oci_cgroup_frozen(const char *path)
{
	char d[PATH_MAX * 2], f[PATH_MAX * 2 + 32], v[64] = "";
	bool v2;
	if (dir_for("freezer", path, d, sizeof(d), &v2) < 0)
		return false;
	snprintf(f, sizeof(f), "%s/%s", d, v2 ? "cgroup.freeze" : "freezer.state");
	FILE *fh = fopen(f, "re");
	if (!fh)
		return false;
	if (!fgets(v, sizeof(v), fh))
		v[0] = '\0';
	fclose(fh);
	return v2 ? v[0] == '1' : strncmp(v, "FROZEN", 6) == 0;
}

int oci_cgroup_pids(const char *path, pid_t **pids, size_t *n)
{
	char d[PATH_MAX * 2], f[PATH_MAX * 2 + 32];
	bool v2;
	*pids = NULL;
	*n = 0;
	if (dir_for("pids", path, d, sizeof(d), &v2) < 0 && dir_for("memory", path, d, sizeof(d), &v2) < 0)
		return -1;
	snprintf(f, sizeof(f), "%s/cgroup.procs", d);
	FILE *fh = fopen(f, "re");
	if (!fh)
		return -1;
	long p;
	size_t cap = 0;
	while (fscanf(fh, "%ld", &p) == 1) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			pid_t *np = realloc(*pids, cap * sizeof(pid_t));
			if (!np)
				break;
			*pids = np;
		}
		(*pids)[(*n)++] = (pid_t)p;
	}
	fclose(fh);
	return 0;
}

int oci_cgroup_remove(const char *path, cordon_error *err)
{
	struct cg_host h = {0};
	if (cg_host_read(&h) < 0)
		return cordon_err_errno(err, "reading the host's cgroups");
	char mp[PATH_MAX], d[PATH_MAX * 2];
	int r = 0;
	bool v2 = use_v2(&h);
	for (const char *const *k = v1_ctrl; *k; k++) {
		if (cg_mount_point_in(&h, v2 ? "" : *k, v2, mp, sizeof(mp)) < 0)
			continue;
		snprintf(d, sizeof(d), "%s%s", mp, path);
		for (int tries = 0; tries < 100 && rmdir(d) < 0 && errno == EBUSY; tries++)
			usleep(10000);
		if (access(d, F_OK) == 0)
			r = cordon_err(err, 0, "cgroup %s is still in use", d);
		if (v2)
			break;
	}
	/* the default parent (/cordon-oci) when it is empty now */
	if (strncmp(path, "/cordon-oci/", 12) == 0)
		for (const char *const *k = v1_ctrl; *k; k++) {
			if (cg_mount_point_in(&h, v2 ? "" : *k, v2, mp, sizeof(mp)) == 0) {
				snprintf(d, sizeof(d), "%s/cordon-oci", mp);
				rmdir(d);
			}
			if (v2)
				break;
		}
	cg_host_free(&h);
	return r;
}

int oci_cgroup_usage(const char *path, uint64_t *cpu_ns, uint64_t *peak_mem, uint64_t *oom_kills)
{
	char d[PATH_MAX * 2];
	bool v2;
	*cpu_ns = *peak_mem = *oom_kills = 0;
	if (dir_for("memory", path, d, sizeof(d), &v2) == 0) {
		cg_read_u64(d, v2 ? "memory.peak" : "memory.max_usage_in_bytes", peak_mem);
		cg_read_key(d, v2 ? "memory.events" : "memory.oom_control", "oom_kill", oom_kills);
	}
	if (dir_for("cpuacct", path, d, sizeof(d), &v2) == 0) {
		if (v2) {
			uint64_t us = 0;
			cg_read_key(d, "cpu.stat", "usage_usec", &us);
			*cpu_ns = us * 1000;
		} else
			cg_read_u64(d, "cpuacct.usage", cpu_ns);
	}
	return 0;
}

int oci_cgroup_path(const struct oci_config *c, const char *id, bool systemd, char *out, size_t outsz,
		    cordon_error *err)
{
	const char *p = c->cgroups_path;
	if (!p || !*p) {
		snprintf(out, outsz, "/cordon-oci/%s", id);
		return 0;
	}
	if (systemd) {
		if (oci_systemd_cgroup_path(p, out, outsz, err) < 0)
			return -1;
	} else if (p[0] == '/')
		snprintf(out, outsz, "%s", p);
	else
		snprintf(out, outsz, "/%s", p);
	char norm[PATH_MAX];
	if (path_normalize(out, norm, sizeof(norm)) < 0 || strcmp(norm, "/") == 0)
		return cordon_err(err, 0, "cgroupsPath \"%s\" is not a path below the hierarchy's root", p);
	snprintf(out, outsz, "%s", norm);
	return 0;
}
