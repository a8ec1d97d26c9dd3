/* Before/after snapshots of the writable paths, to name the files a run
 * created, changed or deleted (report "outputs"), and the hashes of the
 * policy's inputs.
 *
 * Everything below a root is the run's (or an earlier run's, or a
 * concurrent run's) and is treated as hostile: each directory and file is
 * opened through its parent's fd with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV) and
 * O_NONBLOCK | O_NOCTTY | O_NOFOLLOW, then fstat'd: only regular files are
 * read. The walk, the lists and the hashing are bounded (entries, path
 * bytes, depth; records; bytes and time), whatever the run leaves. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cordon.h"
#include "hash.h"
#include "strv.h"

/* The walk: entries, bytes of paths kept, directory depth. */
#define SNAPSHOT_MAX_ENTRIES 200000
#define SNAPSHOT_MAX_PATH_BYTES (4u << 20)
#define SNAPSHOT_MAX_DEPTH 256
#define SNAPSHOT_MAX_ROOTS 256
/* The report's lists: records and bytes of paths. */
#define FILES_MAX_RECORDS 20000
#define FILES_MAX_PATH_BYTES (1u << 20)

/* Why a walk or a list is incomplete (the report's "reason"). */
enum cut_reason { CUT_NONE, CUT_WALK_ENTRIES, CUT_WALK_PATH_BYTES, CUT_WALK_DEPTH, CUT_LIST_FILES,
		  CUT_LIST_PATH_BYTES };
const char *cut_name(enum cut_reason c);

struct snap_entry {
	uint32_t path; /* offset of the absolute host path in the arena */
	uint16_t root; /* index into roots */
	mode_t mode;
	ino_t ino;
	off_t size;
	int64_t mtime_ns, ctime_ns;
};

struct snapshot {
	struct snap_entry *e;
	size_t n, cap;
	char *arena; /* NUL-terminated paths, SNAPSHOT_MAX_PATH_BYTES at most */
	size_t arena_len, arena_cap;
	/* The roots, opened once (O_PATH, no symlink anywhere in the path):
	 * files are hashed beneath these fds, never by path. */
	int rootfd[SNAPSHOT_MAX_ROOTS];
	size_t rootlen[SNAPSHOT_MAX_ROOTS]; /* strlen of the root's path */
	size_t nroots;
	bool truncated;
	enum cut_reason cut;
	int64_t taken_ns; /* CLOCK_REALTIME when the walk started */
};

static inline const char *snap_path(const struct snapshot *s, const struct snap_entry *e)
{
	return s->arena + e->path;
}

/* roots are canonical absolute paths (no symlink in them: one is refused). */
int snapshot_take(struct snapshot *s, const char *const *roots, size_t nroots, cordon_error *err);
void snapshot_free(struct snapshot *s);

enum change { CHANGE_CREATED, CHANGE_MODIFIED, CHANGE_DELETED };
enum hash_skip { SKIP_NONE, SKIP_BYTE_BUDGET, SKIP_TIME_BUDGET, SKIP_UNREADABLE };
const char *hash_skip_name(enum hash_skip s);
struct file_record {
	char *path; /* relative to base if below it, else absolute */
	enum change change;
	bool regular;        /* a regular file when hashed (fstat of the open fd) */
	enum hash_skip skip; /* why a regular file has no sha256 */
	uint64_t bytes;      /* bytes hashed, or the size when not hashed */
	char sha256[65];
};
struct file_list {
	struct file_record *r;
	size_t n, cap;
	bool truncated;        /* the walk or the list was cut */
	enum cut_reason cut;
	uint64_t omitted;      /* changed files found but not listed */
	size_t path_bytes;
	struct hash_budget hash;
};

/* Compare before/after and hash what was created or modified (beneath
 * after's root fds). */
int snapshot_diff(const struct snapshot *before, const struct snapshot *after, const char *base,
		  struct file_list *out, cordon_error *err);
/* Every regular file below each root, hashed (report "inputs"). roots are
 * canonical (the caller resolved them, refusing symlinks the run could
 * have planted); a symlink found in one now is refused, never followed. */
int files_hash_tree(const char *const *roots, size_t nroots, const char *base,
		    struct file_list *out, cordon_error *err);
void file_list_free(struct file_list *l);
/* Its records in strcmp order of their paths. */
void file_list_sort(struct file_list *l);
/* An empty list with its hash budget (for lists built entry by entry). */
void file_list_start(struct file_list *l);
/* Append a record for path (absolute; named relative to base when below
 * it); a created or modified regular file is hashed from fd (owned, closed
 * here; -1 = could not be opened). A full list counts it as omitted. */
int file_list_add(struct file_list *l, const char *path, const char *base, enum change c, bool regular, int fd,
		  cordon_error *err);
const char *change_name(enum change c);

/* openat2 beneath dirfd with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV and O_NONBLOCK | O_NOCTTY |
 * O_NOFOLLOW | O_CLOEXEC added to flags. -1 and errno on failure. */
int open_beneath(int dirfd, const char *path, int flags);
/* A canonical absolute host path, opened from / with no symbolic link
 * followed anywhere (RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS). */
int open_root(const char *path, int flags);
/* A root that is a file (granted on its own), opened O_RDONLY as above:
 * a regular file only, and with pinned >= 0 only the same inode as pinned.
 * -1 and errno on failure. */
int open_root_file(const char *path, int pinned);
