#include <stdio.h>
#include <string.h>
#include "error.h"

int cordon_err(cordon_error *err, int errnum, const char *fmt, ...)
{
	if (!err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->code = errnum;
	if (errnum > 0 && n >= 0 && (size_t)n < sizeof(err->msg))
		snprintf(err->msg + n, sizeof(err->msg) - (size_t)n, ": %s",
			 strerror(errnum));
	return -1;
}

int cordon_oom(cordon_error *err)
{
	return cordon_err(err, ENOMEM, "out of memory");
}

int cordon_err_wrap(cordon_error *err, const char *fmt, ...)
{
	if (!err)
		return -1;
	char prefix[256];
	char old[sizeof(err->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old);
	return -1;
}
