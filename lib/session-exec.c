/* A session exec's life: started on request (do_exec), its buffered
 * output fetched (do_output), and its result event written once it ended
 * and its output was read (finalize, in named steps). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "session-exec.h"
#include "session-restore.h"
#include "cleanup.h"
#include "cordon-pty.h"
#include "error.h"
#include "hash.h"
#include "json.h"
#include "policy.h"
#include "redact-stream.h"
#include "redact.h"
#include "report.h"
#include "serve-ipc.h"
#include "session-stream.h"
#include "session-util.h"
#include "session.h"
#include "session-cg.h"
#include "sync.h"
#include "units.h"
#include "session-worker.h"

static void usage_json(jwriter *w, const struct sx_exec *x)
{
	const struct sx_usage *u = &x->usage;
	jw_key(w, "usage");
	jw_obj_begin(w);
	jw_key(w, "cpu_user_seconds");
	jw_double(w, (double)u->cpu_user_ns / 1e9);
	jw_key(w, "cpu_sys_seconds");
	jw_double(w, (double)u->cpu_sys_ns / 1e9);
	jw_key(w, "peak_memory_bytes");
	jw_uint(w, u->max_rss);
	jw_key(w, "wall_seconds");
	jw_double(w, (double)u->wall_ns / 1e9);
	if (x->cg_cpu) {
		jw_key(w, "cgroup_cpu_seconds");
		jw_double(w, (double)x->cg_cpu_ns / 1e9);
	}
	if (x->paused_ns) {
		/* Part of wall_seconds: not counted against its timeout. */
		jw_key(w, "paused_seconds");
		jw_double(w, (double)x->paused_ns / 1e9);
	}
	if (x->t_req && x->t_exec >= x->t_req) {
		jw_key(w, "start_to_exec_seconds");
		jw_double(w, (double)(x->t_exec - x->t_req) / 1e9);
	}
	jw_obj_end(w);
}

/* The most of an exec result's argv, and of its denials, listed (JSON
 * bytes each): with the rest (error at most 512) well within one packet. */
#define RESULT_LIST_MAX (24u * 1024u)

/* What its pipes still hold is read whatever the queue (bounded: the
 * exec's process is gone, the pipes hold what they hold); its hashes,
 * timer, pty and client are closed. */
static void exec_drain(struct sx *s, struct sx_exec *x)
{
	x->paused = false;
	x->draining = true;
	for (int i = 0; i < 2; i++) {
		if (x->out[i] >= 0) {
			sx_read_out(s, x, i);
			if (x->out[i] >= 0) { /* a process it left holds the pipe: end here */
				sx_out_bytes(s, x, i, NULL, 0, true);
				epoll_ctl(s->epfd, EPOLL_CTL_DEL, x->out[i], NULL);
				sx_close_fd(&x->out[i]);
			}
		}
		sha256_final_hex(x->h[i], x->sha[i]); /* frees it */
		x->h[i] = NULL;
		redact_stream_free(&x->rs[i]);
	}
	sx_close_fd(&x->timer);
	if (x->ptm_wait)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, x->ptm, NULL);
	x->ptm_wait = false;
	sx_close_fd(&x->ptm);
	if (x->in_ready) {
		/* What the exec never read. */
		x->input_dropped += x->in.pending.len - x->in.off;
		pty_input_free(&x->in);
		x->in_ready = false;
	}
	if (x->client >= 0) {
		sx_client_flush(s, x);
		if (x->client >= 0) {
			/* What it has not taken yet is lost: counted. */
			x->dropped += x->cq.len - x->cqoff;
			shutdown(x->client, SHUT_WR);
			sx_client_drop(s, x);
		}
	}
}

/* Its exit code (-1 if none) and signal (0 if none), and its status. */
static void exec_status(struct sx_exec *x, int *code, int *sig)
{
	*code = -1;
	*sig = 0;
	if (x->exited && WIFEXITED(x->wstatus))
		*code = WEXITSTATUS(x->wstatus);
	else if (x->exited && WIFSIGNALED(x->wstatus))
		*sig = WTERMSIG(x->wstatus);
	if (!x->status) {
		/* Once ended by us, it stays so: a leader that escaped the
		 * signal (another process group) and exited later is no "ok". */
		if (x->forced)
			x->status = x->forced;
		else if (!x->exited)
			x->status = "session-ended";
		else if (*sig)
			x->status = "signaled";
		else
			x->status = *code == 0 ? "ok" : "exit";
	}
}

