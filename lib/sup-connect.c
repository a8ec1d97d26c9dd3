/* network.transparent, WIP (issue 33 step d): a connect(2) to one of the
 * run's resolver's synthetic addresses is made by the supervisor, from the
 * host's network namespace, and the connected socket handed in over the
 * run's (SECCOMP_IOCTL_NOTIF_ADDFD, SETFD); the connect returns 0. The
 * decision is by name:port (the proxy's rule matcher); refused connects get
 * ECONNREFUSED at once and a network denial naming name:port.
 *
 * Not yet: rules with methods/paths or secrets (refused here), names
 * without a network.resolve pin (refused: real DNS next), byte counts, a
 * connect that takes time (this thread waits for it: loopback only). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sup-observe-net.h"
#include "cleanup.h"
#include "observe.h"
#include "proxy.h"
#include "pxhttp.h"
#include "pxrule.h"
#include "sup-dns.h"
#include "sup-observe-deny.h"

#define CONNECT_WAIT_MS 10000

/* The run's fd's status flags (O_NONBLOCK) and whether it is close-on-exec,
 * from /proc/PID/fdinfo/FD; false if unknown. */
static bool fd_flags(pid_t pid, int fd, int *fl)
{
	char path[64], text[512];
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	_cleanup_close_ int f = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (f < 0)
		return false;
	ssize_t n = read(f, text, sizeof(text) - 1);
	if (n <= 0)
		return false;
	text[n] = '\0';
	const char *p = strstr(text, "flags:");
	if (!p)
		return false;
	*fl = (int)strtol(p + 6, NULL, 8);
	return true;
}

/* The pin for name in network.resolve ("name=address"), as an address
 * with port; false without one. */
static bool pinned(const strv *res, const char *name, uint16_t port, struct sockaddr_storage *dst, socklen_t *len)
{
	size_t nl = strlen(name);
	for (size_t i = 0; res && i < res->n; i++) {
		const char *e = res->v[i];
		if (strncmp(e, name, nl) != 0 || e[nl] != '=')
			continue;
		memset(dst, 0, sizeof(*dst));
		struct sockaddr_in *s4 = (struct sockaddr_in *)dst;
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)dst;
		if (inet_pton(AF_INET, e + nl + 1, &s4->sin_addr) == 1) {
			s4->sin_family = AF_INET;
			s4->sin_port = htons(port);
			*len = sizeof(*s4);
			return true;
		}
		if (inet_pton(AF_INET6, e + nl + 1, &s6->sin6_addr) == 1) {
			s6->sin6_family = AF_INET6;
			s6->sin6_port = htons(port);
			*len = sizeof(*s6);
			return true;
		}
	}
	return false;
}

static int answer(struct observer *o, int error)
{
	struct seccomp_notif_resp r = {.id = o->req->id, .error = -error};
	if (ioctl(o->listener, SECCOMP_IOCTL_NOTIF_SEND, &r) < 0 && errno != ENOENT)
		return -1;
	return 1;
}

int observer_intercept_connect(struct observer *o, struct run_report *rep, int fd, uint64_t addr, uint64_t addrlen)
{
	if (!o->dns)
		return 0;
	char target[INET6_ADDRSTRLEN + 16];
	uint16_t port;
	bool loop;
	struct sockaddr_storage ss;
	if (!observer_read_inet(o, addr, addrlen, target, sizeof(target), &port, &loop, &ss))
		return 0;
	const char *name = dnsd_name_of(o->dns, (struct sockaddr *)&ss, sizeof(ss));
	if (!name)
		return 0;
	pid_t pid = (pid_t)o->req->pid;
	char what[300];
	snprintf(what, sizeof(what), "%s:%u", name, port);
	int type = observer_socket_type(pid, fd);
	if (type == SOCK_DGRAM) {
		/* A UDP connect sends nothing (glibc's getaddrinfo connects one
		 * to each answer to sort them): the kernel decides (no route),
		 * not a denial; a datagram sent on it has no route either. */
		struct seccomp_notif_resp r = {.id = o->req->id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
		if (ioctl(o->listener, SECCOMP_IOCTL_NOTIF_SEND, &r) < 0 && errno != ENOENT)
			return -1;
		return 1;
	}
	bool ok = type == SOCK_STREAM;
	bool any = false;
	for (size_t i = 0; ok && o->net_allow && i < o->net_allow->n && !any; i++)
		any = proxy_rule_matches(o->net_allow->v[i], name, port, NULL);
	/* One decision with the proxy's: a host:port that only method/path
	 * rules admit, or that a secret is injected to, has its requests read
	 * there; a raw connection to it would pass unread. */
	const char *why = NULL;
	if (ok && any && o->net_rules && pxhttp_scoped(o->net_rules, name, port))
		why = " (method/path rules: through the proxy only, for now)";
	for (size_t i = 0; ok && any && !why && i < o->npsec; i++)
		if (pxhttp_secret_scoped(&o->psec[i], name, port))
			why = " (a secret is injected: through the proxy only, for now)";
	struct sockaddr_storage dst;
	socklen_t dl = 0;
	if (!ok || !any || why || !pinned(o->net_resolve, name, port, &dst, &dl)) {
		char t[400];
		snprintf(t, sizeof(t), "%s%s", what, why ? why : "");
		observer_deny(o, rep, "network", t);
		return answer(o, ECONNREFUSED);
	}
	int fl = 0;
	if (!fd_flags(pid, fd, &fl))
		return answer(o, ECONNREFUSED);
	_cleanup_close_ int s = socket(dst.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return answer(o, errno);
	/* At most CONNECT_WAIT_MS: this thread answers every notification of
	 * the run meanwhile (WIP: a pending connect should not hold it). */
	if (connect(s, (struct sockaddr *)&dst, dl) < 0) {
		if (errno != EINPROGRESS)
			return answer(o, errno);
		struct pollfd p = {.fd = s, .events = POLLOUT};
		int e = 0;
		socklen_t el = sizeof(e);
		if (poll(&p, 1, CONNECT_WAIT_MS) <= 0)
			return answer(o, ETIMEDOUT);
		if (getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e)
			return answer(o, e ? e : errno);
	}
	if (!(fl & O_NONBLOCK))
		fcntl(s, F_SETFL, 0);
	struct seccomp_notif_addfd af = {.id = o->req->id, .flags = SECCOMP_ADDFD_FLAG_SETFD, .srcfd = (uint32_t)s,
					 .newfd = (uint32_t)fd, .newfd_flags = (fl & O_CLOEXEC) ? O_CLOEXEC : 0};
	if (ioctl(o->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &af) < 0)
		return errno == ENOENT ? 1 : answer(o, ECONNREFUSED);
	return answer(o, 0);
}
