/* The cgroup files and the host's hierarchies, as the front end (cgroup.c),
 * both backends (cgroup-v1.c, cgroup-v2.c), a session's cgroups
 * (session-cg.c) and the host probe read and write them. Calls nothing of
 * the cgroup layer above it. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cleanup.h"
#include "error.h"
#include "cgroup-util.h"

int cg_write(const char *dir, const char *file, const char *val, cordon_error *err)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return cordon_err_errno(err, "open %s", path);
	size_t len = strlen(val);
	if (write(fd, val, len) != (ssize_t)len)
		return cordon_err_errno(err, "write \"%s\" to %s", val, path);
	return 0;
}

static ssize_t cg_read(const char *dir, const char *file, char *out, size_t outsz)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, out, outsz - 1);
	if (n < 0)
		return -1;
	out[n] = '\0';
	return n;
}

int cg_read_u64(const char *dir, const char *file, uint64_t *out)
{
	char tmp[64];
	if (cg_read(dir, file, tmp, sizeof(tmp)) < 0)
		return -1;
	*out = strtoull(tmp, NULL, 10);
	return 0;
}

int cg_read_key(const char *dir, const char *file, const char *key, uint64_t *out)
{
	char tmp[4096];
	if (cg_read(dir, file, tmp, sizeof(tmp)) < 0)
		return -1;
	size_t kl = strlen(key);
	for (char *line = tmp; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
			*out = strtoull(line + kl + 1, NULL, 10);
			return 0;
		}
	}
	return -1;
}

/* A whole /proc file at once (they are generated per read, and a host's
 * mountinfo can be long): one open, a few reads, one close. */
static char *read_text(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 8192, len = 0;
	char *b = malloc(cap);
	while (b) {
		ssize_t n = read(fd, b + len, cap - len - 1);
		if (n < 0) {
			free(b);
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (cap - len - 1 == 0) {
			char *nb = cap < (64u << 20) ? realloc(b, cap * 2) : NULL;
			if (!nb) {
				free(b);
				return NULL;
			}
			b = nb;
			cap *= 2;
		}
	}
	if (b)
		b[len] = '\0';
	return b;
}

int cg_host_read(struct cg_host *h)
{
	h->mountinfo = read_text("/proc/self/mountinfo");
	h->cgroup = read_text("/proc/self/cgroup");
	if (!h->mountinfo || !h->cgroup) {
		cg_host_free(h);
		return -1;
	}
	return 0;
}

void cg_host_free(struct cg_host *h)
{
	free(h->mountinfo);
	free(h->cgroup);
	h->mountinfo = h->cgroup = NULL;
}

/* The next line of text (NUL-terminated copy into line), or NULL. */
static const char *next_line(const char *p, char *line, size_t n)
{
	if (!p || !*p)
		return NULL;
	size_t l = strcspn(p, "\n");
	snprintf(line, n, "%.*s", (int)(l < n ? l : n - 1), p);
	return p[l] ? p + l + 1 : p + l;
}

int cg_self_path_in(const struct cg_host *h, const char *controller, char *out, size_t outsz)
{
	char line[4096];
	for (const char *p = h->cgroup; (p = next_line(p, line, sizeof(line)));) {
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c1 = '\0';
		*c2 = '\0';
		const char *ctrls = c1 + 1, *path = c2 + 1;
		bool match;
		if (!controller[0]) {
			match = strcmp(line, "0") == 0 && !ctrls[0];
		} else {
			match = false;
			char tmp[512], *save = NULL;
			snprintf(tmp, sizeof(tmp), "%s", ctrls);
			for (char *s = strtok_r(tmp, ",", &save); s; s = strtok_r(NULL, ",", &save))
				if (strcmp(s, controller) == 0)
					match = true;
		}
		if (match) {
			snprintf(out, outsz, "%s", strcmp(path, "/") == 0 ? "" : path);
			return 0;
		}
	}
	return -1;
}

int cg_mount_point_in(const struct cg_host *h, const char *controller, bool v2, char *out, size_t outsz)
{
	char line[4096];
	for (const char *p = h->mountinfo; (p = next_line(p, line, sizeof(line)));) {
		/* ... mountpoint ... - fstype source superopts */
		char *sep = strstr(line, " - ");
		if (!sep)
			continue;
		char fstype[32], source[256], opts[1024] = "";
		if (sscanf(sep + 3, "%31s %255s %1023s", fstype, source, opts) < 2)
			continue;
		char root[1024], mp[2048];
		if (sscanf(line, "%*d %*d %*s %1023s %2047s", root, mp) != 2)
			continue;
		if (strcmp(root, "/") != 0)
			continue;
		if (v2 && strcmp(fstype, "cgroup2") == 0) {
			snprintf(out, outsz, "%s", mp);
			return 0;
		}
		if (!v2 && strcmp(fstype, "cgroup") == 0) {
			char *save = NULL;
			for (char *s = strtok_r(opts, ",", &save); s; s = strtok_r(NULL, ",", &save))
				if (strcmp(s, controller) == 0) {
					snprintf(out, outsz, "%s", mp);
					return 0;
				}
		}
	}
	return -1;
}

int cg_mount_point(const char *controller, bool v2, char *out, size_t outsz)
{
	struct cg_host h = {0};
	h.mountinfo = read_text("/proc/self/mountinfo");
	int r = h.mountinfo ? cg_mount_point_in(&h, controller, v2, out, outsz) : -1;
	cg_host_free(&h);
	return r;
}

bool cg_v2_has(const char *dir, const char *name)
{
	char path[4300], line[512];
	snprintf(path, sizeof(path), "%s/cgroup.controllers", dir);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f || !fgets(line, sizeof(line), f))
		return false;
	for (char *s = strtok(line, " \n"); s; s = strtok(NULL, " \n"))
		if (strcmp(s, name) == 0)
			return true;
	return false;
}

