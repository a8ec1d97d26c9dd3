/* cordon serve: the HTTP/1.1 + JSON API on a Unix socket (or loopback TCP
 * with a bearer token), docs/api.md. libmicrohttpd parses HTTP, one thread
 * per connection; this file authenticates, routes (lib/serve-route.c),
 * checks bodies (lib/json.c) and hands each request to the session's worker
 * process (lib/session.c) or, for one-shot runs, to `cordon run`. Sessions
 * are separate processes: one that fails takes no other down. */
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
#include "ceiling.h"
#include "serve-ipc.h"
#include "serve-limits.h"
#include "serve-kept.h"
#include "serve-peer.h"
#include "serve-route.h"
#include "session.h"
#include "strv.h"
#include "units.h"
#include "cli-serve.h"

extern char **environ;

#define BODY_MAX (64u << 20)
#define MAX_ALLOW 32
#define WARM_MAX 64
#define WARM_MAX_S "64"
/* The longest a claim holds the pool's refill back (see hold). */
#define HOLD_MAX_NS (2000ULL * 1000000ULL)
/* A session's lease (docs/api.md): it ends after this long with no call
 * of its client's, unless --idle-timeout or its request says otherwise. */
#define IDLE_DEFAULT_NS (30ULL * 60ULL * 1000000000ULL)

struct session_ent {
	bool used;
	char id[ROUTE_ID_LEN + 1];
	pid_t pid;
	int ctl;
	uid_t owner;
	bool ending; /* DELETE sent: no longer counted, reaped when its worker exits */
	/* In the warm pool: no client's, not found by id, not counted; ready
	 * once its worker answered that the boundary is up. */
	bool warm, warm_ready;
	/* Taken from the pool by a one-shot run (POST /v1/runs): the run's,
	 * not a session of its client's (not found by id, not counted). */
	bool oneshot;
	/* Just taken from the pool: its refill waits (pool_release) until this
	 * session's first exec or one-shot run is over, so that building the
	 * next boundary does not take the CPU from it. */
	bool hold;
	pthread_mutex_t lock; /* sends on ctl */
};

static struct {
	const char *socket_path, *listen, *state_dir, *ceiling;
	char cordon[PATH_MAX]; /* the cordon beside this program: runs and session workers */
	char token[256];
	uid_t allow[MAX_ALLOW];
	int nallow;
	int max_sessions, max_per_client, keep_runs, keep_sessions;
	uint64_t idle_ns, timeout_ns;
	/* The longest a request waits for a session's worker to answer (then
	 * 504; a session that never came up is killed), and the longest
	 * SIGTERM waits for the workers before it kills them. */
	uint64_t worker_ns, grace_ns;
	struct session_ent *ss;
	pthread_mutex_t lock;
	strv runs; /* ids kept, oldest first */
	bool stopping;
	int nslots;  /* 2 * max_sessions (ending ones keep theirs until reaped) + warm */
	/* The warm pool (--warm N, --warm-policy F): N sessions started ahead
	 * for one policy, F's (re-serialized) or, without F, a request without
	 * a policy; refilled by one thread, woken on every change. */
	int warm;
	char *warm_policy;
	pthread_cond_t pool_cond;
	pthread_t pool_thread;
	uint64_t pool_hits, pool_misses, pool_failures;
	int pool_holds;          /* sessions with hold set */
	uint64_t hold_until;     /* CLOCK_MONOTONIC ns: no hold lasts past this */
	/* Connections (docs/api.md, "Limits of the server"): at most this
	 * many at once (those not yet authenticated: serve-limits.c; per_ip is
	 * no longer used), and an idle or
	 * incomplete request closed after conn_timeout seconds. */
	unsigned max_conns, per_ip, conn_timeout;
	uid_t tcp_uid;             /* who a bearer-token client is (--tcp-uid) */
	/* One-shot runs going on (at most max_runs, max_runs_client of one
	 * uid), and what is kept of each stream of a run. */
	int nruns, max_runs, max_runs_client;
	struct run_ent { uid_t uid; int n; } run_by[64];
	size_t run_out_max;
	struct ceiling ceil;       /* loaded when there is one */
	bool have_ceil;
	/* --socket-mode (0: 0600, or 0660 with --socket-group), --socket-group */
	mode_t sock_mode;
	gid_t sock_gid;
	bool sock_gid_set;
} S = {.worker_ns = 120ULL * 1000000000ULL, .grace_ns = 20ULL * 1000000000ULL, .max_sessions = 64, .keep_runs = 100, .keep_sessions = 100, .idle_ns = IDLE_DEFAULT_NS, .lock = PTHREAD_MUTEX_INITIALIZER, .pool_cond = PTHREAD_COND_INITIALIZER,
       .max_conns = 256, .per_ip = 32, .conn_timeout = 30, .tcp_uid = 65534, .max_runs = 16, .run_out_max = 16u << 20};

struct req {
	buf body;
	bool too_big;
	bool over_budget; /* the bodies' budget had no room (503), the rest discarded */
	body_hold held;   /* of that budget (serve-limits.c) */
	uid_t uid;
	uint64_t t_req; /* CLOCK_MONOTONIC: the whole request was in */
};

/* ---- responses ---- */

/* Retry-After of every 429 and 503, in seconds: a run, a session's slot or
 * a body's room is usually free again by then. */
#define SERVE_RETRY_AFTER "1"

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned code, const char *type, const char *text,
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

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static enum MHD_Result send_error(struct MHD_Connection *c, unsigned code, const char *fmt, ...)
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
static uint64_t mono_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
static uint64_t realtime_ns(void) { return clock_ns(CLOCK_REALTIME); }

static void new_id(char *out, const char *prefix)
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
static bool reply_ready(int reply)
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

static enum MHD_Result worker_late(struct MHD_Connection *c)
{
	return send_error(c, 504, "the session's worker did not answer within %llu ms",
			  (unsigned long long)(S.worker_ns / 1000000ULL));
}

/* A reply from a worker: a JSON packet, maybe with its body in an fd. */
static enum MHD_Result relay_reply(struct MHD_Connection *c, int reply, unsigned ok_code, const char *type)
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

/* ---- sessions ---- */

static struct session_ent *find_session(const char *id, uid_t uid)
{
	for (int i = 0; i < S.nslots; i++)
		if (S.ss[i].used && !S.ss[i].ending && !S.ss[i].warm && !S.ss[i].oneshot && strcmp(S.ss[i].id, id) == 0 &&
		    (uid == 0 || S.ss[i].owner == uid || uid == (uid_t)-1))
			return &S.ss[i];
	return NULL;
}

/* Send req to the session's worker with a fresh reply socket; returns our
 * end of it, or -1. */
static int to_worker(struct session_ent *se, const char *id, const char *json, int extra_fd)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	int fds[2] = {sv[1], extra_fd};
	int r = -1;
	/* Still the session it was found as (a reaped slot can be reused). */
	pthread_mutex_lock(&se->lock);
	if (se->used && se->ctl >= 0 && strcmp(se->id, id) == 0)
		r = ipc_send(se->ctl, json, strlen(json), fds, extra_fd >= 0 ? 2 : 1, 0);
	pthread_mutex_unlock(&se->lock);
	close(sv[1]);
	if (r < 0) {
		close(sv[0]);
		return -1;
	}
	return sv[0];
}

static pid_t spawn_self(const char *const *argv, int fd3, const char *cwd, int in, int out, int errfd)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	sigset_t none, def;
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (fd3 >= 0)
		posix_spawn_file_actions_adddup2(&fa, fd3, 3);
	if (in >= 0)
		posix_spawn_file_actions_adddup2(&fa, in, 0);
	if (out >= 0)
		posix_spawn_file_actions_adddup2(&fa, out, 1);
	if (errfd >= 0)
		posix_spawn_file_actions_adddup2(&fa, errfd, 2);
	if (cwd)
		posix_spawn_file_actions_addchdir_np(&fa, cwd);
	pid_t pid = -1;
	if (posix_spawn(&pid, S.cordon, &fa, &at, (char *const *)argv, environ) != 0)
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return pid;
}

static int mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, mode) < 0 && errno != EEXIST ? -1 : 0;
}

