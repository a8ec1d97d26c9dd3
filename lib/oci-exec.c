/* The verbs that reach into a created or running container (docs/oci.md):
 * exec (a process in the container's namespaces, root and cgroup, with its
 * own process spec from --process or the command line, its capabilities and
 * seccomp filter applied as for init), ps (the cgroup's pids) and update
 * (new resources written to the cgroup). */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/nsfs.h>
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
#include "oci-exec.h"
#include "oci-egress.h"
#include "error.h"
#include "oci-config.h"
#include "oci-state.h"
#include "oci-cgroup.h"
#include "oci-seccomp.h"
#include "oci-common.h"
#include "oci-init.h"
#include "oci-landlock.h"

int oci_update(const char *root, const char *id, const char *file, cordon_error *err)
{
	int dfd;
	struct oci_state s;
	if (oci_open_read(root, id, true, &dfd, &s, err) < 0)
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
	if (oci_open_read(root, id, false, &dfd, &s, err) < 0)
		return -1;
	int r = 0;
	if (oci_cgroup_pids(s.cgroup, pids, n) < 0)
		r = cordon_err(err, 0, "container \"%s\" has no cgroup to list", id);
	oci_state_free(&s);
	close(dfd);
	return r;
}

/* exec's terminal (--tty, process.terminal): a pty of the container's
 * devpts, opened by the process itself in the container's root; the master
 * goes to exec's caller side over the sync socket (which hands it to
 * --console-socket, a path in the host's root), the peer becomes the
 * process's controlling terminal and stdio. */
static int exec_pty(const struct oci_config *c, int sock, cordon_error *err)
{
	int m = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0)
		return cordon_err_errno(err, "terminal: the container's /dev/pts/ptmx");
	int unlock = 0;
	if (ioctl(m, TIOCSPTLCK, &unlock) < 0) {
		close(m);
		return cordon_err_errno(err, "terminal");
	}
	if (c->cons_h || c->cons_w) {
		struct winsize ws = {.ws_row = (unsigned short)c->cons_h, .ws_col = (unsigned short)c->cons_w};
		ioctl(m, TIOCSWINSZ, &ws);
	}
	int peer = (int)ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY);
	int r = peer < 0 ? cordon_err_errno(err, "terminal: opening the pty's peer") : 0;
	if (r == 0 && oci_send(sock, OCI_MSG_PTY, "", m) < 0)
		r = cordon_err_errno(err, "terminal: sending the pty");
	close(m);
	if (r == 0 && (setsid() < 0 || ioctl(peer, TIOCSCTTY, 0) < 0))
		r = cordon_err_errno(err, "terminal: TIOCSCTTY");
	for (int i = 0; r == 0 && i < 3; i++)
		if (dup2(peer, i) < 0)
			r = cordon_err_errno(err, "terminal: stdio");
	if (peer > 2)
		close(peer);
	return r;
}

/* In the process, last: cordon's deny list with its listener (and the
 * config's profile), the listener sent up to exec (sock) for the
 * supervisor, which answers and reports its denials as init's. Without a
 * supervisor to read it the denied calls fail with ENOSYS (the kernel's
 * answer when no listener is left): refused all the same. */
static int exec_seccomp(const struct oci_config *c, int sock, cordon_error *err)
{
	int l = -1;
	if (oci_seccomp_load_notify(c, &l, err) < 0)
		return -1;
	if (l < 0)
		return 0; /* the config's profile has the listener */
	int r = oci_send(sock, OCI_MSG_LISTENER, "", l);
	close(l);
	return r < 0 ? cordon_err_errno(err, "seccomp: sending the listener") : 0;
}

/* The process's listener, to the container's supervisor (ROOT/ID/sup.sock):
 * it answers and counts the denials for the report. Closed either way. */
static void relay_listener(int dfd, int fd)
{
	if (fd < 0)
		return;
	struct sockaddr_un a;
	oci_sup_sock_path(dfd, &a);
	int cs = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (cs >= 0 && connect(cs, (struct sockaddr *)&a, sizeof(a)) == 0)
		oci_send(cs, OCI_MSG_LISTENER, "", fd);
	if (cs >= 0)
		close(cs);
	close(fd);
}

/* Is the namespace nsfd owned by the user namespace userfd (-1: ours, no
 * user namespace to enter: every namespace counts as owned)? */
