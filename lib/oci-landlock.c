/* Landlock in OCI mode: the grants of the container's boundary model
 * (lib/oci-model.h, config.json mapped onto lib/model.h), expanded by init
 * on the view as mounted into rules (a model of one entry per rule), which
 * landlock_prepare turns into the ruleset lib/landlock.c applies, as for
 * `cordon run`.
 *
 * A Landlock right granted on a directory holds in everything below it,
 * mounts included, and no rule can take it back. So a write grant with a
 * read-only bind or tmpfs below it (a writable root holding /ro) is carved:
 * instead of the directory itself, each of its entries gets the grant, down
 * the way to the read-only path, which gets none. New names directly in a
 * directory on that way cannot be made (docs/oci.md says so). The kernel's
 * own filesystems (proc, sysfs, cgroup, mqueue, devpts) are not carved: their
 * files' permissions are the kernel's, and what is read-only there (sysfs,
 * /proc/sys) stays so by its mount, which the container cannot change under
 * Landlock (a restricted process may not mount, remount or unmount). */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <linux/landlock.h>
#include "oci-landlock.h"
#include "policy.h"
#include "proxy.h"
#include "compat.h"
#include "error.h"
#include "model.h"
#include "oci-model.h"

/* deep enough for any real tree; a carve deeper than this is refused */
#define CARVE_DEPTH 64

static int push_grant(struct oci_ll_grants *g, const char *path, bool write, bool carve, const char *why,
		      cordon_error *err)
{
	struct oci_ll_grant *n = realloc(g->g, (g->n + 1) * sizeof(*n));
	if (!n)
		return cordon_oom(err);
	g->g = n;
	g->g[g->n++] = (struct oci_ll_grant){.path = path, .write = write, .carve = carve, .why = why};
	return 0;
}

/* p lies strictly below a kernel filesystem's mount: no carve reaches it. */
static bool below_kernel_fs(const struct boundary_model *m, const char *p)
{
	for (size_t i = 0; i < m->n; i++)
		if (oci_model_kernel(&m->e[i]) && strcmp(p, m->e[i].path) != 0 && path_has_prefix(p, m->e[i].path))
			return true;
	return false;
}

static int push_except(struct oci_ll_grants *g, const struct boundary_model *m, const char *p, cordon_error *err)
{
	if (below_kernel_fs(m, p))
		return 0;
	for (size_t i = 0; i < g->except.n; i++)
		if (strcmp(g->except.v[i], p) == 0)
			return 0;
	return strv_push(&g->except, p) < 0 ? cordon_oom(err) : 0;
}

static const char *why_of(const struct model_entry *e)
{
	if (e->kind == MK_RW_BIND)
		return "a writable bind";
	return oci_model_kernel(e) ? "a kernel filesystem, not read-only" : "a writable mount";
}

int oci_landlock_grants_of(const struct boundary_model *m, struct oci_ll_grants *out, cordon_error *err)
{
	memset(out, 0, sizeof(*out));
	int r = 0;
	for (size_t i = 0; r == 0 && i < m->n; i++) {
		const struct model_entry *e = &m->e[i];
		if (e->kind == MK_ROOT) {
			r = push_grant(out, e->path, false, false, "the container's view", err);
			if (r == 0 && e->landlock == MODEL_LL_ALL)
				r = push_grant(out, e->path, true, true, "root.path (root.readonly is false)", err);
		} else if (e->kind == MK_DEVICE && e->landlock) {
			r = push_grant(out, e->path, true, false, "linux.devices", err);
			if (r == 0 && out->g) /* out->g is set when push_grant returns 0 (the analyzer cannot see it) */
				out->g[out->n - 1].device = true;
		} else if (e->landlock == MODEL_LL_ALL)
			r = push_grant(out, e->path, true, !oci_model_kernel(e), why_of(e), err);
		else if (oci_model_carved_around(e))
			r = push_except(out, m, e->path, err);
	}
	if (r < 0)
		oci_landlock_grants_free(out);
	return r;
}

int oci_landlock_grants(const struct oci_config *c, struct oci_ll_grants *out, cordon_error *err)
{
	struct boundary_model m;
	memset(out, 0, sizeof(*out));
	if (oci_model_build(c, &m, err) < 0)
		return -1;
	/* the grants' paths are c's strings (or static): they outlive the model */
	int r = oci_landlock_grants_of(&m, out, err);
	model_free(&m);
	return r;
}

void oci_landlock_grants_free(struct oci_ll_grants *g)
{
	free(g->g);
	strv_free(&g->except);
	memset(g, 0, sizeof(*g));
}

/* --- init's side: the grants on the view as mounted --- */

struct carve {
	struct boundary_model m;
	strv except, mounts; /* canonical, as init sees them after pivot_root */
};

static bool in_list(const strv *l, const char *p)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], p) == 0)
			return true;
	return false;
}

static bool except_below(const strv *l, const char *p)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], p) != 0 && path_has_prefix(l->v[i], p))
			return true;
	return false;
}

