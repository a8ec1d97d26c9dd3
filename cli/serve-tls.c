/* cordon serve over TLS (--tls-cert FILE --tls-key FILE with --listen) and
 * the rule for TCP in clear: the bearer token crosses the network in every
 * request, so a listener on an address other than loopback needs TLS, or
 * --insecure-tcp to say that something else (a mesh sidecar, a private
 * network) protects it.
 *
 * TLS is libmicrohttpd's own (GnuTLS, which cordon-serve links already
 * through it): no new library in the server's dependencies. TLS 1.3 only:
 * it has no renegotiation at all, so no client can start one, and every
 * client this API has (Python's ssl, curl, Go's kubelet probes) speaks it.
 * The handshake is bounded by the header deadline (--header-timeout, from
 * the accept: serve-limits.c), which covers it, and counts as an
 * unauthenticated connection until the request's headers are in. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <microhttpd.h>
#include "serve-ipc.h"
#include "serve-tls.h"

/* The largest PEM file read (a certificate chain or a key). */
#define PEM_MAX (256u << 10)
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3"

static struct {
	char *cert, *key;
	bool insecure;
} T;

/* A PEM file into *out (NUL-terminated). secret: a key, which no one but
 * the owner may read (as the token file, docs/api.md). 0, or -1 and a line
 * naming the file. */
static int read_pem(const char *opt, const char *path, bool secret, char **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "cordon serve: %s %s: %s\n", opt, path,
			errno == ELOOP ? "a symlink (give the file itself)" : strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	const char *bad = !S_ISREG(st.st_mode)		 ? "not a regular file" :
			  secret && (st.st_mode & 077) ? "readable or writable by group or others (chmod 600 it)" :
							 NULL;
	buf b = {0};
	if (!bad && (ipc_read_fd(fd, PEM_MAX, &b) < 0 || !b.len))
		bad = "could not be read, or is empty (at most 256 KiB)";
	close(fd);
	if (!bad && (memchr(b.p, '\0', b.len) || !memmem(b.p, b.len, "-----BEGIN ", 11)))
		bad = "not PEM (no -----BEGIN line)";
	if (!bad && !(*out = strndup(b.p, b.len)))
		bad = "out of memory";
	if (secret && b.p)
		explicit_bzero(b.p, b.len);
	buf_free(&b);
	if (bad) {
		fprintf(stderr, "cordon serve: %s %s: %s\n", opt, path, bad);
		return -1;
	}
	return 0;
}

int tls_option(const char *o, const char *v)
{
	if (strcmp(o, "--tls-cert") != 0 && strcmp(o, "--tls-key") != 0)
		return 0;
	char **dst = o[6] == 'c' ? &T.cert : &T.key;
	if (*dst) {
		fprintf(stderr, "cordon serve: %s given twice\n", o);
		return -1;
	}
	return read_pem(o, v, o[6] == 'k', dst) < 0 ? -1 : 1;
}

void tls_insecure(void)
{
	T.insecure = true;
}

bool tls_on(void)
{
	return T.cert != NULL;
}

/* 127.0.0.0/8: the host's own; nothing leaves it. */
static bool loopback(const char *listen)
{
	char host[64];
	const char *colon = strrchr(listen, ':');
	struct in_addr a;
	if (!colon || colon - listen >= (long)sizeof(host))
		return false;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - listen), listen);
	return inet_pton(AF_INET, host, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

int tls_check(const char *listen)
{
	if (!!T.cert != !!T.key) {
		fprintf(stderr, "cordon serve: --tls-cert and --tls-key go together\n");
		return -1;
	}
	if (T.cert && !listen) {
		fprintf(stderr, "cordon serve: --tls-cert and --tls-key are for --listen (the Unix socket has no TLS)\n");
		return -1;
	}
	if (T.insecure && (!listen || T.cert)) {
		fprintf(stderr, "cordon serve: --insecure-tcp is for --listen without TLS\n");
		return -1;
	}
	if (listen && !T.cert && !T.insecure && !loopback(listen)) {
		fprintf(stderr, "cordon serve: --listen %s: not a loopback address, and the bearer token would cross the network in clear: "
				"give --tls-cert FILE --tls-key FILE, or --insecure-tcp when a mesh or private network protects it (docs/serve-cluster.md)\n",
			listen);
		return -1;
	}
	if (T.cert && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		fprintf(stderr, "cordon serve: --tls-cert: this libmicrohttpd was built without TLS\n");
		return -1;
	}
	return 0;
}

int tls_mhd_options(struct MHD_OptionItem *opt, int room)
{
	if (!T.cert)
		return 0;
	if (room < 3)
		return -1;
	opt[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, T.cert};
	opt[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, T.key};
	opt[2] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)TLS_PRIORITIES};
	return 3;
}
