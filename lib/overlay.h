/* Workspace modes (README, "Workspace modes"): in overlay and review mode
 * each writable bind of the run is an overlayfs whose lower layer is the
 * host directory and whose upper layer is a change set cordon owns
 * (changeset.h). The run sees its own writes at once, the host none of them
 * until the change set is applied, after the run (overlay), or by
 * `cordon apply` (review).
 *
 * Supervisor side: overlay_prepare before clone (decide the mode, create the
 * change set, open its layers: init inherits the fds), overlay_finish after
 * the run (list the changes as outputs, then apply, keep or discard).
 * Init side: overlay_mount, over the bind mounts.c has just attached. */
#pragma once
#include <stdbool.h>
#include "changeset.h"
#include "policy.h"
#include "report.h"

struct run_plan;

struct overlay_run {
	enum workspace_mode mode; /* in effect */
	bool active;              /* a change set exists for this run */
	bool finished;            /* overlay_finish ran */
	bool fell_back;           /* after clone (overlay_fall_back_late): dirs stay, unused */
	struct changeset cs;
	/* Per plan mount: its layer's directory in the change set (host
	 * path), NULL for a mount with no overlay. Init opens it through its
	 * /oldroot: overlayfs takes layers of the mounter's own namespace. */
	char **dirs;
	size_t nmounts;
	/* A task check's view (overlay_view_prepare), per plan mount, or
	 * NULL: where its dirs[i] is a layer of a path above the mount. */
	struct overlay_sub *subs;
};

/* A task check's workspace below a path of the task's change set (its cwd
 * inside a declared writable path, issue 28.1): what the run left there is
 * rel below the layer's upper/; alone: the host directory does not show
 * beneath it (the run made it, or a directory above it, anew: opaque). */
struct overlay_sub {
	char *rel; /* NULL: the mount is the layer's own path */
	bool alone;
};

/**
 * overlay_prepare() - decide the run's workspace mode and make its change set.
 * @o:    filled; release with overlay_free.
 * @p:    the policy (workspace_mode, allow_weaker).
 * @plan: the run's plan (its writable binds, what the run sees).
 * @uid, @gid:         the invoking user (owner of the change set).
 * @run_uid, @run_gid: the run's host identity (writes the upper layers).
 * @rep:  enforcement.workspace_mode and its reason are set here.
 * Where overlay cannot be had (no overlayfs, a writable path that is a
 * file, no place for the change set that the run cannot see) the run falls
 * back to direct mode with the reason, if allow_weaker has "workspace";
 * else -1 with err naming the reason.
 */
int overlay_prepare(struct overlay_run *o, const cordon_policy *p, const struct run_plan *plan, uid_t uid,
		    gid_t gid, uid_t run_uid, gid_t run_gid, struct run_report *rep, cordon_error *err);
/* Init, in its user and mount namespaces: an overlay at path below newroot,
 * whose lower layer is what is mounted there now (made read-only), upper
 * and work in layer: tree (>= 0, from overlay_send_layers; attached at
 * /.cordon-layer-IDX of init's base tmpfs), else the host path layer
 * opened below oldroot with no symlink followed. No allocation. */
int overlay_mount(int oldroot, int newroot, const char *path, const char *layer, int tree, size_t idx,
		  const int *stack, size_t nstack, cordon_error *err);
/* stack (NULL: none): nstack detached trees (MSG_LAYER), the workspace's
 * shared lower layers (layers.h) below the bind at path, top first; each
 * attached at /.cordon-stack-N of init's base tmpfs. */
/* As root, after clone: each layer's directory cloned (open_tree) and sent
 * to init as MSG_OVERLAY: init attaches it in its base tmpfs (the run never
 * sees that) and takes the layers from there. After overlay_fall_back_late,
 * MSG_OVERLAY without an fd per layer instead: init binds the path plainly
 * (overlay_trees[i] = OVERLAY_NONE). */
#define OVERLAY_NONE (-2)
/* The run starts (before its command may): its change set's start stamp,
 * meta and seal (changeset_begin). Nothing to do unless active. */
int overlay_begin(struct overlay_run *o, cordon_error *err);
int overlay_send_layers(const struct overlay_run *o, int sock, cordon_error *err);
/* After the run, when no process of it is left: the changes become the
 * report's outputs (hashed from the upper layer), then the change set is
 * applied (overlay mode; a run not ok: as on_failure says), kept (review)
 * or discarded. rep->changes says which. */
void overlay_finish(struct overlay_run *o, const cordon_policy *p, bool ok, const char *base,
		    struct run_report *rep);
/* Did what outputs lists reach the host (direct mode, or a change set
 * applied)? Else the sweep has nothing of the run's on the host to look at,
 * and the exposure scan reads the change set's first layer instead
 * (overlay_scan_root). */
bool overlay_on_host(const struct overlay_run *o, const struct run_report *rep);
/* The workspace's upper directory (host path), for the exposure scan of a
 * change set that was not applied (outputs are relative to the workspace);
 * "" if the workspace has no layer. */
void overlay_scan_root(const struct overlay_run *o, const char *workspace, char *out, size_t sz);
void overlay_free(struct overlay_run *o);
/* As root, after clone and before sync 2 (init has mounted nothing yet):
 * a writable path whose filesystem has no idmapped mounts (found only
 * then, with init's user namespace) cannot be overlaid. The run falls back
 * to direct as overlay_prepare would (the default, or allow_weaker
 * "workspace"), its empty change set removed; else -1, err says why. */
int overlay_fall_back_late(struct overlay_run *o, const cordon_policy *p, struct run_report *rep, const char *why,
			   cordon_error *err);
/* The task check's view in overlay and review mode (issue 28.1): each of
 * the check's read-only binds of a path the task's change set has a layer
 * for shows that layer's upper directory over the host directory, as one
 * read-only overlay (two lower layers, no upper): the check sees the run's
 * result before anything is applied, and cannot change it.
 * overlay_view_prepare fills v->dirs per plan mount of the check's run
 * from the task's change set (v->dirs NULL when task has none);
 * overlay_send_view sends each layer to init as root (as
 * overlay_send_layers); overlay_mount_view is init's mount;
 * overlay_view_free releases v (never the change set).
 * The check's workspace (issue 28.2; model.h MODEL_SCRATCH) is writable
 * and thrown away: overlay_mount_view with scratch > 0 (bytes) gives the
 * same view (layer NULL: the bind alone as the lower layer) an upper
 * layer on a tmpfs of that size, which init mounts where the check never
 * looks and which goes with the check's mount namespace. Where that
 * cannot be had the view stays read-only (as without scratch) and note
 * says why (sent to the supervisor as MSG_CHECK_RO).
 * A check's workspace that is no path of the change set's but lies below
 * one (the task's cwd inside a declared writable path) shows that layer's
 * upper/ at the sub-path over the host directory (v->subs, sub in
 * overlay_mount_view; the supervisor walks the path in the change set:
 * nothing there is the host directory alone, an opaque directory on the
 * way hides the host's, a whiteout or a non-directory on the way is an
 * error: the run removed the workspace). */
int overlay_view_prepare(struct overlay_run *v, const struct overlay_run *task, const struct run_plan *plan,
			 cordon_error *err);
int overlay_send_view(const struct overlay_run *v, int sock, cordon_error *err);
int overlay_mount_view(int oldroot, int newroot, const char *path, const char *layer,
		       const struct overlay_sub *sub, int tree, size_t idx, uint64_t scratch, cordon_error *note,
		       cordon_error *err);
void overlay_view_free(struct overlay_run *v);