static void write_node(jwriter *w, const jnode *x)
{
	switch (x->type) {
	case J_NULL:
		jw_null(w);
		break;
	case J_BOOL:
		jw_bool(w, x->b);
		break;
	case J_NUM:
		if (x->num_is_int)
			jw_int(w, (int64_t)x->num);
		else
			jw_double(w, x->num);
		break;
	case J_STR:
		jw_str(w, x->str);
		break;
	case J_ARR:
		jw_arr_begin(w);
		for (size_t i = 0; i < x->n; i++)
			write_node(w, x->items[i]);
		jw_arr_end(w);
		break;
	case J_OBJ:
		jw_obj_begin(w);
		for (size_t i = 0; i < x->n; i++) {
			jw_key(w, x->keys[i]);
			write_node(w, x->items[i]);
		}
		jw_obj_end(w);
		break;
	}
}

/* A policy object back to JSON text for the policy parser. */
static char *node_text(const jnode *n)
{
	jwriter w = {0};
	write_node(&w, n);
	if (jw_finish(&w) < 0) {
		buf_free(&w.out);
		return NULL;
	}
	return w.out.p;
}

static int count_sessions(uid_t owner, int *mine)
{
	int n = 0;
	*mine = 0;
	for (int i = 0; i < S.nslots; i++)
		if (S.ss[i].used && !S.ss[i].ending && !S.ss[i].warm && !S.ss[i].oneshot) {
			n++;
			*mine += S.ss[i].owner == owner;
		}
	return n;
}

/* A session's workspace: <state>/sessions/<id>/work (where its execs
 * start). False if it does not fit. */
static bool session_ws(char *out, size_t sz, const char *id)
{
	return snprintf(out, sz, "%s/sessions/%s/work", S.state_dir, id) < (int)sz;
}

/* Start a session's worker in slot se (reserved by the caller) and send it
 * its first request; returns our end of its reply socket (the worker
 * answers once the boundary is up, or with why it is not), or -1 with msg
 * set (the slot is then the caller's to free). */
static int start_worker(struct session_ent *se, const char *id, uint64_t idle_ns, const char *tmo, int polfd,
			bool warm, char *msg, size_t msz)
{
	char dir[PATH_MAX], ws[PATH_MAX], rep[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/sessions/%s", S.state_dir, id);
	session_ws(ws, sizeof(ws), id);
	snprintf(rep, sizeof(rep), "%s/report.json", dir);
	int sv[2] = {-1, -1};
	/* A client's session is the client's: its workspace too (serve-peer.h). */
	gid_t cgid = 0;
	bool as_client = !warm && peer_run_as_client(se->owner, &cgid);
	if (mkdir_p(ws, 0700) < 0 || (as_client && chown(ws, se->owner, cgid) < 0) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(msg, msz, "session %s: %s", dir, strerror(errno));
		return -1;
	}
	const char *argv[] = {"cordon", "__session-worker", NULL};
	pid_t pid = spawn_self(argv, sv[1], NULL, -1, -1, -1);
	close(sv[1]);
	pthread_mutex_lock(&S.lock);
	se->pid = pid;
	se->ctl = sv[0];
	/* SIGTERM came while it was being started: it ends with the rest. */
	if (pid > 0 && S.stopping)
		kill(pid, SIGTERM);
	pthread_mutex_unlock(&S.lock);
	if (pid < 0) {
		snprintf(msg, msz, "could not start the session's worker");
		return -1;
	}
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "id");
	jw_str(&w, id);
	jw_key(&w, "workspace");
	jw_str(&w, ws);
	jw_key(&w, "report");
	jw_str(&w, rep);
	jw_key(&w, "ceiling");
	jw_str(&w, S.ceiling);
	jw_key(&w, "idle_timeout_ns");
	jw_uint(&w, idle_ns);
	if (as_client) {
		jw_key(&w, "client_uid");
		jw_uint(&w, se->owner);
		jw_key(&w, "client_gid");
		jw_uint(&w, cgid);
	}
	if (warm) {
		jw_key(&w, "warm");
		jw_bool(&w, true);
	}
	if (tmo) {
		jw_key(&w, "timeout");
		jw_str(&w, tmo);
	} else if (S.timeout_ns) {
		char t[32];
		snprintf(t, sizeof(t), "%llums", (unsigned long long)(S.timeout_ns / 1000000ULL));
		jw_key(&w, "default_timeout");
		jw_str(&w, t);
	}
	jw_obj_end(&w);
	jw_finish(&w);
	int reply = w.out.p ? to_worker(se, id, w.out.p, polfd) : -1;
	buf_free(&w.out);
	if (reply < 0)
		snprintf(msg, msz, "the session's worker did not take its request");
	return reply;
}

static void pool_release_locked(struct session_ent *se);

/* A slot whose worker never ran (or was killed here): free it. */
static void slot_abandon(struct session_ent *se)
{
	pthread_mutex_lock(&S.lock);
	pthread_mutex_lock(&se->lock);
	if (se->ctl >= 0)
		close(se->ctl);
	se->ctl = -1;
	if (se->pid > 0) {
		kill(se->pid, SIGKILL);
		waitpid(se->pid, NULL, 0);
	}
	se->pid = -1;
	pool_release_locked(se);
	se->used = se->warm = se->warm_ready = se->oneshot = false;
	pthread_mutex_unlock(&se->lock);
	pthread_mutex_unlock(&S.lock);
	pthread_cond_broadcast(&S.pool_cond);
}

static int free_slot(void)
{
	for (int i = 0; i < S.nslots; i++)
		if (!S.ss[i].used)
			return i;
	return -1;
}

/* Is this request one the warm pool was made for? No timeout of its own
 * (the pool's sessions have the server's), and the pool's policy: none
 * without --warm-policy, else that policy's JSON, key for key. */
static bool pool_matches(const jnode *pol, const jnode *tmo)
{
	if (!S.warm || tmo)
		return false;
	if (!S.warm_policy || !pol)
		return !S.warm_policy && !pol;
	char *t = node_text(pol);
	bool m = t && strcmp(t, S.warm_policy) == 0;
	free(t);
	return m;
}

/* The pool's sessions are started as the server: another client gets one
 * only when the pool's policy writes no host path (the session's own
 * workspace is new and the server's; a host tree would be the server's). */
static bool pool_for(uid_t uid)
{
	gid_t g;
	return !peer_run_as_client(uid, &g) || !peer_policy_writes_host(S.warm_policy);
}

/* Hand a ready pool session to uid: from here on it is uid's like any
 * other (its worker re-arms its timers). NULL if the pool is empty. */
static struct session_ent *pool_take(uid_t uid, bool oneshot)
{
	struct session_ent *se = NULL;
	for (int i = 0; i < S.nslots && !se; i++)
		if (S.ss[i].used && S.ss[i].warm && S.ss[i].warm_ready && !S.ss[i].ending)
			se = &S.ss[i];
	if (se) {
		se->warm = se->warm_ready = false;
		se->oneshot = oneshot;
		se->owner = uid;
		S.pool_hits++;
		if (!se->hold) {
			se->hold = true;
			S.pool_holds++;
		}
		S.hold_until = mono_ns() + HOLD_MAX_NS;
	} else {
		S.pool_misses++;
	}
	pthread_cond_broadcast(&S.pool_cond);
	return se;
}

/* se's claim is over (its first exec or its run ended, or it ended):
 * the refill may go on. Under S.lock. */
static void pool_release_locked(struct session_ent *se)
{
	if (se->hold) {
		se->hold = false;
		S.pool_holds--;
		pthread_cond_broadcast(&S.pool_cond);
	}
}

static void pool_release(const char *sid)
{
	pthread_mutex_lock(&S.lock);
	for (int i = 0; i < S.nslots; i++)
		if (S.ss[i].used && S.ss[i].hold && strcmp(S.ss[i].id, sid) == 0)
			pool_release_locked(&S.ss[i]);
	pthread_mutex_unlock(&S.lock);
}

static int pool_count(void)
{
	int n = 0;
	for (int i = 0; i < S.nslots; i++)
		n += S.ss[i].used && S.ss[i].warm;
	return n;
}

/* The refill thread: keeps S.warm sessions in the pool, one started at a
 * time (each takes a worker and a boundary: starting them all at once
 * would take the machine from the clients). A worker that fails to start
 * is retried after a second, so a broken policy cannot spin. */
