/* cgroup v2 (cgroup-v2.c): one directory under our own cgroup, the child
 * cloned straight into it; the backend's table. */
#pragma once
#include "cgroup.h"

extern const struct cgroup_ops cgroup_v2_ops;
