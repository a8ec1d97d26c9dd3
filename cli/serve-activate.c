/* cordon serve under systemd's socket activation (sd_listen_fds(3), by
 * hand: no libsystemd). A unit's .socket passes the listening socket as
 * descriptor 3 with LISTEN_PID (this process) and LISTEN_FDS (1); the
 * server takes it in place of binding its own, after checking that it is
 * what the command line says the server listens on: a listening stream
 * socket, a Unix one bound at --socket PATH, or an IPv4 one bound at
 * --listen HOST:PORT. The variables are removed so that nothing the server
 * starts sees them. deploy/systemd/, docs/install.md. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "serve-activate.h"

#define LISTEN_FDS_START 3

static int bad(const char *what)
{
	fprintf(stderr, "cordon serve: socket activation: %s\n", what);
	return -1;
}

static bool num(const char *s, long *out)
{
	char *end = NULL;
	errno = 0;
	long v = s && *s ? strtol(s, &end, 10) : -1;
	if (!s || !*s || errno || *end || v < 0)
		return false;
	*out = v;
	return true;
}

/* Is fd bound where the options say? want: "unix PATH" or "HOST:PORT". */
static int check_bound(int fd, const char *socket_path, const char *listen_spec)
{
	int domain = 0, type = 0, acc = 0;
	socklen_t l = sizeof(int);
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
		return bad("descriptor 3 (LISTEN_FDS) is not a socket");
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &(socklen_t){sizeof(int)}) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &(socklen_t){sizeof(int)}) < 0)
		return bad(strerror(errno));
	if (type != SOCK_STREAM || !acc)
		return bad("descriptor 3 is not a listening stream socket (ListenStream= in the .socket unit)");
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	memset(&ss, 0, sizeof(ss));
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return bad(strerror(errno));
	char msg[512];
	if (socket_path) {
		const struct sockaddr_un *u = (const struct sockaddr_un *)&ss;
		size_t n = sl > offsetof(struct sockaddr_un, sun_path) ? sl - offsetof(struct sockaddr_un, sun_path) : 0;
		char got[sizeof(u->sun_path) + 1] = "";
		memcpy(got, u->sun_path, n < sizeof(u->sun_path) ? n : sizeof(u->sun_path));
		if (domain != AF_UNIX || got[0] == 0 || strcmp(got, socket_path) != 0) {
			snprintf(msg, sizeof(msg), "the socket passed is %s%s, not --socket %s",
				 domain == AF_UNIX ? "bound at " : "not a Unix socket", domain == AF_UNIX ? got : "",
				 socket_path);
			return bad(msg);
		}
		return 0;
	}
	const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
	char host[INET_ADDRSTRLEN] = "", got[INET_ADDRSTRLEN + 8] = "";
	if (domain == AF_INET && inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host)))
		snprintf(got, sizeof(got), "%s:%u", host, (unsigned)ntohs(in->sin_port));
	if (domain != AF_INET || strcmp(got, listen_spec) != 0) {
		snprintf(msg, sizeof(msg), "the socket passed is %s%s, not --listen %s",
			 domain == AF_INET ? "bound at " : "not an IPv4 socket", got, listen_spec);
		return bad(msg);
	}
	return 0;
}

int serve_activated_socket(const char *socket_path, const char *listen_spec)
{
	const char *pid_s = getenv("LISTEN_PID"), *fds_s = getenv("LISTEN_FDS");
	if (!pid_s && !fds_s)
		return SERVE_NOT_ACTIVATED;
	long pid = 0, nfds = 0;
	bool ours = num(pid_s, &pid) && pid == (long)getpid();
	bool nok = num(fds_s, &nfds);
	/* sd_listen_fds(unset_environment = true): nothing started sees them */
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (!ours)
		return SERVE_NOT_ACTIVATED; /* meant for another process */
	if (!nok || nfds != 1) {
		char msg[160];
		snprintf(msg, sizeof(msg), "LISTEN_FDS=%s: cordon serve takes exactly one socket", fds_s ? fds_s : "");
		return bad(msg);
	}
	int fd = LISTEN_FDS_START;
	if (check_bound(fd, socket_path, listen_spec) < 0)
		return -1;
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return bad(strerror(errno));
	return fd;
}
