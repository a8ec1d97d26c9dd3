/* Init of a session: the agent inside the boundary.
 *
 * Every layer was applied to init itself (child-init.c) before it came here, so
 * each exec it forks inherits them: the view, Landlock, seccomp, dropped
 * credentials, rlimits. The agent only parses the supervisor's requests
 * (the supervisor is trusted: it made this boundary), forks, reaps, and
 * opens files with the run's own rights for the files API. It never execs
 * anything itself. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "compat.h"
#include "cordon-pty.h"
#include "error.h"
#include "sandbox.h"
#include "exec.h"
#include "session-agent.h"
#include "session.h"
#include "cgroup.h"
#include "sync.h"

struct agent_slot {
	int fd[3];
	pid_t pid;
	uint64_t t0;
};

static void slot_close(struct agent_slot *s)
{
	for (int i = 0; i < 3; i++)
		if (s->fd[i] >= 0) {
			close(s->fd[i]);
			s->fd[i] = -1;
		}
}

/* The request: "ARGC\0ENVC\0CWD\0" then ARGC args then ENVC "K=V" entries,
 * each NUL-terminated. Fills argv and env (pointers into text). */
static int parse_request(char *text, size_t len, char ***argv, char ***env, const char **cwd)
{
	char *p = text, *end = text + len;
	char *f[3];
	for (int i = 0; i < 3; i++) {
		char *z = memchr(p, '\0', (size_t)(end - p));
		if (!z)
			return -1;
		f[i] = p;
		p = z + 1;
	}
	unsigned long argc = strtoul(f[0], NULL, 10), envc = strtoul(f[1], NULL, 10);
	if (argc < 1 || argc > 65536 || envc > 65536)
		return -1;
	*cwd = f[2];
	char **a = calloc(argc + 1, sizeof(char *)), **e = calloc(envc + 1, sizeof(char *));
	if (!a || !e) {
		free(a);
		free(e);
		return -1;
	}
	for (unsigned long i = 0; i < argc + envc; i++) {
		char *z = p < end ? memchr(p, '\0', (size_t)(end - p)) : NULL;
		if (!z) {
			free(a);
			free(e);
			return -1;
		}
		if (i < argc)
			a[i] = p;
		else
			e[i - argc] = p;
		p = z + 1;
	}
	*argv = a;
	*env = e;
	return 0;
}

/* The session's environment, with the request's variables winning. */
static char **merge_env(char *const *base, char **req)
{
	size_t nb = 0, nr = 0;
	while (base[nb])
		nb++;
	while (req[nr])
		nr++;
	char **out = calloc(nb + nr + 1, sizeof(char *));
	if (!out)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < nb; i++) {
		size_t kl = strcspn(base[i], "=") + 1;
		bool over = false;
		for (size_t j = 0; j < nr && !over; j++)
			over = strncmp(req[j], base[i], kl) == 0;
		if (!over)
			out[n++] = base[i];
	}
	for (size_t j = 0; j < nr; j++)
		out[n++] = req[j];
	return out;
}

/* What the exec's process needs up to its execve. */
struct exec_child {
	const struct sandbox_spec *sp;
	char **argv, **env;
	const char *cwd;
	const struct agent_slot *sl;
	int stw;
	int devnull;
	uint64_t ignored;
	bool pty;
};

/* /dev/null, opened once when the agent starts: the stdin of an exec that
 * has none. An open in the exec's process would be trapped by the file
 * observer's filter (openat), a round trip to the supervisor on every
 * exec's way to its execve. */
static int agent_devnull = -1;

/* cgroup.procs of each exec slot's cgroup and of the session's own
 * (MSG_SX_CGROUP, session-cg.h): the agent moves itself into the exec's
 * before it starts the exec's process, which is born there, and back
 * after. The supervisor opened them: the kernel checks a move with the
 * opener's credentials, which the agent has not. */
static int agent_cg[SX_SLOTS][CG_MAX_CTRL], agent_home[CG_MAX_CTRL];

static int cg_move(const int *fds)
{
	for (int i = 0; i < CG_MAX_CTRL; i++)
		if (fds[i] >= 0 && write(fds[i], "0", 1) != 1)
			return -1;
	return 0;
}

