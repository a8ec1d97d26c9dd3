/* The task check's own logic (sup-run.c runs it, as a second run): the
 * links the task left that lead into the check's view refuse it, the
 * check's policy is the task's with the outputs read-only, and its exit
 * status becomes the task verdict. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sup-check.h"
#include "pol-plan.h"
#include "pol-view.h"


/* target, read from the link at path (absolute), made absolute against the
 * link's directory and normalised lexically ("." and ".." resolved), into out. */
static void link_lexical(const char *path, const char *target, char *out, size_t outsz)
{
	char in[2 * PATH_MAX + 2];
	if (target[0] == '/')
		snprintf(in, sizeof(in), "%s", target);
	else {
		const char *slash = strrchr(path, '/');
		int dl = slash ? (int)(slash - path) : 0;
		snprintf(in, sizeof(in), "%.*s/%s", dl, path, target);
	}
	size_t n = 0;
	out[0] = '\0';
	for (char *save = NULL, *c = strtok_r(in, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
			out[n] = '\0';
			continue;
		}
		size_t cl = strlen(c);
		if (n + 1 + cl + 1 > outsz)
			break;
		out[n++] = '/';
		memcpy(out + n, c, cl + 1);
		n += cl;
	}
	if (n == 0)
		snprintf(out, outsz, "/");
}

/* Where a link must not lead when the check reads the task's results: its
 * own files (CHECK_FILES_DIR, or CHECK_FILES_DIR-<random>), its own /proc
 * (/proc/self/cwd is the check's working directory), its standard streams. */
static const char *check_only_place(const char *abs)
{
	static const char *const places[] = {"/proc", "/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr",
					     CHECK_FILES_DIR, NULL};
	for (const char *const *pl = places; *pl; pl++)
		if (path_has_prefix(abs, *pl))
			return *pl;
	size_t cl = strlen(CHECK_FILES_DIR);
	if (strncmp(abs, CHECK_FILES_DIR "-", cl + 1) == 0)
		return CHECK_FILES_DIR "-*";
	return NULL;
}

/* Every symbolic link in the task's writable paths (read beneath their
 * roots, never followed): one that leads to a check-only place fills reason
 * and returns true; so does a walk cut short (a link could hide beyond). */
static bool links_into_check(const strv *writable, const char *const *shown, char *reason, size_t rsz)
{
	if (!writable->n)
		return false;
	struct snapshot snap;
	cordon_error e = {0};
	if (snapshot_take(&snap, (const char *const *)writable->v, writable->n, &e) < 0) {
		snprintf(reason, rsz, "the task's writable paths could not be searched for links before the check: %s", e.msg);
		return true;
	}
	bool bad = false;
	if (snap.truncated) {
		snprintf(reason, rsz, "the task's writable paths are too large to search for links before the check (%s)",
			 cut_name(snap.cut));
		bad = true;
	}
	for (size_t i = 0; !bad && i < snap.n; i++) {
		const struct snap_entry *en = &snap.e[i];
		if (!S_ISLNK(en->mode) || en->root >= snap.nroots || snap.rootfd[en->root] < 0)
			continue;
		const char *path = snap_path(&snap, en);
		const char *rel = path + snap.rootlen[en->root];
		while (*rel == '/')
			rel++;
		char as_shown[PATH_MAX]; /* a change set's upper layer: the host path */
		if (shown) {
			snprintf(as_shown, sizeof(as_shown), "%s%s%s", shown[en->root],
				 *rel && strcmp(shown[en->root], "/") ? "/" : "", rel);
			path = as_shown;
		}
		const char *name = strrchr(rel, '/');
		char dir[PATH_MAX];
		if (name)
			snprintf(dir, sizeof(dir), "%.*s", (int)(name - rel), rel);
		else
			snprintf(dir, sizeof(dir), ".");
		name = name ? name + 1 : rel;
		_cleanup_close_ int dfd = open_beneath(snap.rootfd[en->root], dir, O_PATH | O_DIRECTORY);
		char target[PATH_MAX], abs[PATH_MAX];
		ssize_t tl = dfd >= 0 ? readlinkat(dfd, name, target, sizeof(target) - 1) : -1;
		if (tl < 0)
			continue; /* gone, or no longer a link: nothing to follow */
		target[tl] = '\0';
		link_lexical(path, target, abs, sizeof(abs));
		const char *where = check_only_place(abs);
		if (where) {
			snprintf(reason, rsz, "the task left a symbolic link %s -> %s, which leads into %s (the check's own view): the check did not run; read results without following links",
				 path, target, where);
			for (char *c = reason; *c; c++) /* the run chose those bytes */
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					*c = '?';
			bad = true;
		}
	}
	snapshot_free(&snap);
	return bad;
}

