/* Workspace modes: the overlay of each writable bind and its change set
 * (overlay.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "openat2.h"
#include "cleanup.h"
#include "compat.h"
#include "cs-apply.h"
#include "cs-rollback.h"
#include "cs-seal.h"
#include "cs-walk.h"
#include "error.h"
#include "layers.h"
#include "model.h"
#include "overlay.h"
#include "plan.h"
#include "protect.h"
#include "sync.h"

int overlay_begin(struct overlay_run *o, cordon_error *err)
{
	return o->active ? changeset_begin(&o->cs, err) : 0;
}

int overlay_send_layers(const struct overlay_run *o, int sock, cordon_error *err)
{
	for (size_t i = 0; o->fell_back && i < o->nmounts; i++)
		if (o->dirs[i] && sync_send(sock, MSG_OVERLAY, (int32_t)i, NULL, -1) < 0)
			return cordon_err_errno(err, "send no change set for %s", o->dirs[i]);
	for (size_t i = 0; o->active && i < o->nmounts; i++) {
		if (!o->dirs[i])
			continue;
		_cleanup_close_ int d = open_root(o->dirs[i], O_PATH | O_DIRECTORY);
		if (d < 0)
			return cordon_err_errno(err, "open the change set %s", o->dirs[i]);
		_cleanup_close_ int t = open_tree(d, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
		if (t < 0)
			return cordon_err_errno(err, "clone the change set %s", o->dirs[i]);
		if (sync_send(sock, MSG_OVERLAY, (int32_t)i, NULL, t) < 0)
			return cordon_err_errno(err, "send the change set %s", o->dirs[i]);
	}
	return 0;
}

/* Is overlayfs in /proc/filesystems (built in, or its module loaded)? */
static bool overlay_listed(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/filesystems", "re");
	char line[128];
	while (f && fgets(line, sizeof(line), f))
		if (strcmp(line, "nodev\toverlay\n") == 0 || strcmp(line, "\toverlay\n") == 0)
			return true;
	return false;
}

/* Has this kernel an overlay module to load (modules.dep of its release)? */
static bool overlay_module(void)
{
	struct utsname u;
	char path[sizeof(u.release) + 64], line[512];
	if (uname(&u) < 0)
		return false;
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.dep", u.release);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		const char *base = strrchr(line, '/');
		base = base ? base + 1 : line;
		if (strncmp(base, "overlay.ko", 10) == 0 && (base[10] == '\0' || base[10] == '.'))
			return true;
	}
	return false;
}

/* Is overlayfs there, or can it be? Built in or loaded; else a module: as
 * root, fsopen asks the kernel to load it now (as the first mount would);
 * an ordinary user cannot load one, but the overlay mount in the run's user
 * namespace makes the kernel load it (a filesystem's module is loaded on
 * its first use, by anyone): a module of this kernel's counts. */
static bool have_overlayfs(void)
{
	if (overlay_listed())
		return true;
	if (geteuid() == 0) {
		int fd = fsopen("overlay", FSOPEN_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			return true;
		}
		if (errno == ENODEV)
			return false;
	}
	return overlay_module();
}

/* Where the change set goes: next to the workspace (the first writable
 * bind when the workspace is not one), on its filesystem, so that applying
 * it is a rename. reason says why not, when it cannot be. */
static int changes_base_of(const struct run_plan *plan, const char *top, char *base, size_t sz, char *reason,
			   size_t rsz)
{
	snprintf(base, sz, "%s", top);
	char *slash = strrchr(base, '/');
	if (!slash || slash == base) {
		snprintf(reason, rsz, "%s has no parent directory for the change set", top);
		return -1;
	}
	*slash = '\0';
	/* Nothing the run sees may hold it: it would see (or write) its own
	 * change set, or another run's. */
	char dir[4096 + 80], name[64];
	changeset_dirname(name, sizeof(name));
	snprintf(dir, sizeof(dir), "%s/%s", base, name);
	for (size_t i = 0; i < plan->model.n; i++) {
		const struct model_entry *e = &plan->model.e[i];
		if ((e->kind == MK_RO_BIND || e->kind == MK_RW_BIND) && e->host && path_has_prefix(dir, e->host)) {
			snprintf(reason, rsz, "the change set's place %s is visible to the run (%s is bound)", dir,
				 e->host);
			return -1;
		}
	}
	return 0;
}

/* Next to the workspace if it is writable, else next to another writable
 * path: the first whose place the run cannot see. */
