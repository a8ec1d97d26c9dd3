#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cleanup.h"
#include "error.h"
#include "strv.h"
#include "view.h"

int view_add(struct view *v, const char *path, enum view_class cls, cordon_error *err)
{
	struct view_entry *e = realloc(v->e, (v->n + 1) * sizeof(*e));
	if (!e)
		return cordon_oom(err);
	v->e = e;
	v->e[v->n].path = strdup(path);
	if (!v->e[v->n].path)
		return cordon_oom(err);
	v->e[v->n].cls = cls;
	v->n++;
	return 0;
}

/* An entry of the model in the view: its class, or a top-level link. */
static int add_entry(struct view *v, const struct model_entry *e, cordon_error *err)
{
	if (e->kind == MK_SYMLINK) {
		/* The root's own links (/bin -> usr/bin); /dev's stay /dev. */
		if (!(e->flags & MODEL_FROM_HOST) || v->nlinks >= ARRAY_SIZE(v->links))
			return 0;
		char joined[PATH_MAX * 2], norm[PATH_MAX];
		snprintf(joined, sizeof(joined), "%s%s", e->target[0] == '/' ? "" : "/", e->target);
		if (path_normalize(joined, norm, sizeof(norm)) < 0)
			return 0;
		v->links[v->nlinks][0] = strdup(e->path);
		v->links[v->nlinks][1] = strdup(norm);
		if (!v->links[v->nlinks][0] || !v->links[v->nlinks][1])
			return cordon_oom(err);
		v->nlinks++;
		return 0;
	}
	if (e->view == VIEW_OUTSIDE)
		return 0;
	return view_add(v, e->path, e->view, err);
}

int view_build(const struct boundary_model *m, unsigned conds, struct view *v, cordon_error *err)
{
	memset(v, 0, sizeof(*v));
	for (size_t i = 0; i < m->n; i++)
		if (model_entry_active(&m->e[i], conds) && add_entry(v, &m->e[i], err) < 0)
			return -1;
	return 0;
}

int view_add_cond(struct view *v, const struct boundary_model *m, unsigned cond, cordon_error *err)
{
	for (size_t i = 0; i < m->n; i++)
		if ((m->e[i].flags & cond) && model_entry_active(&m->e[i], cond) && add_entry(v, &m->e[i], err) < 0)
			return -1;
	return 0;
}

void view_drop(struct view *v, const char *path, enum view_class cls)
{
	size_t k = 0;
	for (size_t i = 0; i < v->n; i++) {
		if (v->e[i].cls == cls && strcmp(v->e[i].path, path) == 0)
			free(v->e[i].path);
		else
			v->e[k++] = v->e[i];
	}
	v->n = k;
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

bool view_protects_below(const struct view *v, const char *resolved)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->e[i].cls == VIEW_PROTECTED && strcmp(v->e[i].path, resolved) != 0 &&
		    path_has_prefix(v->e[i].path, resolved))
			return true;
	return false;
}

bool view_denies(enum view_class cls, const char *resolved, bool write, bool host_exists)
{
	switch (cls) {
	case VIEW_RW:
	case VIEW_PROC:
		return false;
	case VIEW_RO:
	case VIEW_ROOT:
	case VIEW_PROTECTED:
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
	case VIEW_MASKED: /* hidden where it exists: reading it reads nothing */
	case VIEW_OUTSIDE:
	default:
		return write || host_exists;
	}
}
