#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <limits.h>
#include <linux/openat2.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "cleanup.h"
#include "compat.h"
#include "error.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include "proxy.h"
#include "observe.h"
#include "run.h"
#include "landlock.h"
#include "seccomp-policy.h"

/* The path calls the filter traps for the observer (answered CONTINUE):
 * the one list, handed to seccomp_build(). */
const char *const observer_calls[] = {
	"open", "openat", "creat", "execve", "execveat", "unlink", "unlinkat",
	"rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir", "link", "linkat",
	"symlink", "symlinkat", "truncate", "mknod", "mknodat", NULL,
};

/* How each observed call names its paths, in the order of observer_calls. */
enum wmode { W_NO, W_YES, W_OPENFLAGS, W_OPENHOW };
struct path_call {
	int dirfd;      /* argument holding the dirfd, or -1 for the cwd */
	int path;       /* argument holding the path */
	int flags;      /* open flags argument (W_OPENFLAGS / W_OPENHOW) */
	enum wmode w;
	int dirfd2, path2; /* a second, written path (rename, link), or -1 */
	int nr;
};

static struct path_call calls[] = {
	{-1, 0, 1, W_OPENFLAGS, -1, -1, 0}, /* open */
	{0, 1, 2, W_OPENFLAGS, -1, -1, 0}, /* openat */
	{-1, 0, -1, W_YES, -1, -1, 0}, /* creat */
	{-1, 0, -1, W_NO, -1, -1, 0}, /* execve */
	{0, 1, -1, W_NO, -1, -1, 0}, /* execveat */
	{-1, 0, -1, W_YES, -1, -1, 0}, /* unlink */
	{0, 1, -1, W_YES, -1, -1, 0}, /* unlinkat */
	{-1, 0, -1, W_YES, -1, 1, 0}, /* rename */
	{0, 1, -1, W_YES, 2, 3, 0}, /* renameat */
	{0, 1, -1, W_YES, 2, 3, 0}, /* renameat2 */
	{-1, 0, -1, W_YES, -1, -1, 0}, /* mkdir */
	{0, 1, -1, W_YES, -1, -1, 0}, /* mkdirat */
	{-1, 0, -1, W_YES, -1, -1, 0}, /* rmdir */
	{-1, 1, -1, W_YES, -1, -1, 0}, /* link */
	{2, 3, -1, W_YES, -1, -1, 0}, /* linkat */
	{-1, 1, -1, W_YES, -1, -1, 0}, /* symlink */
	{1, 2, -1, W_YES, -1, -1, 0}, /* symlinkat */
	{-1, 0, -1, W_YES, -1, -1, 0}, /* truncate */
	{-1, 0, -1, W_YES, -1, -1, 0}, /* mknod */
	{0, 1, -1, W_YES, -1, -1, 0}, /* mknodat */
};
_Static_assert(ARRAY_SIZE(calls) + 1 == ARRAY_SIZE(observer_calls), "one layout per observed call");

int observer_init(struct observer *o, const struct run_plan *plan, const cordon_policy *p, bool proxy,
		  bool overlay, cordon_error *err)
{
	memset(o, 0, sizeof(*o));
	o->listener = -1;
	struct seccomp_notif_sizes sz;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		return cordon_err_errno(err, "SECCOMP_GET_NOTIF_SIZES");
	o->req_size = sz.seccomp_notif > sizeof(*o->req) ? sz.seccomp_notif : sizeof(*o->req);
	o->resp_size = sz.seccomp_notif_resp > sizeof(*o->resp) ? sz.seccomp_notif_resp : sizeof(*o->resp);
	o->req = calloc(1, o->req_size);
	o->resp = calloc(1, o->resp_size);
	if (!o->req || !o->resp)
		return cordon_err(err, 12, "out of memory");
	for (size_t i = 0; i < ARRAY_SIZE(calls); i++)
		/* A call in syscalls.deny reaches us as a denial, not to be
		 * observed and let through: no number, so it is not matched. */
		calls[i].nr = strv_contains(&p->sys_deny, observer_calls[i]) ? -1
			      : seccomp_syscall_resolve_name(observer_calls[i]);
	o->clone3_nr = seccomp_syscall_resolve_name("clone3");
	o->connect_nr = strv_contains(&p->sys_deny, "connect") ? -1 : seccomp_syscall_resolve_name("connect");
	o->sendto_nr = strv_contains(&p->sys_deny, "sendto") ? -1 : seccomp_syscall_resolve_name("sendto");
	o->bind_nr = strv_contains(&p->sys_deny, "bind") ? -1 : seccomp_syscall_resolve_name("bind");
	o->proxy = proxy;
	memcpy(o->loopback_ports, p->loopback_ports, sizeof(o->loopback_ports));
	o->nloopback_ports = p->nloopback_ports;
	o->strict_ports = p->nloopback_ports && landlock_abi() >= 4;
	o->file_reports = !p->no_file_reports;
	o->protects = model_protects(&plan->model);
	if (view_build(&plan->model, 0, &o->view, err) < 0)
		return -1;
	/* Overlay: a protected path absent at the start is only in the run's
	 * own view if it makes it; the apply holds it back (and the report
	 * names it, changes.protected). Present ones stay read-only mounts. */
	for (size_t i = 0; overlay && i < plan->model.n; i++) {
		const struct model_entry *e = &plan->model.e[i];
		if (e->kind == MK_PROTECT && (e->flags & MODEL_NOT_YET))
			view_drop(&o->view, e->path, VIEW_PROTECTED);
	}
	return 0;
}

