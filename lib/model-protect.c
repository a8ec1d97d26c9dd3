/* The boundary model's protected names (protect.h): in every writable path
 * of the task, each name present (and a pin for each directory on its way),
 * the change sets' and cordon's own key directory, then their relocation
 * where the run sees a mount elsewhere. Part of model_build (model.c). */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cleanup.h"
#include "dirstream.h"
#include "changeset.h"
#include "compat.h"
#include "cs-seal.h"
#include "dirlist.h"
#include "model-internal.h"
#include "mounts.h"
#include "protect.h"
#include "snapshot.h"

/* The innermost of the plan's mounts that path lies in, or -1. */
static long innermost_mount(const struct run_plan *plan, const char *path)
{
	long best = -1;
	for (size_t i = 0; i < plan->nmounts; i++)
		if (path_has_prefix(path, plan->mounts[i].path) &&
		    (best < 0 || strlen(plan->mounts[i].path) > strlen(plan->mounts[best].path)))
			best = (long)i;
	return best;
}

static bool model_has(const struct boundary_model *m, const char *path, enum model_kind k)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].kind == k && strcmp(m->e[i].path, path) == 0)
			return true;
	return false;
}

/* One protected name in writable path w: a pin for each directory on the
 * way that exists, then the entry itself. A symlink anywhere on the way or
 * at the name refuses the run: an earlier run could have planted it so that
 * this one binds (or reports) something else, outside the workspace too. */
/* What the host showed for the paths looked at so far in one writable path:
 * the protected names share components (.git/config, .git/hooks, ...,
 * .config/git, .config/fish), and each look is a syscall or three. Every
 * answer is kept but a link's: anything not a directory ends one name's
 * walk, and the next name below it (.git/hooks after .git/config, where
 * .git is a file) walks to it again. */
struct probe_memo {
	strv paths;
	char *kind; /* the probe's answer ('d', 'r', 'h', 'L', 0), per path */
	/* With the host's own probe: the writable path's top names, read at
	 * once (dirlist.h); a name at the top that is not among them is absent
	 * without a look. top_len 0: none (look at each). */
	strv top;
	size_t top_len;
};

/* The names a scan of w's top reads at most; past that, one look each. */
#define MEMO_TOP_MAX 4096

static void memo_top(struct probe_memo *pm, model_probe_fn probe, const char *w)
{
	if (probe == model_probe_host && dirlist_read(w, MEMO_TOP_MAX, &pm->top) == 0)
		pm->top_len = strlen(w);
}

static int memo_probe(struct probe_memo *pm, model_probe_fn probe, const char *path, char *t, size_t tsz)
{
	for (size_t i = pm->paths.n; i-- > 0;)
		if (strcmp(pm->paths.v[i], path) == 0)
			return pm->kind[i];
	if (pm->top_len && path[pm->top_len] == '/' && !strchr(path + pm->top_len + 1, '/') &&
	    !dirlist_has(&pm->top, path + pm->top_len + 1, strlen(path + pm->top_len + 1)))
		return 0;
	int k = probe(path, false, t, tsz);
	/* Kept but a link's (its target is in t): a workspace whose .git is
	 * a file (a git worktree's, a submodule's) had it looked at again for
	 * each name below .git, three system calls each (issue 34). */
	if (k == 'l')
		return k;
	char *nk = realloc(pm->kind, pm->paths.n + 1);
	if (!nk)
		return k; /* not kept: looked at again next time */
	pm->kind = nk;
	if (strv_push(&pm->paths, path) == 0)
		pm->kind[pm->paths.n - 1] = (char)k;
	return k;
}

static void memo_free(struct probe_memo *pm)
{
	strv_free(&pm->paths);
	strv_free(&pm->top);
	free(pm->kind);
	memset(pm, 0, sizeof(*pm));
}

