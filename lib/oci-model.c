/* config.json as a boundary model (oci-model.h). What is read-only follows
 * init's mount walk (lib/oci-init.c): "ro", and the host's sysfs and mqueue
 * where the container has no network or IPC namespace of its own. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include "oci-model.h"
#include "error.h"
#include "policy.h"

static const char *const default_devices[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
					      "/dev/urandom", "/dev/tty", NULL};

bool oci_model_kernel(const struct model_entry *e)
{
	return e->kind == MK_PROC || e->kind == MK_DEVPTS || e->kind == MK_CGROUP || e->kind == MK_KERNFS;
}

bool oci_model_carved_around(const struct model_entry *e)
{
	return e->landlock == 0 && (e->kind == MK_RO_BIND || e->kind == MK_TMPFS || e->kind == MK_MOUNT ||
				    e->kind == MK_MASK);
}

static int push(struct boundary_model *m, const struct model_entry *e, long mount, cordon_error *err)
{
	struct model_entry *n = realloc(m->e, (m->n + 1) * sizeof(*n));
	if (!n)
		return cordon_oom(err);
	m->e = n;
	m->e[m->n] = *e;
	m->e[m->n].mount = mount;
	m->e[m->n].tree = -1;
	if (!m->e[m->n].explain_path)
		m->e[m->n].explain_path = e->path;
	m->n++;
	return 0;
}

/* A string the model owns (NULL: out of memory). */
__attribute__((format(printf, 2, 3))) static const char *own(struct boundary_model *m, const char *fmt, ...)
{
	char s[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s, sizeof(s), fmt, ap);
	va_end(ap);
	return strv_push(&m->owned, s) < 0 ? NULL : m->owned.v[m->owned.n - 1];
}

static bool covered(const struct oci_config *c, size_t i)
{
	for (size_t j = i + 1; j < c->nmounts; j++)
		if (strcmp(c->mounts[j].dest, c->mounts[i].dest) == 0)
			return true;
	return false;
}

static bool has_mount(const struct oci_config *c, const char *dest)
{
	for (size_t i = 0; i < c->nmounts; i++)
		if (strcmp(c->mounts[i].dest, dest) == 0)
			return true;
	return false;
}

static enum model_kind kind_of(const struct oci_mount *m)
{
	if (m->bind || !m->type)
		return (m->flags & MS_RDONLY) ? MK_RO_BIND : MK_RW_BIND;
	if (strcmp(m->type, "tmpfs") == 0)
		return MK_TMPFS;
	if (strcmp(m->type, "proc") == 0)
		return MK_PROC;
	if (strcmp(m->type, "devpts") == 0)
		return MK_DEVPTS;
	if (strcmp(m->type, "cgroup") == 0 || strcmp(m->type, "cgroup2") == 0)
		return MK_CGROUP;
	if (strcmp(m->type, "sysfs") == 0 || strcmp(m->type, "mqueue") == 0)
		return MK_KERNFS;
	return MK_MOUNT;
}

static int mount_entry(struct boundary_model *m, const struct oci_config *c, size_t i, cordon_error *err)
{
	const struct oci_mount *om = &c->mounts[i];
	struct model_entry e = {.path = om->dest, .kind = kind_of(om), .source = SRC_POLICY, .host = om->source,
				};
	bool kernel = oci_model_kernel(&e);
	bool ro = (om->flags & MS_RDONLY) ||
		  (e.kind == MK_KERNFS && strcmp(om->type, "sysfs") == 0 && !c->ns_new[OCI_NS_NET]) ||
		  (e.kind == MK_KERNFS && strcmp(om->type, "mqueue") == 0 && !c->ns_new[OCI_NS_IPC]);
	e.landlock = ro ? 0 : MODEL_LL_ALL;
	e.view = ro ? VIEW_RO : kernel ? VIEW_PROC : VIEW_RW;
	e.noexec = (om->flags & MS_NOEXEC) != 0;
	if (e.kind == MK_RO_BIND || e.kind == MK_RW_BIND) {
		e.explain_mode = ro ? "ro" : "rw";
		e.reason = own(m, "bind of %s", om->source ? om->source : "?");
	} else {
		e.explain_mode = own(m, "%s%s", om->type, ro ? " ro" : "");
		e.reason = kernel ? own(m, "a %s mount: the kernel's own permissions%s", om->type,
					ro && !(om->flags & MS_RDONLY) ? ", read-only: the host's, not the container's" : "")
				  : own(m, "a %s mount%s", om->type, ro ? ", read-only" : "");
	}
	if (!e.reason || !e.explain_mode)
		return cordon_oom(err);
	return push(m, &e, (long)i, err);
}

