/* Before/after snapshots of the writable paths, to name the files a run
 * created, changed or deleted (report "outputs"). Walks by fd, never follows
 * symlinks, stays on one filesystem. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cordon.h"

struct snap_entry {
	char *path; /* absolute host path */
	mode_t mode;
	ino_t ino;
	off_t size;
	int64_t mtime_ns, ctime_ns;
};

struct snapshot {
	struct snap_entry *e;
	size_t n, cap;
	bool truncated;
};

#define SNAPSHOT_MAX_ENTRIES 200000

int snapshot_take(struct snapshot *s, const char *const *roots, size_t nroots, cordon_error *err);
void snapshot_free(struct snapshot *s);

enum change { CHANGE_CREATED, CHANGE_MODIFIED, CHANGE_DELETED };
struct file_record {
	char *path; /* relative to base if below it, else absolute */
	enum change change;
	bool regular;
	uint64_t bytes;
	char sha256[65];
};
struct file_list {
	struct file_record *r;
	size_t n;
	bool truncated;
};

/* Compare before/after and hash what was created or modified. */
int snapshot_diff(const struct snapshot *before, const struct snapshot *after, const char *base,
		  struct file_list *out, cordon_error *err);
/* Every regular file below each root, hashed (report "inputs"). */
int files_hash_tree(const char *const *roots, size_t nroots, const char *base,
		    struct file_list *out, cordon_error *err);
void file_list_free(struct file_list *l);
const char *change_name(enum change c);
