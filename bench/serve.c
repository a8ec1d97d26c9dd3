/* bench-serve SOCK N MODE: N requests to cordon serve over its Unix socket,
 * one connection each, the time from connect to the end of the answer;
 * prints "median_ms p90_ms mean_ms" as bench-spawn does.
 *   exec SID   POST /v1/sessions/SID/exec {"argv":["/bin/true"]}
 *   session    POST /v1/sessions {} then DELETE it (one session's life)
 *   create     POST /v1/sessions {} alone (the DELETE, and the wait for the
 *              warm pool to be full again, are not timed)
 *   create-exec   the same, and POST .../exec {"argv":["/bin/true"]} timed
 *              with it: a one-shot /bin/true in a fresh session
 *   run        POST /v1/runs {"argv":["/bin/true"]} (a one-shot: with a
 *              warm pool, from the pool, its refill waited for untimed)
 * With a warm pool, create, create-exec and run take every session from
 * it (an answer that did not is an error); without, every one is cold:
 * the same program measures both.
 * A fourth column: the median of the exec's own usage.start_to_exec_seconds
 * (ms; exec, create-exec, run: from the moment the server had the whole
 * request to the execve inside the boundary), or "-" (session, create). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* The answer's usage.start_to_exec_seconds, in ms; -1 if it has none. */
static double start_to_exec(const char *out)
{
	const char *k = strstr(out, "\"start_to_exec_seconds\":");
	return k ? strtod(k + 24, NULL) * 1e3 : -1;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One request, "Connection: close"; the answer read to EOF into out. */
static int request(const char *sock, const char *method, const char *path, const char *body, char *out, size_t cap)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -1;
	char req[1024];
	int n = snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: b\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n%s",
			 method, path, strlen(body), body);
	if (write(fd, req, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	size_t len = 0;
	for (ssize_t r; (r = read(fd, out + len, cap - 1 - len)) > 0;)
		len += (size_t)r;
	out[len] = '\0';
	close(fd);
	return strncmp(out, "HTTP/1.1 20", 11) == 0 ? 0 : -1;
}

/* Until GET /v1/pool says the pool is full (at once without a pool);
 * returns its size, or -1. */
static int pool_full(const char *sock, char *out, size_t cap)
{
	for (int i = 0; i < 20000; i++) {
		if (request(sock, "GET", "/v1/pool", "", out, cap) < 0)
			return -1;
		const char *sz = strstr(out, "\"size\":"), *rd = strstr(out, "\"ready\":");
		if (!sz || !rd)
			return -1;
		if (atoi(sz + 7) == atoi(rd + 8))
			return atoi(sz + 7);
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
	}
	return -1;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: bench-serve SOCK N exec SID | session | create | create-exec | run\n");
		return 2;
	}
	int n = atoi(argv[2]);
	const char *mode = argv[3];
	double *t = calloc((size_t)n, sizeof(double)), *se = calloc((size_t)n, sizeof(double)), sum = 0;
	int nse = 0;
	static char out[1 << 20];
	char path[256];
	for (int i = 0; i < n; i++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		int rc;
		if (strcmp(mode, "exec") == 0 && argc > 4) {
			snprintf(path, sizeof(path), "/v1/sessions/%s/exec", argv[4]);
			rc = request(argv[1], "POST", path, "{\"argv\":[\"/bin/true\"]}", out, sizeof(out));
			if (rc == 0 && !strstr(out, "\"status\": \"ok\""))
				rc = -1;
		} else if (strcmp(mode, "create") == 0 || strcmp(mode, "create-exec") == 0) {
			if (pool_full(argv[1], out, sizeof(out)) < 0) {
				fprintf(stderr, "the warm pool did not fill: %.300s\n", out);
				free(t);
				free(se);
				return 1;
			}
			clock_gettime(CLOCK_MONOTONIC, &a);
			rc = request(argv[1], "POST", "/v1/sessions", "{}", out, sizeof(out));
			char *id = rc == 0 ? strstr(out, "\"id\":\"") : NULL;
			char sid[19] = "";
			if (id)
				snprintf(sid, sizeof(sid), "%.18s", id + 6);
			if (id && mode[6]) {
				snprintf(path, sizeof(path), "/v1/sessions/%s/exec", sid);
				rc = request(argv[1], "POST", path, "{\"argv\":[\"/bin/true\"]}", out, sizeof(out));
				if (rc == 0 && !strstr(out, "\"status\": \"ok\""))
					rc = -1;
			}
			clock_gettime(CLOCK_MONOTONIC, &b);
			if (id && mode[6] && (se[nse] = start_to_exec(out)) >= 0)
				nse++;
			if (id) {
				static char o2[1 << 20];
				snprintf(path, sizeof(path), "/v1/sessions/%s", sid);
				if (request(argv[1], "DELETE", path, "", o2, sizeof(o2)) < 0)
					rc = -1;
			} else {
				rc = -1;
			}
			if (rc < 0) {
				fprintf(stderr, "request %d (%s) failed: %.300s\n", i, mode, out);
				free(t);
				free(se);
				return 1;
			}
			t[i] = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
			sum += t[i];
			continue;
		} else if (strcmp(mode, "session") == 0) {
			rc = request(argv[1], "POST", "/v1/sessions", "{}", out, sizeof(out));
			char *id = rc == 0 ? strstr(out, "\"id\":\"") : NULL;
			if (id) {
				snprintf(path, sizeof(path), "/v1/sessions/%.18s", id + 6);
				rc = request(argv[1], "DELETE", path, "", out, sizeof(out));
			} else {
				rc = -1;
			}
		} else {
			int size = pool_full(argv[1], out, sizeof(out));
			clock_gettime(CLOCK_MONOTONIC, &a);
			rc = size < 0 ? -1 : request(argv[1], "POST", "/v1/runs", "{\"argv\":[\"/bin/true\"]}", out, sizeof(out));
			if (rc == 0 && (!strstr(out, "\"status\": \"ok\"") || (size > 0 && !strstr(out, "\"warm\": true"))))
				rc = -1;
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (rc < 0) {
			fprintf(stderr, "request %d (%s) failed: %.300s\n", i, mode, out);
			free(t);
			free(se);
			return 1;
		}
		if ((se[nse] = start_to_exec(out)) >= 0)
			nse++;
		t[i] = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
		sum += t[i];
	}
	qsort(t, (size_t)n, sizeof(double), cmp);
	printf("%.3f %.3f %.3f", t[n / 2], t[(n * 9) / 10], sum / n);
	if (nse) {
		qsort(se, (size_t)nse, sizeof(double), cmp);
		printf(" %.3f\n", se[nse / 2]);
	} else {
		printf(" -\n");
	}
	free(t);
	free(se);
	return 0;
}
