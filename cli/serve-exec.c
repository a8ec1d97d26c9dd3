/* cordon serve's requests to a session: exec (its NDJSON stream, a pty
 * exec's upgraded connection), output, files, end, the ended sessions kept
 * (serve-kept.c), the list of sessions, and the routing among them. */
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
#include "serve-tls.h"

/* The exec's NDJSON stream: packets from the worker, as they come. */
#define STREAM_BLOCK (256 * 1024)
struct stream_ctx {
	int reply;
	int cfd; /* the client's connection: its hang-up ends the stream */
	char *pkt;
	size_t len, off;
	/* a pty exec: */
	struct session_ent *se;
	char sid[ROUTE_ID_LEN + 1], eid[ROUTE_ID_LEN + 1];
	bool release; /* the exec's end lets the pool refill (hold) */
};

/* Is this packet the exec's result event ({"type": "result", ...}, the
 * worker's own text: its first key)? */
static bool is_result(const char *p, size_t n)
{
	static const char *const parts[] = {"{", "\"type\"", ":", "\"result\""};
	size_t i = 0;
	for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++) {
		while (i < n && p[i] == ' ')
			i++;
		size_t l = strlen(parts[k]);
		if (n - i < l || memcmp(p + i, parts[k], l) != 0)
			return false;
		i += l;
	}
	return true;
}

static ssize_t stream_reader(void *cls, uint64_t pos, char *out, size_t max)
{
	struct stream_ctx *sc = cls;
	(void)pos;
	/* As many packets as are there and fit (a block of STREAM_BLOCK):
	 * fewer, larger writes to the client. */
	size_t done = 0;
	while (done < max) {
		if (sc->off >= sc->len) {
			struct pollfd p[2] = {{sc->reply, POLLIN, 0}, {sc->cfd, POLLRDHUP, 0}};
			if (done && poll(p, 1, 0) <= 0)
				break;
			/* Waiting for the exec's next packet: a client that went
			 * away meanwhile ends the stream (the worker sees it:
			 * the exec no longer holds its session's lease). */
			while (!done && sc->cfd >= 0) {
				int r = poll(p, 2, -1);
				if (r < 0 && errno != EINTR)
					break;
				if (r > 0 && (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR)))
					return MHD_CONTENT_READER_END_WITH_ERROR;
				if (r > 0 && p[0].revents)
					break;
			}
			ssize_t n = ipc_recv(sc->reply, sc->pkt, IPC_MAX_PACKET + 1, NULL, NULL);
			if (n <= 0)
				return done ? (ssize_t)done : MHD_CONTENT_READER_END_OF_STREAM;
			sc->len = (size_t)n;
			sc->off = 0;
			/* the exec's end: its status and denials, counted */
			if (is_result(sc->pkt, sc->len))
				metrics_note_result(&S.metrics, METRICS_EXEC, sc->pkt, sc->len);
		}
		size_t k = sc->len - sc->off < max - done ? sc->len - sc->off : max - done;
		memcpy(out + done, sc->pkt + sc->off, k);
		sc->off += k;
		done += k;
	}
	return (ssize_t)done;
}

static void stream_free(void *cls)
{
	struct stream_ctx *sc = cls;
	/* A client gone mid-stream: closing this tells the worker, and the
	 * exec runs on (docs/api.md). */
	close(sc->reply);
	if (sc->release)
		pool_release(sc->sid);
	free(sc->pkt);
	free(sc);
}

/* A stream or a pty lasts as long as its exec: no idle timeout. */
static void no_timeout(struct MHD_Connection *c)
{
	MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
}

/* The first packet of a worker's stream on REPLY (an exec's, a background
 * exec's output) decides: the stream's context (REPLY, the packet, the
 * client's connection, SID), or NULL with the worker's error (ENDED where
 * it gave none) sent, in *ret, and REPLY closed. */
