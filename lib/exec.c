/* The command's half of a fork in the sandbox: stdio, signals, exec
 * (exec_command), for init's one command (child-init.c) and a session's
 * execs (session-agent.c) alike; and the exec-status pipe between them,
 * written here alone (exec_status_fail) and read by exec_status_read.
 * Runs after clone in the child: allocates nothing. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "cordon-pty.h"
#include "exec.h"
#include "sandbox.h"

__attribute__((noreturn)) void exec_status_fail(int fd, int err)
{
	if (write(fd, &err, sizeof(err)) < 0) {
		/* the reader learns of the failure from the closed pipe */
	}
	_exit(127);
}

int exec_status_read(int fd)
{
	int exec_errno = 0;
	ssize_t n;
	do
		n = read(fd, &exec_errno, sizeof(exec_errno));
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return 0; /* closed at execve: started */
	return exec_errno > 0 ? exec_errno : EINVAL;
}

uint64_t exec_command_stamp;

static void stamp_exec(void)
{
	exec_command_stamp = mono_ns(); /* the vDSO: no system call */
}

__attribute__((noreturn)) void exec_command(const struct sandbox_spec *sp, int outw, int errw,
					    int status_fd, uint64_t ignored, int slave)
{
	sigset_t none;
	sigemptyset(&none);
	/* Ignored signals survive execve (handlers do not): give the command
	 * default handling of those. The raw call, so that libc's own signals
	 * (32 and 33, which its sigaction refuses) are put back too; an
	 * all-zero kernel sigaction is SIG_DFL on every architecture. */
	static const unsigned long dfl[8];
	for (int sig = 1; sig <= 64; sig++)
		if (ignored & (1ULL << (sig - 1)))
			syscall(SYS_rt_sigaction, sig, dfl, NULL, (size_t)8);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* The degraded boundary has no PID namespace to end it with init:
	 * the command goes with init too (its process group with the
	 * supervisor, sup_degrade_reap). */
	if (sp->degraded)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	int e;
	/* --pty: its own session, the run's pty its controlling terminal and
	 * its 0, 1, 2 (the pipes close unused at exec). */
	if (slave >= 0 ? pty_attach_slave(slave) < 0 : dup2(outw, 1) < 0 || dup2(errw, 2) < 0)
		goto fail;
	if (dup3(status_fd, 3, O_CLOEXEC) < 0)
		goto fail;
	syscall(SYS_close_range, 4, ~0U, 0);
	const char *cmd = sp->argv[0];
	e = ENOENT;
	if (strchr(cmd, '/')) {
		stamp_exec();
		execve(cmd, sp->argv, sp->envp);
		e = errno;
	} else {
		/* PATH search with the run's PATH, not cordon's. */
		const char *path = "/usr/local/bin:/usr/bin:/bin";
		for (size_t i = 0; sp->envp[i]; i++)
			if (strncmp(sp->envp[i], "PATH=", 5) == 0)
				path = sp->envp[i] + 5;
		bool eacces = false;
		for (const char *p = path; *p;) {
			const char *c = strchr(p, ':');
			size_t l = c ? (size_t)(c - p) : strlen(p);
			char full[PATH_MAX];
			if (l && l + strlen(cmd) + 2 < sizeof(full)) {
				memcpy(full, p, l);
				full[l] = '/';
				strcpy(full + l + 1, cmd);
				stamp_exec();
				execve(full, sp->argv, sp->envp);
				if (errno == EACCES)
					eacces = true;
				else if (errno != ENOENT && errno != ENOTDIR)
					e = errno;
			}
			p += l;
			if (*p == ':')
				p++;
		}
		if (eacces && e == ENOENT)
			e = EACCES;
	}
	errno = e;
fail:
	exec_status_fail(3, errno);
}

void release_tracee(pid_t pid, int sig)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	if (sig == SIGTRAP && ptrace(PTRACE_GETSIGINFO, pid, 0, &si) == 0 && si.si_code == SI_USER &&
	    si.si_pid == pid)
		sig = 0; /* exec's SIGTRAP (a SIGTRAP from kill(self) looks the same) */
	ptrace(PTRACE_DETACH, pid, 0, (void *)(uintptr_t)sig);
}
