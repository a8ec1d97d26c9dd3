/* cordon mcp: one exec in a session (mcp.h). Reads the exec's NDJSON stream
 * from the server, keeps the first MCP_OUTPUT_KEEP bytes of each stream,
 * relays output as progress notifications when the client asked for them,
 * and kills the exec when its call is cancelled. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base64.h"
#include "error.h"
#include "jsonrpc.h"
#include "mcp.h"

#define PROGRESS_TEXT_MAX 4096
#define EVENT_MAX (32u << 20)

void exec_out_free(struct exec_out *o)
{
	buf_free(&o->out[0]);
	buf_free(&o->out[1]);
	json_free(o->result);
	o->result = NULL;
}

/* notifications/progress: progress counts the output's bytes so far (it
 * only grows, as the specification asks), message is the chunk. */
static void send_progress(struct mcp_call *c, uint64_t total, const char *stream, const char *data, size_t n)
{
	jwriter w = {.compact = true};
	jw_obj_begin(&w);
	jw_key(&w, "progressToken");
	jw_node(&w, c->progress);
	jw_key_uint(&w, "progress", total);
	jw_key(&w, "message");
	buf m = {0};
	buf_printf(&m, "%s: ", stream);
	buf_append(&m, data, n < PROGRESS_TEXT_MAX ? n : PROGRESS_TEXT_MAX);
	jw_strn(&w, m.p ? m.p : "", m.len);
	buf_free(&m);
	jw_obj_end(&w);
	char *params = jw_take(&w);
	char *line = params ? jrpc_notification_line("notifications/progress", params) : NULL;
	if (line && !atomic_load(&c->cancelled))
		mcp_send(line);
	free(line);
	free(params);
}

static int on_event(struct mcp_call *c, struct exec_out *o, const char *line, size_t len, cordon_error *err)
{
	jnode *ev = json_parse(line, len, err);
	if (!ev)
		return cordon_err_wrap(err, "the server's exec stream");
	const jnode *type = json_get(ev, "type");
	const char *t = type && type->type == J_STR ? type->str : "";
	if (strcmp(t, "started") == 0) {
		const jnode *eid = json_get(ev, "exec");
		if (eid && eid->type == J_STR) {
			pthread_mutex_lock(&c->lock);
			snprintf(o->eid, sizeof(o->eid), "%s", eid->str);
			snprintf(c->eid, sizeof(c->eid), "%s", eid->str);
			pthread_mutex_unlock(&c->lock);
			/* a cancel that came before the exec had an id */
			if (atomic_load(&c->cancelled))
				mcp_cancel_exec(c);
		}
	} else if (strcmp(t, "stdout") == 0 || strcmp(t, "stderr") == 0) {
		int i = t[3] == 'e' ? 1 : 0;
		const jnode *d = json_get(ev, "data_b64");
		buf data = {0};
		if (d && d->type == J_STR && b64_decode_buf(d->str, strlen(d->str), &data)) {
			o->bytes[i] += data.len;
			size_t room = o->out[i].len < MCP_OUTPUT_KEEP ? MCP_OUTPUT_KEEP - o->out[i].len : 0;
			if (room)
				buf_append(&o->out[i], data.p, data.len < room ? data.len : room);
			if (c->progress && data.len)
				send_progress(c, o->bytes[0] + o->bytes[1], t, data.p, data.len);
		}
		buf_free(&data);
	} else if (strcmp(t, "result") == 0) {
		json_free(o->result);
		o->result = ev;
		return 0;
	}
	json_free(ev);
	return 0;
}

