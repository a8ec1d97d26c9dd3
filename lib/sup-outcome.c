/* The outcome of a run from its facts (sup-outcome.h). The order of the
 * rules is the order of precedence:
 *   refused        the preflight's verdict: nothing ran
 *   setup_failed   the boundary could not be established: the first reason
 *   forced         what the supervisor stopped the run for (a limit it
 *                  watches, a policy kill, a signal to cordon)
 *   oom_kills      the kernel killed for memory
 *   no exit        before exec: init died without a message, so setup
 *                  failed; after exec: killed from outside
 *   exit / death   ok, exit-nonzero, or by signal: the filter's SIGSYS,
 *                  SIGXFSZ, the cpu limit (SIGXCPU, or SIGKILL at the limit),
 *                  else signaled */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include "sup-outcome.h"

void run_facts_init(struct run_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->refused = ST_COUNT;
	f->forced = ST_COUNT;
}

static const char *sig_name(int sig, char *out, size_t n)
{
	const char *a = sig > 0 ? sigabbrev_np(sig) : NULL;
	if (a)
		snprintf(out, n, "SIG%s", a);
	else
		snprintf(out, n, "signal %d", sig);
	return out;
}

/* How init ended, for a reason line. */
static void init_end(const struct run_facts *f, char *out, size_t n)
{
	char s[32];
	if (f->init_code == CLD_EXITED)
		snprintf(out, n, "it exited with status %d", f->init_status);
	else if (f->init_code == CLD_KILLED || f->init_code == CLD_DUMPED)
		snprintf(out, n, "it was killed by %s", sig_name(f->init_status, s, sizeof(s)));
	else
		snprintf(out, n, "how it ended is not known");
}

/* The signal that ended a run without an exit status: init's own if it was
 * killed (only SIGKILL reaches a PID namespace's init from outside), else
 * SIGKILL. Never 0. */
static int init_signal(const struct run_facts *f)
{
	if ((f->init_code == CLD_KILLED || f->init_code == CLD_DUMPED) && f->init_status > 0)
		return f->init_status;
	return SIGKILL;
}

static void decide(const struct run_facts *f, struct run_outcome *o)
{
	bool exited = f->got_exit && WIFEXITED(f->wstatus);
	bool died = f->got_exit && WIFSIGNALED(f->wstatus);
	if (f->refused != ST_COUNT) {
		o->status = f->refused;
		snprintf(o->reason, sizeof(o->reason), "%s", f->reason ? f->reason : "");
		return;
	}
	if (exited)
		o->exit_code = WEXITSTATUS(f->wstatus);
	else if (died)
		o->signal = WTERMSIG(f->wstatus);
	if (f->setup_failed || f->forced == ST_SETUP_ERROR) {
		o->status = ST_SETUP_ERROR;
		snprintf(o->reason, sizeof(o->reason), "%s",
			 f->reason && *f->reason ? f->reason : "setting up the boundary failed");
		return;
	}
	if (f->forced != ST_COUNT) {
		o->status = f->forced;
		/* The command was running and cordon killed it. */
		if (!exited && !died && (f->exec_ok || f->cmd_forked))
			o->signal = SIGKILL;
		if (f->forced == ST_INTERRUPTED && f->forced_signal)
			snprintf(o->reason, sizeof(o->reason), "cordon received %s; the run was stopped",
				 strsignal(f->forced_signal));
		else if (f->forced == ST_INTERRUPTED) /* cordon_run_options.cancel_fd */
			snprintf(o->reason, sizeof(o->reason), "the caller cancelled the run (cancel_fd); it was stopped");
		return;
	}
	if (f->oom_kills) {
		o->status = ST_MEMORY_LIMIT;
		if (!f->exec_ok)
			snprintf(o->reason, sizeof(o->reason),
				 "the memory limit was hit while the boundary was set up; the command never started");
		return;
	}
	if (!exited && !died) {
		char how[96];
		init_end(f, how, sizeof(how));
		if (!f->exec_ok) {
			/* Init died before it started the command and said
			 * nothing: the boundary was never established. */
			o->status = ST_SETUP_ERROR;
			snprintf(o->reason, sizeof(o->reason),
				 "the run's init ended before the command started, without a message (%s)", how);
			return;
		}
		/* After exec, init vanished without a status: the run was
		 * killed from outside or by the kernel; never a success. */
		o->status = ST_SIGNALED;
		o->signal = init_signal(f);
		snprintf(o->reason, sizeof(o->reason),
			 "the run ended without an exit status (killed from outside; %s)", how);
		return;
	}
	if (exited) {
		o->status = o->exit_code == 0 ? ST_OK : ST_EXIT_NONZERO;
		return;
	}
	int sig = o->signal;
	if (sig == SIGSYS && f->seccomp) {
		/* The filter's only kill: a system call of another ABI. */
		o->status = ST_DENIED;
		o->foreign_abi_kill = true;
		return;
	}
	bool cpu_over = f->cpu_limit_set &&
			(sig == SIGXCPU || (sig == SIGKILL && f->cpu_used_ns >= f->cpu_limit_ns));
	if (sig == SIGXFSZ) {
		o->status = ST_FILE_SIZE_LIMIT;
		o->limits_hit[LIM_FILE_SIZE] = true;
	} else if (cpu_over) {
		o->status = ST_CPU_LIMIT;
		o->limits_hit[LIM_CPU] = true;
	} else {
		o->status = ST_SIGNALED;
	}
}

void run_outcome_decide(const struct run_facts *f, struct run_outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->exit_code = -1;
	memcpy(o->limits_hit, f->limits_hit, sizeof(o->limits_hit));
	if (f->oom_kills)
		o->limits_hit[LIM_MEMORY] = true;
	if (f->pids_max_hits)
		o->limits_hit[LIM_PIDS] = true;
	decide(f, o);
	o->cordon_exit = status_exit_code(o->status, o->exit_code, o->signal);
}
