/* The run plan: everything decided before any process exists. Shared by
 * `cordon run` and `cordon explain`, so both reach the same verdict. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "openat2.h"
#include "pol-plan.h"
#include "changeset.h"
#include "cleanup.h"
#include "compat.h"
#include "cs-seal.h"
#include "error.h"
#include "pol-ceiling.h"
#include "pol-checkfiles.h"
#include "hostwhy.h"
#include "pol-view.h"
#include "proxy.h"
#include "ledger.h"
#include "mounts.h"
#include "protect.h"
#include "rootfs.h"

/* check.files: a host directory the task can neither write nor shadow. It
 * must lie outside every path the run can actually write (the workspace when
 * the run gets it, the rw binds; for a check's policy, those of its task),
 * else the task could edit its own check. The check's view shows it at a
 * fresh random directory (check_dir) that nothing of the view may overlap. */
/* Change sets (anyone's, kept for review) and the key that seals them are
 * cordon's, never a run's: a path at or below either is not granted. What
 * a run wrote is read with `cordon changes`, never bound into another. */
static int refuse_cordon_state(const char *what, const char *given, const char *real, cordon_error *err)
{
	char kd[4096];
	if (changeset_keydir(kd, sizeof(kd)) == 0 && path_has_prefix(real, kd))
		return cordon_err(err, EPERM, "%s %s: in the directory of cordon's change-set key (%s), which no run is given",
				  what, given, kd);
	size_t at = changeset_dirname_in(real);
	if (at)
		return cordon_err(err, EPERM, "%s %s: inside a directory of change sets (%.*s): a change set is reviewed with `cordon changes`, never given to a run",
				  what, given, (int)at, real);
	return 0;
}

static int resolve_check_files(const cordon_policy *p, struct run_plan *plan, cordon_error *err)
{
	strv own = {0};
	const strv *writable = &p->check_writable;
	if (!p->is_check) {
		writable = &own;
		for (size_t i = 0; i < plan->nmounts; i++)
			if (plan->mounts[i].mode == MOUNT_RW && strv_push(&own, plan->mounts[i].path) < 0) {
				strv_free(&own);
				return cordon_oom(err);
			}
	}
	char real[PATH_MAX];
	struct stat st;
	int rc = 0;
	if (resolve_untrusted_links(p->check_files, writable, real, sizeof(real), err) < 0)
		rc = cordon_err_wrap(err, "check.files %s", p->check_files);
	else if (stat(real, &st) < 0)
		rc = cordon_err_errno(err, "check.files %s", p->check_files);
	else if (!S_ISDIR(st.st_mode))
		rc = cordon_err(err, 0, "check.files %s is not a directory", p->check_files);
	else
		rc = refuse_cordon_state("check.files", p->check_files, real, err);
	for (size_t i = 0; rc == 0 && i < writable->n; i++)
		if (path_has_prefix(real, writable->v[i]) || path_has_prefix(writable->v[i], real))
			rc = cordon_err(err, 0, "check.files %s overlaps the writable path %s: the task could change its own check; keep the check's files outside every writable path",
					real, writable->v[i]);
	/* Nor in what the task can read (issue 27 item 6: the task printed
	 * the expected answer and passed): its grants, read or write, and
	 * cordon's own read-only view. A check's policy was checked as its
	 * task's. */
	for (size_t i = 0; rc == 0 && !p->is_check && i < plan->nmounts; i++)
		if (plan->mounts[i].mode != MOUNT_TMPFS &&
		    (path_has_prefix(real, plan->mounts[i].path) || path_has_prefix(plan->mounts[i].path, real)))
			rc = cordon_err(err, 0, "check.files %s overlaps %s %s, which the task can read: the task could read the check's hidden files; keep them outside every path the task is given",
					real, plan->mounts[i].mode == MOUNT_RO ? "the read grant" : "the path", plan->mounts[i].path);
	const char *sys = rc == 0 && !p->is_check ? (plan->rootfs[0] ? NULL : model_system_read(real)) : NULL;
	if (rc == 0 && !p->is_check && plan->rootfs[0] &&
	    (path_has_prefix(real, plan->rootfs) || path_has_prefix(plan->rootfs, real)))
		sys = plan->rootfs;
	if (sys)
		rc = cordon_err(err, 0, "check.files %s overlaps %s, which every run reads: the task could read the check's hidden files; keep them outside it",
				real, sys);
	/* Nor a host file the run reads by another route (a secret's file,
	 * network.upstream_ca, a device; outside review F3 of 27.6). */
	char what[PATH_MAX + 128];
	const char *rd = rc == 0 && !p->is_check ? policy_check_files_reader(p, real, what, sizeof(what)) : NULL;
	if (rd)
		rc = cordon_err(err, 0, "check.files %s overlaps %s (%s), which the run reads: the task could read the check's hidden files; keep them outside every path the run is given",
				real, rd, what);
	strv_free(&own);
	if (rc < 0)
		return -1;
	uint8_t rnd[16];
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return cordon_err_errno(err, "check.files: random directory name");
	int n = snprintf(plan->check_dir, sizeof(plan->check_dir), "%s-", CHECK_FILES_DIR);
	for (size_t i = 0; i < sizeof(rnd); i++)
		n += snprintf(plan->check_dir + n, sizeof(plan->check_dir) - (size_t)n, "%02x", rnd[i]);
	explicit_bzero(rnd, sizeof(rnd));
	for (size_t i = 0; i < plan->nmounts; i++)
		if (path_has_prefix(plan->mounts[i].path, plan->check_dir) ||
		    path_has_prefix(plan->check_dir, plan->mounts[i].path))
			return cordon_err(err, 0, "check.files: the check's view shows them at %s, and %s %s overlaps it",
					  plan->check_dir, mount_mode_name(plan->mounts[i].mode), plan->mounts[i].path);
	if (p->is_check)
		snprintf(plan->check_files, sizeof(plan->check_files), "%s", real);
	return 0;
}