static int add_protected_one(struct boundary_model *m, const char *w, const char *name, enum source src,
			     model_probe_fn probe, struct probe_memo *pm, cordon_error *err)
{
	char path[4096], t[4096];
	if (snprintf(path, sizeof(path), "%s/%s", strcmp(w, "/") == 0 ? "" : w, name) >= (int)sizeof(path))
		return cordon_err(err, ENAMETOOLONG, "protected path %s/%s", w, name);
	size_t wl = strlen(w);
	int k = 'd';
	bool here = false;
	for (char *c = path + wl + 1; k == 'd'; c++) {
		bool last = *c == '\0';
		if (*c != '/' && !last)
			continue;
		*c = '\0';
		k = memo_probe(pm, probe, path, t, sizeof(t));
		if (k == 'l' || k == 'L')
			return cordon_err(err, 0, "protected path %s is a symbolic link%s (an earlier run could have planted it): cordon follows none there; remove it, or grant writes with --unprotect %s",
					  path, k == 'L' ? " or lies below one" : "", name);
		if (k == 'h')
			return cordon_err(err, 0, "protected path %s has another hard link (an earlier run could have made it): the run could change it by that name; replace it with a copy, or grant writes with --unprotect %s",
					  path, name);
		if (!last && (k == 'r' || k == 'h') && !model_has(m, path, MK_PROTECT)) {
			/* A file where a directory of the name would be: a gitfile
			 * (.git: "gitdir: ..."), read-only like the name itself. */
			struct model_entry e = {.kind = MK_PROTECT, .source = src, .view = VIEW_PROTECTED,
						.reason = "a file above a protected path (a .git file points git elsewhere): read-only",
						.mount = -1, .tree = -1, .explain_mode = "protected"};
			if (k == 'h')
				return cordon_err(err, 0, "protected path %s has another hard link (an earlier run could have made it): the run could change it by that name; replace it with a copy",
						  path);
			if (!(e.path = e.host = e.explain_path = model_own(m, path)) || !(e.target = model_own(m, path + wl + 1)) ||
			    model_push(m, &e, err) < 0)
				return cordon_oom(err);
		}
		if (!last && k == 'd' && !model_has(m, path, MK_PIN)) {
			struct model_entry e = {.kind = MK_PIN, .source = src, .view = VIEW_OUTSIDE,
						.reason = "above a protected path: bound onto itself, so it cannot be renamed away",
						.mount = -1, .tree = -1};
			if (!(e.path = e.host = model_own(m, path)) || model_push(m, &e, err) < 0)
				return cordon_oom(err);
		}
		if (last) {
			here = k != 0;
			break;
		}
		*c = '/';
	}
	/* Present only if every component was found (a directory on the way,
	 * then the name itself); else absent: a file on the way can be
	 * replaced by a directory, so the name stays protected. */
	snprintf(path, sizeof(path), "%s/%s", strcmp(w, "/") == 0 ? "" : w, name);
	struct model_entry e = {.kind = MK_PROTECT, .source = src, .view = VIEW_PROTECTED,
				.flags = here ? 0 : MODEL_NOT_YET,
				.reason = here ? "a control file the host runs or trusts: read-only"
					       : "a control file the host runs or trusts, absent: its creation is refused",
				.mount = -1, .tree = -1, .explain_mode = here ? "protected" : "protected (absent)"};
	if (!(e.path = e.host = e.explain_path = model_own(m, path)) || !(e.target = model_own(m, name)) || model_push(m, &e, err) < 0)
		return cordon_oom(err);
	return 0;
}

static int cmp_entry_path(const void *a, const void *b)
{
	return strcmp(((const struct model_entry *)a)->path, ((const struct model_entry *)b)->path);
}

static int add_changesets(struct boundary_model *m, const struct run_plan *plan, size_t i, model_probe_fn probe,
			  cordon_error *err);
static int add_keydir(struct boundary_model *m, const struct run_plan *plan, model_probe_fn probe,
		      cordon_error *err);
static int add_registered(struct boundary_model *m, const struct run_plan *plan, model_probe_fn probe,
			  cordon_error *err);

/* A home as writable path i (cordon_mount.home): each dot-entry present at
 * its top is protected (read-only, as a name of the list), unless a name
 * unprotected lies at or below it (one below: its directory stays
 * writable, the rest of it protected by name: the observer, the apply).
 * Absent ones are protect_match_in's. The top's entries are read
 * (bounded), nothing below. */
