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
 * before it closes it, and the entry leaves the list there, under lock).
 *
 * Per client (review of 27.4/27.5, F1 and F2): once authenticated a
 * connection is its client's (a peer uid on the Unix socket; over TCP every
 * token holder is one client). A client holds at most per_client of them
 * (--connections-per-client, default a quarter of --max-connections; one
 * more is answered 503 and closed) and at most a quarter of the bodies'
 * budget (over TCP, the one client there is, all of it). On the Unix socket
 * root (uid 0, and the server's own uid) has a slice kept: the other
 * clients together hold at most the connections left after the
 * unauthenticated quarter and root's quarter, and three quarters of the
 * budget. And a request's body must be complete within body_ns of its
 * headers (--body-timeout, default 60s), else its connection is closed
 * (its room in the budget given back): a byte now and then holds nothing
 * for longer. No request streams its body today (an exec's stdin is in its
 * JSON, a pty's input flows after the upgrade, past the body), so none is
 * exempt; the body deadline ends when the body is in, before the answer. */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "error.h"
#include "units.h"
#include "serve-limits.h"

#define BODY_STEP (1u << 20)

/* A client: what it holds (serve-limits.h). refs: its connections and the
 * bodies that took room in its name. */
struct lclient {
	struct lclient *next;
	unsigned char key[17];
	bool reserved; /* root (or the server's uid) on the Unix socket */
	unsigned nunknown, nknown, refs;
	size_t body;
};

static struct {
	pthread_mutex_t lock;
	size_t budget, used;
	size_t body_share, body_others, body_others_max; /* per client; all clients but root */
	/* connections */
	bool tcp;
	unsigned per_key, max_unknown, nunknown;
	unsigned per_client, nothers, others_max; /* authenticated: per client; all but root */
	uint64_t deadline_ns, body_ns;
	struct uconn *head, *tail;   /* unknown connections, oldest first */
	struct uconn *bhead, *btail; /* requests whose body is not yet in, oldest first */
	struct lclient *clients;
	pthread_cond_t cond;
	pthread_t thread;
} L = {.lock = PTHREAD_MUTEX_INITIALIZER,
       .budget = 256u << 20,
       .per_key = 32,
       .deadline_ns = 10ULL * 1000000000ULL,
       .body_ns = 60ULL * 1000000000ULL};

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
	if (strcmp(o, "--header-timeout") == 0 || strcmp(o, "--body-timeout") == 0) {
		if (parse_duration(v, &n, &e) < 0 || n < 1000000ULL) {
			fprintf(stderr, "cordon serve: %s %s: a duration of at least 1ms expected\n", o, v);
			return -1;
		}
		if (o[2] == 'h')
			L.deadline_ns = n;
		else
			L.body_ns = n;
		return 1;
	}
	if (strcmp(o, "--unauthenticated-connections") == 0 || strcmp(o, "--connections-per-client") == 0) {
		long k = strtol(v, &end, 10);
		if (*end || k < 1 || k > 100000) {
			fprintf(stderr, "cordon serve: %s %s: a positive count expected\n", o, v);
			return -1;
		}
		if (o[2] == 'u')
			L.per_key = (unsigned)k;
		else
			L.per_client = (unsigned)k;
		return 1;
	}
	return 0;
}

/* ---- clients ---- */

static struct lclient *client_get_locked(const unsigned char key[17])
{
	struct lclient *cl;
	for (cl = L.clients; cl; cl = cl->next)
		if (memcmp(cl->key, key, 17) == 0)
			break;
	if (!cl) {
		if (!(cl = calloc(1, sizeof(*cl))))
			return NULL;
		memcpy(cl->key, key, 17);
		uid_t uid;
		memcpy(&uid, key + 1, sizeof(uid));
		cl->reserved = key[0] == 'u' && (uid == 0 || uid == getuid());
		cl->next = L.clients;
		L.clients = cl;
	}
	cl->refs++;
	return cl;
}

static void client_put_locked(struct lclient *cl)
{
	if (!cl || --cl->refs)
		return;
	for (struct lclient **pp = &L.clients; *pp; pp = &(*pp)->next)
		if (*pp == cl) {
			*pp = cl->next;
			break;
		}
	free(cl);
}

/* ---- connections' records ---- */

enum { U_UNKNOWN, U_KNOWN, U_NONE };

struct uconn {
	struct uconn *prev, *next;   /* in the unknown list while U_UNKNOWN */
	struct uconn *bprev, *bnext; /* in the body list while in_body */
	struct lclient *cl;          /* by its address (or uid); once known, its client's */
	int fd;
	int st;
	bool in_body;
	uint64_t t0, tb; /* accepted; its request's headers in */
};

static struct uconn *uconn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = c ? MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT) : NULL;
	return ci ? ci->socket_context : NULL;
}

