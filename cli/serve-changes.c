/* GET /v1/sessions/{id}/changes (docs/api.md): the change set of a session
 * whose workspace is in overlay or review mode, as it is now, with a diff
 * of its text files; GET .../snapshots/{pid}/changes: a snapshot's, the
 * snapshot's directory read in place of the workspace's upper layer. The session's worker says where the change set is
 * (its supervisor made it); `cordon changes DIR --json` and `--diff` read it
 * as they read any run's: beneath its directories, no link followed,
 * regular files only. What the session's processes write there is hostile
 * and changes while it is read: each child is bounded in output and time,
 * and killed past either; the answer says what was cut. */
#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <microhttpd.h>
#include "strv.h"
#include "clock.h"
#include "json.h"
#include "serve-ipc.h"
#include "serve-internal.h"
#include "serve-peer.h"

/* The listing (bounded by the change set's own walk limits) and the diff. */
#define LIST_MAX (16u << 20)
#define CHANGES_SECONDS 30ULL

/* Runs `cordon ARGV...` with stdout to a pipe read into out, at most max
 * bytes (*cut: more came, the child was killed) and until deadline
 * (CLOCK_MONOTONIC ns: killed then, *late). Its stderr's first line goes
 * to why. Returns its exit status, -1 if it could not be run. */
/* Is every directory from / to dir (itself included) the server's alone:
 * owned by the server's uid (or root), not a link, writable by no one else
 * (a sticky directory's entries only by their owners)? Then no client can
 * rearrange it from outside while the server reads it. */
static bool path_is_the_servers(const char *dir)
{
	char p[4096];
	size_t n = strlen(dir);
	if (dir[0] != '/' || n >= sizeof(p))
		return false;
	uid_t me = geteuid();
	for (size_t i = 1; i <= n; i++) {
		if (dir[i] != '/' && dir[i] != '\0')
			continue;
		memcpy(p, dir, i);
		p[i] = '\0';
		struct stat st;
		if (lstat(p, &st) < 0 || !S_ISDIR(st.st_mode) || (st.st_uid != me && st.st_uid != 0))
			return false;
		bool sticky = st.st_mode & S_ISVTX;
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(sticky && i < n))
			return false;
	}
	return true;
}

/* Who reads the change set: the server, where every directory on its path
 * is the server's alone (path_is_the_servers), else the session's client
 * (as_uid >= 0): a change set in a directory the client owns could be
 * rearranged from outside while the server reads it (a planted change set
 * naming /etc as its host tree), so it is read with the client's rights,
 * never the server's. */