static struct stream_ctx *stream_open(struct MHD_Connection *c, int reply, const char *sid, const char *ended,
				      enum MHD_Result *ret)
{
	struct stream_ctx *sc = calloc(1, sizeof(*sc));
	char *pkt = malloc(IPC_MAX_PACKET + 1);
	ssize_t n = sc && pkt ? ipc_recv(reply, pkt, IPC_MAX_PACKET + 1, NULL, NULL) : -1;
	if (n <= 0 || strncmp(pkt, "{\"type\"", 7) != 0) {
		cordon_error e;
		jnode *j = n > 0 ? json_parse(pkt, (size_t)n, &e) : NULL;
		const jnode *code = j ? json_get(j, "code") : NULL, *err = j ? json_get(j, "error") : NULL;
		*ret = send_error(c, code && code->type == J_NUM ? (unsigned)code->num : 410, "%s",
				  err && err->str ? err->str : ended);
		json_free(j);
		free(pkt);
		free(sc);
		close(reply);
		return NULL;
	}
	sc->reply = reply;
	sc->pkt = pkt;
	sc->len = (size_t)n;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	sc->cfd = ci ? ci->connect_fd : -1;
	snprintf(sc->sid, sizeof(sc->sid), "%s", sid);
	return sc;
}

/* SC as the NDJSON answer (stream_reader); SC is the response's. */
static enum MHD_Result queue_stream(struct MHD_Connection *c, struct stream_ctx *sc)
{
	struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, stream_reader, sc,
								   stream_free);
	if (!r) {
		stream_free(sc);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/x-ndjson");
	no_timeout(c);
	enum MHD_Result ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return ret;
}

static bool upgrade_requested(struct MHD_Connection *c)
{
	const char *conn = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Connection");
	const char *up = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Upgrade");
	return conn && up && strcasestr(conn, "upgrade") && strcasecmp(up, "tcp") == 0;
}

/* The end of a pty exec: until the worker closes the exec's event stream
 * (after its result), then the connection closed. */
struct pty_wait {
	struct stream_ctx *sc;
	struct MHD_UpgradeResponseHandle *urh;
};

static void *pty_wait_main(void *arg)
{
	struct pty_wait *pw = arg;
	while (ipc_recv(pw->sc->reply, pw->sc->pkt, IPC_MAX_PACKET + 1, NULL, NULL) > 0) {
	}
	MHD_upgrade_action(pw->urh, MHD_UPGRADE_ACTION_CLOSE);
	stream_free(pw->sc);
	free(pw);
	return NULL;
}

/* The connection is raw bytes from here: the session's worker relays it to
 * and from the pty (a dup of the socket); pty_wait_main waits for the
 * exec's result, then closes the connection. */
static void pty_upgraded(void *cls, struct MHD_Connection *c, void *con_cls, const char *extra_in,
			 size_t extra_in_size, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
	(void)c;
	(void)con_cls;
	struct stream_ctx *sc = cls;
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "op");
	jw_str(&w, "attach");
	jw_key(&w, "exec");
	jw_str(&w, sc->eid);
	buf pre = {0};
	if (extra_in_size && extra_in_size < 16384 && b64_encode(&pre, extra_in, extra_in_size) == 0 && pre.p) {
		jw_key(&w, "input_b64");
		jw_str(&w, pre.p);
	}
	buf_free(&pre);
	jw_obj_end(&w);
	int d = jw_finish(&w) == 0 ? fcntl(sock, F_DUPFD_CLOEXEC, 3) : -1;
	int r = d >= 0 ? to_worker(sc->se, sc->sid, w.out.p, d) : -1;
	buf_free(&w.out);
	if (d >= 0)
		close(d);
	if (r >= 0)
		close(r);
	struct pty_wait *pw = r >= 0 ? malloc(sizeof(*pw)) : NULL;
	if (!pw) {
		MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
		stream_free(sc);
		return;
	}
	*pw = (struct pty_wait){sc, urh};
	if (!tls_on()) {
		/* In clear, sock is the connection itself: this thread waits. */
		pty_wait_main(pw);
		return;
	}
	/* Over TLS this thread relays the bytes between the TLS connection
	 * and sock (libmicrohttpd does it once this callback returns), so
	 * another thread waits. Without one, no relay could run: the pty
	 * ends. */
	pthread_t t;
	pthread_attr_t a;
	int e = pthread_attr_init(&a);
	if (e == 0) {
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		e = pthread_create(&t, &a, pty_wait_main, pw);
		pthread_attr_destroy(&a);
	}
	if (e != 0) {
		MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
		stream_free(sc);
		free(pw);
	}
}

/* The start of an exec message to a session's worker:
 * {"op":"exec","t_req_ns":T,"argv":[...]; T (CLOCK_MONOTONIC, the moment
 * the whole HTTP request was in) starts the exec's start_to_exec_seconds. */
