/* The boundary model (model.h): cordon's own view (its table is
 * model-sys.c's), the task's paths appended from the plan; the protected
 * names are model-protect.c's, the entries' storage model-entry.c's. */
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
#include "compat.h"
#include "model.h"
#include "model-access.h"
#include "model-internal.h"
#include "mounts.h"
#include "plan.h"
#include "seccomp-policy.h"
#include "snapshot.h"
#include "sup-env.h"

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
			if (!(e.target = model_own(m, t)))
				rc = cordon_oom(err);
		} else {
			continue;
		}
		if (rc == 0 && (!(e.path = e.explain_path = model_own(m, path)) || !(e.host = model_own(m, host))))
			rc = cordon_oom(err);
		if (rc == 0)
			rc = model_push(m, &e, err);
	}
	strv_free(&names);
	if (rc < 0 || !etc || !hosts) /* hosts: the table's /etc/hosts, always there */
		return rc;
	char host[4096];
	struct model_entry e = *hosts;
	e.reason = "the image's, with the run's own hostname";
	snprintf(host, sizeof(host), "%s%s", root, hosts->path);
	if (!(e.host = model_own(m, host)))
		return cordon_oom(err);
	return model_push(m, &e, err);
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
				e.target = model_own(m, t);
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
		if (model_push(m, &e, err) < 0)
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
			if (!(e.explain_mode = model_own(m, mode)))
				return cordon_oom(err);
		}
		if (model_push(m, &e, err) < 0)
			return -1;
	}
	/* Exposed devices: read, write and ioctl, each by its own rule (so the
	 * grant stays if /dev's own rule ever narrows). */
	for (size_t i = 0; i < plan->devices.n; i++) {
		struct model_entry e = {.path = plan->devices.v[i], .kind = MK_DEVICE, .source = SRC_POLICY,
					.landlock = LL_DEV & ~FS(READ_DIR), .view = VIEW_RW,
					.reason = "a host character device granted", .host = plan->devices.v[i],
					.mount = -1, .tree = -1};
		if (model_push(m, &e, err) < 0)
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
		e.path = model_own(m, dir);
		if (!e.path || model_push(m, &e, err) < 0)
			return cordon_oom(err);
	}
	/* The run's CA bundle (TLS interception): the host's CAs and the
	 * run's, on a private tmpfs, read-only. */
	if (p && policy_intercepts(p)) {
		struct model_entry e = {.kind = MK_SECRET, .source = SRC_POLICY, .landlock = LL_READ,
					.view = VIEW_RO, .reason = "the run's CA bundle (TLS interception)",
					.mode = "0555", .size = 8 << 20, .noexec = true, .mount = -1, .tree = -1,
					.path = CORDON_CA_DIR};
		if (model_push(m, &e, err) < 0)
			return -1;
	}
	if (plan->check_files[0]) {
		struct model_entry e = {.path = plan->check_dir, .kind = MK_RO_BIND, .source = SRC_POLICY,
					.landlock = LL_RO, .view = VIEW_RO, .reason = "the check's own files",
					.host = plan->check_files, .mount = -1, .tree = (long)plan->nmounts};
		if (model_push(m, &e, err) < 0)
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
		if (model_push(m, &e, err) < 0)
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
	return model_push(m, &e, err);
}

int model_build_on(struct boundary_model *m, const struct run_plan *plan, const cordon_policy *p,
		   model_probe_fn probe, cordon_error *err)
{
	memset(m, 0, sizeof(*m));
	const char *root = plan ? plan->rootfs : "";
	if (add_system(m, root, plan, probe, err) < 0 ||
	    (plan && (add_task(m, plan, p, err) < 0 || add_ca_bundle(m, p, root, probe, err) < 0 ||
		      add_resolv(m, p, err) < 0 ||
		      model_add_protected(m, plan, p, probe, err) < 0 || model_relocate_at(m, plan, err) < 0 ||
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
