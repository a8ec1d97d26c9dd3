/* Restore of a session's workspace to a snapshot (session-restore.h).
 *
 * The overlay stays mounted: a changed upper layer under a mounted overlay
 * is undefined in the kernel, so the upper layer is never touched from
 * outside. The view is rebuilt through the overlay itself, as the run
 * would write it: a helper process, forked from the worker, joins the
 * run's user and mount namespaces (it owns the user namespace, so it may),
 * takes the identity of the run's init and applies to the workspace the
 * patch from the view now to the snapshot's (upper_patch, upper_apply:
 * upper-copy.h): only the paths the run's upper layer or the snapshot's
 * holds are rewritten, the rest is the lower tree's in both views. Every exec is
 * ended first (status "restored"), so that nothing of the run writes
 * meanwhile; the agent (init) itself writes nothing while no exec or
 * files call is under way (a files call refuses a restore, 409). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/nsfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include "session-restore.h"
#include "cleanup.h"
#include "error.h"
#include "ident.h"
#include "session-snap.h"
#include "session-stream.h"
#include "session-util.h"
#include "snapshot.h"
#include "upper-copy.h"

#define RESTORE_MAX_ENTRIES 400000

/* The effective uid or gid (key "Uid:" or "Gid:") of the process whose
 * /proc directory is procdir, as the reader's user namespace sees it. */
static long proc_id(int procdir, const char *key)
{
	char line[256];
	int fd = openat(procdir, "status", O_RDONLY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
	long v = -1;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	size_t kl = strlen(key);
	while (fgets(line, sizeof(line), f)) {
		unsigned long r, e;
		if (strncmp(line, key, kl) == 0 && sscanf(line + kl, "%lu %lu", &r, &e) == 2) {
			v = (long)e;
			break;
		}
	}
	fclose(f);
	return v;
}

/* The helper: in the run's namespaces as its init, the workspace emptied
 * and written anew. Its error on errfd; never returns. */
static void __attribute__((noreturn)) helper(pid_t init, const char *ws, int view, int errfd)
{
	cordon_error e = {0};
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d", (int)init);
	int procdir = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int userns = procdir >= 0 ? openat(procdir, "ns/user", O_RDONLY | O_CLOEXEC) : -1;
	int mntns = procdir >= 0 ? openat(procdir, "ns/mnt", O_RDONLY | O_CLOEXEC) : -1;
	/* The mount namespace belongs to the user namespace the run was made
	 * with; init may have gone on into one nested in it (its identity
	 * dropped there): that one's owner first, then the mount namespace,
	 * then init's own. */
	int owner = mntns >= 0 ? ioctl(mntns, NS_GET_USERNS) : -1;
	struct stat so, su;
	bool nested = owner >= 0 && userns >= 0 && fstat(owner, &so) == 0 && fstat(userns, &su) == 0 &&
		      so.st_ino != su.st_ino;
	long uid = -1, gid = -1;
	if (userns < 0 || mntns < 0 || owner < 0) {
		cordon_err_errno(&e, "the run's namespaces");
	} else if (setns(owner, CLONE_NEWUSER) < 0) {
		cordon_err_errno(&e, "joining the run's user namespace");
	} else if (setns(mntns, CLONE_NEWNS) < 0) {
		cordon_err_errno(&e, "joining the run's mount namespace");
	} else if (nested && setns(userns, CLONE_NEWUSER) < 0) {
		cordon_err_errno(&e, "joining init's user namespace");
	} else if ((uid = proc_id(procdir, "Uid:")) < 0 || (gid = proc_id(procdir, "Gid:")) < 0) {
		cordon_err_errno(&e, "the run's identity");
	} else {
		if (setgroups(0, NULL) < 0) { /* denied in the run's namespace: none to drop */ }
		if (setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid) < 0 || setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) < 0)
			cordon_err_errno(&e, "taking the run's identity");
	}
	ident_forget(); /* namespaces joined, identity taken */
	if (!e.msg[0]) {
		int wsfd = open_root(ws, O_RDONLY | O_DIRECTORY);
		struct ucopy_limits lim = {RESTORE_MAX_ENTRIES, UINT64_MAX, SX_SNAP_MAX_DEPTH + 2, true, true,
					   (uid_t)uid, (gid_t)gid};
		struct ucopy_stat st;
		if (wsfd < 0)
			cordon_err_errno(&e, "the workspace %s", ws);
		else if (upper_apply(view, wsfd, &lim, &st, &e) < 0)
			cordon_err_wrap(&e, "writing the snapshot's view");
	}
	if (e.msg[0]) {
		if (write(errfd, e.msg, strlen(e.msg)) < 0) { /* the worker says it failed */ }
		_exit(1);
	}
	_exit(0);
}

