/* What one client can take of cordon serve itself (serve-limits.h).
 *
 * Bodies (issue 27.4): a request's body is kept in the server's memory until
 * it is complete; every body takes its room from one budget, so that
 * connections holding half-sent bodies pin at most the budget, whatever
 * their number. A declared length is taken at once (503 at the headers when
 * it does not fit); a body without one grows in steps.
 *
 * Connections (issue 27.5): a connection is unknown until its headers are
 * in and authenticated (the token, or the peer's uid). Unknown connections
 * are limited apart: at most per_key from one client (an address, where
 * every loopback address, 127.0.0.0/8, ::1 and their v4-mapped forms, is
 * one; on the Unix socket a peer uid) and max_unknown in all, a new one
 * beyond either closing the OLDEST unknown one of that client (refusing the
 * new one would keep the honest client out as before). And each is closed
 * at a header deadline from its accept (not an idle timeout: a byte now and
 * then does not extend it). Closing is shutdown(2) on the socket, from
 * another thread: the connection's own thread sees the end and MHD closes
 * it; the descriptor is valid meanwhile (MHD calls the CLOSED notification
 * before it closes it, and the entry leaves the list there, under lock). */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include "error.h"
#include "units.h"
#include "serve-limits.h"

#define BODY_STEP (1u << 20)

static struct {
	pthread_mutex_t lock;
	size_t budget, used;
	/* connections */
	bool tcp;
	unsigned per_key, max_unknown, nunknown;
	uint64_t deadline_ns;
	struct uconn *head, *tail; /* unknown connections, oldest first */
	pthread_cond_t cond;
	pthread_t thread;
} L = {.lock = PTHREAD_MUTEX_INITIALIZER, .budget = 256u << 20, .per_key = 32, .deadline_ns = 10ULL * 1000000000ULL};

int limits_option(const char *o, const char *v)
{
	cordon_error e = {0};
	uint64_t n;
	char *end;
	if (strcmp(o, "--body-budget") == 0) {
		if (parse_size(v, &n, &e) < 0 || n < (1u << 20) || n > (1ULL << 40)) {
			fprintf(stderr, "cordon serve: %s %s: a size from 1M to 1T expected\n", o, v);
			return -1;
		}
		L.budget = (size_t)n;
		return 1;
	}
	if (strcmp(o, "--header-timeout") == 0) {
		if (parse_duration(v, &n, &e) < 0 || n < 1000000ULL) {
			fprintf(stderr, "cordon serve: %s %s: a duration of at least 1ms expected\n", o, v);
			return -1;
		}
		L.deadline_ns = n;
		return 1;
	}
	if (strcmp(o, "--unauthenticated-connections") == 0) {
		long k = strtol(v, &end, 10);
		if (*end || k < 1 || k > 100000) {
			fprintf(stderr, "cordon serve: %s %s: a positive count expected\n", o, v);
			return -1;
		}
		L.per_key = (unsigned)k;
		return 1;
	}
	return 0;
}

/* ---- bodies ---- */

int body_grow(buf *b, size_t *held, size_t n, size_t hint)
{
	size_t need = b->len + n + 1;
	if (need <= *held)
		return 0;
	/* Steps of at least 1 MiB (or to the declared length): the budget's
	 * lock is taken a few times per body, not per read. */
	size_t want = hint + 1 > need ? hint + 1 : need;
	if (want - *held < BODY_STEP && !hint)
		want = *held + BODY_STEP;
	pthread_mutex_lock(&L.lock);
	bool ok = L.used - *held + want <= L.budget;
	if (ok)
		L.used += want - *held;
	pthread_mutex_unlock(&L.lock);
	if (!ok)
		return -1;
	char *p = realloc(b->p, want);
	if (!p) {
		pthread_mutex_lock(&L.lock);
		L.used -= want - *held;
		pthread_mutex_unlock(&L.lock);
		return -1;
	}
	b->p = p;
	b->cap = want;
	*held = want;
	return 0;
}

void body_release(buf *b, size_t *held)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	pthread_mutex_lock(&L.lock);
	L.used -= *held;
	pthread_mutex_unlock(&L.lock);
	*held = 0;
}

/* ---- connections ---- */