#define HOME_SCAN_MAX 100000
static int add_home(struct boundary_model *m, const struct run_plan *plan, const cordon_policy *p, size_t i,
		    model_probe_fn probe, cordon_error *err)
{
	const char *w = plan->mounts[i].path;
	int fd = open_root(w, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return 0;
	_cleanup_dstream_ struct dstream *d = dstream_open(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	struct probe_memo pm = {0};
	struct dirent *de;
	int rc = 0;
	for (size_t seen = 0; rc == 0 && (de = dstream_read(d)) && seen < HOME_SCAN_MAX; seen++) {
		const char *n = de->d_name;
		if (!protect_home_top(n, strlen(n)) || strcmp(n, ".") == 0 || strcmp(n, "..") == 0 ||
		    changeset_is_dirname(n))
			continue;
		bool lifted = false;
		size_t nl = strlen(n);
		for (size_t k = 0; !lifted && k < p->unprotect.n; k++)
			lifted = strncmp(p->unprotect.v[k], n, nl) == 0 &&
				 (p->unprotect.v[k][nl] == '\0' || p->unprotect.v[k][nl] == '/');
		char path[4096];
		if (lifted || snprintf(path, sizeof(path), "%s/%s", strcmp(w, "/") == 0 ? "" : w, n) >= (int)sizeof(path) ||
		    innermost_mount(plan, path) != (long)i || model_has(m, path, MK_PROTECT))
			continue;
		rc = add_protected_one(m, w, n, SRC_DEFAULT, probe, &pm, err);
		if (rc == 0)
			m->e[m->n - 1].reason = n[0] == '.' ? "a dot-entry at the top of a home directory: read-only"
							    : "bin at the top of a home directory (first on PATH): read-only";
	}
	memo_free(&pm);
	return rc;
}

/* Protected paths (protect.h) in every writable path of the task, where it
 * is the innermost mount; pins before what they hold (sorted by path). */
int model_add_protected(struct boundary_model *m, const struct run_plan *plan, const cordon_policy *p,
			 model_probe_fn probe, cordon_error *err)
{
	strv names;
	enum source *src = NULL;
	if (!p || protect_effective(p, &names, &src, err) < 0)
		return p ? -1 : 0;
	size_t first = m->n;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < plan->nmounts; i++) {
		const char *w = plan->mounts[i].path;
		char t[4096];
		if (plan->mounts[i].mode != MOUNT_RW || probe(w, false, t, sizeof(t)) != 'd')
			continue; /* a file granted writable holds no names */
		struct probe_memo pm = {0};
		if (strcmp(w, "/") != 0)
			memo_top(&pm, probe, w);
		for (size_t k = 0; rc == 0 && k < names.n; k++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", w, names.v[k]);
			if (innermost_mount(plan, path) == (long)i)
				rc = add_protected_one(m, w, names.v[k], src[k], probe, &pm, err);
		}
		memo_free(&pm);
		if (rc == 0 && plan->mounts[i].home)
			rc = add_home(m, plan, p, i, probe, err);
	}
	for (size_t i = 0; rc == 0 && i < plan->nmounts; i++)
		rc = add_changesets(m, plan, i, probe, err);
	if (rc == 0)
		rc = add_keydir(m, plan, probe, err);
	if (rc == 0)
		rc = add_registered(m, plan, probe, err);
	strv_free(&names);
	free(src);
	if (rc == 0)
		qsort(m->e + first, m->n - first, sizeof(*m->e), cmp_entry_path);
	return rc;
}

/* Change sets kept for review (.cordon-changes[-UID], anyone's) at the top
 * of path i of the task's, writable or not: masked in the run's view
 * (mounts.c: an empty read-only tmpfs over each), so that no run reads
 * another's change set. Present directories only; the top directory's
 * entries are read (bounded), nothing below. Writable paths have theirs
 * among the protected names already: made masked. */
#define CHANGESETS_SCAN_MAX 100000
static int add_changesets(struct boundary_model *m, const struct run_plan *plan, size_t i, model_probe_fn probe,
			  cordon_error *err)
{
	const char *w = plan->mounts[i].path;
	char t[4096];
	if (probe(w, false, t, sizeof(t)) != 'd')
		return 0;
	int fd = open_root(w, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return 0;
	_cleanup_dstream_ struct dstream *d = dstream_open(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	struct dirent *de;
	for (size_t seen = 0; (de = dstream_read(d)) && seen < CHANGESETS_SCAN_MAX; seen++) {
		if (!changeset_is_dirname(de->d_name))
			continue;
		char path[4096];
		if (snprintf(path, sizeof(path), "%s/%s", strcmp(w, "/") == 0 ? "" : w, de->d_name) >= (int)sizeof(path) ||
		    innermost_mount(plan, path) != (long)i || probe(path, false, t, sizeof(t)) != 'd')
			continue;
		struct model_entry *old = NULL;
		for (size_t k = 0; k < m->n && !old; k++)
			if (m->e[k].kind == MK_PROTECT && strcmp(m->e[k].path, path) == 0)
				old = &m->e[k];
		if (old) {
			old->reason = "change sets kept for review: masked (an empty read-only tmpfs)";
			old->explain_mode = "masked";
			continue;
		}
		struct model_entry e = {.kind = MK_PROTECT, .source = SRC_DEFAULT, .view = VIEW_PROTECTED,
					.reason = "change sets kept for review: masked (an empty read-only tmpfs)",
					.mount = -1, .tree = -1, .explain_mode = "masked"};
		if (!(e.path = e.host = e.explain_path = model_own(m, path)) || !(e.target = model_own(m, de->d_name)) ||
		    model_push(m, &e, err) < 0)
			return cordon_oom(err);
	}
	return 0;
}

/* The directory of the key that seals change sets (changeset.h): whoever
 * reads the key can lay out a change set that cordon applies. In any run's
 * view that reaches it, masked (an empty read-only tmpfs). In a writable
 * path, also a protected name: pinned above (not renamed away), and, while
 * absent, its creation refused (a key the run made would be adopted). A
 * path granted at or below it is refused (pol-plan.c). */
static int add_keydir(struct boundary_model *m, const struct run_plan *plan, model_probe_fn probe,
		      cordon_error *err)
{
	char kd[4096], t[4096];
	if (changeset_keydir(kd, sizeof(kd)) < 0)
		return 0;
	long i = innermost_mount(plan, kd);
	if (i < 0)
		return 0;
	const char *w = plan->mounts[i].path;
	size_t wl = strcmp(w, "/") == 0 ? 0 : strlen(w);
	if (strncmp(kd, w, wl) != 0 || kd[wl] != '/')
		return 0; /* the mount is the key's directory itself: refused by the plan */
	int k = probe(kd, false, t, sizeof(t));
	if (plan->mounts[i].mode == MOUNT_RW) {
		struct probe_memo pm = {0};
		int r = add_protected_one(m, w, kd + wl + 1, SRC_DEFAULT, probe, &pm, err);
		memo_free(&pm);
		if (r < 0)
			return -1;
		struct model_entry *e = &m->e[m->n - 1];
		if (k == 'd') {
			e->flags |= MODEL_MASKED;
			e->explain_mode = "masked";
		}
		e->reason = k == 'd' ? "the key that seals change sets: masked (an empty read-only tmpfs)"
				     : "the key that seals change sets, absent: its creation is refused";
		return 0;
	}
	if (k != 'd')
		return 0;
	struct model_entry e = {.kind = MK_PROTECT, .source = SRC_DEFAULT, .view = VIEW_PROTECTED,
				.flags = MODEL_MASKED,
				.reason = "the key that seals change sets: masked (an empty read-only tmpfs)",
				.mount = -1, .tree = -1, .explain_mode = "masked"};
	if (!(e.path = e.host = e.explain_path = model_own(m, kd)) || !(e.target = model_own(m, kd + wl + 1)) || model_push(m, &e, err) < 0)
		return cordon_oom(err);
	return 0;
}

/* The directories of change sets the user's cordon made (changeset.h),
 * at any depth of a path the run sees: masked like those at the top
 * (add_changesets), so that no run reads or alters a kept change set
 * below its workspace (outside review 7 F3). */
static int add_registered(struct boundary_model *m, const struct run_plan *plan, model_probe_fn probe,
			  cordon_error *err)
{
	strv sets = {0};
	cordon_error ke = {0};
	if (changeset_registered(&sets, &ke) < 0) {
		strv_free(&sets);
		return cordon_err(err, ke.code,
				  "%s: the kept change sets listed beside the change-set key cannot be masked without it; restore it (a run may have changed a mode on its way: chmod go-w), or remove it and its change sets",
				  ke.msg);
	}
	int rc = 0;
	for (size_t k = 0; rc == 0 && k < sets.n; k++) {
		const char *path = sets.v[k], *name = strrchr(path, '/');
		char t[4096];
		long i = innermost_mount(plan, path);
		if (!name || !changeset_is_dirname(name + 1) || i < 0 || model_has(m, path, MK_PROTECT))
			continue;
		errno = 0;
		int kind = probe(path, false, t, sizeof(t));
		if (kind == 0 && (errno == ENOENT || errno == ENOTDIR))
			continue; /* gone */
		if (kind != 'd') {
			/* Not where it was, and not gone: a directory on the way
			 * that cannot be searched, or a link put in its way. A
			 * run may have done it, to unmask it now. */
			rc = cordon_err(err, EACCES,
					"%s, a directory of kept change sets, cannot be looked at (%s) where the run would see it: a run may have changed the mode of a directory above it or replaced one with a link; restore it, or discard the change sets there",
					path, kind == 'L' ? "a symbolic link on the way" : kind ? "not a directory" : strerror(errno));
			break;
		}
		const char *w = plan->mounts[i].path;
		size_t wl = strcmp(w, "/") == 0 ? 0 : strlen(w);
		if (plan->mounts[i].mode == MOUNT_RW) {
			/* Pinned above (not renamed away to unmask it in a later
			 * run), and masked. */
			struct probe_memo pm = {0};
			rc = add_protected_one(m, w, path + wl + 1, SRC_DEFAULT, probe, &pm, err);
			memo_free(&pm);
			if (rc < 0)
				break;
			struct model_entry *e = &m->e[m->n - 1];
			e->flags |= MODEL_MASKED;
			e->explain_mode = "masked";
			e->reason = "change sets kept for review: masked (an empty read-only tmpfs)";
			continue;
		}
		struct model_entry e = {.kind = MK_PROTECT, .source = SRC_DEFAULT, .view = VIEW_PROTECTED,
					.flags = MODEL_MASKED,
					.reason = "change sets kept for review: masked (an empty read-only tmpfs)",
					.mount = -1, .tree = -1, .explain_mode = "masked"};
		if (!(e.path = e.host = e.explain_path = model_own(m, path)) || !(e.target = model_own(m, name + 1)) ||
		    model_push(m, &e, err) < 0)
			rc = cordon_oom(err);
	}
	strv_free(&sets);
	return rc;
}

/* Protected names, pins and masks are found on the host, below a mount's
 * host path: where the run sees that mount elsewhere (HOST:PATH, an
 * image's workspace), their view path follows it; host stays the host's. */
int model_relocate_at(struct boundary_model *m, const struct run_plan *plan, cordon_error *err)
{
	for (size_t k = 0; k < m->n; k++) {
		struct model_entry *e = &m->e[k];
		if ((e->kind != MK_PROTECT && e->kind != MK_PIN) || !e->host)
			continue;
		long i = innermost_mount(plan, e->host);
		const struct cordon_mount *cm = i >= 0 ? &plan->mounts[i] : NULL;
		if (!cm || !cm->at)
			continue;
		char path[8192];
		snprintf(path, sizeof(path), "%s%s", cm->at, e->host + (strcmp(cm->path, "/") ? strlen(cm->path) : 0));
		const char *v = model_own(m, path);
		if (!v)
			return cordon_oom(err);
		if (e->explain_path)
			e->explain_path = v;
		e->path = v;
	}
	return 0;
}