static void wake(int sig)
{
	(void)sig; /* only interrupts NOTIF_RECV */
}

static void *observer_main(void *arg)
{
	struct observer *o = arg;
	while (!atomic_load(&o->stop)) {
		int n = observer_handle(o, o->rep);
		if (n < 0 && errno != EINTR)
			break;
		if (o->maybe_gone) {
			/* Without a task left the listener hangs up and no notification
			 * can come again (the filter is only inherited): stop here
			 * instead of spinning on ENOENT until observer_stop. */
			struct pollfd pf = {.fd = o->listener, .events = POLLIN};
			o->maybe_gone = false;
			if (poll(&pf, 1, 0) == 1 && (pf.revents & POLLHUP) && !(pf.revents & POLLIN))
				break;
		}
		if (n > 0) {
			atomic_store(&o->violated, true);
			if (o->pidfd >= 0)
				syscall(SYS_pidfd_send_signal, o->pidfd, SIGKILL, NULL, 0);
		}
	}
	return NULL;
}

int observer_start(struct observer *o, int listener, struct run_report *rep, int pidfd,
		   cordon_error *err)
{
	o->listener = listener;
	o->rep = rep;
	o->pidfd = pidfd;
	/* The caller sleeps until we answer: hand the CPU over directly instead
	 * of through a scheduler wake-up (6.6+; older kernels: plain wake-ups). */
	o->sync_wakeup = ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
			       SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, 0) == 0;
	struct sigaction sa = {.sa_handler = wake}; /* no SA_RESTART: RECV returns EINTR */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, &o->usr1_was) < 0)
		return cordon_err_errno(err, "sigaction(SIGUSR1)");
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 256 * 1024);
	/* Only this thread takes SIGUSR1. */
	sigset_t usr1, old;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, &old);
	int r = pthread_create(&o->thread, &at, observer_main, o);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	if (r != 0) {
		sigaction(SIGUSR1, &o->usr1_was, NULL);
		return cordon_err(err, r, "start the seccomp observer");
	}
	o->started = true;
	return 0;
}

void observer_stop(struct observer *o)
{
	if (!o->started)
		return;
	atomic_store(&o->stop, true);
	/* A signal interrupts a RECV in progress; one sent just before the
	 * thread enters RECV would be lost, hence the retry. */
	for (;;) {
		pthread_kill(o->thread, SIGUSR1);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 5000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (pthread_timedjoin_np(o->thread, NULL, &ts) == 0)
			break;
	}
	/* The thread is gone, and a SIGUSR1 still pending for it with it: the
	 * caller's disposition comes back (include/cordon.h). */
	sigaction(SIGUSR1, &o->usr1_was, NULL);
	o->started = false;
}

void observer_free(struct observer *o)
{
	observer_stop(o);
	if (o->listener >= 0)
		close(o->listener);
	free(o->req);
	free(o->resp);
	view_free(&o->view);
	memset(o, 0, sizeof(*o));
	o->listener = -1;
}

