/* The supervisor's steps between sync 1 and sync 2 (steps 9 and 11 of
 * sup-run.c), in parallel with init building its view: the idmapped trees
 * and a check's files sent as root, the run's cgroup named for its view,
 * the pins kept above protected names. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sup-steps.h"
#include "cgroup-v2.h"
#include "layers.h"
#include "mounts-prep.h"

/* As root: a check's files are opened with the supervisor's credentials,
 * made read-only and sent as the tree after the mounts'. */
static int send_check_files(struct sup *s, int userns, cordon_error *err)
{
	struct cordon_mount m = {MOUNT_RO, s->plan.check_files, 0, SRC_POLICY, false};
	int fd = -1;
	bool plain = false;
	if (mounts_prepare_idmapped(&m, 1, userns, &fd, &plain, err) < 0)
		return cordon_err_wrap(err, "check.files");
	int r = 0;
	if (sync_send(s->sock, MSG_TREE, (int32_t)s->plan.nmounts, NULL, fd) < 0)
		r = cordon_err_errno(err, "send the check's files");
	close(fd);
	return r;
}

/* As root: every bind is cloned here, with the supervisor's credentials (a
 * source below a 0700 directory works). rw binds, and the check's view of
 * what the task could write, become idmapped trees through U1 (init's user
 * namespace, which maps the invoking user to the run's host identity), so
 * files created inside belong to the invoking user; ro binds are idmapped
 * where the filesystem allows it. Each tree goes to init over the socket. */
