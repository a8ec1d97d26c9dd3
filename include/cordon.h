/* cordon: a Linux execution boundary for untrusted code.
 *
 * libcordon's public surface: the only header an embedder includes
 * (pkg-config --cflags --libs cordon). Every other symbol of the library is
 * hidden. Every fallible function returns a negative value and fills a
 * caller-provided cordon_error; the library never prints (except the
 * command's own output, relayed to the fds of cordon_run_options, and the
 * timing trace on request) and never exits.
 *
 * What is stable and how it may grow: docs/library.md.
 *
 * A minimal embedder (examples/embed/embed.c):
 *
 *	cordon_policy *p;
 *	cordon_report *r;
 *	cordon_error err;
 *	struct cordon_run_options o = CORDON_RUN_OPTIONS_INIT;
 *	if (cordon_policy_load("policy.json", &p, &err) < 0 ||
 *	    cordon_run(p, argv, &o, &r, &err) < 0)
 *		... err.msg says why ...
 *	printf("%s\n", cordon_report_status(r));
 *	cordon_report_free(r);
 *	cordon_policy_free(p);
 *
 * What a run changes in the calling process (and puts back):
 *   - SIGPIPE is ignored for the duration of cordon_run (a reader of the
 *     relayed output that goes away must not kill the supervisor), then
 *     restored to the caller's disposition.
 *   - SIGINT, SIGTERM, SIGHUP and SIGQUIT are blocked in the calling thread
 *     and read from a signalfd while the command runs: one that arrives then
 *     stops the run (status "interrupted") and is consumed, not delivered to the
 *     caller's handler. The caller's signal mask is restored on return. In a
 *     multi-threaded caller, block these signals in every other thread if
 *     they should stop the run rather than reach the caller.
 *   - With pty set: SIGWINCH is blocked and read from the signalfd as well
 *     (it resizes the run's pty), and a terminal on fd 0 is in raw mode;
 *     both are put back before cordon_run returns.
 *   - SIGUSR1's disposition is replaced while the seccomp observer thread
 *     runs (it interrupts that thread at the end of the run), and restored
 *     when the thread has been joined.
 *   - The soft RLIMIT_NOFILE is raised to the hard limit while the run is
 *     supervised (the network proxy's connection cap), and restored.
 *   - PR_SET_DUMPABLE: the process is made non-dumpable (not ptrace-able by
 *     other processes of the same user) while the run is set up and
 *     supervised: the supervisor holds the secrets' values. Restored to the
 *     caller's value when cordon_run returns.
 *   - It creates, waits for and reaps its own children only (by pidfd): a
 *     caller's SIGCHLD handler sees them exit; it does not reap the caller's
 *     children. Resource usage of children that cgroups cannot account
 *     (getrusage(RUSAGE_CHILDREN)) includes children the caller reaped before.
 *   - The working directory, umask, environment and other rlimits of the
 *     calling process are not changed. cordon_run is not thread-safe against
 *     another cordon_run in the same process (the signal steps above are
 *     process-wide): serialise runs, or run them in child processes. To stop
 *     a run from another thread, use cordon_run_options.cancel_fd.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CORDON_PUBLIC __attribute__((visibility("default")))

/* The version of this header (meson.build's project version; the build
 * checks they agree). cordon_version() is the library's, which may be newer
 * than the header an embedder was built with (docs/library.md). */
#define CORDON_VERSION_MAJOR 0
#define CORDON_VERSION_MINOR 1
#define CORDON_VERSION_PATCH 0
#define CORDON_VERSION "0.1.0"

/* The library's version, "MAJOR.MINOR.PATCH": what `cordon --version` prints
 * after "cordon ". A static string. */
CORDON_PUBLIC const char *cordon_version(void);

typedef struct cordon_error {
	int code;       /* errno value, or 0 for a validation error */
	char msg[1024]; /* one line, no trailing newline */
} cordon_error;

/* A policy (README, "Policy file"). Opaque. */
typedef struct cordon_policy cordon_policy;
/* What one run did: status, exit code, usage, outputs, evidence. Opaque; its
 * JSON form is the report of schemas/report.schema.json. */
typedef struct cordon_report cordon_report;

/**
 * cordon_policy_load() - read a policy file.
 * @path: the JSON policy file; relative paths in it resolve against its
 *        directory, as for `cordon run --policy`.
 * @out: on success, the new policy (free with cordon_policy_free).
 * Returns 0, or -1 with err naming the file, line and column.
 */
