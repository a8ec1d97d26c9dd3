/* The boundary model (model.h): cordon's own view (its table is
 * model-sys.c's), the task's paths appended from the plan. */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/landlock.h>
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
#include "model.h"
#include "model-access.h"
#include "mounts.h"
#include "plan.h"
#include "protect.h"
#include "seccomp-policy.h"
#include "snapshot.h"
#include "sup-env.h"

const char *model_kind_name(enum model_kind k)
{
	static const char *const n[] = {"root", "ro", "rw", "tmpfs", "proc", "dev", "devpts", "symlink",
					"file", "device", "secret", "cgroup", "protected", "pin", "ca-bundle",
					"kernfs", "masked", "mount", "resolv"};
	return (size_t)k < ARRAY_SIZE(n) ? n[k] : "?";
}

bool model_protects(const struct boundary_model *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].kind == MK_PROTECT)
			return true;
	return false;
}

bool model_entry_active(const struct model_entry *e, unsigned conds)
{
	if (e->flags & MODEL_ABSENT)
		return false;
	return !(e->flags & MODEL_IF_CGROUP) || (conds & MODEL_IF_CGROUP);
}

static int push(struct boundary_model *m, const struct model_entry *e, cordon_error *err)
{
	struct model_entry *n = realloc(m->e, (m->n + 1) * sizeof(*n));
	if (!n)
		return cordon_oom(err);
	m->e = n;
	m->e[m->n++] = *e;
	return 0;
}

static const char *own(struct boundary_model *m, const char *s)
{
	return strv_push(&m->owned, s) < 0 ? NULL : m->owned.v[m->owned.n - 1];
}

static int model_probe_host(const char *path, bool follow, char *target, size_t tsz)
{
	struct stat st;
	if (follow)
		return access(path, F_OK) == 0 ? 'f' : 0;
	_cleanup_close_ int fd = open_root(path, O_PATH);
	if (fd < 0)
		return errno == ELOOP ? 'L' : 0;
	if (fstat(fd, &st) < 0)
		return 0;
	if (S_ISDIR(st.st_mode))
		return 'd';
	if (!S_ISLNK(st.st_mode))
		return S_ISREG(st.st_mode) && st.st_nlink > 1 ? 'h' : 'r';
	ssize_t n = readlinkat(fd, "", target, tsz - 1);
	if (n < 0)
		return 0;
	target[n] = '\0';
	return 'l';
}

/* Is "/name" the top of one of cordon's own entries that an image does not
 * replace (/tmp, /proc, /dev, /sys)? */
