/* The session worker: one per session, the boundary's supervisor (run.c)
 * with hooks that turn init into an exec agent (session-agent.c). See
 * session.h for the processes and channels, docs/api.md for the API.
 *
 * Rules this file keeps:
 * - It never blocks: the control socket, init's socket and every exec's
 *   output pipes are served by run.c's epoll loop; a reply socket whose
 *   client is slow gets a bounded queue (EXEC_QUEUE_MAX); past it the
 *   exec's output is no longer read (flow control: its process waits on its
 *   write) until the client has taken some. Output is dropped only when no
 *   client reads it any more (counted in the result; the hash and counts
 *   always cover everything).
 * - A client that goes away mid-stream does not stop its exec: it runs on
 *   to its end or its timeout, and its result stays available (GET).
 * - Output goes through the run's redactor and the policy's output limit,
 *   per exec, as cordon run does for its command. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "cleanup.h"
#include "cordon-pty.h"
#include "error.h"
#include "hash.h"
#include "json.h"
#include "layers.h"
#include "snapshot.h"
#include "pol-parse.h"
#include "policy.h"
#include "redact-stream.h"
#include "redact.h"
#include "report-json.h"
#include "report.h"
#include "sup-run.h"
#include "serve-ipc.h"
#include "session-exec.h"
#include "session-files.h"
#include "session-report.h"
#include "session-stream.h"
#include "session-util.h"
#include "session.h"
#include "session-cg.h"
#include "session-pause.h"
#include "session-restore.h"
#include "session-snap.h"
#include "session-worker.h"
#include "sync.h"
#include "units.h"

extern char **environ;

/* The answer to a session's creation (or claim), on one line as before:
 * {"id":"s-...",["warm":true,]"workspace":"...","cwd":"..."}. */
static void reply_created(const struct sx *s, int sock, bool warm)
{
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "id");
	jw_str(&w, s->id);
	if (warm) {
		jw_key(&w, "warm");
		jw_bool(&w, true);
	}
	sx_paths_json(s, &w);
	jw_obj_end(&w);
	if (jw_finish(&w) == 0) {
		/* The writer's newlines and indents are formatting (a string's
		 * are escaped), and so is the space after a key's colon. */
		size_t o = 0;
		bool in_str = false;
		for (size_t i = 0; i < w.out.len; i++) {
			char ch = w.out.p[i];
			if (in_str && ch == '\\' && i + 1 < w.out.len) {
				w.out.p[o++] = ch;
				w.out.p[o++] = w.out.p[++i];
				continue;
			}
			if (ch == '"')
				in_str = !in_str;
			if (!in_str && (ch == '\n' || ch == ' '))
				continue;
			w.out.p[o++] = ch;
		}
		w.out.p[o] = '\0';
		sx_reply_json(sock, w.out.p);
	}
	buf_free(&w.out);
}


static void end_session(struct sx *s, const char *why)
{
	if (s->ending)
		return;
	s->ending = true;
	if (!s->end_reason)
		s->end_reason = why;
	/* Paused: thawed first, or its processes could not end. */
	sx_pause_end(s);
	sync_send(s->sock, MSG_SX_END, 0, NULL, -1);
}

/* A warm session handed to a client: from now on it is a session like any
 * other. Its idle timer starts now, and so does its wall time (the policy's
 * limit, re-armed: the time it waited in the pool is not the client's). */
static bool do_claim(struct sx *s, const jnode *req, int reply)
{
	if (!s->warm || s->claimed) {
		sx_reply_error(reply, 409, "the session is not in the warm pool");
		return false;
	}
	s->claimed = true;
	s->pool_ns = mono_ns() - s->t_ready;
	const jnode *os = json_get(req, "oneshot");
	s->oneshot = os && os->type == J_BOOL && os->b;
	const jnode *idle = json_get(req, "idle_timeout_ns");
	s->idle_ns = idle && idle->type == J_NUM && idle->num > 0 ? (uint64_t)idle->num : 0;
	if (s->idle_ns && s->idle < 0 && (s->idle = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) >= 0) {
		struct epoll_event ie = {.events = EPOLLIN, .data.u64 = tag(K_IDLE, 0)};
		epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->idle, &ie);
	}
	if (s->pol->limits[LIM_WALL].set && s->wall_timer >= 0) {
		uint64_t ns = s->pol->limits[LIM_WALL].value;
		struct itimerspec its = {{0, 0}, {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)}};
		timerfd_settime(s->wall_timer, 0, &its, NULL);
	}
	reply_created(s, reply, true);
	return true;
}