/* The same for the links a change set holds (upper layers), each read as
 * if it were at its host path. */
static bool links_in_changes(const struct overlay_run *o, char *reason, size_t rsz)
{
	strv uppers = {0};
	const char *shown[CHANGESET_MAX_LAYERS];
	char dir[PATH_MAX];
	bool bad = false;
	for (size_t i = 0; i < o->cs.nlayers && !bad; i++) {
		snprintf(dir, sizeof(dir), "%s/%zu/upper", o->cs.dir, i);
		shown[uppers.n] = o->cs.host[i];
		if (strv_push(&uppers, dir) < 0) {
			snprintf(reason, rsz, "out of memory");
			bad = true;
		}
	}
	if (!bad)
		bad = links_into_check(&uppers, shown, reason, rsz);
	strv_free(&uppers);
	return bad;
}

/* The task check: after the command completed (ok or exit-nonzero; a run
 * stopped by a limit or a policy kill leaves the task "not-run"), the check
 * command runs in a fresh boundary with the same policy and the outputs
 * visible read-only; its exit status alone decides the task verdict. */
int sup_check_policy(const cordon_policy *p, struct run_report *rep, const struct overlay_run *view,
		     cordon_policy **out, cordon_error *err)
{
	char ws[4096];
	cordon_error e = {0};
	*out = NULL;
	if (run_workspace(p, ws, sizeof(ws), &e) < 0) {
		/* the check cannot be set up: a verdict of its own */
		rep->check_ran = true;
		rep->check_status = ST_SETUP_ERROR;
		rep->check_exit_code = -1;
		rep->task = TASK_ERROR;
		snprintf(rep->check_reason, sizeof(rep->check_reason), "%s", e.msg);
		return 0;
	}
	/* A link the task left that leads where only the check can look (its
	 * files, its own /proc, its standard streams) would have the check
	 * compare its own data with itself: the check does not run. */
	if (links_into_check(&rep->writable, NULL, rep->check_reason, sizeof(rep->check_reason)) ||
	    (view && view->active && links_in_changes(view, rep->check_reason, sizeof(rep->check_reason)))) {
		rep->check_ran = true;
		rep->check_status = ST_SETUP_ERROR;
		rep->check_exit_code = -1;
		rep->task = TASK_ERROR;
		return 0;
	}
	cordon_policy *cp = policy_for_check(p, ws);
	if (!cp)
		return cordon_oom(err);
	/* check.files stays outside what the task could write, as its plan said. */
	for (size_t i = 0; i < rep->writable.n; i++)
		if (strv_push(&cp->check_writable, rep->writable.v[i]) < 0) {
			policy_free(cp);
			return cordon_oom(err);
		}
	*out = cp;
	return 0;
}

int sup_check_verdict(struct run_report *rep, const struct run_report *crep, const cordon_policy *cp,
		      cordon_error *err)
{
	rep->check_ran = true;
	rep->check_status = crep->status;
	rep->check_exit_code = crep->exit_code;
	rep->check_wall_seconds = crep->wall_seconds;
	/* A check that could not be set up says nothing about the task:
	 * a verdict of its own, with the reason. */
	bool not_run = crep->status == ST_SETUP_ERROR || crep->status == ST_UNAUTHORIZED ||
		       crep->status == ST_INFEASIBLE;
	rep->task = not_run ? TASK_ERROR : crep->status == ST_OK ? TASK_PASS : TASK_FAIL;
	/* Its workspace: writable and thrown away, or read-only (why). */
	bool scratch = false;
	for (size_t i = 0; i < cp->nmounts; i++)
		scratch |= cp->mounts[i].scratch;
	if (!not_run && scratch)
		rep->check_workspace = crep->check_workspace_reason[0] ? "read-only" : "scratch";
	snprintf(rep->check_workspace_reason, sizeof(rep->check_workspace_reason), "%s",
		 crep->check_workspace_reason);
	if (not_run)
		snprintf(rep->check_reason, sizeof(rep->check_reason), "%s",
			 crep->reason[0] ? crep->reason : status_name(crep->status));
	/* The check is untrusted code too: its denials count. */
	if (report_add_check_denials(rep, crep) < 0)
		return cordon_oom(err);
	return 0;
}
