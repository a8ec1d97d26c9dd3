/* cordon mcp's tools (mcp.h, mcp-schemas.h): each turns its arguments into
 * calls of the server's API (docs/api.md) and its answers into a result
 * whose structuredContent and text content carry the same JSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base64.h"
#include "error.h"
#include "jsonrpc.h"
#include "mcp-schemas.h"
#include "mcp.h"

#define CANCELLED (-2)

const char *mcp_tools_list_json(void) { return MCP_TOOLS_JSON; }

static int bad_arg(cordon_error *err, const char *name, const char *what)
{
	return cordon_err(err, EINVAL, "argument \"%s\": %s", name, what);
}

/* An optional argument of one type (NULL when absent); -1 when wrong. */
static int arg(const jnode *args, const char *name, jtype t, bool required, const jnode **out, cordon_error *err)
{
	*out = json_get(args, name);
	if (!*out)
		return required ? bad_arg(err, name, "required") : 0;
	if ((*out)->type != t)
		return cordon_err(err, EINVAL, "argument \"%s\": %s expected, got %s", name, json_type_name(t),
				  json_type_name((*out)->type));
	return 0;
}

/* --review: a policy that would let the changes reach the workspace
 * (another workspace_mode: overlay applies them at the end, direct at
 * once; an allow_weaker "workspace": a fall-back to direct where no
 * change set can be had) is refused, never obeyed. */
static int review_held(const jnode *given, cordon_error *err)
{
	const jnode *wm = json_get(json_get(given, "filesystem"), "workspace_mode"),
		    *aw = json_get(json_get(given, "enforcement"), "allow_weaker");
	if (wm && !(wm->type == J_STR && strcmp(wm->str, "review") == 0))
		return cordon_err(err, EPERM, "policy filesystem.workspace_mode %s: cordon mcp --review keeps every change for the user, never applied (only \"review\")",
				  wm->type == J_STR ? wm->str : "(not a string)");
	for (size_t i = 0; aw && aw->type == J_ARR && i < aw->n; i++)
		if (aw->items[i]->type == J_STR && strcmp(aw->items[i]->str, "workspace") == 0)
			return cordon_err(err, EPERM, "policy enforcement.allow_weaker \"workspace\": cordon mcp --review never falls back to a direct workspace");
	return 0;
}

/* The policy of a request: the call's, else --policy FILE's; with
 * --workspace DIR, that directory is writable and the working directory. */
static int write_policy(jwriter *w, const jnode *given, cordon_error *err)
{
	jnode *file = NULL;
	if (!given && M.policy_json)
		given = file = json_parse(M.policy_json, strlen(M.policy_json), err);
	if (!given && M.policy_json)
		return -1;
	if (M.review && review_held(given, err) < 0) {
		json_free(file);
		return -1;
	}
	if (!M.workspace[0]) {
		if (given) {
			jw_key(w, "policy");
			jw_node(w, given);
		}
		json_free(file);
		return 0;
	}
	jw_key(w, "policy");
	jw_obj_begin(w);
	const jnode *fs = json_get(given, "filesystem"), *wr = json_get(fs, "write");
	for (size_t i = 0; given && i < given->n; i++)
		if (strcmp(given->keys[i], "filesystem") != 0) {
			jw_key(w, given->keys[i]);
			jw_node(w, given->items[i]);
		}
	jw_key(w, "filesystem");
	jw_obj_begin(w);
	for (size_t i = 0; fs && fs->type == J_OBJ && i < fs->n; i++)
		if (strcmp(fs->keys[i], "write") != 0) {
			jw_key(w, fs->keys[i]);
			jw_node(w, fs->items[i]);
		}
	/* --review: the changes are kept for the user, never applied. */
	if (M.review && !json_get(fs, "workspace_mode"))
		jw_key_str(w, "workspace_mode", "review");
	jw_key(w, "write");
	jw_arr_begin(w);
	for (size_t i = 0; wr && wr->type == J_ARR && i < wr->n; i++)
		jw_node(w, wr->items[i]);
	jw_str(w, M.workspace);
	jw_arr_end(w);
	jw_obj_end(w);
	if (!json_get(given, "cwd"))
		jw_key_str(w, "cwd", M.workspace);
	jw_obj_end(w);
	json_free(file);
	return 0;
}

