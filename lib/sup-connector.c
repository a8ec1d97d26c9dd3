/* network.transparent's connects that take time: the connector thread
 * (sup-connector.h), and the hand-in both it and the observer use. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "sup-connector.h"
#include "cleanup.h"
#include "clock.h"
#include "pxaddr.h"
#include "sup-tally.h"

#define TICK_MS 1000
#define WAKE_TAG UINT64_MAX       /* epoll data: new work or stop */
#define DNS_TAG (UINT64_MAX - 1)  /* epoll data: a lookup is done */
#define TALLY_TAG (UINT64_MAX - 2) /* epoll data: sockets freed (sup-tally.h) */

/* A slot's state: FREE and NEW are set under the lock (the observer takes
 * a FREE one and makes it NEW); the rest is the connector's alone. */
enum slot_state { S_FREE, S_NEW, S_RESOLVING, S_CONNECTING };

struct slot {
	enum slot_state st;
	bool gone; /* the task left while its lookup runs */
	struct connect_req req;
	char name[256];
	struct gaicb gai;
	struct addrinfo hints;
	struct sigevent sev;
};

struct connector {
	int listener, epfd, wake, dns;
	struct run_report *rep;
	atomic_bool *violated;
	int pidfd;
	struct connect_counts *counts;
	struct tally *tally;
	pthread_mutex_t mu;  /* the slots' FREE and NEW, between the observer and us */
	atomic_bool stop;
	pthread_t thread;
	bool started;
	struct slot slot[CONNECTOR_MAX];
};

/* A connector whose lookups outlived connector_stop's wait: never freed
 * under them (as the proxy's, sup-proxy.c). */
static struct connector *orphan[4];

static const struct {
	int level, name;
} int_opts[CONNECT_INT_OPTS] = {
	{SOL_SOCKET, SO_KEEPALIVE}, {SOL_SOCKET, SO_PRIORITY}, {IPPROTO_TCP, TCP_NODELAY},
	{IPPROTO_TCP, TCP_KEEPIDLE}, {IPPROTO_TCP, TCP_KEEPINTVL}, {IPPROTO_TCP, TCP_KEEPCNT},
	{IPPROTO_TCP, TCP_USER_TIMEOUT},
};

void connect_opts_read(int s, struct connect_opts *o)
{
	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i < CONNECT_INT_OPTS; i++) {
		socklen_t l = sizeof(o->v[i]);
		o->have[i] = getsockopt(s, int_opts[i].level, int_opts[i].name, &o->v[i], &l) == 0;
	}
	socklen_t l1 = sizeof(o->rcvto), l2 = sizeof(o->sndto), l3 = sizeof(o->linger);
	o->have_to = getsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &o->rcvto, &l1) == 0 &&
		     getsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &o->sndto, &l2) == 0;
	o->have_linger = getsockopt(s, SOL_SOCKET, SO_LINGER, &o->linger, &l3) == 0;
}

static void opts_set(int s, const struct connect_opts *o)
{
	for (size_t i = 0; i < CONNECT_INT_OPTS; i++)
		if (o->have[i])
			setsockopt(s, int_opts[i].level, int_opts[i].name, &o->v[i], sizeof(o->v[i]));
	if (o->have_to) {
		setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &o->rcvto, sizeof(o->rcvto));
		setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &o->sndto, sizeof(o->sndto));
	}
	if (o->have_linger)
		setsockopt(s, SOL_SOCKET, SO_LINGER, &o->linger, sizeof(o->linger));
}

int connect_begin(struct connect_req *req, const struct sockaddr *dst, socklen_t len, int *sock)
{
	return connect_begin_hook(req, dst, len, sock, NULL, NULL);
}

