#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cleanup.h"
#include "error.h"
#include "strv.h"
#include "mounts.h"
#include "view.h"

int view_add(struct view *v, const char *path, enum view_class cls, cordon_error *err)
{
	struct view_entry *e = realloc(v->e, (v->n + 1) * sizeof(*e));
	if (!e)
		return cordon_err(err, 12, "out of memory");
	v->e = e;
	v->e[v->n].path = strdup(path);
	if (!v->e[v->n].path)
		return cordon_err(err, 12, "out of memory");
	v->e[v->n].cls = cls;
	v->n++;
	return 0;
}

int view_build(const struct run_plan *plan, struct view *v, cordon_error *err)
{
	memset(v, 0, sizeof(*v));
	static const struct { const char *p; enum view_class c; } sys[] = {
		{"/tmp", VIEW_RW}, {"/proc", VIEW_PROC},
		{"/dev", VIEW_DEV}, {"/dev/shm", VIEW_RW}, {"/dev/pts", VIEW_DEV},
	};
	for (const char *const *d = mounts_system_dirs; *d; d++)
		if (view_add(v, *d, VIEW_RO, err) < 0)
			return -1;
	for (size_t i = 0; i < ARRAY_SIZE(sys); i++)
		if (view_add(v, sys[i].p, sys[i].c, err) < 0)
			return -1;
	for (const char *const *f = mounts_host_files; *f; f++)
		if (access(*f, F_OK) == 0 && view_add(v, *f, VIEW_RO, err) < 0)
			return -1;
	const char *const *links = mounts_system_links;
	for (size_t i = 0; links[i]; i++) {
		struct stat st;
		if (lstat(links[i], &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (view_add(v, links[i], VIEW_RO, err) < 0)
				return -1;
		} else if (S_ISLNK(st.st_mode) && v->nlinks < ARRAY_SIZE(v->links)) {
			char t[PATH_MAX], joined[PATH_MAX * 2], norm[PATH_MAX];
			ssize_t n = readlink(links[i], t, sizeof(t) - 1);
			if (n < 0)
				continue;
			t[n] = '\0';
			snprintf(joined, sizeof(joined), "%s%s", t[0] == '/' ? "" : "/", t);
			if (path_normalize(joined, norm, sizeof(norm)) < 0)
				continue;
			v->links[v->nlinks][0] = strdup(links[i]);
			v->links[v->nlinks][1] = strdup(norm);
			if (!v->links[v->nlinks][0] || !v->links[v->nlinks][1])
				return cordon_err(err, 12, "out of memory");
			v->nlinks++;
		}
	}
	for (size_t i = 0; i < plan->nmounts; i++) {
		const struct cordon_mount *m = &plan->mounts[i];
		if (view_add(v, m->path, m->mode == MOUNT_RO ? VIEW_RO : VIEW_RW, err) < 0)
			return -1;
	}
	/* Exposed devices may be opened for writing like the standard nodes. */
	for (size_t i = 0; i < plan->devices.n; i++)
		if (view_add(v, plan->devices.v[i], VIEW_RW, err) < 0)
			return -1;
	if (plan->check_files[0] && view_add(v, plan->check_dir, VIEW_RO, err) < 0)
		return -1;
	return 0;
}

void view_free(struct view *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->e[i].path);
	free(v->e);
	for (size_t i = 0; i < v->nlinks; i++) {
		free(v->links[i][0]);
		free(v->links[i][1]);
	}
	memset(v, 0, sizeof(*v));
}

enum view_class view_classify(const struct view *v, const char *path, char *out, size_t outsz)
{
	char norm[PATH_MAX];
	if (path[0] != '/' || path_normalize(path, norm, sizeof(norm)) < 0) {
		snprintf(out, outsz, "%s", path);
		return VIEW_OUTSIDE;
	}
	/* Top-level links (/bin -> /usr/bin) exist in the view as links. */
	for (size_t i = 0; i < v->nlinks; i++) {
		if (path_has_prefix(norm, v->links[i][0])) {
			char tmp[PATH_MAX * 2];
			snprintf(tmp, sizeof(tmp), "%s%s", v->links[i][1], norm + strlen(v->links[i][0]));
			if (path_normalize(tmp, norm, sizeof(norm)) < 0)
				break;
			break;
		}
	}
	snprintf(out, outsz, "%s", norm);
	/* The innermost mount containing the path decides. */
	size_t best = 0;
	enum view_class cls = VIEW_OUTSIDE;
	for (size_t i = 0; i < v->n; i++) {
		size_t l = strlen(v->e[i].path);
		if (path_has_prefix(norm, v->e[i].path) && l >= best) {
			best = l;
			cls = v->e[i].cls;
		}
	}
	if (cls != VIEW_OUTSIDE)
		return cls;
	/* Ancestors of mount points exist as directories of the root. */
	if (strcmp(norm, "/") == 0)
		return VIEW_ROOT;
	for (size_t i = 0; i < v->n; i++)
		if (path_has_prefix(v->e[i].path, norm))
			return VIEW_ROOT;
	for (size_t i = 0; i < v->nlinks; i++)
		if (strcmp(norm, v->links[i][0]) == 0)
			return VIEW_ROOT;
	return VIEW_OUTSIDE;
}

bool view_denies(enum view_class cls, const char *resolved, bool write, bool host_exists)
{
	switch (cls) {
	case VIEW_RW:
	case VIEW_PROC:
		return false;
	case VIEW_RO:
	case VIEW_ROOT:
		return write;
	case VIEW_DEV: {
		/* The nodes that exist may be written; nothing can be created. */
		static const char *const nodes[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
						    "/dev/urandom", "/dev/tty", "/dev/ptmx"};
		if (!write)
			return false;
		for (size_t i = 0; i < ARRAY_SIZE(nodes); i++)
			if (strcmp(resolved, nodes[i]) == 0)
				return false;
		return !path_has_prefix(resolved, "/dev/pts");
	}
	case VIEW_OUTSIDE:
	default:
		return write || host_exists;
	}
}
