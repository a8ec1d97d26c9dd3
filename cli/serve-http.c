/* cordon serve's HTTP side: responses (errors, a worker's reply relayed),
 * the client's authentication (peer uid or bearer token), and the
 * request handler that reads a body and routes it (lib/serve-route.c). */
#include <dirent.h>
#include <grp.h>
#include <sys/fsuid.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/openat2.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>
#include "clock.h"
#include "cordon.h"
#include "changeset.h"
#include "error.h"
#include "json.h"
#include "policy.h"
#include "pol-ceiling.h"
#include "serve-ipc.h"
#include "serve-limits.h"
#include "serve-kept.h"
#include "serve-peer.h"
#include "serve-route.h"
#include "session.h"
#include "strv.h"
#include "units.h"
#include "cli-serve.h"
#include "serve-internal.h"

/* ---- responses ---- */

/* Retry-After of every 429 and 503, in seconds: a run, a session's slot or
 * a body's room is usually free again by then. */
#define SERVE_RETRY_AFTER "1"

enum MHD_Result send_text(struct MHD_Connection *c, unsigned code, const char *type, const char *text,
				 size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	/* A limit of the server (429) or a refusal for now (503): when to
	 * try again (docs/api.md; the Python client backs off from it). */
	if (code == 429 || code == 503)
		MHD_add_response_header(r, "Retry-After", SERVE_RETRY_AFTER);
	enum MHD_Result ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result send_error(struct MHD_Connection *c, unsigned code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *p = msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "error");
	jw_str(&w, msg);
	jw_obj_end(&w);
	enum MHD_Result r = MHD_NO;
	if (jw_finish(&w) == 0) {
		/* One line: {"error": "..."} */
		size_t o = 0;
		for (size_t i = 0; i < w.out.len; i++) {
			if (w.out.p[i] == '\n') {
				while (i + 1 < w.out.len && w.out.p[i + 1] == ' ')
					i++;
				continue;
			}
			w.out.p[o++] = w.out.p[i];
		}
		w.out.len = o;
		buf_append(&w.out, "\n", 1);
		r = send_text(c, code, "application/json", w.out.p, w.out.len);
	}
	buf_free(&w.out);
	return r;
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
uint64_t realtime_ns(void) { return clock_ns(CLOCK_REALTIME); }

void new_id(char *out, const char *prefix)
{
	uint8_t r[8] = {0};
	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		memset(r, 0, sizeof(r));
	snprintf(out, ROUTE_ID_LEN + 1, "%s%02x%02x%02x%02x%02x%02x%02x%02x", prefix, r[0], r[1], r[2], r[3], r[4],
		 r[5], r[6], r[7]);
}

/* Whether the worker answered (or went away) on reply within
 * --worker-timeout: a worker that never answers holds no request for
 * ever. */
bool reply_ready(int reply)
{
	uint64_t end = mono_ns() + S.worker_ns;
	for (;;) {
		uint64_t now = mono_ns();
		if (now >= end)
			return false;
		uint64_t ms = (end - now) / 1000000ULL + 1;
		struct pollfd p = {reply, POLLIN, 0};
		int r = poll(&p, 1, ms > 60000 ? 60000 : (int)ms);
		if (r > 0)
			return true;
		if (r < 0 && errno != EINTR)
			return true; /* ipc_recv says what is wrong */
	}
}

enum MHD_Result worker_late(struct MHD_Connection *c)
{
	return send_error(c, 504, "the session's worker did not answer within %llu ms",
			  (unsigned long long)(S.worker_ns / 1000000ULL));
}

/* A reply from a worker: a JSON packet, maybe with its body in an fd. */
enum MHD_Result relay_reply(struct MHD_Connection *c, int reply, unsigned ok_code, const char *type)
{
	if (!reply_ready(reply))
		return worker_late(c);
	char *b = malloc(IPC_MAX_PACKET);
	int fds[IPC_MAX_FDS], nfds = 0;
	ssize_t n = b ? ipc_recv(reply, b, IPC_MAX_PACKET, fds, &nfds) : -1;
	if (n <= 0) {
		free(b);
		return send_error(c, 500, "the session ended before it replied");
	}
	enum MHD_Result r;
	cordon_error e;
	jnode *j = json_parse(b, (size_t)n, &e);
	const jnode *code = j ? json_get(j, "code") : NULL, *err = j ? json_get(j, "error") : NULL;
	const jnode *body = j ? json_get(j, "body") : NULL;
	if (err && err->str) {
		r = send_error(c, code && code->type == J_NUM ? (unsigned)code->num : 500, "%s", err->str);
	} else if (body && nfds > 0) {
		/* Streamed from the worker's memfd (a file, a listing, a
		 * report): the server never holds it in memory. */
		struct stat st;
		struct MHD_Response *resp = NULL;
		if (fstat(fds[0], &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 && st.st_size <= (1LL << 30) &&
		    (resp = MHD_create_response_from_fd((uint64_t)st.st_size, fds[0])) != NULL) {
			fds[0] = -1; /* libmicrohttpd's now */
			MHD_add_response_header(resp, "Content-Type", type);
			r = MHD_queue_response(c, ok_code, resp);
			MHD_destroy_response(resp);
		} else {
			r = send_error(c, 500, "reading the session's reply: %s", strerror(errno ? errno : EINVAL));
		}
	} else {
		r = send_text(c, ok_code, "application/json", b, (size_t)n);
	}
	for (int i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	json_free(j);
	free(b);
	return r;
}

/* ---- health and metrics (docs/api.md, "Health and metrics") ---- */

static enum MHD_Result send_health(struct MHD_Connection *c)
{
	pthread_mutex_lock(&S.lock);
	bool ready = !S.stopping;
	pthread_mutex_unlock(&S.lock);
	const char *j = ready ? "{\"status\": \"ready\"}\n" : "{\"status\": \"not ready\"}\n";
	return send_text(c, ready ? 200 : 503, "application/json", j, strlen(j));
}

/* GET /v1/version: the program's version (meson's project version, one
 * place: include/cordon.h's CORDON_VERSION is checked against it) and the
 * API's. Like every endpoint but health it needs the client's right: the
 * version tells an unknown caller which bugs to try. */
#define SERVE_API_VERSION 1
static enum MHD_Result send_version(struct MHD_Connection *c)
{
	char j[128];
	/* cordon_version() is "MAJOR.MINOR.PATCH": nothing to escape. */
	int n = snprintf(j, sizeof(j), "{\"version\": \"%s\", \"api\": %d}\n", cordon_version(), SERVE_API_VERSION);
	if (n < 0 || (size_t)n >= sizeof(j))
		return send_error(c, 500, "the version does not fit its answer");
	return send_text(c, 200, "application/json", j, (size_t)n);
}

static enum MHD_Result send_metrics(struct MHD_Connection *c)
{
	struct metrics_now now = {.sessions_max = S.max_sessions, .pool_size = S.warm};
	pthread_mutex_lock(&S.lock);
	int mine;
	now.sessions = count_sessions(0, &mine);
	for (int i = 0; i < S.nslots; i++)
		now.pool_ready += S.ss[i].used && S.ss[i].warm && S.ss[i].warm_ready;
	now.pool_size = pool_count();
	now.pool_hits = S.pool_hits;
	now.pool_misses = S.pool_misses;
	now.pool_failures = S.pool_failures;
	now.runs_active = S.nruns;
	pthread_mutex_unlock(&S.lock);
	buf b = {0};
	if (metrics_render(&S.metrics, &now, &b) < 0) {
		buf_free(&b);
		return send_error(c, 500, "out of memory");
	}
	enum MHD_Result r = send_text(c, 200, "text/plain; version=0.0.4; charset=utf-8", b.p, b.len);
	buf_free(&b);
	return r;
}

/* ---- the handler ---- */

static bool authorized(struct MHD_Connection *c, uid_t *uid)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	*uid = (uid_t)-1;
	if (S.listen) {
		const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
		if (!a || strncmp(a, "Bearer ", 7) != 0)
			return false;
		a += 7;
		size_t la = strlen(a), lt = strlen(S.token);
		unsigned char d = la != lt;
		for (size_t i = 0; i < lt; i++)
			d |= (unsigned char)(S.token[i] ^ (i < la ? a[i] : 0));
		*uid = S.tcp_uid; /* every token holder is one client */
		return d == 0;
	}
	struct ucred cr;
	socklen_t l = sizeof(cr);
	if (!ci || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) < 0)
		return false;
	for (int i = 0; i < S.nallow; i++)
		if (S.allow[i] == cr.uid) {
			*uid = cr.uid;
			return true;
		}
	return false;
}

enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			       const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	(void)cls;
	(void)version;
	struct req *rq = *con_cls;
	if (!rq) {
		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		*con_cls = rq;
		/* GET /v1/health needs no token and says nothing but whether
		 * the server takes sessions (a probe of an orchestrator). */
		struct route hr;
		enum route_kind hk = route_parse(method, url, &hr);
		if (hk == R_HEALTH || (hk == R_BAD_METHOD && strcmp(url, "/v1/health") == 0)) {
			rq->uid = (uid_t)-2;
			return hk == R_HEALTH ? send_health(c) : send_error(c, 405, "%s is not allowed on %s", method, url);
		}
		/* Before any body is read: an unknown client gets its answer
		 * now, and the connection is closed without its upload. */
		if (!authorized(c, &rq->uid)) {
			rq->uid = (uid_t)-2;
			return send_error(c, S.listen ? 401 : 403, "not authorized");
		}
		if (limits_authenticated(c) < 0) {
			rq->uid = (uid_t)-2;
			return send_error(c, 503, "this client holds as many connections as it may; try again later");
		}
		/* A declared body takes its room in the bodies' budget now, or
		 * is refused before it is read. */
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		unsigned long long n = cl ? strtoull(cl, NULL, 10) : 0;
		if (n > BODY_MAX) {
			rq->uid = (uid_t)-2;
			return send_error(c, 413, "request body larger than %u bytes", BODY_MAX);
		}
		if (n && body_grow(c, &rq->body, &rq->held, 0, (size_t)n) < 0) {
			rq->uid = (uid_t)-2;
			return send_error(c, 503, "the server holds as many request bodies as it may; try again later");
		}
		return MHD_YES;
	}
	if (rq->uid == (uid_t)-2)
		return MHD_NO; /* answered at the headers; nothing more is read */
	if (*upload_size) {
		if (rq->body.len + *upload_size > BODY_MAX)
			rq->too_big = true;
		else if (rq->over_budget || body_grow(c, &rq->body, &rq->held, *upload_size, 0) < 0)
			rq->over_budget = true;
		else if (buf_append(&rq->body, upload, *upload_size) < 0)
			rq->too_big = true;
		*upload_size = 0;
		return MHD_YES;
	}
	if (!rq->t_req) {
		rq->t_req = mono_ns();
		limits_body_done(c);
	}
	if (rq->too_big)
		return send_error(c, 413, "request body larger than %u bytes", BODY_MAX);
	if (rq->over_budget)
		return send_error(c, 503, "the server holds as many request bodies as it may; try again later");
	struct route rt;
	switch (route_parse(method, url, &rt)) {
	case R_NONE:
		return send_error(c, 404, "no such path: %s", url);
	case R_BAD_METHOD:
		return send_error(c, 405, "%s is not allowed on %s", method, url);
	case R_RUNS_CREATE:
		return do_run(c, rq);
	case R_RUN_GET:
		return get_run(c, rt.sid, rq->uid);
	case R_POOL_GET: {
		char j[256];
		pthread_mutex_lock(&S.lock);
		int ready = 0, n = pool_count();
		for (int i = 0; i < S.nslots; i++)
			ready += S.ss[i].used && S.ss[i].warm && S.ss[i].warm_ready;
		snprintf(j, sizeof(j),
			 "{\"size\":%d,\"ready\":%d,\"starting\":%d,\"policy\":\"%s\",\"hits\":%llu,\"misses\":%llu,"
			 "\"failures\":%llu}\n",
			 S.warm, ready, n - ready, S.warm_policy ? "declared" : "default", (unsigned long long)S.pool_hits,
			 (unsigned long long)S.pool_misses, (unsigned long long)S.pool_failures);
		pthread_mutex_unlock(&S.lock);
		return send_text(c, 200, "application/json", j, strlen(j));
	}
	case R_METRICS:
		return send_metrics(c);
	case R_VERSION:
		return send_version(c);
	case R_SESSIONS_LIST:
		return list_sessions(c, rq->uid);
	case R_SESSIONS_CREATE: {
		cordon_error e = {0};
		jnode *body = rq->body.len ? json_parse(rq->body.p, rq->body.len, &e) : NULL;
		if (rq->body.len && !body)
			return send_error(c, 400, "request body: %s", e.msg);
		enum MHD_Result r = create_session(c, body, rq->uid, rq->t_req, NULL);
		json_free(body);
		return r;
	}
	default:
		return session_op(c, &rt, rq);
	}
}

void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
	(void)cls;
	(void)c;
	(void)t;
	struct req *rq = *con_cls;
	if (rq) {
		body_release(&rq->body, &rq->held);
		free(rq);
	}
	*con_cls = NULL;
}
