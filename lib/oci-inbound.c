/* Inbound traffic to a pod under egress (oci-inbound.h): the annotation's
 * ports, the listeners in the pod's network namespace and the relay
 * process that carries each accepted connection to the same port on
 * 127.0.0.1 in cordon's namespace (the sandbox init's). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <grp.h>
#include <sys/socket.h>
#include <unistd.h>
#include "oci-inbound.h"
#include "oci-common.h"
#include "proxy.h"
#include "report.h"

#define WHERE "annotation " OCI_INBOUND_ANNOTATION

_Static_assert(sizeof(((struct oci_config *)0)->inbound) / sizeof(uint16_t) == OCI_INBOUND_MAX, "c->inbound");

static const char *annotation(const struct oci_config *c)
{
	const char *v = NULL;
	for (size_t i = 0; i < c->ann_k.n; i++)
		if (strcmp(c->ann_k.v[i], OCI_INBOUND_ANNOTATION) == 0)
			v = c->ann_v.v[i];
	return v;
}

int oci_inbound_load(struct oci_config *c, cordon_error *err)
{
	const char *v = annotation(c);
	c->ninbound = 0;
	if (!v)
		return 0;
	if (c->pod_proxy)
		return 0; /* a container of the pod: the sandbox relays */
	if (!c->pod_net)
		return cordon_err(err, 0, WHERE ": applies to a pod's sandbox container holding the pod's egress (annotations "
					 "io.kubernetes.cri.container-type \"sandbox\" and run.cordon.policy with a \"network\" "
					 "section), and this container is not one");
	for (const char *p = v;;) {
		p += strspn(p, ", \t");
		if (!*p)
			break;
		char *end;
		errno = 0;
		long port = strtol(p, &end, 10);
		size_t tok = strcspn(p, ", \t");
		if (end != p + tok || errno || port < 1 || port > 65535)
			return cordon_err(err, 0, WHERE ": \"%.*s\" is not a TCP port (1-65535)", (int)(tok > 16 ? 16 : tok), p);
		if (port == PROXY_PORT)
			return cordon_err(err, 0, WHERE ": %ld is the egress proxy's port in the pod's containers' network "
						 "namespace (the pod's address would reach the proxy)", port);
		for (size_t i = 0; i < c->ninbound; i++)
			if (c->inbound[i] == port)
				return cordon_err(err, 0, WHERE ": port %ld is named twice", port);
		if (c->ninbound == OCI_INBOUND_MAX)
			return cordon_err(err, 0, WHERE ": more than %d ports", OCI_INBOUND_MAX);
		c->inbound[c->ninbound++] = (uint16_t)port;
		p += tok;
	}
	return 0;
}

/* A listening socket on every address of this network namespace, port. */
static int listen_any(uint16_t port, cordon_error *err)
{
	int one = 1, zero = 0;
	int s = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s >= 0) {
		struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = IN6ADDR_ANY_INIT};
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) == 0 &&
		    bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(s, 128) == 0)
			return s;
		int e = errno;
		close(s);
		if (e != EAFNOSUPPORT && e != EADDRNOTAVAIL)
			return cordon_err_errno(err, WHERE ": port %u in the pod's network namespace", (unsigned)port);
	}
	/* no IPv6 there: IPv4 alone */
	s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_ANY)};
	if (s >= 0)
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 128) < 0) {
		cordon_err_errno(err, WHERE ": port %u in the pod's network namespace", (unsigned)port);
		if (s >= 0)
			close(s);
		return -1;
	}
	return s;
}

#define BUFSZ 8192

/* One relayed connection: out, accepted in the pod's namespace; in, to
 * 127.0.0.1:PORT in cordon's. Each way has a buffer, read only when empty. */
struct way {
	char b[BUFSZ];
	size_t n, off;
	bool eof;  /* read its end */
	bool shut; /* shutdown(SHUT_WR) passed on */
};
struct conn {
	int out, in;
	bool connecting;
	struct way oi, io; /* out -> in, in -> out */
};

/* A socket made in cordon's namespace (the relay lives there once its
 * listeners are made), connecting to 127.0.0.1:port. -1 if not. */
static int connect_inside(uint16_t port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != EINPROGRESS) {
		close(s);
		return -1;
	}
	return s;
}

/* Moves what it can from -> w -> to: false where the connection is done
 * with (an error, or both ways at their end). */
