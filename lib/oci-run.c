/* The lifecycle (docs/oci.md): create forks a supervisor that outlives it
 * (double fork: its parent exits, so it is reparented to the caller's
 * subreaper or to init); the supervisor clones the container's init with
 * CLONE_PARENT, so init is the caller's subreaper's child as with runc
 * (containerd's shim and conmon reap it and take its exit status), while the
 * supervisor watches it through a pidfd. The supervisor holds init blocked
 * until `start` asks it over ROOT/ID/sup.sock, then writes the report when
 * init exits. */
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
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "error.h"
#include "oci.h"
#include "oci-int.h"

#ifndef NS_GET_USERNS
#define NS_GET_USERNS 0xb701
#endif

int oci_send(int sock, int type, const char *text, int fd)
{
	char b[OCI_MSG_MAX];
	size_t n = strlen(text);
	if (n > sizeof(b) - 2)
		n = sizeof(b) - 2;
	b[0] = (char)type;
	memcpy(b + 1, text, n);
	struct iovec iov = {b, n + 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	if (fd >= 0) {
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	ssize_t r;
	do
		r = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -1 : 0;
}

int oci_recv(int sock, char *text, int *fd)
{
	char b[OCI_MSG_MAX];
	struct iovec iov = {b, sizeof(b)};
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	*fd = -1;
	ssize_t n;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n == 0 ? 0 : -1;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(cm), sizeof(int));
	memcpy(text, b + 1, (size_t)n - 1);
	text[n - 1] = '\0';
	return (unsigned char)b[0];
}

/* --- hooks --- */

int oci_hooks_run(const struct oci_config *c, enum oci_hook_kind k, const char *state_json, cordon_error *err)
{
	for (size_t i = 0; i < c->hooks[k].n; i++) {
		const struct oci_hook *h = &c->hooks[k].h[i];
		int in[2];
		if (pipe2(in, O_CLOEXEC) < 0)
			return cordon_err_errno(err, "hook %s", h->path);
		pid_t p = fork();
		if (p < 0)
			return cordon_err_errno(err, "hook %s", h->path);
		if (p == 0) {
			dup2(in[0], 0);
			int nul = open("/dev/null", O_WRONLY);
			if (nul >= 0)
				dup2(nul, 1);
			char *const noargs[] = {h->path, NULL};
			execve(h->path, h->args.n ? h->args.v : noargs, h->env.n ? h->env.v : (char *[]){NULL});
			_exit(127);
		}
		close(in[0]);
		signal(SIGPIPE, SIG_IGN);
		ssize_t wn = write(in[1], state_json, strlen(state_json));
		(void)wn;
		close(in[1]);
		int st = 0;
		int waited = 0;
		for (;;) {
			pid_t w = waitpid(p, &st, h->timeout ? WNOHANG : 0);
			if (w == p)
				break;
			if (w < 0 && errno != EINTR)
				break;
			if (w == 0) {
				if (waited >= h->timeout * 100) {
					kill(p, SIGKILL);
					waitpid(p, &st, 0);
					return cordon_err(err, 0, "%s hook %s: timed out after %d s", oci_hook_names[k],
							  h->path, h->timeout);
				}
				usleep(10000);
				waited++;
			}
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return cordon_err(err, 0, "%s hook %s failed (%s %d)", oci_hook_names[k], h->path,
					  WIFEXITED(st) ? "exit status" : "signal",
					  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
	return 0;
}

/* --- create --- */

static bool same_ns(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

/* The user namespace owning namespace file path is the host's. */
static bool owned_by_host(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	int u = ioctl(fd, NS_GET_USERNS);
	close(fd);
	if (u < 0)
		return errno == EPERM; /* the owner is above ours: the host's */
	struct stat su, sh;
	bool r = fstat(u, &su) == 0 && stat("/proc/self/ns/user", &sh) == 0 && su.st_ino == sh.st_ino;
	close(u);
	return r;
}

static int check_config(const struct oci_config *c, cordon_error *err)
{
	struct stat st;
	if (lstat(c->root, &st) < 0)
		return cordon_err_errno(err, "root.path %s", c->root);
	if (S_ISLNK(st.st_mode))
		return cordon_err(err, 0, "root.path %s is a symbolic link (cordon-oci takes a directory only)", c->root);
	if (!S_ISDIR(st.st_mode))
		return cordon_err(err, 0, "root.path %s is not a directory", c->root);
	if (c->args.n == 0)
		return cordon_err(err, 0, "%s/config.json: no process to run", c->bundle);
	if (c->ns_path[OCI_NS_USER] && same_ns(c->ns_path[OCI_NS_USER], "/proc/self/ns/user"))
		return cordon_err(err, 0, "linux.namespaces: joining the host's user namespace (%s) would make the "
					      "container's root the host's root; cordon-oci refuses it",
				  c->ns_path[OCI_NS_USER]);
	if (c->ns_path[OCI_NS_MNT] && owned_by_host(c->ns_path[OCI_NS_MNT]))
		return cordon_err(err, 0, "linux.namespaces: joining the mount namespace %s, which the host's user "
					      "namespace owns, would run the container as the host's root; cordon-oci "
					      "refuses it",
				  c->ns_path[OCI_NS_MNT]);
	for (size_t i = 0; i < c->nuidm; i++)
		if (c->uidm[i].outer == 0)
			return cordon_err(err, 0, "linux.uidMappings maps container uid %u to the host's root; "
						      "cordon-oci refuses it", c->uidm[i].inner);
	for (int k = 0; k < OCI_NS_N; k++)
		if (c->ns_path[k]) {
			int fd = open(c->ns_path[k], O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				return cordon_err_errno(err, "linux.namespaces %s path %s", oci_ns_names[k],
							c->ns_path[k]);
			close(fd);
		}
	if (c->ns_path[OCI_NS_USER] || c->ns_path[OCI_NS_MNT])
		return cordon_err(err, 0, "linux.namespaces: joining a %s namespace by path is not supported yet",
				  c->ns_path[OCI_NS_USER] ? "user" : "mount");
	return 0;
}

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
	int u = open(p, O_RDONLY | O_CLOEXEC);
	int tree = clone_tree(c->root, true, u);
	if (u >= 0)
		close(u);
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
			fd = clone_tree(src, m->rec, -1);
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

static int send_console(const char *path, int fd, cordon_error *err)
{
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(a.sun_path))
		return cordon_err(err, 0, "--console-socket %s: path too long", path);
	strcpy(a.sun_path, path);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		if (s >= 0)
			close(s);
		return cordon_err(err, e, "--console-socket %s", path);
	}
	char b[] = "/dev/ptmx";
	struct iovec iov = {b, sizeof(b) - 1};
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	ssize_t r = sendmsg(s, &mh, MSG_NOSIGNAL);
	int e = errno;
	close(s);
	if (r < 0)
		return cordon_err(err, e, "--console-socket %s: sending the pty", path);
	return 0;
}

static int write_pid_file(const char *path, pid_t pid, cordon_error *err)
{
	char tmp[PATH_MAX + 16], v[32];
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
	snprintf(v, sizeof(v), "%d", (int)pid);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, v, strlen(v)) != (ssize_t)strlen(v) || close(fd) < 0 || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return cordon_err(err, e, "--pid-file %s", path);
	}
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

static int state_json_of(const struct oci_state *s, enum oci_status st, char *out, size_t outsz)
{
	buf b = {0};
	if (oci_state_json(s, st, &b) < 0)
		return -1;
	snprintf(out, outsz, "%.*s", (int)b.len, b.p);
	buf_free(&b);
	return 0;
}

static int sock_path(int dirfd, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "/proc/self/fd/%d/sup.sock", dirfd);
	return 0;
}

/* The report (cordon.report/1) when init has exited: under ROOT/reports/ID.json
 * (the 64 newest kept) and at the annotation run.cordon.report's path. */
static void write_report(const char *root, const struct oci_state *s, const struct oci_config *c,
			 const struct timespec *t0, const char *status, int exit_code)
{
	uint64_t cpu = 0, peak = 0, ooms = 0;
	oci_cgroup_usage(s->cgroup, &cpu, &peak, &ooms);
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double wall = (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
	jwriter w = {0};
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
	jw_obj_end(&w);
	jw_key(&w, "denials");
	jw_arr_begin(&w);
	jw_arr_end(&w);
	jw_key(&w, "enforcement");
	jw_obj_begin(&w);
	jw_key(&w, "user_ns");
	jw_bool(&w, true);
	jw_key(&w, "seccomp");
	jw_str(&w, c->seccomp.present ? "config+cordon-deny-list" : "cordon-deny-list");
	jw_key(&w, "cgroup");
	jw_str(&w, s->cgroup);
	jw_obj_end(&w);
	jw_obj_end(&w);
	if (jw_finish(&w) < 0)
		return;
	char dir[PATH_MAX], p[PATH_MAX + 300];
	snprintf(dir, sizeof(dir), "%s/reports", root);
	mkdir(dir, 0700);
	const char *paths[2] = {p, s->report[0] ? s->report : NULL};
	snprintf(p, sizeof(p), "%s/%s.json", dir, s->id);
	for (int i = 0; i < 2; i++) {
		if (!paths[i])
			continue;
		char tmp[PATH_MAX + 400];
		snprintf(tmp, sizeof(tmp), "%s.tmp", paths[i]);
		int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			continue;
		bool ok = write(fd, w.out.p, w.out.len) == (ssize_t)w.out.len;
		close(fd);
		if (!ok || rename(tmp, paths[i]) < 0)
			unlink(tmp);
	}
	buf_free(&w.out);
	/* retention: the 64 newest reports */
	DIR *d = opendir(dir);
	if (!d)
		return;
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

struct sup {
	const struct oci_create_opts *o;
	struct oci_config *c;
	int dirfd, slot, ready;
	char cgpath[1024];
};

static void sup_fail(struct sup *x, pid_t pid, const cordon_error *err)
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

static void supervisor(struct sup *x, pid_t xpid)
{
	const struct oci_config *c = x->c;
	cordon_error err = {0};
	while (getppid() == xpid)
		usleep(200);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	/* the namespaces joined by path (not user or mount: check_config) */
	int flags = CLONE_NEWUSER;
	for (int k = 0; k < OCI_NS_N; k++) {
		if (k == OCI_NS_USER)
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
	flags |= CLONE_NEWNS; /* always: the container's root is its own mount tree */
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		cordon_err_errno(&err, "socketpair");
		sup_fail(x, 0, &err);
	}
	pid_t pid = (pid_t)syscall(SYS_clone, (unsigned long)(flags | CLONE_PARENT | SIGCHLD), NULL, NULL, NULL, NULL);
	if (pid < 0) {
		cordon_err_errno(&err, "clone");
		sup_fail(x, 0, &err);
	}
	if (pid == 0) {
		close(sv[0]);
		close(x->ready);
		close(x->dirfd);
		oci_init_main(c, sv[1]);
	}
	close(sv[1]);
	int s = sv[0];
	char text[OCI_MSG_MAX];
	int fd;
	if (write_maps(pid, c, x->slot, &err) < 0 || oci_cgroup_create(c, x->cgpath, pid, &err) < 0)
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
	if (oci_send(s, OCI_MSG_GO1, "", -1) < 0 || send_trees(s, c, pid, &err) < 0)
		sup_fail(x, pid, &err);
	for (;;) {
		int t = oci_recv(s, text, &fd);
		if (t == OCI_MSG_READY)
			break;
		if (t == OCI_MSG_PTY && x->o->console_socket) {
			if (send_console(x->o->console_socket, fd, &err) < 0)
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
	state_json_of(&st, OCI_CREATING, sj, sizeof(sj));
	if (oci_hooks_run(c, OCI_H_PRESTART, sj, &err) < 0 || oci_hooks_run(c, OCI_H_CREATE_RUNTIME, sj, &err) < 0 ||
	    oci_hooks_run(c, OCI_H_CREATE_CONTAINER, sj, &err) < 0)
		sup_fail(x, pid, &err);
	int ls = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un a;
	sock_path(x->dirfd, &a);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(ls, 8) < 0) {
		cordon_err_errno(&err, "the supervisor's socket");
		sup_fail(x, pid, &err);
	}
	if (oci_state_write(x->dirfd, &st, &err) < 0 ||
	    (x->o->pid_file && write_pid_file(x->o->pid_file, pid, &err) < 0))
		sup_fail(x, pid, &err);
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
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
	for (;;) {
		struct pollfd p[2] = {{pfd, POLLIN, 0}, {ls, POLLIN, 0}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
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
		if (t == OCI_MSG_GO2 && !st.started) {
			state_json_of(&st, OCI_RUNNING, sj, sizeof(sj));
			char reply[OCI_MSG_MAX] = "";
			if (oci_send(s, OCI_MSG_GO2, sj, -1) < 0)
				snprintf(reply, sizeof(reply), "the container's init is gone");
			else {
				int r = oci_recv(s, text, &cfd);
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
	write_report(x->o->root, &st, c, &t0, st.started ? "exited" : "never-started", -1);
	unlinkat(x->dirfd, "sup.sock", 0);
	_exit(0);
}

int oci_create(const struct oci_create_opts *o, pid_t *pidp, cordon_error *err)
{
	struct oci_config c;
	char bundle[PATH_MAX];
	if (!realpath(o->bundle ? o->bundle : ".", bundle))
		return cordon_err_errno(err, "--bundle %s", o->bundle ? o->bundle : ".");
	if (oci_config_load(bundle, &c, err) < 0 || check_config(&c, err) < 0) {
		oci_config_free(&c);
		return -1;
	}
	struct sup x = {.o = o, .c = &c, .slot = -1};
	if (oci_cgroup_path(&c, o->id, o->systemd_cgroup, x.cgpath, sizeof(x.cgpath), err) < 0) {
		oci_config_free(&c);
		return -1;
	}
	if (oci_state_mkdir(o->root, o->id, &x.dirfd, err) < 0) {
		oci_config_free(&c);
		return -1;
	}
	int ready[2] = {-1, -1};
	if (oci_slot_take(o->root, &x.slot, err) < 0 || pipe2(ready, O_CLOEXEC) < 0) {
		if (x.slot < 0 || ready[0] < 0)
			cordon_err_errno(err, "pipe");
		goto fail;
	}
	x.ready = ready[1];
	pid_t xp = fork();
	if (xp < 0) {
		cordon_err_errno(err, "fork");
		goto fail;
	}
	if (xp == 0) {
		close(ready[0]);
		setsid();
		pid_t self = getpid();
		pid_t sp = fork();
		if (sp == 0)
			supervisor(&x, self);
		_exit(sp < 0 ? 1 : 0);
	}
	close(ready[1]);
	waitpid(xp, NULL, 0);
	char m[OCI_MSG_MAX];
	ssize_t n;
	do
		n = read(ready[0], m, sizeof(m) - 1);
	while (n < 0 && errno == EINTR);
	close(ready[0]);
	if (n > 0 && m[0] == 'O') {
		struct oci_state st;
		if (oci_state_read(x.dirfd, &st, err) < 0)
			goto fail;
		*pidp = st.pid;
		oci_state_free(&st);
		close(x.dirfd);
		oci_config_free(&c);
		return 0;
	}
	m[n > 0 ? n : 0] = '\0';
	cordon_err(err, 0, "%s", n > 1 ? m + 1 : "the supervisor exited while creating the container");
fail:
	close(x.dirfd);
	if (x.slot >= 0)
		oci_slot_release(o->root, x.slot);
	cordon_error e2;
	oci_state_remove(o->root, o->id, &e2);
	oci_config_free(&c);
	return -1;
}

/* --- the other verbs --- */

static int open_read(const char *root, const char *id, bool lock, int *dfd, struct oci_state *s, cordon_error *err)
{
	if (oci_state_open(root, id, dfd, err) < 0)
		return -1;
	if ((lock && oci_state_lock(*dfd, err) < 0) || oci_state_read(*dfd, s, err) < 0) {
		if (!lock || errno == ENOENT)
			cordon_err(err, 0, "container \"%s\" is being created", id);
		close(*dfd);
		return -1;
	}
	return 0;
}

int oci_start(const char *root, const char *id, cordon_error *err)
{
	int dfd;
	struct oci_state s;
	if (open_read(root, id, true, &dfd, &s, err) < 0)
		return -1;
	enum oci_status st = oci_state_status(dfd, &s);
	int r = 0;
	if (st != OCI_CREATED) {
		r = cordon_err(err, 0, "cannot start container \"%s\": it is %s, not created", id, oci_status_names[st]);
		goto out;
	}
	int cs = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un a;
	sock_path(dfd, &a);
	if (cs < 0 || connect(cs, (struct sockaddr *)&a, sizeof(a)) < 0) {
		r = cordon_err_errno(err, "cannot reach container \"%s\"'s supervisor", id);
		if (cs >= 0)
			close(cs);
		goto out;
	}
	flock(dfd, LOCK_UN); /* the supervisor writes the state */
	char text[OCI_MSG_MAX];
	int fd;
	int t = oci_send(cs, OCI_MSG_GO2, "", -1) < 0 ? -1 : oci_recv(cs, text, &fd);
	close(cs);
	if (t != OCI_MSG_READY) {
		r = cordon_err(err, 0, "starting container \"%s\": %s", id,
			       t == OCI_MSG_ERROR ? text : "the supervisor did not answer");
		goto out;
	}
	struct oci_config c;
	cordon_error e2;
	if (oci_config_load(s.bundle, &c, &e2) == 0) {
		char sj[OCI_MSG_MAX];
		s.started = true;
		state_json_of(&s, OCI_RUNNING, sj, sizeof(sj));
		oci_hooks_run(&c, OCI_H_POSTSTART, sj, &e2); /* a poststart failure is logged, not fatal */
		oci_config_free(&c);
	}
out:
	oci_state_free(&s);
	close(dfd);
	return r;
}

static int signal_all(const struct oci_state *s, int sig)
{
	pid_t *p = NULL;
	size_t n = 0;
	if (s->cgroup[0] && oci_cgroup_pids(s->cgroup, &p, &n) == 0)
		for (size_t i = 0; i < n; i++)
			kill(p[i], sig);
	free(p);
	return 0;
}

int oci_kill(const char *root, const char *id, int sig, bool all, cordon_error *err)
{
	int dfd;
	struct oci_state s;
	if (open_read(root, id, false, &dfd, &s, err) < 0)
		return -1;
	int r = 0;
	enum oci_status st = oci_state_status(dfd, &s);
	int pfd = oci_pidfd_same(s.pid, s.start_time);
	if (st == OCI_STOPPED || pfd < 0)
		r = cordon_err(err, 0, "container \"%s\" is not running", id);
	else {
		if (syscall(SYS_pidfd_send_signal, pfd, sig, NULL, 0) < 0)
			r = cordon_err_errno(err, "kill %s", id);
		if (all)
			signal_all(&s, sig);
		if (sig == SIGKILL || sig == SIGTERM)
			if (st == OCI_PAUSED)
				oci_cgroup_freeze(s.cgroup, false, NULL);
	}
	if (pfd >= 0)
		close(pfd);
	oci_state_free(&s);
	close(dfd);
	return r;
}

static void wait_gone(pid_t pid, uint64_t start, int ms)
{
	int pfd = oci_pidfd_same(pid, start);
	if (pfd < 0)
		return;
	struct pollfd p = {pfd, POLLIN, 0};
	poll(&p, 1, ms);
	close(pfd);
}

int oci_delete(const char *root, const char *id, bool force, cordon_error *err)
{
	int dfd;
	if (oci_state_open(root, id, &dfd, err) < 0)
		return -1;
	if (oci_state_lock(dfd, err) < 0) {
		close(dfd);
		return -1;
	}
	struct oci_state s;
	if (oci_state_read(dfd, &s, err) < 0) {
		/* no state.json: a create that died half-way; its supervisor cleans up */
		close(dfd);
		if (!force)
			return cordon_err(err, 0, "container \"%s\" is being created (use --force)", id);
		return oci_state_remove(root, id, err);
	}
	enum oci_status st = oci_state_status(dfd, &s);
	if (st != OCI_STOPPED && !force) {
		oci_state_free(&s);
		close(dfd);
		return cordon_err(err, 0, "cannot delete container \"%s\": it is %s, not stopped (use --force)", id,
				  oci_status_names[st]);
	}
	if (st != OCI_STOPPED) {
		if (st == OCI_PAUSED)
			oci_cgroup_freeze(s.cgroup, false, NULL);
		int pfd = oci_pidfd_same(s.pid, s.start_time);
		if (pfd >= 0) {
			syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
			close(pfd);
		}
		signal_all(&s, SIGKILL);
		wait_gone(s.pid, s.start_time, 10000);
	}
	/* the rest of the cgroup, then the supervisor (it writes the report) */
	for (int i = 0; i < 100; i++) {
		pid_t *p = NULL;
		size_t n = 0;
		if (oci_cgroup_pids(s.cgroup, &p, &n) < 0 || n == 0) {
			free(p);
			break;
		}
		for (size_t k = 0; k < n; k++)
			kill(p[k], SIGKILL);
		free(p);
		usleep(10000);
	}
	wait_gone(s.sup, s.sup_start, 5000);
	int spfd = oci_pidfd_same(s.sup, s.sup_start);
	if (spfd >= 0) {
		syscall(SYS_pidfd_send_signal, spfd, SIGKILL, NULL, 0);
		close(spfd);
	}
	int r = oci_cgroup_remove(s.cgroup, err);
	struct oci_config c;
	cordon_error e2;
	if (oci_config_load(s.bundle, &c, &e2) == 0) {
		char sj[OCI_MSG_MAX];
		state_json_of(&s, OCI_STOPPED, sj, sizeof(sj));
		oci_hooks_run(&c, OCI_H_POSTSTOP, sj, &e2); /* logged, not fatal (the spec) */
		oci_config_free(&c);
	}
	oci_slot_release(root, s.slot);
	oci_state_free(&s);
	close(dfd);
	if (oci_state_remove(root, id, r < 0 ? &e2 : err) < 0 && r == 0)
		r = -1;
	return r;
}

int oci_pause(const char *root, const char *id, bool pause, cordon_error *err)
{
	int dfd;
	struct oci_state s;
	if (open_read(root, id, true, &dfd, &s, err) < 0)
		return -1;
	enum oci_status st = oci_state_status(dfd, &s);
	int r;
	if (pause && st != OCI_RUNNING && st != OCI_CREATED)
		r = cordon_err(err, 0, "cannot pause container \"%s\": it is %s", id, oci_status_names[st]);
	else if (!pause && st != OCI_PAUSED)
		r = cordon_err(err, 0, "cannot resume container \"%s\": it is %s, not paused", id, oci_status_names[st]);
	else
		r = oci_cgroup_freeze(s.cgroup, pause, err);
	oci_state_free(&s);
	close(dfd);
	return r;
}

int oci_update(const char *root, const char *id, const char *file, cordon_error *err)
{
	int dfd;
	struct oci_state s;
	if (open_read(root, id, true, &dfd, &s, err) < 0)
		return -1;
	buf b = {0};
	int fd = strcmp(file, "-") == 0 ? 0 : open(file, O_RDONLY | O_CLOEXEC);
	int r = 0;
	if (fd < 0)
		r = cordon_err_errno(err, "--resources %s", file);
	else {
		char chunk[8192];
		ssize_t n;
		while ((n = read(fd, chunk, sizeof(chunk))) > 0 && b.len < (1u << 20))
			buf_append(&b, chunk, (size_t)n);
		if (fd)
			close(fd);
		struct oci_config c = {0};
		if (oci_resources_parse(strcmp(file, "-") == 0 ? "<stdin>" : file, b.p ? b.p : "", b.len, &c, err) < 0 ||
		    oci_cgroup_update(&c, s.cgroup, err) < 0)
			r = -1;
		oci_config_free(&c);
	}
	buf_free(&b);
	oci_state_free(&s);
	close(dfd);
	return r;
}

int oci_ps(const char *root, const char *id, pid_t **pids, size_t *n, cordon_error *err)
{
	int dfd;
	struct oci_state s;
	if (open_read(root, id, false, &dfd, &s, err) < 0)
		return -1;
	int r = 0;
	if (oci_cgroup_pids(s.cgroup, pids, n) < 0)
		r = cordon_err(err, 0, "container \"%s\" has no cgroup to list", id);
	oci_state_free(&s);
	close(dfd);
	return r;
}

int oci_exec(const char *root, const char *id, const struct oci_exec_opts *o, int *status, cordon_error *err)
{
	int dfd;
	struct oci_state s;
	if (open_read(root, id, false, &dfd, &s, err) < 0)
		return -1;
	struct oci_config c = {0}, base;
	int r = 0;
	enum oci_status st = oci_state_status(dfd, &s);
	if (st != OCI_RUNNING && st != OCI_CREATED) {
		r = cordon_err(err, 0, "cannot exec in container \"%s\": it is %s", id, oci_status_names[st]);
		goto out0;
	}
	if (oci_config_load(s.bundle, &base, err) < 0) {
		r = -1;
		goto out0;
	}
	if (o->process_file) {
		buf b = {0};
		int fd = open(o->process_file, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			r = cordon_err_errno(err, "--process %s", o->process_file);
			goto out;
		}
		char chunk[8192];
		ssize_t n;
		while ((n = read(fd, chunk, sizeof(chunk))) > 0 && b.len < (4u << 20))
			buf_append(&b, chunk, (size_t)n);
		close(fd);
		r = oci_process_parse(o->process_file, b.p ? b.p : "", b.len, &c, err);
		buf_free(&b);
		if (r < 0)
			goto out;
	} else {
		for (size_t i = 0; i < o->args.n; i++)
			strv_push(&c.args, o->args.v[i]);
		for (size_t i = 0; i < base.env.n; i++)
			strv_push(&c.env, base.env.v[i]);
		c.cwd = strdup(o->cwd ? o->cwd : base.cwd ? base.cwd : "/");
		c.uid = base.uid;
		c.gid = base.gid;
		c.has_caps = base.has_caps;
		memcpy(c.caps, base.caps, sizeof(c.caps));
		c.nnp = base.nnp;
		if (o->user && sscanf(o->user, "%u:%u", &c.uid, &c.gid) < 1) {
			r = cordon_err(err, 0, "--user %s: not UID[:GID]", o->user);
			goto out;
		}
	}
	for (size_t i = 0; i < o->env.n; i++)
		strv_push(&c.env, o->env.v[i]);
	c.seccomp = base.seccomp;
	/* the container's namespaces, user first */
	int nsfd[OCI_NS_N];
	static const int order[] = {OCI_NS_USER, OCI_NS_MNT, OCI_NS_PID, OCI_NS_NET, OCI_NS_IPC, OCI_NS_UTS, OCI_NS_CGROUP};
	for (int i = 0; i < OCI_NS_N; i++)
		nsfd[i] = -1;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		char p[64], mine[64];
		snprintf(p, sizeof(p), "/proc/%d/ns/%s", (int)s.pid, oci_ns_proc[order[i]]);
		snprintf(mine, sizeof(mine), "/proc/self/ns/%s", oci_ns_proc[order[i]]);
		if (!same_ns(p, mine))
			nsfd[order[i]] = open(p, O_RDONLY | O_CLOEXEC);
	}
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		r = cordon_err_errno(err, "socketpair");
		goto out;
	}
	pid_t child = fork();
	if (child == 0) {
		close(sp[0]);
		cordon_error e = {0};
		char rootp[64];
		snprintf(rootp, sizeof(rootp), "/proc/%d/root", (int)s.pid);
		int rootfd = open(rootp, O_PATH | O_CLOEXEC);
		/* cgroup first, as the host sees it */
		char pv[32];
		snprintf(pv, sizeof(pv), "%d", (int)getpid());
		oci_cgroup_create(&c, s.cgroup, getpid(), NULL);
		for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
			if (nsfd[order[i]] >= 0 && setns(nsfd[order[i]], oci_ns_flags[order[i]]) < 0) {
				cordon_err_errno(&e, "joining the container's %s namespace", oci_ns_names[order[i]]);
				goto cfail;
			}
		if (rootfd >= 0 && (fchdir(rootfd) < 0 || chroot(".") < 0)) {
			cordon_err_errno(&e, "entering the container's root");
			goto cfail;
		}
		/* a pid namespace takes effect for children: fork once more */
		pid_t g = fork();
		if (g > 0) {
			char v[32];
			snprintf(v, sizeof(v), "%d", (int)g);
			oci_send(sp[1], OCI_MSG_READY, v, -1);
			int wst = 0;
			waitpid(g, &wst, 0);
			_exit(WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst));
		}
		if (g < 0) {
			cordon_err_errno(&e, "fork");
			goto cfail;
		}
		if (nsfd[OCI_NS_USER] >= 0 && (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)) {
			cordon_err_errno(&e, "becoming root of the container's user namespace");
			goto cfail;
		}
		char exe[PATH_MAX];
		if (oci_find_exec(&c, exe, sizeof(exe), &e) < 0 || (!c.nnp && oci_seccomp_load(&c, &e) < 0) ||
		    oci_apply_process(&c, &e) < 0 || (c.nnp && oci_seccomp_load(&c, &e) < 0))
			goto cfail;
		execve(exe, c.args.v, c.env.v);
		cordon_err_errno(&e, "exec %s", exe);
	cfail:
		oci_send(sp[1], OCI_MSG_ERROR, e.msg, -1);
		_exit(255);
	}
	close(sp[1]);
	for (int i = 0; i < OCI_NS_N; i++)
		if (nsfd[i] >= 0)
			close(nsfd[i]);
	char text[OCI_MSG_MAX];
	int fd;
	int t = oci_recv(sp[0], text, &fd);
	if (t == OCI_MSG_READY) {
		if (o->pid_file)
			write_pid_file(o->pid_file, (pid_t)atoi(text), err);
		t = oci_recv(sp[0], text, &fd);
	}
	close(sp[0]);
	if (t == OCI_MSG_ERROR) {
		r = cordon_err(err, 0, "exec in \"%s\": %s", id, text);
		waitpid(child, NULL, 0);
		goto out;
	}
	if (!o->detach) {
		int wst = 0;
		waitpid(child, &wst, 0);
		*status = wst;
	}
out:
	c.seccomp = (struct oci_seccomp){0};
	oci_config_free(&c);
	oci_config_free(&base);
out0:
	oci_state_free(&s);
	close(dfd);
	return r;
}

int oci_wait(const char *root, const char *id, int *status, cordon_error *err)
{
	int dfd;
	struct oci_state s;
	if (open_read(root, id, false, &dfd, &s, err) < 0)
		return -1;
	*status = 0;
	int st = 0;
	if (waitpid(s.pid, &st, 0) == s.pid)
		*status = st;
	else
		wait_gone(s.pid, s.start_time, -1);
	oci_state_free(&s);
	close(dfd);
	return 0;
}

int oci_features_json(buf *out)
{
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "ociVersionMin");
	jw_str(&w, "1.0.0");
	jw_key(&w, "ociVersionMax");
	jw_str(&w, OCI_VERSION);
	jw_key(&w, "hooks");
	jw_str_array(&w, oci_hook_names, OCI_H_N);
	static const char *const mo[] = {"async", "atime", "bind", "dev", "diratime", "dirsync", "exec", "mand",
					 "noatime", "nodev", "nodiratime", "noexec", "nomand", "norelatime",
					 "nostrictatime", "nosuid", "private", "rbind", "relatime", "remount", "ro",
					 "rprivate", "rshared", "rslave", "runbindable", "rw", "shared", "slave",
					 "strictatime", "suid", "sync", "unbindable"};
	jw_key(&w, "mountOptions");
	jw_str_array(&w, mo, sizeof(mo) / sizeof(mo[0]));
	jw_key(&w, "linux");
	jw_obj_begin(&w);
	static const char *const ns[] = {"cgroup", "ipc", "mount", "network", "pid", "user", "uts"};
	jw_key(&w, "namespaces");
	jw_str_array(&w, ns, sizeof(ns) / sizeof(ns[0]));
	jw_key(&w, "capabilities");
	jw_arr_begin(&w);
	for (int i = 0; i <= 40; i++) {
		static const char *const names[] = {
			"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
			"CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE",
			"CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
			"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE", "CAP_SYS_PACCT",
			"CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE", "CAP_SYS_TIME",
			"CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL",
			"CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
			"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE"};
		jw_str(&w, names[i]);
	}
	jw_arr_end(&w);
	jw_key(&w, "cgroup");
	jw_obj_begin(&w);
	jw_key(&w, "v1");
	jw_bool(&w, true);
	jw_key(&w, "v2");
	jw_bool(&w, true);
	jw_key(&w, "systemd");
	jw_bool(&w, false);
	jw_key(&w, "systemdUser");
	jw_bool(&w, false);
	jw_obj_end(&w);
	jw_key(&w, "seccomp");
	jw_obj_begin(&w);
	jw_key(&w, "enabled");
	jw_bool(&w, true);
	static const char *const acts[] = {"SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO", "SCMP_ACT_KILL", "SCMP_ACT_KILL_PROCESS",
					   "SCMP_ACT_KILL_THREAD", "SCMP_ACT_LOG", "SCMP_ACT_TRAP", "SCMP_ACT_TRACE"};
	jw_key(&w, "actions");
	jw_str_array(&w, acts, sizeof(acts) / sizeof(acts[0]));
	static const char *const ops[] = {"SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_LE",
					  "SCMP_CMP_LT", "SCMP_CMP_MASKED_EQ", "SCMP_CMP_NE"};
	jw_key(&w, "operators");
	jw_str_array(&w, ops, sizeof(ops) / sizeof(ops[0]));
	static const char *const arch[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
	jw_key(&w, "archs");
	jw_str_array(&w, arch, sizeof(arch) / sizeof(arch[0]));
	jw_obj_end(&w);
	jw_key(&w, "apparmor");
	jw_obj_begin(&w);
	jw_key(&w, "enabled");
	jw_bool(&w, false);
	jw_obj_end(&w);
	jw_key(&w, "selinux");
	jw_obj_begin(&w);
	jw_key(&w, "enabled");
	jw_bool(&w, false);
	jw_obj_end(&w);
	jw_key(&w, "mountExtensions");
	jw_obj_begin(&w);
	jw_key(&w, "idmap");
	jw_obj_begin(&w);
	jw_key(&w, "enabled");
	jw_bool(&w, false);
	jw_obj_end(&w);
	jw_obj_end(&w);
	jw_obj_end(&w);
	jw_key(&w, "annotations");
	jw_obj_begin(&w);
	jw_key(&w, "run.cordon.report");
	jw_str(&w, "a path: the run's cordon.report/1 is written there when the container stops");
	jw_key(&w, "run.cordon.user-namespace");
	jw_str(&w, "always: the container's root is never the host's root");
	jw_obj_end(&w);
	jw_obj_end(&w);
	if (jw_finish(&w) < 0)
		return -1;
	*out = w.out;
	return 0;
}
