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
#include "protect.h"
#include <sys/vfs.h>
#include <linux/magic.h>
#include "seccomp-policy.h"
#include "systab.h"
#include "sockdiag.h"

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
	{-1, 1, -1, W_YES, -1, 0, 0}, /* link (the old name too: a second name for a protected file) */
	{2, 3, -1, W_YES, 0, 1, 0}, /* linkat */
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
	/* Direct mode: names protected at any depth (git's) are refused by
	 * name too. Overlay: the apply holds them back instead. */
	if (o->protects && !overlay) {
		if (protect_effective(p, &o->protect_names, NULL, err) < 0 ||
		    protect_add_home(plan, p, &o->protect_names, err) < 0)
			return -1;
		for (size_t i = 0; i < plan->nmounts; i++)
			if (plan->mounts[i].mode == MOUNT_RW && strv_push(&o->rw_roots, plan->mounts[i].path) < 0)
				return cordon_err(err, 12, "out of memory");
	}
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
	strv_free(&o->protect_names);
	strv_free(&o->rw_roots);
	sockdiag_free(o->diag);
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

/* The absolute path as the target sees it; rel gets the path as written
 * (PATH_MAX). */
/* -1: no path (AT_EMPTY_PATH: an fd); -2: a path that could not be read
 * or resolved whole (a cwd deeper than PATH_MAX, say): the caller fails
 * closed where that matters. */
static int target_path(pid_t pid, int dirfd, uint64_t addr, char *out, size_t outsz, char *rel)
{
	rel[0] = '\0';
	if (read_string(pid, addr, rel, PATH_MAX) < 0)
		return -2;
	if (rel[0] == '/')
		return snprintf(out, outsz, "%s", rel) >= (int)outsz ? -2 : 0;
	if (rel[0] == '\0')
		return -1; /* AT_EMPTY_PATH: an fd, not a path */
	char link[64], base[PATH_MAX];
	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	else
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)pid, dirfd);
	ssize_t n = readlink(link, base, sizeof(base) - 1);
	if (n <= 0 || n >= (ssize_t)sizeof(base) - 1)
		return -2;
	base[n] = '\0';
	if (base[0] != '/')
		return -2;
	if (snprintf(out, outsz, "%s/%s", strcmp(base, "/") == 0 ? "" : base, rel) >= (int)outsz)
		return -2;
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

/* The ids of thread tid in its own pid namespace (the run's /proc): its
 * thread group's and its own, from /proc/TID/status (NStgid, NSpid: the
 * last of each). */
static int ns_ids(pid_t tid, long *tg, long *t)
{
	char path[64], st[2048];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	ssize_t n = fd < 0 ? -1 : read(fd, st, sizeof(st) - 1);
	if (n <= 0)
		return -1;
	st[n] = '\0';
	const char *keys[2] = {"\nNStgid:", "\nNSpid:"};
	long *out[2] = {tg, t};
	for (int k = 0; k < 2; k++) {
		const char *l = strstr(st, keys[k]);
		if (!l)
			return -1;
		l += strlen(keys[k]);
		const char *e = strchr(l, '\n');
		const char *last = NULL;
		for (const char *c = l; *c && (!e || c < e); c++)
			if ((*c >= '0' && *c <= '9') && (c == l || c[-1] == ' ' || c[-1] == '\t'))
				last = c;
		if (!last)
			return -1;
		*out[k] = strtol(last, NULL, 10);
	}
	return 0;
}

/* The path of a directory fd the supervisor opened in the run's tree, as
 * the run sees it (/proc/self/fd names it from the run's root). */
static int fd_path(int fd, char *out, size_t outsz)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, out, outsz - 1);
	if (n <= 0 || out[0] != '/')
		return -1;
	out[n] = '\0';
	return 0;
}

static int fd_path_join(int dfd, const char *name, char *out, size_t outsz)
{
	char d[PATH_MAX];
	if (fd_path(dfd, d, sizeof(d)) < 0)
		return -1;
	if (snprintf(out, outsz, "%s/%s", strcmp(d, "/") == 0 ? "" : d, name) >= (int)outsz)
		return -1;
	return 0;
}

