/* cordon serve's sessions: the table of session workers, each started as
 * a `cordon` process of its own, the requests sent to them, the warm pool
 * and its refill thread, and a session's creation (POST /v1/sessions). */
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
#include <sys/file.h>
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
#include "cleanup.h"
#include "error.h"
#include "json.h"
#include "layers.h"
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
#include "upper-copy.h"
#include "cli-serve.h"
#include "serve-internal.h"

/* ---- sessions ---- */

struct session_ent *find_session(const char *id, uid_t uid)
{
	for (int i = 0; i < S.nslots; i++)
		if (S.ss[i].used && !S.ss[i].ending && !S.ss[i].warm && !S.ss[i].oneshot && strcmp(S.ss[i].id, id) == 0 &&
		    (uid == 0 || S.ss[i].owner == uid || uid == (uid_t)-1))
			return &S.ss[i];
	return NULL;
}

bool session_is_ending(const char *id, uid_t uid)
{
	for (int i = 0; i < S.nslots; i++)
		if (S.ss[i].used && S.ss[i].ending && !S.ss[i].warm && !S.ss[i].oneshot && strcmp(S.ss[i].id, id) == 0 &&
		    (uid == 0 || S.ss[i].owner == uid))
			return true;
	return false;
}

/* Send req to the session's worker with a fresh reply socket; returns our
 * end of it, or -1. */
int to_worker(struct session_ent *se, const char *id, const char *json, int extra_fd)
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

pid_t spawn_self(const char *const *argv, int fd3, const char *cwd, int in, int out, int errfd)
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

int mkdir_p(const char *path, mode_t mode)
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
char *node_text(const jnode *n)
{
	jwriter w = {0};
	write_node(&w, n);
	if (jw_finish(&w) < 0) {
		buf_free(&w.out);
		return NULL;
	}
	return w.out.p;
}

int count_sessions(uid_t owner, int *mine)
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
bool session_ws(char *out, size_t sz, const char *id)
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
	jw_key(&w, "max_pause_ns");
	jw_uint(&w, S.max_pause_ns);
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
bool pool_matches(const jnode *pol, const jnode *tmo)
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
bool pool_for(uid_t uid)
{
	gid_t g;
	return !peer_run_as_client(uid, &g) || !peer_policy_writes_host(S.warm_policy);
}

/* Hand a ready pool session to uid: from here on it is uid's like any
 * other (its worker re-arms its timers). NULL if the pool is empty. */
struct session_ent *pool_take(uid_t uid, bool oneshot)
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
void pool_release_locked(struct session_ent *se)
{
	if (se->hold) {
		se->hold = false;
		S.pool_holds--;
		pthread_cond_broadcast(&S.pool_cond);
	}
}

void pool_release(const char *sid)
{
	pthread_mutex_lock(&S.lock);
	for (int i = 0; i < S.nslots; i++)
		if (S.ss[i].used && S.ss[i].hold && strcmp(S.ss[i].id, sid) == 0)
			pool_release_locked(&S.ss[i]);
	pthread_mutex_unlock(&S.lock);
}

int pool_count(void)
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
void *pool_main(void *unused)
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

/* The request a session was made by, kept in its directory (the
 * server's; the run never sees it) for its forks (serve-fork.c). */
static void request_write(const char *id, const jnode *body)
{
	char p[PATH_MAX];
	char *text = body ? node_text(body) : NULL;
	const char *t = text ? text : "{}";
	if (snprintf(p, sizeof(p), "%s/sessions/%s/request.json", S.state_dir, id) < (int)sizeof(p)) {
		int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			if (write(fd, t, strlen(t)) < 0) { /* a fork of it says the request is gone */ }
			close(fd);
		}
	}
	free(text);
}

/* The bytes a fork's starting copy may take: the policy's
 * limits.snapshots (the session's snapshot budget, docs/api.md), else its
 * default. */
static uint64_t fork_max_bytes(const jnode *pol)
{
	const jnode *lim = pol ? json_get(pol, "limits") : NULL, *v = lim ? json_get(lim, "snapshots") : NULL;
	char tmp[64];
	uint64_t n = 0;
	if (v && v->type == J_NUM && v->num > 0 && v->num <= 1e15)
		snprintf(tmp, sizeof(tmp), "%.0f", v->num);
	else if (v && v->type == J_STR)
		snprintf(tmp, sizeof(tmp), "%.63s", v->str);
	else
		return FORK_MAX_BYTES_DEFAULT;
	return parse_size(tmp, &n, &(cordon_error){0}) == 0 && n ? n : FORK_MAX_BYTES_DEFAULT;
}