static void on_ctl(struct sx *s)
{
	char *b = malloc(IPC_MAX_PACKET);
	int fds[IPC_MAX_FDS], nfds = 0;
	ssize_t n = b ? ipc_recv(s->ctl, b, IPC_MAX_PACKET, fds, &nfds) : -1;
	if (n <= 0) {
		free(b);
		if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			/* The server is gone: so is the session (its report is
			 * written all the same). */
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->ctl, NULL);
			end_session(s, "server-gone");
		}
		return;
	}
	int reply = nfds > 0 ? fds[0] : -1, extra = nfds > 1 ? fds[1] : -1;
	cordon_error e;
	jnode *req = json_parse(b, (size_t)n, &e);
	free(b);
	const jnode *opn = req ? json_get(req, "op") : NULL;
	const char *op = opn && opn->str ? opn->str : "";
	sx_arm_idle(s);
	/* A warm one-shot run's exec claims its session on the way ("claim":
	 * true, and the claim's "oneshot"): one message from the server, not
	 * a claim's round trip before it. */
	const jnode *cl = strcmp(op, "exec") == 0 ? json_get(req, "claim") : NULL;
	if (cl && cl->type == J_BOOL && cl->b && !do_claim(s, req, -1)) {
		sx_reply_error(reply, 409, "the session is not in the warm pool");
	} else if (s->warm && !s->claimed && strcmp(op, "claim") != 0 && strcmp(op, "end") != 0) {
		sx_reply_error(reply, 409, "the session is in the warm pool");
	} else if (s->ending && strcmp(op, "end") != 0 && strcmp(op, "forkable") != 0) {
		/* (forkable is answered: a fork as the session ends is whole, or
		 * refused by its snapshot's lock, serve-fork.c.)
		 * Ended by its DELETE: 409 while it ends; by itself (a timeout):
		 * it has ended for the client (410). */
		bool deleted = s->end_reason && strcmp(s->end_reason, "deleted") == 0;
		if (deleted)
			sx_reply_error(reply, 409, "the session is ending");
		else
			sx_reply_error(reply, 410, "the session has ended (%s)", s->end_reason ? s->end_reason : "by itself");
	} else if (s->paused && (strcmp(op, "exec") == 0 || strcmp(op, "file") == 0 || strcmp(op, "signal") == 0)) {
		/* Its processes are frozen: nothing is started, opened or
		 * signalled in it until it is resumed (docs/api.md). */
		sx_reply_error(reply, 409, "the session is paused: POST /v1/sessions/%s/resume first", s->id);
	} else if (strcmp(op, "pause") == 0) {
		sx_do_pause(s, reply);
	} else if (strcmp(op, "resume") == 0) {
		sx_do_resume(s, reply);
	} else if (s->restore_reply >= 0 && (strcmp(op, "exec") == 0 || strcmp(op, "file") == 0 ||
					     strcmp(op, "snapshot") == 0 || strcmp(op, "restore") == 0 ||
					     strcmp(op, "pause") == 0)) {
		sx_reply_error(reply, 409, "the session is being restored: try again");
	} else if (strcmp(op, "restore") == 0) {
		sx_do_restore(s, req, reply);
		reply = -1;
	} else if (strcmp(op, "snapshot") == 0) {
		sx_do_snapshot(s, reply);
	} else if (strcmp(op, "snapshots") == 0) {
		sx_do_snapshots(s, reply);
	} else if (strcmp(op, "snapshot_delete") == 0) {
		sx_do_snapshot_delete(s, req, reply);
	} else if (strcmp(op, "snapshot_changeset") == 0) {
		sx_do_snapshot_changeset(s, req, reply);
	} else if (strcmp(op, "claim") == 0) {
		do_claim(s, req, reply);
	} else if (strcmp(op, "exec") == 0) {
		sx_do_exec(s, req, reply, extra);
		reply = extra = -1;
	} else if (strcmp(op, "forkable") == 0) {
		/* (serve-fork.c, before a fork: it starts from the session's
		 * own workspace directory) */
		char why[4600];
		if (!s->rep || !s->rep->live_upper[0])
			sx_reply_error(reply, 409, "the session's workspace has no change set to fork from: its workspace mode is direct (overlay and review keep one)");
		else if (!sx_ws_own(s, why, sizeof(why)))
			sx_reply_error(reply, 409, "%s", why);
		else
			sx_reply_json(reply, "{}");
	} else if (strcmp(op, "get") == 0) {
		sx_do_get(s, reply);
	} else if (strcmp(op, "changes_dir") == 0) {
		/* Where the workspace's change set is (GET .../changes: the
		 * server reads it with cordon changes); with a snapshot, its
		 * directory and the layer it stands for (the workspace's). */
		const jnode *sn = json_get(req, "snapshot");
		size_t k = 0;
		while (sn && sn->str && k < s->nsnaps && strcmp(s->snaps[k].id, sn->str) != 0)
			k++;
		int layer = sn ? sx_workspace_layer(s) : 0;
		if (!s->rep || !s->rep->live_changes[0] || layer < 0) {
			sx_reply_error(reply, 409, "the session's workspace has no change set: its workspace mode is direct (overlay and review keep one)");
		} else if (sn && (!sn->str || k == s->nsnaps)) {
			sx_reply_error(reply, 404, "no such snapshot in this session");
		} else {
			jwriter w = {0};
			jw_obj_begin(&w);
			jw_key(&w, "dir");
			jw_str(&w, s->rep->live_changes);
			if (sn) {
				char up[4200];
				snprintf(up, sizeof(up), "%s/%s", s->snap_dir, s->snaps[k].id);
				jw_key(&w, "upper");
				jw_str(&w, up);
				jw_key(&w, "layer");
				jw_uint(&w, (uint64_t)layer);
			}
			/* A stacked fork's: its lower tree is the merged one (a
			 * detached overlay, passed), which the reader mounts over
			 * the workspace's host directory in a mount namespace of
			 * its own (cordon changes --host-tree). */
			cordon_error le = {0};
			int wl = sx_workspace_layer(s);
			int tree = -1, root = s->layers.n && wl >= 0 ? sx_lower_open(s, &tree, &le) : -1;
			if (root >= 0)
				close(root);
			if (tree >= 0) {
				jw_key(&w, "stack_layer");
				jw_uint(&w, (uint64_t)wl);
			}
			jw_obj_end(&w);
			if (s->layers.n && tree < 0)
				sx_reply_error(reply, 500, "the session's lower tree: %s", le.msg);
			else if (jw_finish(&w) == 0 && tree >= 0)
				ipc_send(reply, w.out.p, strlen(w.out.p), &tree, 1, MSG_DONTWAIT);
			else if (w.out.p)
				sx_reply_json(reply, w.out.p);
			else
				sx_reply_error(reply, 500, "out of memory");
			if (tree >= 0)
				close(tree);
			buf_free(&w.out);
		}
	} else if (strcmp(op, "exec_get") == 0 || strcmp(op, "signal") == 0) {
		const jnode *id = json_get(req, "exec");
		struct sx_exec *x = sx_find_exec(s, id ? id->str : NULL);
		if (!x) {
			sx_reply_error(reply, 404, "no such exec in this session");
		} else if (op[0] == 'e') {
			if (x->result)
				sx_reply_json(reply, x->result);
			else {
				char j[96];
				snprintf(j, sizeof(j), "{\"exec\":\"%s\",\"state\":\"running\"}", x->id);
				sx_reply_json(reply, j);
			}
		} else {
			const jnode *sn = json_get(req, "signal");
			int sig = sx_parse_signal(sn ? sn->str : NULL);
			if (sig < 0)
				sx_reply_error(reply, 400, "signal: one of TERM, KILL, INT, HUP, QUIT, USR1, USR2, STOP, CONT, ALRM");
			else if (!x->running)
				sx_reply_error(reply, 409, "exec %s has already ended", x->id);
			else {
				sx_signal_exec(s, x, sig, "killed");
				sx_reply_json(reply, "{}");
			}
		}
	} else if (strcmp(op, "output") == 0) {
		sx_do_output(s, req, reply);
		reply = -1;
	} else if (strcmp(op, "attach") == 0 || strcmp(op, "resize") == 0) {
		const jnode *id = json_get(req, "exec");
		struct sx_exec *x = sx_find_exec(s, id ? id->str : NULL);
		if (!x || !x->pty) {
			sx_reply_error(reply, 404, "no such pty exec in this session");
		} else if (op[0] == 'a') {
			if (x->client < 0 && extra >= 0 && !x->running) {
				/* It ended before the client came: what it wrote, then EOF. */
				if (x->cq.len > x->cqoff &&
				    send(extra, x->cq.p + x->cqoff, x->cq.len - x->cqoff, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
					/* the client is gone already */
				}
				shutdown(extra, SHUT_WR);
				x->cq.len = x->cqoff = 0;
			} else if (x->client < 0 && extra >= 0) {
				x->client = extra;
				extra = -1;
				struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(K_CLIENT, (uint32_t)(x - s->ex))};
				x->client_reg = epoll_ctl(s->epfd, EPOLL_CTL_ADD, x->client, &ev) == 0;
				const jnode *pre = json_get(req, "input_b64");
				if (pre && pre->str) {
					size_t l = strlen(pre->str);
					uint8_t *d = malloc(l / 4 * 3 + 4);
					ssize_t dl = d ? b64_decode(pre->str, l, d) : -1;
					if (dl > 0)
						sx_pty_input(s, x, d, (size_t)dl);
					free(d);
				}
				sx_client_flush(s, x);
			}
			sx_reply_json(reply, "{}");
		} else {
			const jnode *r = json_get(req, "rows"), *c = json_get(req, "cols");
			struct pty_winsize ws = {0};
			ws.rows = r && r->type == J_NUM && r->num >= 1 && r->num < 10000 ? (unsigned short)r->num : 0;
			ws.cols = c && c->type == J_NUM && c->num >= 1 && c->num < 10000 ? (unsigned short)c->num : 0;
			if (!ws.rows || !ws.cols)
				sx_reply_error(reply, 400, "rows and cols: integers from 1 to 9999 are required");
			else if (x->ptm < 0 && x->running && !x->in_ready) {
				/* Before the master came (a client resizing as soon
				 * as its upgrade is answered): kept, applied when it
				 * comes, as input that came first is. */
				x->pws = ws;
				x->pws_set = true;
				sx_reply_json(reply, "{}");
			} else if (x->ptm < 0 || pty_set_winsize(x->ptm, &ws) < 0)
				sx_reply_error(reply, 409, "exec %s has no pty any more", x->id);
			else
				sx_reply_json(reply, "{}");
		}
	} else if (strcmp(op, "file") == 0) {
		sx_do_file(s, req, reply, extra);
		reply = extra = -1;
	} else if (strcmp(op, "end") == 0) {
		if (s->end_reply < 0) {
			s->end_reply = reply;
			reply = -1;
		}
		end_session(s, "deleted");
	} else {
		sx_reply_error(reply, 400, "unknown request");
	}
	json_free(req);
	sx_close_fd(&reply);
	sx_close_fd(&extra);
}