int oci_model_build(const struct oci_config *c, struct boundary_model *m, cordon_error *err)
{
	memset(m, 0, sizeof(*m));
	struct model_entry root = {.path = "/", .kind = MK_ROOT, .source = SRC_POLICY, .host = c->root,
				   .landlock = c->readonly ? OCI_LL_READ : MODEL_LL_ALL,
				   .view = c->readonly ? VIEW_RO : VIEW_RW, .explain_mode = c->readonly ? "ro" : "rw"};
	root.reason = own(m, "root.path %s", c->root ? c->root : "?");
	int r = root.reason ? push(m, &root, -1, err) : cordon_oom(err);
	for (size_t i = 0; r == 0 && i < c->nmounts; i++)
		if (!covered(c, i))
			r = mount_entry(m, c, i, err);
	for (size_t i = 0; r == 0 && i < c->ndevices; i++) {
		const struct oci_dev *d = &c->devices[i];
		char maj[64];
		snprintf(maj, sizeof(maj), "%c %lld:%lld", d->type, (long long)d->major, (long long)d->minor);
		struct model_entry e = {.path = d->path, .kind = MK_DEVICE, .source = SRC_POLICY, .landlock = OCI_LL_DEV,
					.view = VIEW_RW, .explain_mode = "dev",
					.reason = own(m, "%s, linux.devices: the host's node bound", maj)};
		r = e.reason ? push(m, &e, -1, err) : cordon_oom(err);
	}
	/* the default devices init makes in a /dev mount: /dev's grant and class are theirs */
	for (const char *const *d = default_devices; r == 0 && has_mount(c, "/dev") && *d; d++) {
		bool listed = has_mount(c, *d);
		for (size_t i = 0; i < c->ndevices; i++)
			listed |= strcmp(c->devices[i].path, *d) == 0;
		struct model_entry e = {.path = *d, .kind = MK_DEVICE, .source = SRC_DEFAULT, .flags = MODEL_SYSTEM,
					.explain_mode = "dev", .reason = "a default device of the runtime-spec (the host's node bound)"};
		if (!listed)
			r = push(m, &e, -1, err);
	}
	for (size_t i = 0; r == 0 && i < c->ro_paths.n; i++) {
		struct model_entry e = {.path = c->ro_paths.v[i], .kind = MK_RO_BIND, .source = SRC_POLICY,
					.host = c->ro_paths.v[i], .view = VIEW_RO, .explain_mode = "ro",
					.reason = "readonlyPaths", .flags = MODEL_OPTIONAL};
		r = push(m, &e, -1, err);
	}
	for (size_t i = 0; r == 0 && i < c->masked.n; i++) {
		struct model_entry e = {.path = c->masked.v[i], .kind = MK_MASK, .source = SRC_POLICY,
					.view = VIEW_MASKED, .explain_mode = "masked", .reason = "maskedPaths",
					.flags = MODEL_OPTIONAL};
		r = push(m, &e, -1, err);
	}
	/* run.cordon.policy's TLS: the run's CA, a read-only mount init adds
	 * after the config's (no rule of its own: the root's read covers it) */
	if (r == 0 && (c->egress_run || (c->egress && policy_intercepts(c->egress)))) {
		struct model_entry e = {.path = CORDON_CA_DIR, .kind = MK_SECRET, .source = SRC_POLICY, .view = VIEW_RO,
					.explain_mode = "ro", .reason = "the run's CA bundle (TLS interception, run.cordon.policy)"};
		r = push(m, &e, -1, err);
	}
	if (r < 0)
		model_free(m);
	return r;
}
