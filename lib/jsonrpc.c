/* JSON-RPC 2.0 framing and checks (jsonrpc.h). */
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "jsonrpc.h"

int jrpc_reader_push(struct jrpc_reader *r, const char *data, size_t n)
{
	if (r->start > 0 && r->start == r->len)
		r->start = r->len = 0;
	if (r->len + n > r->cap) {
		/* compact first: what was read is never needed again */
		if (r->start > 0) {
			memmove(r->buf, r->buf + r->start, r->len - r->start);
			r->len -= r->start;
			r->start = 0;
		}
		if (r->len + n > r->cap) {
			size_t cap = r->cap ? r->cap : 4096;
			while (cap < r->len + n)
				cap *= 2;
			char *b = realloc(r->buf, cap);
			if (!b)
				return -1;
			r->buf = b;
			r->cap = cap;
		}
	}
	memcpy(r->buf + r->len, data, n);
	r->len += n;
	return 0;
}

int jrpc_reader_next(struct jrpc_reader *r, const char **line, size_t *len)
{
	for (;;) {
		char *s = r->buf ? r->buf + r->start : NULL;
		size_t avail = r->len - r->start;
		char *nl = s ? memchr(s, '\n', avail) : NULL;
		if (r->skipping) {
			if (!nl) {
				r->start = r->len; /* drop what came of it */
				return JRPC_NONE;
			}
			r->start += (size_t)(nl - s) + 1;
			r->skipping = false;
			continue;
		}
		if (!nl) {
			if (avail > r->max) {
				r->start = r->len;
				r->skipping = true;
				return JRPC_TOOBIG;
			}
			return JRPC_NONE;
		}
		size_t l = (size_t)(nl - s);
		r->start += l + 1;
		if (l > r->max)
			return JRPC_TOOBIG;
		if (l > 0 && s[l - 1] == '\r')
			l--;
		if (l == 0)
			continue;
		*line = s;
		*len = l;
		return JRPC_LINE;
	}
}

void jrpc_reader_free(struct jrpc_reader *r)
{
	free(r->buf);
	*r = (struct jrpc_reader){0};
}

static bool id_valid(const jnode *id)
{
	/* strings and integers; null is not an id the client may use */
	return id && (id->type == J_STR || (id->type == J_NUM && id->num_is_int));
}

static int invalid(int *code, cordon_error *err, const char *what)
{
	*code = JRPC_INVALID_REQUEST;
	return cordon_err(err, EINVAL, "invalid request: %s", what);
}

int jrpc_parse(const char *line, size_t len, struct jrpc_msg *m, int *code, cordon_error *err)
{
	*m = (struct jrpc_msg){0};
	m->root = json_parse(line, len, err);
	if (!m->root) {
		*code = JRPC_PARSE_ERROR;
		return cordon_err_wrap(err, "parse error");
	}
	const jnode *o = m->root;
	if (o->type == J_ARR)
		return invalid(code, err, "batches are not taken (one message a line)");
	if (o->type != J_OBJ)
		return invalid(code, err, "not an object");
	const jnode *id = json_get(o, "id");
	if (id_valid(id))
		m->id = id;
	const jnode *v = json_get(o, "jsonrpc");
	if (!v || v->type != J_STR || strcmp(v->str, "2.0") != 0)
		return invalid(code, err, "\"jsonrpc\" must be \"2.0\"");
	if (id && !id_valid(id))
		return invalid(code, err, "\"id\" must be a string or an integer");
	const jnode *method = json_get(o, "method");
	if (!method) {
		if (!id || (!json_get(o, "result") && !json_get(o, "error")))
			return invalid(code, err, "no \"method\"");
		m->kind = JRPC_RESPONSE;
		return 0;
	}
	if (method->type != J_STR)
		return invalid(code, err, "\"method\" must be a string");
	const jnode *params = json_get(o, "params");
	if (params && params->type != J_OBJ)
		return invalid(code, err, "\"params\" must be an object");
	m->method = method->str;
	m->params = params;
	m->kind = id ? JRPC_REQUEST : JRPC_NOTIFICATION;
	return 0;
}

void jrpc_msg_free(struct jrpc_msg *m)
{
	json_free(m->root);
	*m = (struct jrpc_msg){0};
}

static void begin(jwriter *w, const jnode *id)
{
	w->compact = true;
	jw_obj_begin(w);
	jw_key_str(w, "jsonrpc", "2.0");
	jw_key(w, "id");
	if (id)
		jw_node(w, id);
	else
		jw_null(w);
}

char *jrpc_result_line(const jnode *id, const char *result_json)
{
	jwriter w = {0};
	begin(&w, id);
	jw_key(&w, "result");
	jw_raw(&w, result_json);
	jw_obj_end(&w);
	return jw_take(&w);
}

char *jrpc_error_line(const jnode *id, int code, const char *message)
{
	jwriter w = {0};
	begin(&w, id);
	jw_key(&w, "error");
	jw_obj_begin(&w);
	jw_key_int(&w, "code", code);
	jw_key_str(&w, "message", message);
	jw_obj_end(&w);
	jw_obj_end(&w);
	return jw_take(&w);
}

char *jrpc_notification_line(const char *method, const char *params_json)
{
	jwriter w = {.compact = true};
	jw_obj_begin(&w);
	jw_key_str(&w, "jsonrpc", "2.0");
	jw_key_str(&w, "method", method);
	if (params_json) {
		jw_key(&w, "params");
		jw_raw(&w, params_json);
	}
	jw_obj_end(&w);
	return jw_take(&w);
}
