/* cordon_error: an errno plus a one-line message; callers wrap it with context.
 *
 * The error lives in caller-provided storage (no allocation), so the same type
 * is usable in the sandbox child after clone() and can be sent verbatim over the
 * sync socket. */
#pragma once
#include <errno.h>
#include <stdarg.h>
#include "cordon.h"

/* Set *err (if non-NULL) from errnum and a printf-style message; returns -1. */
int cordon_err(cordon_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Same, with errnum = errno. */
#define cordon_err_errno(e, ...) cordon_err((e), errno, __VA_ARGS__)
/* An allocation failed: "out of memory" with ENOMEM; returns -1 (the one
 * helper for every such failure). */
int cordon_oom(cordon_error *err);
/* Prepend "context: " to the existing message; returns -1. */
int cordon_err_wrap(cordon_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