static int http_json_n(const char *method, const char *path, const char *body, size_t blen, int want, jnode **out,
		       cordon_error *err)
{
	struct http_resp r;
	if (mh_request(&M.srv, method, path, body, blen, &r, err) < 0)
		return -1;
	if (r.status != want) {
		char msg[1024];
		mh_error_text(&r, msg, sizeof(msg));
		buf_free(&r.body);
		return cordon_err(err, EIO, "%s", msg);
	}
	*out = json_parse(r.body.p ? r.body.p : "", r.body.len, err);
	buf_free(&r.body);
	return *out ? 0 : cordon_err_wrap(err, "the server's answer to %s %s", method, path);
}

static int http_json(const char *method, const char *path, const char *body, int want, jnode **out,
		     cordon_error *err)
{
	return http_json_n(method, path, body, body ? strlen(body) : 0, want, out, err);
}

static int open_session(const jnode *args, char *sid, size_t n, jnode **answer, cordon_error *err)
{
	const jnode *policy, *timeout, *idle;
	if (arg(args, "policy", J_OBJ, false, &policy, err) < 0 || arg(args, "timeout", J_STR, false, &timeout, err) < 0 ||
	    arg(args, "idle_timeout", J_STR, false, &idle, err) < 0)
		return -1;
	jwriter w = {.compact = true};
	jw_obj_begin(&w);
	if (write_policy(&w, policy, err) < 0) {
		buf_free(&w.out);
		return -1;
	}
	if (timeout)
		jw_key_str(&w, "timeout", timeout->str);
	if (idle)
		jw_key_str(&w, "idle_timeout", idle->str);
	jw_obj_end(&w);
	char *body = jw_take(&w);
	if (!body)
		return cordon_oom(err);
	jnode *a = NULL;
	int rc = http_json("POST", "/v1/sessions", body, 201, &a, err);
	free(body);
	if (rc < 0)
		return cordon_err_wrap(err, "session");
	const jnode *id = json_get(a, "id");
	if (!id || id->type != J_STR) {
		json_free(a);
		return cordon_err(err, EPROTO, "session: the server's answer has no id");
	}
	snprintf(sid, n, "%s", id->str);
	*answer = a;
	return 0;
}

static int delete_session(const char *sid, jnode **report, cordon_error *err)
{
	char path[128];
	snprintf(path, sizeof(path), "/v1/sessions/%s", sid);
	return http_json("DELETE", path, NULL, 200, report, err);
}

/* The exec request of run and session_exec. */
static char *exec_body(const jnode *args, bool session, cordon_error *err)
{
	const jnode *cmd, *argv, *in, *timeout, *cwd = NULL, *env = NULL;
	if (arg(args, "command", J_STR, false, &cmd, err) < 0 || arg(args, "argv", J_ARR, false, &argv, err) < 0 ||
	    arg(args, "stdin", J_STR, false, &in, err) < 0 || arg(args, "timeout", J_STR, false, &timeout, err) < 0 ||
	    (session && (arg(args, "cwd", J_STR, false, &cwd, err) < 0 || arg(args, "env", J_OBJ, false, &env, err) < 0)))
		return NULL;
	if (!cmd == !argv) {
		bad_arg(err, cmd ? "argv" : "command", "give command (a shell line) or argv (a list), one of them");
		return NULL;
	}
	for (size_t i = 0; argv && i < argv->n; i++)
		if (argv->items[i]->type != J_STR) {
			bad_arg(err, "argv", "strings expected");
			return NULL;
		}
	if (argv && argv->n == 0) {
		bad_arg(err, "argv", "empty");
		return NULL;
	}
	jwriter w = {.compact = true};
	jw_obj_begin(&w);
	jw_key(&w, "argv");
	if (cmd) {
		const char *sh[] = {"/bin/sh", "-c", cmd->str};
		jw_str_array(&w, sh, 3);
	} else {
		jw_node(&w, argv);
	}
	if (in)
		jw_key_str(&w, "stdin", in->str);
	if (timeout)
		jw_key_str(&w, "timeout", timeout->str);
	if (cwd)
		jw_key_str(&w, "cwd", cwd->str);
	if (env) {
		jw_key(&w, "env");
		jw_node(&w, env);
	}
	jw_obj_end(&w);
	char *body = jw_take(&w);
	if (!body)
		cordon_oom(err);
	return body;
}

/* The report's change set when it was not applied (review mode: kept for
 * the user; an overlay whose apply failed): where it is and why, so the
 * agent can tell its user. Nothing when it was applied or in direct mode. */