static void cg_close(int *fds)
{
	for (int i = 0; i < CG_MAX_CTRL; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
}

/* The exec's process, from its start to its execve (or _exit, its error
 * written to stw). It runs in the agent's memory (spawn_exec): it only
 * makes system calls and writes its own stack, and never returns. */
static __attribute__((noreturn)) void exec_child(const struct exec_child *c)
{
	int err = 0;
	/* A pty's exec leads a session of its own with the pty as its
	 * controlling terminal; otherwise a process group of its own. */
	if (c->pty ? setsid() < 0 || ioctl(c->sl->fd[0], TIOCSCTTY, 0) < 0 : setpgid(0, 0) < 0)
		err = errno;
	int in = c->sl->fd[0] >= 0 ? c->sl->fd[0] : c->devnull >= 0 ? c->devnull : open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (!err && (in < 0 || dup2(in, 0) < 0 || (c->cwd[0] && chdir(c->cwd) < 0)))
		err = errno;
	if (err)
		exec_status_fail(c->stw, err);
	struct sandbox_spec s2 = *c->sp;
	s2.argv = c->argv;
	s2.envp = c->env;
	exec_command(&s2, c->sl->fd[1], c->sl->fd[2], c->stw, c->ignored, -1);
}

static int exec_child_fn(void *arg)
{
	exec_child(arg);
}

/* The exec's process shares the agent's memory until its execve, as
 * posix_spawn's does (CLONE_VM | CLONE_VFORK: the agent is suspended until
 * then, and the child runs on a stack of its own), instead of a fork, which
 * copies the page tables and has the new process take a copy-on-write
 * fault on every page it writes before its execve: costly in a VM
 * (measured: fork to the execve's arrival at the observer 2-20 ms under
 * load, 0.2-0.4 ms this way). The agent has nothing to do meanwhile: it
 * would only wait for the exec's start (stp). One stack serves every exec:
 * the agent is one thread, and suspended while the stack is in use. */
#define EXEC_STACK (64 * 1024)
static pid_t spawn_exec(const struct exec_child *c)
{
	static char *stack;
	if (!stack) {
		/* A guard page below it: an overflow faults instead of
		 * writing over the agent's memory. */
		char *m = mmap(NULL, EXEC_STACK + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
			       -1, 0);
		if (m == MAP_FAILED)
			return -1;
		if (mprotect(m, 4096, PROT_NONE) < 0) {
			munmap(m, EXEC_STACK + 4096);
			return -1;
		}
		stack = m + 4096;
	}
	return clone(exec_child_fn, stack + EXEC_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, (void *)c);
}

static void start_exec(const struct sandbox_spec *sp, int sock, int sigfd, struct agent_slot *sl,
		       int slot, int reqfd, const char *inl, size_t inl_len, uint64_t ignored, bool pty,
		       const struct winsize *wsz)
{
	int master = -1, peer = -1;
	cordon_error e = {0};
	struct stat st;
	char *text = NULL;
	char **argv = NULL, **renv = NULL, **env = NULL;
	const char *cwd = "";
	size_t len;
	if (reqfd < 0) {
		/* Inline, in the frame itself. */
		len = inl_len;
		if (!(text = malloc(len + 1))) {
			cordon_err(&e, ENOMEM, "exec request");
			goto fail;
		}
		memcpy(text, inl, len);
	} else if (fstat(reqfd, &st) < 0 || st.st_size <= 0 || (uint64_t)st.st_size > SX_REQ_MAX ||
		   !(text = malloc((size_t)st.st_size + 1)) ||
		   pread(reqfd, text, (size_t)st.st_size, 0) != st.st_size) {
		cordon_err(&e, EINVAL, "unreadable exec request");
		goto fail;
	} else {
		len = (size_t)st.st_size;
	}
	text[len] = '\0';
	if (parse_request(text, len, &argv, &renv, &cwd) < 0 ||
	    !(env = merge_env(sp->envp, renv))) {
		cordon_err(&e, EINVAL, "malformed exec request");
		goto fail;
	}
	if (pty) {
		/* In the session's own devpts (its /dev/pts, mounted by the
		 * view), as cordon run --pty's. */
		struct pty_winsize pw = {wsz->ws_row, wsz->ws_col};
		if (pty_open(&master, &peer, &pw, &e) < 0)
			goto fail;
		/* The pty is the exec's stdin, stdout and stderr. */
		slot_close(sl);
		sl->fd[0] = peer;
		sl->fd[1] = dup(peer);
		sl->fd[2] = dup(peer);
	}
	int stp[2];
	if (pipe2(stp, O_CLOEXEC) < 0) {
		cordon_err_errno(&e, "pipe");
		goto fail;
	}
	/* Above the stdio numbers exec_command dup2s onto (0-3). */
	int stw = fcntl(stp[1], F_DUPFD_CLOEXEC, 10);
	close(stp[1]);
	struct exec_child ec = {sp, argv, env, cwd, sl, stw, agent_devnull, ignored, pty};
	exec_command_stamp = 0;
	/* Into the exec's cgroup for the clone, then home: every process the
	 * exec starts is in its cgroup (session-cg.h). A move that fails
	 * fails the exec: it would run outside its cgroup's end. */
	bool in_cg = cg_move(agent_cg[slot]) == 0;
	int cg_errno = errno;
	pid_t pid = stw < 0 || !in_cg ? -1 : spawn_exec(&ec);
	if (cg_move(agent_home) < 0)
		_exit(1); /* the agent in an exec's cgroup would end with it */
	cg_close(agent_cg[slot]);
	if (!in_cg)
		errno = cg_errno;
	/* Written by the exec's process (it shares this memory until its
	 * execve): when it called execve. */
	uint64_t t_exec = exec_command_stamp;
	(void)sigfd;
	if (stw >= 0)
		close(stw);
	if (pid < 0) {
		close(stp[0]);
		cordon_err_errno(&e, "fork");
		goto fail;
	}
	/* Also set here: a signal may come before the child ran setpgid. */
	if (!pty)
		setpgid(pid, pid);
	sl->pid = pid;
	sl->t0 = mono_ns();
	slot_close(sl);
	int exec_errno = exec_status_read(stp[0]);
	close(stp[0]);
	if (exec_errno) {
		/* Never started: reaped here, no MSG_SX_EXIT for it. */
		waitpid(pid, NULL, __WALL);
		sl->pid = 0;
		cordon_err(&e, exec_errno, "exec %s", argv[0]);
		e.code = -(exec_errno > 0 ? exec_errno : EINVAL);
		sync_send(sock, MSG_SX_STARTED, slot, &e, -1);
	} else {
		sync_send_bytes(sock, MSG_SX_STARTED, slot, pid, &t_exec, sizeof(t_exec), master);
	}
	if (master >= 0)
		close(master);
	free(text);
	free(argv);
	free(renv);
	free(env);
	return;
fail:
	slot_close(sl);
	if (master >= 0)
		close(master);
	if (!e.code)
		e.code = EINVAL;
	e.code = -abs(e.code);
	sync_send(sock, MSG_SX_STARTED, slot, &e, -1);
	free(text);
	free(argv);
	free(renv);
	free(env);
}

/* path (absolute) opened one component at a time with O_NOFOLLOW: a
 * symbolic link anywhere on it is refused (ELOOP or ENOTDIR), magic links
 * included. (openat2 is ENOSYS under the run's filter.) "." and ".." are
 * refused. */
static int open_run_path_mk(const char *path, int flags, mode_t mode, bool parents);
static int open_run_path(const char *path, int flags, mode_t mode)
{
	return open_run_path_mk(path, flags, mode, false);
}

/* The same; parents: a missing directory on the way is made (0755). */
static int open_run_path_mk(const char *path, int flags, mode_t mode, bool parents)
{
	char tmp[sizeof(((cordon_error *)0)->msg)];
	if (path[0] != '/' || snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp)) {
		errno = EINVAL;
		return -1;
	}
	int dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char *save = NULL;
	char *c = strtok_r(tmp, "/", &save);
	if (!c) /* "/" itself */
		return dfd < 0 ? -1 : (flags & O_PATH) ? dfd : (close(dfd), open("/", flags | O_CLOEXEC));
	while (dfd >= 0 && c) {
		char *next = strtok_r(NULL, "/", &save);
		if (strcmp(c, ".") == 0 || strcmp(c, "..") == 0) {
			close(dfd);
			errno = EINVAL;
			return -1;
		}
		int nfd = next ? openat(dfd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
			       : openat(dfd, c, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode);
		if (next && nfd < 0 && errno == ENOENT && parents &&
		    (mkdirat(dfd, c, 0755) == 0 || errno == EEXIST))
			nfd = openat(dfd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int sv = errno;
		close(dfd);
		errno = sv;
		dfd = nfd;
		c = next;
	}
	return dfd;
}

/* A file operation with the run's own rights (its view, Landlock, its
 * uid): what the run could not do, the API cannot either. */
static void file_op(int sock, int req, int op, const char *path)
{
	cordon_error e = {0};
	int fd = -1;
	struct stat st;
	bool parents = op & SX_FILE_PARENTS;
	switch (op & ~SX_FILE_PARENTS) {
	case SX_FILE_READ:
		fd = open_run_path(path, O_RDONLY | O_NONBLOCK, 0);
		if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
			close(fd);
			fd = -1;
			errno = EISDIR;
		}
		break;
	case SX_FILE_WRITE:
		fd = open_run_path_mk(path, O_WRONLY | O_CREAT | O_NONBLOCK, 0644, parents);
		if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || ftruncate(fd, 0) < 0)) {
			close(fd);
			fd = -1;
			errno = EISDIR;
		}
		break;
	case SX_FILE_LIST:
		fd = open_run_path(path, O_RDONLY | O_DIRECTORY, 0);
		break;
	case SX_FILE_DELETE: {
		char dir[sizeof(e.msg)];
		snprintf(dir, sizeof(dir), "%s", path);
		char *slash = strrchr(dir, '/');
		const char *base = slash ? slash + 1 : "";
		if (slash == dir)
			dir[1] = '\0';
		else if (slash)
			*slash = '\0';
		if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
			errno = EINVAL;
			break;
		}
		int dfd = open_run_path(dir, O_PATH | O_DIRECTORY, 0);
		if (dfd >= 0) {
			int r = unlinkat(dfd, path + (base - dir), 0);
			if (r < 0 && errno == EISDIR)
				r = unlinkat(dfd, path + (base - dir), AT_REMOVEDIR);
			int sv = errno;
			close(dfd);
			errno = sv;
			if (r == 0) {
				sync_send(sock, MSG_SX_FILE_R, req, &e, -1);
				return;
			}
		}
		break;
	}
	default:
		errno = EINVAL;
	}
	e.code = fd >= 0 ? 0 : errno;
	sync_send(sock, MSG_SX_FILE_R, req, &e, fd);
	if (fd >= 0)
		close(fd);
}

