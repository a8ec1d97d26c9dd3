/* POST /v1/sessions/{id}/fork {"snapshot"?} (docs/api.md, "Fork"): a new
 * session of the same owner, made by the same request (policy, timeout,
 * idle timeout; the server's ceiling), whose workspace starts at one of
 * the session's snapshots, or at a snapshot taken now for the fork (and
 * deleted after it). The fork's workspace is a tree of its own: the
 * parent's lower tree (empty, or the parent's own seed if it is a fork)
 * copied, the snapshot's view applied over it (upper-copy.h), before its
 * worker starts; both sessions go on independently, and the parent's end
 * leaves the fork as it is. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <microhttpd.h>
#include "cleanup.h"
#include "json.h"
#include "serve-ipc.h"
#include "serve-internal.h"
#include "serve-route.h"

#define REQUEST_MAX (16u << 20)

/* A request to the session's worker and its JSON answer (*out, the
 * caller's to free); -1 when the session is gone or late. */
static int worker_json(struct session_ent *se, const char *sid, const char *req, jnode **out)
{
	*out = NULL;
	int reply = to_worker(se, sid, req, -1);
	if (reply < 0)
		return -1;
	int rc = -1;
	char *b = malloc(IPC_MAX_PACKET);
	int fds[IPC_MAX_FDS], nfds = 0;
	ssize_t n = b && reply_ready(reply) ? ipc_recv(reply, b, IPC_MAX_PACKET, fds, &nfds) : -1;
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	cordon_error e;
	if (n > 0 && (*out = json_parse(b, (size_t)n, &e)))
		rc = 0;
	free(b);
	close(reply);
	return rc;
}

/* The request the session was made by (serve-session.c, request_write). */
static jnode *read_request(const char *sid)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/sessions/%s/request.json", S.state_dir, sid);
	_cleanup_close_ int fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > REQUEST_MAX)
		return NULL;
	buf b = {0};
	if (ipc_read_fd(fd, REQUEST_MAX, &b) < 0) {
		buf_free(&b);
		return NULL;
	}
	cordon_error e;
	jnode *j = json_parse(b.p ? b.p : "{}", b.len ? b.len : 2, &e);
	buf_free(&b);
	return j;
}

static int open_dir(const char *sid, const char *rel)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof(p), "%s/sessions/%s/%s", S.state_dir, sid, rel) >= (int)sizeof(p))
		return -1;
	return open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static void delete_snapshot(struct session_ent *se, const char *sid, const char *pid)
{
	char req[96];
	snprintf(req, sizeof(req), "{\"op\":\"snapshot_delete\",\"snapshot\":\"%s\"}", pid);
	jnode *j = NULL;
	worker_json(se, sid, req, &j);
	json_free(j);
}

enum MHD_Result fork_session(struct MHD_Connection *c, struct session_ent *se, const char *sid, struct req *rq)
{
	cordon_error e = {0};
	jnode *body = rq->body.len ? json_parse(rq->body.p, rq->body.len, &e) : NULL;
	if (rq->body.len && !body)
		return send_error(c, 400, "request body: %s", e.msg);
	const jnode *sn = body ? json_get(body, "snapshot") : NULL;
	if ((body && body->type != J_OBJ) || (sn && (sn->type != J_STR || !route_id_valid(sn->str, "p-")))) {
		json_free(body);
		return send_error(c, 400, "snapshot: a snapshot's id (\"p-\" and 16 hex digits) is expected");
	}
	/* From the session's own workspace directory only (its lower tree,
	 * which the fork copies or stacks over): not a host tree or an
	 * image's, which the session's directory does not hold. */
	jnode *ok = NULL;
	if (worker_json(se, sid, "{\"op\":\"forkable\"}", &ok) < 0) {
		json_free(body);
		return send_error(c, 410, "the session has ended");
	}
	const jnode *oerr = json_get(ok, "error"), *ocode = json_get(ok, "code");
	if (oerr) {
		enum MHD_Result r = send_error(c, ocode && ocode->type == J_NUM ? (unsigned)ocode->num : 500,
					       "session %s cannot be forked: %s", sid, oerr->str ? oerr->str : "?");
		json_free(ok);
		json_free(body);
		return r;
	}
	json_free(ok);
	char pid[ROUTE_ID_LEN + 1];
	bool taken = false;
	if (sn) {
		snprintf(pid, sizeof(pid), "%s", sn->str);
	} else {
		/* At now: a snapshot for the fork, deleted after it. */
		jnode *a = NULL;
		if (worker_json(se, sid, "{\"op\":\"snapshot\"}", &a) < 0) {
			json_free(body);
			return send_error(c, 410, "the session has ended");
		}
		const jnode *err = json_get(a, "error"), *code = json_get(a, "code"), *id = json_get(a, "snapshot");
		if (err || !id || !id->str || !route_id_valid(id->str, "p-")) {
			enum MHD_Result r = send_error(c, code && code->type == J_NUM ? (unsigned)code->num : 500,
						       "fork: %s", err && err->str ? err->str : "no snapshot");
			json_free(a);
			json_free(body);
			return r;
		}
		snprintf(pid, sizeof(pid), "%s", id->str);
		taken = true;
		json_free(a);
	}
	json_free(body);
	char rel[64];
	snprintf(rel, sizeof(rel), "snapshots/%s", pid);
	jnode *req = read_request(sid);
	/* The snapshot's own directory held LOCK_SH for the copy: its
	 * removal (a DELETE of it, the parent's end) waits for the copy
	 * (LOCK_EX), a removal of another snapshot does not. Opened again
	 * once held: a snapshot removed meanwhile is gone (404). */
	struct fork_seed seed = {open_dir(sid, "work"), -1, open_dir(sid, rel), sid};
	if (seed.snaps >= 0 && flock(seed.snaps, LOCK_SH) == 0) {
		seed.upper = open_dir(sid, rel);
		/* (tests: the copy held until the file named exists) */
		const char *hold = getenv("CORDON_TEST_FORK_HOLD_FILE");
		for (int i = 0; hold && i < 1200 && access(hold, F_OK) != 0; i++)
			usleep(50000);
	}
	enum MHD_Result r;
	if (!req)
		r = send_error(c, 409, "session %s cannot be forked: the request it was made by is not kept", sid);
	else if (seed.upper < 0)
		r = send_error(c, 404, "no such snapshot in session %s", sid);
	else if (seed.lower < 0)
		r = send_error(c, 500, "session %s: its workspace: %s", sid, strerror(errno));
	else
		r = create_session(c, req, rq->uid, rq->t_req, &seed);
	if (seed.lower >= 0)
		close(seed.lower);
	if (seed.upper >= 0)
		close(seed.upper);
	if (seed.snaps >= 0)
		close(seed.snaps); /* its lock with it */
	json_free(req);
	if (taken)
		delete_snapshot(se, sid, pid);
	return r;
}