/* ---- bodies ---- */

int body_grow(struct MHD_Connection *c, buf *b, body_hold *h, size_t n, size_t hint)
{
	size_t need = b->len + n + 1;
	if (need <= h->n)
		return 0;
	/* Steps of at least 1 MiB (or to the declared length): the budget's
	 * lock is taken a few times per body, not per read. */
	size_t want = hint + 1 > need ? hint + 1 : need;
	if (want - h->n < BODY_STEP && !hint)
		want = h->n + BODY_STEP;
	struct uconn *u = h->cl ? NULL : uconn_of(c);
	pthread_mutex_lock(&L.lock);
	if (u && u->cl)
		h->cl = client_get_locked(u->cl->key);
	struct lclient *cl = h->cl;
	size_t more = want - h->n;
	bool ok = L.used + more <= L.budget && (!cl || cl->body + more <= L.body_share) &&
		  (!cl || cl->reserved || L.body_others + more <= L.body_others_max);
	if (ok) {
		L.used += more;
		if (cl) {
			cl->body += more;
			if (!cl->reserved)
				L.body_others += more;
		}
	}
	pthread_mutex_unlock(&L.lock);
	if (!ok)
		return -1;
	char *p = realloc(b->p, want);
	if (!p) {
		pthread_mutex_lock(&L.lock);
		L.used -= more;
		if (cl) {
			cl->body -= more;
			if (!cl->reserved)
				L.body_others -= more;
		}
		pthread_mutex_unlock(&L.lock);
		return -1;
	}
	b->p = p;
	b->cap = want;
	h->n = want;
	return 0;
}

void body_release(buf *b, body_hold *h)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	pthread_mutex_lock(&L.lock);
	L.used -= h->n;
	if (h->cl) {
		h->cl->body -= h->n;
		if (!h->cl->reserved)
			L.body_others -= h->n;
		client_put_locked(h->cl);
	}
	pthread_mutex_unlock(&L.lock);
	h->n = 0;
	h->cl = NULL;
}

/* ---- connections ---- */

static uint64_t mono(void)
{
	return mono_ns();
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
		else
			key[0] = '?';
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
	u->st = U_NONE;
	L.nunknown--;
	if (u->cl)
		u->cl->nunknown--;
}

