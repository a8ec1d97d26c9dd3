/* network.transparent (issue 33): a TCP connect(2) to a declared endpoint,
 * named by one of the run's resolver's synthetic addresses or by an address
 * a rule names literally, is made by the supervisor from the host's network
 * namespace and the socket handed in over the run's
 * (SECCOMP_IOCTL_NOTIF_ADDFD, SETFD). The decision is by name:port, the
 * proxy's rule matcher; a refused one gets ECONNREFUSED at once and a
 * network denial naming name:port.
 *
 * Never waits: a connect over at once (loopback, mostly) is answered here;
 * one under way on a nonblocking socket is the run's at once (EINPROGRESS:
 * it polls the socket, as for its own); one on a blocking socket, and a name
 * without a network.resolve pin (looked up as the proxy does), go to the
 * connector (sup-connector.h), which answers when they are over.
 *
 * A port with method/path rules or an injected secret has its requests
 * read: the connection handed in goes to the proxy (sup-handoff.h), which
 * reads it as it reads a CONNECT to name:port.
 *
 * Not yet: byte counts of the connections handed in to the endpoint. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <netinet/tcp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sup-observe-net.h"
#include "pxaddr.h"
#include "cleanup.h"
#include "compat.h"
#include "observe.h"
#include "proxy.h"
#include "pxhttp.h"
#include "pxrule.h"
#include "sup-connector.h"
#include "sup-dns.h"
#include "sup-handoff.h"
#include "sup-observe-deny.h"

/* The address name's connections go to: its network.resolve pin, or the
 * host's loopback for a rule that names localhost literally; false: to be
 * looked up. */
static bool pinned(const strv *res, const char *name, bool literal, uint16_t port, struct sockaddr_storage *dst,
		   socklen_t *len)
{
	if (literal && strcasecmp(name, "localhost") == 0) {
		strv lo = {.v = (char *[]){"localhost=127.0.0.1"}, .n = 1};
		return pxrule_pin(&lo, name, port, dst, len);
	}
	return pxrule_pin(res, name, port, dst, len);
}

/* Is socket s one of the host's network namespace (the supervisor's: one
 * handed in), not of the run's own? */