CORDON_PUBLIC int cordon_policy_load(const char *path, cordon_policy **out, cordon_error *err)
	__attribute__((nonnull(1, 2)));

/**
 * cordon_policy_parse() - a policy from JSON text.
 * @json, @len: the text; @name names it in messages (NULL: "policy").
 * Relative paths in it resolve against the current directory.
 * Returns 0, or -1 with err set.
 */
CORDON_PUBLIC int cordon_policy_parse(const char *json, size_t len, const char *name, cordon_policy **out,
				      cordon_error *err) __attribute__((nonnull(1, 4)));

/* Frees a policy (NULL is fine). */
CORDON_PUBLIC void cordon_policy_free(cordon_policy *p);

/* What the library would otherwise read from the environment, given by the
 * caller. Fill with CORDON_RUN_OPTIONS_INIT or cordon_run_options_init (or
 * cordon_run_options_from_env, what the CLI does), then set fields. Strings
 * are borrowed for the call.
 *
 * The struct grows at its end only, and carries its size: the library reads
 * the first `size` bytes and gives every field past them its zero value
 * (every field added after the first version has zero as its default). A
 * size below CORDON_RUN_OPTIONS_SIZE_VER0 is refused (EINVAL); a size above
 * the library's own (a header newer than the library) is accepted if the
 * bytes the library does not know are all zero, refused otherwise. */
struct cordon_run_options {
	/* sizeof(struct cordon_run_options) as the caller compiled it: set by
	 * CORDON_RUN_OPTIONS_INIT and cordon_run_options_init. */
	size_t size;
	/* The operator's ceiling file (the CLI's $CORDON_CEILING). NULL: the
	 * system ceiling /etc/cordon/ceiling.json if it exists. A policy's
	 * own ceiling (the CLI's --ceiling) comes first. */
	const char *ceiling;
	/* The invoking user's home ($HOME): an implicit workspace may not be
	 * it. NULL: only the homes of the password database are refused. */
	const char *home;
	/* LANG and TERM given to the command unless its policy sets them
	 * (NULL or empty: C.UTF-8 and dumb). */
	const char *lang;
	const char *term;
	/* Where a secret's "env" source is looked up: NAME=VALUE strings,
	 * NULL-terminated (the CLI passes environ). NULL: no variables (a
	 * secret read from the environment is a setup-error). */
	char *const *envp;
	/* Force a cgroup backend: "v1", "v2" or "none" ($CORDON_CGROUP).
	 * NULL: detected. */
	const char *cgroup;
	/* Timing of the set-up steps on stderr ($CORDON_TRACE_TIMING=1). */
	bool trace_timing;
	/* Where the command's standard output and error are relayed (after
	 * redaction). Defaults: 1 and 2. */
	int stdout_fd;
	int stderr_fd;
	/* The command gets a pty of its own (cordon run --pty), in the run's
	 * private devpts, as its controlling terminal and stdin/stdout/stderr.
	 * What it shows is relayed to stdout_fd (and is the report's stdout);
	 * fd 0 is typed into it (a terminal there is put in raw mode for the
	 * run and restored before cordon_run returns; SIGWINCH is then read
	 * from the signalfd too and resizes the run's pty). */
	bool pty;
	/* The hash budget of each output stream ($CORDON_OUTPUT_HASH): a SIZE
	 * ("256M", "0"); the report's stdout/stderr sha256 covers at most that
	 * many bytes, past it the hash is reported skipped. NULL: 256 MiB. A
	 * malformed value is a setup-error. */
	const char *output_hash;
	/* ---- the first version (CORDON_RUN_OPTIONS_SIZE_VER0) ends here ---- */

	/* A descriptor the run's supervisor watches: once it is
	 * readable (a byte written to a pipe, an eventfd signalled, the other
	 * end of a socket closed), the run is stopped as for SIGINT: status
	 * "interrupted", the report complete. A pipe, eventfd or socket (not a
	 * regular file), other than stdout_fd and stderr_fd; nothing is read
	 * from it, and it is watched by the task check's run too. 0 (the
	 * default) or negative: none. */
	int cancel_fd;
};

/* The size of the first version of struct cordon_run_options (every field
 * up to output_hash): the smallest size cordon_run accepts. */