static void body_unlink_locked(struct uconn *u)
{
	if (!u->in_body)
		return;
	if (u->bprev)
		u->bprev->bnext = u->bnext;
	else
		L.bhead = u->bnext;
	if (u->bnext)
		u->bnext->bprev = u->bprev;
	else
		L.btail = u->bprev;
	u->bprev = u->bnext = NULL;
	u->in_body = false;
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
		/* A body past its deadline: the connection is closed; it stays
		 * its client's until MHD closes it (and gives its body back). */
		while (L.bhead && L.bhead->tb + L.body_ns <= now) {
			struct uconn *u = L.bhead;
			body_unlink_locked(u);
			shutdown(u->fd, SHUT_RDWR);
		}
		if (!L.head && !L.bhead) {
			pthread_cond_wait(&L.cond, &L.lock);
			continue;
		}
		uint64_t at = UINT64_MAX;
		if (L.head)
			at = L.head->t0 + L.deadline_ns;
		if (L.bhead && L.bhead->tb + L.body_ns < at)
			at = L.bhead->tb + L.body_ns;
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
	/* Authenticated: a quarter per client by default; on the Unix socket
	 * root's quarter is kept from the others. */
	if (!L.per_client)
		L.per_client = L.max_unknown;
	unsigned kept = tcp ? 0 : L.max_unknown;
	L.others_max = max_conns > L.max_unknown + kept ? max_conns - L.max_unknown - kept : 1;
	L.body_share = tcp ? L.budget : L.budget / 4;
	L.body_others_max = tcp ? L.budget : L.budget - L.budget / 4;
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
		if (u->st == U_UNKNOWN)
			unlink_locked(u);
		body_unlink_locked(u);
		if (u->st == U_KNOWN && u->cl) {
			u->cl->nknown--;
			if (!u->cl->reserved)
				L.nothers--;
		}
		client_put_locked(u->cl);
		pthread_mutex_unlock(&L.lock);
		free(u);
		*socket_context = NULL;
		return;
	}
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci || !(u = calloc(1, sizeof(*u))))
		return; /* not counted: a failed allocation does not refuse */
	u->fd = ci->connect_fd;
	unsigned char key[17];
	conn_key(c, u->fd, key);
	u->t0 = mono();
	pthread_mutex_lock(&L.lock);
	u->cl = client_get_locked(key);
	if (u->cl && u->cl->nunknown >= L.per_key) {
		for (struct uconn *p = L.head; p; p = p->next)
			if (p->cl == u->cl) {
				close_locked(p);
				break;
			}
	} else if (L.nunknown >= L.max_unknown) {
		/* The oldest of the client with the most: one with a few
		 * (root's one connection) is not raced out by one with many. */
		struct uconn *victim = L.head;
		for (struct uconn *p = L.head; p; p = p->next)
			if (p->cl && victim->cl && p->cl->nunknown > victim->cl->nunknown)
				victim = p;
		if (victim)
			close_locked(victim);
	}
	u->st = U_UNKNOWN;
	u->prev = L.tail;
	if (L.tail)
		L.tail->next = u;
	else
		L.head = u;
	L.tail = u;
	L.nunknown++;
	if (u->cl)
		u->cl->nunknown++;
	bool first = L.head == u;
	pthread_mutex_unlock(&L.lock);
	if (first)
		pthread_cond_signal(&L.cond);
	*socket_context = u;
}

int limits_authenticated(struct MHD_Connection *c)
{
	struct uconn *u = uconn_of(c);
	if (!u)
		return 0;
	int r = 0;
	bool signal = false;
	pthread_mutex_lock(&L.lock);
	if (u->st == U_UNKNOWN) {
		unlink_locked(u);
		/* Its client from now on: over TCP the token holder. */
		if (L.tcp) {
			unsigned char key[17] = {'T'};
			struct lclient *t = client_get_locked(key);
			client_put_locked(u->cl);
			u->cl = t;
		}
		struct lclient *cl = u->cl;
		if (cl && (cl->nknown >= L.per_client || (!cl->reserved && L.nothers >= L.others_max)))
			r = -1; /* stays U_NONE: answered 503 and closed */
		else {
			u->st = U_KNOWN;
			if (cl) {
				cl->nknown++;
				if (!cl->reserved)
					L.nothers++;
			}
		}
	}
	if (r == 0 && !u->in_body) {
		u->tb = mono();
		u->in_body = true;
		u->bprev = L.btail;
		u->bnext = NULL;
		if (L.btail)
			L.btail->bnext = u;
		else
			L.bhead = u;
		L.btail = u;
		signal = L.bhead == u;
	}
	pthread_mutex_unlock(&L.lock);
	if (signal)
		pthread_cond_signal(&L.cond);
	return r;
}

void limits_body_done(struct MHD_Connection *c)
{
	struct uconn *u = uconn_of(c);
	if (!u)
		return;
	pthread_mutex_lock(&L.lock);
	body_unlink_locked(u);
	pthread_mutex_unlock(&L.lock);
}