/* The process group, in the run's PID namespace, of pid (ours): where a
 * session's denial is attributed (each exec leads a group of its own).
 * pid is stopped in the notified call, so it exists; 0 when its group's
 * leader is gone or /proc does not tell. */
static int run_pgid(pid_t pid)
{
	char p[64], b[1024];
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, b, sizeof(b) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	b[n] = '\0';
	/* pid (comm) state ppid pgrp ...: comm may hold anything, so from
	 * its last ')'. */
	char *q = strrchr(b, ')');
	int ppid, pgrp;
	if (!q || sscanf(q + 1, " %*c %d %d", &ppid, &pgrp) != 2 || pgrp <= 0)
		return 0;
	snprintf(p, sizeof(p), "/proc/%d/status", pgrp);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, b, sizeof(b) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	b[n] = '\0';
	/* NSpid: one pid per namespace, outermost first: the run's is last. */
	char *ns = strstr(b, "\nNSpid:");
	if (!ns)
		return 0;
	char *end = strchr(ns + 1, '\n');
	if (end)
		*end = '\0';
	char *last = strrchr(ns, '\t');
	int inner = last ? atoi(last + 1) : 0;
	return inner > 0 ? inner : 0;
}

static int deny(struct observer *o, struct run_report *rep, const char *kind, const char *target)
{
	return report_add_denial_by(rep, kind, target, rep->attribute ? run_pgid((pid_t)o->req->pid) : 0);
}

/* Read a NUL-terminated string from the target, page by page. */
static int read_string(pid_t pid, uint64_t addr, char *out, size_t outsz)
{
	size_t got = 0;
	while (got + 1 < outsz) {
		size_t page_left = 4096 - ((addr + got) & 4095);
		size_t want = outsz - 1 - got < page_left ? outsz - 1 - got : page_left;
		struct iovec local = {out + got, want};
		struct iovec remote = {(void *)(uintptr_t)(addr + got), want};
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			return -1;
		void *nul = memchr(out + got, '\0', (size_t)n);
		got += (size_t)n;
		if (nul)
			return 0;
	}
	out[outsz - 1] = '\0';
	return 0;
}

/* The absolute path as the target sees it. */
static int target_path(pid_t pid, int dirfd, uint64_t addr, char *out, size_t outsz)
{
	char rel[PATH_MAX];
	if (read_string(pid, addr, rel, sizeof(rel)) < 0)
		return -1;
	if (rel[0] == '/') {
		snprintf(out, outsz, "%s", rel);
		return 0;
	}
	if (rel[0] == '\0')
		return -1; /* AT_EMPTY_PATH: an fd, not a path */
	char link[64], base[PATH_MAX];
	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	else
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)pid, dirfd);
	ssize_t n = readlink(link, base, sizeof(base) - 1);
	if (n <= 0)
		return -1;
	base[n] = '\0';
	if (base[0] != '/')
		return -1;
	snprintf(out, outsz, "%s/%s", strcmp(base, "/") == 0 ? "" : base, rel);
	return 0;
}

static bool open_writes(uint64_t flags, const char *resolved)
{
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
		return true;
	struct stat st;
	/* O_CREAT of an existing file creates nothing (the view's binds are at
	 * the host's own paths, so the host answers for the view). */
	return (flags & O_CREAT) && lstat(resolved, &st) < 0;
}

/* The path a call on `path` (absolute, in the run's view) will reach, as
 * the kernel resolves it in the run's root: the directories on the way
 * with every link followed (openat2 RESOLVE_IN_ROOT from /proc/PID/root,
 * named back by /proc/self/fd), and the last component's own link too when
 * the call follows it (follow_last: open without O_NOFOLLOW or O_EXCL,
 * creat, truncate). At most 8 links. -1 when it cannot be told (a
 * directory on the way is missing: the call fails there too). */