static void write_change_set(jwriter *w, const jnode *report)
{
	const jnode *ch = json_get(report, "changes"), *st = json_get(ch, "state"), *dir = json_get(ch, "dir"),
		    *why = json_get(ch, "reason"), *outs = json_get(report, "outputs");
	if (!ch || ch->type != J_OBJ || !dir || dir->type != J_STR)
		return;
	/* A change set in the session's own directory (its fresh workspace's,
	 * without --workspace) goes with the session, which the private
	 * server keeps for no one (--keep-sessions 0): never point there. */
	size_t pl = strlen(M.private_sessions);
	bool there = !(pl && strncmp(dir->str, M.private_sessions, pl) == 0);
	jw_key(w, "change_set");
	jw_obj_begin(w);
	jw_key_str(w, "state", !there ? "discarded" : st && st->type == J_STR ? st->str : "unknown");
	jw_key_str(w, "dir", there ? dir->str : NULL);
	jw_key_str(w, "reason", !there ? "removed with the session's own fresh workspace, which ended with it (cordon mcp --workspace DIR --review keeps the changes made to DIR)"
			   : why && why->type == J_STR ? why->str : NULL);
	jw_key_uint(w, "entries", outs && outs->type == J_ARR ? outs->n : 0);
	jw_obj_end(w);
}

static int tool_run(struct mcp_call *c, const jnode *args, jwriter *w, cordon_error *err)
{
	const jnode *unused;
	if (arg(args, "policy", J_OBJ, false, &unused, err) < 0)
		return -1;
	char *body = exec_body(args, false, err);
	if (!body)
		return -1;
	/* The session's own timeout is not the command's: only the policy's. */
	jnode *answer = NULL, *report = NULL;
	const jnode *policy = json_get(args, "policy");
	char sid[64];
	int rc;
	jnode wrap = {.type = J_OBJ, .n = policy ? 1 : 0, .items = (jnode *[]){(jnode *)policy},
		      .keys = (char *[]){"policy"}};
	rc = open_session(&wrap, sid, sizeof(sid), &answer, err);
	json_free(answer);
	if (rc < 0) {
		free(body);
		return -1;
	}
	struct exec_out o = {0};
	rc = atomic_load(&c->cancelled) ? CANCELLED : mcp_exec(c, sid, body, &o, err);
	free(body);
	cordon_error derr;
	int drc = delete_session(sid, &report, &derr);
	if (rc == 0 && atomic_load(&c->cancelled))
		rc = CANCELLED;
	if (rc == 0) {
		jw_obj_begin(w);
		mcp_write_exec(w, &o, drc == 0 ? json_get(report, "denials") : NULL);
		if (drc == 0) {
			const jnode *v = json_get(report, "verdicts"), *st = json_get(report, "status");
			if (v) {
				jw_key(w, "verdicts");
				jw_node(w, v);
			}
			if (st && st->type == J_STR)
				jw_key_str(w, "report_status", st->str);
			write_change_set(w, report);
		}
		jw_obj_end(w);
	}
	if (drc < 0)
		fprintf(stderr, "cordon mcp: run: closing its session %s: %s\n", sid, derr.msg);
	exec_out_free(&o);
	json_free(report);
	return rc;
}

#define ENDED_TEXT "session %s had already ended by itself (its idle_timeout or timeout): open a new one (session_open)"

/* A session of this server's, named by the call's "session". */
static int known_session(const jnode *args, const char **sid, cordon_error *err)
{
	const jnode *s = NULL;
	if (arg(args, "session", J_STR, true, &s, err) < 0 || !s)
		return -1;
	pthread_mutex_lock(&M.lock);
	bool ok = strv_contains(&M.sessions, s->str), ended = !ok && strv_contains(&M.ended, s->str);
	pthread_mutex_unlock(&M.lock);
	if (ended)
		return cordon_err(err, ENOENT, ENDED_TEXT, s->str);
	if (!ok)
		return cordon_err(err, ENOENT, "no open session \"%s\" (session_open gives one)", s->str);
	*sid = s->str;
	return 0;
}

static void forget_session(const char *sid)
{
	pthread_mutex_lock(&M.lock);
	for (size_t i = 0; i < M.sessions.n; i++)
		if (strcmp(M.sessions.v[i], sid) == 0) {
			free(M.sessions.v[i]);
			M.sessions.v[i] = M.sessions.v[--M.sessions.n];
			M.sessions.v[M.sessions.n] = NULL;
			break;
		}
	pthread_mutex_unlock(&M.lock);
}

/* Has the server ended the session by itself (its idle_timeout, its
 * timeout, a kill)? 404 or 410, or a kept one's "state": "ended". */
static bool session_gone(const char *sid)
{
	char path[128];
	snprintf(path, sizeof(path), "/v1/sessions/%s", sid);
	struct http_resp r;
	cordon_error e;
	if (mh_request(&M.srv, "GET", path, NULL, 0, &r, &e) < 0)
		return false;
	bool gone = r.status == 404 || r.status == 410;
	if (r.status == 200) {
		jnode *j = json_parse(r.body.p ? r.body.p : "", r.body.len, &e);
		const jnode *st = json_get(j, "state");
		gone = st && st->type == J_STR && strcmp(st->str, "ended") == 0;
		json_free(j);
	}
	buf_free(&r.body);
	return gone;
}