int connect_begin_hook(struct connect_req *req, const struct sockaddr *dst, socklen_t len, int *sock,
		       int (*before)(int s, void *arg), void *arg)
{
	struct sockaddr_in6 m;
	if (req->family == AF_INET6 && dst->sa_family == AF_INET) {
		/* The run's IPv6 socket stays one: getpeername, getsockname and
		 * what the program does with them see the family it made. */
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)dst;
		memset(&m, 0, sizeof(m));
		m.sin6_family = AF_INET6;
		m.sin6_port = s4->sin_port;
		m.sin6_addr.s6_addr[10] = m.sin6_addr.s6_addr[11] = 0xff;
		memcpy(&m.sin6_addr.s6_addr[12], &s4->sin_addr, 4);
		dst = (const struct sockaddr *)&m;
		len = sizeof(m);
	}
	if (len <= sizeof(req->peer))
		memcpy(&req->peer, dst, len);
	_cleanup_close_ int s = socket(dst->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0)
		return errno;
	if (dst->sa_family == AF_INET6) {
		int zero = 0; /* the host's bindv6only aside: ::ffff:a.b.c.d works */
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	}
	opts_set(s, &req->opts);
	int b = before ? before(s, arg) : 0;
	if (b)
		return b;
	if (connect(s, dst, len) < 0 && errno != EINPROGRESS)
		return errno;
	int r = errno == EINPROGRESS ? EINPROGRESS : 0;
	*sock = TAKE_FD(s);
	return r;
}

int connect_answer(int listener, uint64_t id, int error)
{
	struct seccomp_notif_resp r = {.id = id, .error = -error};
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &r) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

int connect_hand_in(int listener, const struct connect_req *req, int sock, int error)
{
	/* The run's blocking socket blocks; O_NONBLOCK as its file had it. */
	int fl = fcntl(sock, F_GETFL);
	if (fl >= 0)
		fcntl(sock, F_SETFL, (fl & ~O_NONBLOCK) | (req->fl & O_NONBLOCK));
	struct seccomp_notif_addfd af = {.id = req->id,
					 .flags = SECCOMP_ADDFD_FLAG_SETFD,
					 .srcfd = (uint32_t)sock,
					 .newfd = (uint32_t)req->fd,
					 .newfd_flags = req->cloexec ? O_CLOEXEC : 0};
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &af) < 0)
		return errno == ENOENT ? 0 : connect_answer(listener, req->id, ECONNREFUSED);
	if (req->tally)
		tally_add(req->tally, sock, (const struct sockaddr *)&req->peer, req->name, req->port);
	return connect_answer(listener, req->id, error);
}

static void dns_notify(union sigval v)
{
	uint64_t one = 1;
	if (write(v.sival_int, &one, sizeof(one)) < 0) { /* the counter is full: a wake-up is due anyway */ }
}

static void slot_free(struct connector *c, size_t i)
{
	struct slot *s = &c->slot[i];
	if (s->req.sock >= 0) {
		epoll_ctl(c->epfd, EPOLL_CTL_DEL, s->req.sock, NULL);
		close(s->req.sock);
	}
	if (s->gai.ar_result)
		freeaddrinfo(s->gai.ar_result);
	pthread_mutex_lock(&c->mu);
	memset(s, 0, sizeof(*s));
	s->req.sock = -1;
	s->st = S_FREE;
	pthread_mutex_unlock(&c->mu);
}

/* The connect is over: hand the socket in (error 0) or fail the call. */
static void finish(struct connector *c, size_t i, int error)
{
	struct slot *s = &c->slot[i];
	if (error) {
		atomic_fetch_add(&c->counts->failed, 1);
		connect_answer(c->listener, s->req.id, error);
	} else {
		atomic_fetch_add(&c->counts->handed_in, 1);
		connect_hand_in(c->listener, &s->req, s->req.sock, 0);
	}
	slot_free(c, i);
}

/* The connect is under way: a nonblocking socket is the run's at once (it
 * polls it, as for a connect of its own); a blocking one once it is over. */
static void started(struct connector *c, size_t i, int r)
{
	struct slot *s = &c->slot[i];
	if (r != EINPROGRESS) {
		finish(c, i, r);
		return;
	}
	if (s->req.fl & O_NONBLOCK) {
		atomic_fetch_add(&c->counts->handed_in, 1);
		connect_hand_in(c->listener, &s->req, s->req.sock, EINPROGRESS);
		slot_free(c, i);
		return;
	}
	s->st = S_CONNECTING;
	struct epoll_event ev = {.events = EPOLLOUT | EPOLLONESHOT, .data.u64 = i};
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, s->req.sock, &ev) < 0)
		finish(c, i, ECONNREFUSED);
}