static int changes_base(const struct run_plan *plan, char *base, size_t sz, char *reason, size_t rsz)
{
	bool any = false;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < plan->nmounts; i++) {
			const char *m = plan->mounts[i].path;
			if (plan->mounts[i].mode != MOUNT_RW || (strcmp(m, plan->workspace) == 0) != (pass == 0))
				continue;
			char why[512];
			/* An image's directory: the change set goes beside the
			 * image, never into it (nor among its top-level entries). */
			if (plan->rootfs[0] && path_has_prefix(m, plan->rootfs))
				m = plan->rootfs;
			if (changes_base_of(plan, m, base, sz, why, sizeof(why)) == 0) {
				reason[0] = '\0'; /* an earlier path's reason is no obstacle */
				return 0;
			}
			if (!any)
				snprintf(reason, rsz, "%s", why);
			any = true;
		}
	return -1;
}

/* Why this plan cannot have overlays ("" if it can). */
static void overlay_obstacle(const struct run_plan *plan, char *base, size_t bsz, char *why, size_t wsz)
{
	why[0] = '\0';
	if (!have_overlayfs()) {
		snprintf(why, wsz, "this kernel has no overlayfs");
		return;
	}
	for (size_t i = 0; i < plan->nmounts; i++) {
		struct stat st;
		if (plan->mounts[i].mode == MOUNT_RW &&
		    (stat(plan->mounts[i].path, &st) < 0 || !S_ISDIR(st.st_mode))) {
			snprintf(why, wsz,
				 "the writable path %s is not a directory (overlayfs layers are directories; a file granted on its own makes the run direct)",
				 plan->mounts[i].path);
			return;
		}
	}
	if (changes_base(plan, base, bsz, why, wsz) < 0 && !why[0])
		snprintf(why, wsz, "nothing is writable");
}

static int fall_back(struct overlay_run *o, const cordon_policy *p, struct run_report *rep, const char *why,
		     cordon_error *err)
{
	/* A mode asked for holds unless allow_weaker says otherwise; the
	 * default is overlay where the kernel allows it, and direct (today's
	 * behaviour, said in the report) where it does not. */
	if (p->image_workspace)
		return cordon_err(err, EOPNOTSUPP, "workspace %s, a directory of the image: no change set can be had (%s), and it is never written directly",
				  p->image_workspace, why);
	if (p->workspace_mode_asked && !(p->allow_weaker & WEAK_WORKSPACE))
		return cordon_err(err, EOPNOTSUPP,
				  "workspace mode %s: %s (enforcement.allow_weaker \"workspace\" falls back to direct)",
				  workspace_mode_name(p->workspace_mode), why);
	o->mode = WS_DIRECT;
	rep->enf.workspace_mode = "direct";
	snprintf(rep->enf.workspace_mode_reason, sizeof(rep->enf.workspace_mode_reason),
		 "%s%s, direct instead: %s", workspace_mode_name(p->workspace_mode),
		 p->workspace_mode_asked ? " asked" : " (the default)", why);
	return 0;
}

int overlay_prepare(struct overlay_run *o, const cordon_policy *p, const struct run_plan *plan, uid_t uid,
		    gid_t gid, uid_t run_uid, gid_t run_gid, struct run_report *rep, cordon_error *err)
{
	memset(o, 0, sizeof(*o));
	o->cs.dirfd = -1;
	o->mode = policy_workspace_mode(p);
	rep->enf.workspace_mode = workspace_mode_name(o->mode);
	if (o->mode == WS_DIRECT)
		return 0;
	char base[4096], why[512];
	overlay_obstacle(plan, base, sizeof(base), why, sizeof(why));
	if (strcmp(why, "nothing is writable") == 0)
		return 0; /* the mode holds, with nothing to overlay */
	if (why[0])
		return fall_back(o, p, rep, why, err);
	const char *hosts[CHANGESET_MAX_LAYERS];
	size_t n = 0;
	o->nmounts = plan->nmounts;
	o->dirs = calloc(plan->nmounts, sizeof(char *));
	if (!o->dirs)
		return cordon_oom(err);
	for (size_t i = 0; i < plan->nmounts; i++) {
		if (plan->mounts[i].mode != MOUNT_RW)
			continue;
		if (n == CHANGESET_MAX_LAYERS)
			return fall_back(o, p, rep, "more writable paths than a change set holds", err);
		hosts[n++] = plan->mounts[i].path;
	}
	/* The run's protected names go with its change set: a later
	 * `cordon apply` holds back what this run's apply would. */
	strv names;
	if (protect_effective(p, &names, NULL, err) < 0)
		return -1;
	if (protect_add_home(plan, p, &names, err) < 0) {
		strv_free(&names);
		return -1;
	}
	/* The key that seals change sets, where a layer holds it: no apply
	 * puts a key the run chose there (model.c masks and protects it). */
	char kd[4096];
	for (size_t i = 0; i < n && changeset_keydir(kd, sizeof(kd)) == 0; i++) {
		size_t hl = strcmp(hosts[i], "/") ? strlen(hosts[i]) : 0;
		if (strncmp(kd, hosts[i], hl) == 0 && kd[hl] == '/' && strv_push(&names, kd + hl + 1) < 0) {
			strv_free(&names);
			return cordon_oom(err);
		}
	}
	cordon_error e = {0};
	int r = changeset_create(&o->cs, base, hosts, n, uid, gid, run_uid, run_gid, &names, &e);
	strv_free(&names);
	if (r < 0) {
		/* A half-made change set goes (nothing in it yet). */
		if (o->cs.dirfd >= 0)
			changeset_discard(&o->cs, &(cordon_error){0});
		changeset_close(&o->cs);
		snprintf(why, sizeof(why), "no change set next to the workspace: %s", e.msg);
		rep->enf.workspace_mode_warn = o->cs.squatted || o->cs.no_key;
		return fall_back(o, p, rep, why, err);
	}
	o->active = true;
	for (size_t i = 0, layer = 0; i < plan->nmounts; i++) {
		if (plan->mounts[i].mode != MOUNT_RW)
			continue;
		if (asprintf(&o->dirs[i], "%s/%zu", o->cs.dir, layer++) < 0) {
			o->dirs[i] = NULL;
			return cordon_oom(err);
		}
	}
	return 0;
}

