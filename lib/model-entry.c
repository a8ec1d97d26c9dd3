/* The boundary model's entries (model.h, model-internal.h): their storage,
 * the names of their kinds, the questions asked of one entry, and the
 * host's own probe. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cleanup.h"
#include "compat.h"
#include "model-internal.h"
#include "snapshot.h"

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

int model_push(struct boundary_model *m, const struct model_entry *e, cordon_error *err)
{
	struct model_entry *n = realloc(m->e, (m->n + 1) * sizeof(*n));
	if (!n)
		return cordon_oom(err);
	m->e = n;
	m->e[m->n++] = *e;
	return 0;
}

const char *model_own(struct boundary_model *m, const char *s)
{
	return strv_push(&m->owned, s) < 0 ? NULL : m->owned.v[m->owned.n - 1];
}

int model_probe_host(const char *path, bool follow, char *target, size_t tsz)
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