#define CORDON_RUN_OPTIONS_SIZE_VER0 offsetof(struct cordon_run_options, cancel_fd)

/* Defaults: everything NULL/false/0, stdout_fd 1, stderr_fd 2; size this
 * header's. A C initializer: struct cordon_run_options o = CORDON_RUN_OPTIONS_INIT; */
#define CORDON_RUN_OPTIONS_INIT {.size = sizeof(struct cordon_run_options), .stdout_fd = 1, .stderr_fd = 2}

/* The same defaults into *o (padding zeroed too: the size rule above
 * compares the bytes a library does not know with zero). Inline: it writes
 * the caller's sizeof, not the library's. */
static inline void cordon_run_options_init(struct cordon_run_options *o)
{
	__builtin_memset(o, 0, sizeof(*o));
	o->size = sizeof(*o);
	o->stdout_fd = 1;
	o->stderr_fd = 2;
}

/**
 * cordon_run_options_env() - the variables the CLI documents
 * (CORDON_CEILING, HOME, LANG, TERM, CORDON_CGROUP, CORDON_TRACE_TIMING,
 * CORDON_OUTPUT_HASH) from @envp into @o, which @envp also becomes o->envp.
 * The strings point into @envp. @o must have been initialised (its size
 * read): fields past o->size are not written.
 * Returns 0, or -1 (EINVAL in err) if o->size is below
 * CORDON_RUN_OPTIONS_SIZE_VER0, with @o unchanged.
 */
CORDON_PUBLIC int cordon_run_options_env(struct cordon_run_options *o, char *const envp[], cordon_error *err)
	__attribute__((nonnull(1, 3)));

/* cordon_run_options_init, then cordon_run_options_env: what `cordon run`
 * does with its environment. */
static inline void cordon_run_options_from_env(struct cordon_run_options *o, char *const envp[])
{
	cordon_error ignored;
	cordon_run_options_init(o);
	(void)cordon_run_options_env(o, envp, &ignored);
}

/**
 * cordon_run() - run argv inside the boundary @p describes.
 * @p: the policy. The pre-flight completes it: limits the operator's ceiling
 *     supplies are applied to it (running it again gives the same run).
 * @argv: the command, NULL-terminated, argv[0] a path or a name on PATH.
 * @opts: NULL for the defaults of cordon_run_options_init; else its size
 *        decides which fields are read (struct cordon_run_options).
 * @out: on return 0, the report (free with cordon_report_free). Every
 *       outcome is a status in it, setup errors included.
 * Returns 0, or -1 if not even a report could be made (out of memory) or
 * @opts is not usable (EINVAL: its size; EBADF or EINVAL: its cancel_fd),
 * with err saying which.
 */
CORDON_PUBLIC int cordon_run(cordon_policy *p, char *const argv[], const struct cordon_run_options *opts,
			     cordon_report **out, cordon_error *err) __attribute__((nonnull(1, 2, 4)));

/* The status: "ok", "exit-nonzero", "signaled", "timeout", "cpu-limit",
 * "memory-limit", "output-limit", "file-size-limit", "denied",
 * "unauthorized", "infeasible", "setup-error" or "interrupted"
 * (schemas/report.schema.json). */
CORDON_PUBLIC const char *cordon_report_status(const cordon_report *r) __attribute__((nonnull));
/* The command's exit code (-1 if it did not exit), the signal that ended it
 * (0 if none). */
CORDON_PUBLIC int cordon_report_exit_code(const cordon_report *r) __attribute__((nonnull));
CORDON_PUBLIC int cordon_report_signal(const cordon_report *r) __attribute__((nonnull));
/* The exit status `cordon run` would end with (README, "Exit status"). */
CORDON_PUBLIC int cordon_report_exit_status(const cordon_report *r) __attribute__((nonnull));
/* Why the status is what it is, one line, secrets redacted; "" for ok.
 * Caller frees; NULL if out of memory. */
CORDON_PUBLIC char *cordon_report_reason(const cordon_report *r) __attribute__((nonnull));
/* The report as JSON (schemas/report.schema.json), secrets redacted.
 * Caller frees; NULL if out of memory. */
CORDON_PUBLIC char *cordon_report_json(const cordon_report *r) __attribute__((nonnull));
/* Frees a report, wiping the secrets it held for redaction (NULL is fine). */
CORDON_PUBLIC void cordon_report_free(cordon_report *r);

#ifdef __cplusplus
}
#endif