static int real_target(pid_t pid, const char *path, bool follow_last, char *out, size_t outsz)
{
	char root[64], cur[PATH_MAX], dir[PATH_MAX], t[PATH_MAX];
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	_cleanup_close_ int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0 || path_normalize(path, cur, sizeof(cur)) < 0)
		return -1;
	for (int hops = 0; hops <= 8; hops++) {
		char *slash = strrchr(cur, '/');
		const char *base = slash + 1;
		snprintf(dir, sizeof(dir), "%.*s", slash == cur ? 1 : (int)(slash - cur), cur);
		struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
		_cleanup_close_ int dfd = (int)syscall(SYS_openat2, rfd, dir, &how, sizeof(how));
		if (dfd < 0)
			return -1;
		char link[64], real[PATH_MAX];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", dfd);
		ssize_t n = readlink(link, real, sizeof(real) - 1);
		if (n <= 0 || real[0] != '/')
			return -1;
		real[n] = '\0';
		struct stat st;
		if (!*base || !follow_last || fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode)) {
			snprintf(t, sizeof(t), "%s/%s", strcmp(real, "/") == 0 ? "" : real, base);
			return path_normalize(t, out, outsz);
		}
		n = readlinkat(dfd, base, t, sizeof(t) - 1);
		if (n <= 0)
			return -1;
		t[n] = '\0';
		char joined[PATH_MAX * 2 + 2];
		snprintf(joined, sizeof(joined), "%s/%s", t[0] == '/' ? "" : real, t);
		if (path_normalize(joined, cur, sizeof(cur)) < 0)
			return -1;
	}
	return -1;
}

/* A path through one of /proc's magic links of the run's processes
 * (/proc/self/cwd/.envrc, /proc/1/root/..., /proc/self/fd/3/...): the link
 * read from the supervisor's side (the caller's own entries by its host
 * pid, another process's through the run's /proc), the rest appended.
 * Returns 0 with the path in the run's view in out, -1 if path is not one. */
static int proc_magic(pid_t pid, const char *path, char *out, size_t outsz)
{
	char who[32], link[PATH_MAX], real[PATH_MAX];
	const char *p = path + 6; /* after "/proc/" */
	size_t wl = strcspn(p, "/");
	if (strncmp(path, "/proc/", 6) != 0 || wl == 0 || wl >= sizeof(who) || !p[wl])
		return -1;
	snprintf(who, sizeof(who), "%.*s", (int)wl, p);
	p += wl + 1;
	if (strncmp(p, "task/", 5) == 0) { /* /proc/X/task/T/...: thread T's */
		p += 5;
		p += strcspn(p, "/");
		if (*p++ != '/')
			return -1;
	}
	size_t ml = strncmp(p, "fd/", 3) == 0 ? 3 + strcspn(p + 3, "/") : strcspn(p, "/");
	if (!((ml == 3 && strncmp(p, "cwd", 3) == 0) || (ml == 4 && strncmp(p, "root", 4) == 0) ||
	      (ml > 3 && strncmp(p, "fd/", 3) == 0)))
		return -1;
	if (strcmp(who, "self") == 0 || strcmp(who, "thread-self") == 0)
		snprintf(link, sizeof(link), "/proc/%d/%.*s", (int)pid, (int)ml, p);
	else
		snprintf(link, sizeof(link), "/proc/%d/root/proc/%s/%.*s", (int)pid, who, (int)ml, p);
	ssize_t n = readlink(link, real, sizeof(real) - 1);
	if (n <= 0)
		return -1;
	real[n] = '\0';
	if (real[0] != '/')
		return -1; /* a pipe, a socket: nothing of the view */
	char joined[PATH_MAX * 2 + 2];
	snprintf(joined, sizeof(joined), "%s%s", strcmp(real, "/") == 0 ? "" : real, p + ml);
	return path_normalize(joined[0] ? joined : "/", out, outsz);
}

/* Record what the boundary denies; *refuse is set for a write to a
 * protected path (protect.h), and for a name above one made anything but
 * a directory (above: a rename, link or symlink could bring a protected
 * file along, and a file .git is git's pointer to a directory of the run's
 * choosing, config included): the observer fails those itself (EACCES), as
 * a protected path absent at the start has no mount to stop it. */
