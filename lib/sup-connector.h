/* network.transparent's connects that take time (issue 33): the observer
 * thread never waits for one. A connect it makes for the run that is still
 * in progress on a blocking socket, or a name without a network.resolve pin
 * that must be looked up first, is handed to the connector: a thread of its
 * own that waits for lookups (getaddrinfo_a, told through an eventfd) and
 * connects (epoll), then hands the socket in over the run's
 * (SECCOMP_IOCTL_NOTIF_ADDFD, SETFD) and answers the notification. The
 * calling task waits in its connect meanwhile, as it would for a connect of
 * its own; a task that is gone (killed, or its call interrupted) frees its
 * slot at the next 1 s tick.
 *
 * Bounds: CONNECTOR_MAX pending per run (past it the connect is refused at
 * once, ECONNREFUSED, and counted: over_limit); one fixed table, nothing
 * allocated per connect; the kernel's SYN retries bound each connect. */
#pragma once
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include "error.h"
#include "report.h"

#define CONNECTOR_MAX 64

struct connector;

/* The run's socket's options that carry over to the one made for it (read
 * with getsockopt from the run's, set on ours before connect). */
#define CONNECT_INT_OPTS 7
struct connect_opts {
	int v[CONNECT_INT_OPTS];
	bool have[CONNECT_INT_OPTS];
	struct timeval rcvto, sndto;
	struct linger linger;
	bool have_to, have_linger;
};

/* A connect for the connector: sock >= 0, a connect in progress to the
 * endpoint; else name:port is to be looked up (the proxy's address checks
 * apply to what it resolves to). */
struct connect_req {
	uint64_t id;     /* the notification */
	int fd;          /* the run's socket's number */
	int fl;          /* the run's file's status flags (O_NONBLOCK) */
	bool cloexec;
	int family;      /* the run's socket's address family */
	int sock;        /* ours, or -1 */
	const char *name;
	uint16_t port;
	int pgid;        /* where a denial is attributed (0: nowhere) */
	struct connect_opts opts;
	struct tally *tally;           /* its bytes counted there once handed in (sup-tally.h), or NULL */
	struct sockaddr_storage peer; /* where connect_begin connects it */
};

/* The counts of the transparent path (the report's network.transparent),
 * written by the observer and the connector threads. */
struct connect_counts {
	atomic_uint_fast64_t handed_in, proxied, refused, failed, over_limit;
};

/* Start the thread. listener: the seccomp listener (borrowed); violated and
 * pidfd as the observer's (a denial sets it; pidfd >= 0: kill the run). */
int connector_start(struct connector **out, int listener, struct run_report *rep, atomic_bool *violated, int pidfd,
		    struct connect_counts *counts, struct tally *tally, cordon_error *err);
/* Take a connect; false when CONNECTOR_MAX are pending (req->sock is then
 * still the caller's). */
bool connector_add(struct connector *c, const struct connect_req *req);
/* Stop and join the thread, close what is pending, free. NULL is fine. */
void connector_stop(struct connector *c);

/* Shared with the observer's own hand-in (sup-connect.c): */
/* The options of the run's socket s (a pidfd_getfd copy). */
void connect_opts_read(int s, struct connect_opts *o);
/* A nonblocking socket for the run's connect to dst: of the run's family
 * where it can be (an IPv4 endpoint as ::ffff:a.b.c.d for an IPv6 socket),
 * the run's options set, connect started. Returns 0 (connected, *sock set),
 * EINPROGRESS (*sock set) or an errno (nothing left open). */
int connect_begin(struct connect_req *req, const struct sockaddr *dst, socklen_t len, int *sock);
/* The same, before(s, arg) called on the socket before its connect (0, or
 * an errno that ends it there). */
int connect_begin_hook(struct connect_req *req, const struct sockaddr *dst, socklen_t len, int *sock,
		       int (*before)(int s, void *arg), void *arg);
/* Answer notification id: 0 or -error. Returns -1 if the listener failed. */
int connect_answer(int listener, uint64_t id, int error);
/* Put sock in place of the run's fd (the run's status flags and
 * close-on-exec) and answer error (0, EINPROGRESS); with req->tally, its
 * bytes are counted there. A task that is gone is no error. Returns -1 if
 * the listener failed. */
int connect_hand_in(int listener, const struct connect_req *req, int sock, int error);
