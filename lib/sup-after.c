/* What the supervisor looks at on the host after a run, before its report
 * is finished: the protected paths that were absent at the start
 * (protect.h). It reads, never acts on what it finds. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include "cleanup.h"
#include "dirlist.h"
#include "model.h"
#include "plan.h"
#include "snapshot.h"
#include "sup-after.h"

int protect_check_after(const struct run_plan *plan, struct run_report *rep)
{
	int found = 0;
	const struct boundary_model *m = &plan->model;
	/* The first component below the writable path that was found absent
	 * or not a directory (the names share them: .git/config, .git/hooks,
	 * ...): nothing below it is there either, and each look is a syscall. */
	char absent[4096] = "";
	/* The writable path's top names, read once (dirlist.h): a name whose
	 * first component is not among them is still absent, without a look. */
	char root[4096] = "";
	strv tops = {0};
	bool have_top = false;
	for (size_t i = 0; i < m->n; i++) {
		const struct model_entry *e = &m->e[i];
		if (e->kind != MK_PROTECT || !(e->flags & MODEL_NOT_YET))
			continue;
		size_t plen = strlen(e->path), tlen = e->target ? strlen(e->target) : 0;
		size_t first = tlen && tlen < plen ? plen - tlen + strcspn(e->target, "/") : plen;
		if (absent[0] && strlen(absent) == first && strncmp(absent, e->path, first) == 0)
			continue;
		if (tlen && tlen + 1 < plen && plen - tlen - 1 < sizeof(root)) {
			size_t rl = plen - tlen - 1; /* the writable path: e->path = ROOT/target */
			if (strlen(root) != rl || strncmp(root, e->path, rl) != 0) {
				memcpy(root, e->path, rl);
				root[rl] = '\0';
				strv_free(&tops);
				have_top = rl > 1 && dirlist_read(root, 4096, &tops) == 0;
			}
			if (have_top && !dirlist_has(&tops, e->target, strcspn(e->target, "/")))
				continue;
		}
		/* No link is followed anywhere: ELOOP means a link is on the way
		 * now, which the run may have made (it was not there before). */
		if (first < plen && first < sizeof(absent)) { /* a deeper name: its top first */
			memcpy(absent, e->path, first);
			absent[first] = '\0';
			/* Not a directory (.git a worktree's file): nothing below it
			 * either, as when absent. A link still ends in ELOOP below. */
			_cleanup_close_ int top = open_root(absent, O_PATH | O_DIRECTORY);
			if (top < 0 && (errno == ENOENT || errno == ENOTDIR))
				continue;
			absent[0] = '\0';
		}
		_cleanup_close_ int fd = open_root(e->path, O_PATH);
		if (fd < 0 && errno != ELOOP)
			continue;
		report_add_denial(rep, "file", e->path);
		found++;
	}
	strv_free(&tops);
	return found;
}