/* The processes of an exec: its leader, every descendant still linked to
 * it by parent, and every member of a process group one of them is in (a
 * leader that moved itself into its child's group with setpgid is found
 * through its pid, the child through its parent, and that group's other
 * members through the group). Read from the session's own /proc (init's
 * PID namespace); at most PROC_MAX processes are looked at. */
#define PROC_MAX 4096

struct pinfo {
	pid_t pid, ppid, pgid;
	bool in;
};

static size_t proc_scan(struct pinfo *t, size_t cap)
{
	int dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	char db[8192];
	size_t n = 0;
	for (;;) {
		long k = syscall(SYS_getdents64, dfd, db, sizeof(db));
		if (k <= 0)
			break;
		for (long off = 0; off < k && n < cap;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *de = (void *)(db + off);
			off += de->reclen;
			char *e;
			long pid = strtol(de->name, &e, 10);
			if (*e || pid <= 1 || pid == getpid())
				continue;
			char path[64], st[512];
			snprintf(path, sizeof(path), "%ld/stat", pid);
			int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
			if (fd < 0)
				continue;
			ssize_t r = read(fd, st, sizeof(st) - 1);
			close(fd);
			if (r <= 0)
				continue;
			st[r] = '\0';
			/* "pid (comm) state ppid pgrp ...": comm may hold anything */
			char *c = strrchr(st, ')');
			char state;
			int ppid, pgid;
			if (!c || sscanf(c + 1, " %c %d %d", &state, &ppid, &pgid) != 3)
				continue;
			t[n++] = (struct pinfo){(pid_t)pid, ppid, pgid, false};
		}
	}
	close(dfd);
	return n;
}