/* A session the server ended by itself leaves the bound; a later call on
 * it is told so (the last MCP_ENDED_KEEP of them are remembered). */
static void forget_ended(const char *sid)
{
	forget_session(sid);
	pthread_mutex_lock(&M.lock);
	if (!strv_contains(&M.ended, sid)) {
		if (M.ended.n >= MCP_ENDED_KEEP) {
			free(M.ended.v[0]);
			memmove(M.ended.v, M.ended.v + 1, (M.ended.n - 1) * sizeof(M.ended.v[0]));
			M.ended.v[--M.ended.n] = NULL;
		}
		(void)strv_push(&M.ended, sid);
	}
	pthread_mutex_unlock(&M.lock);
}

/* The sessions the server has ended by itself leave the bound. */
static void forget_ended_sessions(void)
{
	strv ids = {0};
	pthread_mutex_lock(&M.lock);
	for (size_t i = 0; i < M.sessions.n; i++)
		(void)strv_push(&ids, M.sessions.v[i]);
	pthread_mutex_unlock(&M.lock);
	for (size_t i = 0; i < ids.n; i++)
		if (session_gone(ids.v[i]))
			forget_ended(ids.v[i]);
	strv_free(&ids);
}

/* A call on a session failed: if the server ended the session by itself,
 * say so (and free its place) rather than the server's bare answer. */
static bool session_ended(const char *sid, const char *what, cordon_error *err)
{
	char id[64];
	snprintf(id, sizeof(id), "%s", sid);
	if (!session_gone(id))
		return false;
	forget_ended(id);
	cordon_err(err, ENOENT, "%s: " ENDED_TEXT, what, id);
	return true;
}

static int tool_session_open(struct mcp_call *c, const jnode *args, jwriter *w, cordon_error *err)
{
	/* The bound's check and the count are one step: calls sent at once
	 * each take a place (opening) before any of them is open. */
	bool full = true;
	for (int pass = 0; pass < 2 && full; pass++) {
		/* Full: a session ended by itself may hold a place. */
		if (pass)
			forget_ended_sessions();
		pthread_mutex_lock(&M.lock);
		full = (int)M.sessions.n + M.opening >= M.max_sessions;
		if (!full)
			M.opening++;
		pthread_mutex_unlock(&M.lock);
	}
	if (full)
		return cordon_err(err, EBUSY, "at most %d sessions open at once: close one first (session_close)",
				  M.max_sessions);
	char sid[64];
	jnode *a = NULL;
	int rc = open_session(args, sid, sizeof(sid), &a, err);
	bool cancelled = rc == 0 && atomic_load(&c->cancelled);
	pthread_mutex_lock(&M.lock);
	M.opening--;
	if (rc == 0 && !cancelled)
		strv_push(&M.sessions, sid);
	pthread_mutex_unlock(&M.lock);
	if (rc < 0)
		return -1;
	if (cancelled) {
		jnode *rep = NULL;
		cordon_error e2;
		delete_session(sid, &rep, &e2);
		json_free(rep);
		json_free(a);
		return CANCELLED;
	}
	const jnode *ws = json_get(a, "workspace"), *cwd = json_get(a, "cwd");
	jw_obj_begin(w);
	jw_key_str(w, "session", sid);
	if (ws && ws->type == J_STR)
		jw_key_str(w, "workspace", ws->str);
	if (cwd && cwd->type == J_STR)
		jw_key_str(w, "cwd", cwd->str);
	jw_obj_end(w);
	json_free(a);
	return 0;
}

static int tool_session_exec(struct mcp_call *c, const jnode *args, jwriter *w, cordon_error *err)
{
	const char *sid = NULL;
	if (known_session(args, &sid, err) < 0)
		return -1;
	char *body = exec_body(args, true, err);
	if (!body)
		return -1;
	struct exec_out o = {0};
	int rc = mcp_exec(c, sid, body, &o, err);
	free(body);
	if (rc == 0 && atomic_load(&c->cancelled))
		rc = CANCELLED;
	if (rc == -1)
		session_ended(sid, "session_exec", err);
	if (rc == 0) {
		jw_obj_begin(w);
		mcp_write_exec(w, &o, NULL);
		jw_obj_end(w);
	}
	exec_out_free(&o);
	return rc;
}