int cg_v2_self_dir(char *out, size_t outsz)
{
	struct cg_host h;
	if (cg_host_read(&h) < 0)
		return -1;
	int r = cg_v2_self_dir_in(&h, out, outsz);
	cg_host_free(&h);
	return r;
}

int cg_v2_self_dir_in(const struct cg_host *h, char *out, size_t outsz)
{
	char mp[2048], self[2048], leaf[64];
	if (cg_mount_point_in(h, NULL, true, mp, sizeof(mp)) < 0 || cg_self_path_in(h, "", self, sizeof(self)) < 0)
		return -1;
	/* Moved into our own leaf by cg_v2_enable: the runs go beside it. */
	snprintf(leaf, sizeof(leaf), "/" CG_V2_LEAF_FMT, (int)getpid());
	size_t sl = strlen(self), ll = strlen(leaf);
	if (sl > ll && strcmp(self + sl - ll, leaf) == 0)
		self[sl - ll] = '\0';
	snprintf(out, outsz, "%s%s", mp, self);
	return 0;
}

/* Is this process the only member of the cgroup at dir? */
static bool only_member(const char *dir)
{
	char procs[4096];
	if (cg_read(dir, "cgroup.procs", procs, sizeof(procs)) < 0)
		return false;
	int n = 0;
	for (char *p = procs, *end; *p; p = end) {
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (pid != getpid())
			return false;
		n++;
		while (*end == '\n')
			end++;
	}
	return n == 1;
}

int cg_v2_enable(const char *dir, const char *want, cordon_error *err)
{
	cordon_error e2;
	if (cg_write(dir, "cgroup.subtree_control", want, &e2) == 0)
		return 0;
	if (e2.code != EBUSY || !only_member(dir))
		return cordon_err(err, e2.code, "%s", e2.msg);
	/* "No internal processes": a cgroup with members cannot hand
	 * controllers to children. In a delegated cgroup where the supervisor
	 * is alone (systemd-run --scope -p Delegate=yes, a container's own
	 * cgroup) it moves into a leaf of its own, and the runs go beside it. */
	char leaf[4300], pid[32];
	snprintf(leaf, sizeof(leaf), "%s/" CG_V2_LEAF_FMT, dir, (int)getpid());
	if (mkdir(leaf, 0755) < 0 && errno != EEXIST)
		return cordon_err_errno(err, "mkdir %s", leaf);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (cg_write(leaf, "cgroup.procs", pid, err) < 0) {
		rmdir(leaf);
		return -1;
	}
	return cg_write(dir, "cgroup.subtree_control", want, err);
}