static pid_t spawn_as(const char *const *argv, int fd3, int in, int out, int errfd, long as_uid, gid_t as_gid)
{
	if (as_uid < 0)
		return spawn_self(argv, fd3, "/", in, out, errfd);
	pid_t pid = fork();
	if (pid == 0) {
		if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(errfd, 2) < 0 || chdir("/") < 0 ||
		    setgroups(0, NULL) < 0 || setresgid(as_gid, as_gid, as_gid) < 0 ||
		    setresuid((uid_t)as_uid, (uid_t)as_uid, (uid_t)as_uid) < 0)
			_exit(126);
		execv(S.cordon, (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static int capture(const char *const *argv, int fd3, size_t max, uint64_t deadline, buf *out, bool *cut, bool *late,
		   char *why, size_t whysz, long as_uid, gid_t as_gid)
{
	*cut = *late = false;
	why[0] = '\0';
	int p[2], e[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(e, O_CLOEXEC | O_NONBLOCK) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pid_t pid = nul >= 0 ? spawn_as(argv, fd3, nul, p[1], e[1], as_uid, as_gid) : -1;
	if (nul >= 0)
		close(nul);
	close(p[1]);
	close(e[1]);
	if (pid < 0) {
		close(p[0]);
		close(e[0]);
		return -1;
	}
	char chunk[65536];
	for (;;) {
		uint64_t now = mono_ns();
		if (now >= deadline) {
			*late = true;
			break;
		}
		struct pollfd pf = {p[0], POLLIN, 0};
		uint64_t ms = (deadline - now) / 1000000ULL + 1;
		int r = poll(&pf, 1, ms > 1000 ? 1000 : (int)ms);
		if (r < 0 && errno != EINTR)
			break;
		if (r <= 0)
			continue;
		ssize_t n = read(p[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		size_t take = (size_t)n;
		if (out->len + take > max) {
			take = max - out->len;
			*cut = true;
		}
		if (take && buf_append(out, chunk, take) < 0) {
			*cut = true;
			break;
		}
		if (*cut)
			break;
	}
	close(p[0]);
	if (*cut || *late)
		kill(pid, SIGKILL);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	ssize_t n = read(e[0], why, whysz - 1);
	why[n > 0 ? n : 0] = '\0';
	why[strcspn(why, "\n")] = '\0';
	close(e[0]);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* The worker's answer to "changes_dir" (with pid: "upper", the snapshot's
 * directory, and "layer", the change set's layer it stands for): the
 * directory, or the error it gives (answered here). */
static enum MHD_Result ask_dir(struct MHD_Connection *c, struct session_ent *se, const char *sid, const char *pid,
			       char *dir, size_t dsz, char *upper, char *layer, bool *answered, int *tree, char *tree_layer)
{
	*answered = true;
	*tree = -1;
	char req[96];
	if (pid)
		snprintf(req, sizeof(req), "{\"op\":\"changes_dir\",\"snapshot\":\"%s\"}", pid);
	else
		snprintf(req, sizeof(req), "{\"op\":\"changes_dir\"}");
	int reply = to_worker(se, sid, req, -1);
	if (reply < 0)
		return send_error(c, 410, "the session has ended");
	if (!reply_ready(reply)) {
		close(reply);
		return worker_late(c);
	}
	char *b = malloc(IPC_MAX_PACKET);
	int fds[IPC_MAX_FDS], nfds = 0;
	ssize_t n = b ? ipc_recv(reply, b, IPC_MAX_PACKET, fds, &nfds) : -1;
	close(reply);
	/* A stacked fork's lower tree (its "stack_layer"): kept. */
	int got = nfds > 0 ? fds[0] : -1;
	for (int i = 1; i < nfds; i++)
		close(fds[i]);
	if (n <= 0) {
		if (got >= 0)
			close(got);
		free(b);
		return send_error(c, 410, "the session has ended");
	}
	cordon_error e;
	jnode *j = json_parse(b, (size_t)n, &e);
	free(b);
	const jnode *err = j ? json_get(j, "error") : NULL, *code = j ? json_get(j, "code") : NULL,
		    *d = j ? json_get(j, "dir") : NULL, *u = j ? json_get(j, "upper") : NULL,
		    *l = j ? json_get(j, "layer") : NULL, *sl = j ? json_get(j, "stack_layer") : NULL;
	if (got >= 0 && sl && sl->type == J_NUM && sl->num >= 0 && sl->num <= 255) {
		*tree = got;
		snprintf(tree_layer, 8, "%u", (unsigned)sl->num);
	} else if (got >= 0)
		close(got);
	enum MHD_Result r = MHD_YES;
	if (err && err->str)
		r = send_error(c, code && code->type == J_NUM ? (unsigned)code->num : 500, "%s", err->str);
	else if (!d || !d->str || d->str[0] != '/' || strlen(d->str) >= dsz)
		r = send_error(c, 500, "the session's worker gave no change set directory");
	else if (pid && (!u || !u->str || u->str[0] != '/' || strlen(u->str) >= dsz || !l || l->type != J_NUM ||
			 l->num < 0 || l->num > 255))
		r = send_error(c, 500, "the session's worker gave no snapshot directory");
	else {
		snprintf(dir, dsz, "%s", d->str);
		if (pid) {
			snprintf(upper, dsz, "%s", u->str);
			snprintf(layer, 8, "%u", (unsigned)l->num);
		}
		*answered = false;
	}
	json_free(j);
	return r;
}

enum MHD_Result session_changes(struct MHD_Connection *c, struct session_ent *se, const char *sid, const char *pid,
				size_t diff_max)
{
	char dir[4096], upper[4096] = "", layer[8] = "", tlayer[8] = "";
	bool answered;
	int tree = -1;
	enum MHD_Result r = ask_dir(c, se, sid, pid, dir, sizeof(dir), upper, layer, &answered, &tree, tlayer);
	if (answered) {
		if (tree >= 0)
			close(tree);
		return r;
	}
	uint64_t deadline = mono_ns() + CHANGES_SECONDS * 1000000000ULL;
	gid_t cgid = 0;
	long as_uid = !path_is_the_servers(dir) && peer_run_as_client(se->owner, &cgid) ? (long)se->owner : -1;
	buf list = {0}, diff = {0};
	bool lcut, llate, dcut, dlate;
	char why[512];
	/* A snapshot: its directory read for the workspace's layer (the
	 * change set's other layers are not in a snapshot). */
	/* A stacked fork's lower tree (fd 3): mounted by the reader over the
	 * workspace's layer's host directory, in its own mount namespace. */
	const char *largv[12] = {"cordon", "changes", dir, "--json"}, *dargv[12] = {"cordon", "changes", dir, "--diff"};
	size_t k = 4;
	if (pid) {
		largv[k] = dargv[k] = "--snapshot-upper";
		largv[k + 1] = dargv[k + 1] = layer;
		largv[k + 2] = dargv[k + 2] = upper;
		k += 3;
	}
	if (tree >= 0) {
		largv[k] = dargv[k] = "--host-tree";
		largv[k + 1] = dargv[k + 1] = tlayer;
		largv[k + 2] = dargv[k + 2] = "3";
		k += 3;
	}
	largv[k] = dargv[k] = NULL;
	int st = capture(largv, tree, LIST_MAX, deadline, &list, &lcut, &llate, why, sizeof(why), as_uid, cgid);
	if (st != 0 && as_uid >= 0 && !lcut && !llate) {
		r = send_error(c, 409, "the session's change set %s is in a directory its client can change, so the server reads it with the client's rights, which do not reach it (%s); its owner can read it with cordon changes",
			       dir, why[0] ? why : "cordon changes failed");
		goto out;
	}
	if (st != 0 || lcut || llate) {
		r = send_error(c, llate ? 504 : 500, "reading the session's change set: %s",
			       llate ? "it took too long" : lcut ? "its listing is too long" : why[0] ? why : "cordon changes failed");
		goto out;
	}
	if (tree >= 0) {
		/* A tree of its own for the diff's reader: a kernel that clones
		 * no detached mount (Debian 12's 6.1) has the reader mount the
		 * tree itself, which the listing's reader has taken. */
		close(tree);
		tree = -1;
		char d2[4096], u2[4096] = "", l2[8] = "", t2[8] = "";
		r = ask_dir(c, se, sid, pid, d2, sizeof(d2), u2, l2, &answered, &tree, t2);
		if (answered)
			goto out;
		if (tree < 0 || strcmp(t2, tlayer) != 0) {
			r = send_error(c, 500, "the session's change set's diff: the worker gave no lower tree");
			goto out;
		}
	}
	st = capture(dargv, tree, diff_max, deadline, &diff, &dcut, &dlate, why, sizeof(why), as_uid, cgid);
	if (st != 0 && !dcut && !dlate) {
		r = send_error(c, 500, "the session's change set's diff: %s", why[0] ? why : "cordon changes failed");
		goto out;
	}
	/* The listing's object, with the diff and what was cut of it. */
	cordon_error e;
	jnode *lj = json_parse(list.p ? list.p : "", list.len, &e);
	if (!lj || lj->type != J_OBJ) {
		json_free(lj);
		r = send_error(c, 500, "reading the session's change set: its listing is not a JSON object");
		goto out;
	}
	jwriter w = {0};
	jw_obj_begin(&w);
	for (size_t i = 0; i < lj->n; i++) {
		jw_key(&w, lj->keys[i]);
		jw_node(&w, lj->items[i]);
	}
	json_free(lj);
	jw_key(&w, "session");
	jw_str(&w, sid);
	if (pid) {
		jw_key(&w, "snapshot");
		jw_str(&w, pid);
	}
	jw_key(&w, "diff");
	jw_strn(&w, diff.p ? diff.p : "", diff.len);
	jw_key(&w, "diff_bytes");
	jw_uint(&w, diff.len);
	jw_key(&w, "diff_truncated");
	jw_bool(&w, dcut || dlate);
	jw_key(&w, "diff_max_bytes");
	jw_uint(&w, diff_max);
	jw_obj_end(&w);
	r = jw_finish(&w) == 0 ? send_text(c, 200, "application/json", w.out.p, w.out.len)
			       : send_error(c, 500, "out of memory");
	buf_free(&w.out);
out:
	if (tree >= 0)
		close(tree);
	buf_free(&list);
	buf_free(&diff);
	return r;
}