void exec_op_begin(jwriter *w, const jnode *argv, uint64_t t_req)
{
	jw_obj_begin(w);
	jw_key(w, "op");
	jw_str(w, "exec");
	jw_key(w, "t_req_ns");
	jw_uint(w, t_req);
	jw_key(w, "argv");
	jw_arr_begin(w);
	for (size_t i = 0; i < argv->n; i++)
		jw_str(w, argv->items[i]->str);
	jw_arr_end(w);
}

static enum MHD_Result start_exec(struct MHD_Connection *c, struct session_ent *se, const char *sid,
				  const jnode *body, uint64_t t_req)
{
	if (!body || body->type != J_OBJ)
		return send_error(c, 400, "request body: a JSON object is expected");
	const jnode *argv = json_get(body, "argv"), *env = json_get(body, "env"), *cwd = json_get(body, "cwd"),
		    *in = json_get(body, "stdin"), *in64 = json_get(body, "stdin_b64"),
		    *tmo = json_get(body, "timeout"), *pty = json_get(body, "pty");
	if (!argv || argv->type != J_ARR || argv->n == 0)
		return send_error(c, 400, "argv: a non-empty array of strings is required");
	for (size_t i = 0; i < argv->n; i++)
		if (argv->items[i]->type != J_STR)
			return send_error(c, 400, "argv[%zu]: a string is expected", i);
	if (env && env->type != J_OBJ)
		return send_error(c, 400, "env: an object of strings is expected");
	for (size_t i = 0; env && i < env->n; i++)
		if (env->items[i]->type != J_STR || !env_name_valid(env->keys[i]))
			return send_error(c, 400, "env.%s: a valid name with a string value is expected", env->keys[i]);
	if (cwd && (cwd->type != J_STR || !cwd->str[0]))
		return send_error(c, 400, "cwd: a path is expected (absolute, or relative to the session's cwd)");
	if (pty && pty->type != J_BOOL)
		return send_error(c, 400, "pty: true or false is expected");
	bool want_pty = pty && pty->b;
	const jnode *bg = json_get(body, "background");
	if (bg && (bg->type != J_BOOL || (bg->b && want_pty)))
		return send_error(c, 400, "background: true or false is expected (and a pty exec is not one)");
	bool background = bg && bg->b;
	if (want_pty && !upgrade_requested(c))
		return send_error(c, 400, "pty: the request must ask for the upgrade (Connection: Upgrade, Upgrade: tcp)");
	if (want_pty && (in || in64))
		return send_error(c, 400, "pty: the pty is its standard input; stdin and stdin_b64 are not taken");
	const jnode *rows = json_get(body, "rows"), *cols = json_get(body, "cols");
	if (in && in64)
		return send_error(c, 400, "stdin and stdin_b64: give one of them");
	if ((in && in->type != J_STR) || (in64 && in64->type != J_STR))
		return send_error(c, 400, "stdin: a string is expected");
	uint64_t tmo_ns = 0;
	cordon_error e;
	if (tmo && (tmo->type != J_STR || parse_duration(tmo->str, &tmo_ns, &e) < 0))
		return send_error(c, 400, "timeout: a duration such as \"30s\" is expected");
	int infd = -1;
	if (in)
		infd = ipc_memfd("cordon-stdin", in->str, strlen(in->str));
	else if (in64) {
		size_t l = strlen(in64->str);
		uint8_t *d = malloc(l / 4 * 3 + 4);
		ssize_t dl = d ? b64_decode(in64->str, l, d) : -1;
		if (dl < 0) {
			free(d);
			return send_error(c, 400, "stdin_b64: not base64");
		}
		infd = ipc_memfd("cordon-stdin", d, (size_t)dl);
		free(d);
	}
	jwriter w = {0};
	exec_op_begin(&w, argv, t_req);
	if (env) {
		jw_key(&w, "env");
		jw_obj_begin(&w);
		for (size_t i = 0; i < env->n; i++) {
			jw_key(&w, env->keys[i]);
			jw_str(&w, env->items[i]->str);
		}
		jw_obj_end(&w);
	}
	if (cwd) {
		jw_key(&w, "cwd");
		jw_str(&w, cwd->str);
	}
	jw_key(&w, "timeout_ns");
	jw_uint(&w, tmo_ns);
	if (background) {
		jw_key(&w, "background");
		jw_bool(&w, true);
	}
	if (want_pty) {
		jw_key(&w, "pty");
		jw_bool(&w, true);
		if (rows && rows->type == J_NUM) {
			jw_key(&w, "rows");
			jw_uint(&w, (uint64_t)rows->num);
		}
		if (cols && cols->type == J_NUM) {
			jw_key(&w, "cols");
			jw_uint(&w, (uint64_t)cols->num);
		}
	}
	jw_obj_end(&w);
	if (jw_finish(&w) < 0 || w.out.len >= IPC_MAX_PACKET) {
		buf_free(&w.out);
		if (infd >= 0)
			close(infd);
		return send_error(c, 413, "the exec request is larger than %d bytes (send big inputs as stdin)", IPC_MAX_PACKET);
	}
	int reply = to_worker(se, sid, w.out.p, infd);
	buf_free(&w.out);
	if (infd >= 0)
		close(infd);
	if (reply < 0)
		return send_error(c, 410, "the session has ended");
	/* The first packet decides: an error, or the stream. */
	enum MHD_Result ret;
	struct stream_ctx *sc =
		stream_open(c, reply, sid, "the session has ended (its report: GET /v1/sessions/ID/report)", &ret);
	if (!sc)
		return ret;
	if (background) {
		/* Answered at once: the exec runs on, its output kept for
		 * GET .../output (docs/api.md, "Background execs"). */
		jnode *j = json_parse(sc->pkt, sc->len, &e);
		stream_free(sc);
		const jnode *eid = j ? json_get(j, "exec") : NULL;
		char a[128];
		snprintf(a, sizeof(a), "{\"exec\":\"%s\",\"state\":\"running\",\"background\":true}\n",
			 eid && eid->str && route_id_valid(eid->str, "e-") ? eid->str : "");
		json_free(j);
		return send_text(c, 200, "application/json", a, strlen(a));
	}
	sc->release = true;
	if (want_pty) {
		jnode *j = json_parse(sc->pkt, sc->len, &e);
		const jnode *eid = j ? json_get(j, "exec") : NULL;
		snprintf(sc->eid, sizeof(sc->eid), "%s", eid && eid->str ? eid->str : "");
		json_free(j);
		snprintf(sc->sid, sizeof(sc->sid), "%s", sid);
		sc->se = se;
		struct MHD_Response *u = MHD_create_response_for_upgrade(pty_upgraded, sc);
		if (!u) {
			stream_free(sc);
			return MHD_NO;
		}
		MHD_add_response_header(u, "Upgrade", "tcp");
		no_timeout(c);
		MHD_add_response_header(u, "X-Cordon-Exec", sc->eid);
		ret = MHD_queue_response(c, MHD_HTTP_SWITCHING_PROTOCOLS, u);
		MHD_destroy_response(u);
		return ret;
	}
	return queue_stream(c, sc);
}