static bool own_top(const struct model_entry *sv, size_t nsys, const char *name)
{
	size_t l = strlen(name);
	for (size_t i = 0; i < nsys; i++) {
		const char *p = sv[i].path;
		if (sv[i].kind != MK_ROOT && sv[i].kind != MK_FILE && !model_is_system_dir(p) &&
		    strncmp(p + 1, name, l) == 0 && (p[1 + l] == '/' || p[1 + l] == '\0'))
			return true;
	}
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* An image's top-level entries (rootfs.h), in place of the host's /usr,
 * /etc, /bin...: a directory bound read-only (its files' own owners and
 * modes, nosuid, nodev), a link as the image has it. Nothing else at the
 * top is shown (a plain file there, a node), nor what cordon makes itself
 * (/tmp, /proc, /dev, /sys). Then /etc/hosts, from the image's. */
static int add_image(struct boundary_model *m, const char *root, const struct run_plan *plan, const struct model_entry *hosts,
		     model_probe_fn probe, cordon_error *err)
{
	size_t nsys;
	const struct model_entry *sv = model_system_view(&nsys);
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return cordon_err_errno(err, "rootfs %s", root);
	_cleanup_dstream_ struct dstream *d = dstream_open(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return cordon_err(err, e, "rootfs %s", root);
	}
	strv names = {0};
	struct dirent *de;
	while ((de = dstream_read(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 || own_top(sv, nsys, de->d_name))
			continue;
		if (strv_push(&names, de->d_name) < 0) {
			strv_free(&names);
			return cordon_oom(err);
		}
		if (names.n > 4096) {
			strv_free(&names);
			return cordon_err(err, 0, "rootfs %s: more than 4096 entries at its top", root);
		}
	}
	if (names.n)
		qsort(names.v, names.n, sizeof(*names.v), cmp_str);
	/* A top-level directory where the task has a mount of its own (the
	 * image's /testbed as the workspace, --ro HOST:/data): the task's
	 * mount is all there is at that path. */
	for (size_t i = 0; plan && i < names.n;) {
		bool task = false;
		for (size_t k = 0; k < plan->nmounts && !task; k++)
			task = strcmp(mount_view_path(&plan->mounts[k]) + 1, names.v[i]) == 0;
		if (!task) {
			i++;
			continue;
		}
		free(names.v[i]);
		memmove(&names.v[i], &names.v[i + 1], (names.n - i - 1) * sizeof(*names.v));
		names.n--;
	}
	int rc = 0;
	bool etc = false;
	for (size_t i = 0; rc == 0 && i < names.n; i++) {
		char host[4096], path[4096], t[4096];
		snprintf(path, sizeof(path), "/%s", names.v[i]);
		if (snprintf(host, sizeof(host), "%s%s", root, path) >= (int)sizeof(host))
			continue;
		int k = probe(host, false, t, sizeof(t));
		struct model_entry e = {.source = SRC_POLICY, .flags = MODEL_SYSTEM, .mount = -1, .tree = -1};
		if (k == 'd') {
			e.kind = MK_RO_BIND, e.landlock = LL_RO, e.view = VIEW_RO;
			e.reason = "the image's, read-only";
			e.explain_mode = "ro (image)";
			etc = etc || strcmp(path, "/etc") == 0;
		} else if (k == 'l') {
			e.kind = MK_SYMLINK, e.view = VIEW_OUTSIDE;
			e.reason = "the image's link";
			e.explain_mode = "symlink (image)";
			if (!(e.target = own(m, t)))
				rc = cordon_oom(err);
		} else {
			continue;
		}
		if (rc == 0 && (!(e.path = e.explain_path = own(m, path)) || !(e.host = own(m, host))))
			rc = cordon_oom(err);
		if (rc == 0)
			rc = push(m, &e, err);
	}
	strv_free(&names);
	if (rc < 0 || !etc)
		return rc;
	char host[4096];
	struct model_entry e = *hosts;
	e.reason = "the image's, with the run's own hostname";
	snprintf(host, sizeof(host), "%s%s", root, hosts->path);
	if (!(e.host = own(m, host)))
		return cordon_oom(err);
	return push(m, &e, err);
}

/* cordon's own entries, shaped by the host, or by an image (root: its
 * directory, or "" for the host's). */
static int add_system(struct boundary_model *m, const char *root, const struct run_plan *plan, model_probe_fn probe,
		      cordon_error *err)
{
	size_t nsys;
	const struct model_entry *system_view = model_system_view(&nsys);
	for (size_t i = 0; i < nsys; i++) {
		struct model_entry e = system_view[i];
		if (root[0] && (model_is_system_dir(e.path) || e.kind == MK_FILE))
			continue; /* the image's instead (add_image, after the root) */
		if (e.flags & MODEL_FROM_HOST) {
			char t[4096];
			int k = probe(e.path, false, t, sizeof(t));
			if (k == 'd') {
				e.kind = MK_RO_BIND;
			} else if (k == 'l') {
				e.target = own(m, t);
				if (!e.target)
					return cordon_oom(err);
				e.landlock = 0; /* resolves into /usr, which has its own rule */
				e.view = VIEW_OUTSIDE;
			} else {
				e.flags |= MODEL_ABSENT;
			}
		} else if (e.kind == MK_RO_BIND && (e.flags & MODEL_OPTIONAL) && !probe(e.path, true, NULL, 0)) {
			e.flags |= MODEL_ABSENT;
		}
		if (push(m, &e, err) < 0)
			return -1;
		if (root[0] && e.kind == MK_ROOT) {
			const struct model_entry *hosts = NULL;
			for (size_t k = 0; k < nsys && !hosts; k++)
				if (system_view[k].kind == MK_FILE)
					hosts = &system_view[k];
			if (add_image(m, root, plan, hosts, probe, err) < 0)
				return -1;
		}
	}
	return 0;
}

/* With an image, every mount of the task's, a secret's directory or a
 * check's files below one of its directories needs its mount point there:
 * the image's directories are read-only binds, where none can be made. */
static int check_image_mountpoints(const struct boundary_model *m, const char *root, model_probe_fn probe,
				   cordon_error *err)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct model_entry *e = &m->e[i];
		if ((e->flags & MODEL_SYSTEM) || e->kind == MK_PROTECT || e->kind == MK_PIN || e->kind == MK_CA_BUNDLE ||
		    e->kind == MK_RESOLV)
			continue;
		/* The innermost entry above it: an image's directory? */
		const struct model_entry *up = NULL;
		for (size_t k = 0; k < m->n; k++)
			if (k != i && strcmp(m->e[k].path, e->path) != 0 && path_has_prefix(e->path, m->e[k].path) &&
			    m->e[k].kind != MK_ROOT && (!up || strlen(m->e[k].path) > strlen(up->path)))
				up = &m->e[k];
		if (!up || !(up->flags & MODEL_SYSTEM) || up->kind != MK_RO_BIND || !up->host ||
		    !path_has_prefix(up->host, root))
			continue;
		char host[8192], t[4096];
		snprintf(host, sizeof(host), "%s%s", root, e->path);
		int k = probe(host, false, t, sizeof(t));
		if (k == 'd' || k == 'r' || k == 'h')
			continue;
		return cordon_err(err, 0,
				  "%s lies in the image's %s, which has %s there (rootfs %s, read-only: no mount point can be made): make it in the image, or choose a path the image does not have",
				  e->path, up->path, k == 'l' || k == 'L' ? "a symbolic link" : "nothing", root);
	}
	return 0;
}