static void deny(struct connector *c, size_t i, const char *why)
{
	struct slot *s = &c->slot[i];
	char t[400];
	snprintf(t, sizeof(t), "%s:%u (%s)", s->name, s->req.port, why);
	report_add_denial_by(c->rep, "network", t, s->req.pgid);
	atomic_fetch_add(&c->counts->refused, 1);
	atomic_store(c->violated, true);
	if (c->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
	connect_answer(c->listener, s->req.id, ECONNREFUSED);
	slot_free(c, i);
}

/* A lookup is over: the first address a name may lead to (the proxy's
 * checks: never loopback, private, link-local, ...), connected to. */
static void resolved(struct connector *c, size_t i)
{
	struct slot *s = &c->slot[i];
	if (s->gone) {
		slot_free(c, i);
		return;
	}
	if (gai_error(&s->gai) != 0 || !s->gai.ar_result) {
		finish(c, i, EHOSTUNREACH);
		return;
	}
	for (struct addrinfo *ai = s->gai.ar_result; ai; ai = ai->ai_next) {
		if (proxy_addr_forbidden(ai->ai_addr))
			continue;
		struct sockaddr_storage ss;
		memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
		if (ss.ss_family == AF_INET)
			((struct sockaddr_in *)&ss)->sin_port = htons(s->req.port);
		else
			((struct sockaddr_in6 *)&ss)->sin6_port = htons(s->req.port);
		started(c, i, connect_begin(&s->req, (struct sockaddr *)&ss, ai->ai_addrlen, &s->req.sock));
		return;
	}
	deny(c, i, "it resolves to a loopback, link-local or private address, which a name may not lead to");
}

static void lookup(struct connector *c, size_t i)
{
	struct slot *s = &c->slot[i];
	s->st = S_RESOLVING;
	s->hints.ai_socktype = SOCK_STREAM;
	s->hints.ai_family = AF_UNSPEC;
	s->gai.ar_name = s->name;
	s->gai.ar_request = &s->hints;
	s->sev.sigev_notify = SIGEV_THREAD;
	s->sev.sigev_notify_function = dns_notify;
	s->sev.sigev_value.sival_int = c->dns;
	struct gaicb *list[] = {&s->gai};
	if (getaddrinfo_a(GAI_NOWAIT, list, 1, &s->sev) != 0)
		finish(c, i, EHOSTUNREACH);
}

/* Every 1 s: a task that is gone (killed, or its call interrupted: a
 * restarted call is a new notification) frees its slot. */
static void tick(struct connector *c)
{
	for (size_t i = 0; i < CONNECTOR_MAX; i++) {
		struct slot *s = &c->slot[i];
		if ((s->st != S_RESOLVING && s->st != S_CONNECTING) || s->gone)
			continue;
		uint64_t id = s->req.id;
		if (ioctl(c->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0)
			continue;
		if (s->st == S_RESOLVING)
			s->gone = true; /* freed when the lookup is over */
		else
			slot_free(c, i);
	}
}

static void *connector_main(void *arg)
{
	struct connector *c = arg;
	uint64_t next_tick = mono_ns() + TICK_MS * 1000000ULL;
	while (!atomic_load(&c->stop)) {
		struct epoll_event ev[16];
		int n = epoll_wait(c->epfd, ev, 16, TICK_MS);
		for (int k = 0; k < n; k++) {
			uint64_t d = ev[k].data.u64, v;
			if (d == TALLY_TAG) {
				tally_drain(c->tally);
				continue;
			}
			if (d == WAKE_TAG || d == DNS_TAG) {
				if (read(d == WAKE_TAG ? c->wake : c->dns, &v, sizeof(v)) < 0) { /* nothing pending */ }
				continue;
			}
			if (d >= CONNECTOR_MAX || c->slot[d].st != S_CONNECTING)
				continue;
			int e = 0;
			socklen_t el = sizeof(e);
			if (getsockopt(c->slot[d].req.sock, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
				e = errno;
			finish(c, d, e);
		}
		/* New requests and done lookups. */
		for (size_t i = 0; i < CONNECTOR_MAX; i++) {
			struct slot *s = &c->slot[i];
			pthread_mutex_lock(&c->mu);
			enum slot_state st = s->st;
			pthread_mutex_unlock(&c->mu);
			if (st == S_RESOLVING && gai_error(&s->gai) != EAI_INPROGRESS)
				resolved(c, i);
			else if (st == S_NEW && s->req.sock >= 0)
				started(c, i, EINPROGRESS);
			else if (st == S_NEW)
				lookup(c, i);
		}
		if (mono_ns() >= next_tick) {
			tick(c);
			next_tick = mono_ns() + TICK_MS * 1000000ULL;
		}
	}
	return NULL;
}

int connector_start(struct connector **out, int listener, struct run_report *rep, atomic_bool *violated, int pidfd,
		    struct connect_counts *counts, struct tally *tally, cordon_error *err)
{
	struct connector *c = calloc(1, sizeof(*c));
	if (!c)
		return cordon_oom(err);
	c->listener = listener;
	c->rep = rep;
	c->violated = violated;
	c->pidfd = pidfd;
	c->counts = counts;
	c->tally = tally;
	for (size_t i = 0; i < CONNECTOR_MAX; i++)
		c->slot[i].req.sock = -1;
	pthread_mutex_init(&c->mu, NULL);
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	c->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	c->dns = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct epoll_event w = {.events = EPOLLIN, .data.u64 = WAKE_TAG}, d = {.events = EPOLLIN, .data.u64 = DNS_TAG};
	if (c->epfd < 0 || c->wake < 0 || c->dns < 0 || epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->wake, &w) < 0 ||
	    epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->dns, &d) < 0 ||
	    (tally_fd(tally) >= 0 &&
	     epoll_ctl(c->epfd, EPOLL_CTL_ADD, tally_fd(tally), &(struct epoll_event){.events = EPOLLIN, .data.u64 = TALLY_TAG}) < 0)) {
		cordon_err_errno(err, "the transparent path's connector");
		connector_stop(c);
		return -1;
	}
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 256 * 1024);
	/* No signal for this thread: the observer's SIGUSR1 is its own. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int r = pthread_create(&c->thread, &at, connector_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	if (r != 0) {
		cordon_err(err, r, "start the transparent path's connector");
		connector_stop(c);
		return -1;
	}
	c->started = true;
	*out = c;
	return 0;
}

bool connector_add(struct connector *c, const struct connect_req *req)
{
	size_t i;
	pthread_mutex_lock(&c->mu);
	for (i = 0; i < CONNECTOR_MAX && c->slot[i].st != S_FREE; i++)
		;
	if (i < CONNECTOR_MAX) {
		struct slot *s = &c->slot[i];
		s->req = *req;
		snprintf(s->name, sizeof(s->name), "%s", req->name ? req->name : "");
		s->req.name = s->name;
		s->gone = false;
		s->st = S_NEW;
	}
	pthread_mutex_unlock(&c->mu);
	if (i == CONNECTOR_MAX) {
		atomic_fetch_add(&c->counts->over_limit, 1);
		return false;
	}
	uint64_t one = 1;
	if (write(c->wake, &one, sizeof(one)) < 0) { /* the counter is full: a wake-up is due anyway */ }
	return true;
}