static void *pool_main(void *unused)
{
	(void)unused;
	for (;;) {
		pthread_mutex_lock(&S.lock);
		int slot = -1;
		for (;;) {
			if (S.stopping)
				break;
			uint64_t now = mono_ns();
			if (S.pool_holds > 0 && now < S.hold_until) {
				uint64_t t = (uint64_t)realtime_ns() + (S.hold_until - now);
				struct timespec ts = {(time_t)(t / 1000000000ULL), (long)(t % 1000000000ULL)};
				pthread_cond_timedwait(&S.pool_cond, &S.lock, &ts);
				continue;
			}
			if (pool_count() < S.warm && (slot = free_slot()) >= 0)
				break;
			pthread_cond_wait(&S.pool_cond, &S.lock);
		}
		if (S.stopping) {
			pthread_mutex_unlock(&S.lock);
			return NULL;
		}
		struct session_ent *se = &S.ss[slot];
		char id[ROUTE_ID_LEN + 1];
		new_id(id, "s-");
		se->used = se->warm = true;
		se->warm_ready = se->ending = se->oneshot = false;
		snprintf(se->id, sizeof(se->id), "%s", id);
		se->owner = (uid_t)-1;
		se->pid = -1;
		se->ctl = -1;
		pthread_mutex_unlock(&S.lock);
		int polfd = S.warm_policy ? ipc_memfd("cordon-policy", S.warm_policy, strlen(S.warm_policy)) : -1;
		char msg[512];
		int reply = start_worker(se, id, 0, NULL, polfd, true, msg, sizeof(msg));
		if (polfd >= 0)
			close(polfd);
		bool ok = false;
		if (reply >= 0) {
			char b[512];
			int fds[IPC_MAX_FDS], nfds = 0;
			ssize_t n = ipc_recv(reply, b, sizeof(b) - 1, fds, &nfds);
			for (int i = 0; i < nfds; i++)
				close(fds[i]);
			ok = n > 0 && !memmem(b, (size_t)n, "\"error\"", 7);
			close(reply);
		}
		if (ok) {
			pthread_mutex_lock(&S.lock);
			se->warm_ready = true;
			pthread_mutex_unlock(&S.lock);
			continue;
		}
		/* A worker that answered (an error) or died exits by itself and
		 * is reaped; one that never got its request is ended here, as is
		 * the slot without a worker. */
		pthread_mutex_lock(&S.lock);
		S.pool_failures++;
		pthread_mutex_unlock(&S.lock);
		if (reply < 0)
			slot_abandon(se);
		struct timespec ts = {1, 0};
		nanosleep(&ts, NULL);
	}
}

static enum MHD_Result create_session(struct MHD_Connection *c, const jnode *body, uid_t uid)
{
	const jnode *pol = body ? json_get(body, "policy") : NULL, *idle = body ? json_get(body, "idle_timeout") : NULL,
		    *tmo = body ? json_get(body, "timeout") : NULL;
	if (body && body->type != J_OBJ)
		return send_error(c, 400, "request body: a JSON object is expected");
	if (pol && pol->type != J_OBJ)
		return send_error(c, 400, "policy: an object (the same JSON as --policy) is expected");
	cordon_error e;
	uint64_t idle_ns = S.idle_ns, tmo_ns = 0;
	if (idle && (idle->type != J_STR || parse_duration(idle->str, &idle_ns, &e) < 0))
		return send_error(c, 400, "idle_timeout: a duration such as \"10m\" is expected");
	if (idle && !idle_ns && S.idle_ns)
		return send_error(c, 400, "idle_timeout: a positive duration is expected (it is the session's lease: "
					  "--idle-timeout of the server)");
	if (tmo && (tmo->type != J_STR || parse_duration(tmo->str, &tmo_ns, &e) < 0))
		return send_error(c, 400, "timeout: a duration such as \"1h\" is expected");
	bool warm = pool_matches(pol, tmo) && pool_for(uid);
	char id[ROUTE_ID_LEN + 1];
	new_id(id, "s-");
	/* The client's rights to what the policy names: before the pool too
	 * (a --warm-policy session has the operator's, not the client's). */
	char *ptext = pol ? node_text(pol) : NULL;
	char why[1024], ws[PATH_MAX];
	session_ws(ws, sizeof(ws), id);
	if (ptext && peer_policy_check(ptext, ws, uid, S.have_ceil ? S.ceil.p : NULL, why, sizeof(why)) < 0) {
		free(ptext);
		return send_error(c, 403, "unauthorized: %s", why);
	}
	pthread_mutex_lock(&S.lock);
	int mine, all = count_sessions(uid, &mine), slot = -1;
	if (S.stopping) {
		pthread_mutex_unlock(&S.lock);
		free(ptext);
		return send_error(c, 503, "the server is shutting down");
	}
	if (all >= S.max_sessions || mine >= S.max_per_client) {
		pthread_mutex_unlock(&S.lock);
		free(ptext);
		return send_error(c, 429, all >= S.max_sessions ? "the server runs its maximum of %d sessions"
							     : "this client (uid) has its maximum of %d sessions",
				  all >= S.max_sessions ? S.max_sessions : S.max_per_client);
	}
	struct session_ent *se = warm ? pool_take(uid, false) : NULL;
	if (se) {
		char sid[ROUTE_ID_LEN + 1], j[64];
		snprintf(sid, sizeof(sid), "%s", se->id);
		pthread_mutex_unlock(&S.lock);
		snprintf(j, sizeof(j), "{\"op\":\"claim\",\"idle_timeout_ns\":%llu}", (unsigned long long)idle_ns);
		int reply = to_worker(se, sid, j, -1);
		if (reply >= 0) {
			kept_owner_write(sid, uid);
			free(ptext);
			enum MHD_Result r = relay_reply(c, reply, 201, "application/json");
			close(reply);
			return r;
		}
		/* Its worker died in the pool (it is reaped): a cold one. The
		 * slot may hold another session by now (review 3 F4). */
		pthread_mutex_lock(&S.lock);
		if (se->used && strcmp(se->id, sid) == 0)
			se->ending = true;
	}
	slot = free_slot();
	if (slot < 0) {
		pthread_mutex_unlock(&S.lock);
		free(ptext);
		return send_error(c, 503, "too many sessions are still ending; try again");
	}
	se = &S.ss[slot];
	se->ending = se->warm = se->warm_ready = se->oneshot = false;
	se->used = true;
	snprintf(se->id, sizeof(se->id), "%s", id);
	se->owner = uid;
	se->pid = -1;
	se->ctl = -1;
	pthread_mutex_unlock(&S.lock);
	int polfd = ptext ? ipc_memfd("cordon-policy", ptext, strlen(ptext)) : -1;
	free(ptext);
	char msg[512];
	int reply = start_worker(se, id, idle_ns, tmo ? tmo->str : NULL, polfd, false, msg, sizeof(msg));
	if (polfd >= 0)
		close(polfd);
	if (reply >= 0)
		kept_owner_write(id, uid);
	if (reply < 0) {
		slot_abandon(se);
		return send_error(c, 500, "%s", msg);
	}
	if (!reply_ready(reply)) {
		/* Never came up: its slot is not held for good. Killed, it is
		 * reaped on SIGCHLD. */
		pthread_mutex_lock(&S.lock);
		if (se->used && strcmp(se->id, id) == 0 && se->pid > 0)
			kill(se->pid, SIGKILL);
		pthread_mutex_unlock(&S.lock);
		close(reply);
		return worker_late(c);
	}
	enum MHD_Result r = relay_reply(c, reply, 201, "application/json");
	/* Started or not: a worker that did not start exits by itself (and
	 * is reaped on SIGCHLD). */
	close(reply);
	return r;
}

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

static int to_worker(struct session_ent *se, const char *id, const char *json, int extra_fd);

/* The connection is raw bytes from here: the session's worker relays it to
 * and from the pty (a dup of the socket); this thread waits for the exec's
 * result, then closes the connection. */
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
	/* Until the worker closes the exec's event stream (after its result). */
	while (r >= 0 && ipc_recv(sc->reply, sc->pkt, IPC_MAX_PACKET + 1, NULL, NULL) > 0) {
	}
	MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
	stream_free(sc);
}

/* The start of an exec message to a session's worker:
 * {"op":"exec","t_req_ns":T,"argv":[...]; T (CLOCK_MONOTONIC, the moment
 * the whole HTTP request was in) starts the exec's start_to_exec_seconds. */
static void exec_op_begin(jwriter *w, const jnode *argv, uint64_t t_req)
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
static enum MHD_Result list_sessions(struct MHD_Connection *c, uid_t uid)
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