static int observe_path(struct observer *o, struct run_report *rep, pid_t pid, int dirfd, uint64_t addr,
			int write_mode, uint64_t flags, bool follow_last, bool moves_in, bool *refuse)
{
	char path[PATH_MAX], resolved[PATH_MAX];
	if (target_path(pid, dirfd, addr, path, sizeof(path)) < 0)
		return 0;
	enum view_class cls = view_classify(&o->view, path, resolved, sizeof(resolved));
	bool write = write_mode == W_YES || (write_mode != W_NO && open_writes(flags, resolved));
	/* A writable place by name may reach a protected one through a link
	 * (`ln -s .envrc x; echo > x`): where the model protects anything,
	 * a write is classified again at what the kernel will reach. */
	char real[PATH_MAX], via[PATH_MAX];
	if (write && cls == VIEW_PROC && o->protects && proc_magic(pid, resolved, via, sizeof(via)) == 0) {
		snprintf(resolved, sizeof(resolved), "%s", via);
		cls = view_classify(&o->view, via, resolved, sizeof(resolved));
	}
	if (write && cls == VIEW_RW && o->protects &&
	    real_target(pid, resolved, follow_last, real, sizeof(real)) == 0 && strcmp(real, resolved) != 0)
		cls = view_classify(&o->view, real, resolved, sizeof(resolved));
	if (write && ((cls == VIEW_PROTECTED) ||
		      (moves_in && cls == VIEW_RW && view_protects_below(&o->view, resolved)))) {
		*refuse = true;
		deny(o, rep, "file", resolved);
		return 1;
	}
	if (!o->file_reports)
		return 0;
	struct stat st;
	bool exists = cls == VIEW_OUTSIDE && lstat(resolved, &st) == 0;
	if (!view_denies(cls, resolved, write, exists))
		return 0;
	deny(o, rep, "file", resolved);
	return 1;
}

/* Answer the pending call: error 0 = let the kernel decide (CONTINUE),
 * else fail it with that errno. */
