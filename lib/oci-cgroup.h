/* A container's cgroup on v1 and v2 (lib/oci-cgroup.c). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cordon.h"
#include "oci-config.h"

/* Make the container's cgroup (path relative to the hierarchy roots) in every
 * hierarchy its resources need, write the limits, and attach pid. A cgroup
 * that already exists with processes in it is refused (as runc). */
int oci_cgroup_create(const struct oci_config *c, const char *path, pid_t pid, cordon_error *err);
/* A process joining a running container's cgroup (exec): nothing made and
 * no limit written; an error where it cannot join (it must not run outside). */
int oci_cgroup_join(const char *path, pid_t pid, cordon_error *err);
/* Apply a resources update to an existing container's cgroup. */
int oci_cgroup_update(const struct oci_config *c, const char *path, cordon_error *err);
/* Freeze (true) or thaw. */
int oci_cgroup_freeze(const char *path, bool freeze, cordon_error *err);
bool oci_cgroup_frozen(const char *path);
/* The pids in the container's cgroup. */
int oci_cgroup_pids(const char *path, pid_t **pids, size_t *n);
/* Remove the cgroup in every hierarchy (after the processes are gone). */
int oci_cgroup_remove(const char *path, cordon_error *err);
/* Usage for the report. */
int oci_cgroup_usage(const char *path, uint64_t *cpu_ns, uint64_t *peak_mem, uint64_t *oom_kills);
/* The default path for id ("/cordon-oci/ID"), or cgroupsPath as given
 * (--systemd-cgroup: "slice:prefix:name" as systemd places it, lib/oci-sdpath.h). */
int oci_cgroup_path(const struct oci_config *c, const char *id, bool systemd, char *out, size_t outsz,
		    cordon_error *err);