/* GET .../exec/{eid}/output[?follow=0]: a background exec's output, an
 * NDJSON stream as an exec's own (the worker's "output"). */
static enum MHD_Result exec_output(struct MHD_Connection *c, struct session_ent *se, const char *sid,
				   const char *eid)
{
	const char *fo = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "follow");
	bool follow = !fo || strcmp(fo, "1") == 0 || strcmp(fo, "true") == 0;
	if (fo && follow == false && strcmp(fo, "0") != 0 && strcmp(fo, "false") != 0)
		return send_error(c, 400, "follow: 1 or 0 (true or false) is expected");
	char j[128];
	snprintf(j, sizeof(j), "{\"op\":\"output\",\"exec\":\"%s\",\"follow\":%s}", eid, follow ? "true" : "false");
	int reply = to_worker(se, sid, j, -1);
	if (reply < 0)
		return send_error(c, 410, "the session has ended");
	if (!reply_ready(reply)) {
		close(reply);
		return worker_late(c);
	}
	enum MHD_Result ret;
	struct stream_ctx *sc = stream_open(c, reply, sid, "the session has ended", &ret);
	return sc ? queue_stream(c, sc) : ret;
}

/* The worker went away without an answer (its session ended meanwhile):
 * false when it answered, or did not within --worker-timeout (then
 * relay_reply says so). */
