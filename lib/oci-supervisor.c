/* The supervisor process (docs/oci.md): forked by create (oci-create.c)
 * and detached from it, it clones the container's init with CLONE_PARENT
 * (so init is the caller's subreaper's child as with runc), writes its id
 * maps, cgroup, rlimits and oom score, hands it the mount trees and the
 * console, runs the create-time hooks, writes the state, then reports
 * success to create over the ready pipe. It then watches init through a
 * pidfd and serves ROOT/ID/sup.sock (start's GO), and writes the report
 * (cordon.report/1) when init exits. It runs nothing of the caller's: once
 * created it holds no descriptor of create's stdio. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "oci-supervisor.h"
#include "cleanup.h"
#include "clock.h"
#include "notify-budget.h"
#include "error.h"
#include "oci-config.h"
#include "oci-state.h"
#include "oci-cgroup.h"
#include "oci-common.h"
#include "oci-init.h"
#include "oci-landlock.h"
#include "oci-nsjoin.h"
#include "oci-observe.h"
#include "oci-model.h"
#include "observe.h"
#include "sockdiag.h"
#include "oci-slots.h"
#include "policy.h"
#include "landlock.h"
#include "oci-egress.h"
#include "oci-inbound.h"
#include "proxy.h"
#include "redact-stream.h"
#include "report-json.h"
#include "sup-proxy.h"

static int write_maps(pid_t pid, const struct oci_config *c, int slot, cordon_error *err)
{
	for (int g = 0; g < 2; g++) {
		const struct oci_idmap *m = g ? c->gidm : c->uidm;
		size_t n = g ? c->ngidm : c->nuidm;
		char text[4096] = "", p[64];
		if (n == 0)
			snprintf(text, sizeof(text), "0 %u %u\n", OCI_SLOT_BASE + (unsigned)slot * OCI_SLOT_SIZE, OCI_SLOT_SIZE);
		for (size_t i = 0; i < n; i++)
			snprintf(text + strlen(text), sizeof(text) - strlen(text), "%u %u %u\n", m[i].inner, m[i].outer,
				 m[i].size);
		snprintf(p, sizeof(p), "/proc/%d/%s", (int)pid, g ? "gid_map" : "uid_map");
		int fd = open(p, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			return cordon_err(err, e, "writing the %s mappings", g ? "gid" : "uid");
		}
		close(fd);
	}
	return 0;
}

/* A clone of the tree at path (recursive or not), made by the supervisor,
 * which can reach paths init cannot (a 0700 bundle directory above the
 * rootfs, a bind's source below one): init attaches it with move_mount.
 * userns >= 0: idmapped with the container's user namespace, so an image's
 * root-owned files stay root's inside; where the filesystem cannot, a plain
 * clone. */
static int clone_tree(const char *path, bool rec, int userns)
{
	int t = (int)syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (rec ? AT_RECURSIVE : 0));
	if (t < 0 || userns < 0)
		return t;
	struct mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns};
	if (syscall(SYS_mount_setattr, t, "", AT_EMPTY_PATH | (rec ? AT_RECURSIVE : 0), &a, sizeof(a)) < 0) {
		close(t);
		t = (int)syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (rec ? AT_RECURSIVE : 0));
	}
	return t;
}

static int send_trees(int s, const struct oci_config *c, pid_t pid, cordon_error *err)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/ns/user", (int)pid);
	_cleanup_close_ int u = open(p, O_RDONLY | O_CLOEXEC);
	int tree = clone_tree(c->root, true, u);
	if (tree < 0)
		return cordon_err_errno(err, "root.path %s", c->root);
	/* attached over root.path in init's mount namespace by a helper that
	 * joins it as the host's root: init may not reach root.path (a 0700
	 * directory above it); it keeps the tree's fd, the attached root */
	char text[OCI_MSG_MAX];
	int fd0 = -1;
	if (oci_recv(s, text, &fd0) != OCI_MSG_NSREADY) {
		close(tree);
		return cordon_err(err, 0, "the container's init exited while setting up");
	}
	pid_t h = fork();
	if (h == 0) {
		snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)pid);
		int m = open(p, O_RDONLY | O_CLOEXEC);
		if (m < 0 || setns(m, CLONE_NEWNS) < 0 ||
		    syscall(SYS_move_mount, tree, "", AT_FDCWD, c->root, MOVE_MOUNT_F_EMPTY_PATH) < 0)
			_exit(errno ? errno : 1);
		_exit(0);
	}
	int hst = 0;
	if (h < 0 || waitpid(h, &hst, 0) < 0 || !WIFEXITED(hst) || WEXITSTATUS(hst) != 0) {
		close(tree);
		return cordon_err(err, h > 0 && WIFEXITED(hst) ? WEXITSTATUS(hst) : EIO, "attaching root.path %s",
				  c->root);
	}
	int r = oci_send(s, OCI_MSG_TREE, "", tree) < 0 ? -1 : 0;
	close(tree);
	for (size_t i = 0; r == 0 && i < c->nmounts; i++) {
		const struct oci_mount *m = &c->mounts[i];
		int fd = -1;
		if (m->bind && m->source) {
			char src[PATH_MAX];
			if (m->source[0] == '/')
				snprintf(src, sizeof(src), "%s", m->source);
			else
				snprintf(src, sizeof(src), "%s/%s", c->bundle, m->source);
			/* idmapped too: root inside owns (and writes) what the host's
			 * root owns, as an engine's volume expects of root in a
			 * container (with runc and crun, the host's root itself) */
			fd = clone_tree(src, m->rec, u);
			if (fd < 0)
				return cordon_err_errno(err, "mount %s: the source %s", m->dest, src);
		}
		r = oci_send(s, OCI_MSG_TREE, "", fd);
		if (fd >= 0)
			close(fd);
	}
	if (r < 0)
		return cordon_err_errno(err, "sending the mount trees to init");
	return 0;
}

