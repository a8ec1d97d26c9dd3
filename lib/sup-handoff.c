/* The proxy's way in for transparent connections (sup-handoff.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "clock.h"
#include "sup-handoff.h"

#define HANDOFF_TTL_NS (10ULL * 1000000000ULL)

struct handoff {
	pthread_mutex_t lock;
	int lfd;
	struct sockaddr_in addr;
	struct {
		uint16_t src, port; /* src 0: free */
		int fd;             /* the announced socket, held (-1: none) */
		uint64_t t;
		char name[256];
	} e[HANDOFF_MAX];
};

int handoff_new(struct handoff **out, cordon_error *err)
{
	struct handoff *h = calloc(1, sizeof(*h));
	if (!h)
		return cordon_oom(err);
	pthread_mutex_init(&h->lock, NULL);
	for (size_t i = 0; i < HANDOFF_MAX; i++)
		h->e[i].fd = -1;
	h->addr.sin_family = AF_INET;
	h->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t l = sizeof(h->addr);
	h->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->lfd < 0 || bind(h->lfd, (struct sockaddr *)&h->addr, sizeof(h->addr)) < 0 ||
	    listen(h->lfd, HANDOFF_MAX) < 0 || getsockname(h->lfd, (struct sockaddr *)&h->addr, &l) < 0) {
		cordon_err_errno(err, "transparent egress: the proxy's listener on the host's loopback");
		handoff_free(h);
		return -1;
	}
	*out = h;
	return 0;
}

/* Entry i is free again; its socket let go. */
static void drop(struct handoff *h, size_t i)
{
	if (h->e[i].fd >= 0)
		close(h->e[i].fd);
	h->e[i].fd = -1;
	h->e[i].src = 0;
}

void handoff_free(struct handoff *h)
{
	if (!h)
		return;
	if (h->lfd >= 0)
		close(h->lfd);
	for (size_t i = 0; i < HANDOFF_MAX; i++)
		drop(h, i);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

int handoff_fd(const struct handoff *h)
{
	return h->lfd;
}

struct sockaddr_in handoff_addr(const struct handoff *h)
{
	return h->addr;
}

bool handoff_announce(struct handoff *h, int sock, uint16_t src, const char *name, uint16_t port)
{
	uint64_t now = mono_ns();
	bool ok = false;
	/* Held while announced: 127.0.0.1:src stays this socket's, even once
	 * the run has closed its own (a connect whose SYN the full backlog
	 * dropped), so no other process of the host can bind it and connect
	 * from it to claim name:port (outside review, attack9). */
	int fd = fcntl(sock, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return false;
	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < HANDOFF_MAX; i++) /* a port of an earlier one, never claimed */
		if (h->e[i].src == src)
			drop(h, i);
	for (size_t i = 0; i < HANDOFF_MAX && !ok; i++) {
		if (h->e[i].src && now - h->e[i].t < HANDOFF_TTL_NS)
			continue;
		drop(h, i);
		h->e[i].src = src;
		h->e[i].fd = fd;
		h->e[i].port = port;
		h->e[i].t = now;
		snprintf(h->e[i].name, sizeof(h->e[i].name), "%s", name);
		ok = true;
	}
	pthread_mutex_unlock(&h->lock);
	if (!ok)
		close(fd);
	return ok;
}

void handoff_withdraw(struct handoff *h, uint16_t src)
{
	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < HANDOFF_MAX; i++)
		if (h->e[i].src == src)
			drop(h, i);
	pthread_mutex_unlock(&h->lock);
}

bool handoff_claim(struct handoff *h, uint16_t src, char *name, size_t namesz, uint16_t *port)
{
	bool found = false;
	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < HANDOFF_MAX && !found && src; i++) {
		if (h->e[i].src != src)
			continue;
		snprintf(name, namesz, "%s", h->e[i].name);
		*port = h->e[i].port;
		drop(h, i);
		found = true;
	}
	pthread_mutex_unlock(&h->lock);
	return found;
}

int handoff_bind_announce(int s, void *arg)
{
	struct handoff_announcer *a = arg;
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	socklen_t l;
	int family = 0;
	socklen_t fl = sizeof(family);
	getsockopt(s, SOL_SOCKET, SO_DOMAIN, &family, &fl);
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_addr.s6_addr[10] = s6->sin6_addr.s6_addr[11] = 0xff;
		s6->sin6_addr.s6_addr[12] = 127;
		s6->sin6_addr.s6_addr[15] = 1;
		l = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		l = sizeof(*s4);
	}
	if (bind(s, (struct sockaddr *)&ss, l) < 0 || getsockname(s, (struct sockaddr *)&ss, &l) < 0)
		return errno;
	a->src = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
	if (handoff_announce(a->h, s, a->src, a->name, a->port))
		return 0;
	a->full = true;
	return EAGAIN;
}