static int respond(struct observer *o, int error)
{
	memset(o->resp, 0, o->resp_size);
	o->resp->id = o->req->id;
	if (!error)
		o->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	else
		o->resp->error = -error;
	if (ioctl(o->listener, SECCOMP_IOCTL_NOTIF_SEND, o->resp) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

/* The thread group of thread tid, from /proc/TID/status; -1 if unknown. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], st[1024];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, st, sizeof(st) - 1);
	if (n <= 0)
		return -1;
	st[n] = '\0';
	const char *t = strstr(st, "\nTgid:");
	return t ? (pid_t)strtol(t + 7, NULL, 10) : -1;
}

/* The type of socket fd of thread tid (SOCK_STREAM, SOCK_DGRAM, ...), or -1
 * when it cannot be told. */
static int socket_type(pid_t tid, int fd)
{
	int pfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	if (pfd < 0) /* before 6.9: thread-group leaders only */
		pfd = (int)syscall(SYS_pidfd_open, tid, 0);
	if (pfd < 0 && errno == EINVAL) {
		/* A thread other than the leader, before 6.9: its leader's
		 * descriptors, which threads share (for a thread made without
		 * CLONE_FILES this may be another socket: only whether a connect
		 * on the run's own loopback is reported can then be wrong). */
		pid_t tg = tgid_of(tid);
		if (tg > 0 && tg != tid)
			pfd = (int)syscall(SYS_pidfd_open, tg, 0);
	}
	if (pfd < 0)
		return -1;
	int s = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
	close(pfd);
	if (s < 0)
		return -1;
	int type = -1;
	socklen_t l = sizeof(type);
	if (getsockopt(s, SOL_SOCKET, SO_TYPE, &type, &l) < 0)
		type = -1;
	close(s);
	return type;
}

/* Does a TCP socket of the caller's network namespace (the run's own) listen
 * on port? Read from /proc/PID/net/tcp and tcp6, where the kernel lists
 * listening sockets first: the scan stops at the first other state, and
 * reads at most 64 KiB per file whatever the run opened. */
static bool run_listens(pid_t pid, uint16_t port)
{
	static const char *const files[] = {"tcp", "tcp6"};
	for (size_t f = 0; f < ARRAY_SIZE(files); f++) {
		char path[64], text[65536];
		snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid, files[f]);
		_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			continue;
		size_t n = 0;
		for (ssize_t r; n < sizeof(text) - 1 && (r = read(fd, text + n, sizeof(text) - 1 - n)) > 0;)
			n += (size_t)r;
		text[n] = '\0';
		char *line = strchr(text, '\n'); /* past the header */
		while (line && *++line) {
			/* "  N: LOCALHEX:PORT REMOTEHEX:PORT ST ..." */
			char *sp = strchr(line, ':'), *next = strchr(line, '\n');
			unsigned lport = 0, st = 0;
			char *colon = sp ? strchr(sp + 1, ':') : NULL;
			if (!colon || (next && colon > next) ||
			    sscanf(colon + 1, "%4x %*s %2x", &lport, &st) != 2 || st != 0x0A)
				break;
			if (lport == port)
				return true;
			line = next;
		}
	}
	return false;
}

/* Read the socket address of a connect, sendto or bind; false for anything
 * but IPv4/IPv6. */
static bool read_inet(struct observer *o, uint64_t addr, uint64_t addrlen, char *target, size_t tsz,
		      uint16_t *port, bool *loop)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	size_t len = addrlen < sizeof(ss) ? (size_t)addrlen : sizeof(ss);
	struct iovec l = {&ss, len}, r = {(void *)(uintptr_t)addr, len};
	if (len < sizeof(sa_family_t) || process_vm_readv((pid_t)o->req->pid, &l, 1, &r, 1, 0) != (ssize_t)len ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
		return false;
	char host[INET6_ADDRSTRLEN];
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		*port = ntohs(s4->sin_port);
		*loop = (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
		snprintf(target, tsz, "%s:%u", host, *port);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		*port = ntohs(s6->sin6_port);
		*loop = IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
		snprintf(target, tsz, "[%s]:%u", host, *port);
	}
	return true;
}

static bool port_declared(const struct observer *o, uint16_t port)
{
	for (size_t i = 0; i < o->nloopback_ports; i++)
		if (o->loopback_ports[i] == port)
			return true;
	return false;
}

/* Record a direct connect or sendto unless it stays inside the run: the
 * proxy, a listener of the run on its own loopback (TCP; with declared
 * loopback_ports, only those, as Landlock refuses the others), or a
 * datagram on its own loopback. A connect to a loopback port nobody in the
 * run listens on was meant for the host's service there: a denial. fd is
 * connect's socket (-1 for sendto, always a datagram here). Returns 1 if a
 * denial was recorded. */
static int record_direct(struct observer *o, struct run_report *rep, int fd, uint64_t addr, uint64_t addrlen)
{
	char target[INET6_ADDRSTRLEN + 16];
	uint16_t port;
	bool loop;
	if (!read_inet(o, addr, addrlen, target, sizeof(target), &port, &loop))
		return 0;
	bool ok = loop && (fd < 0 || (o->proxy && port == PROXY_PORT));
	if (loop && !ok)
		ok = o->strict_ports ? port_declared(o, port) : run_listens((pid_t)o->req->pid, port);
	/* Datagrams on the run's own loopback stay inside it: not a way out,
	 * also when the socket is connect()ed (Landlock's ports are TCP's). */
	if (loop && !ok)
		ok = socket_type((pid_t)o->req->pid, fd) == SOCK_DGRAM;
	if (ok || port == 0)
		return 0;
	deny(o, rep, "network", target);
	return 1;
}

/* A call that sets S_ISUID or S_ISGID: refused and reported, whatever the
 * file. Returns 1 (a denial) or -1 (error). A S_ISGID chmod of a directory
 * is refused too: the supervisor cannot tell what the kernel will resolve
 * the path (or the fd number) to once the call goes on (CONTINUE re-reads
 * it), and a rename that swaps a file in after any check set the bit on the
 * file (a setgid-root binary). */
static int handle_priv(struct observer *o, struct run_report *rep, mode_t bits, const uint64_t a[6])
{
	const struct seccomp_data *d = &o->req->data;
	(void)bits;
	char target[256];
	seccomp_denial_target(d->nr, a, target, sizeof(target));
	deny(o, rep, "syscall", target);
	return respond(o, EPERM) < 0 ? -1 : 1;
}

int observer_handle(struct observer *o, struct run_report *rep)
{
	memset(o->req, 0, o->req_size);
	if (ioctl(o->listener, SECCOMP_IOCTL_NOTIF_RECV, o->req) < 0) {
		/* ENOENT: the caller died before we got to it, or no task uses
		 * the filter any more (RECV then returns at once, every time). */
		o->maybe_gone = errno == ENOENT;
		return errno == EINTR || errno == ENOENT ? 0 : -1;
	}

	o->notifications++;
	const struct seccomp_data *d = &o->req->data;
	uint64_t a[6];
	for (int i = 0; i < 6; i++)
		a[i] = d->args[i];
	/* Before the path calls: open and mknod are both. The mode is an
	 * integer argument, so what is checked is what the kernel will use. */
	mode_t bits = seccomp_priv_bits(d->nr, a);
	if (bits)
		return handle_priv(o, rep, bits, a);
	for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
		const struct path_call *c = &calls[i];
		if (c->nr != d->nr)
			continue;
		/* Observed: the kernel decides (CONTINUE); we only record. The path
		 * is read before answering, while the caller is still blocked. */
		pid_t pid = (pid_t)o->req->pid;
		int dfd = c->dirfd >= 0 ? (int)a[c->dirfd] : AT_FDCWD;
		uint64_t flags = 0;
		if (c->w == W_OPENFLAGS)
			flags = a[c->flags];
		else if (c->w == W_OPENHOW) {
			struct open_how how = {0};
			struct iovec l = {&how, sizeof(how.flags)}, r = {(void *)(uintptr_t)a[c->flags], sizeof(how.flags)};
			if (process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)sizeof(how.flags))
				flags = how.flags;
		}
		/* Above a protected path only a directory may be made (mkdir),
		 * or an empty one removed (unlink, rmdir). */
		const char *name = observer_calls[i];
		bool moves = strncmp(name, "mkdir", 5) != 0 && strncmp(name, "unlink", 6) != 0 &&
			     strcmp(name, "rmdir") != 0;
		bool refuse = false;
		bool follow = (c->w == W_OPENFLAGS && !(flags & (O_NOFOLLOW | O_EXCL))) ||
			      strcmp(name, "creat") == 0 || strcmp(name, "truncate") == 0;
		int n = observe_path(o, rep, pid, dfd, a[c->path], c->w, flags, follow, moves, &refuse);
		if (c->path2 >= 0)
			n += observe_path(o, rep, pid, c->dirfd2 >= 0 ? (int)a[c->dirfd2] : AT_FDCWD,
					  a[c->path2], W_YES, 0, false, moves, &refuse);
		return respond(o, refuse ? EACCES : 0) < 0 ? -1 : n;
	}
	if (d->nr == o->connect_nr || d->nr == o->sendto_nr) {
		/* A direct connection, or a datagram to an address of the caller's
		 * choosing: recorded, the kernel decides. */
		int n = d->nr == o->connect_nr ? record_direct(o, rep, (int)a[0], a[1], a[2])
					       : record_direct(o, rep, -1, a[4], a[5]);
		return respond(o, 0) < 0 ? -1 : n;
	}
	if (d->nr == o->bind_nr) {
		/* Trapped only when Landlock holds TCP to the declared ports: a
		 * TCP bind elsewhere is refused (EACCES), and recorded here. */
		char target[INET6_ADDRSTRLEN + 24];
		uint16_t port;
		bool loop;
		int n = 0;
		if (o->strict_ports && read_inet(o, a[1], a[2], target + 5, sizeof(target) - 5, &port, &loop) &&
		    !port_declared(o, port) && socket_type((pid_t)o->req->pid, (int)a[0]) == SOCK_STREAM) {
			memcpy(target, "bind ", 5);
			deny(o, rep, "network", target);
			n = 1;
		}
		return respond(o, 0) < 0 ? -1 : n;
	}
	if (d->nr == o->clone3_nr) {
		/* Every clone3 fails with ENOSYS (the filter's decision, so that
		 * libc uses clone); only namespace requests are denials. */
		uint64_t flags = 0;
		struct iovec l = {&flags, sizeof(flags)}, r = {(void *)(uintptr_t)a[0], sizeof(flags)};
		int n = 0;
		if (process_vm_readv((pid_t)o->req->pid, &l, 1, &r, 1, 0) == (ssize_t)sizeof(flags) &&
		    (flags & seccomp_namespace_flags())) {
			char target[256];
			uint64_t fa[6] = {flags, 0, 0, 0, 0, 0};
			seccomp_denial_target(d->nr, fa, target, sizeof(target));
			deny(o, rep, "syscall", target);
			n = 1;
		}
		return respond(o, ENOSYS) < 0 ? -1 : n;
	}
	/* Anything else reached us because the filter denied it. */
	char target[256];
	seccomp_denial_target(d->nr, a, target, sizeof(target));
	deny(o, rep, "syscall", target);
	return respond(o, EPERM) < 0 ? -1 : 1;
}
