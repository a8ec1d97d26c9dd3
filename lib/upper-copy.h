/* A copy of an overlayfs upper directory (a session's snapshot, issue 38):
 * what the run changed, as overlayfs keeps it: files, directories, links,
 * whiteouts (character devices 0/0), FIFOs and sockets, the user.*
 * extended attributes (user.overlay.opaque and the rest), hard links kept
 * as links within the copy, owners (as root), modes (no setuid or setgid
 * bit) and modification times.
 *
 * The source was written by the run and is hostile: each entry is opened
 * through its parent's fd (open_beneath: RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV, O_NOFOLLOW | O_NONBLOCK), fstat'd
 * and compared with what the directory listed; only regular files are
 * read, a link is read as a link and never followed, a device other than a
 * whiteout is left out (counted). The walk is bounded: entries, bytes of
 * regular files, depth. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "error.h"

struct ucopy_limits {
	uint64_t max_entries; /* entries of any kind */
	uint64_t max_bytes;   /* bytes of regular files (st_size) */
	unsigned max_depth;   /* directory levels below the root */
	/* The view instead of the layer (a fork's workspace, made from a
	 * snapshot over an empty lower tree): whiteouts and the user.overlay.*
	 * attributes left out. */
	bool merged;
	/* Every entry owned by uid:gid (a fork's workspace: the owner of a
	 * session's workspace, as an apply's files are), not the source's. */
	bool own;
	uid_t uid;
	gid_t gid;
};

struct ucopy_stat {
	uint64_t entries, files, bytes;
	uint64_t skipped; /* devices other than whiteouts: not copied */
};

/* Why upper_copy failed, in err->code: the copy is past max_entries or
 * max_depth (E2BIG), past max_bytes (EDQUOT); any other errno is the
 * system's. */
#define UCOPY_OVER_BOUND E2BIG
#define UCOPY_OVER_BUDGET EDQUOT

/* Copy the tree below src (a directory fd) into a new directory name in
 * dst_parent (mode 0700, made here; it must not exist). On failure what
 * was made is removed, -1 and err. */
int upper_copy(int src, int dst_parent, const char *name, const struct ucopy_limits *lim, struct ucopy_stat *st,
	       cordon_error *err);
/* The view of src (an upper layer) over dst (a plain tree, the lower
 * layer's copy, changed in place): each whiteout removes what dst has
 * there, an opaque directory replaces dst's, anything else replaces what
 * is there or merges into a directory (lim->merged implied). On failure
 * dst is left part-way: -1 and err. */
int upper_apply(int src, int dst, const struct ucopy_limits *lim, struct ucopy_stat *st, cordon_error *err);
/* The patch that takes a view from one upper layer to another over the
 * same lower tree (a restore: the view now, lower + cur, to the
 * snapshot's, lower + snap), made as a new directory name in dst_parent
 * for upper_apply: only the paths cur or snap has (and, below a directory
 * either makes anew, opaque or over what is not a directory, the whole of
 * the snapshot's view there) hold an entry, as the snapshot's view has it,
 * or a whiteout where it has none; a directory the view must make anew is
 * marked opaque. cur is hostile (the run's upper layer, read only: names,
 * types and opaque marks); lim->merged implied; hard links of the lower
 * tree are not kept, the snapshot's are. On failure what was made is
 * removed, -1 and err. */
int upper_patch(int lower, int cur, int snap, int dst_parent, const char *name, const struct ucopy_limits *lim,
		struct ucopy_stat *st, cordon_error *err);
/* Remove the tree name in parent (one upper_copy made), fd-based, no link
 * followed, at most max_depth levels. 0, or -1 and err. */
int upper_remove(int parent, const char *name, unsigned max_depth, cordon_error *err);