static bool reply_gone(int reply)
{
	char b;
	if (!reply_ready(reply))
		return false;
	ssize_t n;
	do
		n = recv(reply, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	return n == 0;
}

static enum MHD_Result simple_op(struct MHD_Connection *c, struct session_ent *se, const char *sid,
				 const char *json, int extra, unsigned ok, const char *type)
{
	int reply = to_worker(se, sid, json, extra);
	if (reply < 0)
		return send_error(c, 410, "the session has ended");
	enum MHD_Result r = reply_gone(reply) ? send_error(c, 410, "the session has ended")
					      : relay_reply(c, reply, ok, type);
	close(reply);
	return r;
}

/* ---- ended sessions (serve-kept.c) ---- */

static enum MHD_Result send_kept_report(struct MHD_Connection *c, const char *sid)
{
	buf b = {0};
	enum MHD_Result r = kept_session_report(sid, &b) == 0 && b.len
				    ? send_text(c, 200, "application/json", b.p, b.len)
				    : send_error(c, 410, "session %s has ended and left no report", sid);
	buf_free(&b);
	return r;
}

/* A request for a session that is not running: its report while it is
 * kept (GET .../report, and DELETE, so that a client's end of a session
 * that ended by itself gets the report), 410 for anything else; 404 once
 * it is no longer kept, or for another client's. */
static enum MHD_Result ended_session_op(struct MHD_Connection *c, const struct route *rt, uid_t uid)
{
	/* Between a DELETE and its worker's exit the session is ending: it
	 * exists (never 404), its report once written; nothing runs in it. */
	pthread_mutex_lock(&S.lock);
	bool ending = session_is_ending(rt->sid, uid);
	pthread_mutex_unlock(&S.lock);
	if (ending) {
		buf b = {0};
		enum MHD_Result r;
		if (rt->kind == R_SESSION_GET) {
			char j[96];
			snprintf(j, sizeof(j), "{\"id\":\"%s\",\"state\":\"ending\"}\n", rt->sid);
			r = send_text(c, 200, "application/json", j, strlen(j));
		} else if (rt->kind != R_SESSION_REPORT && rt->kind != R_SESSION_DELETE)
			r = send_error(c, 410, "session %s is ending", rt->sid);
		else if (kept_session_report(rt->sid, &b) == 0 && b.len)
			r = send_text(c, 200, "application/json", b.p, b.len);
		else
			r = send_error(c, 409, "session %s is ending and its report is not written yet (the DELETE that ends it answers with it); try again",
				       rt->sid);
		buf_free(&b);
		return r;
	}
	if (!kept_session_visible(rt->sid, uid))
		return send_error(c, 404, "no such session: %s (or no longer kept)", rt->sid);
	switch (rt->kind) {
	case R_SESSION_REPORT:
	case R_SESSION_DELETE:
		return send_kept_report(c, rt->sid);
	case R_SESSION_GET: {
		char j[96];
		snprintf(j, sizeof(j), "{\"id\":\"%s\",\"state\":\"ended\"}\n", rt->sid);
		return send_text(c, 200, "application/json", j, strlen(j));
	}
	default:
		return send_error(c, 410, "session %s has ended (its report: GET /v1/sessions/%s/report)", rt->sid,
				  rt->sid);
	}
}

/* DELETE: the worker answers with the report; one that ended meanwhile
 * (its timeout) wrote it to its directory before it exited. */
static enum MHD_Result end_op(struct MHD_Connection *c, struct session_ent *se, const char *sid)
{
	int reply = to_worker(se, sid, "{\"op\":\"end\"}", -1);
	if (reply >= 0 && !reply_gone(reply)) {
		enum MHD_Result r = relay_reply(c, reply, 200, "application/json");
		close(reply);
		return r;
	}
	if (reply >= 0)
		close(reply);
	return send_kept_report(c, sid);
}

/* GET /v1/sessions: the client's sessions (root: all), running and
 * kept after their end. */
enum MHD_Result list_sessions(struct MHD_Connection *c, uid_t uid)
{
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "sessions");
	jw_arr_begin(&w);
	pthread_mutex_lock(&S.lock);
	for (int i = 0; i < S.nslots; i++) {
		const struct session_ent *se = &S.ss[i];
		if (!se->used || se->warm || se->oneshot || (uid != 0 && se->owner != uid))
			continue;
		jw_obj_begin(&w);
		jw_key(&w, "id");
		jw_str(&w, se->id);
		jw_key(&w, "state");
		jw_str(&w, se->ending ? "ending" : "running");
		jw_key(&w, "owner");
		jw_uint(&w, se->owner);
		jw_obj_end(&w);
	}
	pthread_mutex_unlock(&S.lock);
	kept_sessions_list(&w, uid);
	jw_arr_end(&w);
	jw_obj_end(&w);
	enum MHD_Result r = jw_finish(&w) == 0 ? send_text(c, 200, "application/json", w.out.p, w.out.len)
					       : send_error(c, 500, "out of memory");
	buf_free(&w.out);
	return r;
}