static bool pump(int from, struct way *w, int to, short rev_from, short rev_to)
{
	if (w->n == 0 && !w->eof && (rev_from & (POLLIN | POLLHUP | POLLERR))) {
		ssize_t k = recv(from, w->b, sizeof(w->b), MSG_DONTWAIT);
		if (k > 0) {
			w->n = (size_t)k;
			w->off = 0;
		} else if (k == 0)
			w->eof = true;
		else if (errno != EAGAIN && errno != EINTR)
			return false;
	}
	if (w->off < w->n && (rev_to & (POLLOUT | POLLERR | POLLHUP))) {
		ssize_t k = send(to, w->b + w->off, w->n - w->off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k > 0)
			w->off += (size_t)k;
		else if (k < 0 && errno != EAGAIN && errno != EINTR)
			return false;
		if (w->off == w->n)
			w->n = w->off = 0;
	}
	if (w->eof && w->n == 0 && !w->shut) {
		shutdown(to, SHUT_WR);
		w->shut = true;
	}
	return true;
}

static void conn_close(struct conn **cs, size_t *n, size_t i)
{
	close(cs[i]->out);
	close(cs[i]->in);
	cs[i] = cs[--*n];
}

/* Has the container's server ended the connection (its way passed on to
 * the client, nothing of the client's waiting for it)? What is left is the
 * client's, which may hold it open for ever: dropped when the relay is
 * full (outside review attack11c). */
static bool server_ended(const struct conn *c)
{
	return !c->connecting && c->io.shut && c->oi.n == 0;
}