static bool host_socket(int s)
{
	struct stat a, b;
	_cleanup_close_ int ns = ioctl(s, SIOCGSKNS);
	return ns >= 0 && fstat(ns, &a) == 0 && stat("/proc/thread-self/ns/net", &b) == 0 && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

bool observer_host_socket(struct observer *o, int fd)
{
	if (!o->dns)
		return false;
	_cleanup_close_ int rs = observer_run_fd((pid_t)o->req->pid, fd);
	return rs >= 0 && host_socket(rs);
}

static int answer(struct observer *o, int error)
{
	return connect_answer(o->listener, o->req->id, error) < 0 ? -1 : 1;
}

static int answer_continue(struct observer *o)
{
	struct seccomp_notif_resp r = {.id = o->req->id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
	if (ioctl(o->listener, SECCOMP_IOCTL_NOTIF_SEND, &r) < 0 && errno != ENOENT)
		return -1;
	return 1;
}

/* Refused by the rules: a denial naming what was asked, ECONNREFUSED.
 * Returns 2 (answered, a denial) or -1. */
static int refuse(struct observer *o, struct run_report *rep, const char *what, const char *why)
{
	char t[400];
	snprintf(t, sizeof(t), "%s%s", what, why ? why : "");
	observer_deny(o, rep, "network", t);
	atomic_fetch_add(&o->conn_counts.refused, 1);
	return answer(o, ECONNREFUSED) < 0 ? -1 : 2;
}

/* Which rules admit host:port: none (false), or some; *literal: one names
 * it literally; *why: set when only the proxy may take it (its requests
 * must be read). */
static bool decide(const struct observer *o, const char *host, uint16_t port, bool *literal, const char **why)
{
	bool any = false;
	*literal = false;
	*why = NULL;
	for (size_t i = 0; o->net_allow && i < o->net_allow->n && !any; i++)
		any = proxy_rule_matches(o->net_allow->v[i], host, port, literal);
	/* One decision with the proxy's: a host:port that only method/path
	 * rules admit, or that a secret is injected to, has its requests read
	 * there; a raw connection to it would pass unread. */
	if (any && o->net_rules && pxhttp_scoped(o->net_rules, host, port))
		*why = " (method/path rules: its requests are read by the proxy)";
	for (size_t i = 0; any && !*why && i < o->npsec; i++)
		if (pxhttp_secret_scoped(&o->psec[i], host, port))
			*why = " (a secret is injected: its requests are read by the proxy)";
	return any;
}

/* Make the connection to dst for the run (or hand it to the connector). */
static int connect_for_run(struct observer *o, struct connect_req *req, const struct sockaddr_storage *dst,
			   socklen_t dl)
{
	int sock = -1;
	int r = connect_begin(req, (const struct sockaddr *)dst, dl, &sock);
	if (r != 0 && r != EINPROGRESS) {
		atomic_fetch_add(&o->conn_counts.failed, 1);
		return answer(o, r);
	}
	if (r == 0 || (req->fl & O_NONBLOCK)) {
		atomic_fetch_add(&o->conn_counts.handed_in, 1);
		int h = connect_hand_in(o->listener, req, sock, r);
		close(sock);
		return h < 0 ? -1 : 1;
	}
	req->sock = sock;
	if (connector_add(o->conn, req))
		return 1;
	close(sock);
	return answer(o, ECONNREFUSED);
}

/* name:port, whose requests the proxy reads: the run's socket is
 * connected to the proxy's way in (the host's loopback: over at once). */
static int connect_to_proxy(struct observer *o, struct connect_req *req)
{
	struct sockaddr_in dst = handoff_addr(o->handoff);
	struct handoff_announcer a = {o->handoff, req->name, req->port, 0, false};
	int sock = -1;
	int r = connect_begin_hook(req, (struct sockaddr *)&dst, sizeof(dst), &sock, handoff_bind_announce, &a);
	if (a.full) {
		/* the table is full: as the connector's bound */
		atomic_fetch_add(&o->conn_counts.over_limit, 1);
		return answer(o, ECONNREFUSED);
	}
	if (r != 0 && r != EINPROGRESS) {
		if (a.src)
			handoff_withdraw(o->handoff, a.src);
		atomic_fetch_add(&o->conn_counts.failed, 1);
		return answer(o, r == EAGAIN ? ECONNREFUSED : r);
	}
	atomic_fetch_add(&o->conn_counts.proxied, 1);
	req->tally = NULL; /* the proxy counts its bytes */
	if (r == EINPROGRESS && !(req->fl & O_NONBLOCK)) {
		/* A blocking connect must not come back EINPROGRESS (outside
		 * review, attack9): the loopback's handshake is over once
		 * connect returned, unless the listener's backlog was full (its
		 * SYN dropped, retried): then the connector waits for it. */
		struct tcp_info ti;
		socklen_t tl = sizeof(ti);
		if (getsockopt(sock, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0 && ti.tcpi_state == TCP_ESTABLISHED) {
			r = 0;
		} else {
			req->sock = sock;
			if (connector_add(o->conn, req))
				return 1;
			close(sock);
			return answer(o, ECONNREFUSED);
		}
	}
	atomic_fetch_add(&o->conn_counts.handed_in, 1);
	int h = connect_hand_in(o->listener, req, sock, r);
	close(sock);
	return h < 0 ? -1 : 1;
}

/* A connect to the run's own loopback that is for the host's instead: a
 * rule names the address literally (127.0.0.1:5432, localhost:5432) and no
 * listener of the run takes it (the run's own server wins). One with
 * method/path rules goes through the proxy, as a name's does. */
static bool host_loopback(struct observer *o, const char *host, uint16_t port, const struct sockaddr_storage *ss)
{
	bool literal;
	const char *why;
	return decide(o, host, port, &literal, &why) && literal && (!why || o->handoff) &&
	       !observer_run_listens(o, ss, port);
}

int observer_intercept_connect(struct observer *o, struct run_report *rep, int fd, uint64_t addr, uint64_t addrlen)
{
	if (!o->dns || !o->conn)
		return 0;
	char target[INET6_ADDRSTRLEN + 16];
	uint16_t port;
	bool loop;
	struct sockaddr_storage ss;
	pid_t pid = (pid_t)o->req->pid;
	_cleanup_close_ int rs = observer_run_fd(pid, fd);
	/* A socket handed in is of the host's network namespace: never given
	 * back to the kernel's connect once closed (disconnected with
	 * AF_UNSPEC, or failed), which would take it anywhere undecided
	 * (outside review, attack8). Only a new decision connects it again. */
	bool hosts = rs >= 0 && host_socket(rs);
	if (!observer_read_inet(o, addr, addrlen, target, sizeof(target), &port, &loop, &ss))
		return hosts ? answer(o, EOPNOTSUPP) : 0;
	if (hosts) {
		struct tcp_info hi;
		socklen_t hl = sizeof(hi);
		int e = 0;
		socklen_t el = sizeof(e);
		if (getsockopt(rs, IPPROTO_TCP, TCP_INFO, &hi, &hl) == 0 && hi.tcpi_state != TCP_CLOSE)
			return answer_continue(o); /* is it done? the kernel's to say (EALREADY, EISCONN) */
		if (getsockopt(rs, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e)
			return answer(o, e); /* the handed-in connect's own failure */
	}
	/* The name the address stands for, or the address itself (a rule
	 * may name it literally). */
	const char *name = loop ? NULL : dnsd_name_of(o->dns, (struct sockaddr *)&ss, sizeof(ss));
	char host[INET6_ADDRSTRLEN];
	if (!name) {
		const void *a = ss.ss_family == AF_INET ? (const void *)&((struct sockaddr_in *)&ss)->sin_addr
							: (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr;
		name = inet_ntop(ss.ss_family, a, host, sizeof(host));
		if (!name)
			return hosts ? refuse(o, rep, target, NULL) : 0;
	}
	int type = -1, family = -1;
	socklen_t l = sizeof(type);
	if (rs < 0 || getsockopt(rs, SOL_SOCKET, SO_TYPE, &type, &l) < 0)
		return hosts ? refuse(o, rep, target, NULL) : 0; /* not a socket of the caller's: the kernel says so */
	l = sizeof(family);
	getsockopt(rs, SOL_SOCKET, SO_DOMAIN, &family, &l);
	if (loop && (type != SOCK_STREAM || !host_loopback(o, host, port, &ss)))
		return hosts ? refuse(o, rep, target, NULL) : 0; /* the run's own loopback, as without transparent */
	if (type == SOCK_DGRAM)
		/* A UDP connect sends nothing (glibc's getaddrinfo connects one
		 * to each answer to sort them): the kernel decides (no route).
		 * Not a denial for a synthetic address; any other one is
		 * recorded and refused as a datagram's would be. */
		return name == host ? (hosts ? refuse(o, rep, target, NULL) : 0) : answer_continue(o);
	char what[300];
	host_port(what, sizeof(what), name, port);
	if (type != SOCK_STREAM)
		return name == host ? (hosts ? refuse(o, rep, target, NULL) : 0) : refuse(o, rep, what, NULL);
	/* A socket that is connected or connecting already (ours, handed in:
	 * the run asks again whether it is done) is the kernel's to answer. */
	struct tcp_info ti;
	l = sizeof(ti);
	if (getsockopt(rs, IPPROTO_TCP, TCP_INFO, &ti, &l) == 0 && ti.tcpi_state != TCP_CLOSE)
		return answer_continue(o);
	bool literal;
	const char *why;
	if (!decide(o, name == host ? host : name, port, &literal, &why) || (why && !o->handoff))
		return name == host ? (hosts ? refuse(o, rep, target, NULL) : 0) : refuse(o, rep, what, why);
	if (name == host && !literal)
		return hosts ? refuse(o, rep, target, NULL) : 0; /* an address only a name's rule admits: not by address */
	struct connect_req req = {
		.id = o->req->id, .fd = fd, .family = family, .sock = -1, .name = name, .port = port, .tally = o->tally};
	int fl = fcntl(rs, F_GETFL);
	if (fl < 0 || !observer_run_fd_cloexec(pid, fd, &req.cloexec))
		return answer(o, ECONNREFUSED);
	req.fl = fl;
	connect_opts_read(rs, &req.opts);
	if (why)
		return connect_to_proxy(o, &req);
	struct sockaddr_storage dst;
	socklen_t dl = 0;
	if (name == host) {
		/* By address: that address, in the host's namespace (loopback:
		 * the host's). */
		dst = ss;
		dl = ss.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
		return connect_for_run(o, &req, &dst, dl);
	}
	if (pinned(o->net_resolve, name, literal, port, &dst, &dl))
		return connect_for_run(o, &req, &dst, dl);
	/* Looked up as the proxy does, by the connector. */
	req.pgid = rep->attribute ? observer_run_pgid(pid) : 0;
	if (connector_add(o->conn, &req))
		return 1;
	return answer(o, ECONNREFUSED);
}
