/* cordon serve's one-shot runs (POST /v1/runs): a `cordon run` (or a warm
 * session's one exec) per request, its directory removed as hostile, the
 * runs kept and answered (GET /v1/runs/ID). */
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
#include "openat2.h"
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
	return sys_openat2(dfd, name, &how);
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

void load_kept_runs(void)
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
	metrics_note_result(&S.metrics, METRICS_RUN, rep.p, rep.len);
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

enum MHD_Result do_run(struct MHD_Connection *c, struct req *rq)
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

enum MHD_Result get_run(struct MHD_Connection *c, const char *id, uid_t uid)
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