static int add_rule(struct carve *x, const char *path, uint64_t access, cordon_error *err)
{
	if (strv_push(&x->m.owned, path) < 0)
		return cordon_oom(err);
	struct model_entry *n = realloc(x->m.e, (x->m.n + 1) * sizeof(*n));
	if (!n)
		return cordon_oom(err);
	x->m.e = n;
	x->m.e[x->m.n++] = (struct model_entry){
		.path = x->m.owned.v[x->m.owned.n - 1], .kind = MK_RW_BIND, .landlock = access,
		.flags = MODEL_OPTIONAL, .mount = -1, .tree = -1,
	};
	return 0;
}

/* Every right on path, but not on the read-only paths below it: the grant
 * goes to path's entries instead, each carved again where one lies below. */
static int carve(struct carve *x, const char *path, int depth, cordon_error *err)
{
	if (in_list(&x->except, path))
		return 0;
	if (!except_below(&x->except, path))
		return add_rule(x, path, MODEL_LL_ALL, err);
	if (depth > CARVE_DEPTH)
		return cordon_err(err, 0, "landlock: %s: too deep to carve around a read-only path", path);
	DIR *d = opendir(path);
	if (!d)
		return cordon_err_errno(err, "landlock: carving %s", path);
	int r = 0;
	struct dirent *e;
	while (r == 0 && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char child[PATH_MAX];
		snprintf(child, sizeof(child), "%s/%s", strcmp(path, "/") == 0 ? "" : path, e->d_name);
		struct stat st;
		/* a link's rule would be its target's; another mount has its own grant (or none) */
		if (e->d_type == DT_LNK || (e->d_type == DT_UNKNOWN && lstat(child, &st) == 0 && S_ISLNK(st.st_mode)) ||
		    in_list(&x->mounts, child))
			continue;
		r = carve(x, child, depth + 1, err);
	}
	closedir(d);
	return r;
}

static int canonical_list(const char *const *v, size_t n, strv *out, cordon_error *err)
{
	for (size_t i = 0; i < n; i++) {
		char real[PATH_MAX];
		if (realpath(v[i], real) && strv_push(out, real) < 0)
			return cordon_oom(err);
	}
	return 0;
}

static int prepare_from(struct carve *x, const struct oci_config *c, const struct oci_ll_grants *g, cordon_error *err)
{
	if (canonical_list((const char *const *)g->except.v, g->except.n, &x->except, err) < 0)
		return -1;
	for (size_t i = 0; i < c->nmounts; i++)
		if (canonical_list((const char *const *)&c->mounts[i].dest, 1, &x->mounts, err) < 0)
			return -1;
	for (size_t i = 0; i < g->n; i++) {
		char real[PATH_MAX];
		if (!realpath(g->g[i].path, real))
			continue; /* absent from the view: nothing to grant */
		int r;
		if (g->g[i].device)
			r = add_rule(x, real, OCI_LL_DEV, err); /* the model's MK_DEVICE access */
		else if (!g->g[i].write)
			r = add_rule(x, real, OCI_LL_READ, err);
		else if (g->g[i].carve)
			r = carve(x, real, 0, err);
		else
			r = add_rule(x, real, MODEL_LL_ALL, err);
		if (r < 0)
			return -1;
	}
	return 0;
}

int oci_landlock_prepare(const struct oci_config *c, struct landlock_plan *out, cordon_error *err)
{
	memset(out, 0, sizeof(*out));
	int abi = landlock_abi();
	if (!abi)
		return 0;
	struct oci_ll_grants g;
	if (oci_landlock_grants(c, &g, err) < 0)
		return -1;
	struct carve x = {0};
	int r = prepare_from(&x, c, &g, err);
	if (r == 0)
		r = landlock_prepare(&x.m, 0, abi, c->egress ? c->egress->loopback_ports : NULL,
				     c->egress ? c->egress->nloopback_ports : 0, out, err);
	/* run.cordon.policy's network.loopback_ports, as cordon run's
	 * (landlock_prepare_run): those ports, and connect to the proxy's */
	if (r == 0 && c->egress && c->egress->net_allow.n)
		out->connect_port = PROXY_PORT;
	/* No scoping: a process `exec` adds gets a domain of its own, and
	 * scoping would cut it off from the container's (signals, abstract
	 * sockets); the container's own namespaces keep the host's apart. */
	out->scoped = 0;
	model_free(&x.m);
	strv_free(&x.except);
	strv_free(&x.mounts);
	oci_landlock_grants_free(&g);
	if (r < 0)
		landlock_plan_free(out);
	return r;
}

int oci_landlock_apply(const struct landlock_plan *lp, cordon_error *err)
{
	return landlock_apply(lp, err);
}

void oci_landlock_describe(const struct landlock_plan *lp, char *out, size_t outsz)
{
	snprintf(out, outsz, "landlock %d %zu", lp->abi, lp->n);
}

bool oci_landlock_parse(const char *text, int *abi, unsigned *rules)
{
	return sscanf(text, "landlock %d %u", abi, rules) == 2;
}
