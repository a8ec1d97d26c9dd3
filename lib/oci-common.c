/* cordon-oci's shared lower layer (docs/oci.md): the supervisor <-> init
 * message frames (oci_send, oci_recv), the OCI hooks, and the small helpers
 * both the supervisor and the verbs' client side use: the state JSON of a
 * state, the path of ROOT/ID/sup.sock, the pid file, a state directory opened
 * and read, a wait for a process to go, a namespace comparison, the pty
 * handed to an engine's --console-socket. It calls no
 * other lib/oci-*.c file but oci-state.c and oci-config.c, so the supervisor
 * (oci-supervisor.c), create (oci-create.c), the lifecycle verbs
 * (oci-verbs.c) and exec/ps/update (oci-exec.c) all sit above it. */
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
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "oci-common.h"
#include "error.h"
#include "oci-config.h"
#include "oci-state.h"

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

/* One hook: forked, the state on its stdin, waited for (its timeout: killed). */
static int hook_run_one(const struct oci_hook *h, enum oci_hook_kind k, const char *state_json, cordon_error *err)
{
	int in[2];
	if (pipe2(in, O_CLOEXEC) < 0)
		return cordon_err_errno(err, "%s hook %s", oci_hook_names[k], h->path);
	pid_t p = fork();
	if (p < 0) {
		close(in[0]);
		close(in[1]);
		return cordon_err_errno(err, "%s hook %s", oci_hook_names[k], h->path);
	}
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
				return cordon_err(err, 0, "%s hook %s: timed out after %d s", oci_hook_names[k], h->path,
						  h->timeout);
			}
			usleep(10000);
			waited++;
		}
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return cordon_err(err, 0, "%s hook %s failed (%s %d)", oci_hook_names[k], h->path,
				  WIFEXITED(st) ? "exit status" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return 0;
}

int oci_hooks_run(const struct oci_config *c, enum oci_hook_kind k, const char *state_json, cordon_error *err)
{
	for (size_t i = 0; i < c->hooks[k].n; i++)
		if (hook_run_one(&c->hooks[k].h[i], k, state_json, err) < 0)
			return -1;
	return 0;
}

static void (*warn_fn)(const char *msg);

void oci_set_warn(void (*fn)(const char *msg))
{
	warn_fn = fn;
}

void oci_warn(const cordon_error *e)
{
	if (warn_fn)
		warn_fn(e->msg);
}

int oci_hooks_run_warn(const struct oci_config *c, enum oci_hook_kind k, const char *state_json)
{
	int failed = 0;
	for (size_t i = 0; i < c->hooks[k].n; i++) {
		cordon_error e = {0};
		if (hook_run_one(&c->hooks[k].h[i], k, state_json, &e) < 0) {
			oci_warn(&e);
			failed++;
		}
	}
	return failed;
}

bool oci_same_ns(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

int oci_write_at(int dfd, const char *name, const void *data, size_t len, mode_t mode)
{
	/* a fresh temporary name each try (never one that exists, never through a
	 * link: a name planted in the directory is refused, and the next one tried),
	 * then renamed within dfd: a link planted at name is replaced, not followed */
	char tmp[NAME_MAX + 1];
	int fd = -1;
	for (int i = 0; i < 64 && fd < 0; i++) {
		uint64_t r;
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return -1;
		snprintf(tmp, sizeof(tmp), ".%.200s.tmp%016llx", name, (unsigned long long)r);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0 && errno != EEXIST)
			return -1;
	}
	if (fd < 0)
		return -1;
	bool ok = write(fd, data, len) == (ssize_t)len;
	int e = errno;
	if (close(fd) < 0 && ok)
		ok = false, e = errno;
	if (!ok || renameat(dfd, tmp, dfd, name) < 0) {
		e = ok ? errno : e;
		unlinkat(dfd, tmp, 0);
		errno = e;
		return -1;
	}
	return 0;
}

/* As runc: a temporary file of an unpredictable name, created (never opened
 * through a link the directory's owner planted), renamed over path. */
int oci_write_pid_file(const char *path, pid_t pid, cordon_error *err)
{
	char dir[PATH_MAX], v[32];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	const char *name = slash ? slash + 1 : dir;
	if (slash == dir)
		dir[1] = '\0', name = path + 1;
	else if (slash)
		*slash = '\0';
	if (!*name)
		return cordon_err(err, EISDIR, "--pid-file %s", path);
	int dfd = open(slash ? dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(v, sizeof(v), "%d", (int)pid);
	if (dfd < 0 || oci_write_at(dfd, name, v, strlen(v), 0644) < 0) {
		int e = errno;
		if (dfd >= 0)
			close(dfd);
		return cordon_err(err, e, "--pid-file %s", path);
	}
	close(dfd);
	return 0;
}

int oci_state_json_of(const struct oci_state *s, enum oci_status st, char *out, size_t outsz)
{
	buf b = {0};
	if (oci_state_json(s, st, &b) < 0)
		return -1;
	snprintf(out, outsz, "%.*s", (int)b.len, b.p);
	buf_free(&b);
	return 0;
}

int oci_sup_sock_path(int dirfd, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "/proc/self/fd/%d/sup.sock", dirfd);
	return 0;
}

int oci_open_read(const char *root, const char *id, bool lock, int *dfd, struct oci_state *s, cordon_error *err)
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

void oci_close_fds_except(int from, const int *keep, size_t n)
{
	/* close_range over the gaps between the kept descriptors, in order */
	unsigned lo = from < 3 ? 3 : (unsigned)from;
	for (;;) {
		unsigned next = ~0U;
		for (size_t i = 0; i < n; i++)
			if (keep[i] >= (int)lo && (unsigned)keep[i] < next)
				next = (unsigned)keep[i];
		if (next > lo && syscall(SYS_close_range, lo, next == ~0U ? ~0U : next - 1, 0) < 0) {
			/* no close_range (before 5.9): one at a time over the open ones */
			long max = sysconf(_SC_OPEN_MAX);
			for (long fd = lo; fd < (next == ~0U ? max : (long)next); fd++)
				close((int)fd);
		}
		if (next == ~0U)
			return;
		lo = next + 1;
	}
}

void oci_wait_gone(pid_t pid, uint64_t start, int ms)
{
	int pfd = oci_pidfd_same(pid, start);
	if (pfd < 0)
		return;
	struct pollfd p = {pfd, POLLIN, 0};
	poll(&p, 1, ms);
	close(pfd);
}

int oci_send_console(const char *path, int fd, cordon_error *err)
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
