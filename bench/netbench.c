/* bench-net: throughput and connection latency, direct or through cordon's
 * proxy (HTTP CONNECT).
 *   bench-net serve-bulk PORTFILE BYTES   send BYTES to every connection
 *   bench-net serve-echo PORTFILE         echo
 *   bench-net fetch PORT [PROXYPORT]      read everything; prints MB/s
 *   bench-net latency PORT N [PROXYPORT]  N x (connect, 1-byte echo); prints median/p90 us
 *   bench-net serve-relay PORTFILE copy|splice  a minimal CONNECT relay, one thread per
 *                                         direction, no sandbox: the reference for
 *                                         what any user-space relay costs here */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int dial(int port, int proxy, long long *early)
{
	int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)(proxy ? proxy : port))};
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("connect");
		exit(1);
	}
	if (proxy) {
		char req[128], resp[256];
		int n = snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", port);
		if (write(s, req, (size_t)n) != n)
			exit(1);
		/* As curl does: read what has arrived until the header is complete;
		 * what follows it is the endpoint's first data (a bulk server
		 * speaks first). */
		size_t got = 0;
		char *end;
		resp[0] = 0;
		while (!(end = strstr(resp, "\r\n\r\n"))) {
			if (got >= sizeof(resp) - 1)
				exit(2);
			ssize_t r = read(s, resp + got, sizeof(resp) - 1 - got);
			if (r <= 0)
				exit(2);
			got += (size_t)r;
			resp[got] = 0; /* the header has no NUL; the data after it may */
		}
		if (early)
			*early = (long long)(got - (size_t)(end + 4 - resp));
		if (strncmp(resp, "HTTP/1.1 200", 12) != 0)
			exit(3);
	}
	return s;
}

static long long bulk;
static void *bulk_one(void *arg)
{
	int c = (int)(long)arg;
	static char buf[1 << 20];
	for (long long left = bulk; left > 0;) {
		ssize_t n = write(c, buf, left > (long long)sizeof(buf) ? sizeof(buf) : (size_t)left);
		if (n <= 0)
			break;
		left -= n;
	}
	close(c);
	return NULL;
}
static void *echo_one(void *arg)
{
	int c = (int)(long)arg;
	char b[4096];
	ssize_t n;
	while ((n = read(c, b, sizeof(b))) > 0)
		if (write(c, b, (size_t)n) != n)
			break;
	close(c);
	return NULL;
}

/* ---- the reference relay ---- */
static bool relay_splice;
struct half {
	int from, to;
};
static void *relay_half(void *arg)
{
	struct half *h = arg;
	if (relay_splice) {
		int p[2];
		if (pipe(p) < 0)
			return NULL;
		fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
		for (;;) {
			ssize_t n = splice(h->from, NULL, p[1], NULL, 1 << 20, SPLICE_F_MOVE);
			if (n <= 0)
				break;
			while (n > 0) {
				ssize_t w = splice(p[0], NULL, h->to, NULL, (size_t)n, SPLICE_F_MOVE);
				if (w <= 0)
					goto out;
				n -= w;
			}
		}
out:
		close(p[0]);
		close(p[1]);
	} else {
		static __thread char b[1 << 18];
		ssize_t n;
		while ((n = read(h->from, b, sizeof(b))) > 0)
			for (ssize_t o = 0; o < n;) {
				ssize_t w = write(h->to, b + o, (size_t)(n - o));
				if (w <= 0)
					goto done;
				o += w;
			}
	}
done:
	shutdown(h->to, SHUT_WR);
	return NULL;
}
static void *relay_conn(void *arg)
{
	int c = (int)(long)arg, one = 1;
	char req[512];
	size_t got = 0;
	while (got < 4 || memcmp(req + got - 4, "\r\n\r\n", 4) != 0) {
		ssize_t r = read(c, req + got, sizeof(req) - 1 - got);
		if (r <= 0 || (got += (size_t)r) >= sizeof(req) - 1) {
			close(c);
			return NULL;
		}
	}
	req[got] = 0;
	const char *colon = strchr(req, ':');
	int u = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)(colon ? atoi(colon + 1) : 0))};
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	setsockopt(u, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(u, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    write(c, "HTTP/1.1 200 Connection established\r\n\r\n", 39) != 39) {
		close(u);
		close(c);
		return NULL;
	}
	struct half up = {c, u}, down = {u, c};
	pthread_t t;
	pthread_create(&t, NULL, relay_half, &up);
	relay_half(&down);
	pthread_join(t, NULL);
	close(u);
	close(c);
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	if (!strncmp(argv[1], "serve", 5)) {
		int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		struct sockaddr_in a = {.sin_family = AF_INET};
		inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
		socklen_t al = sizeof(a);
		if (bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1024) < 0)
			return 1;
		getsockname(l, (struct sockaddr *)&a, &al);
		FILE *f = fopen(argv[2], "w");
		fprintf(f, "%d\n", ntohs(a.sin_port));
		fclose(f);
		bool is_bulk = !strcmp(argv[1], "serve-bulk");
		bool is_relay = !strcmp(argv[1], "serve-relay");
		if (is_relay)
			relay_splice = argc > 3 && !strcmp(argv[3], "splice");
		if (is_bulk)
			bulk = atoll(argv[3]);
		alarm(300); /* stops by itself */
		signal(SIGPIPE, SIG_IGN); /* a client that leaves must not end the server */
		for (;;) {
			int c = accept(l, NULL, NULL);
			if (c < 0)
				continue;
			setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			pthread_t t;
			pthread_create(&t, NULL, is_relay ? relay_conn : is_bulk ? bulk_one : echo_one, (void *)(long)c);
			pthread_detach(t);
		}
	}
	int port = atoi(argv[2]);
	if (!strcmp(argv[1], "fetch")) {
		int proxy = argc > 3 ? atoi(argv[3]) : 0;
		double t0 = now();
		long long total = 0;
		int s = dial(port, proxy, &total);
		static char buf[1 << 20];
		ssize_t n;
		while ((n = read(s, buf, sizeof(buf))) > 0)
			total += n;
		double dt = now() - t0;
		printf("%.1f\n", (double)total / dt / 1e6);
		return total > 0 ? 0 : 1;
	}
	if (!strcmp(argv[1], "latency")) {
		int n = atoi(argv[3]), proxy = argc > 4 ? atoi(argv[4]) : 0;
		double *t = calloc((size_t)n, sizeof(double));
		for (int i = 0; i < n; i++) {
			double t0 = now();
			int s = dial(port, proxy, NULL);
			char c = 'x';
			if (write(s, &c, 1) != 1 || read(s, &c, 1) != 1) {
				free(t);
				return 1;
			}
			t[i] = (now() - t0) * 1e6;
			close(s);
		}
		qsort(t, (size_t)n, sizeof(double), cmp);
		printf("%.0f %.0f\n", t[n / 2], t[n * 9 / 10]);
		free(t);
		return 0;
	}
	return 2;
}