int sup_send_idmapped_trees(struct sup *s, cordon_error *err)
{
	bool any_rw = false, any_bind = false;
	for (size_t i = 0; i < s->plan.nmounts; i++) {
		any_rw |= s->plan.mounts[i].mode == MOUNT_RW || s->plan.mounts[i].owned;
		any_bind |= s->plan.mounts[i].mode != MOUNT_TMPFS;
	}
	if (!any_bind && !s->plan.check_files[0])
		return 0;
	if (!s->privileged && s->pol->ws_layers.n)
		return cordon_err(err, EPERM, "the workspace is a stack of layers (a fork's): only a server running as root mounts it");
	if (!s->privileged) {
		if (any_rw)
			s->rep->enf.workspace_ownership = "invoking-uid";
		return 0;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)s->pid);
	/* A serve client's: its files are the run's, everyone else's their
	 * owner's (U1 maps no one else, and the kernel lets nothing be written
	 * through an idmapped mount whose owner it does not map). */
	_cleanup_close_ int userns = s->pol->for_client ? ns_swap_userns(s->host_uid, s->sb_uid, s->host_gid, s->sb_gid, err)
							 : open(path, O_RDONLY | O_CLOEXEC);
	if (userns < 0)
		return s->pol->for_client ? -1 : cordon_err_errno(err, "open %s", path);
	int *fds = calloc(s->plan.nmounts, sizeof(int));
	bool *no_idmap = calloc(s->plan.nmounts, sizeof(bool));
	if (!fds || !no_idmap) {
		free(fds);
		free(no_idmap);
		return cordon_oom(err);
	}
	int r = mounts_prepare_idmapped(s->plan.mounts, s->plan.nmounts, userns, fds, no_idmap, err);
	/* The workspace's tree as mounted, fstat'd once: the directory cordon
	 * was started in, not what its name leads to now (a concurrent run
	 * may have rearranged it); what a session's restore and fork judge
	 * (sx_ws_own); and where a stack may be mounted (a fork's: only over
	 * the session's own directory, whatever its name led to when the
	 * fork was asked for; outside review attack20). */
	bool ws_seen = false;
	for (size_t i = 0; r == 0 && i < s->plan.nmounts; i++) {
		struct stat st;
		if (fds[i] < 0 || strcmp(s->plan.mounts[i].path, s->plan.workspace) != 0)
			continue;
		bool got = fstat(fds[i], &st) == 0;
		if (s->plan.ws_ino && (!got || st.st_dev != s->plan.ws_dev || st.st_ino != s->plan.ws_ino)) {
			r = cordon_err(err, 0, "the workspace %s is no longer the current directory cordon was started in (a component was moved or replaced): refusing it",
				       s->plan.workspace);
			break;
		}
		if (!got)
			continue;
		ws_seen = true;
		s->rep->live_ws_dev = st.st_dev;
		s->rep->live_ws_ino = st.st_ino;
		if (s->pol->ws_layers.n && !layers_own_workspace(s->pol->ws_layers_list, st.st_dev, st.st_ino))
			r = cordon_err(err, EPERM, "the workspace is a stack of layers (a fork's), which only the session's own directory holds: %s is not it",
				       s->plan.workspace);
	}
	if (r == 0 && s->pol->ws_layers.n && !ws_seen)
		r = cordon_err(err, EPERM, "the workspace is a stack of layers (a fork's), which only the session's own directory holds: %s is not a tree of the run's",
			       s->plan.workspace);
	/* A serve client's overlay of a tree that is not its own: the upper
	 * layer's root would be the run's, and root's apply would carry out
	 * what the client may not (remove root's file from a sticky /tmp).
	 * Direct instead, where the kernel checks each change as the client. */
	for (size_t i = 0; r == 0 && s->pol->for_client && s->ovl.active && i < s->plan.nmounts; i++) {
		struct stat st;
		/* (seen through the idmapping: the client's files are sb_uid's) */
		if (fds[i] >= 0 && s->plan.mounts[i].mode == MOUNT_RW && fstat(fds[i], &st) == 0 &&
		    st.st_uid != s->sb_uid) {
			char why[4200];
			snprintf(why, sizeof(why), "%s is not the client's (uid %u): an overlay of it would let the run's changes be applied with more than the client's rights",
				 s->plan.mounts[i].path, (unsigned)s->host_uid);
			r = overlay_fall_back_late(&s->ovl, s->pol, s->rep, why, err);
		}
	}
	for (size_t i = 0; i < s->plan.nmounts; i++) {
		if (fds[i] < 0)
			continue;
		if (r == 0 && sync_send(s->sock, MSG_TREE, (int32_t)i, NULL, fds[i]) < 0)
			r = cordon_err_errno(err, "send the idmapped tree of %s", s->plan.mounts[i].path);
		close(fds[i]);
	}
	free(fds);
	/* A stacked fork's workspace: its shared layers, as its own tree. */
	if (r == 0 && s->pol->ws_layers.n && (s->pol->for_client || !s->ovl.active))
		r = cordon_err(err, EINVAL, "the workspace is a stack of layers (a fork's), which needs an overlay workspace of the server's own");
	for (size_t i = 0; r == 0 && i < s->pol->ws_layers.n; i++) {
		int t = mounts_prepare_layer(s->pol->ws_layers.v[i], userns, err);
		if (t < 0)
			r = -1;
		else if (sync_send(s->sock, MSG_LAYER, (int32_t)i, NULL, t) < 0)
			r = cordon_err_errno(err, "send the workspace's layer %s", s->pol->ws_layers.v[i]);
		if (t >= 0)
			close(t);
	}
	if (r == 0 && s->plan.check_files[0])
		r = send_check_files(s, userns, err);
	/* No idmapped mounts on this filesystem: a plain bind, and the invoking
	 * user's files belong to the run's host uid for the run (never host uid
	 * 0); give_back_workspace returns them, and the run's new files. */
	s->handed = no_idmap;
	const char *plain = NULL;
	for (size_t i = 0; r == 0 && i < s->plan.nmounts; i++) {
		if (!no_idmap[i])
			continue;
		plain = s->plan.mounts[i].path;
		/* An overlay of it would leave its files the host's, unreadable
		 * to the run's uid: direct instead, where the mode allows it. */
		if (s->ovl.active) {
			char why[4200];
			snprintf(why, sizeof(why), "the filesystem of %s has no idmapped mounts, which an overlay of it needs as root",
				 plain);
			r = overlay_fall_back_late(&s->ovl, s->pol, s->rep, why, err);
		}
		if (r == 0)
			r = mounts_hand_tree(plain, s->host_uid, s->host_gid, s->sb_uid, s->sb_gid, err);
	}
	if (r == 0 && plain) {
		s->rep->enf.workspace_ownership = "chown";
		snprintf(s->rep->enf.workspace_ownership_reason, sizeof(s->rep->enf.workspace_ownership_reason),
			 "the filesystem of %s has no idmapped mounts (EINVAL; tmpfs before Linux 6.3, some FUSE and network filesystems): a plain bind, with your files handed to the run's uid %u for the run and back to you after it",
			 plain, (unsigned)s->sb_uid);
		sup_trace(s, "workspace handed to the run's uid");
	} else if (r == 0 && any_rw) {
		s->rep->enf.idmapped_workspace = true;
		s->rep->enf.workspace_ownership = "idmapped";
		sup_trace(s, "idmapped trees sent");
	}
	return r;
}