int mcp_exec(struct mcp_call *c, const char *sid, const char *body, struct exec_out *o, cordon_error *err)
{
	char path[128];
	snprintf(path, sizeof(path), "/v1/sessions/%s/exec", sid);
	pthread_mutex_lock(&c->lock);
	snprintf(c->sid, sizeof(c->sid), "%s", sid);
	pthread_mutex_unlock(&c->lock);
	int status = 0;
	buf in = {0};
	int fd = mh_open(&M.srv, "POST", path, body, strlen(body), &status, &in, err);
	if (fd < 0)
		return -1;
	int rc = 0;
	size_t start = 0;
	for (;;) {
		char *nl;
		while (status == 200 && (nl = memchr(in.p + start, '\n', in.len - start))) {
			if (rc == 0 && on_event(c, o, in.p + start, (size_t)(nl - (in.p + start)), err) < 0)
				rc = -1;
			start = (size_t)(nl - in.p) + 1;
		}
		if (start > 0) {
			memmove(in.p, in.p + start, in.len - start);
			in.len -= start;
			start = 0;
		}
		if (in.len > EVENT_MAX) {
			rc = cordon_err(err, EFBIG, "the server's exec stream: an event over 32 MiB");
			break;
		}
		char tmp[65536];
		ssize_t r = read(fd, tmp, sizeof(tmp));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (buf_append(&in, tmp, (size_t)r) < 0) {
			rc = cordon_oom(err);
			break;
		}
	}
	close(fd);
	pthread_mutex_lock(&c->lock);
	c->eid[0] = '\0';
	pthread_mutex_unlock(&c->lock);
	if (rc == 0 && status != 200) {
		struct http_resp r = {.status = status, .body = in};
		char msg[512];
		buf_append(&in, "", 1);
		r.body = in;
		mh_error_text(&r, msg, sizeof(msg));
		rc = cordon_err(err, EIO, "exec: %s", msg);
	} else if (rc == 0 && !o->result) {
		rc = cordon_err(err, EIO, "exec: the server's stream ended without a result");
	}
	buf_free(&in);
	return rc;
}

void mcp_cancel_exec(struct mcp_call *c)
{
	char path[192];
	pthread_mutex_lock(&c->lock);
	bool have = c->sid[0] && c->eid[0];
	snprintf(path, sizeof(path), "/v1/sessions/%s/exec/%s/signal", c->sid, c->eid);
	pthread_mutex_unlock(&c->lock);
	if (!have)
		return; /* not started yet: the call looks at its flag before it starts one */
	static const char body[] = "{\"signal\":\"KILL\"}";
	struct http_resp r;
	cordon_error err;
	if (mh_request(&M.srv, "POST", path, body, sizeof(body) - 1, &r, &err) < 0)
		fprintf(stderr, "cordon mcp: cancel: %s\n", err.msg);
	buf_free(&r.body);
}

/* "exit" is "exit-nonzero" and "killed" "signaled", as cordon run names them. */
static const char *run_status(const char *s)
{
	if (strcmp(s, "exit") == 0)
		return "exit-nonzero";
	if (strcmp(s, "killed") == 0)
		return "signaled";
	return s;
}

void mcp_write_denials(jwriter *w, const jnode *denials)
{
	jw_arr_begin(w);
	for (size_t i = 0; denials && denials->type == J_ARR && i < denials->n; i++) {
		const jnode *d = denials->items[i], *kind = json_get(d, "kind"), *target = json_get(d, "target"),
			    *count = json_get(d, "count");
		const char *k = kind && kind->type == J_STR ? kind->str : "?";
		const char *t = target && target->type == J_STR ? target->str : "?";
		uint64_t n = count && count->type == J_NUM && count->num > 1 ? (uint64_t)count->num : 1;
		char line[1024];
		if (n > 1)
			snprintf(line, sizeof(line), "denied %s: %s (%" PRIu64 " times)", k, t, n);
		else
			snprintf(line, sizeof(line), "denied %s: %s", k, t);
		jw_str(w, line);
	}
	jw_arr_end(w);
}

void mcp_write_exec(jwriter *w, const struct exec_out *o, const jnode *denials)
{
	const jnode *r = o->result, *st = json_get(r, "status"), *code = json_get(r, "exit_code"),
		    *sig = json_get(r, "signal"), *error = json_get(r, "error");
	jw_key_str(w, "status", st && st->type == J_STR ? run_status(st->str) : "unknown");
	jw_key(w, "exit_code");
	if (code && code->type == J_NUM)
		jw_int(w, (int64_t)code->num);
	else
		jw_null(w);
	jw_key_str(w, "signal", sig && sig->type == J_STR ? sig->str : NULL);
	if (error && error->type == J_STR)
		jw_key_str(w, "error", error->str);
	static const char *const names[2] = {"stdout", "stderr"};
	for (int i = 0; i < 2; i++) {
		jw_key(w, names[i]);
		jw_strn(w, o->out[i].p ? o->out[i].p : "", o->out[i].len);
		char k[32];
		snprintf(k, sizeof(k), "%s_bytes", names[i]);
		jw_key_uint(w, k, o->bytes[i]);
		snprintf(k, sizeof(k), "%s_truncated", names[i]);
		jw_key_bool(w, k, o->bytes[i] > o->out[i].len);
	}
	jw_key(w, "denials");
	mcp_write_denials(w, denials ? denials : json_get(r, "denials"));
}