static int tool_session_close(struct mcp_call *c, const jnode *args, jwriter *w, cordon_error *err)
{
	(void)c;
	const char *sid = NULL;
	jnode *rep = NULL;
	if (known_session(args, &sid, err) < 0)
		return -1;
	char id[64];
	snprintf(id, sizeof(id), "%s", sid);
	if (delete_session(id, &rep, err) < 0) {
		if (!session_gone(id))
			return cordon_err_wrap(err, "session_close");
		forget_ended(id);
		return cordon_err(err, ENOENT, "session_close: session %s had already ended by itself (its idle_timeout or timeout) and its report is not kept",
				  id);
	}
	forget_session(id);
	const jnode *st = json_get(rep, "status"), *s = json_get(rep, "session"), *end = json_get(s, "end"),
		    *outs = json_get(rep, "outputs"), *execs = json_get(rep, "execs"), *v = json_get(rep, "verdicts");
	jw_obj_begin(w);
	jw_key_str(w, "session", id);
	jw_key_str(w, "status", st && st->type == J_STR ? st->str : "unknown");
	if (end && end->type == J_STR)
		jw_key_str(w, "end", end->str);
	jw_key(w, "denials");
	mcp_write_denials(w, json_get(rep, "denials"));
	jw_key(w, "changes");
	jw_arr_begin(w);
	for (size_t i = 0; outs && outs->type == J_ARR && i < outs->n; i++) {
		const jnode *p = json_get(outs->items[i], "path"), *b = json_get(outs->items[i], "bytes");
		jw_obj_begin(w);
		jw_key_str(w, "path", p && p->type == J_STR ? p->str : "?");
		if (b && b->type == J_NUM)
			jw_key_int(w, "bytes", (int64_t)b->num);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_key_uint(w, "execs", execs && execs->type == J_ARR ? execs->n : 0);
	if (v) {
		jw_key(w, "verdicts");
		jw_node(w, v);
	}
	write_change_set(w, rep);
	jw_obj_end(w);
	json_free(rep);
	return 0;
}

/* /v1/sessions/SID/files[/list]?path=P */
static int files_path(buf *p, const char *sid, const char *what, const char *path, cordon_error *err)
{
	if (buf_printf(p, "/v1/sessions/%s/%s?path=", sid, what) < 0 || mh_escape(p, path) < 0)
		return cordon_oom(err);
	return 0;
}

static int tool_file_write(struct mcp_call *c, const jnode *args, jwriter *w, cordon_error *err)
{
	(void)c;
	const char *sid = NULL;
	const jnode *path, *text, *b64;
	if (known_session(args, &sid, err) < 0 || arg(args, "path", J_STR, true, &path, err) < 0 ||
	    arg(args, "content", J_STR, false, &text, err) < 0 || arg(args, "content_b64", J_STR, false, &b64, err) < 0)
		return -1;
	if (!text == !b64)
		return bad_arg(err, "content", "give content (text) or content_b64 (bytes), one of them");
	buf data = {0}, p = {0};
	if (b64 && !b64_decode_buf(b64->str, strlen(b64->str), &data))
		return bad_arg(err, "content_b64", "not base64");
	jnode *a = NULL;
	int rc = files_path(&p, sid, "files", path->str, err);
	if (rc == 0)
		rc = b64 ? http_json_n("PUT", p.p, data.p ? data.p : "", data.len, 200, &a, err)
			 : http_json("PUT", p.p, text->str, 200, &a, err);
	buf_free(&p);
	buf_free(&data);
	if (rc < 0)
		return session_ended(sid, "file_write", err) ? -1 : cordon_err_wrap(err, "file_write %s", path->str);
	const jnode *bytes = json_get(a, "bytes"), *sha = json_get(a, "sha256");
	jw_obj_begin(w);
	jw_key_str(w, "path", path->str);
	if (bytes && bytes->type == J_NUM)
		jw_key_int(w, "bytes", (int64_t)bytes->num);
	if (sha && sha->type == J_STR)
		jw_key_str(w, "sha256", sha->str);
	jw_obj_end(w);
	json_free(a);
	return 0;
}

static int tool_file_read(struct mcp_call *c, const jnode *args, jwriter *w, cordon_error *err)
{
	(void)c;
	const char *sid = NULL;
	const jnode *path;
	if (known_session(args, &sid, err) < 0 || arg(args, "path", J_STR, true, &path, err) < 0)
		return -1;
	buf p = {0};
	struct http_resp r = {0};
	if (files_path(&p, sid, "files", path->str, err) < 0)
		return -1;
	int rc = mh_request(&M.srv, "GET", p.p, NULL, 0, &r, err);
	buf_free(&p);
	if (rc < 0)
		return -1;
	if (r.status != 200) {
		char msg[1024];
		mh_error_text(&r, msg, sizeof(msg));
		buf_free(&r.body);
		if (session_ended(sid, "file_read", err))
			return -1;
		return cordon_err(err, EIO, "file_read %s: %s", path->str, msg);
	}
	size_t keep = r.body.len < MCP_FILE_KEEP ? r.body.len : MCP_FILE_KEEP;
	jw_obj_begin(w);
	jw_key_str(w, "path", path->str);
	if (json_utf8_valid(r.body.p ? r.body.p : "", keep) && !memchr(r.body.p ? r.body.p : "", 0, keep)) {
		jw_key(w, "content");
		jw_strn(w, r.body.p ? r.body.p : "", keep);
	} else {
		buf b = {0};
		b64_encode(&b, r.body.p, keep);
		jw_key(w, "content_b64");
		jw_strn(w, b.p ? b.p : "", b.len);
		buf_free(&b);
	}
	jw_key_uint(w, "bytes", r.body.len);
	jw_key_bool(w, "truncated", keep < r.body.len);
	jw_obj_end(w);
	buf_free(&r.body);
	return 0;
}

static int tool_file_list(struct mcp_call *c, const jnode *args, jwriter *w, cordon_error *err)
{
	(void)c;
	const char *sid = NULL;
	const jnode *path;
	if (known_session(args, &sid, err) < 0 || arg(args, "path", J_STR, false, &path, err) < 0)
		return -1;
	const char *dir = path ? path->str : ".";
	buf p = {0};
	jnode *a = NULL;
	int rc = files_path(&p, sid, "files/list", dir, err);
	if (rc == 0)
		rc = http_json("GET", p.p, NULL, 200, &a, err);
	buf_free(&p);
	if (rc < 0)
		return session_ended(sid, "file_list", err) ? -1 : cordon_err_wrap(err, "file_list %s", dir);
	const jnode *e = json_get(a, "entries");
	jw_obj_begin(w);
	jw_key_str(w, "path", dir);
	jw_key(w, "entries");
	if (e && e->type == J_ARR)
		jw_node(w, e);
	else
		jw_raw(w, "[]");
	jw_obj_end(w);
	json_free(a);
	return 0;
}

/* The server's answer's keys, those present, copied into the result. */
static void keep_keys(jwriter *w, const jnode *a, const char *const *keys, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		const jnode *v = json_get(a, keys[k]);
		if (v) {
			jw_key(w, keys[k]);
			jw_node(w, v);
		}
	}
}

