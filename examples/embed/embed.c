/* An embedder of libcordon: loads a policy, runs a command inside it, prints
 * the status from the report. Uses include/cordon.h alone:
 *
 *	cc embed.c $(pkg-config --cflags --libs cordon) -o embed
 *	./embed [--json] [--env] [--cancel-on-output] [--options-ver0 | --options-size N [--poison]]
 *	        POLICY COMMAND [ARG...]
 *	./embed --version
 *
 * --json prints the whole report; --env gives the library this process's
 * environment (what `cordon run` does), else it sees none.
 * --cancel-on-output relays the command's output through a helper process,
 * which cancels the run (cordon_run_options.cancel_fd) once the first bytes
 * have come: the run has started by then.
 * The size rule of struct cordon_run_options: --options-ver0 passes the
 * first version's struct (an embedder built before cancel_fd), with bytes
 * that are not zero right after it; --options-size N passes size N (the
 * bytes past the struct zero, or not with --poison).
 * --version prints cordon_version() and this header's CORDON_VERSION.
 * It also checks that the run left this process as it found it
 * (include/cordon.h lists what a run touches and puts back). Exits with the
 * status `cordon run` would. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cordon.h>

/* struct cordon_run_options as the first version of cordon.h had it: what
 * an embedder built before cancel_fd passes. Bytes that are not zero follow
 * it in memory: a library that read past its size would see them. */
struct run_options_ver0 {
	size_t size;
	const char *ceiling, *home, *lang, *term;
	char *const *envp;
	const char *cgroup;
	bool trace_timing;
	int stdout_fd, stderr_fd;
	bool pty;
	const char *output_hash;
};
_Static_assert(sizeof(struct run_options_ver0) == CORDON_RUN_OPTIONS_SIZE_VER0, "the first version's size");
static struct {
	struct run_options_ver0 o;
	unsigned char after[64];
} ver0;

/* --options-size: the options in a buffer of their size (and at least ours) */
static union {
	struct cordon_run_options o;
	unsigned char bytes[4096];
} sized;

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

/* --cancel-on-output: a helper process relays what the run writes to our
 * stdout, and writes to the cancel pipe once the first bytes came. The
 * run's stdout_fd and cancel_fd are set to the pipes' other ends. */
static pid_t start_canceller(struct cordon_run_options *o)
{
	int cancel[2], out[2];
	if (pipe2(cancel, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(cancel[0]);
		close(out[1]);
		char buf[4096];
		bool sent = false;
		for (;;) {
			ssize_t n = read(out[0], buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				_exit(0);
			if (write(STDOUT_FILENO, buf, (size_t)n) != n)
				_exit(1);
			if (!sent && write(cancel[1], "x", 1) != 1)
				_exit(1);
			sent = true;
		}
	}
	close(cancel[1]);
	close(out[0]);
	o->cancel_fd = cancel[0];
	o->stdout_fd = out[1];
	return pid;
}

int main(int argc, char **argv)
{
	bool json = false, env = false, cancel = false, opt_ver0 = false, poison = false;
	long opt_size = -1;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (strcmp(argv[i], "--env") == 0)
			env = true;
		else if (strcmp(argv[i], "--cancel-on-output") == 0)
			cancel = true;
		else if (strcmp(argv[i], "--options-ver0") == 0)
			opt_ver0 = true;
		else if (strcmp(argv[i], "--options-size") == 0 && i + 1 < argc)
			opt_size = atol(argv[++i]);
		else if (strcmp(argv[i], "--poison") == 0)
			poison = true;
		else if (strcmp(argv[i], "--version") == 0) {
			printf("cordon_version %s, header %s\n", cordon_version(), CORDON_VERSION);
			return 0;
		} else
			break;
	}
	if (argc - i < 2 || opt_size >= (long)sizeof(sized)) {
		fprintf(stderr, "usage: embed [--json] [--env] [--cancel-on-output] [--options-ver0 | "
				"--options-size N [--poison]] POLICY COMMAND [ARG...]\n");
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
	struct cordon_run_options o = CORDON_RUN_OPTIONS_INIT;
	if (env)
		cordon_run_options_from_env(&o, environ);
	pid_t canceller = cancel ? start_canceller(&o) : 0;
	if (canceller < 0) {
		perror("embed: the canceller");
		return 2;
	}
	const struct cordon_run_options *opts = &o;
	if (opt_ver0) {
		memset(&ver0, 0x07, sizeof(ver0));
		memset(&ver0.o, 0, sizeof(ver0.o));
		ver0.o.size = sizeof(ver0.o);
		ver0.o.stdout_fd = o.stdout_fd;
		ver0.o.stderr_fd = o.stderr_fd;
		if (env) {
			ver0.o.envp = o.envp;
			ver0.o.ceiling = o.ceiling;
			ver0.o.home = o.home;
			ver0.o.lang = o.lang;
			ver0.o.term = o.term;
			ver0.o.cgroup = o.cgroup;
			ver0.o.output_hash = o.output_hash;
			ver0.o.trace_timing = o.trace_timing;
		}
		opts = (const struct cordon_run_options *)&ver0.o;
	} else if (opt_size >= 0) {
		memset(&sized, poison ? 0x07 : 0, sizeof(sized));
		sized.o = o;
		sized.o.size = (size_t)opt_size;
		opts = &sized.o;
	}
	struct proc_state before, after;
	take_state(&before);
	cordon_report *r;
	int run_rc = cordon_run(p, argv + i + 1, opts, &r, &err);
	if (canceller > 0) {
		/* the helper has relayed everything once it sees the end */
		close(o.stdout_fd);
		close(o.cancel_fd);
		waitpid(canceller, NULL, 0);
	}
	if (run_rc < 0) {
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