void connector_stop(struct connector *c)
{
	if (!c)
		return;
	if (c->started) {
		atomic_store(&c->stop, true);
		uint64_t one = 1;
		if (write(c->wake, &one, sizeof(one)) < 0) { /* it wakes at the next tick */ }
		pthread_join(c->thread, NULL);
	}
	/* Lookups still running own their slot: wait for them a little, all
	 * together (the run is over: nobody is answered any more). */
	const struct gaicb *l[CONNECTOR_MAX];
	uint64_t end = mono_ns() + 1000000000ULL;
	for (;;) {
		int n = 0;
		for (size_t i = 0; i < CONNECTOR_MAX; i++)
			if (c->slot[i].st == S_RESOLVING && gai_error(&c->slot[i].gai) == EAI_INPROGRESS)
				l[n++] = &c->slot[i].gai;
		uint64_t now = mono_ns();
		if (!n || now >= end)
			break;
		struct timespec ts = {0, (long)(end - now)};
		gai_suspend(l, n, &ts);
	}
	bool running = false;
	for (size_t i = 0; i < CONNECTOR_MAX; i++) {
		if (c->slot[i].st == S_RESOLVING && gai_error(&c->slot[i].gai) == EAI_INPROGRESS)
			running = true;
		else if (c->slot[i].st != S_FREE)
			slot_free(c, i);
	}
	if (c->epfd >= 0)
		close(c->epfd);
	if (c->wake >= 0)
		close(c->wake);
	if (running) { /* its eventfd stays open: the lookups write to it */
		for (size_t i = 0; i < ARRAY_SIZE(orphan); i++)
			if (!orphan[i]) {
				orphan[i] = c;
				return;
			}
		return; /* past the few kept: left as it is, never freed under them */
	}
	if (c->dns >= 0)
		close(c->dns);
	pthread_mutex_destroy(&c->mu);
	free(c);
}