/* Put text (a link's target) before the rest still to resolve. */
static int prepend(char *rest, size_t sz, const char *text)
{
	size_t lt = strlen(text), lr = strlen(rest);
	if (lt + 1 + lr + 1 > sz)
		return -1;
	memmove(rest + lt + 1, rest, lr + 1);
	memcpy(rest, text, lt);
	rest[lt] = '/';
	return 0;
}

/* The path a call on `path` (as the run wrote it, relative to dirfd; ".." taken as
 * the kernel takes it, after the links before it) will reach, resolved the
 * way the kernel resolves it for pid, one component at a time from the
 * run's root (/proc/PID/root): each directory opened by the supervisor
 * (O_PATH, no link followed), each link read and followed, at most 40; in
 * the run's /proc, "self" and "thread-self" name pid's own entries, and
 * the magic links (cwd, root, fd/N, ...) are opened, which makes the
 * kernel follow them to the very objects it gives pid. The last
 * component's own link is followed when follow_last. Writes the real path
 * (the directory's path from /proc/self/fd, then the last name) to out and
 * whether it exists to *exists. -1 when it cannot be told (a directory on
 * the way is missing: the call fails there too). */
static int real_target(pid_t pid, int dirfd, const char *path, bool follow_last, char *out, size_t outsz,
		       bool *exists)
{
	char root[64], start[64], rest[PATH_MAX * 2], name[NAME_MAX + 1], t[PATH_MAX];
	struct stat rst, st;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	_cleanup_close_ int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0 || fstat(rfd, &rst) < 0 || snprintf(rest, sizeof(rest), "%s", path) >= (int)sizeof(rest))
		return -1;
	/* A relative path starts at the caller's very directory (its cwd or
	 * dirfd, opened through the magic link), not at its name now. */
	if (dirfd == AT_FDCWD)
		snprintf(start, sizeof(start), "/proc/%d/cwd", (int)pid);
	else
		snprintf(start, sizeof(start), "/proc/%d/fd/%d", (int)pid, dirfd);
	_cleanup_close_ int cur = path[0] == '/' ? fcntl(rfd, F_DUPFD_CLOEXEC, 0)
						  : open(start, O_PATH | O_DIRECTORY | O_CLOEXEC);
	*exists = false;
	for (int links = 0; cur >= 0;) {
		char *c = rest;
		while (*c == '/')
			c++;
		size_t l = strcspn(c, "/");
		if (l == 0) /* the directory itself ("/", "dir/") */
			return *exists = true, fd_path(cur, out, outsz);
		if (l > NAME_MAX)
			return -1;
		memcpy(name, c, l);
		name[l] = '\0';
		c += l;
		while (*c == '/')
			c++;
		bool last = *c == '\0';
		memmove(rest, c, strlen(c) + 1);
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
			struct stat cs;
			if (name[1] && fstat(cur, &cs) == 0 && !(cs.st_dev == rst.st_dev && cs.st_ino == rst.st_ino)) {
				int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
				close(cur);
				cur = up;
				if (cur < 0)
					return -1;
			}
			if (last)
				return *exists = true, fd_path(cur, out, outsz);
			continue;
		}
		if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (last && errno == ENOENT)
				return fd_path_join(cur, name, out, outsz);
			return -1;
		}
		if (S_ISLNK(st.st_mode) && (!last || follow_last)) {
			if (++links > 40)
				return -1;
			struct statfs sf;
			if (fstatfs(cur, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC) {
				long tg, tid;
				if (strcmp(name, "self") == 0 || strcmp(name, "thread-self") == 0) {
					if (ns_ids(pid, &tg, &tid) < 0)
						return -1;
					if (name[0] == 's')
						snprintf(t, sizeof(t), "%ld", tg);
					else
						snprintf(t, sizeof(t), "%ld/task/%ld", tg, tid);
					if (prepend(rest, sizeof(rest), t) < 0)
						return -1;
					continue;
				}
				/* A magic link: the supervisor's open follows it to
				 * the object itself (root may open another's). */
				int to = openat(cur, name, O_PATH | O_CLOEXEC);
				if (to < 0)
					return -1;
				close(cur);
				cur = to;
				if (last)
					return *exists = true, fd_path(cur, out, outsz);
				if (fstat(cur, &st) < 0 || !S_ISDIR(st.st_mode))
					return -1;
				continue;
			}
			ssize_t n = readlinkat(cur, name, t, sizeof(t) - 1);
			if (n <= 0)
				return -1;
			t[n] = '\0';
			if (t[0] == '/') {
				close(cur);
				if ((cur = fcntl(rfd, F_DUPFD_CLOEXEC, 0)) < 0)
					return -1;
			}
			if (prepend(rest, sizeof(rest), t) < 0)
				return -1;
			continue;
		}
		if (last)
			return *exists = true, fd_path_join(cur, name, out, outsz);
		if (!S_ISDIR(st.st_mode))
			return -1;
		int next = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(cur);
		cur = next;
	}
	return -1;
}

