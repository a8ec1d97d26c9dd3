/* TLS loaded on demand (the cordon program): cordon-tls.so, the module
 * meson builds from tls.c with libssl and libcrypto linked statically, is
 * loaded from the directory of the running executable (as cordon-serve is
 * found) on the first call, that is only by a run whose proxy opens TLS
 * connections. Every other run starts without relocating OpenSSL's tables
 * (tls.h). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tls-load.h"
#include "cleanup.h"
#include "tls.h"

#define TLS_MODULE "cordon-tls.so"

/* Trusted as the executable is: the same owner, and writable by no one
 * else (nor is its directory). The supervisor may be root and the module
 * code it runs; a module someone else could have put there (a run with
 * that directory writable, another user) is refused, not loaded. */
static bool trusted_like(const struct stat *st, const struct stat *exe)
{
	return st->st_uid == exe->st_uid && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

const struct tls_ops *tls_ops_get(cordon_error *err)
{
	static const struct tls_ops *ops;
	const struct tls_ops *o = __atomic_load_n(&ops, __ATOMIC_ACQUIRE);
	if (o)
		return o;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct stat exe, dst, st;
	if (n <= 0 || stat("/proc/self/exe", &exe) < 0)
		return cordon_err(err, errno, "tls: /proc/self/exe"), NULL;
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	_cleanup_close_ int dir = open(slash ? self : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0 || fstat(dir, &dst) < 0)
		return cordon_err(err, errno, "tls: %s", self), NULL;
	_cleanup_close_ int fd = openat(dir, TLS_MODULE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return cordon_err(err, errno, "tls: loading %s/%s", self, TLS_MODULE), NULL;
	if (!S_ISREG(st.st_mode) || !trusted_like(&st, &exe) || !trusted_like(&dst, &exe))
		return cordon_err(err, EPERM,
				  "tls: %s/%s is not trusted as cordon is (a regular file and a directory owned by uid %u, writable by no one else)",
				  self, TLS_MODULE, (unsigned)exe.st_uid), NULL;
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	/* Loaded once and never closed (OpenSSL keeps global state); a
	 * second caller racing this one gets the same handle. The file is
	 * the one checked: loaded through its descriptor. */
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!h) {
		const char *why = dlerror();
		return cordon_err(err, ENOENT, "tls: loading %s/%s: %s", self, TLS_MODULE, why ? why : "failed"), NULL;
	}
	o = dlsym(h, "tls_module_ops");
	if (!o)
		return cordon_err(err, ENOENT, "tls: %s/%s has no tls_module_ops", self, TLS_MODULE), NULL;
	__atomic_store_n(&ops, o, __ATOMIC_RELEASE);
	return o;
}
