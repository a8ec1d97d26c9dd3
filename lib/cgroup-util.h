/* The cgroup files and the host's hierarchies (lib/cgroup-util.c): the
 * helpers under the cgroup front end and its two backends (cgroup.h). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cordon.h"

/* The host's hierarchies and our place in them, read once for several
 * questions: /proc/self/mountinfo and /proc/self/cgroup, whole. */
struct cg_host {
	char *mountinfo, *cgroup;
};
/* A cgroup file written or read (one value, or the "key N" line of key). */
int cg_write(const char *dir, const char *file, const char *val, cordon_error *err);
int cg_read_u64(const char *dir, const char *file, uint64_t *out);
int cg_read_key(const char *dir, const char *file, const char *key, uint64_t *out);
int cg_host_read(struct cg_host *h);
void cg_host_free(struct cg_host *h);
/* Our own cgroup path for a controller ("" for v2) in h's /proc/self/cgroup. */
int cg_self_path_in(const struct cg_host *h, const char *controller, char *out, size_t outsz);
/* v2: does dir's cgroup.controllers list this controller (exact name)? */
bool cg_v2_has(const char *dir, const char *name);
/* v2: the directory the runs' cgroups go in: our own cgroup ("<mount><self>"),
 * or the one above it when cg_v2_enable moved us into our leaf. */
int cg_v2_self_dir(char *out, size_t outsz);
int cg_v2_self_dir_in(const struct cg_host *h, char *out, size_t outsz);
/* v2: the supervisor's own leaf, cordon-PID-supervisor. */
#define CG_V2_LEAF_FMT "cordon-%d-supervisor"
/* v2: enable controllers ("+memory +pids") for dir's children. When dir has
 * members and this process is the only one, move into our leaf first
 * ("no internal processes"); with other members the error is EBUSY. */
int cg_v2_enable(const char *dir, const char *want, cordon_error *err);
/* Mount point of the hierarchy carrying controller (v1) or the cgroup2 one. */
int cg_mount_point(const char *controller, bool v2, char *out, size_t outsz);
int cg_mount_point_in(const struct cg_host *h, const char *controller, bool v2, char *out, size_t outsz);