static enum MHD_Result session_op(struct MHD_Connection *c, const struct route *rt, struct req *rq)
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
	if ((rt->kind == R_EXEC || rt->kind == R_EXEC_SIGNAL || rt->kind == R_EXEC_RESIZE) && rq->body.len &&
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

/* ---- one-shot runs ---- */

/* Removing a run's directory: a run made it, so it is hostile (any depth,
 * any names, symbolic links, mounts are not ours to cross). Walked with
 * directory fds, each opened with openat2(RESOLVE_BENEATH | NO_SYMLINKS |
 * NO_XDEV) and O_NOFOLLOW, entries removed with unlinkat: no full path is
 * ever made, so no PATH_MAX. At most RM_DEPTH fds are open: a directory
 * deeper than that is moved up under the run's top directory first. At
 * most RM_BUDGET entries are looked at. */
#define RM_DEPTH 32
#define RM_BUDGET (4u << 20)

static int open_sub(int dfd, const char *name)
{
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV |
					  RESOLVE_NO_MAGICLINKS};
	return (int)syscall(SYS_openat2, dfd, name, &how, sizeof(how));
}

static void rm_tree(int parent, const char *name)
{
	int fd[RM_DEPTH];
	char nm[RM_DEPTH][256];
	int depth = 0;
	unsigned budget = RM_BUDGET, moved = 0;
	if ((fd[0] = open_sub(parent, name)) < 0) {
		unlinkat(parent, name, 0);
		return;
	}
	while (depth >= 0 && budget) {
		int cur = fd[depth], dup_fd = dup(cur);
		DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
		if (!d) {
			if (dup_fd >= 0)
				close(dup_fd);
			break;
		}
		rewinddir(d);
		bool pushed = false;
		struct dirent *e;
		while (!pushed && budget && (e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			budget--;
			if (unlinkat(cur, e->d_name, 0) == 0 || errno != EISDIR)
				continue;
			if (unlinkat(cur, e->d_name, AT_REMOVEDIR) == 0)
				continue;
			if (depth + 1 >= RM_DEPTH) {
				/* Too deep for our fds: moved up beside the others. */
				char up[64];
				snprintf(up, sizeof(up), ".cordon-rm-%u", moved++);
				renameat(cur, e->d_name, fd[0], up);
				continue;
			}
			int sub = strlen(e->d_name) < sizeof(nm[0]) ? open_sub(cur, e->d_name) : -1;
			if (sub < 0)
				continue; /* a mount, or gone: left */
			depth++;
			fd[depth] = sub;
			snprintf(nm[depth], sizeof(nm[depth]), "%s", e->d_name);
			pushed = true;
		}
		closedir(d);
		if (pushed)
			continue;
		/* Emptied (as far as it goes): up one, and removed there. */
		close(cur);
		if (depth > 0)
			unlinkat(fd[depth - 1], nm[depth], AT_REMOVEDIR);
		depth--;
	}
	for (; depth >= 0; depth--)
		close(fd[depth]);
	unlinkat(parent, name, AT_REMOVEDIR);
}

void serve_rm_tree(int parent, const char *name)
{
	rm_tree(parent, name);
}

static void rm_run(const char *id)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/runs", S.state_dir);
	int rfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rfd < 0)
		return;
	rm_tree(rfd, id);
	close(rfd);
}

/* Keep the newest keep_runs runs; the older ones are taken off the list
 * under the lock and deleted after it (a big tree takes time). */
static void retain_runs(const char *id)
{
	strv old = {0};
	pthread_mutex_lock(&S.lock);
	strv_push(&S.runs, id);
	while ((int)S.runs.n > S.keep_runs) {
		if (strv_push(&old, S.runs.v[0]) < 0)
			break;
		free(S.runs.v[0]);
		memmove(S.runs.v, S.runs.v + 1, (S.runs.n - 1) * sizeof(char *));
		S.runs.n--;
		S.runs.v[S.runs.n] = NULL;
	}
	pthread_mutex_unlock(&S.lock);
	for (size_t i = 0; i < old.n; i++)
		rm_run(old.v[i]);
	strv_free(&old);
}

/* At start: the runs a previous server kept, oldest first (by the time of
 * their directory), so that --keep-runs holds across restarts. */
struct kept { char id[ROUTE_ID_LEN + 1]; int64_t t; };

static int kept_cmp(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t ? 1 : strcmp(x->id, y->id);
}

static void load_kept_runs(void)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/runs", S.state_dir);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct kept *k = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && n < 1000000) {
		struct stat st;
		if (strncmp(e->d_name, "r-", 2) != 0 || strlen(e->d_name) > ROUTE_ID_LEN ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (n == cap) {
			struct kept *nk = realloc(k, (cap = cap ? cap * 2 : 64) * sizeof(*k));
			if (!nk)
				break;
			k = nk;
		}
		snprintf(k[n].id, sizeof(k[n].id), "%s", e->d_name);
		k[n].t = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
		n++;
	}
	closedir(d);
	if (n)
		qsort(k, n, sizeof(*k), kept_cmp);
	for (size_t i = 0; i < n; i++)
		retain_runs(k[i].id);
	free(k);
}

/* A slot for one more run of uid: 0, or the 429 message. */
static const char *run_enter(uid_t uid)
{
	const char *busy = NULL;
	pthread_mutex_lock(&S.lock);
	struct run_ent *me = NULL, *free_ent = NULL;
	for (size_t i = 0; i < sizeof(S.run_by) / sizeof(S.run_by[0]); i++) {
		if (S.run_by[i].n && S.run_by[i].uid == uid)
			me = &S.run_by[i];
		else if (!S.run_by[i].n && !free_ent)
			free_ent = &S.run_by[i];
	}
	if (S.nruns >= S.max_runs)
		busy = "the server runs its maximum of one-shot runs; try again";
	else if ((me && me->n >= S.max_runs_client) || (!me && !free_ent))
		busy = "this client (uid) has its maximum of one-shot runs; try again";
	else {
		if (!me) {
			me = free_ent;
			me->uid = uid;
		}
		me->n++;
		S.nruns++;
	}
	pthread_mutex_unlock(&S.lock);
	return busy;
}

static void run_leave(uid_t uid)
{
	pthread_mutex_lock(&S.lock);
	for (size_t i = 0; i < sizeof(S.run_by) / sizeof(S.run_by[0]); i++)
		if (S.run_by[i].n && S.run_by[i].uid == uid) {
			S.run_by[i].n--;
			S.nruns--;
			break;
		}
	pthread_mutex_unlock(&S.lock);
}

/* At most run_out_max bytes of a run's stream are kept (in the state
 * directory and the response); *cut says the rest was dropped. */
static int read_output(const char *path, buf *o, bool *cut)
{
	*cut = false;
	int f = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (f < 0 || fstat(f, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (f >= 0)
			close(f);
		return -1;
	}
	if ((uint64_t)st.st_size > S.run_out_max) {
		*cut = true;
		if (ftruncate(f, (off_t)S.run_out_max) < 0) {
			close(f);
			return -1;
		}
	}
	int r = ipc_read_fd(f, S.run_out_max, o);
	close(f);
	return r;
}

static void write_owner(const char *dir, uid_t uid)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/owner", dir);
	FILE *f = fopen(p, "wxe");
	if (f) {
		fprintf(f, "%u\n", (unsigned)uid);
		fclose(f);
	}
}

/* The run's owner (the uid that made it), or root, may read it. */
static bool run_visible(const char *id, uid_t uid)
{
	if (uid == 0)
		return true;
	char p[PATH_MAX], t[32] = "";
	snprintf(p, sizeof(p), "%s/runs/%s/owner", S.state_dir, id);
	FILE *f = fopen(p, "re");
	bool ok = f && fgets(t, sizeof(t), f) && strtoul(t, NULL, 10) == uid;
	if (f)
		fclose(f);
	return ok;
}

/* The answer to a run whose report is DIR/report.json and whose output
 * (at most run_out_max bytes of each stream, redacted) is o: the report
 * with "run": {id, stdout_b64, stderr_b64} added, kept as
 * DIR/response.json for GET /v1/runs/ID. */