/* The host id of id inside the container (its maps, else the slot's range);
 * -1 (chown leaves it the host's root's: the container's overflow id) where
 * id is not mapped. */
static uint32_t outer_id(const struct oci_idmap *m, size_t n, int slot, uint32_t id)
{
	if (n == 0)
		return id < OCI_SLOT_SIZE ? OCI_SLOT_BASE + (unsigned)slot * OCI_SLOT_SIZE + id : (uint32_t)-1;
	for (size_t i = 0; i < n; i++)
		if (id >= m[i].inner && id - m[i].inner < m[i].size)
			return m[i].outer + (id - m[i].inner);
	return (uint32_t)-1;
}

/* linux.devices: a user namespace cannot mknod, and a device node on a
 * filesystem it mounted cannot be opened; so the nodes are made here, as the
 * host's root, on a tmpfs of their own (never attached in the host's mount
 * tree: a child in a private mount namespace attaches it over its "/", as
 * open_tree clones only from a mount of the caller's namespace), with the
 * config's type, numbers, mode and owner (mapped as the container sees it),
 * and each one's clone goes to init, which attaches it at its path as it does
 * a bind's source. One OCI_MSG_TREE per device, in order. */
static int send_devices(int s, const struct oci_config *c, int slot, cordon_error *err)
{
	if (c->ndevices == 0)
		return 0;
	int ep[2];
	if (pipe2(ep, O_CLOEXEC) < 0)
		return cordon_err_errno(err, "linux.devices: pipe");
	pid_t h = fork();
	if (h < 0) {
		close(ep[0]);
		close(ep[1]);
		return cordon_err_errno(err, "linux.devices: fork");
	}
	if (h == 0) {
		cordon_error e = {0};
		int fs = -1, mnt = -1;
		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    (fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC)) < 0 ||
		    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", "64k", 0) < 0 ||
		    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0 ||
		    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
		    (mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)) < 0 ||
		    syscall(SYS_move_mount, mnt, "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH) < 0)
			cordon_err_errno(&e, "linux.devices: a tmpfs for the nodes");
		for (size_t i = 0; !e.msg[0] && i < c->ndevices; i++) {
			const struct oci_dev *d = &c->devices[i];
			char name[32];
			snprintf(name, sizeof(name), "dev%zu", i);
			mode_t type = d->type == 'b' ? S_IFBLK : d->type == 'p' ? S_IFIFO : S_IFCHR;
			mode_t perm = d->has_mode ? (mode_t)(d->mode & 07777) : 0666;
			dev_t dev = d->type == 'p' ? 0 : makedev((unsigned)d->major, (unsigned)d->minor);
			int t = -1;
			if (mknodat(mnt, name, type | perm, dev) < 0 || fchmodat(mnt, name, perm, 0) < 0 ||
			    fchownat(mnt, name, outer_id(c->uidm, c->nuidm, slot, d->has_uid ? d->uid : 0),
				     outer_id(c->gidm, c->ngidm, slot, d->has_gid ? d->gid : 0), AT_SYMLINK_NOFOLLOW) < 0 ||
			    (t = (int)syscall(SYS_open_tree, mnt, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)) < 0 ||
			    oci_send(s, OCI_MSG_TREE, "", t) < 0)
				cordon_err_errno(&e, "linux.devices %s (%c %lld:%lld): making the node", d->path,
						 d->type, (long long)d->major, (long long)d->minor);
			if (t >= 0)
				close(t);
		}
		if (e.msg[0]) {
			ssize_t w = write(ep[1], e.msg, strlen(e.msg));
			(void)w;
			_exit(1);
		}
		_exit(0);
	}
	close(ep[1]);
	char m[sizeof(err->msg)] = "";
	ssize_t n = read(ep[0], m, sizeof(m) - 1);
	close(ep[0]);
	int st = 0;
	if (waitpid(h, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return cordon_err(err, 0, "%s", n > 0 ? m : "linux.devices: making the nodes failed");
	return 0;
}

static void fill_state(struct oci_state *s, const struct oci_config *c, const char *id)
{
	snprintf(s->id, sizeof(s->id), "%s", id);
	snprintf(s->bundle, sizeof(s->bundle), "%s", c->bundle);
	for (size_t i = 0; i < c->ann_k.n; i++) {
		strv_push(&s->ann_k, c->ann_k.v[i]);
		strv_push(&s->ann_v, c->ann_v.v[i]);
		if (strcmp(c->ann_k.v[i], "run.cordon.report") == 0)
			snprintf(s->report, sizeof(s->report), "%s", c->ann_v.v[i]);
	}
}

/* enforcement.landlock_abi and landlock_rules: what init applied before it
 * executed the process (ready: READY's text, oci-landlock.h), 0 if it never
 * started or the kernel has no Landlock. */
static void write_landlock(jwriter *w, const char *ready, bool started)
{
	int abi = 0;
	unsigned rules = 0;
	if (!started || !oci_landlock_parse(ready, &abi, &rules))
		abi = 0, rules = 0;
	jw_key(w, "landlock_abi");
	jw_int(w, abi);
	jw_key(w, "landlock_rules");
	jw_uint(w, rules);
	jw_key(w, "landlock_missing");
	jw_arr_begin(w);
	for (const char *const *m = landlock_missing(abi); started && *m; m++)
		jw_str(w, *m);
	jw_arr_end(w);
}

static char *redact_filter(void *ctx, const char *s)
{
	return ctx ? redact_string(ctx, s) : strdup(s);
}

/* The report (cordon.report/1) when init has exited: under ROOT/reports/ID.json
 * (the 64 newest kept) and at the annotation run.cordon.report's path, as
 * report_name in report_dfd (open_report_dir), none if report_dfd < 0. */
static void write_report(const char *root, int report_dfd, const char *report_name,
			 const struct oci_state *s, const struct oci_config *c, const struct timespec *t0, const char *status, int exit_code, const char *ready,
			 const struct run_report *obs, const struct notify_budget *nb, const struct run_report *net)
{
	uint64_t cpu = 0, peak = 0, ooms = 0;
	oci_cgroup_usage(s->cgroup, &cpu, &peak, &ooms);
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double wall = (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
	/* every string through the secrets' redactor, as cordon run's report */
	jwriter w = {.filter = redact_filter, .filter_ctx = net ? net->redact : NULL};
	jw_obj_begin(&w);
	jw_key(&w, "schema");
	jw_str(&w, "cordon.report/1");
	jw_key(&w, "runtime");
	jw_str(&w, "cordon-oci");
	jw_key(&w, "id");
	jw_str(&w, s->id);
	jw_key(&w, "status");
	jw_str(&w, ooms ? "memory-limit" : status);
	jw_key(&w, "exit_code");
	if (exit_code >= 0)
		jw_int(&w, exit_code);
	else
		jw_null(&w);
	jw_key(&w, "signal");
	jw_null(&w);
	jw_key(&w, "command");
	jw_str_array(&w, (const char *const *)c->args.v, c->args.n);
	jw_key(&w, "limits_hit");
	jw_arr_begin(&w);
	if (ooms)
		jw_str(&w, "memory");
	jw_arr_end(&w);
	jw_key(&w, "usage");
	jw_obj_begin(&w);
	jw_key(&w, "wall_seconds");
	jw_double(&w, wall);
	jw_key(&w, "cpu_seconds");
	jw_double(&w, (double)cpu / 1e9);
	jw_key(&w, "peak_memory_bytes");
	jw_uint(&w, peak);
	if (nb) {
		jw_key(&w, "notifications");
		jw_obj_begin(&w);
		jw_key(&w, "answered");
		jw_uint(&w, nb->answered);
		jw_key(&w, "throttled");
		jw_uint(&w, nb->throttled);
		jw_key(&w, "held_seconds");
		jw_double(&w, (double)nb->held_ns / 1e9);
		jw_obj_end(&w);
	}
	jw_obj_end(&w);
	jw_key(&w, "denials");
	oci_denials_json(&w, obs, net);
	if (net)
		report_write_network(&w, net);
	jw_key(&w, "enforcement");
	jw_obj_begin(&w);
	jw_key(&w, "user_ns");
	jw_bool(&w, true);
	jw_key(&w, "seccomp");
	jw_str(&w, c->seccomp.present ? "config+cordon-deny-list" : "cordon-deny-list");
	jw_key(&w, "cgroup");
	jw_str(&w, s->cgroup);
	write_landlock(&w, ready, s->started);
	jw_obj_end(&w);
	jw_obj_end(&w);
	if (jw_finish(&w) < 0)
		return;
	char dir[PATH_MAX], name[300];
	snprintf(dir, sizeof(dir), "%s/reports", root);
	mkdir(dir, 0700);
	snprintf(name, sizeof(name), "%s.json", s->id);
	/* one descriptor for the write and the retention below: a link at
	 * ROOT/reports is never followed, to write or to remove */
	int rfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rfd >= 0)
		oci_write_at(rfd, name, w.out.p, w.out.len, 0600);
	/* the annotation's: within the directory opened at create time (the
	 * container may have replaced its path, or the name, by a link since) */
	if (report_dfd >= 0)
		oci_write_at(report_dfd, report_name, w.out.p, w.out.len, 0600);
	buf_free(&w.out);
	/* retention: the 64 newest reports */
	DIR *d = rfd < 0 ? NULL : fdopendir(rfd);
	if (!d) {
		if (rfd >= 0)
			close(rfd);
		return;
	}
	struct { char name[300]; time_t t; } *all = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		struct stat st;
		if (e->d_name[0] == '.' || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			void *np = realloc(all, cap * sizeof(*all));
			if (!np)
				break;
			all = np;
		}
		snprintf(all[n].name, sizeof(all[n].name), "%s", e->d_name);
		all[n++].t = st.st_mtime;
	}
	while (n > 64) {
		size_t old = 0;
		for (size_t i = 1; i < n; i++)
			if (all[i].t < all[old].t)
				old = i;
		unlinkat(dirfd(d), all[old].name, 0);
		all[old] = all[--n];
	}
	free(all);
	closedir(d);
}