/* The task's: its mounts, devices, a check's files, secrets as files. */
static int add_task(struct boundary_model *m, const struct run_plan *plan, const cordon_policy *p,
		    cordon_error *err)
{
	for (size_t i = 0; i < plan->nmounts; i++) {
		const struct cordon_mount *cm = &plan->mounts[i];
		struct model_entry e = {.path = mount_view_path(cm), .source = cm->src, .host = cm->path,
					.mount = (long)i, .tree = (long)i,
					.explain_path = mount_view_path(cm), .explain_mode = mount_mode_name(cm->mode)};
		if (cm->mode == MOUNT_RO && cm->scratch) {
			/* Writable in the view; the bind stays read-only below
			 * the overlay (mounts.c), its size set by model_build_run. */
			e.kind = MK_RO_BIND, e.landlock = MODEL_LL_ALL, e.view = VIEW_RW, e.flags = MODEL_SCRATCH;
			e.reason = "the workspace, writable, its writes thrown away (the task check)";
		} else if (cm->mode == MOUNT_RO) {
			e.kind = MK_RO_BIND, e.landlock = LL_RO, e.view = VIEW_RO, e.reason = "granted read-only";
		} else if (cm->mode == MOUNT_RW) {
			e.kind = MK_RW_BIND, e.landlock = MODEL_LL_ALL, e.view = VIEW_RW;
			e.reason = cm->src == SRC_DEFAULT ? "the workspace" : "granted writable";
			if (cm->at && plan->rootfs[0] && path_has_prefix(cm->path, plan->rootfs)) {
				e.reason = "the workspace, a directory of the image: its writes kept as a change set";
				e.explain_mode = "rw (image workspace";
			}
		} else {
			e.kind = MK_TMPFS, e.landlock = MODEL_LL_ALL, e.view = VIEW_RW, e.reason = "a tmpfs of the task's";
			e.mode = "1777", e.size = cm->size ? cm->size : CORDON_TMPFS_DEFAULT_SIZE;
			e.host = NULL, e.tree = -1;
		}
		if (cm->at && cm->mode != MOUNT_TMPFS && !(e.flags & MODEL_SCRATCH)) {
			/* Seen elsewhere than on the host: say from where. */
			char mode[4200];
			bool open = strchr(e.explain_mode, '(') && e.explain_mode[strlen(e.explain_mode) - 1] != ')';
			snprintf(mode, sizeof(mode), "%s%sfrom %s)", e.explain_mode, open ? ", " : " (", cm->path);
			if (!(e.explain_mode = own(m, mode)))
				return cordon_oom(err);
		}
		if (push(m, &e, err) < 0)
			return -1;
	}
	/* Exposed devices: read, write and ioctl, each by its own rule (so the
	 * grant stays if /dev's own rule ever narrows). */
	for (size_t i = 0; i < plan->devices.n; i++) {
		struct model_entry e = {.path = plan->devices.v[i], .kind = MK_DEVICE, .source = SRC_POLICY,
					.landlock = LL_DEV & ~FS(READ_DIR), .view = VIEW_RW,
					.reason = "a host character device granted", .host = plan->devices.v[i],
					.mount = -1, .tree = -1};
		if (push(m, &e, err) < 0)
			return -1;
	}
	for (size_t i = 0; p && i < p->nsecrets; i++) {
		const char *sm = p->secrets[i].mount;
		const char *slash = sm ? strrchr(sm, '/') : NULL;
		if (!slash || slash == sm)
			continue; /* refused by the plan's checks */
		char dir[4096];
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - sm), sm);
		bool seen = false;
		for (size_t k = 0; k < m->n && !seen; k++)
			seen = m->e[k].kind == MK_SECRET && strcmp(m->e[k].path, dir) == 0;
		if (seen)
			continue;
		struct model_entry e = {.kind = MK_SECRET, .source = SRC_POLICY, .landlock = LL_READ,
					.view = VIEW_RO, .reason = "secrets delivered as files (0400)",
					.mode = "0500", .size = 1 << 20, .noexec = true, .mount = -1, .tree = -1};
		e.path = own(m, dir);
		if (!e.path || push(m, &e, err) < 0)
			return cordon_oom(err);
	}
	/* The run's CA bundle (TLS interception): the host's CAs and the
	 * run's, on a private tmpfs, read-only. */
	if (p && policy_intercepts(p)) {
		struct model_entry e = {.kind = MK_SECRET, .source = SRC_POLICY, .landlock = LL_READ,
					.view = VIEW_RO, .reason = "the run's CA bundle (TLS interception)",
					.mode = "0555", .size = 8 << 20, .noexec = true, .mount = -1, .tree = -1,
					.path = CORDON_CA_DIR};
		if (push(m, &e, err) < 0)
			return -1;
	}
	if (plan->check_files[0]) {
		struct model_entry e = {.path = plan->check_dir, .kind = MK_RO_BIND, .source = SRC_POLICY,
					.landlock = LL_RO, .view = VIEW_RO, .reason = "the check's own files",
					.host = plan->check_files, .mount = -1, .tree = (long)plan->nmounts};
		if (push(m, &e, err) < 0)
			return -1;
	}
	return 0;
}