/* Is the real path (in the run's view) protected by name inside one of the
 * writable paths (protect_match: the .git names at any depth too)? dir as
 * protect_match's. */
static bool protected_name(const struct observer *o, const char *real, int dir)
{
	for (size_t i = 0; i < o->rw_roots.n; i++) {
		const char *r = o->rw_roots.v[i];
		size_t l = strcmp(r, "/") == 0 ? 0 : strlen(r);
		if (strncmp(real, r, l) != 0 || real[l] != '/' || !real[l + 1])
			continue;
		if (protect_match_in(&o->protect_names, r, real + l + 1, dir, NULL, 0))
			return true;
	}
	return false;
}

/* Record what the boundary denies; *refuse is set for a write to a
 * protected path (protect.h), and for a name above one made anything but
 * a directory (above: a rename, link or symlink could bring a protected
 * file along, and a file .git is git's pointer to a directory of the run's
 * choosing, config included): the observer fails those itself (EACCES), as
 * a protected path absent at the start has no mount to stop it. */
/* A path whose start cordon cannot name (a cwd or dirfd deeper than
 * PATH_MAX): safe only if it is relative, goes down only (no "..", so it
 * stays below that deep directory, never at a writable root's top-level
 * names) and names no protected path as if that directory were a root
 * (git's names hold at any depth; a top-level name there is refused too:
 * failing closed). */
static bool unresolved_is_safe(const struct observer *o, const char *raw, int dir)
{
	char norm[PATH_MAX];
	size_t n = 0;
	if (!raw[0] || raw[0] == '/')
		return false;
	for (const char *p = raw; *p;) {
		size_t l = strcspn(p, "/");
		if (l == 2 && p[0] == '.' && p[1] == '.')
			return false;
		if (l && !(l == 1 && p[0] == '.')) {
			if (n + l + 2 > sizeof(norm))
				return false;
			if (n)
				norm[n++] = '/';
			memcpy(norm + n, p, l);
			n += l;
		}
		p += l;
		while (*p == '/')
			p++;
	}
	norm[n] = '\0';
	return n && !protect_match(&o->protect_names, norm, dir, NULL, 0);
}

