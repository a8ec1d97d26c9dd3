/* An embedder of libcordon: loads a policy, runs a command inside it, prints
 * the status from the report. Uses include/cordon.h alone:
 *
 *	cc embed.c $(pkg-config --cflags --libs cordon) -o embed
 *	./embed [--json] [--env] POLICY COMMAND [ARG...]
 *
 * --json prints the whole report; --env gives the library this process's
 * environment (what `cordon run` does), else it sees none. It also checks
 * that the run left this process as it found it (include/cordon.h lists
 * what a run touches and puts back). Exits with the status `cordon run`
 * would. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cordon.h>

/* What a library has no business changing for good. */
struct proc_state {
	void (*sigpipe)(int);
	void (*sigusr1)(int);
	sigset_t mask;
	int dumpable;
	struct rlimit nofile;
	mode_t umask;
};

static void take_state(struct proc_state *s)
{
	struct sigaction sa;
	sigaction(SIGPIPE, NULL, &sa);
	s->sigpipe = sa.sa_handler;
	sigaction(SIGUSR1, NULL, &sa);
	s->sigusr1 = sa.sa_handler;
	sigprocmask(SIG_SETMASK, NULL, &s->mask);
	s->dumpable = prctl(PR_GET_DUMPABLE);
	getrlimit(RLIMIT_NOFILE, &s->nofile);
	s->umask = umask(022);
	umask(s->umask);
}

static const char *state_diff(const struct proc_state *a, const struct proc_state *b)
{
	if (a->sigpipe != b->sigpipe)
		return "SIGPIPE disposition";
	if (a->sigusr1 != b->sigusr1)
		return "SIGUSR1 disposition";
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&a->mask, sig) != sigismember(&b->mask, sig))
			return "signal mask";
	if (a->dumpable != b->dumpable)
		return "dumpable flag";
	if (a->nofile.rlim_cur != b->nofile.rlim_cur || a->nofile.rlim_max != b->nofile.rlim_max)
		return "RLIMIT_NOFILE";
	if (a->umask != b->umask)
		return "umask";
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	bool json = false, env = false;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (strcmp(argv[i], "--env") == 0)
			env = true;
		else
			break;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: embed [--json] [--env] POLICY COMMAND [ARG...]\n");
		return 2;
	}
	/* A caller with a handler of its own: the run must give it back. */
	signal(SIGUSR1, on_usr1);
	cordon_error err;
	cordon_policy *p;
	if (cordon_policy_load(argv[i], &p, &err) < 0) {
		fprintf(stderr, "embed: %s\n", err.msg);
		return 2;
	}
	struct cordon_run_options o;
	if (env)
		cordon_run_options_from_env(&o, environ);
	else
		cordon_run_options_init(&o);
	struct proc_state before, after;
	take_state(&before);
	cordon_report *r;
	if (cordon_run(p, argv + i + 1, &o, &r, &err) < 0) {
		fprintf(stderr, "embed: %s\n", err.msg);
		cordon_policy_free(p);
		return 125;
	}
	take_state(&after);
	const char *changed = state_diff(&before, &after);
	char *reason = cordon_report_reason(r);
	printf("status %s, exit code %d, signal %d%s%s\n", cordon_report_status(r), cordon_report_exit_code(r),
	       cordon_report_signal(r), reason && *reason ? ": " : "", reason ? reason : "");
	free(reason);
	printf("process state %s%s\n", changed ? "changed: " : "unchanged", changed ? changed : "");
	if (json) {
		char *text = cordon_report_json(r);
		if (text)
			fputs(text, stdout);
		free(text);
	}
	int rc = changed ? 125 : cordon_report_exit_status(r);
	cordon_report_free(r);
	cordon_policy_free(p);
	return rc;
}