/* The patch from the view now to the snapshot's (upper_patch), staged in
 * the session's snapshots directory (the server's) as the run's host
 * identity owns its upper layer, so that the helper, as the run, can read
 * it: only what the run's upper layer or the snapshot's holds, each as
 * the session's lower tree (its workspace on the host; a fork's holds its
 * start) with the snapshot over it gives it. The staged tree's fd, or -1
 * and why. */
static int stage(struct sx *s, const char *name, unsigned *code, char *why, size_t wsz)
{
	cordon_error e = {0};
	char snapdir[4200];
	snprintf(snapdir, sizeof(snapdir), "%s/%s", s->snap_dir, s->restore_snap);
	_cleanup_close_ int dir = open(s->snap_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int snap = open(snapdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	cordon_error le = {0};
	_cleanup_close_ int lower = sx_lower_open(s, NULL, &le);
	_cleanup_close_ int up = open_root(s->rep->live_upper, O_RDONLY | O_DIRECTORY);
	struct stat us;
	if (dir < 0 || snap < 0 || lower < 0 || up < 0 || fstat(up, &us) < 0) {
		if (lower < 0 && le.msg[0])
			snprintf(why, wsz, "the session's lower tree: %s", le.msg);
		else
			snprintf(why, wsz, "%s: %s", dir < 0 || snap < 0 ? snapdir : lower < 0 ? s->ws : s->rep->live_upper,
				 strerror(errno));
		return -1;
	}
	upper_remove(dir, name, SX_SNAP_MAX_DEPTH + 2, &e);
	/* Its files' bytes bounded as the session's snapshots are. */
	uint64_t max = sx_snap_budget(s);
	struct ucopy_limits lim = {RESTORE_MAX_ENTRIES, max, SX_SNAP_MAX_DEPTH + 2, true, true, us.st_uid, us.st_gid};
	struct ucopy_stat st;
	int fd = -1;
	if (upper_patch(lower, up, snap, dir, name, &lim, &st, &e) < 0 ||
	    (fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		if (!e.msg[0])
			cordon_err_errno(&e, "%s", name);
		*code = e.code == UCOPY_OVER_BUDGET ? 507 : e.code == UCOPY_OVER_BOUND ? 413 : 500;
		if (e.code == UCOPY_OVER_BUDGET)
			snprintf(why, wsz, "what it would rewrite takes more than %llu bytes (limits.snapshots, the bound of a restore's staging): %s; the workspace is as it was",
				 (unsigned long long)max, e.msg);
		else
			snprintf(why, wsz, "staging the restore: %s; the workspace is as it was", e.msg);
		upper_remove(dir, name, SX_SNAP_MAX_DEPTH + 2, &(cordon_error){0});
		return -1;
	}
	return fd;
}

static void unstage(struct sx *s, const char *name)
{
	int dir = open(s->snap_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir >= 0) {
		upper_remove(dir, name, SX_SNAP_MAX_DEPTH + 2, &(cordon_error){0});
		close(dir);
	}
}

/* 0, or -1, why and the answer's code. */
static int rebuild(struct sx *s, unsigned *code, char *why, size_t wsz)
{
	char name[64];
	snprintf(name, sizeof(name), "restore-%s", s->restore_snap);
	*code = 500;
	int view = stage(s, name, code, why, wsz);
	int pp[2] = {-1, -1};
	if (view < 0)
		return -1;
	if (pipe2(pp, O_CLOEXEC) < 0) {
		snprintf(why, wsz, "pipe: %s", strerror(errno));
		close(view);
		unstage(s, name);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(pp[0]);
		helper(s->rep->live_init_pid, s->ws, view, pp[1]);
	}
	close(pp[1]);
	close(view);
	if (pid < 0) {
		close(pp[0]);
		unstage(s, name);
		snprintf(why, wsz, "fork: %s", strerror(errno));
		return -1;
	}
	ssize_t n = read(pp[0], why, wsz - 1);
	close(pp[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
	}
	unstage(s, name);
	why[n > 0 ? n : 0] = '\0';
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (!why[0])
		snprintf(why, wsz, "the restore's helper ended with status %d", st);
	return -1;
}

void sx_do_restore(struct sx *s, const jnode *req, int reply)
{
	const jnode *id = json_get(req, "snapshot");
	size_t i = 0;
	while (id && id->str && i < s->nsnaps && strcmp(s->snaps[i].id, id->str) != 0)
		i++;
	bool files = false;
	char why[4600];
	for (size_t k = 0; k < sizeof(s->files) / sizeof(s->files[0]); k++)
		files |= s->files[k].used;
	if (!id || !id->str) {
		sx_reply_error(reply, 400, "snapshot: a snapshot's id (\"p-\" and 16 hex digits) is required");
	} else if (i == s->nsnaps) {
		sx_reply_error(reply, 404, "no such snapshot in this session");
	} else if (s->restore_reply >= 0) {
		sx_reply_error(reply, 409, "the session is being restored already");
	} else if (s->paused) {
		sx_reply_error(reply, 409, "the session is paused: POST /v1/sessions/%s/resume first", s->id);
	} else if (files) {
		sx_reply_error(reply, 409, "a files call is under way in the session: try again");
	} else if (!s->rep || !s->rep->live_upper[0] || s->rep->live_init_pid <= 0) {
		sx_reply_error(reply, 409, "the session's workspace has no change set to restore: its workspace mode is direct (overlay and review keep one)");
	} else if (!sx_ws_own(s, why, sizeof(why))) {
		sx_reply_error(reply, 409, "%s", why);
	} else {
		s->restore_reply = reply;
		snprintf(s->restore_snap, sizeof(s->restore_snap), "%s", s->snaps[i].id);
		/* An exec not started yet (no MSG_SX_STARTED) is killed when it
		 * starts (session.c): until then the agent may be in its cgroup,
		 * and a kill of the cgroup would kill the agent. */
		for (size_t k = 0; k < s->nex; k++) {
			struct sx_exec *x = &s->ex[k];
			if (x->running && x->pid > 0)
				sx_signal_exec(s, x, SIGKILL, "restored");
			else if (x->running && !x->forced)
				x->forced = "restored";
		}
		sx_restore_step(s);
		return;
	}
	sx_close_fd(&reply);
}

void sx_restore_step(struct sx *s)
{
	if (s->restore_reply < 0)
		return;
	for (size_t k = 0; k < s->nex; k++)
		if (s->ex[k].running)
			return; /* its end comes back here */
	char why[1024] = "";
	unsigned code = 500;
	if (rebuild(s, &code, why, sizeof(why)) < 0) {
		if (strstr(why, "the workspace is as it was"))
			sx_reply_error(s->restore_reply, code, "restore: %s", why);
		else
			sx_reply_error(s->restore_reply, code, "restore: %s (the workspace may be part-way: restore again)", why);
	} else {
		char j[96];
		snprintf(j, sizeof(j), "{\"restored\":\"%s\"}", s->restore_snap);
		sx_reply_json(s->restore_reply, j);
	}
	sx_close_fd(&s->restore_reply);
}

void sx_restore_end(struct sx *s)
{
	if (s->restore_reply < 0)
		return;
	sx_reply_error(s->restore_reply, 410, "the session has ended");
	sx_close_fd(&s->restore_reply);
}