static bool owned_by(int nsfd, int userfd)
{
	if (userfd < 0)
		return true;
	int own = ioctl(nsfd, NS_GET_USERNS);
	if (own < 0)
		return true; /* the order as before: user first */
	struct stat a, b;
	bool same = fstat(own, &a) == 0 && fstat(userfd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	close(own);
	return same;
}

int oci_exec(const char *root, const char *id, const struct oci_exec_opts *o, int *status, cordon_error *err)
{
	int dfd;
	struct oci_state s;
	if (oci_open_read(root, id, false, &dfd, &s, err) < 0)
		return -1;
	struct oci_config c = {0}, base;
	int r = 0;
	enum oci_status st = oci_state_status(dfd, &s);
	if (st != OCI_RUNNING && st != OCI_CREATED) {
		r = cordon_err(err, 0, "cannot exec in container \"%s\": it is %s", id, oci_status_names[st]);
		goto out0;
	}
	if (oci_config_load_kept(dfd, s.bundle, &base, err) < 0) { /* create's copy, not the bundle's */
		r = -1;
		goto out0;
	}
	/* run.cordon.policy: its network.loopback_ports hold the process too
	 * (oci_landlock_prepare) */
	if (oci_egress_load(&base, err) < 0) {
		r = -1;
		goto out;
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
		if (!oci_same_ns(p, mine))
			nsfd[order[i]] = open(p, O_RDONLY | O_CLOEXEC);
	}
	if (o->tty)
		c.terminal = true;
	if (c.terminal && !o->console_socket) {
		r = cordon_err(err, 0, "exec with a terminal needs --console-socket");
		goto out;
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
		if (oci_cgroup_join(s.cgroup, getpid(), &e) < 0) {
			cordon_err_wrap(&e, "joining the container's cgroup");
			goto cfail;
		}
		/* a namespace the container's user namespace does not own (a pod's
		 * network namespace, the engine's, joined by path at create) is
		 * joined first, while this process is still the host's */
		for (size_t i = 1; i < sizeof(order) / sizeof(order[0]); i++)
			if (nsfd[order[i]] >= 0 && !owned_by(nsfd[order[i]], nsfd[OCI_NS_USER])) {
				if (setns(nsfd[order[i]], oci_ns_flags[order[i]]) < 0) {
					cordon_err_errno(&e, "joining the container's %s namespace",
							 oci_ns_names[order[i]]);
					goto cfail;
				}
				close(nsfd[order[i]]);
				nsfd[order[i]] = -1;
			}
		for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
			if (nsfd[order[i]] >= 0 && setns(nsfd[order[i]], oci_ns_flags[order[i]]) < 0) {
				cordon_err_errno(&e, "joining the container's %s namespace", oci_ns_names[order[i]]);
				goto cfail;
			}
		if (rootfd >= 0 && (fchdir(rootfd) < 0 || chroot(".") < 0)) {
			cordon_err_errno(&e, "entering the container's root");
			goto cfail;
		}
		/* a pid namespace takes effect for children: clone once more, with
		 * CLONE_PARENT, so that the process is exec's own child, as runc's
		 * and crun's are: after `exec --detach` returns, the caller's
		 * subreaper (conmon, containerd's shim) is its parent, reaps it and
		 * has its exit status (of a grandchild it would see only ours) */
		pid_t g = (pid_t)syscall(SYS_clone, (unsigned long)(CLONE_PARENT | SIGCHLD), NULL, NULL, NULL, NULL);
		if (g > 0) {
			char v[32];
			snprintf(v, sizeof(v), "%d", (int)g);
			_exit(oci_send(sp[1], OCI_MSG_READY, v, -1) < 0 ? 1 : 0);
		}
		if (g < 0) {
			cordon_err_errno(&e, "clone");
			goto cfail;
		}
		if (nsfd[OCI_NS_USER] >= 0 && (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)) {
			cordon_err_errno(&e, "becoming root of the container's user namespace");
			goto cfail;
		}
		if (c.terminal && exec_pty(&c, sp[1], &e) < 0)
			goto cfail;
		/* the container's Landlock rules (a domain of its own), while the
		 * process has CAP_SYS_ADMIN in the container's user namespace */
		struct landlock_plan ll;
		if (oci_landlock_prepare(&base, &ll, &e) < 0 || oci_landlock_apply(&ll, &e) < 0)
			goto cfail;
		char exe[PATH_MAX];
		/* the deny list notifies binds and connects with loopback_ports
		 * (oci-seccomp.c), as init's: the container's policy (this
		 * child's copy, never freed: it executes or exits) */
		c.egress = base.egress;
		if (oci_find_exec(&c, exe, sizeof(exe), &e) < 0 || (!c.nnp && exec_seccomp(&c, sp[1], &e) < 0) ||
		    oci_apply_process(&c, &e) < 0 || (c.nnp && exec_seccomp(&c, sp[1], &e) < 0))
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
	/* READY (the process's pid, from the child) and PTY (the terminal's
	 * master, from the process) come in either order; then ERROR, or EOF
	 * once both have gone (the process's end is close-on-exec) */
	pid_t proc = -1; /* the process: our child (CLONE_PARENT above) */
	cordon_error pe = {0};
	int t;
	while ((t = oci_recv(sp[0], text, &fd)) == OCI_MSG_READY || t == OCI_MSG_PTY || t == OCI_MSG_LISTENER) {
		if (t == OCI_MSG_LISTENER) {
			relay_listener(dfd, fd);
			continue;
		}
		if (t == OCI_MSG_READY) {
			proc = (pid_t)atoi(text);
			if (o->pid_file)
				oci_write_pid_file(o->pid_file, proc, err);
		} else {
			if (!pe.msg[0])
				oci_send_console(o->console_socket, fd, &pe);
			close(fd);
		}
	}
	close(sp[0]);
	waitpid(child, NULL, 0);
	if (t != OCI_MSG_ERROR && pe.msg[0]) { /* the engine did not get the terminal */
		t = OCI_MSG_ERROR;
		snprintf(text, sizeof(text), "%s", pe.msg);
		if (proc > 0)
			kill(proc, SIGKILL);
	}
	if (t == OCI_MSG_ERROR) {
		r = cordon_err(err, 0, "exec in \"%s\": %s", id, text);
		if (proc > 0)
			waitpid(proc, NULL, 0);
		goto out;
	}
	if (proc < 0) {
		r = cordon_err(err, 0, "exec in \"%s\": the process was not started", id);
		goto out;
	}
	if (!o->detach) {
		int wst = 0;
		waitpid(proc, &wst, 0);
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