static size_t exec_members(pid_t leader, struct pinfo *t, size_t cap)
{
	size_t n = proc_scan(t, cap);
	bool more = true;
	while (more) {
		more = false;
		for (size_t i = 0; i < n; i++) {
			if (t[i].in)
				continue;
			bool in = t[i].pid == leader || t[i].pgid == leader;
			for (size_t j = 0; !in && j < n; j++)
				in = t[j].in && (t[j].pid == t[i].ppid || t[j].pgid == t[i].pgid);
			if (in)
				t[i].in = more = true;
		}
	}
	return n;
}

/* sig to every process of the exec. A SIGKILL stops them all first, looks
 * again (what they forked meanwhile), then kills: a fork loop does not
 * outrun it. */
static void signal_exec_all(pid_t leader, int sig)
{
	static struct pinfo t[PROC_MAX];
	if (sig != SIGKILL) {
		/* Once to each process: a second TERM that arrives after a trap
		 * ran for the first runs the trap again. */
		size_t n = exec_members(leader, t, PROC_MAX);
		for (size_t i = 0; i < n; i++)
			if (t[i].in)
				kill(t[i].pid, sig);
		return;
	}
	kill(-leader, sig == SIGKILL ? SIGSTOP : sig);
	kill(leader, sig == SIGKILL ? SIGSTOP : sig);
	for (int pass = 0; pass < (sig == SIGKILL ? 3 : 1); pass++) {
		size_t n = exec_members(leader, t, PROC_MAX);
		for (size_t i = 0; i < n; i++)
			if (t[i].in)
				kill(t[i].pid, sig == SIGKILL ? SIGSTOP : sig);
	}
	if (sig != SIGKILL)
		return;
	size_t n = exec_members(leader, t, PROC_MAX);
	for (size_t i = 0; i < n; i++)
		if (t[i].in)
			kill(t[i].pid, SIGKILL);
	kill(-leader, SIGKILL);
	kill(leader, SIGKILL);
}