/* cgroup v1: init moves itself into the run's cgroup, writing "0" to each
 * hierarchy's "tasks" file, which the supervisor opened (the kernel checks
 * a move with the opener's credentials). A move of a process by PID
 * (cgroup.procs) takes the kernel's threadgroup lock for writing, which
 * waits for an RCU grace period: 10 to 15 ms on a loaded 2-core virtual
 * machine, on every run. A thread's move of itself does not take it, and
 * init is one thread (a clone of the supervisor's calling thread). */
int sup_send_cgroup_join(struct sup *s, cordon_error *err)
{
	for (int i = 0; i < s->cg.ndirs; i++) {
		char p[4300];
		snprintf(p, sizeof(p), "%s/tasks", s->cg.dirs[i]);
		int fd = open(p, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return cordon_err_errno(err, "open %s", p);
		int r = sync_send(s->sock, MSG_CGJOIN, i, NULL, fd);
		close(fd);
		if (r < 0)
			return cordon_err_errno(err, "send the run's cgroup %s", s->cg.dirs[i]);
	}
	return 0;
}

/* The run sees its own cgroup, read-only, at /sys/fs/cgroup, as in a
 * container: node, the JVM and Go size their heaps and threads from the
 * limits there. Init binds it from the host path it is told. */
int sup_send_cgroup_view(struct sup *s, cordon_error *err)
{
	if (!s->have_cg)
		return 0;
	/* A path the task asked for there (the host's /sys, say) wins. */
	for (size_t i = 0; i < s->plan.nmounts; i++) {
		const char *m = s->plan.mounts[i].path;
		if (path_has_prefix("/sys/fs/cgroup", m) || path_has_prefix(m, "/sys/fs/cgroup"))
			return 0;
	}
	bool v2 = s->cgops == &cgroup_v2_ops;
	for (int i = 0; i < s->cg.ndirs; i++)
		if (strlen(s->cg.dirs[i]) >= sizeof(((struct msg *)0)->path))
			return 0; /* too long for a frame: no view; it is not a boundary */
	for (int i = 0; i < s->cg.ndirs; i++)
		if (sync_send_path(s->sock, MSG_CGROUP, v2 ? -1 : i, s->cg.dirs[i]) < 0)
			return cordon_err_errno(err, "send the cgroup view");
	if (s->have_obs && view_add_cond(&s->obs.view, &s->plan.model, MODEL_IF_CGROUP, err) < 0)
		return -1;
	sup_trace(s, "cgroup view sent");
	return 0;
}

/* Direct mode: the directories pinned above protected names (and above
 * the change-set key and listed change sets) are writable binds of the
 * host's own inodes, so the run can change their mode; put back after it
 * (sweep_keep). An overlay's apply adds no write permission itself. */
int sup_keep_pins(struct sup *s, cordon_error *err)
{
	const struct boundary_model *m = &s->plan.model;
	const char **v = calloc(m->n + 1, sizeof(*v));
	size_t n = 0;
	if (!v)
		return cordon_oom(err);
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].kind == MK_PIN)
			v[n++] = m->e[i].host;
	/* Above a protected name absent at the start: the directories the run
	 * may make on the way (`.cargo` of .cargo/config.toml), below the
	 * writable path that holds it. */
	strv above = {0};
	int r = 0;
	for (size_t i = 0; r == 0 && i < m->n; i++) {
		const struct model_entry *e = &m->e[i];
		if (e->kind != MK_PROTECT || !(e->flags & MODEL_NOT_YET) || !e->host)
			continue;
		char p[4096];
		snprintf(p, sizeof(p), "%s", e->host);
		for (char *sl; r == 0 && (sl = strrchr(p, '/')) && sl != p;) {
			*sl = '\0';
			bool root = false;
			for (size_t k = 0; k < s->sweep.n && !root; k++)
				root = !s->sweep.r[k].keep_only && strcmp(s->sweep.r[k].path, p) == 0;
			if (root)
				break;
			if (!strv_contains(&above, p))
				r = strv_push(&above, p);
		}
	}
	const char **all = r == 0 ? realloc(v, (n + above.n + 1) * sizeof(*v)) : NULL;
	if (!all) {
		free(v);
		strv_free(&above);
		return cordon_oom(err);
	}
	for (size_t i = 0; i < above.n; i++)
		all[n++] = above.v[i];
	r = sweep_keep(&s->sweep, all, n, err);
	free(all);
	strv_free(&above);
	return r;
}