struct uconn {
	struct uconn *prev, *next; /* in the unknown list while !known */
	int fd;
	unsigned char key[17]; /* family byte + address, or 'u' + uid */
	uint64_t t0;
	bool known;
};

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Who the client is, for counting: loopback is one address. */
static void conn_key(struct MHD_Connection *c, int fd, unsigned char key[17])
{
	memset(key, 0, 17);
	if (!L.tcp) {
		struct ucred cr = {0};
		socklen_t l = sizeof(cr);
		key[0] = 'u';
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) == 0)
			memcpy(key + 1, &cr.uid, sizeof(cr.uid));
		return;
	}
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	const unsigned char *v4 = NULL;
	if (sa && sa->sa_family == AF_INET)
		v4 = (const unsigned char *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr;
	else if (sa && sa->sa_family == AF_INET6) {
		const unsigned char *a = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;
		if (memcmp(a, mapped, 12) == 0)
			v4 = a + 12;
		else if (memcmp(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, &in6addr_loopback, 16) == 0)
			key[0] = 'L';
		else {
			key[0] = '6';
			memcpy(key + 1, a, 16);
		}
	}
	if (v4 && v4[0] == 127)
		key[0] = 'L';
	else if (v4) {
		key[0] = '4';
		memcpy(key + 1, v4, 4);
	}
}

static void unlink_locked(struct uconn *u)
{
	if (u->prev)
		u->prev->next = u->next;
	else
		L.head = u->next;
	if (u->next)
		u->next->prev = u->prev;
	else
		L.tail = u->prev;
	u->prev = u->next = NULL;
	u->known = true;
	L.nunknown--;
}

/* Closed from here: no longer counted (its thread ends it). */
static void close_locked(struct uconn *u)
{
	unlink_locked(u);
	shutdown(u->fd, SHUT_RDWR);
}

static void *deadline_main(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&L.lock);
	for (;;) {
		uint64_t now = mono();
		while (L.head && L.head->t0 + L.deadline_ns <= now)
			close_locked(L.head);
		if (!L.head) {
			pthread_cond_wait(&L.cond, &L.lock);
			continue;
		}
		uint64_t at = L.head->t0 + L.deadline_ns;
		struct timespec ts = {(time_t)(at / 1000000000ULL), (long)(at % 1000000000ULL)};
		pthread_cond_timedwait(&L.cond, &L.lock, &ts);
	}
	return NULL;
}

int limits_start(bool tcp, unsigned max_conns)
{
	L.tcp = tcp;
	/* A quarter of the connections at most for clients not yet known:
	 * the rest are the authenticated ones'. */
	L.max_unknown = max_conns / 4 ? max_conns / 4 : 1;
	if (L.per_key > L.max_unknown)
		L.per_key = L.max_unknown;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&L.cond, &ca);
	pthread_condattr_destroy(&ca);
	return pthread_create(&L.thread, NULL, deadline_main, NULL) == 0 ? 0 : -1;
}

void limits_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		   enum MHD_ConnectionNotificationCode code)
{
	(void)cls;
	struct uconn *u = *socket_context;
	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (!u)
			return;
		pthread_mutex_lock(&L.lock);
		if (!u->known)
			unlink_locked(u);
		pthread_mutex_unlock(&L.lock);
		free(u);
		*socket_context = NULL;
		return;
	}
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci || !(u = calloc(1, sizeof(*u))))
		return; /* not counted: a failed allocation does not refuse */
	u->fd = ci->connect_fd;
	conn_key(c, u->fd, u->key);
	u->t0 = mono();
	pthread_mutex_lock(&L.lock);
	unsigned same = 0;
	struct uconn *oldest_same = NULL;
	for (struct uconn *p = L.head; p; p = p->next)
		if (memcmp(p->key, u->key, sizeof(u->key)) == 0) {
			same++;
			if (!oldest_same)
				oldest_same = p;
		}
	if (same >= L.per_key)
		close_locked(oldest_same);
	else if (L.nunknown >= L.max_unknown)
		close_locked(L.head);
	u->prev = L.tail;
	if (L.tail)
		L.tail->next = u;
	else
		L.head = u;
	L.tail = u;
	L.nunknown++;
	bool first = L.head == u;
	pthread_mutex_unlock(&L.lock);
	if (first)
		pthread_cond_signal(&L.cond);
	*socket_context = u;
}

void limits_authenticated(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct uconn *u = ci ? ci->socket_context : NULL;
	if (!u)
		return;
	pthread_mutex_lock(&L.lock);
	if (!u->known)
		unlink_locked(u);
	pthread_mutex_unlock(&L.lock);
}