/* Where TLS libraries look for the CA bundle when no variable says: Debian
 * and its kin, Fedora/RHEL (the link and the file it names), openSUSE,
 * Alpine and others, Arch. */
static const char *const ca_bundle_paths[] = {
	"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/ca-bundle.pem",
	"/etc/ssl/cert.pem", "/etc/ca-certificates/extracted/tls-ca-bundle.pem",
};

/* With TLS interception, the run's CA bundle (the host's CAs and the run's)
 * over each of those that the host has as a plain file (in the view through
 * /etc): a client that ignores SSL_CERT_FILE and its kin trusts it too. A
 * link is left alone (it leads to one of the others, or elsewhere: not
 * followed); the hashed CApath directory is not covered. */
static int add_ca_bundle(struct boundary_model *m, const cordon_policy *p, const char *root, model_probe_fn probe,
			 cordon_error *err)
{
	if (!p || !p->net_allow.n || !policy_intercepts(p))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(ca_bundle_paths); i++) {
		char t[16], at[4096];
		snprintf(at, sizeof(at), "%s%s", root, ca_bundle_paths[i]);
		int k = probe(at, false, t, sizeof(t));
		if (k != 'r' && k != 'h')
			continue;
		struct model_entry e = {.path = ca_bundle_paths[i], .kind = MK_CA_BUNDLE, .source = SRC_POLICY,
					.view = VIEW_RO, .reason = "the run's CA bundle over the host's (TLS interception)",
					.host = CORDON_CA_FILE, .noexec = true, .mount = -1, .tree = -1,
					.explain_path = ca_bundle_paths[i], .explain_mode = "ro (host CAs + run CA)"};
		if (push(m, &e, err) < 0)
			return -1;
	}
	return 0;
}