/* changes: the session's change set as it is now (GET .../changes), with
 * the diff of its text files: what would reach the host; with snapshot,
 * that snapshot's (GET .../snapshots/{sid}/changes). */
static int tool_changes(struct mcp_call *c, const jnode *args, jwriter *w, cordon_error *err)
{
	(void)c;
	const char *sid = NULL;
	const jnode *snap = NULL;
	if (known_session(args, &sid, err) < 0 || arg(args, "snapshot", J_STR, false, &snap, err) < 0)
		return -1;
	if (snap && (strlen(snap->str) != 18 || strncmp(snap->str, "p-", 2) != 0 ||
		     strspn(snap->str + 2, "0123456789abcdef") != 16))
		return cordon_err(err, EINVAL, "snapshot: an id session_snapshot returned (\"p-\" and 16 hex digits) is expected");
	char path[160];
	if (snap)
		snprintf(path, sizeof(path), "/v1/sessions/%s/snapshots/%s/changes", sid, snap->str);
	else
		snprintf(path, sizeof(path), "/v1/sessions/%s/changes", sid);
	jnode *a = NULL;
	if (http_json("GET", path, NULL, 200, &a, err) < 0)
		return session_ended(sid, "changes", err) ? -1 : cordon_err_wrap(err, "changes");
	static const char *const keep[] = {"truncated", "refused", "protected", "diff", "diff_bytes", "diff_truncated", "hosts"};
	const jnode *ch = json_get(a, "changes");
	jw_obj_begin(w);
	jw_key_str(w, "session", sid);
	if (snap)
		jw_key_str(w, "snapshot", snap->str);
	jw_key(w, "changes");
	jw_arr_begin(w);
	for (size_t i = 0; ch && ch->type == J_ARR && i < ch->n; i++) {
		const jnode *e = ch->items[i];
		jw_obj_begin(w);
		static const char *const f[] = {"path", "change", "type", "bytes", "sha256"};
		for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
			const jnode *v = json_get(e, f[k]);
			if (v) {
				jw_key(w, f[k]);
				jw_node(w, v);
			}
		}
		jw_obj_end(w);
	}
	jw_arr_end(w);
	keep_keys(w, a, keep, sizeof(keep) / sizeof(keep[0]));
	jw_obj_end(w);
	json_free(a);
	return 0;
}

