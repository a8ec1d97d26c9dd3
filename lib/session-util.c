/* The session worker's small helpers, below every other session file: paths
 * relative to the session's cwd, replies on a client's socket, ids, the idle
 * timer, the redaction filter of the JSON writer. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "session-util.h"
#include "json.h"
#include "layers.h"
#include "snapshot.h"
#include "redact-stream.h"
#include "redact.h"
#include "serve-ipc.h"
#include "session-worker.h"

bool sx_abs(const struct sx *s, const char *p, char *out, size_t sz)
{
	if (p[0] == '/')
		return snprintf(out, sz, "%s", p) < (int)sz;
	bool dot = strcmp(p, ".") == 0;
	return snprintf(out, sz, "%s%s%s", s->cwd, dot ? "" : "/", dot ? "" : p) < (int)sz;
}

/* "workspace" and "cwd", for the session's creation, claim and GET. */
void sx_paths_json(const struct sx *s, jwriter *w)
{
	jw_key(w, "workspace");
	jw_str(w, s->ws);
	jw_key(w, "cwd");
	jw_str(w, s->cwd);
}


void sx_reply_json(int sock, const char *json)
{
	if (sock >= 0)
		ipc_send(sock, json, strlen(json), NULL, 0, MSG_DONTWAIT);
}

void sx_reply_error(int sock, int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "code");
	jw_int(&w, code);
	jw_key(&w, "error");
	jw_str(&w, msg);
	jw_obj_end(&w);
	if (jw_finish(&w) == 0)
		sx_reply_json(sock, w.out.p);
	buf_free(&w.out);
}

void sx_close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

void sx_new_id(char *out, size_t sz, const char *prefix)
{
	uint8_t r[8] = {0};
	if (getrandom(r, sizeof(r), 0) != sizeof(r)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		memcpy(r, &ts.tv_nsec, sizeof(long) < 8 ? sizeof(long) : 8);
	}
	snprintf(out, sz, "%s%02x%02x%02x%02x%02x%02x%02x%02x", prefix, r[0], r[1], r[2], r[3], r[4], r[5],
		 r[6], r[7]);
}

void sx_arm_idle(struct sx *s)
{
	if (s->idle < 0 || !s->idle_ns)
		return;
	if (s->paused) {
		/* Its idle time does not count while it is paused. */
		timerfd_settime(s->idle, 0, &(struct itimerspec){0}, NULL);
		return;
	}
	struct itimerspec its = {{0, 0}, {(time_t)(s->idle_ns / 1000000000ULL), (long)(s->idle_ns % 1000000000ULL)}};
	timerfd_settime(s->idle, 0, &its, NULL);
}

char *sx_redact_cb(void *ctx, const char *str)
{
	return redact_string(ctx, str);
}

bool sx_ws_own(const struct sx *s, char *why, size_t wsz)
{
	struct stat b;
	const char *w = s->rep ? s->rep->live_workspace : "";
	/* The tree the run has (sup-loop.c: as mounted, or the directory the
	 * plan pinned), never what a name leads to now (attack20, attack21);
	 * none known: not its own. */
	if (w[0] && s->rep->live_ws_ino && lstat(s->ws, &b) == 0 && S_ISDIR(b.st_mode) &&
	    s->rep->live_ws_dev == b.st_dev && s->rep->live_ws_ino == b.st_ino)
		return true;
	snprintf(why, wsz, "the session's workspace is %s, not a directory of its own (a host tree its cwd is in, or an image's): a restore and a fork need a session's own workspace (no root, no write path holding its cwd)",
		 w[0] ? w : "none with a change set");
	return false;
}

int sx_lower_open(const struct sx *s, int *mnt, cordon_error *err)
{
	int top = open_root(s->ws, O_RDONLY | O_DIRECTORY);
	if (top < 0)
		return cordon_err_errno(err, "%s", s->ws);
	if (!s->layers.n)
		return top;
	int m = layers_merged(top, AT_FDCWD, &s->layers, mnt, err);
	close(top);
	return m;
}