/* network.transparent (issue 33): the run asks its own resolver, which the
 * supervisor answers (sup-dns.c): /etc/resolv.conf names it. */
static int add_resolv(struct boundary_model *m, const cordon_policy *p, cordon_error *err)
{
	if (!p || !p->net_allow.n || !p->net_transparent)
		return 0;
	struct model_entry e = {.path = "/etc/resolv.conf", .kind = MK_RESOLV, .source = SRC_POLICY,
				.view = VIEW_RO, .reason = "the run's own resolver (network.transparent)",
				.noexec = true, .mount = -1, .tree = -1, .explain_path = "/etc/resolv.conf",
				.explain_mode = "ro (nameserver " CORDON_DNS_ADDR ")"};
	return push(m, &e, err);
}

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
			if (!(e.path = e.host = e.explain_path = own(m, path)) || !(e.target = own(m, path + wl + 1)) ||
			    push(m, &e, err) < 0)
				return cordon_oom(err);
		}
		if (!last && k == 'd' && !model_has(m, path, MK_PIN)) {
			struct model_entry e = {.kind = MK_PIN, .source = src, .view = VIEW_OUTSIDE,
						.reason = "above a protected path: bound onto itself, so it cannot be renamed away",
						.mount = -1, .tree = -1};
			if (!(e.path = e.host = own(m, path)) || push(m, &e, err) < 0)
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
	if (!(e.path = e.host = e.explain_path = own(m, path)) || !(e.target = own(m, name)) || push(m, &e, err) < 0)
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
static int add_protected(struct boundary_model *m, const struct run_plan *plan, const cordon_policy *p,
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
		if (!(e.path = e.host = e.explain_path = own(m, path)) || !(e.target = own(m, de->d_name)) ||
		    push(m, &e, err) < 0)
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
	if (!(e.path = e.host = e.explain_path = own(m, kd)) || !(e.target = own(m, kd + wl + 1)) || push(m, &e, err) < 0)
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
		if (!(e.path = e.host = e.explain_path = own(m, path)) || !(e.target = own(m, name + 1)) ||
		    push(m, &e, err) < 0)
			rc = cordon_oom(err);
	}
	strv_free(&sets);
	return rc;
}

/* Protected names, pins and masks are found on the host, below a mount's
 * host path: where the run sees that mount elsewhere (HOST:PATH, an
 * image's workspace), their view path follows it; host stays the host's. */
static int relocate_at(struct boundary_model *m, const struct run_plan *plan, cordon_error *err)
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
		const char *v = own(m, path);
		if (!v)
			return cordon_oom(err);
		if (e->explain_path)
			e->explain_path = v;
		e->path = v;
	}
	return 0;
}