/* session_snapshot, session_restore, session_fork (docs/api.md, Snapshots):
 * the server's answer, with the session named. */
static int tool_session_snapshot(struct mcp_call *c, const jnode *args, jwriter *w, cordon_error *err)
{
	(void)c;
	const char *sid = NULL;
	if (known_session(args, &sid, err) < 0)
		return -1;
	char path[128];
	snprintf(path, sizeof(path), "/v1/sessions/%s/snapshots", sid);
	jnode *a = NULL;
	if (http_json("POST", path, NULL, 201, &a, err) < 0)
		return cordon_err_wrap(err, "session_snapshot");
	static const char *const keep[] = {"snapshot", "bytes", "files", "not_covered"};
	jw_obj_begin(w);
	jw_key_str(w, "session", sid);
	keep_keys(w, a, keep, sizeof(keep) / sizeof(keep[0]));
	jw_obj_end(w);
	json_free(a);
	return 0;
}

static int tool_session_restore(struct mcp_call *c, const jnode *args, jwriter *w, cordon_error *err)
{
	(void)c;
	const char *sid = NULL;
	const jnode *snap = NULL;
	if (known_session(args, &sid, err) < 0 || arg(args, "snapshot", J_STR, true, &snap, err) < 0)
		return -1;
	char path[128];
	snprintf(path, sizeof(path), "/v1/sessions/%s/restore", sid);
	jwriter b = {.compact = true};
	jw_obj_begin(&b);
	jw_key_str(&b, "snapshot", snap->str);
	jw_obj_end(&b);
	char *body = jw_take(&b);
	if (!body)
		return cordon_oom(err);
	jnode *a = NULL;
	int rc = http_json("POST", path, body, 200, &a, err);
	free(body);
	if (rc < 0)
		return cordon_err_wrap(err, "session_restore");
	jw_obj_begin(w);
	jw_key_str(w, "session", sid);
	jw_key_str(w, "restored", snap->str);
	jw_obj_end(w);
	json_free(a);
	return 0;
}

/* session_snapshot_changeset: POST .../snapshots/{sid}/changeset. */
static int tool_session_snapshot_changeset(struct mcp_call *c, const jnode *args, jwriter *w, cordon_error *err)
{
	(void)c;
	const char *sid = NULL;
	const jnode *snap = NULL;
	if (known_session(args, &sid, err) < 0 || arg(args, "snapshot", J_STR, true, &snap, err) < 0)
		return -1;
	if (strlen(snap->str) != 18 || strncmp(snap->str, "p-", 2) != 0 || strspn(snap->str + 2, "0123456789abcdef") != 16)
		return cordon_err(err, EINVAL, "snapshot: an id session_snapshot returned (\"p-\" and 16 hex digits) is expected");
	char path[128];
	snprintf(path, sizeof(path), "/v1/sessions/%s/snapshots/%s/changeset", sid, snap->str);
	jnode *a = NULL;
	if (http_json("POST", path, NULL, 201, &a, err) < 0)
		return cordon_err_wrap(err, "session_snapshot_changeset");
	jw_obj_begin(w);
	jw_key_str(w, "session", sid);
	static const char *const keep[] = {"snapshot", "dir", "hosts", "files", "bytes"};
	keep_keys(w, a, keep, sizeof(keep) / sizeof(keep[0]));
	jw_obj_end(w);
	json_free(a);
	return 0;
}