/* ---- run.c hooks ---- */

static void h_ready(void *ctx, int sock, int epfd, int wall_timer, struct run_report *rep)
{
	struct sx *s = ctx;
	s->sock = sock;
	s->epfd = epfd;
	s->wall_timer = wall_timer;
	s->rep = rep;
	s->ready = true;
	s->t_ready = mono_ns();
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(K_CTL, 0)};
	epoll_ctl(epfd, EPOLL_CTL_ADD, s->ctl, &ev);
	if (!s->warm && s->idle_ns && (s->idle = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) >= 0) {
		struct epoll_event ie = {.events = EPOLLIN, .data.u64 = tag(K_IDLE, 0)};
		epoll_ctl(epfd, EPOLL_CTL_ADD, s->idle, &ie);
		sx_arm_idle(s);
	}
	reply_created(s, s->create_reply, false);
	sx_close_fd(&s->create_reply);
}

static bool h_msg(void *ctx, const struct msg *m, int fd)
{
	struct sx *s = ctx;
	int slot = m->value;
	struct sx_exec *x = slot >= 0 && slot < SX_SLOTS && s->slot_ex[slot] >= 0 ? &s->ex[s->slot_ex[slot]] : NULL;
	switch (m->type) {
	case MSG_SX_STARTED:
		if (x && m->err.code > 0) {
			x->pid = m->err.code;
			memcpy(&x->t_exec, m->err.msg, sizeof(x->t_exec));
			/* A restore came while it started: its kill now that the
			 * agent is out of the exec's cgroup (session-restore.c); a
			 * signal asked before it started, now too. */
			if (s->restore_reply >= 0 && x->forced && strcmp(x->forced, "restored") == 0)
				sx_signal_exec(s, x, SIGKILL, "restored");
			else if (x->kill_pending)
				sx_signal_exec(s, x, x->kill_pending, NULL);
			x->kill_pending = 0;
		}
		if (x && m->err.code < 0) {
			snprintf(x->error, sizeof(x->error), "%s", m->err.msg);
			/* Ended by us as it started (a restore's kill): ours. */
			x->status = x->forced ? x->forced : "start-error";
			sx_finalize(s, x);
		} else if (x && x->pty && fd >= 0) {
			/* The master: its output is the exec's stdout (a pty
			 * merges both streams), read like a pipe. */
			fcntl(fd, F_SETFL, O_NONBLOCK);
			x->ptm = fd;
			if (x->pws_set)
				pty_set_winsize(fd, &x->pws);
			pty_input_init(&x->in, fd);
			x->in_ready = true;
			if (x->pin.len) {
				sx_pty_input(s, x, (const uint8_t *)x->pin.p, x->pin.len);
				buf_free(&x->pin);
			}
			if (x->client_eof) {
				pty_input_eof(&x->in);
				sx_pty_flush(s, x);
			}
			sx_client_watch(s, x);
			x->out[0] = dup(fd);
			sx_close_fd(&x->out[1]);
			if (x->out[0] >= 0) {
				fcntl(x->out[0], F_SETFD, FD_CLOEXEC);
				struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(K_OUT, (uint32_t)(x - s->ex) * 2)};
				epoll_ctl(s->epfd, EPOLL_CTL_ADD, x->out[0], &ev);
			}
			return true;
		}
		return false;
	case MSG_SX_EXIT:
		if (x) {
			x->exited = true;
			x->wstatus = m->err.code;
			memcpy(&x->usage, m->err.msg, sizeof(x->usage));
			x->cg_cpu = sxcg_exec_end(slot, &x->cg_cpu_ns);
			sx_finalize(s, x);
		}
		return false;
	case MSG_SX_FILE_R:
		sx_file_result(s, slot, m->err.code, fd);
		return true;
	}
	return false;
}