/* A fork's directory that did not come to be: removed whole. */
static void remove_session_dir(int dfd, const char *id)
{
	upper_remove(dfd, "work", FORK_MAX_DEPTH + 1, &(cordon_error){0});
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/sessions", S.state_dir);
	int sfd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd >= 0) {
		upper_remove(sfd, id, FORK_MAX_DEPTH + 1, &(cordon_error){0});
		close(sfd);
	}
}

/* Is the directory name in dfd empty (or absent)? */
static bool dir_empty(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	struct dirent *de;
	bool empty = true;
	while (empty && (de = readdir(d)))
		empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
	closedir(d);
	return empty;
}

/* <state>/layers (made 0700), or -1. */
static int layers_dir_open(void)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/layers", S.state_dir);
	if (mkdir(p, 0700) < 0 && errno != EEXIST)
		return -1;
	return open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* A failed copy of a fork's starting tree as its answer: 413 past the
 * entries' bound, 507 past the bytes' (max_bytes), else 500. */
static void fork_copy_error(const cordon_error *e, uint64_t max_bytes, unsigned *code, char *msg, size_t msz)
{
	*code = e->code == UCOPY_OVER_BOUND ? 413 : e->code == UCOPY_OVER_BUDGET ? 507 : 500;
	if (e->code == UCOPY_OVER_BUDGET)
		snprintf(msg, msz, "the fork's workspace would take more than %llu bytes (its policy's limits.snapshots, the bound of a fork's starting copy): %s",
			 (unsigned long long)max_bytes, e->msg);
	else
		snprintf(msg, msz, "the fork's workspace: %s", e->msg);
}

/* A stacked fork (layers.h): the snapshot copied as a new layer (its
 * whiteouts and opaque marks kept), listed over the parent's stack in the
 * fork's directory dfd, whose `work` starts empty. The layers directory
 * is held LOCK_SH from the parent's list read to the fork's written (the
 * sweep takes it LOCK_EX). 1: not stacked (the parent's workspace
 * directory is not empty: a fork made by copy), 0, or -1 with *code and
 * msg. */
static int seed_stacked(int dfd, const struct fork_seed *seed, const struct ucopy_limits *copy_lim, unsigned *code,
			char *msg, size_t msz)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/sessions/%s", S.state_dir, seed->parent);
	_cleanup_close_ int pfd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		snprintf(msg, msz, "session %s: %s", seed->parent, strerror(errno));
		return -1;
	}
	_cleanup_close_ int ld = layers_dir_open();
	if (ld < 0 || flock(ld, LOCK_SH) < 0) {
		snprintf(msg, msz, "%s/layers: %s", S.state_dir, strerror(errno));
		return -1;
	}
	strv names = {0}, up = {0};
	cordon_error e = {0};
	char name[ROUTE_ID_LEN + 1];
	new_id(name, "l-");
	int rc = layers_read(pfd, &up, &e);
	if (rc == 0 && up.n >= LAYERS_MAX) {
		*code = 409;
		snprintf(msg, msz, "session %s cannot be forked: its workspace is a stack of %zu layers, the most a fork's may have is %d (fork a session higher in its chain)",
			 seed->parent, up.n, LAYERS_MAX);
		strv_free(&up);
		return -1;
	}
	if (rc == 0 && strv_push(&names, name) < 0)
		rc = cordon_oom(&e);
	for (size_t i = 0; rc == 0 && i < up.n; i++)
		if (strv_push(&names, up.v[i]) < 0)
			rc = cordon_oom(&e);
	strv_free(&up);
	/* The parent's directory, after its list: an end makes it whole
	 * (its stack moved in) before it drops the list, so an empty one
	 * means the list read is its whole lower tree. Not empty: a fork
	 * made by copy, or an ended session; copied then. */
	if (rc == 0 && !dir_empty(pfd, "work")) {
		strv_free(&names);
		return 1;
	}
	struct ucopy_stat st;
	if (rc == 0)
		rc = upper_copy(seed->upper, ld, name, copy_lim, &st, &e);
	bool made = rc == 0;
	if (rc == 0 && (mkdirat(dfd, "work", 0700) < 0 || fchownat(dfd, "work", copy_lim->uid, copy_lim->gid, AT_SYMLINK_NOFOLLOW) < 0))
		rc = cordon_err_errno(&e, "work");
	if (rc == 0)
		rc = layers_write(dfd, &names, &e);
	if (rc < 0 && made)
		upper_remove(ld, name, FORK_MAX_DEPTH + 1, &(cordon_error){0});
	strv_free(&names);
	if (rc < 0)
		fork_copy_error(&e, copy_lim->max_bytes, code, msg, msz);
	return rc;
}

/* A fork's workspace (serve-fork.c): the parent's lower tree copied, its
 * snapshot's view applied over it, before the worker starts; at most
 * fork_max_bytes of files (507 past it), nothing left of it on failure. */