static int open_dir_below(int root, const char *path)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH};
	while (*path == '/')
		path++;
	return sys_openat2(root, *path ? path : ".", &how);
}

/* The layer's directory, as a tree of init's own mount namespace (layers
 * must be: overlayfs clones them privately). */
static int attach_layer(int tree, size_t idx)
{
	char at[48];
	snprintf(at, sizeof(at), "/.cordon-layer-%zu", idx);
	if (mkdir(at, 0700) < 0 && errno != EEXIST)
		return -1;
	if (move_mount(tree, "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return -1;
	return open(at, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* The stack's trees attached (as attach_layer) and opened into fds. */
static int attach_stack(const int *stack, size_t n, int *fds, cordon_error *err)
{
	for (size_t i = 0; i < n; i++) {
		char at[48];
		snprintf(at, sizeof(at), "/.cordon-stack-%zu", i);
		if (stack[i] < 0)
			return cordon_err(err, EINVAL, "the workspace's layer %zu did not come", i);
		if ((mkdir(at, 0700) < 0 && errno != EEXIST) ||
		    move_mount(stack[i], "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH) < 0 ||
		    (fds[i] = open(at, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			return cordon_err_errno(err, "the workspace's layer %zu", i);
	}
	return 0;
}

int overlay_mount(int oldroot, int newroot, const char *path, const char *layer, int tree, size_t idx,
		  const int *stack, size_t nstack, cordon_error *err)
{
	_cleanup_close_ int lower = open_dir_below(newroot, path);
	if (lower < 0)
		return cordon_err_errno(err, "overlay %s: open the lower layer", path);
	_cleanup_close_ int ld = tree >= 0 ? attach_layer(tree, idx) : open_dir_below(oldroot, layer);
	if (ld < 0)
		return cordon_err_errno(err, "overlay %s: open the change set %s", path, layer);
	_cleanup_close_ int upper = open_dir_below(ld, "upper");
	_cleanup_close_ int work = open_dir_below(ld, "work");
	if (upper < 0 || work < 0)
		return cordon_err_errno(err, "overlay %s: open the change set's upper and work directories", path);
	/* The host directory is only ever read through the overlay. */
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
	if (mount_setattr(lower, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0)
		return cordon_err_errno(err, "overlay %s: make the lower layer read-only", path);
	/* The layers by fd, through the run's own /proc (mounted already):
	 * no path of the host's is parsed, whatever characters it has. */
	char l[64], u[64], w[64];
	snprintf(l, sizeof(l), "/newroot/proc/self/fd/%d", lower);
	snprintf(u, sizeof(u), "/newroot/proc/self/fd/%d", upper);
	snprintf(w, sizeof(w), "/newroot/proc/self/fd/%d", work);
	_cleanup_close_ int fs = fsopen("overlay", FSOPEN_CLOEXEC);
	if (fs < 0)
		return cordon_err_errno(err, "overlay %s: fsopen", path);
	/* userxattr: its marks (opaque directories) are user.overlay.*, as a
	 * user namespace requires; no redirects (nofollow: a merged directory
	 * renamed is copied by the renamer, EXDEV), no metacopy: every change
	 * is whole in the upper layer. */
	if ((!(stack && nstack) && fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", l, 0) < 0) ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", u, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "workdir", w, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "redirect_dir", "nofollow", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "metacopy", "off", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "index", "off", 0) < 0)
		return cordon_err_errno(err, "overlay %s: its options", path);
	if (stack && nstack) {
		/* The bind (the workspace's own directory) over its stack. */
		int fds[LAYERS_MAX + 1];
		size_t n = nstack > LAYERS_MAX ? LAYERS_MAX : nstack;
		for (size_t i = 0; i <= n; i++)
			fds[i] = -1;
		fds[0] = lower;
		int r = attach_stack(stack, n, fds + 1, err);
		if (r == 0)
			r = layers_create(fs, fds, n + 1, "/newroot/proc/self/fd", err);
		for (size_t i = 1; i <= n; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		if (r < 0)
			return cordon_err_wrap(err, "overlay %s", path);
	} else if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return cordon_err_errno(err, "overlay %s: create (overlayfs in a user namespace needs Linux 5.11 and an upper filesystem with user xattrs)",
					path);
	_cleanup_close_ int mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mnt < 0)
		return cordon_err_errno(err, "overlay %s: fsmount", path);
	/* overlayfs mounts read-only, silently, when it cannot use its work
	 * directory: that would be no workspace at all. */
	struct statvfs sv;
	if (fstatvfs(mnt, &sv) < 0 || (sv.f_flag & ST_RDONLY))
		return cordon_err(err, EROFS, "overlay %s: the change set is not writable by the run", path);
	if (move_mount(mnt, "", lower, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return cordon_err_errno(err, "overlay %s: move_mount", path);
	return 0;
}


void overlay_finish(struct overlay_run *o, const cordon_policy *p, bool ok, const char *base,
		    struct run_report *rep)
{
	if (!o->active)
		return;
	o->finished = true;
	struct changes_report *c = &rep->changes;
	c->present = true;
	cordon_error e = {0};
	/* What the run changed, hashed from the upper layer: what is applied. */
	file_list_free(&rep->outputs);
	file_list_start(&rep->outputs);
	struct changeset_held held = {&c->refused, &c->protected, &c->conflicts};
	size_t steps = 0;
	/* Most runs change nothing: an empty upper layer lists as nothing,
	 * without the walk (O(changes)). */
	bool unchanged = changeset_unchanged(&o->cs);
	if (unchanged) {
		/* outputs: started empty above, and that is all of it */
	} else if (changeset_list(&o->cs, base, &rep->outputs, &held, &steps, &e) < 0) {
		snprintf(c->reason, sizeof(c->reason), "the change set could not be listed: %s", e.msg);
		/* outputs is not what the run changed: said, never an empty list. */
		rep->outputs.truncated = true;
		if (rep->outputs.cut == CUT_NONE)
			rep->outputs.cut = CUT_WALK_ENTRIES;
	} else if (rep->outputs.truncated && (rep->outputs.cut == CUT_WALK_ENTRIES || rep->outputs.cut == CUT_WALK_DEPTH ||
					      rep->outputs.cut == CUT_WALK_PATH_BYTES))
		snprintf(c->reason, sizeof(c->reason), "the change set is beyond cordon's bounds (%s): kept, not applied",
			 cut_name(rep->outputs.cut));
	else if (steps > CHANGESET_MAX_APPLY_STEPS)
		snprintf(c->reason, sizeof(c->reason),
			 "the change set needs %zu synced steps (directories, deletions, groups of 256 files), more than the %d an apply at the end of a run takes: kept, not applied (cordon apply applies it)",
			 steps, CHANGESET_MAX_APPLY_STEPS);
	enum on_failure act = ok ? ONF_APPLY : p->on_failure;
	/* A run ok whose task check did not pass (issue 28.1). */
	const char *why = !ok && rep->status == ST_OK && (rep->task == TASK_FAIL || rep->task == TASK_ERROR)
				  ? (rep->task == TASK_FAIL ? "the task check failed (verdicts.task: fail)"
							    : "the task check could not run (verdicts.task: error)")
				  : "the run did not end ok";
	if (o->mode == WS_REVIEW)
		act = ONF_KEEP;
	if (c->reason[0])
		act = ONF_KEEP;
	if (act == ONF_APPLY) {
		/* The apply names them again. A host entry changed since the run
		 * started is not overwritten: held back (conflicts). */
		strv_free(&c->refused);
		strv_free(&c->protected);
		struct changeset_apply_opts ao = {.hold_conflicts = true, .crash_after = p->test_apply_crash_after};
		/* (nothing to apply: the change set goes, as an apply of it
		 * would end) */
		if ((unchanged ? changeset_discard(&o->cs, &e) : changeset_apply(&o->cs, &ao, &held, &e)) < 0) {
			act = ONF_KEEP;
			snprintf(c->reason, sizeof(c->reason), "the apply failed, the change set is kept (cordon apply completes it, cordon discard rolls it back): %s",
				 e.msg);
		} else if (c->refused.n || c->protected.n || c->conflicts.n) {
			c->state = "applied";
			snprintf(c->dir, sizeof(c->dir), "%s", o->cs.dir);
			snprintf(c->reason, sizeof(c->reason),
				 "not applied, kept in the change set: %zu refused, %zu protected (cordon apply --include-protected), %zu changed on the host since the run started (cordon apply --force)",
				 c->refused.n, c->protected.n, c->conflicts.n);
			return;
		} else {
			c->state = "applied";
			return;
		}
	}
	if (act == ONF_DISCARD) {
		if (changeset_discard(&o->cs, &e) == 0) {
			c->state = "discarded";
			snprintf(c->reason, sizeof(c->reason), "%s (on_failure: discard)", why);
			return;
		}
		snprintf(c->reason, sizeof(c->reason), "could not be discarded: %s", e.msg);
	}
	c->state = "kept";
	snprintf(c->dir, sizeof(c->dir), "%s", o->cs.dir);
	if (!c->reason[0] && o->mode == WS_REVIEW)
		snprintf(c->reason, sizeof(c->reason), "review mode: cordon changes, cordon apply or cordon discard");
	else if (!c->reason[0])
		snprintf(c->reason, sizeof(c->reason), "%s (on_failure: keep)", why);
}

int overlay_fall_back_late(struct overlay_run *o, const cordon_policy *p, struct run_report *rep, const char *why,
			   cordon_error *err)
{
	if (!o->active)
		return 0;
	int r = fall_back(o, p, rep, why, err);
	/* Nothing in it yet: init mounts after sync 2. It goes either way:
	 * a run refused here has no change set (nor changes in its report),
	 * and the directory of change sets goes too if this made it empty:
	 * no overlay is had on this filesystem, none will be made there. */
	char top[4096];
	snprintf(top, sizeof(top), "%s", o->cs.dir);
	char *sl = strrchr(top, '/');
	changeset_discard(&o->cs, &(cordon_error){0});
	changeset_close(&o->cs);
	if (sl && sl != top) {
		*sl = '\0';
		(void)rmdir(top); /* ENOTEMPTY: kept change sets are there */
	}
	o->active = false;
	o->fell_back = r == 0;
	return r;
}

bool overlay_on_host(const struct overlay_run *o, const struct run_report *rep)
{
	return !o->active || (rep->changes.state && strcmp(rep->changes.state, "applied") == 0);
}

void overlay_scan_root(const struct overlay_run *o, const char *workspace, char *out, size_t sz)
{
	out[0] = '\0';
	for (size_t i = 0; o->active && i < o->cs.nlayers; i++)
		if (strcmp(o->cs.host[i], workspace) == 0)
			snprintf(out, sz, "%s/%zu/upper", o->cs.dir, i);
}

void overlay_free(struct overlay_run *o)
{
	for (size_t i = 0; o->dirs && i < o->nmounts; i++)
		free(o->dirs[i]);
	free(o->dirs);
	o->dirs = NULL;
	/* A run that never got to its end (setup failed before the clone):
	 * its change set is empty, and goes. */
	if (o->active && !o->finished)
		changeset_discard(&o->cs, &(cordon_error){0});
	if (o->active)
		changeset_close(&o->cs);
	o->active = false;
}

/* ---- the task check's view of a change set (issue 28.1) ---- */

/* What the run left at rel below upper (a change set's upper/ directory,
 * the run over): 1 nothing (the host directory as it is), 0 a directory
 * (sub->alone: an opaque one on the way or there), else -1 and err (a
 * whiteout, a non-directory, a directory not readable on the way). Read
 * beneath upper, no link followed. */
static int view_walk(int upper, const char *rel, const char *path, struct overlay_sub *sub, cordon_error *err)
{
	_cleanup_close_ int d = fcntl(upper, F_DUPFD_CLOEXEC, 0);
	char name[256];
	if (d < 0)
		return cordon_err_errno(err, "the check's view of %s", path);
	sub->alone = false;
	for (const char *c = rel; *c;) {
		size_t n = strcspn(c, "/");
		if (n >= sizeof(name))
			return cordon_err(err, ENAMETOOLONG, "the check's view of %s: a name too long", path);
		memcpy(name, c, n);
		name[n] = '\0';
		c += n;
		c += strspn(c, "/");
		struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
				       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
						  RESOLVE_NO_XDEV};
		int nd = sys_openat2(d, name, &how);
		if (nd < 0 && errno == ENOENT && !sub->alone)
			return 1; /* the run changed nothing there */
		if (nd < 0 && errno == ENOENT)
			return cordon_err(err, ENOENT,
					  "the check's view of %s: the run removed it (a directory above it was made anew)",
					  path);
		if (nd < 0 && (errno == ENOTDIR || errno == ELOOP))
			return cordon_err(err, ENOTDIR,
					  "the check's view of %s: the run removed it (%s in its change set is no directory)",
					  path, name);
		if (nd < 0)
			return cordon_err_errno(err, "the check's view of %s: open %s in the change set", path, name);
		close(d);
		d = nd;
		char v[4];
		ssize_t vn = fgetxattr(d, "user.overlay.opaque", v, sizeof(v));
		if (vn < 0 && errno != ENODATA && errno != ENOTSUP)
			return cordon_err_errno(err, "the check's view of %s: read %s in the change set", path, name);
		if (vn == 1 && v[0] == 'y')
			sub->alone = true; /* the host's directory is hidden from here */
	}
	return 0;
}

/* The check's workspace (plan mount i), no path of the change set's: the
 * innermost mount around it, if that is one of the change set's layers,
 * shows what the run left there (issue 28.1). */
static int view_below(struct overlay_run *v, const struct overlay_run *task, const struct run_plan *plan, size_t i,
		      cordon_error *err)
{
	const char *path = plan->mounts[i].path;
	size_t around = plan->nmounts;
	for (size_t j = 0; j < plan->nmounts; j++)
		if (j != i && strcmp(plan->mounts[j].path, path) != 0 && path_has_prefix(path, plan->mounts[j].path) &&
		    (around == plan->nmounts || strlen(plan->mounts[j].path) > strlen(plan->mounts[around].path)))
			around = j;
	if (around == plan->nmounts || plan->mounts[around].mode != MOUNT_RO)
		return 0;
	size_t k = 0;
	while (k < task->cs.nlayers && strcmp(task->cs.host[k], plan->mounts[around].path) != 0)
		k++;
	if (k == task->cs.nlayers)
		return 0;
	const char *rel = path + (strcmp(plan->mounts[around].path, "/") ? strlen(plan->mounts[around].path) : 0);
	rel += strspn(rel, "/");
	char up[4200];
	snprintf(up, sizeof(up), "%s/%zu/upper", task->cs.dir, k);
	_cleanup_close_ int upper = open_root(up, O_RDONLY | O_DIRECTORY);
	if (upper < 0)
		return cordon_err_errno(err, "the check's view of %s: open the change set %s", path, up);
	if (!v->subs && !(v->subs = calloc(v->nmounts, sizeof(*v->subs))))
		return cordon_oom(err);
	int r = view_walk(upper, rel, path, &v->subs[i], err);
	if (r != 0)
		return r < 0 ? -1 : 0;
	if (!(v->subs[i].rel = strdup(rel)) || asprintf(&v->dirs[i], "%s/%zu", task->cs.dir, k) < 0) {
		v->dirs[i] = NULL;
		return cordon_oom(err);
	}
	return 0;
}

int overlay_view_prepare(struct overlay_run *v, const struct overlay_run *task, const struct run_plan *plan,
			 cordon_error *err)
{
	memset(v, 0, sizeof(*v));
	v->cs.dirfd = -1;
	if (!task || !task->active)
		return 0;
	v->nmounts = plan->nmounts;
	v->dirs = calloc(plan->nmounts ? plan->nmounts : 1, sizeof(char *));
	if (!v->dirs)
		return cordon_oom(err);
	for (size_t i = 0; i < plan->nmounts; i++) {
		if (plan->mounts[i].mode != MOUNT_RO)
			continue;
		for (size_t k = 0; k < task->cs.nlayers; k++)
			if (strcmp(task->cs.host[k], plan->mounts[i].path) == 0 &&
			    asprintf(&v->dirs[i], "%s/%zu", task->cs.dir, k) < 0) {
				v->dirs[i] = NULL;
				return cordon_oom(err);
			}
		if (!v->dirs[i] && plan->mounts[i].scratch && view_below(v, task, plan, i, err) < 0)
			return -1;
	}
	return 0;
}

int overlay_send_view(const struct overlay_run *v, int sock, cordon_error *err)
{
	for (size_t i = 0; v->dirs && i < v->nmounts; i++) {
		if (!v->dirs[i])
			continue;
		_cleanup_close_ int d = open_root(v->dirs[i], O_PATH | O_DIRECTORY);
		if (d < 0)
			return cordon_err_errno(err, "open the change set %s", v->dirs[i]);
		_cleanup_close_ int t = open_tree(d, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
		if (t < 0)
			return cordon_err_errno(err, "clone the change set %s", v->dirs[i]);
		if (sync_send(sock, MSG_OVERLAY, (int32_t)i, NULL, t) < 0)
			return cordon_err_errno(err, "send the change set %s", v->dirs[i]);
	}
	return 0;
}

void overlay_view_free(struct overlay_run *v)
{
	for (size_t i = 0; v->dirs && i < v->nmounts; i++)
		free(v->dirs[i]);
	free(v->dirs);
	v->dirs = NULL;
	for (size_t i = 0; v->subs && i < v->nmounts; i++)
		free(v->subs[i].rel);
	free(v->subs);
	v->subs = NULL;
}

/* One overlay over lower (the bind at path): lowerdir cs_upper (the task's
 * change set, -1: none) over lower (host false: cs_upper alone); with
 * upper/work (-1: none) writable, else read-only. Mounted over lower. */
static int mount_view(int lower, int cs_upper, bool host, int upper, int work, const char *path, cordon_error *err)
{
	/* The run's upper layer on top, its whiteouts and opaque directories
	 * (user.overlay.*) honoured; no redirects, no metacopy. */
	char l[160], u[64], w[64];
	if (cs_upper >= 0 && !host)
		snprintf(l, sizeof(l), "/newroot/proc/self/fd/%d", cs_upper);
	else if (cs_upper >= 0)
		snprintf(l, sizeof(l), "/newroot/proc/self/fd/%d:/newroot/proc/self/fd/%d", cs_upper, lower);
	else
		snprintf(l, sizeof(l), "/newroot/proc/self/fd/%d", lower);
	snprintf(u, sizeof(u), "/newroot/proc/self/fd/%d", upper);
	snprintf(w, sizeof(w), "/newroot/proc/self/fd/%d", work);
	_cleanup_close_ int fs = fsopen("overlay", FSOPEN_CLOEXEC);
	if (fs < 0)
		return cordon_err_errno(err, "the check's view of %s: fsopen overlay", path);
	if (fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", l, 0) < 0 ||
	    (upper >= 0 && (fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", u, 0) < 0 ||
			    fsconfig(fs, FSCONFIG_SET_STRING, "workdir", w, 0) < 0)) ||
	    fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "redirect_dir", "nofollow", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "metacopy", "off", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "index", "off", 0) < 0)
		return cordon_err_errno(err, "the check's view of %s: overlay options", path);
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return cordon_err_errno(err, "the check's view of %s: create the %s overlay%s", path,
					upper >= 0 ? "writable" : "read-only",
					upper >= 0 ? " (its filesystem must be one overlayfs takes as a lower layer, with at most one overlayfs below it)" : "");
	unsigned attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (upper >= 0 ? 0 : MOUNT_ATTR_RDONLY);
	_cleanup_close_ int mnt = fsmount(fs, FSMOUNT_CLOEXEC, attr);
	if (mnt < 0)
		return cordon_err_errno(err, "the check's view of %s: fsmount", path);
	/* overlayfs mounts read-only, silently, when it cannot use its work
	 * directory: then it is no scratch. */
	struct statvfs sv;
	if (upper >= 0 && (fstatvfs(mnt, &sv) < 0 || (sv.f_flag & ST_RDONLY)))
		return cordon_err(err, EROFS, "the check's view of %s: overlayfs made it read-only", path);
	if (move_mount(mnt, "", lower, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return cordon_err_errno(err, "the check's view of %s: move_mount", path);
	return 0;
}

/* The check's scratch (issue 28.2): a tmpfs of size bytes (and an inode
 * per KiB of it) attached at /.cordon-scratch-IDX of init's base tmpfs,
 * which the check never sees; its upper/ has the owner and mode of top,
 * the root the check would see without it, and work/. */
static int make_scratch(size_t idx, uint64_t size, int top, int *upper, int *work, cordon_error *err)
{
	struct stat st;
	if (fstat(top, &st) < 0)
		return cordon_err_errno(err, "stat the workspace");
	char sz[32], ni[32], at[48];
	snprintf(sz, sizeof(sz), "%llu", (unsigned long long)size);
	snprintf(ni, sizeof(ni), "%llu", (unsigned long long)(size / 1024 > 1024 ? size / 1024 : 1024));
	_cleanup_close_ int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return cordon_err_errno(err, "fsopen tmpfs");
	if (fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0700", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "size", sz, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", ni, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return cordon_err_errno(err, "create a tmpfs of %s bytes", sz);
	_cleanup_close_ int mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mnt < 0)
		return cordon_err_errno(err, "fsmount the tmpfs");
	snprintf(at, sizeof(at), "/.cordon-scratch-%zu", idx);
	if ((mkdir(at, 0700) < 0 && errno != EEXIST) || move_mount(mnt, "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return cordon_err_errno(err, "attach the tmpfs");
	_cleanup_close_ int d = open(at, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0 || mkdirat(d, "upper", 0700) < 0 || mkdirat(d, "work", 0700) < 0)
		return cordon_err_errno(err, "make the tmpfs's layers");
	/* The merged root is upper/: as the check would see it, else it
	 * could not write there (an owner not mapped here: no scratch). */
	if (fchownat(d, "upper", st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
		return cordon_err_errno(err, "give the scratch the workspace's owner %u:%u", (unsigned)st.st_uid,
					(unsigned)st.st_gid);
	if (fchmodat(d, "upper", st.st_mode & 07777, 0) < 0)
		return cordon_err_errno(err, "give the scratch the workspace's mode");
	*upper = open_dir_below(d, "upper");
	*work = open_dir_below(d, "work");
	if (*upper < 0 || *work < 0)
		return cordon_err_errno(err, "open the tmpfs's layers");
	return 0;
}

/* The run's own directory alone, read-only (overlayfs takes no single
 * lower layer without an upper one): a bind of it over lower. */
static int bind_alone(int lower, int cs_upper, const char *path, cordon_error *err)
{
	_cleanup_close_ int t = open_tree(cs_upper, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (t < 0)
		return cordon_err_errno(err, "the check's view of %s: clone the change set's directory", path);
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
	if (mount_setattr(t, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0)
		return cordon_err_errno(err, "the check's view of %s: make it read-only", path);
	if (move_mount(t, "", lower, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return cordon_err_errno(err, "the check's view of %s: move_mount", path);
	return 0;
}

int overlay_mount_view(int oldroot, int newroot, const char *path, const char *layer,
		       const struct overlay_sub *sub, int tree, size_t idx, uint64_t scratch, cordon_error *note,
		       cordon_error *err)
{
	_cleanup_close_ int lower = open_dir_below(newroot, path);
	if (lower < 0)
		return cordon_err_errno(err, "the check's view of %s: open the lower layer", path);
	_cleanup_close_ int ld = -1, cs_upper = -1;
	if (layer) {
		ld = tree >= 0 ? attach_layer(tree, idx) : open_dir_below(oldroot, layer);
		if (ld < 0)
			return cordon_err_errno(err, "the task's changes over %s: open the change set %s", path, layer);
		cs_upper = open_dir_below(ld, "upper");
		if (cs_upper < 0)
			return cordon_err_errno(err, "the task's changes over %s: open the change set's upper directory",
						path);
		if (sub && sub->rel) {
			/* Below the layer's path: its upper at rel (overlay.h). */
			int d = open_dir_below(cs_upper, sub->rel);
			if (d < 0)
				return cordon_err_errno(err, "the task's changes over %s: open %s in the change set",
							path, sub->rel);
			close(cs_upper);
			cs_upper = d;
		}
	}
	bool host = !(sub && sub->rel && sub->alone);
	if (scratch) {
		/* Writable, thrown away: an upper layer on a tmpfs of its own
		 * (ENOSPC when full). Where it cannot be had, the view stays
		 * read-only, and note says why. */
		_cleanup_close_ int upper = -1, work = -1;
		cordon_error e = {0};
		if (make_scratch(idx, scratch, cs_upper >= 0 ? cs_upper : lower, &upper, &work, &e) == 0 &&
		    mount_view(lower, cs_upper, host, upper, work, path, &e) == 0)
			return 0;
		*note = e;
	}
	/* Two lower layers and no upper: the merged view, read-only. Nothing
	 * the check does reaches either. Without a change set: the bind. */
	if (cs_upper >= 0 && !host)
		return bind_alone(lower, cs_upper, path, err);
	return cs_upper >= 0 ? mount_view(lower, cs_upper, true, -1, -1, path, err) : 0;
}