static void h_event(void *ctx, uint64_t data, uint32_t events)
{
	struct sx *s = ctx;
	int kind = (int)((data >> 32) & 0xff);
	uint32_t idx = (uint32_t)data;
	switch (kind) {
	case K_CTL:
		on_ctl(s);
		break;
	case K_OUT:
		if (idx / 2 < s->nex)
			sx_read_out(s, &s->ex[idx / 2], (int)(idx % 2));
		break;
	case K_TIMER:
		/* Paused: the timer was stopped (an expiry seen before the stop
		 * ended its exec then: session-pause.c). */
		if (idx < s->nex && !s->paused) {
			uint64_t v;
			if (read(s->ex[idx].timer, &v, sizeof(v)) < 0) { /* spurious */ }
			sx_signal_exec(s, &s->ex[idx], SIGKILL, "timeout");
		}
		break;
	case K_IDLE: {
		uint64_t v;
		if (read(s->idle, &v, sizeof(v)) < 0) { /* spurious */ }
		if (s->paused)
			break; /* stopped: an expiry read in the same round as the pause */
		/* The lease (docs/api.md): an exec whose client still reads
		 * its stream (or holds its pty open) keeps the session; one
		 * left running by a client that went away does not. */
		bool busy = false;
		for (size_t i = 0; i < s->nex; i++)
			busy |= s->ex[i].running &&
				(s->ex[i].reply >= 0 || (s->ex[i].client >= 0 && !s->ex[i].client_eof));
		if (!busy)
			end_session(s, "idle-timeout");
		else
			sx_arm_idle(s);
		break;
	}
	case K_PAUSE: {
		uint64_t v;
		if (read(s->pause_timer, &v, sizeof(v)) < 0) { /* spurious */ }
		if (s->paused) /* not resumed in --max-pause: it ends */
			end_session(s, "pause-limit");
		break;
	}
	case K_REPLY:
		if (idx < s->nex && (events & (EPOLLHUP | EPOLLERR)))
			sx_reply_hangup(s, &s->ex[idx]);
		else if (idx < s->nex)
			sx_queue_flush(s, &s->ex[idx]);
		break;
	case K_PTYIN:
		if (idx < s->nex)
			sx_pty_flush(s, &s->ex[idx]);
		break;
	case K_CLIENT:
		if (idx < s->nex && s->ex[idx].client >= 0) {
			if (events & EPOLLOUT)
				sx_client_flush(s, &s->ex[idx]);
			if (s->ex[idx].client >= 0 && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
				sx_client_in(s, &s->ex[idx]);
		}
		break;
	}
	(void)events;
}

static void h_cgroup(void *ctx, const struct cgroup *cg)
{
	(void)ctx;
	sxcg_session(cg);
}

static void h_kill(void *ctx)
{
	sx_pause_end(ctx);
}

static void h_end(void *ctx)
{
	struct sx *s = ctx;
	s->ended = true;
	sx_pause_end(s);
	sxcg_end();
	/* Its snapshots go with it, before its report answers the DELETE. */
	sx_restore_end(s);
	sx_snaps_end(s);
	for (size_t i = 0; i < s->nex; i++)
		if (s->ex[i].running)
			sx_finalize(s, &s->ex[i]);
	for (size_t i = 0; i < sizeof(s->files) / sizeof(s->files[0]); i++)
		if (s->files[i].used)
			sx_file_result(s, (int)i, ESHUTDOWN, -1);
}

static void sx_free(struct sx *s)
{
	for (size_t i = 0; i < s->nex; i++) {
		struct sx_exec *x = &s->ex[i];
		strv_free(&x->argv);
		free(x->result);
		free(x->den0);
		buf_free(&x->queue);
		buf_free(&x->cq);
		buf_free(&x->pin);
		if (x->in_ready)
			pty_input_free(&x->in);
		sx_close_fd(&x->ptm);
		sx_close_fd(&x->client);
		sx_close_fd(&x->reply);
		sx_close_fd(&x->timer);
		for (int k = 0; k < 2; k++) {
			sx_close_fd(&x->out[k]);
			if (x->h[k]) {
				sha256_free(x->h[k]);
				redact_stream_free(&x->rs[k]);
			}
		}
	}
	free(s->ex);
	buf_free(&s->evidence);
	sx_close_fd(&s->idle);
	sx_close_fd(&s->pause_timer);
	sx_close_fd(&s->create_reply);
	sx_close_fd(&s->end_reply);
	sx_close_fd(&s->sess_fd);
	strv_free(&s->layers);
}

static int setup_policy(struct sx *s, const jnode *cfg, int polfd, cordon_error *err)
{
	const jnode *ceil = json_get(cfg, "ceiling"), *tmo = json_get(cfg, "timeout"),
		    *idle = json_get(cfg, "idle_timeout_ns"), *ws = json_get(cfg, "workspace");
	buf text = {0};
	if (polfd >= 0 && ipc_read_fd(polfd, 16u << 20, &text) < 0) {
		buf_free(&text);
		return cordon_err_errno(err, "policy");
	}
	s->pol = policy_new();
	if (!s->pol) {
		buf_free(&text);
		return cordon_oom(err);
	}
	int rc = 0;
	if (text.len)
		rc = policy_load_json(s->pol, text.p, text.len, "policy", ws && ws->str ? ws->str : "/", err);
	buf_free(&text);
	if (rc < 0)
		return -1;
	if (ceil && ceil->str && !(s->pol->ceiling_file = strdup(ceil->str)))
		return cordon_oom(err);
	const jnode *dflt = json_get(cfg, "default_timeout");
	if (tmo && tmo->str && policy_set_limit(s->pol, LIM_WALL, tmo->str, SRC_FLAG, err) < 0)
		return cordon_err_wrap(err, "timeout");
	/* The server's default only where neither the request nor the policy
	 * has one. */
	if (!tmo && dflt && dflt->str && !s->pol->limits[LIM_WALL].set &&
	    policy_set_limit(s->pol, LIM_WALL, dflt->str, SRC_FLAG, err) < 0)
		return cordon_err_wrap(err, "--session-timeout");
	if (idle && idle->type == J_NUM && idle->num > 0)
		s->idle_ns = (uint64_t)idle->num;
	const jnode *mp = json_get(cfg, "max_pause_ns");
	if (mp && mp->type == J_NUM && mp->num > 0)
		s->max_pause_ns = (uint64_t)mp->num;
	/* The client's session, from a root server: the run is the client's. */
	const jnode *cu = json_get(cfg, "client_uid"), *cg = json_get(cfg, "client_gid");
	if (cu && cg && cu->type == J_NUM && cg->type == J_NUM) {
		s->pol->for_client = true;
		s->pol->client_uid = (uid_t)cu->num;
		s->pol->client_gid = (gid_t)cg->num;
	}
	return 0;
}

/* The session's directory (its report's) held, and its stack of layers
 * (layers.h) read into the policy: <state>/layers/<name>, the state
 * directory two above the session's. */
static int session_stack(struct sx *s, cordon_error *err)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", s->report_path);
	char *sl = strrchr(dir, '/');
	if (!sl || sl == dir)
		return 0;
	*sl = '\0';
	s->sess_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->sess_fd < 0)
		return cordon_err_errno(err, "%s", dir);
	flock(s->sess_fd, LOCK_EX | LOCK_NB);
	if (layers_read(s->sess_fd, &s->layers, err) < 0)
		return cordon_err_wrap(err, "%s", dir);
	if (!s->layers.n)
		return 0;
	char state[4096];
	snprintf(state, sizeof(state), "%s", dir);
	for (int k = 0; k < 2; k++) {
		sl = strrchr(state, '/');
		if (!sl || sl == state)
			return cordon_err(err, EINVAL, "%s: no state directory above it", dir);
		*sl = '\0';
	}
	for (size_t i = 0; i < s->layers.n; i++) {
		char *p = NULL;
		if (asprintf(&p, "%s/layers/%s", state, s->layers.v[i]) < 0)
			return cordon_oom(err);
		free(s->layers.v[i]);
		s->layers.v[i] = p;
		if (strv_push(&s->pol->ws_layers, p) < 0)
			return cordon_oom(err);
	}
	if (asprintf(&s->pol->ws_layers_list, "%s/%s", dir, LAYERS_FILE) < 0) {
		s->pol->ws_layers_list = NULL;
		return cordon_oom(err);
	}
	return 0;
}