/* The result is one packet to the server (IPC_MAX_PACKET), whatever the
 * exec made: its argv and its denials are listed up to a share of it each,
 * and what was left out is counted. "argv" (and "argv_omitted"). */
static void result_argv(jwriter *w, const struct sx_exec *x)
{
	size_t argv_left = 0, mark = w->out.len;
	jw_key(w, "argv");
	jw_arr_begin(w);
	for (size_t i = 0; i < x->argv.n; i++) {
		size_t before = w->out.len;
		bool first = w->first[w->depth];
		if (w->out.len - mark < RESULT_LIST_MAX)
			jw_str(w, x->argv.v[i]);
		if (w->out.len - mark > RESULT_LIST_MAX) {
			w->out.len = before; /* undo it */
			w->first[w->depth] = first;
			argv_left = x->argv.n - i;
			break;
		}
	}
	jw_arr_end(w);
	if (argv_left) {
		jw_key(w, "argv_omitted");
		jw_uint(w, argv_left);
	}
}

/* "status", "exit_code", "signal" and "error". */
static void result_exit(jwriter *w, const struct sx_exec *x, int code, int sig)
{
	jw_key(w, "status");
	jw_str(w, x->status);
	jw_key(w, "exit_code");
	if (code >= 0)
		jw_int(w, code);
	else
		jw_null(w);
	jw_key(w, "signal");
	if (sig) {
		char name[32];
		snprintf(name, sizeof(name), "SIG%s", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
		jw_str(w, name);
	} else {
		jw_null(w);
	}
	if (x->error[0]) {
		jw_key(w, "error");
		jw_str(w, x->error);
	}
}

/* "denials" (and "denials_omitted"): its own (made by a process of its
 * group), and what no process is known for that was made while it ran.
 * Its group's entries are dropped: a later exec may get the same pid. */
static void result_denials(jwriter *w, struct sx *s, struct sx_exec *x)
{
	size_t den_left = 0;
	jw_key(w, "denials");
	jw_arr_begin(w);
	size_t mark = w->out.len;
	pthread_mutex_lock(&s->rep->denial_lock);
	for (size_t i = 0; i < s->rep->ndenials; i++) {
		const struct denial *d = &s->rep->denials[i];
		uint64_t c = d->unattributed - (i < x->nden0 ? x->den0[i] : 0);
		for (size_t j = 0; x->pid > 0 && j < s->rep->nby_group; j++)
			if (s->rep->by_group[j].idx == i && s->rep->by_group[j].pgid == x->pid)
				c += s->rep->by_group[j].count;
		if (!c)
			continue;
		if (w->out.len - mark > RESULT_LIST_MAX) {
			den_left++;
			continue;
		}
		jw_obj_begin(w);
		jw_key(w, "kind");
		jw_str(w, d->kind);
		jw_key(w, "target");
		jw_str(w, d->target);
		jw_key(w, "count");
		jw_uint(w, c);
		jw_obj_end(w);
	}
	size_t k = 0;
	for (size_t j = 0; j < s->rep->nby_group; j++)
		if (x->pid <= 0 || s->rep->by_group[j].pgid != x->pid)
			s->rep->by_group[k++] = s->rep->by_group[j];
	s->rep->nby_group = k;
	pthread_mutex_unlock(&s->rep->denial_lock);
	jw_arr_end(w);
	if (den_left) {
		jw_key(w, "denials_omitted");
		jw_uint(w, den_left);
	}
}

/* "stdout", "stderr" (bytes and hash), "dropped_bytes", and a pty's. */
static void result_streams(jwriter *w, const struct sx_exec *x)
{
	for (int i = 0; i < 2; i++) {
		jw_key(w, i ? "stderr" : "stdout");
		jw_obj_begin(w);
		jw_key(w, "bytes");
		jw_uint(w, x->bytes[i]);
		jw_key(w, "sha256");
		if (x->hash_over[i]) {
			/* As cordon run's report says it (report.c). */
			jw_null(w);
			jw_key(w, "hash_skipped");
			jw_str(w, "byte-budget");
			jw_key(w, "hashed_bytes");
			jw_uint(w, x->hashed[i]);
			jw_key(w, "prefix_sha256");
		}
		jw_str(w, x->sha[i]);
		jw_obj_end(w);
	}
	jw_key(w, "dropped_bytes");
	jw_uint(w, x->dropped);
	if (x->pty) {
		jw_key(w, "pty");
		jw_bool(w, true);
		jw_key(w, "input_dropped_bytes");
		jw_uint(w, x->input_dropped);
	}
}

/* One line: the writer's newlines are formatting (a string's are escaped),
 * and so are the spaces that indent after them. */
static void one_line(buf *b)
{
	size_t o = 0;
	for (size_t i = 0; b->p && i < b->len; i++) {
		if (b->p[i] == '\n') {
			while (i + 1 < b->len && b->p[i + 1] == ' ')
				i++;
			continue;
		}
		b->p[o++] = b->p[i];
	}
	b->len = o;
}

/* Done: its slot freed, its reply closed once its queue is sent. */
static void exec_release(struct sx *s, struct sx_exec *x)
{
	x->running = false;
	x->done = true;
	free(x->den0);
	x->den0 = NULL;
	if (x->slot >= 0)
		s->slot_ex[x->slot] = -1;
	x->slot = -1;
	if (x->qoff >= x->queue.len)
		sx_close_fd(&x->reply);
	sx_arm_idle(s);
}

/* The exec's result, once it ended and its output was read: the result
 * event (one line) emitted to its stream and kept for GET. */
void sx_finalize(struct sx *s, struct sx_exec *x)
{
	exec_drain(s, x);
	int code, sig;
	exec_status(x, &code, &sig);
	jwriter w = {0};
	w.filter = sx_redact_cb;
	w.filter_ctx = s->rep->redact;
	jw_obj_begin(&w);
	jw_key(&w, "type");
	jw_str(&w, "result");
	jw_key(&w, "exec");
	jw_str(&w, x->id);
	result_argv(&w, x);
	result_exit(&w, x, code, sig);
	result_denials(&w, s, x);
	usage_json(&w, x);
	result_streams(&w, x);
	jw_obj_end(&w);
	jw_finish(&w);
	one_line(&w.out);
	if (w.out.p && buf_append(&w.out, "\n", 1) == 0) {
		x->result = strdup(w.out.p);
		x->running = false;
		x->done = true;
		sx_emit(s, x, w.out.p, w.out.len, false, 0);
	}
	buf_free(&w.out);
	exec_release(s, x);
	/* A restore waiting for the execs it ended (or one that never
	 * started) goes on once none runs. */
	sx_restore_step(s);
}

/* ---- requests from the server ---- */

struct sx_exec *sx_find_exec(struct sx *s, const char *id)
{
	for (size_t i = 0; id && i < s->nex; i++)
		if (strcmp(s->ex[i].id, id) == 0)
			return &s->ex[i];
	return NULL;
}

int sx_parse_signal(const char *name)
{
	static const struct {
		const char *n;
		int s;
	} t[] = {{"TERM", SIGTERM}, {"KILL", SIGKILL}, {"INT", SIGINT}, {"HUP", SIGHUP}, {"QUIT", SIGQUIT},
		 {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"STOP", SIGSTOP}, {"CONT", SIGCONT}, {"ALRM", SIGALRM}};
	if (!name)
		return -1;
	if (strncmp(name, "SIG", 3) == 0)
		name += 3;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(name, t[i].n) == 0)
			return t[i].s;
	return -1;
}

