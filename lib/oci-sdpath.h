/* The systemd cgroup driver's cgroupsPath, as a cgroupfs path (lib/oci-sdpath.c). */
#pragma once
#include <stddef.h>
#include "cordon.h"

/* "slice:prefix:name" (cordon-oci --systemd-cgroup; kubelet's and
 * containerd's systemd driver) → the path systemd gives that scope below a
 * hierarchy's root, as runc and crun compute it: the slice expanded along
 * its dashes ("a-b-c.slice" → "/a.slice/a-b.slice/a-b-c.slice"; "" is
 * system.slice, "-.slice" the root), then "prefix-name.scope" ("name.scope"
 * where prefix is empty; name itself where it is a ".slice"). No syscall:
 * where systemd is not PID 1 the path is made on cgroupfs as it is. An
 * ill-formed spec (fields, an empty dash component, a character systemd
 * refuses in a unit name, over 255 bytes a unit) is an error naming it. */
int oci_systemd_cgroup_path(const char *spec, char *out, size_t outsz, cordon_error *err);