static void reap(int sock, struct agent_slot *slots)
{
	for (;;) {
		int ws;
		struct rusage ru;
		pid_t w = wait4(-1, &ws, WNOHANG | __WALL, &ru);
		if (w <= 0)
			return;
		if (WIFSTOPPED(ws)) {
			release_tracee(w, WSTOPSIG(ws));
			continue;
		}
		if (!WIFEXITED(ws) && !WIFSIGNALED(ws))
			continue;
		for (int i = 0; i < SX_SLOTS; i++) {
			if (slots[i].pid != w)
				continue;
			struct sx_usage u = {
				(uint64_t)ru.ru_utime.tv_sec * 1000000000ULL + (uint64_t)ru.ru_utime.tv_usec * 1000ULL,
				(uint64_t)ru.ru_stime.tv_sec * 1000000000ULL + (uint64_t)ru.ru_stime.tv_usec * 1000ULL,
				(uint64_t)ru.ru_maxrss * 1024ULL, mono_ns() - slots[i].t0};
			cordon_error e = {0};
			e.code = ws;
			memcpy(e.msg, &u, sizeof(u));
			sync_send_bytes(sock, MSG_SX_EXIT, i, ws, &u, sizeof(u), -1);
			/* What the exec left running in its group ends with it. */
			kill(-w, SIGKILL);
			slots[i].pid = 0;
		}
	}
}