static enum MHD_Result run_answer(struct MHD_Connection *c, const char *id, const char *dir, const buf o[2],
				  const bool cut[2])
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/report.json", dir);
	buf rep = {0};
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || ipc_read_fd(fd, 64u << 20, &rep) < 0 || !rep.len) {
		if (fd >= 0)
			close(fd);
		buf_free(&rep);
		return send_error(c, 500, "the run left no report");
	}
	close(fd);
	char *end = strrchr(rep.p, '}');
	buf outb = {0};
	if (end) {
		buf_append(&outb, rep.p, (size_t)(end - rep.p));
		while (outb.len && (outb.p[outb.len - 1] == '\n' || outb.p[outb.len - 1] == ' '))
			outb.len--;
		buf_printf(&outb, ",\n  \"run\": {\"id\": \"%s\"", id);
		const char *names[2] = {"stdout", "stderr"};
		for (int i = 0; i < 2; i++) {
			buf_printf(&outb, ", \"%s_b64\": \"", names[i]);
			b64_encode(&outb, o[i].p ? o[i].p : "", o[i].len);
			buf_append(&outb, "\"", 1);
			if (cut[i])
				buf_printf(&outb, ", \"%s_truncated\": true", names[i]);
		}
		buf_printf(&outb, "}\n}\n");
		snprintf(p, sizeof(p), "%s/response.json", dir);
		FILE *f = fopen(p, "we");
		if (f) {
			fwrite(outb.p, 1, outb.len, f);
			fclose(f);
		}
	}
	enum MHD_Result r = send_text(c, 200, "application/json", outb.p ? outb.p : rep.p, outb.p ? outb.len : rep.len);
	buf_free(&outb);
	buf_free(&rep);
	retain_runs(id);
	return r;
}

/* Send op to a one-shot's session and wait for its answer (ignored: the
 * run's outcome is in the report); closes what came with it. */
static void oneshot_op(struct session_ent *se, const char *sid, const char *op)
{
	int reply = to_worker(se, sid, op, -1);
	char b[512];
	int fds[IPC_MAX_FDS], nfds = 0;
	if (reply >= 0 && ipc_recv(reply, b, sizeof(b), fds, &nfds) >= 0)
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
	if (reply >= 0)
		close(reply);
}

/* The exec's stream, to its end (the worker closes it after the result):
 * the output events' bytes into o (at most run_out_max of each, cut[]
 * past that). False if it never started (the worker's error). */
static bool oneshot_collect(int reply, buf o[2], bool cut[2])
{
	char *pkt = malloc(IPC_MAX_PACKET + 1);
	uint8_t *d = malloc(IPC_MAX_PACKET);
	bool started = false;
	ssize_t n;
	while (pkt && d && (n = ipc_recv(reply, pkt, IPC_MAX_PACKET + 1, NULL, NULL)) > 0) {
		cordon_error e;
		jnode *j = json_parse(pkt, (size_t)n, &e);
		const jnode *t = j ? json_get(j, "type") : NULL, *data = j ? json_get(j, "data_b64") : NULL;
		int i = t && t->str ? (strcmp(t->str, "stdout") == 0 ? 0 : strcmp(t->str, "stderr") == 0 ? 1 : -1) : -1;
		started |= t && t->str;
		ssize_t dl = i >= 0 && data && data->str && strlen(data->str) / 4 * 3 <= IPC_MAX_PACKET
				     ? b64_decode(data->str, strlen(data->str), d)
				     : -1;
		if (dl > 0) {
			size_t room = S.run_out_max - o[i].len, k = (size_t)dl < room ? (size_t)dl : room;
			cut[i] |= k < (size_t)dl;
			if (k && buf_append(&o[i], d, k) < 0)
				cut[i] = true;
		}
		json_free(j);
	}
	free(pkt);
	free(d);
	return started;
}

/* A one-shot run in a session from the warm pool (docs/api.md, "The warm
 * pool"): claimed for it alone, its one exec, ended; its directory becomes
 * the run's (DIR: work/ and report.json, the session's report). False,
 * with nothing done, when no pool session is ready: the run is then cold. */
static bool warm_run(struct MHD_Connection *c, uid_t uid, uint64_t t_req, const jnode *argv, const jnode *in,
		     const char *id, const char *dir, enum MHD_Result *res)
{
	jwriter w = {0};
	exec_op_begin(&w, argv, t_req);
	jw_key(&w, "claim");
	jw_bool(&w, true);
	jw_key(&w, "oneshot");
	jw_bool(&w, true);
	jw_obj_end(&w);
	/* An argv beyond one packet goes cold (cordon run takes it). */
	if (jw_finish(&w) < 0 || w.out.len >= IPC_MAX_PACKET) {
		buf_free(&w.out);
		return false;
	}
	pthread_mutex_lock(&S.lock);
	struct session_ent *se = S.stopping ? NULL : pool_take(uid, true);
	char sid[ROUTE_ID_LEN + 1] = "";
	if (se)
		snprintf(sid, sizeof(sid), "%s", se->id);
	pthread_mutex_unlock(&S.lock);
	if (!se) {
		buf_free(&w.out);
		return false;
	}
	/* Claimed by its exec (one message: "claim"): its timers start then; it
	 * is the run's and no one else's. Without stdin, the exec's is
	 * /dev/null (as a session's exec's). */
	buf o[2] = {{0}, {0}};
	bool cut[2] = {false, false}, ran = false;
	int infd = in && in->str[0] ? ipc_memfd("cordon-stdin", in->str, strlen(in->str)) : -1;
	int reply = !in || !in->str[0] || infd >= 0 ? to_worker(se, sid, w.out.p, infd) : -1;
	buf_free(&w.out);
	if (infd >= 0)
		close(infd);
	if (reply >= 0) {
		ran = oneshot_collect(reply, o, cut);
		close(reply);
	}
	/* Ended whatever happened (one that is gone already wrote its report).
	 * Once it is reaped its slot can hold another session: only this one
	 * is marked (review 3 F4). */
	pthread_mutex_lock(&S.lock);
	if (se->used && strcmp(se->id, sid) == 0)
		se->ending = true;
	pthread_mutex_unlock(&S.lock);
	pthread_cond_broadcast(&S.pool_cond);
	oneshot_op(se, sid, "{\"op\":\"end\"}");
	pool_release(sid);
	char sdir[PATH_MAX], runs[PATH_MAX];
	snprintf(sdir, sizeof(sdir), "%s/sessions/%s", S.state_dir, sid);
	snprintf(runs, sizeof(runs), "%s/runs", S.state_dir);
	if (!ran || mkdir_p(runs, 0700) < 0 || rename(sdir, dir) < 0) {
		buf_free(&o[0]);
		buf_free(&o[1]);
		*res = send_error(c, 500, "the warm pool's session %s ended before its run (its exec did not start)", sid);
		return true;
	}
	write_owner(dir, uid);
	const char *names[2] = {"stdout", "stderr"};
	for (int i = 0; i < 2; i++) {
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0 && o[i].len && write(fd, o[i].p, o[i].len) < 0) {
			/* the answer has it all the same */
		}
		if (fd >= 0)
			close(fd);
	}
	*res = run_answer(c, id, dir, o, cut);
	buf_free(&o[0]);
	buf_free(&o[1]);
	return true;
}

static enum MHD_Result run_one(struct MHD_Connection *c, struct req *rq, const jnode *pol, const jnode *argv,
			       const jnode *in, const char *id, const char *dir);

static enum MHD_Result do_run(struct MHD_Connection *c, struct req *rq)
{
	cordon_error e = {0};
	jnode *body = rq->body.len ? json_parse(rq->body.p, rq->body.len, &e) : NULL;
	if (!body || body->type != J_OBJ) {
		json_free(body);
		return send_error(c, 400, "request body: %s", e.msg[0] ? e.msg : "a JSON object is expected");
	}
	const jnode *pol = json_get(body, "policy"), *argv = json_get(body, "argv"), *in = json_get(body, "stdin");
	enum MHD_Result r;
	char id[ROUTE_ID_LEN + 1], dir[PATH_MAX];
	new_id(id, "r-");
	snprintf(dir, sizeof(dir), "%s/runs/%s", S.state_dir, id);
	if (!argv || argv->type != J_ARR || argv->n == 0 || argv->n > 4096) {
		r = send_error(c, 400, "argv: a non-empty array of strings is required");
		goto out;
	}
	for (size_t i = 0; i < argv->n; i++)
		if (argv->items[i]->type != J_STR) {
			r = send_error(c, 400, "argv[%zu]: a string is expected", i);
			goto out;
		}
	if (json_get(body, "stdin_b64")) {
		/* Text only here: a field taken elsewhere is refused, never ignored. */
		r = send_error(c, 400, "stdin_b64: POST /v1/runs takes stdin as text; a session's exec takes bytes");
		goto out;
	}
	if ((pol && pol->type != J_OBJ) || (in && in->type != J_STR)) {
		r = send_error(c, 400, pol && pol->type != J_OBJ ? "policy: an object is expected" : "stdin: a string is expected");
		goto out;
	}
	const char *busy = run_enter(rq->uid);
	if (busy) {
		r = send_error(c, 429, "%s", busy);
		goto out;
	}
	r = run_one(c, rq, pol, argv, in, id, dir);
	run_leave(rq->uid);
out:
	json_free(body);
	return r;
}

