/* TLS loaded on demand (the cordon program): cordon-tls.so, the module
 * meson builds from tls.c with libssl and libcrypto linked statically, is
 * loaded from the directory of the running executable (as cordon-serve is
 * found) on the first call, that is only by a run whose proxy opens TLS
 * connections. Every other run starts without relocating OpenSSL's tables
 * (tls.h). */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "tls.h"

#define TLS_MODULE "cordon-tls.so"

const struct tls_ops *tls_ops_get(cordon_error *err)
{
	static const struct tls_ops *ops;
	const struct tls_ops *o = __atomic_load_n(&ops, __ATOMIC_ACQUIRE);
	if (o)
		return o;
	char self[PATH_MAX], path[PATH_MAX + sizeof(TLS_MODULE) + 1];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return cordon_err(err, errno, "tls: /proc/self/exe"), NULL;
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/%s", self, TLS_MODULE);
	/* Loaded once and never closed (OpenSSL keeps global state); a
	 * second caller racing this one gets the same handle. */
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!h) {
		const char *why = dlerror();
		return cordon_err(err, ENOENT, "tls: loading %s: %s", path, why ? why : "failed"), NULL;
	}
	o = dlsym(h, "tls_module_ops");
	if (!o)
		return cordon_err(err, ENOENT, "tls: %s has no tls_module_ops", path), NULL;
	__atomic_store_n(&ops, o, __ATOMIC_RELEASE);
	return o;
}
