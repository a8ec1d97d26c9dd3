/* cgroup v1 (cgroup-v1.c): one directory in each of the memory, pids and
 * cpuacct hierarchies, under our own cgroup there; the backend's table. */
#pragma once
#include "cgroup.h"

/* v1: the controllers of a run's cgroup, in the order of cgroup.dirs. */
extern const char *const cg_v1_controllers[3];

extern const struct cgroup_ops cgroup_v1_ops;