static enum MHD_Result run_one(struct MHD_Connection *c, struct req *rq, const jnode *pol, const jnode *argv,
			       const jnode *in, const char *id, const char *dir)
{
	enum MHD_Result r;
	char p[PATH_MAX], why[1024];
	char *ptext = pol ? node_text(pol) : NULL;
	if (ptext && peer_policy_check(ptext, dir, rq->uid, S.have_ceil ? S.ceil.p : NULL, why, sizeof(why)) < 0) {
		free(ptext);
		return send_error(c, 403, "unauthorized: %s", why);
	}
	if (pool_matches(pol, NULL) && pool_for(rq->uid) && warm_run(c, rq->uid, rq->t_req, argv, in, id, dir, &r)) {
		free(ptext);
		return r;
	}
	snprintf(p, sizeof(p), "%s/work", dir);
	const char **av = calloc(argv->n + 14, sizeof(char *));
	gid_t cgid = 0;
	bool as_client = peer_run_as_client(rq->uid, &cgid);
	if (!av || mkdir_p(p, 0700) < 0 || (as_client && chown(p, rq->uid, cgid) < 0)) {
		free(av);
		free(ptext);
		return send_error(c, 500, "%s: %s", p, strerror(errno));
	}
	write_owner(dir, rq->uid);
	char polpath[PATH_MAX], reppath[PATH_MAX], op[PATH_MAX], ep[PATH_MAX];
	snprintf(polpath, sizeof(polpath), "%s/policy.json", dir);
	snprintf(reppath, sizeof(reppath), "%s/report.json", dir);
	snprintf(op, sizeof(op), "%s/stdout", dir);
	snprintf(ep, sizeof(ep), "%s/stderr", dir);
	size_t k = 0;
	av[k++] = "cordon";
	av[k++] = "run";
	if (ptext) {
		FILE *f = fopen(polpath, "we");
		if (f) {
			fputs(ptext, f);
			fclose(f);
		}
		av[k++] = "--policy";
		av[k++] = polpath;
	}
	free(ptext);
	if (S.ceiling) {
		av[k++] = "--ceiling";
		av[k++] = S.ceiling;
	}
	char cl[32];
	if (as_client) {
		snprintf(cl, sizeof(cl), "%u:%u", (unsigned)rq->uid, (unsigned)cgid);
		av[k++] = "--serve-client";
		av[k++] = cl;
	}
	av[k++] = "--report";
	av[k++] = reppath;
	av[k++] = "--";
	for (size_t i = 0; i < argv->n; i++)
		av[k++] = argv->items[i]->str;
	int infd = ipc_memfd("cordon-stdin", in ? in->str : "", in ? strlen(in->str) : 0);
	int ofd = open(op, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int efd = open(ep, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	pid_t pid = infd >= 0 && ofd >= 0 && efd >= 0 ? spawn_self(av, -1, p, infd, ofd, efd) : -1;
	free(av);
	if (infd >= 0)
		close(infd);
	if (ofd >= 0)
		close(ofd);
	if (efd >= 0)
		close(efd);
	int ws = 0;
	if (pid < 0 || waitpid(pid, &ws, 0) < 0)
		return send_error(c, 500, "could not run cordon run");
	buf o[2] = {{0}, {0}};
	bool cut[2] = {false, false};
	const char *paths[2] = {op, ep};
	for (int i = 0; i < 2; i++)
		if (read_output(paths[i], &o[i], &cut[i]) < 0)
			buf_free(&o[i]);
	r = run_answer(c, id, dir, o, cut);
	buf_free(&o[0]);
	buf_free(&o[1]);
	return r;
}

static enum MHD_Result get_run(struct MHD_Connection *c, const char *id, uid_t uid)
{
	if (!run_visible(id, uid))
		return send_error(c, 404, "no such run: %s (or no longer kept)", id);
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/runs/%s/response.json", S.state_dir, id);
	buf b = {0};
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || ipc_read_fd(fd, 1u << 30, &b) < 0) {
		if (fd >= 0)
			close(fd);
		buf_free(&b);
		return send_error(c, 404, "no such run: %s (or no longer kept)", id);
	}
	close(fd);
	enum MHD_Result r = send_text(c, 200, "application/json", b.p ? b.p : "", b.len);
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

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
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
	case R_SESSIONS_LIST:
		return list_sessions(c, rq->uid);
	case R_SESSIONS_CREATE: {
		cordon_error e = {0};
		jnode *body = rq->body.len ? json_parse(rq->body.p, rq->body.len, &e) : NULL;
		if (rq->body.len && !body)
			return send_error(c, 400, "request body: %s", e.msg);
		enum MHD_Result r = create_session(c, body, rq->uid);
		json_free(body);
		return r;
	}
	default:
		return session_op(c, &rt, rq);
	}
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
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

/* ---- the main loop ---- */

/* Never waits: S.lock is held (a worker that does not exit must not stop
 * the request threads). */
static void reap_workers(void)
{
	pthread_mutex_lock(&S.lock);
	for (int i = 0; i < S.nslots; i++) {
		struct session_ent *se = &S.ss[i];
		if (!se->used || se->pid <= 0)
			continue;
		if (waitpid(se->pid, NULL, WNOHANG) == se->pid) {
			pthread_mutex_lock(&se->lock);
			close(se->ctl);
			se->ctl = -1;
			if (se->warm) {
				/* A pool session no client took: no report, an
				 * empty workspace nothing ran in. */
				char d[PATH_MAX], cs[64];
				session_ws(d, sizeof(d), se->id);
				rmdir(d);
				*strrchr(d, '/') = '\0';
				/* and the directory of change sets beside it
				 * (it stays once made: changeset.h), empty */
				changeset_dirname(cs, sizeof(cs));
				char top[PATH_MAX + 80];
				snprintf(top, sizeof(top), "%s/%s", d, cs);
				rmdir(top);
				rmdir(d);
			}
			/* A client's session: kept (serve-kept.c). */
			if (!se->warm && !se->oneshot)
				kept_session_add(se->id);
			se->id[0] = '\0';
			pool_release_locked(se);
			se->used = se->warm = se->warm_ready = se->oneshot = false;
			pthread_mutex_unlock(&se->lock);
		}
	}
	pthread_mutex_unlock(&S.lock);
	kept_sessions_trim();
	pthread_cond_broadcast(&S.pool_cond);
}

static int live_workers(int sig)
{
	int n = 0;
	pthread_mutex_lock(&S.lock);
	for (int i = 0; i < S.nslots; i++)
		if (S.ss[i].used && S.ss[i].pid > 0) {
			n++;
			if (sig)
				kill(S.ss[i].pid, sig);
		}
	pthread_mutex_unlock(&S.lock);
	return n;
}

/* SIGTERM: the workers (sent SIGTERM) write their reports and exit; one
 * still there after --stop-grace is killed, and waited for at most as
 * long again. Reaped on SIGCHLD, never waited for under S.lock. */
static void stop_workers(const sigset_t *mask)
{
	for (int phase = 0; phase < 2; phase++) {
		uint64_t end = mono_ns() + S.grace_ns;
		for (;;) {
			reap_workers();
			uint64_t now = mono_ns();
			if (!live_workers(0) || now >= end)
				break;
			uint64_t left = end - now < 100000000ULL ? end - now : 100000000ULL;
			struct timespec ts = {0, (long)left};
			sigtimedwait(mask, NULL, &ts);
		}
		if (!live_workers(0))
			return;
		if (phase == 0) {
			fprintf(stderr, "cordon serve: %d session worker(s) still running after the grace period: killed\n",
				live_workers(0));
			live_workers(SIGKILL);
		}
	}
}

/* --socket-mode MODE (octal: read-write for the owner, at most 0666) and
 * --socket-group GROUP (a name or a gid). */
static int serve_socket_opt(const char *o, const char *v)
{
	char *end;
	errno = 0;
	if (strcmp(o, "--socket-mode") == 0) {
		long m = strtol(v, &end, 8);
		if (errno || *end || !*v || m < 0 || (m & ~0666L) || (m & 0600) != 0600) {
			fprintf(stderr, "cordon serve: --socket-mode %s: an octal mode with rw for the owner and no more than 0666 expected (0600, 0660, 0666)\n", v);
			return -1;
		}
		S.sock_mode = (mode_t)m;
		return 0;
	}
	struct group gr, *res = NULL;
	char grbuf[4096];
	long g = strtol(v, &end, 10);
	if (*v && !*end && !errno && g >= 0 && g < 0xffffffffL)
		S.sock_gid = (gid_t)g;
	else if (getgrnam_r(v, &gr, grbuf, sizeof(grbuf), &res) == 0 && res)
		S.sock_gid = res->gr_gid;
	else {
		fprintf(stderr, "cordon serve: --socket-group %s: no such group\n", v);
		return -1;
	}
	S.sock_gid_set = true;
	return 0;
}

static int listen_unix(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(a.sun_path)) {
		fprintf(stderr, "cordon serve: --socket %s: longer than %zu bytes\n", path, sizeof(a.sun_path) - 1);
		return -1;
	}
	strcpy(a.sun_path, path);
	struct stat st;
	if (lstat(path, &st) == 0) {
		/* A stale socket of ours is replaced; anything else is left. */
		if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
			fprintf(stderr, "cordon serve: --socket %s: exists and is not a socket of uid %u\n", path,
				(unsigned)geteuid());
			return -1;
		}
		unlink(path);
	}
	/* Bound under a name of its own and renamed into place once it
	 * listens: a client that sees PATH can connect. */
	bool tmp = (size_t)snprintf(a.sun_path, sizeof(a.sun_path), "%s.%d", path, (int)getpid()) <
		   sizeof(a.sun_path);
	if (!tmp)
		strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* The socket file has its mode and group from its creation (no chmod
	 * or chown by path after: the path could be another file by then):
	 * the umask and this thread's fsgid. Still one thread here. */
	mode_t old = umask(0777 & ~S.sock_mode);
	gid_t ofs = S.sock_gid_set ? (gid_t)setfsgid(S.sock_gid) : 0;
	int r = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&a, sizeof(a));
	if (S.sock_gid_set)
		setfsgid(ofs);
	umask(old);
	if (r == 0 && S.sock_gid_set && (lstat(a.sun_path, &st) < 0 || st.st_gid != S.sock_gid)) {
		fprintf(stderr, "cordon serve: --socket-group %u: the socket could not be made that group's (not a group of the server's, or a set-group-ID directory)\n",
			(unsigned)S.sock_gid);
		unlink(a.sun_path);
		close(fd);
		return -1;
	}
	if (r < 0 || listen(fd, 128) < 0 || (tmp && rename(a.sun_path, path) < 0)) {
		fprintf(stderr, "cordon serve: --socket %s: %s\n", path, strerror(errno));
		if (r == 0 && tmp)
			unlink(a.sun_path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int listen_tcp(const char *spec)
{
	char host[64];
	const char *colon = strrchr(spec, ':');
	if (!colon || colon - spec >= (long)sizeof(host)) {
		fprintf(stderr, "cordon serve: --listen %s: HOST:PORT expected\n", spec);
		return -1;
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
	char *end;
	errno = 0;
	long port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port < 1 || port > 65535) {
		fprintf(stderr, "cordon serve: --listen %s: the port must be a number from 1 to 65535\n", spec);
		return -1;
	}
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
		fprintf(stderr, "cordon serve: --listen %s: an IPv4 address and a port expected\n", spec);
		return -1;
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 128) < 0) {
		fprintf(stderr, "cordon serve: --listen %s: %s\n", spec, strerror(errno));
		return -1;
	}
	return fd;
}