static int tool_session_fork(struct mcp_call *c, const jnode *args, jwriter *w, cordon_error *err)
{
	(void)c;
	const char *sid = NULL;
	const jnode *snap = NULL;
	if (known_session(args, &sid, err) < 0 || arg(args, "snapshot", J_STR, false, &snap, err) < 0)
		return -1;
	pthread_mutex_lock(&M.lock);
	bool full = (int)M.sessions.n >= M.max_sessions;
	pthread_mutex_unlock(&M.lock);
	if (full)
		return cordon_err(err, EBUSY, "at most %d sessions open at once: close one first (session_close)",
				  M.max_sessions);
	char path[128];
	snprintf(path, sizeof(path), "/v1/sessions/%s/fork", sid);
	jwriter b = {.compact = true};
	jw_obj_begin(&b);
	if (snap)
		jw_key_str(&b, "snapshot", snap->str);
	jw_obj_end(&b);
	char *body = jw_take(&b);
	if (!body)
		return cordon_oom(err);
	jnode *a = NULL;
	int rc = http_json("POST", path, body, 201, &a, err);
	free(body);
	if (rc < 0)
		return cordon_err_wrap(err, "session_fork");
	const jnode *id = json_get(a, "id"), *ws = json_get(a, "workspace"), *cwd = json_get(a, "cwd");
	if (!id || id->type != J_STR) {
		json_free(a);
		return cordon_err(err, EPROTO, "session_fork: the server's answer has no id");
	}
	pthread_mutex_lock(&M.lock);
	strv_push(&M.sessions, id->str);
	pthread_mutex_unlock(&M.lock);
	jw_obj_begin(w);
	jw_key_str(w, "session", id->str);
	jw_key_str(w, "forked_from", sid);
	if (ws && ws->type == J_STR)
		jw_key_str(w, "workspace", ws->str);
	if (cwd && cwd->type == J_STR)
		jw_key_str(w, "cwd", cwd->str);
	jw_obj_end(w);
	json_free(a);
	return 0;
}

typedef int (*tool_fn)(struct mcp_call *c, const jnode *args, jwriter *w, cordon_error *err);
static const struct {
	const char *name;
	tool_fn fn;
} tools[] = {
	{"run", tool_run},
	{"session_open", tool_session_open},
	{"session_exec", tool_session_exec},
	{"file_write", tool_file_write},
	{"file_read", tool_file_read},
	{"file_list", tool_file_list},
	{"session_close", tool_session_close},
	{"changes", tool_changes},
	{"session_snapshot", tool_session_snapshot},
	{"session_restore", tool_session_restore},
	{"session_fork", tool_session_fork},
	{"session_snapshot_changeset", tool_session_snapshot_changeset},
};

static void answer(struct mcp_call *c, char *result)
{
	char *line = result ? jrpc_result_line(c->id, result) : NULL;
	if (!line)
		line = jrpc_error_line(c->id, JRPC_INTERNAL_ERROR, "out of memory");
	if (line && !atomic_load(&c->cancelled))
		mcp_send(line);
	free(line);
	free(result);
}

/* {"content": [{"type": "text", "text": TEXT}], "structuredContent"?, "isError"} */
static char *tool_result(const char *structured, const char *text, bool is_error)
{
	jwriter w = {.compact = true};
	jw_obj_begin(&w);
	jw_key(&w, "content");
	jw_arr_begin(&w);
	jw_obj_begin(&w);
	jw_key_str(&w, "type", "text");
	jw_key(&w, "text");
	size_t n = strlen(text);
	jw_strn(&w, text, n > 0 && text[n - 1] == '\n' ? n - 1 : n);
	jw_obj_end(&w);
	jw_arr_end(&w);
	if (structured) {
		jw_key(&w, "structuredContent");
		jw_raw(&w, structured);
	}
	jw_key_bool(&w, "isError", is_error);
	jw_obj_end(&w);
	return jw_take(&w);
}

void mcp_tools_call(struct mcp_call *c)
{
	const jnode *params = json_get(c->root, "params"), *name = json_get(params, "name"),
		    *args = json_get(params, "arguments");
	if (!name || name->type != J_STR || (args && args->type != J_OBJ)) {
		char *line = jrpc_error_line(c->id, JRPC_INVALID_PARAMS,
					     "tools/call: params.name (a string) and params.arguments (an object) expected");
		if (line)
			mcp_send(line);
		free(line);
		return;
	}
	tool_fn fn = NULL;
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (strcmp(tools[i].name, name->str) == 0)
			fn = tools[i].fn;
	if (!fn) {
		char msg[256];
		snprintf(msg, sizeof(msg), "unknown tool \"%.100s\" (tools/list has them)", name->str);
		char *line = jrpc_error_line(c->id, JRPC_INVALID_PARAMS, msg);
		if (line)
			mcp_send(line);
		free(line);
		return;
	}
	static const jnode none = {.type = J_OBJ};
	jwriter w = {.compact = true};
	cordon_error err = {0};
	int rc = fn(c, args ? args : &none, &w, &err);
	if (rc == CANCELLED) {
		buf_free(&w.out);
		return; /* a cancelled request gets no answer */
	}
	if (rc < 0) {
		buf_free(&w.out);
		char text[sizeof(err.msg) + 16];
		snprintf(text, sizeof(text), "cordon: %s", err.msg);
		answer(c, tool_result(NULL, text, true));
		return;
	}
	char *structured = jw_take(&w);
	answer(c, structured ? tool_result(structured, structured, false) : NULL);
	free(structured);
}
