#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "openat2.h"
#include "cleanup.h"
#include "compat.h"
#include "error.h"
#include "secmem.h"
#include "secrets.h"

/* No symbolic link anywhere on the path: a link swapped in by an earlier run
 * (the file may sit in a writable path) cannot redirect the read to
 * /etc/shadow. O_NONBLOCK: a FIFO in its place cannot block. */
static int open_secret_file(const char *path)
{
	const int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW;
	struct open_how how = {
		.flags = flags,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = sys_openat2(AT_FDCWD, path, &how);
	if (fd < 0 && (errno == ENOSYS || errno == EPERM))
		fd = open(path, flags); /* no openat2: at least not the last component */
	return fd;
}

int secrets_read_file(const char *path, uint8_t **out, size_t *len, cordon_error *err)
{
	_cleanup_close_ int fd = open_secret_file(path);
	if (fd < 0) {
		if (errno == ELOOP)
			return cordon_err(err, 0, "%s: a symbolic link is on the path (secret files are read without following links)", path);
		return cordon_err_errno(err, "%s", path);
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return cordon_err_errno(err, "%s", path);
	if (!S_ISREG(st.st_mode))
		return cordon_err(err, 0, "%s: not a regular file", path);
	if (st.st_size > SECRET_MAX_LEN)
		return cordon_err(err, 0, "%s: larger than %d bytes", path, SECRET_MAX_LEN);
	/* One byte more than allowed: a file that grows after fstat is caught. */
	uint8_t *b = secmem_alloc(SECRET_MAX_LEN + 1, err);
	if (!b)
		return cordon_err_wrap(err, "%s", path);
	size_t n = 0;
	while (n < SECRET_MAX_LEN + 1) {
		ssize_t k = read(fd, b + n, SECRET_MAX_LEN + 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			secmem_free(b);
			return cordon_err_errno(err, "%s", path);
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	if (n > SECRET_MAX_LEN) {
		secmem_free(b);
		return cordon_err(err, 0, "%s: larger than %d bytes", path, SECRET_MAX_LEN);
	}
	/* One trailing newline is how files end, not part of the value. */
	if (n > 0 && b[n - 1] == '\n')
		n--;
	if (n > 0 && b[n - 1] == '\r')
		n--;
	*out = b;
	*len = n;
	return 0;
}

static int load_all(const cordon_policy *p, struct secrets *out, cordon_error *err)
{
	out->v = calloc(p->nsecrets, sizeof(*out->v));
	out->redact = redactor_new();
	if (!out->v || !out->redact)
		return cordon_oom(err);
	for (size_t i = 0; i < p->nsecrets; i++) {
		const struct cordon_secret *s = &p->secrets[i];
		struct secret_value *v = &out->v[out->n];
		v->name = s->name;
		v->mount = s->mount;
		if (s->from_env) {
			const char *val = opts_getenv(policy_opts(p)->envp, s->from_env);
			if (!val)
				return cordon_err(err, 0, "secret %s: the host variable %s is not set", s->name, s->from_env);
			v->len = strlen(val);
			v->value = secmem_alloc(v->len + 1, err);
			if (!v->value)
				return cordon_err_wrap(err, "secret %s", s->name);
			memcpy(v->value, val, v->len);
		} else if (secrets_read_file(s->from_file, &v->value, &v->len, err) < 0) {
			return cordon_err_wrap(err, "secret %s", s->name);
		}
		out->n++;
		if (v->len == 0)
			return cordon_err(err, 0, "secret %s: the value is empty", s->name);
		if (v->len < SECRET_MIN_LEN && !s->allow_short)
			return cordon_err(err, 0, "secret %s: shorter than %d bytes (redacting it would shred ordinary output; mark it \"allow_short\" to accept)",
					  s->name, SECRET_MIN_LEN);
		if (!s->mount && memchr(v->value, '\0', v->len))
			return cordon_err(err, 0, "secret %s: contains a NUL byte and cannot be an environment variable (use \"mount\")",
					  s->name);
		if (redactor_add_secret(out->redact, s->name, v->value, v->len, err) < 0)
			return -1;
		v->pol = s;
		if (s->inject) {
			uint8_t rnd[16];
			const char *pre = s->placeholder ? s->placeholder : "";
			size_t pl = strlen(pre);
			if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
				return cordon_err_errno(err, "secret %s: getrandom", s->name);
			v->placeholder = malloc(pl + 33);
			if (!v->placeholder)
				return cordon_oom(err);
			memcpy(v->placeholder, pre, pl);
			for (size_t k = 0; k < sizeof(rnd); k++)
				snprintf(v->placeholder + pl + 2 * k, 3, "%02x", rnd[k]);
		}
	}
	return 0;
}

int secrets_load(const cordon_policy *p, struct secrets *out, cordon_error *err)
{
	memset(out, 0, sizeof(*out));
	if (!p->nsecrets)
		return 0;
	int r = load_all(p, out, err);
	/* Even when a later secret fails, the ones already read must be
	 * redacted from the report of that failure. */
	cordon_error e2;
	if (out->redact && redactor_compile(out->redact, r < 0 ? &e2 : err) < 0)
		return -1;
	return r;
}

void secrets_free(struct secrets *s)
{
	for (size_t i = 0; i < s->n; i++) {
		secmem_free(s->v[i].value);
		free(s->v[i].placeholder);
	}
	free(s->v);
	redactor_free(s->redact);
	memset(s, 0, sizeof(*s));
}
