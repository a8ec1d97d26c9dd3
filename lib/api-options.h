/* The caller's struct cordon_run_options, read by its size
 * (include/cordon.h, docs/library.md). */
#pragma once
#include "cordon.h"

/* *out = the library's full options from @in (NULL: the defaults): the
 * fields @in's size covers, the rest zero. Returns 0, or -1 with err
 * (EINVAL: a size the library cannot read, a cancel_fd it cannot watch;
 * EBADF: a cancel_fd not open). */
int api_run_options(const struct cordon_run_options *in, struct cordon_run_options *out, cordon_error *err);