void sx_do_exec(struct sx *s, const jnode *req, int reply, int stdin_fd)
{
	const jnode *argv = json_get(req, "argv"), *env = json_get(req, "env"), *cwd = json_get(req, "cwd");
	const jnode *tmo = json_get(req, "timeout_ns"), *pty = json_get(req, "pty");
	const jnode *rows = json_get(req, "rows"), *cols = json_get(req, "cols");
	const jnode *treq = json_get(req, "t_req_ns");
	bool want_pty = pty && pty->type == J_BOOL && pty->b;
	const jnode *bg = json_get(req, "background");
	if (!argv || argv->type != J_ARR || argv->n == 0) {
		sx_reply_error(reply, 400, "argv: a non-empty array of strings is required");
		goto out;
	}
	int slot = -1;
	for (int i = 0; i < SX_SLOTS && slot < 0; i++)
		if (s->slot_ex[i] < 0)
			slot = i;
	if (slot < 0) {
		sx_reply_error(reply, 429, "this session already runs %d execs", SX_SLOTS);
		goto out;
	}
	char cwd_abs[4096] = "";
	if (cwd && cwd->str && cwd->str[0] && !sx_abs(s, cwd->str, cwd_abs, sizeof(cwd_abs))) {
		sx_reply_error(reply, 400, "cwd: too long");
		goto out;
	}
	buf req_text = {0};
	buf_printf(&req_text, "%zu%c%zu%c%s%c", argv->n, 0, env ? env->n : 0, 0, cwd_abs, 0);
	for (size_t i = 0; i < argv->n; i++)
		buf_append(&req_text, argv->items[i]->str, strlen(argv->items[i]->str) + 1);
	for (size_t i = 0; env && i < env->n; i++)
		buf_printf(&req_text, "%s=%s%c", env->keys[i], env->items[i]->str, 0);
	struct sx_exec *nex = realloc(s->ex, (s->nex + 1) * sizeof(*s->ex));
	if (!nex || req_text.len > SX_REQ_MAX) {
		if (nex)
			s->ex = nex;
		buf_free(&req_text);
		sx_reply_error(reply, 400, "the exec request is too large");
		goto out;
	}
	s->ex = nex;
	struct sx_exec *x = &s->ex[s->nex];
	memset(x, 0, sizeof(*x));
	x->out[0] = x->out[1] = x->reply = x->timer = x->ptm = x->client = -1;
	x->slot = slot;
	x->pty = want_pty;
	x->background = !want_pty && bg && bg->type == J_BOOL && bg->b;
	x->t_req = treq && treq->type == J_NUM && treq->num > 0 ? (uint64_t)treq->num : 0;
	sx_new_id(x->id, sizeof(x->id), "e-");
	for (size_t i = 0; i < argv->n; i++)
		strv_push(&x->argv, argv->items[i]->str);
	int po[2] = {-1, -1}, pe[2] = {-1, -1};
	/* A request that fits goes inline in MSG_SX_EXEC's frame. */
	char inl[sizeof(((cordon_error *)0)->msg) - 1];
	uint16_t inl_len = 0;
	int memfd = -1;
	if (!want_pty && req_text.len + sizeof(inl_len) <= sizeof(inl)) {
		inl_len = (uint16_t)req_text.len;
		memcpy(inl, &inl_len, sizeof(inl_len));
		memcpy(inl + sizeof(inl_len), req_text.p, req_text.len);
	} else {
		memfd = ipc_memfd("cordon-exec", req_text.p, req_text.len);
	}
	buf_free(&req_text);
	if ((!inl_len && memfd < 0) || pipe2(po, O_CLOEXEC | O_NONBLOCK) < 0 || pipe2(pe, O_CLOEXEC | O_NONBLOCK) < 0) {
		sx_reply_error(reply, 500, "exec: %s", strerror(errno));
		sx_close_fd(&memfd);
		sx_close_fd(&po[0]); sx_close_fd(&po[1]); sx_close_fd(&pe[0]); sx_close_fd(&pe[1]);
		strv_free(&x->argv);
		goto out;
	}
	/* The write ends block for the command (O_NONBLOCK is on the
	 * description: give it a plain one). */
	fcntl(po[1], F_SETFL, 0);
	fcntl(pe[1], F_SETFL, 0);
	s->nex++;
	s->slot_ex[slot] = (int)(x - s->ex);
	x->running = true;
	x->reply = reply;
	reply = -1;
	{
		struct epoll_event rev = {.events = 0, .data.u64 = tag(K_REPLY, (uint32_t)(x - s->ex))};
		epoll_ctl(s->epfd, EPOLL_CTL_ADD, x->reply, &rev);
	}
	for (int i = 0; i < 2; i++) {
		x->h[i] = sha256_new();
		x->hash_left[i] = s->out_hash;
		redact_stream_init(&x->rs[i], s->rep->redact);
	}
	pthread_mutex_lock(&s->rep->denial_lock);
	x->nden0 = s->rep->ndenials;
	x->den0 = calloc(x->nden0 + 1, sizeof(uint64_t));
	for (size_t i = 0; x->den0 && i < x->nden0; i++)
		x->den0[i] = s->rep->denials[i].unattributed;
	if (!x->den0)
		x->nden0 = 0;
	pthread_mutex_unlock(&s->rep->denial_lock);
	cordon_error e = {0};
	uint32_t idx = (uint32_t)(x - s->ex);
	sxcg_exec_begin(s->sock, slot);
	if (want_pty) {
		/* The pty is made by init, in the session's devpts; its master
		 * comes back with MSG_SX_STARTED. */
		sx_close_fd(&po[0]); sx_close_fd(&po[1]); sx_close_fd(&pe[0]); sx_close_fd(&pe[1]);
		struct winsize ws = {0};
		ws.ws_row = rows && rows->type == J_NUM && rows->num > 0 && rows->num < 10000 ? (unsigned short)rows->num : 24;
		ws.ws_col = cols && cols->type == J_NUM && cols->num > 0 && cols->num < 10000 ? (unsigned short)cols->num : 80;
		e.code = 1;
		memcpy(e.msg, &ws, sizeof(ws));
		sync_send_bytes(s->sock, MSG_SX_EXEC, slot, SX_EXEC_PTY, &ws, sizeof(ws), memfd);
		close(memfd);
	} else {
		if (stdin_fd >= 0) {
			e.code = 0;
			sync_send(s->sock, MSG_SX_FD, slot, &e, stdin_fd);
		}
		e.code = 1;
		sync_send(s->sock, MSG_SX_FD, slot, &e, po[1]);
		e.code = 2;
		sync_send(s->sock, MSG_SX_FD, slot, &e, pe[1]);
		if (inl_len)
			sync_send_bytes(s->sock, MSG_SX_EXEC, slot, SX_EXEC_INLINE, inl, sizeof(inl_len) + inl_len, -1);
		else
			sync_send(s->sock, MSG_SX_EXEC, slot, NULL, memfd);
		close(po[1]);
		close(pe[1]);
		sx_close_fd(&memfd);
		x->out[0] = po[0];
		x->out[1] = pe[0];
		for (int i = 0; i < 2; i++) {
			struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(K_OUT, idx * 2 + (uint32_t)i)};
			epoll_ctl(s->epfd, EPOLL_CTL_ADD, x->out[i], &ev);
		}
	}
	if (tmo && tmo->type == J_NUM && tmo->num > 0) {
		x->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		uint64_t ns = (uint64_t)tmo->num;
		struct itimerspec its = {{0, 0}, {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)}};
		struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(K_TIMER, idx)};
		if (x->timer >= 0) {
			timerfd_settime(x->timer, 0, &its, NULL);
			epoll_ctl(s->epfd, EPOLL_CTL_ADD, x->timer, &ev);
		}
	}
	char ev[96];
	int n = snprintf(ev, sizeof(ev), "{\"type\":\"started\",\"exec\":\"%s\"}\n", x->id);
	if (x->background) {
		/* Its answer is this event alone; its output waits for a reader. */
		sx_reply_json(x->reply, ev);
		sx_reply_detach(s, x);
	} else {
		sx_emit(s, x, ev, (size_t)n, false, 0);
	}