/* ws, or the canonical form of home, names ws (home may reach it by a link). */
static bool is_home(const char *ws, const char *home)
{
	char real[PATH_MAX];
	if (!home || !*home || strcmp(home, "/") == 0)
		return false;
	return strcmp(ws, home) == 0 || (realpath(home, real) && strcmp(real, "/") != 0 && strcmp(ws, real) == 0);
}

/* Where an implicit workspace may not be (ws is canonical, from getcwd):
 * at or below the system trees and /root, whose files the host runs or
 * trusts (a root run writes root-owned files there: /usr/local/bin,
 * /etc/cron.d, /root/.ssh); and the shared roots and homes themselves. */
static const char *forbidden_workspace(const char *ws, const char *home)
{
	static const char *const trees[] = {"/usr", "/etc", "/bin", "/sbin", "/boot", "/dev", "/proc",
					    "/sys", "/run", NULL};
	static const char *const roots[] = {"/", "/var", "/tmp", "/var/tmp", "/opt", "/srv", "/mnt",
					    "/media", NULL};
	if (path_has_prefix(ws, "/root") || strcmp(ws, "/home") == 0)
		return "a home directory";
	for (const char *const *d = trees; *d; d++)
		if (path_has_prefix(ws, *d))
			return "a system directory";
	if (strncmp(ws, "/lib", 4) == 0) /* /lib, /lib32, /lib64, /libx32 and below */
		return "a system directory";
	for (const char *const *d = roots; *d; d++)
		if (strcmp(ws, *d) == 0)
			return "a system directory";
	if (is_home(ws, home))
		return "a home directory";
	/* Any user's: the home of the directory's owner, or of the invoker. */
	struct stat st;
	uid_t uids[2] = {getuid(), stat(ws, &st) == 0 ? st.st_uid : getuid()};
	for (int i = 0; i < (uids[1] == uids[0] ? 1 : 2); i++) {
		struct passwd pw, *res = NULL;
		char pwbuf[4096];
		if (getpwuid_r(uids[i], &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res && is_home(ws, res->pw_dir))
			return "a home directory";
	}
	return NULL;
}

/* The current directory, by its name, checked to be the directory cordon was
 * started in: the name (getcwd) is opened again from / without following any
 * link and must be the same inode as ".". A concurrent run that swapped a
 * component of it for a link (or something mounted over it) would otherwise
 * make another directory the workspace: mounted, snapshotted and swept by
 * name. Every later open of the name refuses links too. */
static int cwd_pinned(char *out, size_t outsz, dev_t *dev, ino_t *ino, cordon_error *err)
{
	_cleanup_close_ int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat here, named;
	if (cwd < 0 || fstat(cwd, &here) < 0)
		return cordon_err_errno(err, "the current directory");
	if (!getcwd(out, outsz))
		return cordon_err_errno(err, "the current directory");
	_cleanup_close_ int fd = open_root(out, O_PATH | O_DIRECTORY);
	char why[256];
	if (fd < 0 && (hostwhy_call("openat2", errno, why, sizeof(why)), why[0]))
		return cordon_err(err, 0, "the current directory %s: %s", out, why);
	if (fd < 0 || fstat(fd, &named) < 0 || named.st_dev != here.st_dev || named.st_ino != here.st_ino)
		return cordon_err(err, fd < 0 ? errno : 0, "the current directory %s is no longer reached by that name without links (a component was replaced by a link or moved, or something is mounted over it): refusing it as the workspace; cd into it again",
				  out);
	*dev = here.st_dev;
	*ino = here.st_ino;
	return 0;
}

/* An image's directory as the workspace (policy.h image_workspace): DIR/PATH
 * must be a directory reached from the image's root without a link or a
 * mount crossed (openat2 beneath it); its host path goes to plan->workspace. */
static int image_workspace(const cordon_policy *p, struct run_plan *plan, cordon_error *err)
{
	const char *ws = p->image_workspace;
	if (!p->root)
		return cordon_err(err, 0, "workspace %s: a directory of an image, which needs --rootfs (policy \"root\"); without one the workspace is the current directory",
				  ws);
	if (!plan->rootfs[0] && rootfs_resolve(p->root, plan->rootfs, sizeof(plan->rootfs), err) < 0)
		return -1;
	_cleanup_close_ int root = open(plan->rootfs, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (root < 0)
		return cordon_err_errno(err, "rootfs %s", plan->rootfs);
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
					  RESOLVE_NO_XDEV};
	_cleanup_close_ int fd = sys_openat2(root, ws + 1, &how);
	struct stat st;
	if (fd < 0)
		return cordon_err(err, 0, "workspace %s: not a directory of the image %s (%s%s)", ws, plan->rootfs,
				  strerror(errno), errno == ELOOP ? ": a symbolic link on the way" :
						   errno == EXDEV ? ": a mount crossed" : "");
	if (fstat(fd, &st) < 0)
		return cordon_err_errno(err, "workspace %s", ws);
	(void)st; /* O_DIRECTORY made sure */
	if (snprintf(plan->workspace, sizeof(plan->workspace), "%s%s", plan->rootfs, ws) >= (int)sizeof(plan->workspace))
		return cordon_err(err, ENAMETOOLONG, "workspace %s", ws);
	plan->ws_ino = 0; /* not the current directory */
	return 0;
}

/* The workspace: the declared working directory when a declared writable
 * path contains it (then the current directory gets no implicit grant);
 * else the current directory, read-write, unless something of the
 * policy already names it or it is a place no run should write by default.
 * A check's policy never gets an implicit grant. */
static int choose_workspace(const cordon_policy *p, struct run_plan *plan, bool *implicit,
			    cordon_error *err)
{
	*implicit = false;
	if (cwd_pinned(plan->workspace, sizeof(plan->workspace), &plan->ws_dev, &plan->ws_ino, err) < 0)
		return -1;
	if (p->is_check)
		return 0;
	if (p->image_workspace)
		return image_workspace(p, plan, err);
	for (size_t i = 0; p->cwd && i < p->nmounts; i++)
		if (p->mounts[i].mode == MOUNT_RW && path_has_prefix(p->cwd, mount_view_path(&p->mounts[i]))) {
			/* The workspace's host path (--rw HOST:PATH --cwd PATH/sub). */
			const struct cordon_mount *m = &p->mounts[i];
			snprintf(plan->workspace, sizeof(plan->workspace), "%s%s", m->at ? m->path : p->cwd,
				 m->at ? p->cwd + strlen(m->at) : "");
			plan->ws_ino = 0; /* not the current directory: its bind is resolved as any other */
			return 0;
		}
	if (strcmp(plan->workspace, "/") == 0)
		return cordon_err(err, 0, "the current directory is /, which cannot be the writable workspace; cd into the task's directory");
	for (size_t i = 0; i < p->nmounts; i++)
		if (strcmp(p->mounts[i].path, plan->workspace) == 0 && !p->mounts[i].at)
			return 0;
	const char *why = forbidden_workspace(plan->workspace, policy_opts(p)->home);
	if (why)
		return cordon_err(err, 0, "the current directory %s is %s, which cannot be the implicit writable workspace; cd into a project directory, or grant it explicitly with --rw %s",
				  plan->workspace, why, plan->workspace);
	*implicit = true;
	return 0;
}

int run_workspace(const cordon_policy *p, char *out, size_t outsz, cordon_error *err)
{
	struct run_plan plan;
	bool implicit;
	memset(&plan, 0, sizeof(plan));
	if (choose_workspace(p, &plan, &implicit, err) < 0)
		return -1;
	snprintf(out, outsz, "%s", plan.workspace);
	return 0;
}

/* Host character devices for the run's /dev, at their canonical path
 * (symlinks resolved here, on the host): what they resolve to is checked
 * again, so no link leads to a refused node. */
static int plan_devices(const cordon_policy *p, struct run_plan *plan, const strv *writable,
			cordon_error *err)
{
	for (size_t i = 0; i < p->devices.n; i++) {
		const char *d = p->devices.v[i];
		char real[PATH_MAX];
		struct stat st;
		if (resolve_untrusted_links(d, writable, real, sizeof(real), err) < 0)
			return cordon_err_wrap(err, "device %s", d);
		if (stat(real, &st) < 0)
			return cordon_err_errno(err, "device %s", d);
		if (!path_has_prefix(real, "/dev") || strcmp(real, "/dev") == 0)
			return cordon_err(err, 0, "device %s resolves to %s, outside /dev", d, real);
		const char *why = policy_device_refused(real);
		if (!why && S_ISCHR(st.st_mode))
			why = policy_device_refused_number(major(st.st_rdev), minor(st.st_rdev));
		if (why)
			return cordon_err(err, 0, "device %s (%s): refused: %s", d, real, why);
		if (S_ISBLK(st.st_mode))
			return cordon_err(err, 0, "device %s: refused: a block device (the host's disks and partitions are never exposed)", d);
		if (!S_ISCHR(st.st_mode))
			return cordon_err(err, 0, "device %s: not a character device", d);
		if (!strv_contains(&plan->devices, real) && strv_push(&plan->devices, real) < 0)
			return cordon_oom(err);
	}
	return 0;
}

int run_plan_inputs(const struct run_plan *plan, const strv *inputs, strv *out, cordon_error *err)
{
	strv writable = {0};
	int rc = strv_push(&writable, plan->workspace) < 0 ? cordon_oom(err) : 0;
	for (size_t i = 0; rc == 0 && i < plan->nmounts; i++)
		if (plan->mounts[i].mode == MOUNT_RW && strv_push(&writable, plan->mounts[i].path) < 0)
			rc = cordon_oom(err);
	for (size_t i = 0; rc == 0 && i < inputs->n; i++) {
		char real[PATH_MAX];
		if (resolve_untrusted_links(inputs->v[i], &writable, real, sizeof(real), err) < 0)
			rc = cordon_err_wrap(err, "input %s", inputs->v[i]);
		else if (strv_push(out, real) < 0)
			rc = cordon_oom(err);
	}
	strv_free(&writable);
	if (rc < 0)
		strv_free(out);
	return rc;
}

/* The host path of path in the view: below a mount seen elsewhere than its
 * host path (HOST:PATH, an image's workspace), under the innermost one's
 * host path; else path itself. */
static const char *view_to_host(const struct run_plan *plan, const char *path, char *hbuf, size_t sz)
{
	const struct cordon_mount *best = NULL;
	for (size_t i = 0; i < plan->nmounts; i++)
		if (path_has_prefix(path, mount_view_path(&plan->mounts[i])) &&
		    (!best || strlen(mount_view_path(&plan->mounts[i])) > strlen(mount_view_path(best))))
			best = &plan->mounts[i];
	if (!best || !best->at || best->mode == MOUNT_TMPFS)
		return path;
	if (snprintf(hbuf, sz, "%s%s", best->path, path + strlen(best->at)) >= (int)sz)
		return path;
	return hbuf;
}

/* The working directory in the view, and what the view cannot have: a
 * working directory that is not there (the run would fail at chdir), a tmpfs
 * over /proc (cordon mounts the run's own proc there and needs it). A
 * check's cwd of CHECK_FILES_DIR (or below) is its files' directory. */
static int plan_cwd_and_tmpfs(const cordon_policy *p, struct run_plan *plan, cordon_error *err)
{
	for (size_t i = 0; i < plan->nmounts; i++)
		if (plan->mounts[i].mode == MOUNT_TMPFS && path_has_prefix(plan->mounts[i].path, "/proc"))
			return cordon_err(err, 0, "tmpfs %s: the run's own /proc is mounted there; choose another path",
					  plan->mounts[i].path);
	const char *cwd = p->cwd ? p->cwd : p->image_workspace ? p->image_workspace : plan->workspace;
	if (p->is_check && plan->check_dir[0] && p->cwd && path_has_prefix(p->cwd, CHECK_FILES_DIR)) {
		snprintf(plan->cwd_in, sizeof(plan->cwd_in), "%s%s", plan->check_dir,
			 p->cwd + strlen(CHECK_FILES_DIR));
		return 0;
	}
	snprintf(plan->cwd_in, sizeof(plan->cwd_in), "%s", cwd);
	/* The view shows host paths at their own path, or fresh tmpfs and
	 * secret directories (empty but for their own mount points). */
	struct stat st;
	char host[PATH_MAX];
	int serr = stat(view_to_host(plan, cwd, host, sizeof(host)), &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (serr == 0)
		return 0;
	for (size_t i = 0; i < plan->nmounts; i++)
		if (plan->mounts[i].mode == MOUNT_TMPFS && strcmp(plan->mounts[i].path, cwd) == 0)
			return 0;
	for (size_t i = 0; i < p->nsecrets; i++) {
		const char *m = p->secrets[i].mount;
		const char *slash = m ? strrchr(m, '/') : NULL;
		if (slash && strlen(cwd) == (size_t)(slash - m) && strncmp(m, cwd, strlen(cwd)) == 0)
			return 0;
	}
	errno = serr;
	return cordon_err_errno(err, "working directory %s", cwd);
}

/* The image's workspace as a writable mount of the plan, seen at its path
 * in the image; only in a mode that never applies into the image. */
static int plan_image_workspace(const cordon_policy *p, struct run_plan *plan, cordon_error *err)
{
	const char *ws = p->image_workspace;
	if (policy_workspace_mode(p) != WS_REVIEW)
		return cordon_err(err, 0, "workspace %s is a directory of the image: workspace mode %s would write into the image; its changes are kept for review (cordon changes), the default here",
				  ws, workspace_mode_name(p->workspace_mode));
	for (size_t i = 0; i < plan->nmounts; i++)
		if (strcmp(mount_view_path(&plan->mounts[i]), ws) == 0)
			return cordon_err(err, 0, "workspace %s is also granted %s", ws, mount_mode_name(plan->mounts[i].mode));
	struct cordon_mount *m = realloc(plan->mounts, (plan->nmounts + 1) * sizeof(*m));
	if (!m)
		return cordon_oom(err);
	plan->mounts = m;
	m = &plan->mounts[plan->nmounts];
	*m = (struct cordon_mount){.mode = MOUNT_RW, .path = strdup(plan->workspace), .at = strdup(ws), .src = SRC_POLICY};
	if (!m->path || !m->at) {
		free(m->path);
		free(m->at);
		return cordon_oom(err);
	}
	plan->nmounts++;
	return 0;
}

int run_plan_build(const cordon_policy *p, struct run_plan *plan, cordon_error *err)
{
	memset(plan, 0, sizeof(*plan));
	bool implicit;
	if (p->root && rootfs_resolve(p->root, plan->rootfs, sizeof(plan->rootfs), err) < 0)
		return -1;
	if (choose_workspace(p, plan, &implicit, err) < 0)
		return -1;
	if (policy_effective_mounts(p, implicit ? plan->workspace : NULL, &plan->mounts, &plan->nmounts, err) < 0)
		return -1;
	if (p->image_workspace && plan_image_workspace(p, plan, err) < 0)
		return -1;
	/* Binds are made at the canonical host path, resolved here on the host,
	 * so no spelling of a path changes what is bound, and the child opens
	 * each one without following any link. A symlink inside a writable path
	 * is refused rather than followed: an earlier run could have planted it
	 * there to redirect this bind out of the view. So is one anywhere but
	 * the system trees (resolve_untrusted_links): an earlier run with
	 * another workspace (/tmp/b) could have planted it where this run
	 * cannot tell. */
	strv writable = {0};
	if (strv_push(&writable, plan->workspace) < 0)
		return cordon_oom(err);
	for (size_t i = 0; i < plan->nmounts; i++) {
		char real[PATH_MAX];
		if (plan->mounts[i].mode == MOUNT_RW && realpath(plan->mounts[i].path, real) &&
		    strv_push(&writable, real) < 0) {
			strv_free(&writable);
			return cordon_oom(err);
		}
	}
	for (size_t i = 0; i < plan->nmounts; i++) {
		struct cordon_mount *m = &plan->mounts[i];
		if (m->mode == MOUNT_TMPFS)
			continue;
		char real[PATH_MAX];
		if (resolve_untrusted_links(m->path, &writable, real, sizeof(real), err) < 0) {
			strv_free(&writable);
			return cordon_err_wrap(err, "%s %s", mount_mode_name(m->mode), m->path);
		}
		if (strcmp(real, "/") == 0) {
			strv_free(&writable);
			return cordon_err(err, 0, "%s %s resolves to /, which cannot be mounted",
					  mount_mode_name(m->mode), m->path);
		}
		if (refuse_cordon_state(mount_mode_name(m->mode), m->path, real, err) < 0) {
			strv_free(&writable);
			return -1;
		}
		struct stat st;
		if (stat(real, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
			strv_free(&writable);
			if (S_ISBLK(st.st_mode))
				return cordon_err(err, 0, "%s %s is a block device, which is never exposed",
						  mount_mode_name(m->mode), m->path);
			return cordon_err(err, 0, "%s %s is a device: expose it with --dev %s (policy filesystem.devices)",
					  mount_mode_name(m->mode), m->path, real);
		}
		if (strcmp(real, m->path) != 0) {
			char *dup = strdup(real);
			if (!dup) {
				strv_free(&writable);
				return cordon_oom(err);
			}
			free(m->path);
			m->path = dup;
		}
	}
	if ((p->check_files && resolve_check_files(p, plan, err) < 0) ||
	    plan_devices(p, plan, &writable, err) < 0) {
		strv_free(&writable);
		return -1;
	}
	strv_free(&writable);
	mounts_sort(plan->mounts, plan->nmounts);
	/* A home as a writable path: its dot-entries are protected (protect.h). */
	for (size_t i = 0; i < plan->nmounts; i++)
		plan->mounts[i].home = plan->mounts[i].mode == MOUNT_RW && protect_is_home(plan->mounts[i].path);
	for (size_t i = 1; i < plan->nmounts; i++)
		if (strcmp(plan->mounts[i].path, plan->mounts[i - 1].path) == 0 &&
		    plan->mounts[i].mode != plan->mounts[i - 1].mode)
			return cordon_err(err, 0, "%s is requested both %s and %s (after resolving symlinks)",
					  plan->mounts[i].path, mount_mode_name(plan->mounts[i - 1].mode),
					  mount_mode_name(plan->mounts[i].mode));
	if (plan_cwd_and_tmpfs(p, plan, err) < 0)
		return -1;
	/* The change-set key exists before a run that could write where it
	 * goes, so that the model masks it and pins the directories above:
	 * else the run could put a key of its own there, adopted by the next
	 * cordon (outside review 7 F2). */
	const char **paths = calloc(plan->nmounts + 1, sizeof(*paths));
	bool *rw = calloc(plan->nmounts + 1, sizeof(*rw));
	size_t np = 0;
	if (!paths || !rw) {
		free(paths);
		free(rw);
		return cordon_oom(err);
	}
	for (size_t i = 0; i < plan->nmounts; i++)
		if (plan->mounts[i].mode != MOUNT_TMPFS) {
			paths[np] = plan->mounts[i].path;
			rw[np++] = plan->mounts[i].mode == MOUNT_RW;
		}
	int g = changeset_key_guard(paths, rw, np, err);
	free(paths);
	free(rw);
	if (g < 0)
		return -1;
	char kd[4096];
	bool have_kd = changeset_keydir(kd, sizeof(kd)) == 0;
	for (size_t i = 0; have_kd && i < plan->nmounts; i++) {
		cordon_error e = {0};
		if (plan->mounts[i].mode == MOUNT_RW && path_has_prefix(kd, plan->mounts[i].path)) {
			if (changeset_key_ensure(&e) < 0)
				return cordon_err(err, e.code, "rw %s holds the change-set key's directory, which cannot be made safe: %s",
						  plan->mounts[i].path, e.msg);
			break;
		}
	}
	return model_build(&plan->model, plan, p, err);
}

void run_plan_free(struct run_plan *plan)
{
	mounts_free(plan->mounts, plan->nmounts);
	plan->mounts = NULL;
	plan->nmounts = 0;
	strv_free(&plan->devices);
	model_free(&plan->model);
}

/* Refuse what this build cannot enforce yet: never run with less than asked. */
static int check_supported(const cordon_policy *p, cordon_error *err)
{
	for (size_t i = 0; p->net_allow.n && i < p->nloopback_ports; i++)
		if (p->loopback_ports[i] == PROXY_PORT)
			return cordon_err(err, 0, "network.loopback_ports: %d is the egress proxy's port inside the run", PROXY_PORT);
	return 0;
}

/* A secret file lives on a tmpfs of its own inside the view: its directory
 * must not be a host path the view shows (the tmpfs would be created inside a
 * bind, i.e. on the host) nor a directory of the system view. */
static int check_secret_mounts(const cordon_policy *p, const struct run_plan *plan, cordon_error *err)
{
	for (size_t i = 0; i < p->nsecrets; i++) {
		const char *m = p->secrets[i].mount;
		if (!m)
			continue;
		/* Where cordon itself mounts something: a secret's tmpfs there
		 * would be hidden by it, or be created inside a bind, i.e. on
		 * the host. */
		const char *sys = model_system_top(m);
		if (sys)
			return cordon_err(err, 0, "secret %s: mount %s is inside %s; use a directory of its own such as /run/secrets",
					  p->secrets[i].name, m, sys);
		for (size_t k = 0; k < plan->nmounts; k++)
			if (path_has_prefix(m, plan->mounts[k].path))
				return cordon_err(err, 0, "secret %s: mount %s is inside %s, a path of the task; use a directory of its own such as /run/secrets",
						  p->secrets[i].name, m, plan->mounts[k].path);
		if (strrchr(m, '/') == m)
			return cordon_err(err, 0, "secret %s: mount %s must be in a directory (e.g. /run/secrets/NAME)",
					  p->secrets[i].name, m);
	}
	return 0;
}

static int apply_ceiling(cordon_policy *p, const struct run_plan *plan, struct run_report *rep,
			 cordon_error *err)
{
	char path[4096];
	bool have;
	if (ceiling_resolve(p->ceiling_file, policy_opts(p)->ceiling, path, sizeof(path), &have, err) < 0)
		return -1;
	if (!have)
		return 0;
	struct ceiling c;
	if (ceiling_load(path, &c, err) < 0) {
		ceiling_free(&c);
		return -1;
	}
	snprintf(rep->ceiling_sha256, sizeof(rep->ceiling_sha256), "%s", c.sha256);
	snprintf(rep->ceiling_path, sizeof(rep->ceiling_path), "%s", path);
	struct ceiling_result res;
	int n = ceiling_apply(&c, p, plan, &res, err);
	ceiling_free(&c);
	if (n < 0)
		return -1;
	free(rep->grants);
	rep->grants = res.g;
	rep->ngrants = res.n;
	strv_free(&rep->unauthorized);
	rep->unauthorized = res.excess;
	for (int i = 0; i < LIM_COUNT; i++)
		rep->limits[i] = p->limits[i];
	if (n > 0) {
		rep->status = ST_UNAUTHORIZED;
		if (n == 1)
			cordon_err(err, 0, "%s", rep->unauthorized.v[0]);
		else
			cordon_err(err, 0, "%s (and %d more beyond the ceiling %s)", rep->unauthorized.v[0], n - 1, path);
		return -1;
	}
	return 0;
}

int run_preflight(cordon_policy *p, struct run_plan *plan, struct run_report *rep,
		  cordon_error *err)
{
	rep->status = ST_SETUP_ERROR;
	if (run_plan_build(p, plan, err) < 0)
		return -1;
	snprintf(rep->rootfs, sizeof(rep->rootfs), "%s", plan->rootfs);
	snprintf(rep->image_workspace, sizeof(rep->image_workspace), "%s", p->image_workspace ? p->image_workspace : "");
	/* What the run could write: the report's own target is written with care there. */
	strv_free(&rep->writable);
	for (size_t i = 0; i < plan->nmounts; i++)
		if (plan->mounts[i].mode == MOUNT_RW && strv_push(&rep->writable, plan->mounts[i].path) < 0)
			return cordon_oom(err);
	if (check_secret_mounts(p, plan, err) < 0)
		return -1;
	/* Authorization first: nothing beyond the ceiling is even looked at. */
	if (apply_ceiling(p, plan, rep, err) < 0)
		return -1;
	rep->status = ST_SETUP_ERROR;
	if (p->has_ledger) {
		struct ledger_result lr;
		if (ledger_compute(&p->ledger, p->file ? p->file : "policy", &lr, err) < 0)
			return -1;
		rep->have_ledger = true;
		rep->ledger_peak = lr.peak_bytes;
		ledger_result_free(&lr);
		if (p->limits[LIM_MEMORY].set && rep->ledger_peak > p->limits[LIM_MEMORY].value) {
			rep->status = ST_INFEASIBLE;
			return cordon_err(err, 0, "the ledger's peak live payload (%llu bytes) exceeds the memory limit (%llu bytes)",
					  (unsigned long long)rep->ledger_peak,
					  (unsigned long long)p->limits[LIM_MEMORY].value);
		}
	}
	if (check_supported(p, err) < 0)
		return -1;
	/* Last: the limits are final now (the ceiling's applied). */
	if (model_build_run(&plan->model, p, plan->check_dir, err) < 0)
		return -1;
	rep->status = ST_OK;
	return 0;
}