static int usage_err(const char *msg, const char *arg)
{
	fprintf(stderr, "cordon serve: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	return 2;
}

/* The ceiling every session and run gets (--ceiling, $CORDON_CEILING,
 * /etc/cordon/ceiling.json). A root server that admits anyone but root must
 * have one: its clients act with root's rights on the host otherwise. */
static int load_ceiling(void)
{
	static char path[PATH_MAX];
	cordon_error e = {0};
	ceiling_resolve(S.ceiling, getenv("CORDON_CEILING"), path, sizeof(path), &S.have_ceil, &e);
	bool others = S.listen != NULL;
	for (int i = 0; i < S.nallow; i++)
		others |= S.allow[i] != 0;
	if (!S.have_ceil && geteuid() == 0 && others) {
		fprintf(stderr, "cordon serve: a server running as root that admits other users (--allow-uid, --listen) "
				"needs a ceiling (--ceiling FILE or /etc/cordon/ceiling.json)\n");
		return -1;
	}
	if (S.have_ceil && ceiling_load(path, &S.ceil, &e) < 0) {
		fprintf(stderr, "cordon serve: %s\n", e.msg);
		return -1;
	}
	return 0;
}

/* The bearer token: a regular file (not a symlink) no one else may read. */
static int read_token(const char *path)
{
	if (!path) {
		usage_err("--listen needs --token-file F with the bearer token", NULL);
		return -1;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "cordon serve: --token-file %s: %s\n", path,
			errno == ELOOP ? "a symlink (give the file itself)" : strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	const char *bad = !S_ISREG(st.st_mode) ? "not a regular file" :
			  st.st_mode & 077 ? "readable or writable by group or others (chmod 600 it)" : NULL;
	buf b = {0};
	if (!bad && (ipc_read_fd(fd, sizeof(S.token) - 1, &b) < 0 || !b.len))
		bad = "could not be read, or is empty";
	close(fd);
	if (!bad) {
		snprintf(S.token, sizeof(S.token), "%.*s", (int)b.len, b.p);
		S.token[strcspn(S.token, "\r\n")] = '\0';
		if (strlen(S.token) < 16)
			bad = "the token must have at least 16 characters";
	}
	buf_free(&b);
	if (bad) {
		fprintf(stderr, "cordon serve: --token-file %s: %s\n", path, bad);
		return -1;
	}
	return 0;
}

int cmd_serve(int argc, char **argv)
{
	const char *token_file = NULL, *warm_policy = NULL;
	ssize_t self_len = readlink("/proc/self/exe", S.cordon, sizeof(S.cordon) - 1);
	char *slash = self_len > 0 ? memrchr(S.cordon, '/', (size_t)self_len) : NULL;
	if (!slash || (size_t)(slash - S.cordon) + sizeof("/cordon") > sizeof(S.cordon)) {
		fprintf(stderr, "cordon serve: /proc/self/exe: cannot find the cordon beside this program\n");
		return 125;
	}
	strcpy(slash, "/cordon");
	S.allow[S.nallow++] = getuid();
	if (getuid() != 0)
		S.allow[S.nallow++] = 0;
	cordon_error e;
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
			fputs(SERVE_USAGE, stdout);
			return 0;
		}
		if (!v)
			return usage_err("option needs a value", o);
		i++;
		if (strcmp(o, "--socket") == 0)
			S.socket_path = v;
		else if (strcmp(o, "--listen") == 0)
			S.listen = v;
		else if (strcmp(o, "--token-file") == 0)
			token_file = v;
		else if (strcmp(o, "--state-dir") == 0)
			S.state_dir = v;
		else if (strcmp(o, "--ceiling") == 0)
			S.ceiling = v;
		else if (strcmp(o, "--warm-policy") == 0)
			warm_policy = v;
		else if (strcmp(o, "--socket-mode") == 0 || strcmp(o, "--socket-group") == 0) {
			if (serve_socket_opt(o, v) < 0)
				return 2;
		}
		else if (strcmp(o, "--allow-uid") == 0 || strcmp(o, "--tcp-uid") == 0) {
			char *end;
			long u = strtol(v, &end, 10);
			if (*end || u < 0 || u >= 0xffffffffL || S.nallow >= MAX_ALLOW)
				return usage_err("a uid expected", o);
			if (o[2] == 't')
				S.tcp_uid = (uid_t)u;
			else
				S.allow[S.nallow++] = (uid_t)u;
		} else if (strcmp(o, "--max-sessions") == 0 || strcmp(o, "--max-sessions-per-client") == 0 ||
			   strcmp(o, "--keep-runs") == 0 || strcmp(o, "--warm") == 0 || strcmp(o, "--keep-sessions") == 0) {
			char *end;
			long n = strtol(v, &end, 10);
			if (*end || n < 0 || n > 100000)
				return usage_err("a count expected", o);
			if (strcmp(o, "--keep-sessions") == 0)
				S.keep_sessions = (int)n;
			else if (o[2] == 'k')
				S.keep_runs = (int)n;
			else if (o[2] == 'w') {
				if (n > WARM_MAX)
					return usage_err("--warm: at most " WARM_MAX_S " sessions in the pool", v);
				S.warm = (int)n;
			}
			else if (strlen(o) > 15)
				S.max_per_client = (int)n;
			else
				S.max_sessions = (int)n;
		} else if (strcmp(o, "--max-connections") == 0 || strcmp(o, "--connection-timeout") == 0 ||
			   strcmp(o, "--max-runs") == 0 || strcmp(o, "--max-runs-per-client") == 0 ||
			   strcmp(o, "--run-output-max") == 0) {
			/* --max-runs*: in the usage; the others are for tests and
			 * unusual hosts (docs/api.md). */
			char *end;
			long n = strtol(v, &end, 10);
			if (*end || n < 1 || n > (o[2] == 'r' ? (1L << 30) : 100000))
				return usage_err("a positive count expected", o);
			if (strcmp(o, "--max-connections") == 0)
				S.max_conns = (unsigned)n;
			else if (o[2] == 'c')
				S.conn_timeout = (unsigned)n;
			else if (o[2] == 'r')
				S.run_out_max = (size_t)n;
			else if (strlen(o) > 10)
				S.max_runs_client = (int)n;
			else
				S.max_runs = (int)n;
		} else if (strcmp(o, "--worker-timeout") == 0 || strcmp(o, "--stop-grace") == 0) {
			/* For tests and unusual hosts (docs/api.md). */
			uint64_t ns;
			if (parse_duration(v, &ns, &e) < 0 || ns < 1000000ULL)
				return usage_err("a duration of at least 1ms expected", o);
			if (o[2] == 'w')
				S.worker_ns = ns;
			else
				S.grace_ns = ns;
		} else if (strcmp(o, "--idle-timeout") == 0 || strcmp(o, "--session-timeout") == 0) {
			uint64_t ns;
			if (parse_duration(v, &ns, &e) < 0)
				return usage_err(e.msg, o);
			if (o[2] == 'i')
				S.idle_ns = ns;
			else
				S.timeout_ns = ns;
		} else {
			int lr = limits_option(o, v);
			if (lr < 0)
				return 2;
			if (lr == 0)
				return usage_err("unknown option", o);
		}
	}
	if (!!S.socket_path == !!S.listen)
		return usage_err("give one of --socket PATH or --listen 127.0.0.1:PORT --token-file F", NULL);
	if (!S.sock_mode)
		S.sock_mode = S.sock_gid_set ? 0660 : 0600;
	if (S.listen && (S.sock_mode != 0600 || S.sock_gid_set))
		return usage_err("--socket-mode and --socket-group are for --socket", NULL);
	/* An --allow-uid that cannot reach the socket is said at once. */
	for (int i = 1; S.socket_path && !(S.sock_mode & 006) && !(S.sock_gid_set && (S.sock_mode & 060)) && i < S.nallow; i++)
		if (S.allow[i] != 0 && S.allow[i] != geteuid())
			fprintf(stderr, "cordon serve: --allow-uid %u: the socket is mode %04o of uid %u, which uid %u cannot open (--socket-group GROUP, --socket-mode 0660 or 0666)\n",
				(unsigned)S.allow[i], (unsigned)S.sock_mode, (unsigned)geteuid(), (unsigned)S.allow[i]);
	if (S.listen && read_token(token_file) < 0)
		return 2;
	if (!S.state_dir)
		return usage_err("--state-dir DIR is required (reports and workspaces are kept there)", NULL);
	if (load_ceiling() < 0)
		return 2;
	if (!S.max_per_client || S.max_per_client > S.max_sessions)
		S.max_per_client = S.max_sessions;
	if (!S.max_runs_client || S.max_runs_client > S.max_runs)
		S.max_runs_client = S.max_runs;
	static char state_abs[PATH_MAX];
	char sub[PATH_MAX];
	if (mkdir_p(S.state_dir, 0700) < 0 || !realpath(S.state_dir, state_abs))
		return usage_err(strerror(errno), S.state_dir);
	S.state_dir = state_abs;
	if (S.have_ceil && !peer_ceiling_writes(S.ceil.p, S.state_dir)) {
		fprintf(stderr, "cordon serve: --state-dir %s: not under any write prefix of the ceiling's filesystem.write, and every session's and run's workspace is below it (%s/sessions/ID/work): every one would be refused; add it to the ceiling\n",
			S.state_dir, S.state_dir);
		return 2;
	}
	snprintf(sub, sizeof(sub), "%s/runs", S.state_dir);
	mkdir_p(sub, 0700);
	load_kept_runs();
		snprintf(sub, sizeof(sub), "%s/sessions", S.state_dir);
	mkdir_p(sub, 0700);
	kept_sessions_init(S.state_dir, S.keep_sessions);
	if (S.warm > S.max_sessions)
		return usage_err("--warm: more than --max-sessions", NULL);
	if (warm_policy) {
		/* Parsed once (a policy that does not parse is refused now, not
		 * at every refill) and kept re-serialized, the form requests'
		 * policies are compared in. */
		buf t = {0};
		FILE *f = fopen(warm_policy, "re");
		char chunk[4096];
		for (size_t k; f && (k = fread(chunk, 1, sizeof(chunk), f)) > 0 && t.len < (1u << 20);)
			buf_append(&t, chunk, k);
		if (f)
			fclose(f);
		jnode *j = t.len ? json_parse(t.p, t.len, &e) : NULL;
		buf_free(&t);
		if (!j || j->type != J_OBJ) {
			json_free(j);
			return usage_err("--warm-policy: a JSON policy object expected", warm_policy);
		}
		S.warm_policy = node_text(j);
		json_free(j);
		if (!S.warm)
			return usage_err("--warm-policy needs --warm N", NULL);
	}
	static char ceil_abs[PATH_MAX];
	if (S.ceiling && realpath(S.ceiling, ceil_abs))
		S.ceiling = ceil_abs;
	S.nslots = 2 * S.max_sessions + S.warm;
	S.ss = calloc((size_t)S.nslots + 1, sizeof(*S.ss));
	for (int i = 0; S.ss && i < S.nslots; i++)
		pthread_mutex_init(&S.ss[i].lock, NULL);
	int lfd = S.listen ? listen_tcp(S.listen) : listen_unix(S.socket_path);
	if (lfd < 0 || !S.ss)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	/* One thread per connection, so connections are counted and an idle
	 * one is closed; a client not yet authenticated gets a share
	 * (serve-limits.c: loopback is one address, a header deadline). */
	if (limits_start(S.listen != NULL, S.max_conns) < 0) {
		fprintf(stderr, "cordon serve: the connections' deadline thread did not start\n");
		return 1;
	}
	struct MHD_OptionItem lim[] = {
		{MHD_OPTION_CONNECTION_LIMIT, S.max_conns, NULL},
		{MHD_OPTION_CONNECTION_TIMEOUT, S.conn_timeout, NULL},
		{MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)limits_notify, NULL},
		{MHD_OPTION_END, 0, NULL},
	};
	struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_ALLOW_UPGRADE,
						0, NULL, NULL, handler, NULL, MHD_OPTION_LISTEN_SOCKET, lfd,
						MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
						MHD_OPTION_ARRAY, lim, MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "cordon serve: the HTTP server did not start\n");
		return 1;
	}
	bool pool = S.warm > 0 && pthread_create(&S.pool_thread, NULL, pool_main, NULL) == 0;
	if (S.warm > 0 && !pool)
		fprintf(stderr, "cordon serve: the warm pool's thread did not start; sessions start cold\n");
	fprintf(stderr, "cordon serve: listening on %s\n", S.listen ? S.listen : S.socket_path);
	for (;;) {
		int sig = 0;
		sigwait(&mask, &sig);
		if (sig == SIGCHLD) {
			reap_workers();
			continue;
		}
		break;
	}
	/* SIGTERM: no new sessions; every session ended, its report written
	 * to the state directory (its worker's own SIGTERM handling). */
	pthread_mutex_lock(&S.lock);
	S.stopping = true;
	for (int i = 0; i < S.nslots; i++)
		if (S.ss[i].used && S.ss[i].pid > 0)
			kill(S.ss[i].pid, SIGTERM);
	pthread_mutex_unlock(&S.lock);
	pthread_cond_broadcast(&S.pool_cond);
	if (pool)
		pthread_join(S.pool_thread, NULL);
	stop_workers(&mask);
	MHD_stop_daemon(d);
	if (S.socket_path)
		unlink(S.socket_path);
	fprintf(stderr, "cordon serve: stopped\n");
	return 0;
}

/* cordon-serve: `cordon serve` execs it (cli/main.c), argv[0] and the
 * options. */
int main(int argc, char **argv)
{
	return cmd_serve(argc - 1, argv + 1);
}