static int observe_path(struct observer *o, struct run_report *rep, pid_t pid, int dirfd, uint64_t addr,
			int write_mode, uint64_t flags, bool follow_last, int dir, bool *refuse)
{
	char path[PATH_MAX], resolved[PATH_MAX], raw[PATH_MAX];
	int tp = target_path(pid, dirfd, addr, path, sizeof(path), raw);
	if (tp < 0) {
		/* Where the model protects anything, a call that may create or
		 * write on a path cordon cannot resolve is refused: it could
		 * be a protected one (`../../.envrc` from a cwd deeper than
		 * PATH_MAX). */
		bool may_write = write_mode == W_YES ||
				 (write_mode != W_NO && ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC))));
		if (tp == -2 && o->protects && may_write && !unresolved_is_safe(o, raw, dir)) {
			*refuse = true;
			deny(o, rep, "file", raw[0] ? raw : "(a path cordon could not read)");
			return 1;
		}
		return 0;
	}
	enum view_class cls = view_classify(&o->view, path, resolved, sizeof(resolved));
	bool write = write_mode == W_YES || (write_mode != W_NO && open_writes(flags, resolved));
	/* Where the model protects anything, a call that may write is
	 * classified again at what the kernel will reach: a writable place by
	 * name may reach a protected one through a link (`ln -s .envrc x;
	 * echo >x`), /proc's magic links included (`ln -s /proc/self/cwd/.envrc
	 * x`, /dev/fd/N/..., /proc/N/root/...). */
	char real[PATH_MAX];
	bool there = false;
	if (o->protects && write_mode != W_NO && (write || (flags & O_CREAT)) &&
	    real_target(pid, dirfd, raw, follow_last, real, sizeof(real), &there) == 0) {
		if (write_mode != W_YES)
			write = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC) || ((flags & O_CREAT) && !there);
		if (write && strcmp(real, resolved) != 0)
			cls = view_classify(&o->view, real, resolved, sizeof(resolved));
		if (dir == PROTECT_DIR_NEW && there)
			dir = PROTECT_DIR_KEPT; /* mkdir -p over a .git: EEXIST, nothing made */
	}
	/* O_TMPFILE (issue 28.2): an unnamed file in the directory named,
	 * which becomes a name only by a linkat whose new name is checked
	 * (or refused: AT_EMPTY_PATH where anything is protected). Never a
	 * protected name: not refused; where the kernel refuses it (a
	 * protected directory is a read-only mount), not a denial. */
	bool tmpfile = write_mode == W_OPENFLAGS && (flags & (O_TMPFILE & ~O_DIRECTORY)) != 0;
	if (tmpfile && cls == VIEW_PROTECTED)
		return 0;
	if (write && !tmpfile && ((cls == VIEW_PROTECTED) ||
		      (!dir && cls == VIEW_RW && view_protects_below(&o->view, resolved)) ||
		      (cls == VIEW_RW && protected_name(o, resolved, dir)))) {
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
		      uint16_t *port, bool *loop, struct sockaddr_storage *out)
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
		/* ::ffff:127.x.y.z is a connect to 127.x.y.z (issue 27.8 review). */
		*loop = IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr) ||
			(IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) && s6->sin6_addr.s6_addr[12] == 127);
		snprintf(target, tsz, "[%s]:%u", host, *port);
	}
	if (out)
		*out = ss;
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
	struct sockaddr_storage ss;
	if (!read_inet(o, addr, addrlen, target, sizeof(target), &port, &loop, &ss))
		return 0;
	bool ok = loop && (fd < 0 || (o->proxy && port == PROXY_PORT));
	/* Asked of the kernel, O(1) (issue 27.8); /proc only where it cannot be. */
	if (loop && !ok)
		ok = o->strict_ports ? port_declared(o, port)
				     : sockdiag_listens(o->diag, (struct sockaddr *)&ss, run_listens);
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
		/* A link made of an open file (linkat, AT_EMPTY_PATH: since 6.10
		 * for anyone, of a file they opened) names no path to check:
		 * refused where anything is protected (outside review 11: a
		 * nested .git/config, opened read-only, linked into the
		 * workspace and rewritten). The flags are the call's own,
		 * copied at its entry: no check-then-use. */
		if (strcmp(name, "linkat") == 0 && (a[4] & AT_EMPTY_PATH) && o->protects) {
			deny(o, rep, "syscall", "linkat");
			return respond(o, EPERM) < 0 ? -1 : 1;
		}
		bool moves = strncmp(name, "mkdir", 5) != 0 && strncmp(name, "unlink", 6) != 0 &&
			     strcmp(name, "rmdir") != 0;
		int dir = moves ? 0 : strncmp(name, "mkdir", 5) == 0 ? PROTECT_DIR_NEW : PROTECT_DIR_KEPT;
		bool refuse = false;
		bool follow = (c->w == W_OPENFLAGS && !(flags & (O_NOFOLLOW | O_EXCL))) ||
			      strcmp(name, "creat") == 0 || strcmp(name, "truncate") == 0;
		int n = observe_path(o, rep, pid, dfd, a[c->path], c->w, flags, follow, dir, &refuse);
		if (c->path2 >= 0)
			n += observe_path(o, rep, pid, c->dirfd2 >= 0 ? (int)a[c->dirfd2] : AT_FDCWD,
					  a[c->path2], W_YES, 0, strncmp(name, "link", 4) == 0, dir, &refuse);
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
		if (o->strict_ports && read_inet(o, a[1], a[2], target + 5, sizeof(target) - 5, &port, &loop, NULL) &&
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
	/* Anything else reached us because the filter denied it; a call newer
	 * than cordon's table gets the ENOSYS an older kernel would give. */
	char target[256];
	seccomp_denial_target(d->nr, a, target, sizeof(target));
	deny(o, rep, "syscall", target);
	return respond(o, systab_newer(d->nr) ? ENOSYS : EPERM) < 0 ? -1 : 1;
}
