#include <string.h>
#include "serve-route.h"

int route_id_valid(const char *s, const char *prefix)
{
	if (!s || strncmp(s, prefix, 2) != 0 || strlen(s) != ROUTE_ID_LEN)
		return 0;
	for (const char *p = s + 2; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return 0;
	return 1;
}

/* Split path into at most 8 segments (no empty ones, no trailing slash). */
static int split(const char *path, const char *seg[8], size_t len[8])
{
	if (path[0] != '/')
		return -1;
	int n = 0;
	const char *p = path + 1;
	for (;;) {
		const char *e = strchr(p, '/');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == 0 || n == 8)
			return -1;
		seg[n] = p;
		len[n++] = l;
		if (!e)
			return n;
		p = e + 1;
	}
}

static int is(const char *seg, size_t len, const char *word)
{
	return strlen(word) == len && memcmp(seg, word, len) == 0;
}

static int take_id(const char *seg, size_t len, const char *prefix, char out[ROUTE_ID_LEN + 1])
{
	if (len != ROUTE_ID_LEN)
		return 0;
	memcpy(out, seg, len);
	out[len] = '\0';
	return route_id_valid(out, prefix);
}

static enum route_kind by_method(const char *method, const char *get, enum route_kind g,
				 const char *other, enum route_kind o)
{
	(void)get;
	if (strcmp(method, "GET") == 0 && g != R_NONE)
		return g;
	if (other && strcmp(method, other) == 0)
		return o;
	return R_BAD_METHOD;
}

enum route_kind route_parse(const char *method, const char *path, struct route *r)
{
	memset(r, 0, sizeof(*r));
	const char *seg[8];
	size_t len[8];
	int n = split(path, seg, len);
	if (n < 2 || !is(seg[0], len[0], "v1"))
		return r->kind = R_NONE;
	if (is(seg[1], len[1], "runs")) {
		if (n == 2)
			return r->kind = by_method(method, NULL, R_NONE, "POST", R_RUNS_CREATE);
		if (n == 3 && take_id(seg[2], len[2], "r-", r->sid))
			return r->kind = by_method(method, "GET", R_RUN_GET, NULL, R_NONE);
		return r->kind = R_NONE;
	}
	if (is(seg[1], len[1], "health"))
		return r->kind = n == 2 ? by_method(method, "GET", R_HEALTH, NULL, R_NONE) : R_NONE;
	if (is(seg[1], len[1], "metrics"))
		return r->kind = n == 2 ? by_method(method, "GET", R_METRICS, NULL, R_NONE) : R_NONE;
	if (is(seg[1], len[1], "version"))
		return r->kind = n == 2 ? by_method(method, "GET", R_VERSION, NULL, R_NONE) : R_NONE;
	if (is(seg[1], len[1], "pool"))
		return r->kind = n == 2 ? by_method(method, "GET", R_POOL_GET, NULL, R_NONE) : R_NONE;
	if (!is(seg[1], len[1], "sessions"))
		return r->kind = R_NONE;
	if (n == 2)
		return r->kind = by_method(method, "GET", R_SESSIONS_LIST, "POST", R_SESSIONS_CREATE);
	if (!take_id(seg[2], len[2], "s-", r->sid))
		return r->kind = R_NONE;
	if (n == 3)
		return r->kind = by_method(method, "GET", R_SESSION_GET, "DELETE", R_SESSION_DELETE);
	if (n == 4 && is(seg[3], len[3], "report"))
		return r->kind = by_method(method, "GET", R_SESSION_REPORT, NULL, R_NONE);
	if (n == 4 && is(seg[3], len[3], "changes"))
		return r->kind = by_method(method, "GET", R_SESSION_CHANGES, NULL, R_NONE);
	if (n == 4 && is(seg[3], len[3], "pause"))
		return r->kind = by_method(method, NULL, R_NONE, "POST", R_SESSION_PAUSE);
	if (n == 4 && is(seg[3], len[3], "resume"))
		return r->kind = by_method(method, NULL, R_NONE, "POST", R_SESSION_RESUME);
	if (n == 4 && is(seg[3], len[3], "restore"))
		return r->kind = by_method(method, NULL, R_NONE, "POST", R_SESSION_RESTORE);
	if (n == 4 && is(seg[3], len[3], "fork"))
		return r->kind = by_method(method, NULL, R_NONE, "POST", R_SESSION_FORK);
	if (is(seg[3], len[3], "snapshots")) {
		if (n == 4)
			return r->kind = by_method(method, "GET", R_SNAPSHOTS_LIST, "POST", R_SNAPSHOT_TAKE);
		if (n == 5 && take_id(seg[4], len[4], "p-", r->eid))
			return r->kind = by_method(method, NULL, R_NONE, "DELETE", R_SNAPSHOT_DELETE);
		if (n == 6 && take_id(seg[4], len[4], "p-", r->eid) && is(seg[5], len[5], "changes"))
			return r->kind = by_method(method, "GET", R_SNAPSHOT_CHANGES, NULL, R_NONE);
		if (n == 6 && take_id(seg[4], len[4], "p-", r->eid) && is(seg[5], len[5], "changeset"))
			return r->kind = by_method(method, NULL, R_NONE, "POST", R_SNAPSHOT_CHANGESET);
		return r->kind = R_NONE;
	}
	if (is(seg[3], len[3], "exec")) {
		if (n == 4)
			return r->kind = by_method(method, NULL, R_NONE, "POST", R_EXEC);
		if (!take_id(seg[4], len[4], "e-", r->eid))
			return r->kind = R_NONE;
		if (n == 5)
			return r->kind = by_method(method, "GET", R_EXEC_GET, NULL, R_NONE);
		if (n == 6 && is(seg[5], len[5], "signal"))
			return r->kind = by_method(method, NULL, R_NONE, "POST", R_EXEC_SIGNAL);
		if (n == 6 && is(seg[5], len[5], "resize"))
			return r->kind = by_method(method, NULL, R_NONE, "POST", R_EXEC_RESIZE);
		if (n == 6 && is(seg[5], len[5], "output"))
			return r->kind = by_method(method, "GET", R_EXEC_OUTPUT, NULL, R_NONE);
		return r->kind = R_NONE;
	}
	if (is(seg[3], len[3], "files")) {
		if (n == 4) {
			if (strcmp(method, "PUT") == 0)
				return r->kind = R_FILE_PUT;
			return r->kind = by_method(method, "GET", R_FILE_GET, "DELETE", R_FILE_DELETE);
		}
		if (n == 5 && is(seg[4], len[4], "list"))
			return r->kind = by_method(method, "GET", R_FILE_LIST, NULL, R_NONE);
	}
	return r->kind = R_NONE;
}