void session_agent_main(const struct sandbox_spec *sp, int sock, int outw, int errw, uint64_t ignored)
{
	close(outw);
	close(errw);
	struct agent_slot slots[SX_SLOTS];
	for (int i = 0; i < SX_SLOTS; i++)
		slots[i] = (struct agent_slot){{-1, -1, -1}, 0, 0};
	memset(agent_cg, -1, sizeof(agent_cg));
	memset(agent_home, -1, sizeof(agent_home));
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, SIGCHLD);
	sigprocmask(SIG_BLOCK, &m, NULL);
	int sigfd = signalfd(-1, &m, SFD_CLOEXEC | SFD_NONBLOCK);
	cordon_error e = {0};
	if (sigfd < 0) {
		cordon_err_errno(&e, "signalfd");
		sync_send(sock, MSG_ERROR, 0, &e, -1);
		_exit(1);
	}
	/* Above the numbers the exec's process dup2s onto (0-3): a dup2 onto
	 * itself would leave it close-on-exec. */
	int dn = open("/dev/null", O_RDONLY | O_CLOEXEC);
	agent_devnull = dn >= 0 ? fcntl(dn, F_DUPFD_CLOEXEC, 10) : -1;
	if (dn >= 0)
		close(dn);
	/* Ready: run.c takes this as "the command started". */
	sync_send(sock, MSG_EXEC_OK, 0, NULL, -1);
	for (;;) {
		struct pollfd p[2] = {{sock, POLLIN, 0}, {sigfd, POLLIN, 0}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
			}
			reap(sock, slots);
		}
		if (!(p[0].revents & (POLLIN | POLLHUP)))
			continue;
		struct msg msg;
		int fd = -1;
		int r = sync_recv(sock, &msg, &fd);
		if (r == 0)
			_exit(0); /* the supervisor is gone: so is the run */
		if (r < 0)
			continue;
		int slot = msg.value;
		bool ok_slot = slot >= 0 && slot < SX_SLOTS;
		switch (msg.type) {
		case MSG_SX_FD:
			if (ok_slot && fd >= 0 && msg.err.code >= 0 && msg.err.code < 3 &&
			    slots[slot].fd[msg.err.code] < 0) {
				slots[slot].fd[msg.err.code] = fd;
				fd = -1;
			}
			break;
		case MSG_SX_EXEC:
			if (ok_slot && fd >= 0 && slots[slot].pid == 0) {
				/* .err.code 1: a pty, .err.msg its rows and columns */
				struct winsize ws = {0};
				memcpy(&ws, msg.err.msg, sizeof(ws));
				start_exec(sp, sock, sigfd, &slots[slot], slot, fd, NULL, 0, ignored, msg.err.code == SX_EXEC_PTY,
					   &ws);
			} else if (ok_slot && fd < 0 && msg.err.code == SX_EXEC_INLINE && slots[slot].pid == 0) {
				/* .err.msg: a u16 length, then the request */
				uint16_t l;
				memcpy(&l, msg.err.msg, sizeof(l));
				if (l <= sizeof(msg.err.msg) - sizeof(l))
					start_exec(sp, sock, sigfd, &slots[slot], slot, -1, msg.err.msg + sizeof(l), l,
						   ignored, false, &(struct winsize){0});
			}
			break;
		case MSG_SX_CGROUP:
			if (fd >= 0 && msg.err.code >= 0 && msg.err.code < CG_MAX_CTRL && (ok_slot || slot == -1)) {
				int *f = slot == -1 ? &agent_home[msg.err.code] : &agent_cg[slot][msg.err.code];
				if (*f >= 0)
					close(*f);
				*f = fd;
				fd = -1;
			}
			break;
		case MSG_SX_SIGNAL:
			if (ok_slot && slots[slot].pid > 0)
				signal_exec_all(slots[slot].pid, msg.err.code);
			break;
		case MSG_SX_FILE:
			msg.err.msg[sizeof(msg.err.msg) - 1] = '\0';
			file_op(sock, slot, msg.err.code, msg.err.msg);
			break;
		case MSG_SX_END:
			/* The session's "command" exits 0; init's exit ends every
			 * process left in the PID namespace. */
			sync_send(sock, MSG_EXIT, 0, NULL, -1);
			_exit(0);
		}
		if (fd >= 0)
			close(fd);
	}
}
