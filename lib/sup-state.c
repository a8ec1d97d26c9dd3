/* The helpers every part of the supervisor's sequence uses (sup-state.h):
 * the clock and trace, a setup error, killing the run, the run's writable
 * roots, closing and wiping what it holds. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "sup-state.h"
#include "sup-degrade.h"

uint64_t sup_now_ns(void)
{
	return mono_ns();
}

void sup_trace(struct sup *s, const char *phase)
{
	if (s->trace)
		buf_printf(&s->trace_buf, "  %8.3f ms  %s\n", (double)(sup_now_ns() - s->t0) / 1e6, phase);
}

/* The supervisor keeps no copy of a secret value once init has its own; the
 * values themselves (secret memory) stay in the cache for the task check and
 * are wiped when cordon_run returns. */
void sup_wipe_secret_copies(struct sup *s)
{
	for (size_t i = s->env_secret_start; i < s->env.n; i++)
		explicit_bzero(s->env.v[i], strlen(s->env.v[i]));
	s->spec.secrets = NULL;
	s->spec.nsecrets = 0;
}

void sup_setup_error(struct sup *s, const cordon_error *e)
{
	/* The first failure is the reason; later ones are consequences. One
	 * of the run's view's steps (init's, or ours for it) where the view
	 * cannot be had says why first (sup_degrade_why_failed). A send of
	 * ours that broke because init had gone (EPIPE, ECONNRESET: init
	 * builds its view as we send) gives way to init's own error, which
	 * the loop drains after it. */
	if (!s->setup_failed || s->setup_broken_pipe) {
		cordon_error w = *e;
		if (s->pid > 0)
			sup_degrade_why_failed(s, &w);
		snprintf(s->rep->reason, sizeof(s->rep->reason), "%s", w.msg);
		s->setup_broken_pipe = !s->setup_failed && (e->code == EPIPE || e->code == ECONNRESET);
	}
	s->rep->status = ST_SETUP_ERROR;
	s->setup_failed = true;
}

/* Init's only child is the command: one exists once init has forked it.
 * Init is the supervisor's unreaped child, so its pid is still its own. */
static bool init_has_child(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	char b[16];
	ssize_t n = read(fd, b, sizeof(b));
	close(fd);
	return n > 0;
}

void sup_kill_run(struct sup *s, enum run_status why)
{
	if (s->forced == ST_COUNT && !s->setup_failed)
		s->forced = why;
	/* The command runs before init hears that its exec succeeded: what
	 * it does can reach the caller (its output, cancel_fd) before
	 * MSG_EXEC_OK reaches us. Killed in that window, it still ran. */
	if (!s->exec_ok && !s->init_dead && s->pid > 0 && !s->cmd_forked)
		s->cmd_forked = init_has_child(s->pid);
	if (s->opts->hooks && s->opts->hooks->on_kill)
		s->opts->hooks->on_kill(s->opts->hooks->ctx);
	if (s->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, s->pidfd, SIGKILL, NULL, 0);
}

void sup_close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

size_t sup_writable_roots(const struct sup *s, const char **roots, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < s->plan.nmounts && n < max; i++)
		if (s->plan.mounts[i].mode == MOUNT_RW)
			roots[n++] = s->plan.mounts[i].path;
	return n;
}