out:
	sx_close_fd(&reply);
	sx_close_fd(&stdin_fd);
}

/* A background exec's output (GET .../exec/{eid}/output): a stream that
 * starts with "started", then what is queued and, with "follow", what
 * comes until its result; without, what was queued when it came. One
 * reader at a time; an ended exec's stream ends with its result. */
void sx_do_output(struct sx *s, const jnode *req, int reply)
{
	const jnode *id = json_get(req, "exec"), *fo = json_get(req, "follow");
	struct sx_exec *x = sx_find_exec(s, id ? id->str : NULL);
	char ev[96];
	snprintf(ev, sizeof(ev), "{\"type\":\"started\",\"exec\":\"%s\"}\n", x ? x->id : "");
	if (!x) {
		sx_reply_error(reply, 404, "no such exec in this session");
	} else if (!x->background) {
		sx_reply_error(reply, 409, "exec %s is not a background exec: its output went to its own stream", x->id);
	} else if (x->reply >= 0) {
		sx_reply_error(reply, 409, "exec %s already has a reader of its output", x->id);
	} else {
		sx_reply_json(reply, ev);
		if (x->qoff >= x->queue.len) {
			/* Nothing queued: an ended exec's result (a reader before
			 * took its output), or, without follow, nothing. */
			if (x->done && x->result)
				sx_reply_json(reply, x->result);
			if (x->done || (fo && fo->type == J_BOOL && !fo->b))
				goto out;
		}
		x->reply = reply;
		reply = -1;
		x->fetching = fo && fo->type == J_BOOL && !fo->b;
		x->fetch_left = x->queue.len - x->qoff;
		struct epoll_event rev = {.events = 0, .data.u64 = tag(K_REPLY, (uint32_t)(x - s->ex))};
		epoll_ctl(s->epfd, EPOLL_CTL_ADD, x->reply, &rev);
		sx_queue_flush(s, x);
	}
out:
	sx_close_fd(&reply);
}