/* The annotation run.cordon.report's directory, opened at create time, before
 * the container runs: the path may lead into the rootfs, and by the time init
 * exits the container may have made any component of it a link (the report is
 * written as the host's root). -1 without the annotation or that directory. */
static int open_report_dir(const struct oci_config *c, char *name, size_t namesz)
{
	const char *path = NULL;
	for (size_t i = 0; i < c->ann_k.n; i++)
		if (strcmp(c->ann_k.v[i], "run.cordon.report") == 0)
			path = c->ann_v.v[i];
	if (!path || !*path)
		return -1;
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if ((size_t)snprintf(name, namesz, "%s", slash ? slash + 1 : dir) >= namesz)
		return -1;
	if (slash == dir)
		dir[1] = '\0';
	else if (slash)
		*slash = '\0';
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -1;
	return open(slash ? dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* init in a user namespace joined by path (oci-nsjoin.h), which this
 * process must not join: it keeps the host's privileges for the cgroup, the
 * trees and the hooks. A helper, cloned with CLONE_PARENT (the caller's
 * subreaper's child, as init is, which reaps it), joins the user namespace
 * (then the mount namespace, if joined: its owner's) and clones init with
 * CLONE_PARENT and flags, so the namespaces init gets new are owned by the
 * joined user namespace; it hands init's pidfd back (its pid as the helper
 * numbers it may be another pid namespace's) and exits. Returns init's pid
 * as this process numbers it, 0 in init, -1 on error. */
static pid_t clone_joined(const struct oci_nsjoin *j, int flags, cordon_error *err)
{
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return cordon_err_errno(err, "socketpair");
	pid_t h = (pid_t)syscall(SYS_clone, (unsigned long)(CLONE_PARENT | SIGCHLD), NULL, NULL, NULL, NULL);
	if (h < 0) {
		close(sp[0]);
		close(sp[1]);
		return cordon_err_errno(err, "clone");
	}
	if (h == 0) {
		close(sp[0]);
		cordon_error e = {0};
		/* in the joined namespace the other container's root has
		 * CAP_SYS_PTRACE over this process, which is still the host's
		 * uid 0 (in the host's mount namespace) until init becomes that
		 * namespace's root: not dumpable, it needs CAP_SYS_PTRACE in the
		 * host's user namespace (this mm's) to trace it or open its
		 * /proc files; init inherits it until it executes the process */
		if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
			cordon_err_errno(&e, "prctl(PR_SET_DUMPABLE)");
		else if (setns(j->user, CLONE_NEWUSER) < 0)
			cordon_err_errno(&e, "linux.namespaces: joining the user namespace");
		else if (j->mnt >= 0 && setns(j->mnt, CLONE_NEWNS) < 0)
			cordon_err_errno(&e, "linux.namespaces: joining the mount namespace");
		pid_t pid = e.msg[0] ? -1
				     : (pid_t)syscall(SYS_clone, (unsigned long)(flags | CLONE_PARENT | SIGCHLD), NULL,
						      NULL, NULL, NULL);
		if (pid == 0) {
			close(sp[1]);
			return 0;
		}
		int pfd = pid < 0 ? -1 : (int)syscall(SYS_pidfd_open, pid, 0);
		if (!e.msg[0] && pfd < 0)
			cordon_err_errno(&e, "clone");
		oci_send(sp[1], e.msg[0] ? OCI_MSG_ERROR : OCI_MSG_READY, e.msg, pfd);
		if (pfd < 0 && pid > 0)
			kill(pid, SIGKILL);
		_exit(0);
	}
	close(sp[1]);
	char text[OCI_MSG_MAX];
	int pfd = -1;
	int t = oci_recv(sp[0], text, &pfd);
	close(sp[0]);
	if (t == OCI_MSG_ERROR)
		return cordon_err(err, 0, "%s", text);
	pid_t pid = -1;
	if (t == OCI_MSG_READY && pfd >= 0) {
		char f[64], line[256];
		snprintf(f, sizeof(f), "/proc/self/fdinfo/%d", pfd);
		FILE *fi = fopen(f, "re");
		while (fi && fgets(line, sizeof(line), fi))
			if (sscanf(line, "Pid: %d", &pid) == 1)
				break;
		if (fi)
			fclose(fi);
	}
	if (pfd >= 0)
		close(pfd);
	if (pid <= 0)
		return cordon_err(err, 0, "linux.namespaces: starting init in the user namespace joined");
	return pid;
}

static void sup_fail(struct oci_sup *x, pid_t pid, const cordon_error *err)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (pfd >= 0) {
			struct pollfd p = {pfd, POLLIN, 0};
			poll(&p, 1, 5000);
			close(pfd);
		}
		oci_cgroup_remove(x->cgpath, NULL);
	}
	char m[OCI_MSG_MAX];
	snprintf(m, sizeof(m), "E%s", err->msg);
	ssize_t w = write(x->ready, m, strlen(m));
	(void)w;
	_exit(1);
}

#define OCI_LISTENERS 64
/* Keep fd among the listeners polled; false when there is no room. */
static bool add_listener(int *v, size_t *n, int fd)
{
	if (*n >= OCI_LISTENERS)
		return false;
	v[(*n)++] = fd;
	return true;
}

/* oci_recv on init's socket, serving the listeners meanwhile: init's own
 * execve, which ends the exchange (the socket's EOF), is an observed call
 * (observer_calls) waiting for the supervisor's answer. */
static int recv_observed(int s, char *text, int *fd, const int *xls, size_t nxls, struct observer *o,
			 struct run_report *rep, struct notify_budget *nb)
{
	for (;;) {
		struct pollfd p[1 + OCI_LISTENERS] = {{s, POLLIN, 0}};
		for (size_t i = 0; i < nxls; i++)
			p[1 + i] = (struct pollfd){xls[i], POLLIN, 0};
		if (poll(p, 1 + nxls, -1) < 0 && errno != EINTR)
			return -1;
		for (size_t i = 0; i < nxls; i++)
			if (p[1 + i].revents & POLLIN) {
				uint64_t before = o->notifications;
				o->listener = xls[i];
				int n = observer_handle(o, rep);
				o->listener = -1;
				if (o->notifications != before)
					notify_budget_charge(nb, n > 0 ? NOTIFY_COST_DENIAL : NOTIFY_COST_CALL);
			}
		if (p[0].revents)
			return oci_recv(s, text, fd);
	}
}

void oci_supervisor(struct oci_sup *x, pid_t xpid)
{
	const struct oci_config *c = x->c;
	cordon_error err = {0};
	while (getppid() == xpid)
		usleep(200);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	/* What the deny list's notifications may cost this process
	 * (notify-budget.h), refused before anything is made. */
	int64_t nb_burst, nb_refill;
	if (notify_budget_parse(secure_getenv("CORDON_NOTIFY_BUDGET"), &nb_burst, &nb_refill, &err) < 0)
		sup_fail(x, 0, &err);
	/* cordon run's observer on the container's model: the denied calls and
	 * the file denials the view predicts go into obs_rep */
	static struct observer obs;
	static struct run_report obs_rep;
	report_init(&obs_rep);
	struct boundary_model model;
	if (oci_model_build(c, &model, &err) < 0)
		sup_fail(x, 0, &err);
	/* run.cordon.policy's loopback_ports: the binds and connects Landlock
	 * refuses are the observer's network denials, as in cordon run */
	int or = observer_init_oci(&obs, &model, c->egress, c->egress && c->egress->net_allow.n > 0, &err);
	model_free(&model);
	if (or < 0)
		sup_fail(x, 0, &err);
	/* the namespaces joined by path (user and mount: clone_joined's helper
	 * joins them, this process keeps the host's) */
	const struct oci_nsjoin *jn = x->join;
	bool join_user = jn->user >= 0, join_mnt = jn->mnt >= 0;
	int flags = join_user ? 0 : CLONE_NEWUSER;
	for (int k = 0; k < OCI_NS_N; k++) {
		if (k == OCI_NS_USER || (k == OCI_NS_MNT && c->ns_path[k]))
			continue;
		if (c->ns_new[k])
			flags |= oci_ns_flags[k];
		else if (c->ns_path[k]) {
			int fd = open(c->ns_path[k], O_RDONLY | O_CLOEXEC);
			if (fd < 0 || setns(fd, oci_ns_flags[k]) < 0) {
				cordon_err_errno(&err, "linux.namespaces: joining %s %s", oci_ns_names[k], c->ns_path[k]);
				sup_fail(x, 0, &err);
			}
			close(fd);
		}
	}
	/* a pod's sandbox holding its egress (oci-egress.h): init gets a
	 * network namespace of its own (flags), this process enters the pod's
	 * (the config's path), where the proxy's upstream sockets are made:
	 * they leave from the pod's address, under the pod's NetworkPolicy.
	 * Before any thread of the proxy's: they start in it too. */
	if (c->pod_net) {
		int fd = open(c->pod_net, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, CLONE_NEWNET) < 0) {
			cordon_err_errno(&err, "linux.namespaces: entering the pod's network namespace %s (the egress "
					       "proxy's)", c->pod_net);
			sup_fail(x, 0, &err);
		}
		close(fd);
	}
	if (!join_mnt)
		flags |= CLONE_NEWNS; /* the container's root is its own mount tree */
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		cordon_err_errno(&err, "socketpair");
		sup_fail(x, 0, &err);
	}
	pid_t pid = join_user ? clone_joined(jn, flags, &err)
			      : (pid_t)syscall(SYS_clone, (unsigned long)(flags | CLONE_PARENT | SIGCHLD), NULL, NULL, NULL, NULL);
	if (pid < 0) {
		if (!join_user)
			cordon_err_errno(&err, "clone");
		sup_fail(x, 0, &err);
	}
	if (pid == 0) {
		close(sv[0]);
		if (join_user)
			close(jn->user);
		if (join_mnt)
			close(jn->mnt);
		close(x->ready);
		close(x->dirfd);
		if (x->slotfd >= 0)
			close(x->slotfd); /* the range's lock is the supervisor's alone */
		oci_init_main(c, sv[1]);
	}
	close(sv[1]);
	for (int i = 3; i < 3 + x->o->preserve_fds; i++) /* init's now */
		if (i != x->ready && i != x->dirfd && i != x->slotfd && i != sv[0] && i != jn->user && i != jn->mnt)
			close(i);
	int s = sv[0];
	char report_name[NAME_MAX + 1];
	int report_dfd = open_report_dir(c, report_name, sizeof(report_name));
	char text[OCI_MSG_MAX];
	int fd;
	/* a joined user namespace has its maps (oci-nsjoin.h) */
	if ((!join_user && write_maps(pid, c, x->slot, &err) < 0) || oci_cgroup_create(c, x->cgpath, pid, &err) < 0)
		sup_fail(x, pid, &err);
	for (size_t i = 0; i < c->nrl; i++) {
		struct rlimit rl = {c->rl[i].soft, c->rl[i].hard};
		if (prlimit(pid, (__rlimit_resource_t)c->rl[i].res, &rl, NULL) < 0) {
			cordon_err_errno(&err, "process.rlimits");
			sup_fail(x, pid, &err);
		}
	}
	if (c->has_oom) {
		char p[64], v[32];
		snprintf(p, sizeof(p), "/proc/%d/oom_score_adj", (int)pid);
		snprintf(v, sizeof(v), "%d", c->oom);
		int ofd = open(p, O_WRONLY | O_CLOEXEC);
		if (ofd < 0 || write(ofd, v, strlen(v)) < 0) {
			cordon_err_errno(&err, "process.oomScoreAdj");
			sup_fail(x, pid, &err);
		}
		close(ofd);
	}
	/* a joined mount namespace is the other container's tree, as it is:
	 * nothing attached to it */
	if (oci_send(s, OCI_MSG_GO1, "", -1) < 0 || (!join_mnt && send_trees(s, c, pid, &err) < 0) ||
	    (!join_mnt && send_devices(s, c, x->slot, &err) < 0))
		sup_fail(x, pid, &err);
	/* run.cordon.policy: the egress proxy, served in this process's loop
	 * (its own epoll set, polled with the rest); init sends the socket it
	 * listens on, in the container's network namespace, before READY */
	static struct run_report net;
	struct proxy *px = NULL;
	int epfd = -1;
	if (c->egress && c->egress->net_allow.n && !c->pod_proxy) { /* a pod's: its sandbox's */
		report_init(&net);
		if ((epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
			cordon_err_errno(&err, "the egress proxy: epoll");
		/* its TLS and credential broker (create made the CA and read the
		 * secrets: c->egress_run): the report names the injected secrets
		 * in the policy's order and redacts their values */
		const struct oci_egress_run *er = c->egress_run;
		struct proxy_tls ptls = {er ? er->ca : NULL, er ? er->tls : NULL, c->egress->upstream_ca,
					 er ? er->psec : NULL, er ? er->npsec : 0};
		for (size_t i = 0; er && i < er->sec.n; i++)
			if (strv_push(&net.secrets, er->sec.v[i].name) < 0)
				cordon_oom(&err);
		net.redact = er ? er->sec.redact : NULL;
		if (epfd < 0 || (er && net.secrets.n < er->sec.n) ||
		    proxy_new(&px, &c->egress->net_allow, &c->egress->net_rules, er && er->ca ? &ptls : NULL, &net, epfd, &err) < 0)
			sup_fail(x, pid, &err);
	}
	char ready[OCI_MSG_MAX] = "";
	for (;;) {
		int t = oci_recv(s, text, &fd);
		if (t == OCI_MSG_PROXY && px && fd >= 0) {
			if (proxy_listen(px, fd, &err) < 0)
				sup_fail(x, pid, &err);
			continue;
		}
		if (t == OCI_MSG_READY) {
			snprintf(ready, sizeof(ready), "%s", text);
			break;
		}
		if (t == OCI_MSG_PTY && x->o->console_socket) {
			if (oci_send_console(x->o->console_socket, fd, &err) < 0)
				sup_fail(x, pid, &err);
			close(fd);
			continue;
		}
		if (t == OCI_MSG_ERROR)
			cordon_err(&err, 0, "%s", text);
		else
			cordon_err(&err, 0, "the container's init exited while setting up");
		sup_fail(x, pid, &err);
	}
	/* a pod's inbound ports (oci-inbound.h): listened on in the pod's
	 * network namespace (this process's), relayed into init's */
	pid_t relay = 0;
	const struct oci_inbound_counts *inbound = NULL;
	if (oci_inbound_start(c, pid, &relay, &inbound, &err) < 0)
		sup_fail(x, pid, &err);
	struct oci_state st = {0};
	fill_state(&st, c, x->o->id);
	st.pid = pid;
	st.start_time = oci_proc_start(pid);
	st.sup = getpid();
	st.sup_start = oci_proc_start(st.sup);
	st.slot = x->slot;
	snprintf(st.cgroup, sizeof(st.cgroup), "%s", x->cgpath);
	oci_now(st.created, sizeof(st.created));
	char sj[OCI_MSG_MAX];
	/* as crun: the create-time hooks see "created" (the validation suite's
	 * hooks_stdin wants it of prestart; runc says "creating") */
	oci_state_json_of(&st, OCI_CREATED, sj, sizeof(sj));
	if (oci_hooks_run(c, OCI_H_PRESTART, sj, &err) < 0 || oci_hooks_run(c, OCI_H_CREATE_RUNTIME, sj, &err) < 0 ||
	    oci_hooks_run(c, OCI_H_CREATE_CONTAINER, sj, &err) < 0)
		sup_fail(x, pid, &err);
	int ls = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un a;
	oci_sup_sock_path(x->dirfd, &a);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(ls, 8) < 0) {
		cordon_err_errno(&err, "the supervisor's socket");
		sup_fail(x, pid, &err);
	}
	if (oci_state_write(x->dirfd, &st, &err) < 0 ||
	    (x->o->pid_file && oci_write_pid_file(x->o->pid_file, pid, &err) < 0))
		sup_fail(x, pid, &err);
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	/* the container's loopback listeners, for the connects the observer
	 * records (sockdiag.h: asked in init's network namespace) */
	if (obs.connect_nr >= 0 && !obs.strict_ports && pfd >= 0)
		obs.diag = sockdiag_open(pid, pfd);
	ssize_t wr = write(x->ready, "O", 1);
	(void)wr;
	close(x->ready);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* detach from create's stdio: init has it */
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int i = 0; i < 3; i++)
		dup3(nul, i, 0);
	if (chdir("/") < 0)
		_exit(1);
	/* the deny list's listeners: init's (it sends it after GO2) and those
	 * of the processes exec adds (through sup.sock), OCI_LISTENERS at
	 * most (past that a process's denied calls get ENOSYS, unreported) */
	int xls[OCI_LISTENERS];
	size_t nxls = 0;
	bool had_listener = false;
	/* The listener is left unread while the budget is spent: the
	 * container's next denied call waits in the kernel, this loop serves
	 * the rest (init's exit, start, state) meanwhile. */
	struct notify_budget nb;
	notify_budget_init(&nb, nb_burst, nb_refill, mono_ns());
	uint64_t held_from = 0; /* when the hold began; 0: not holding */
	for (;;) {
		int timeout = -1;
		bool hold = false;
		if (nxls) {
			uint64_t now = mono_ns(), wait = notify_budget_wait_ns(&nb, now);
			if (wait) {
				held_from = held_from ? held_from : now;
				timeout = (int)((wait + 999999) / 1000000);
				hold = true;
			} else if (held_from) {
				notify_budget_held(&nb, now - held_from);
				held_from = 0;
			}
		}
		struct pollfd p[3 + OCI_LISTENERS] = {{pfd, POLLIN, 0}, {ls, POLLIN, 0}, {epfd, POLLIN, 0}};
		for (size_t i = 0; i < nxls; i++)
			p[3 + i] = (struct pollfd){hold ? -1 : xls[i], POLLIN, 0};
		if (poll(p, 3 + nxls, timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (size_t i = nxls; i-- > 0;) {
			short re = p[3 + i].revents;
			/* POLLHUP alone: no process uses the filter any more (a read would wait) */
			int answered = 0;
			if (re & POLLIN) {
				uint64_t before = obs.notifications;
				obs.listener = xls[i];
				answered = observer_handle(&obs, &obs_rep);
				obs.listener = -1; /* the loop's (closed below) */
				/* each notification answered is paid for, a denial more (as cordon run's observer) */
				if (obs.notifications != before)
					notify_budget_charge(&nb, answered > 0 ? NOTIFY_COST_DENIAL : NOTIFY_COST_CALL);
			}
			if (re && (!(re & POLLIN) || answered < 0)) {
				close(xls[i]);
				xls[i] = xls[--nxls];
			}
		}
		if (p[2].revents) {
			struct epoll_event evs[16];
			int n = epoll_wait(epfd, evs, 16, 0);
			for (int i = 0; i < n; i++)
				if (evs[i].data.u64 & PROXY_TAG)
					proxy_event(px, evs[i].data.u64, evs[i].events);
		}
		if (p[0].revents)
			break;
		if (!p[1].revents)
			continue;
		int cs = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
		if (cs < 0)
			continue;
		int cfd;
		int t = oci_recv(cs, text, &cfd);
		if (t == OCI_MSG_LISTENER) {
			/* an exec'd process's deny list (lib/oci-exec.c) */
			if (cfd >= 0 && !add_listener(xls, &nxls, cfd))
				close(cfd);
			if (cfd >= 0)
				had_listener = true;
		} else if (t == OCI_MSG_GO2 && !st.started) {
			oci_state_json_of(&st, OCI_RUNNING, sj, sizeof(sj));
			char reply[OCI_MSG_MAX] = "";
			if (oci_send(s, OCI_MSG_GO2, sj, -1) < 0)
				snprintf(reply, sizeof(reply), "the container's init is gone");
			else {
				int r = recv_observed(s, text, &cfd, xls, nxls, &obs, &obs_rep, &nb);
				for (; r == OCI_MSG_LISTENER; r = recv_observed(s, text, &cfd, xls, nxls, &obs, &obs_rep, &nb))
					if (cfd >= 0 && add_listener(xls, &nxls, cfd))
						had_listener = true;
					else if (cfd >= 0)
						close(cfd);
				if (r == OCI_MSG_ERROR)
					snprintf(reply, sizeof(reply), "%s", text);
				else if (r != 0)
					snprintf(reply, sizeof(reply), "unexpected message from init");
			}
			if (!reply[0]) {
				st.started = true;
				flock(x->dirfd, LOCK_EX);
				oci_state_write(x->dirfd, &st, NULL);
				flock(x->dirfd, LOCK_UN);
			}
			oci_send(cs, reply[0] ? OCI_MSG_ERROR : OCI_MSG_READY, reply, -1);
		}
		close(cs);
	}
	if (held_from)
		notify_budget_held(&nb, mono_ns() - held_from);
	/* the proxy's totals go into net, and the inbound relay's */
	proxy_free(px);
	oci_inbound_report(c, inbound, &net);
	write_report(x->o->root, report_dfd, report_name, &st, c, &t0, st.started ? "exited" : "never-started", -1, ready, &obs_rep,
		     had_listener ? &nb : NULL, net.net.enabled ? &net : NULL);
	unlinkat(x->dirfd, "sup.sock", 0);
	if (relay > 0) {
		kill(relay, SIGKILL);
		waitpid(relay, NULL, 0);
	}
	_exit(0);
}
