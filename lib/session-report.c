/* The session's state and report: GET's answer, the session report's JSON
 * (a one-shot run's outcome its exec's), and publishing it at the end. */
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
#include "session-report.h"
#include "cleanup.h"
#include "cordon-pty.h"
#include "error.h"
#include "hash.h"
#include "json.h"
#include "policy.h"
#include "redact.h"
#include "report-file.h"
#include "report-json.h"
#include "report.h"
#include "serve-ipc.h"
#include "session-util.h"
#include "session.h"
#include "session-cg.h"
#include "session-pause.h"
#include "sync.h"
#include "units.h"
#include "session-worker.h"

void sx_do_get(struct sx *s, int reply)
{
	jwriter w = {0};
	w.filter = sx_redact_cb;
	w.filter_ctx = s->rep->redact;
	jw_obj_begin(&w);
	jw_key(&w, "id");
	jw_str(&w, s->id);
	jw_key(&w, "state");
	jw_str(&w, s->ending ? "ending" : s->paused ? "paused" : "running");
	sx_paths_json(s, &w);
	jw_key(&w, "execs");
	jw_arr_begin(&w);
	for (size_t i = 0; i < s->nex; i++) {
		jw_obj_begin(&w);
		jw_key(&w, "id");
		jw_str(&w, s->ex[i].id);
		jw_key(&w, "state");
		jw_str(&w, s->ex[i].done ? "done" : "running");
		jw_key(&w, "argv");
		jw_str_array(&w, (const char *const *)s->ex[i].argv.v, s->ex[i].argv.n);
		if (s->ex[i].done) {
			jw_key(&w, "status");
			jw_str(&w, s->ex[i].status);
		}
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	if (jw_finish(&w) == 0 && w.out.len < IPC_MAX_PACKET - 1)
		sx_reply_json(reply, w.out.p);
	else if (w.out.p) {
		int fd = ipc_memfd("cordon-reply", w.out.p, w.out.len);
		const char *j = "{\"body\":\"fd\"}";
		ipc_send(reply, j, strlen(j), &fd, fd >= 0, MSG_DONTWAIT);
		sx_close_fd(&fd);
	}
	buf_free(&w.out);
}

/* ---- the session report ---- */

/* A one-shot's session that itself ended well: the report's status, exit
 * code and signal are its exec's (the session's end is in session.end). */
static void oneshot_outcome(struct sx *s, struct run_report *rep)
{
	if (!s->oneshot || s->nex != 1 || !s->ex[0].done)
		return;
	const struct sx_exec *x = &s->ex[0];
	/* Its output is the run's, as `cordon run` reports it. */
	for (int i = 0; i < 2; i++) {
		rep->out[i].bytes = x->bytes[i];
		snprintf(rep->out[i].sha256, sizeof(rep->out[i].sha256), "%s", x->sha[i]);
		rep->out[i].hash_skipped = x->hash_over[i];
		rep->out[i].hashed_bytes = x->hashed[i];
	}
	if (rep->status != ST_OK)
		return;
	static const struct {
		const char *name;
		enum run_status st;
	} map[] = {{"ok", ST_OK}, {"exit", ST_EXIT_NONZERO}, {"signaled", ST_SIGNALED}, {"killed", ST_SIGNALED},
		   {"timeout", ST_TIMEOUT}, {"output-limit", ST_OUTPUT_LIMIT}, {"start-error", ST_SETUP_ERROR}};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (x->status && strcmp(x->status, map[i].name) == 0)
			rep->status = map[i].st;
	rep->exit_code = x->exited && WIFEXITED(x->wstatus) ? WEXITSTATUS(x->wstatus) : -1;
	rep->signal = x->exited && WIFSIGNALED(x->wstatus) ? WTERMSIG(x->wstatus) : 0;
	if (rep->status == ST_SETUP_ERROR)
		snprintf(rep->reason, sizeof(rep->reason), "%s", x->error);
}

/* cordon.report/1 with the session's own sections, spliced before the
 * report's closing brace. */
static char *session_report(struct sx *s, struct run_report *rep)
{
	char *base = report_to_json(rep);
	if (!base)
		return NULL;
	char *end = strrchr(base, '}');
	if (!end) {
		free(base);
		return NULL;
	}
	buf b = {0};
	buf_append(&b, base, (size_t)(end - base));
	while (b.len && (b.p[b.len - 1] == '\n' || b.p[b.len - 1] == ' '))
		b.len--;
	/* Not asked for by a request or a timer of ours: the server's
	 * SIGTERM (interrupted), the session's wall time, or its own end. */
	const char *end_reason = s->end_reason ? s->end_reason
				 : rep->status == ST_INTERRUPTED ? "server-stopped"
				 : rep->status == ST_TIMEOUT	  ? "wall-timeout"
								  : "ended";
	buf_printf(&b, ",\n  \"session\": {\"id\": \"%s\", \"end\": \"%s\", \"warm\": %s, ", s->id, end_reason,
		   s->warm ? "true" : "false");
	if (s->warm)
		buf_printf(&b, "\"pool_seconds\": %.6f, ", (double)s->pool_ns / 1e9);
	if (s->npauses || s->pauses_omitted)
		sx_pauses_json(s, &b);
	buf_printf(&b, "\"files\": [%s]},\n  \"execs\": [", s->evidence.p ? s->evidence.p : "");
	size_t k = 0;
	for (size_t i = 0; i < s->nex; i++) {
		if (!s->ex[i].result)
			continue;
		const char *r = s->ex[i].result;
		size_t rl = strlen(r);
		while (rl && (r[rl - 1] == '\n'))
			rl--;
		if (k++)
			buf_append(&b, ",", 1);
		buf_append(&b, "\n    ", 5);
		buf_append(&b, r, rl);
	}
	buf_printf(&b, "\n  ]\n}\n");
	free(base);
	return b.p;
}

/* The session's report, written to its file and sent to the DELETE (or
 * the server's end of a one-shot) waiting for it: once, when it is
 * complete (sx_h_report, before the boundary's teardown), or after the run if
 * that never came. */
void sx_publish(struct sx *s)
{
	if (s->published)
		return;
	s->published = true;
	cordon_error err = {0};
	oneshot_outcome(s, s->rep);
	char *text = session_report(s, s->rep);
	/* A warm session no client took has no report: nothing ran in it
	 * (the server removes its directory). */
	if (text && s->report_path[0] && s->ready && (!s->warm || s->claimed))
		report_write_file(s->report_path, text, &err);
	if (s->end_reply >= 0) {
		int fd = text ? ipc_memfd("cordon-report", text, strlen(text)) : -1;
		const char *j = "{\"body\":\"fd\"}";
		if (fd >= 0)
			ipc_send(s->end_reply, j, strlen(j), &fd, 1, 0);
		else
			sx_reply_error(s->end_reply, 500, "the session's report could not be built");
		sx_close_fd(&fd);
		sx_close_fd(&s->end_reply);
	}
	free(text);
}

void sx_h_report(void *ctx)
{
	struct sx *s = ctx;
	if (s->ready)
		sx_publish(s);
}