static _Noreturn void relay_main(const int *lfd, const uint16_t *ports, size_t nl, struct oci_inbound_counts *tally)
{
	static struct conn *cs[OCI_INBOUND_CONNS], *spare[OCI_INBOUND_CONNS];
	static struct pollfd p[OCI_INBOUND_MAX + 2 * OCI_INBOUND_CONNS];
	/* the connections' memory, mapped once: no malloc in a child forked
	 * from a process that may have threads (the proxy's resolver) */
	struct conn *pool = mmap(NULL, OCI_INBOUND_CONNS * sizeof(*pool), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pool == MAP_FAILED)
		_exit(1);
	size_t n = 0, nspare = OCI_INBOUND_CONNS;
	for (size_t i = 0; i < OCI_INBOUND_CONNS; i++)
		spare[i] = &pool[i];
	/* an accept failed for want of descriptors or memory (EMFILE, ENFILE:
	 * the host's table full): the connection stays in the backlog, which
	 * poll says is ready at once; the listeners are left out a while, or
	 * the relay (host root) would spin (outside review attack11c) */
	bool starved = false, was_full = false;
	for (;;) {
		size_t k = 0, ended = 0;
		for (size_t i = 0; i < n; i++)
			ended += server_ended(cs[i]);
		bool full = n == OCI_INBOUND_CONNS && !ended;
		if (full && !was_full)
			atomic_fetch_add(&tally->full, 1);
		was_full = full;
		for (size_t i = 0; i < nl; i++)
			p[k++] = (struct pollfd){!starved && (n < OCI_INBOUND_CONNS || ended) ? lfd[i] : -1, POLLIN, 0};
		for (size_t i = 0; i < n; i++) {
			struct conn *c = cs[i];
			short ev_out = 0, ev_in = 0;
			if (c->connecting)
				ev_in = POLLOUT;
			else {
				if (c->oi.n == 0 && !c->oi.eof)
					ev_out |= POLLIN;
				if (c->io.off < c->io.n)
					ev_out |= POLLOUT;
				if (c->io.n == 0 && !c->io.eof)
					ev_in |= POLLIN;
				if (c->oi.off < c->oi.n)
					ev_in |= POLLOUT;
			}
			/* a socket asked nothing is left out: poll reports
			 * POLLERR and POLLHUP whatever the events, and a reset
			 * peer's, polled while its way waits on the other end
			 * (a server that never reads), woke the loop at once
			 * for ever (outside review attack11c) */
			p[k++] = (struct pollfd){ev_out ? c->out : -1, ev_out, 0};
			p[k++] = (struct pollfd){ev_in ? c->in : -1, ev_in, 0};
		}
		int pr = poll(p, k, starved ? 200 : -1);
		starved = false;
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		/* the connections first (the accepts below append to cs) */
		for (size_t i = n; i-- > 0;) {
			struct conn *c = cs[i];
			short ro = p[nl + 2 * i].revents, ri = p[nl + 2 * i + 1].revents;
			bool ok = true;
			if (c->connecting) {
				if (!ri)
					continue;
				int e = 0;
				socklen_t el = sizeof(e);
				if (getsockopt(c->in, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e)
					ok = false; /* nothing listens there: the client sees its connection closed */
				c->connecting = false;
				atomic_fetch_add(ok ? &tally->connections : &tally->failed, 1);
			} else
				ok = pump(c->out, &c->oi, c->in, ro, ri) && pump(c->in, &c->io, c->out, ri, ro);
			if (!ok || (c->oi.shut && c->io.shut)) {
				spare[nspare++] = c;
				conn_close(cs, &n, i);
			}
		}
		for (size_t i = 0; i < nl; i++) {
			if (!(p[i].revents & POLLIN))
				continue;
			for (size_t j = n; n == OCI_INBOUND_CONNS && j-- > 0;)
				if (server_ended(cs[j])) {
					spare[nspare++] = cs[j];
					conn_close(cs, &n, j);
					atomic_fetch_add(&tally->dropped, 1);
				}
			if (n == OCI_INBOUND_CONNS)
				continue;
			int a = accept4(lfd[i], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (a < 0) {
				starved |= errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM;
				continue;
			}
			int in = connect_inside(ports[i]);
			if (in < 0 || !nspare) {
				atomic_fetch_add(&tally->failed, 1);
				close(a);
				if (in >= 0)
					close(in);
				continue;
			}
			struct conn *c = spare[--nspare];
			*c = (struct conn){.out = a, .in = in, .connecting = true};
			cs[n++] = c;
		}
	}
}

int oci_inbound_start(const struct oci_config *c, pid_t init, pid_t *relay, const struct oci_inbound_counts **counts,
		      cordon_error *err)
{
	*relay = 0;
	*counts = NULL;
	if (!c->ninbound)
		return 0;
	struct oci_inbound_counts *k = mmap(NULL, sizeof(*k), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (k == MAP_FAILED)
		return cordon_err_errno(err, WHERE ": the relay's counts");
	int lfd[OCI_INBOUND_MAX];
	size_t nl = 0;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)init);
	int pod = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), inner = open(path, O_RDONLY | O_CLOEXEC);
	int rc = 0;
	if (pod < 0 || inner < 0)
		rc = cordon_err_errno(err, WHERE ": the network namespaces (%s)", inner < 0 ? path : "the pod's");
	for (; rc == 0 && nl < c->ninbound; nl++)
		if ((lfd[nl] = listen_any(c->inbound[nl], err)) < 0)
			rc = -1;
	pid_t parent = getpid();
	pid_t pid = rc == 0 ? fork() : -1;
	if (rc == 0 && pid < 0)
		rc = cordon_err_errno(err, WHERE ": the relay's fork");
	if (pid == 0) {
		/* ends with the supervisor; keeps the listeners and the two
		 * namespaces alone */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(1);
		int keep[OCI_INBOUND_MAX + 2];
		memcpy(keep, lfd, nl * sizeof(int));
		keep[nl] = pod;
		keep[nl + 1] = inner;
		oci_close_fds_except(0, keep, nl + 2);
		/* Its listeners stay in the pod's namespace; it moves into
		 * cordon's for good (every socket it makes is for inside), and
		 * drops host root: nobody, no capability, no new privileges, not
		 * dumpable (outside review attack11c: it kept them all). */
		if (setns(inner, CLONE_NEWNET) < 0 || close(inner) < 0 || close(pod) < 0 || setgroups(0, NULL) < 0 ||
		    setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0 ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
			_exit(1);
		signal(SIGPIPE, SIG_IGN);
		relay_main(lfd, c->inbound, nl, k);
	}
	for (size_t i = 0; i < nl; i++)
		if (lfd[i] >= 0)
			close(lfd[i]);
	if (pod >= 0)
		close(pod);
	if (inner >= 0)
		close(inner);
	if (rc == 0) {
		*relay = pid;
		*counts = k;
	} else
		munmap(k, sizeof(*k));
	return rc;
}

void oci_inbound_report(const struct oci_config *c, const struct oci_inbound_counts *k, struct run_report *net)
{
	if (!k)
		return;
	for (size_t i = 0; i < c->ninbound && i < sizeof(net->net.inbound.ports) / sizeof(net->net.inbound.ports[0]); i++)
		net->net.inbound.ports[net->net.inbound.nports++] = c->inbound[i];
	net->net.inbound.connections = k->connections;
	net->net.inbound.dropped = k->dropped;
	net->net.inbound.failed = k->failed;
	net->net.inbound.full = k->full;
	net->net.inbound.max_conns = OCI_INBOUND_CONNS;
}
