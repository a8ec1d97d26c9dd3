/* The public API's versioned parts: the library's version and the caller's
 * struct cordon_run_options, which carries its size so that it can grow at
 * its end without breaking an embedder built against an older header
 * (include/cordon.h states the rule, docs/library.md the policy). */
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include "api-options.h"
#include "error.h"
#include "pol-opts.h"
#include "policy.h"

const char *cordon_version(void)
{
	return CORDON_VERSION;
}

static int too_small(size_t size, cordon_error *err)
{
	return cordon_err(err, EINVAL,
			  "cordon_run_options.size %zu: below the first version's %zu (set it with "
			  "cordon_run_options_init or CORDON_RUN_OPTIONS_INIT)",
			  size, (size_t)CORDON_RUN_OPTIONS_SIZE_VER0);
}

int cordon_run_options_env(struct cordon_run_options *o, char *const envp[], cordon_error *err)
{
	if (o->size < CORDON_RUN_OPTIONS_SIZE_VER0)
		return too_small(o->size, err);
	/* Every field written here is in the first version. */
	o->envp = envp;
	o->ceiling = opts_getenv(envp, "CORDON_CEILING");
	o->home = opts_getenv(envp, "HOME");
	o->lang = opts_getenv(envp, "LANG");
	o->term = opts_getenv(envp, "TERM");
	o->cgroup = opts_getenv(envp, "CORDON_CGROUP");
	o->output_hash = opts_getenv(envp, "CORDON_OUTPUT_HASH");
	const char *tt = opts_getenv(envp, "CORDON_TRACE_TIMING");
	o->trace_timing = tt && *tt == '1';
	return 0;
}

/* The cancel descriptor: open, pollable (epoll refuses regular files and
 * directories), not one the supervisor also writes the output to. */
static int check_cancel_fd(const struct cordon_run_options *o, cordon_error *err)
{
	int fd = o->cancel_fd;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return cordon_err_errno(err, "cordon_run_options.cancel_fd %d", fd);
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		return cordon_err(err, EINVAL,
				  "cordon_run_options.cancel_fd %d: a %s cannot be watched (use a pipe, an eventfd or a socket)",
				  fd, S_ISREG(st.st_mode) ? "regular file" : "directory");
	if (fd == o->stdout_fd || fd == o->stderr_fd)
		return cordon_err(err, EINVAL, "cordon_run_options.cancel_fd %d: is also %s", fd,
				  fd == o->stdout_fd ? "stdout_fd" : "stderr_fd");
	return 0;
}

int api_run_options(const struct cordon_run_options *in, struct cordon_run_options *out, cordon_error *err)
{
	cordon_run_options_init(out);
	if (!in)
		return 0;
	size_t have = in->size, mine = sizeof(*out);
	if (have < CORDON_RUN_OPTIONS_SIZE_VER0)
		return too_small(have, err);
	if (have > mine) {
		/* A newer header: fine while it asks nothing this library
		 * does not know. */
		const unsigned char *extra = (const unsigned char *)in + mine;
		for (size_t i = 0; i < have - mine; i++)
			if (extra[i])
				return cordon_err(err, EINVAL,
						  "cordon_run_options.size %zu: sets fields past this libcordon's %zu "
						  "(version %s; the embedder was built against a newer cordon.h)",
						  have, mine, cordon_version());
		have = mine;
	}
	/* The fields past the caller's size keep their zero value. */
	memset(out, 0, mine);
	memcpy(out, in, have);
	out->size = mine;
	if (out->cancel_fd > 0 && check_cancel_fd(out, err) < 0)
		return -1;
	return 0;
}