int session_worker_main(int ctl)
{
	struct sx s;
	memset(&s, 0, sizeof(s));
	s.ctl = ctl;
	s.sess_fd = -1;
	s.sock = s.epfd = s.idle = s.create_reply = s.end_reply = s.wall_timer = s.pause_timer = s.restore_reply = -1;
	for (int i = 0; i < SX_SLOTS; i++)
		s.slot_ex[i] = -1;
	char *b = malloc(IPC_MAX_PACKET);
	int fds[IPC_MAX_FDS], nfds = 0;
	ssize_t n = b ? ipc_recv(ctl, b, IPC_MAX_PACKET, fds, &nfds) : -1;
	if (n <= 0) {
		free(b);
		return 2;
	}
	s.create_reply = nfds > 0 ? fds[0] : -1;
	int polfd = nfds > 1 ? fds[1] : -1;
	cordon_error err = {0};
	jnode *cfg = json_parse(b, (size_t)n, &err);
	free(b);
	const jnode *id = cfg ? json_get(cfg, "id") : NULL, *rp = cfg ? json_get(cfg, "report") : NULL;
	snprintf(s.id, sizeof(s.id), "%s", id && id->str ? id->str : "s-?");
	snprintf(s.report_path, sizeof(s.report_path), "%s", rp && rp->str ? rp->str : "");
	/* The session's directory (its report's): its snapshots beside. */
	char *rslash = strrchr(s.report_path, '/');
	if (rslash && rslash > s.report_path)
		snprintf(s.snap_dir, sizeof(s.snap_dir), "%.*s/snapshots", (int)(rslash - s.report_path), s.report_path);
	const jnode *wm = cfg ? json_get(cfg, "warm") : NULL;
	s.warm = wm && wm->type == J_BOOL && wm->b;
	const jnode *ws = cfg ? json_get(cfg, "workspace") : NULL;
	if (!cfg || setup_policy(&s, cfg, polfd, &err) < 0 || !ws || !ws->str || chdir(ws->str) < 0) {
		if (!err.msg[0])
			cordon_err_errno(&err, "session workspace");
		sx_reply_error(s.create_reply, 400, "%s", err.msg);
		sx_close_fd(&polfd);
		json_free(cfg);
		policy_free(s.pol);
		sx_free(&s);
		return 1;
	}
	snprintf(s.ws, sizeof(s.ws), "%s", ws->str);
	if (session_stack(&s, &err) < 0) {
		sx_reply_error(s.create_reply, 500, "%s", err.msg);
		sx_close_fd(&polfd);
		json_free(cfg);
		policy_free(s.pol);
		sx_free(&s);
		return 1;
	}
	snprintf(s.cwd, sizeof(s.cwd), "%s", s.pol->cwd ? s.pol->cwd : ws->str);
	sx_close_fd(&polfd);
	json_free(cfg);
	/* The server's environment: the host variables secrets come from,
	 * CORDON_CGROUP, LANG, TERM... as for cordon run. */
	struct cordon_run_options ro;
	cordon_run_options_from_env(&ro, environ);
	s.pol->opts = &ro;
	/* A malformed value: the boundary's setup refuses it (sup-run.c). */
	s.out_hash = OUTPUT_HASH_BYTES;
	cordon_error herr = {0};
	if (ro.output_hash && parse_size(ro.output_hash, &s.out_hash, &herr) < 0)
		s.out_hash = OUTPUT_HASH_BYTES;
	struct run_report rep;
	report_init(&rep);
	rep.attribute = true; /* each exec's denials are its own (sx_finalize) */
	struct run_hooks h = {&s, h_ready, h_msg, h_event, h_end, sx_h_report, h_cgroup, h_kill};
	s.rep = &rep;
	int rc = cordon_session_run(s.pol, &rep, &h, &err);
	if (!s.ready) {
		/* Never started: the reason, and for the ceiling each excess. */
		int code = rep.status == ST_UNAUTHORIZED ? 403 : rep.status == ST_INFEASIBLE ? 422 : 500;
		char *reason = report_redact(&rep, rc < 0 ? err.msg : rep.reason);
		sx_reply_error(s.create_reply, code, "%s: %s", status_name(rep.status), reason ? reason : "");
		free(reason);
	}
	sx_snaps_end(&s); /* a session that never came up: none, or a warm one's */
	sx_publish(&s);
	report_free(&rep);
	policy_free(s.pol);
	sx_free(&s);
	return rc < 0 ? 1 : 0;
}