int model_build_on(struct boundary_model *m, const struct run_plan *plan, const cordon_policy *p,
		   model_probe_fn probe, cordon_error *err)
{
	memset(m, 0, sizeof(*m));
	const char *root = plan ? plan->rootfs : "";
	if (add_system(m, root, plan, probe, err) < 0 ||
	    (plan && (add_task(m, plan, p, err) < 0 || add_ca_bundle(m, p, root, probe, err) < 0 ||
		      add_resolv(m, p, err) < 0 ||
		      add_protected(m, plan, p, probe, err) < 0 || relocate_at(m, plan, err) < 0 ||
		      (root[0] && check_image_mountpoints(m, root, probe, err) < 0)))) {
		model_free(m);
		return -1;
	}
	return 0;
}

int model_build(struct boundary_model *m, const struct run_plan *plan, const cordon_policy *p,
		cordon_error *err)
{
	return model_build_on(m, plan, p, model_probe_host, err);
}

static void model_run_free(struct model_run *r);

static int copy_strv(strv *out, const strv *in)
{
	for (size_t i = 0; i < in->n; i++)
		if (strv_push(out, in->v[i]) < 0)
			return -1;
	return 0;
}

int model_build_run(struct boundary_model *m, const cordon_policy *p, const char *check_dir,
		    cordon_error *err)
{
	struct model_run *r = &m->run;
	model_run_free(r);
	if (sup_env_declared(p, &r->env, err) < 0)
		return -1;
	r->env_declared = r->env.n;
	if (sup_env_cordon(p, check_dir, &r->env, err) < 0)
		return -1;
	memcpy(r->limits, p->limits, sizeof(r->limits));
	const struct cordon_limit *l = r->limits;
	r->needs_cgroup = l[LIM_MEMORY].set || l[LIM_PIDS].set || l[LIM_CPU].set;
	r->cg.memory = l[LIM_MEMORY].set ? l[LIM_MEMORY].value : 0;
	r->cg.pids = l[LIM_PIDS].set ? l[LIM_PIDS].value : 0;
	r->cpu_ns = l[LIM_CPU].set ? l[LIM_CPU].value : 0;
	r->wall_ns = l[LIM_WALL].set ? l[LIM_WALL].value : 0;
	r->rl.fsize = l[LIM_FILE_SIZE].set ? l[LIM_FILE_SIZE].value : 0;
	/* A soft RLIMIT_CPU per process, rounded up: the cgroup's account
	 * (cpu_ns) is the real limit where there is one. */
	r->rl.cpu_sec = l[LIM_CPU].set ? (l[LIM_CPU].value + 999999999ULL) / 1000000000ULL : 0;
	r->rl_nocg = r->rl;
	r->rl_nocg.as = r->cg.memory;
	r->rl_nocg.nproc = r->cg.pids;
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].flags & MODEL_SCRATCH)
			m->e[i].size = r->cg.memory ? r->cg.memory / 2 : CHECK_SCRATCH_DEFAULT_SIZE;
	r->sys_default = seccomp_default_deny;
	r->kill_on_violation = p->kill_on_violation;
	r->file_reports = !p->no_file_reports;
	r->sys_rules = seccomp_rules(p);
	if (seccomp_deny_list(p, &r->sys_deny) < 0 || copy_strv(&r->sys_allow, &p->sys_allow) < 0 ||
	    copy_strv(&r->sys_deny_policy, &p->sys_deny) < 0)
		return cordon_oom(err);
	r->built = true;
	return 0;
}

static void model_run_free(struct model_run *r)
{
	strv_free(&r->env);
	strv_free(&r->sys_deny);
	strv_free(&r->sys_allow);
	strv_free(&r->sys_deny_policy);
	memset(r, 0, sizeof(*r));
}

void model_free(struct boundary_model *m)
{
	model_run_free(&m->run);
	free(m->e);
	strv_free(&m->owned);
	memset(m, 0, sizeof(*m));
}