static int seed_workspace(const char *id, uid_t owner, const struct fork_seed *seed, const jnode *pol,
			  unsigned *code, char *msg, size_t msz)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/sessions/%s", S.state_dir, id);
	*code = 500;
	if (mkdir_p(dir, 0700) < 0) {
		snprintf(msg, msz, "%s: %s", dir, strerror(errno));
		return -1;
	}
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(msg, msz, "%s: %s", dir, strerror(errno));
		return -1;
	}
	/* The workspace's owner, as start_worker makes it: the client's
	 * (a root server's session run as its client), else the server's. */
	uint64_t max_bytes = fork_max_bytes(pol);
	struct ucopy_limits lim = {FORK_MAX_ENTRIES, max_bytes, FORK_MAX_DEPTH, false, true, geteuid(), getegid()};
	gid_t cgid;
	if (peer_run_as_client(owner, &cgid)) {
		lim.uid = owner;
		lim.gid = cgid;
	}
	/* Stacked where the server mounts the stack (as root, for a session
	 * of its own uid), else copied. */
	if (geteuid() == 0 && lim.uid == 0 && seed->parent) {
		struct ucopy_limits sl = lim;
		sl.merged = false;
		sl.own = true;
		int r = seed_stacked(dfd, seed, &sl, code, msg, msz);
		if (r <= 0) {
			if (seed->snaps >= 0)
				flock(seed->snaps, LOCK_UN);
			if (r < 0)
				remove_session_dir(dfd, id);
			close(dfd);
			return r;
		}
	}
	struct ucopy_stat st;
	cordon_error e = {0};
	int rc = upper_copy(seed->lower, dfd, "work", &lim, &st, &e);
	int wfd = rc == 0 ? openat(dfd, "work", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (rc == 0 && wfd < 0)
		rc = cordon_err_errno(&e, "work");
	if (rc == 0) {
		/* The lower tree's bytes count, then the snapshot's on top. */
		struct ucopy_limits left = lim;
		left.max_bytes = max_bytes - st.bytes;
		rc = upper_apply(seed->upper, wfd, &left, &st, &e);
	}
	if (wfd >= 0)
		close(wfd);
	if (seed->snaps >= 0)
		flock(seed->snaps, LOCK_UN);
	if (rc < 0) {
		remove_session_dir(dfd, id);
		fork_copy_error(&e, max_bytes, code, msg, msz);
	}
	close(dfd);
	return rc;
}

enum MHD_Result create_session(struct MHD_Connection *c, const jnode *body, uid_t uid, uint64_t t_req,
			       const struct fork_seed *seed)
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
	bool warm = !seed && pool_matches(pol, tmo) && pool_for(uid);
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
			request_write(sid, body);
			metrics_session_started(&S.metrics, METRICS_WARM, mono_ns() - t_req);
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
	char msg[512];
	unsigned scode;
	if (seed && seed_workspace(id, uid, seed, pol, &scode, msg, sizeof(msg)) < 0) {
		free(ptext);
		slot_abandon(se);
		return send_error(c, scode, "%s", msg);
	}
	int polfd = ptext ? ipc_memfd("cordon-policy", ptext, strlen(ptext)) : -1;
	free(ptext);
	int reply = start_worker(se, id, idle_ns, tmo ? tmo->str : NULL, polfd, false, msg, sizeof(msg));
	if (polfd >= 0)
		close(polfd);
	if (reply >= 0) {
		kept_owner_write(id, uid);
		request_write(id, body);
	}
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
	metrics_session_started(&S.metrics, METRICS_COLD, mono_ns() - t_req);
	enum MHD_Result r = relay_reply(c, reply, 201, "application/json");
	/* Started or not: a worker that did not start exits by itself (and
	 * is reaped on SIGCHLD). */
	close(reply);
	return r;
}

/* The layers no session lists removed (layers.h); !wait: not while a
 * fork is being made (a later end sweeps). */
void layers_sweep_now(bool wait)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/layers", S.state_dir);
	_cleanup_close_ int ld = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	snprintf(p, sizeof(p), "%s/sessions", S.state_dir);
	_cleanup_close_ int sd = ld < 0 ? -1 : open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	cordon_error e = {0};
	if (sd >= 0 && layers_sweep(ld, sd, wait, &e) < 0)
		fprintf(stderr, "cordon serve: the sweep of unlisted layers: %s\n", e.msg);
}

/* At the server's start (after kept_sessions_init waited for the workers
 * of an earlier server still ending: each drops its list once its
 * workspace directory is whole): in a thread of its own, the server
 * serving meanwhile (a fork made now holds the layers' lock as it lists
 * its own). */
static void *layers_start_main(void *unused)
{
	layers_sweep_now(true);
	return NULL;
}

void layers_at_start(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, layers_start_main, NULL) == 0)
		pthread_detach(t);
}