enum MHD_Result session_op(struct MHD_Connection *c, const struct route *rt, struct req *rq)
{
	pthread_mutex_lock(&S.lock);
	struct session_ent *se = find_session(rt->sid, rq->uid);
	pthread_mutex_unlock(&S.lock);
	if (!se)
		return ended_session_op(c, rt, rq->uid);
	if (rt->kind == R_SESSION_REPORT)
		return send_error(c, 409, "session %s is running: DELETE ends it and answers with its report", rt->sid);
	cordon_error e = {0};
	jnode *body = NULL;
	if ((rt->kind == R_EXEC || rt->kind == R_EXEC_SIGNAL || rt->kind == R_EXEC_RESIZE ||
	     rt->kind == R_SESSION_RESTORE) && rq->body.len &&
	    !(body = json_parse(rq->body.p, rq->body.len, &e)))
		return send_error(c, 400, "request body: %s", e.msg);
	enum MHD_Result r;
	jwriter w = {0};
	const char *path = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "path");
	switch (rt->kind) {
	case R_SESSION_GET:
		r = simple_op(c, se, rt->sid, "{\"op\":\"get\"}", -1, 200, "application/json");
		break;
	case R_SESSION_DELETE:
		pthread_mutex_lock(&S.lock);
		se->ending = true;
		pool_release_locked(se);
		pthread_mutex_unlock(&S.lock);
		r = end_op(c, se, rt->sid);
		break;
	case R_EXEC:
		r = start_exec(c, se, rt->sid, body, rq->t_req);
		break;
	case R_EXEC_OUTPUT:
		r = exec_output(c, se, rt->sid, rt->eid);
		break;
	case R_SESSION_CHANGES:
		r = session_changes(c, se, rt->sid, NULL, CHANGES_DIFF_MAX);
		break;
	case R_SNAPSHOT_CHANGES:
		r = session_changes(c, se, rt->sid, rt->eid, CHANGES_DIFF_MAX);
		break;
	case R_SESSION_PAUSE:
	case R_SESSION_RESUME:
		r = simple_op(c, se, rt->sid, rt->kind == R_SESSION_PAUSE ? "{\"op\":\"pause\"}" : "{\"op\":\"resume\"}",
			      -1, 200, "application/json");
		break;
	case R_SNAPSHOT_TAKE:
	case R_SNAPSHOTS_LIST: {
		bool take = rt->kind == R_SNAPSHOT_TAKE;
		r = simple_op(c, se, rt->sid, take ? "{\"op\":\"snapshot\"}" : "{\"op\":\"snapshots\"}", -1,
			      take ? 201 : 200, "application/json");
		break;
	}
	case R_SESSION_RESTORE: {
		const jnode *sn = body ? json_get(body, "snapshot") : NULL;
		if (!sn || sn->type != J_STR || !route_id_valid(sn->str, "p-")) {
			r = send_error(c, 400, "snapshot: a snapshot's id (\"p-\" and 16 hex digits) is required");
			break;
		}
		jw_obj_begin(&w);
		jw_key(&w, "op");
		jw_str(&w, "restore");
		jw_key(&w, "snapshot");
		jw_str(&w, sn->str);
		jw_obj_end(&w);
		jw_finish(&w);
		r = simple_op(c, se, rt->sid, w.out.p, -1, 200, "application/json");
		break;
	}
	case R_SESSION_FORK:
		r = fork_session(c, se, rt->sid, rq);
		break;
	case R_SNAPSHOT_DELETE:
	case R_SNAPSHOT_CHANGESET:
		jw_obj_begin(&w);
		jw_key(&w, "op");
		jw_str(&w, rt->kind == R_SNAPSHOT_DELETE ? "snapshot_delete" : "snapshot_changeset");
		jw_key(&w, "snapshot");
		jw_str(&w, rt->eid);
		jw_obj_end(&w);
		jw_finish(&w);
		r = simple_op(c, se, rt->sid, w.out.p, -1, rt->kind == R_SNAPSHOT_DELETE ? 200 : 201,
			      "application/json");
		break;
	case R_EXEC_GET:
	case R_EXEC_SIGNAL: {
		const jnode *sig = body ? json_get(body, "signal") : NULL;
		if (rt->kind == R_EXEC_SIGNAL && (!sig || sig->type != J_STR)) {
			r = send_error(c, 400, "signal: a string such as \"TERM\" is required");
			break;
		}
		jw_obj_begin(&w);
		jw_key(&w, "op");
		jw_str(&w, rt->kind == R_EXEC_GET ? "exec_get" : "signal");
		jw_key(&w, "exec");
		jw_str(&w, rt->eid);
		if (sig) {
			jw_key(&w, "signal");
			jw_str(&w, sig->str);
		}
		jw_obj_end(&w);
		jw_finish(&w);
		r = simple_op(c, se, rt->sid, w.out.p, -1, 200, "application/json");
		break;
	}
	case R_EXEC_RESIZE: {
		const jnode *rows = body ? json_get(body, "rows") : NULL, *cols = body ? json_get(body, "cols") : NULL;
		if (!rows || rows->type != J_NUM || !cols || cols->type != J_NUM) {
			r = send_error(c, 400, "rows and cols: numbers are required");
			break;
		}
		jw_obj_begin(&w);
		jw_key(&w, "op");
		jw_str(&w, "resize");
		jw_key(&w, "exec");
		jw_str(&w, rt->eid);
		jw_key(&w, "rows");
		jw_int(&w, (int64_t)rows->num);
		jw_key(&w, "cols");
		jw_int(&w, (int64_t)cols->num);
		jw_obj_end(&w);
		jw_finish(&w);
		r = simple_op(c, se, rt->sid, w.out.p, -1, 200, "application/json");
		break;
	}
	case R_FILE_GET:
	case R_FILE_PUT:
	case R_FILE_DELETE:
	case R_FILE_LIST: {
		if (!path || !path[0]) {
			r = send_error(c, 400, "path: the query parameter ?path=P is required");
			break;
		}
		/* A relative P is the session's cwd's (where its execs start):
		 * the worker resolves it. PUT makes missing parents unless
		 * ?parents=0. */
		const char *par = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "parents");
		bool parents = !par || strcmp(par, "1") == 0 || strcmp(par, "true") == 0;
		if (par && !parents && strcmp(par, "0") != 0 && strcmp(par, "false") != 0) {
			r = send_error(c, 400, "parents: 1 or 0 (true or false) is expected");
			break;
		}
		const char *act = rt->kind == R_FILE_GET ? "read" : rt->kind == R_FILE_PUT ? "write" :
				  rt->kind == R_FILE_DELETE ? "delete" : "list";
		jw_obj_begin(&w);
		jw_key(&w, "op");
		jw_str(&w, "file");
		jw_key(&w, "action");
		jw_str(&w, act);
		jw_key(&w, "path");
		jw_str(&w, path);
		if (rt->kind == R_FILE_PUT) {
			jw_key(&w, "parents");
			jw_bool(&w, parents);
		}
		/* The path's bytes as they are (a name need not be UTF-8; the
		 * JSON string above is for the worker's messages only). */
		{
			char hex[2 * PATH_MAX + 1];
			size_t pl = strlen(path);
			if (pl < PATH_MAX) {
				for (size_t i = 0; i < pl; i++)
					snprintf(hex + 2 * i, 3, "%02x", (unsigned char)path[i]);
				hex[2 * pl] = '\0';
				jw_key(&w, "path_hex");
				jw_str(&w, hex);
			}
		}
		jw_obj_end(&w);
		jw_finish(&w);
		int bfd = rt->kind == R_FILE_PUT ? ipc_memfd("cordon-put", rq->body.p ? rq->body.p : "", rq->body.len) : -1;
		r = simple_op(c, se, rt->sid, w.out.p, bfd, 200,
			      rt->kind == R_FILE_GET ? "application/octet-stream" : "application/json");
		if (bfd >= 0)
			close(bfd);
		break;
	}
	default:
		r = send_error(c, 404, "not found");
	}
	buf_free(&w.out);
	json_free(body);
	return r;
}
