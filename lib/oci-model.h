/* cordon-oci's boundary model (lib/oci-model.c): config.json mapped onto
 * lib/model.h, one entry per path the container sees, as model.c maps a
 * policy for `cordon run`. The layers derive from it: Landlock's grants
 * (oci_landlock_grants), the observer's view (view_build: the file denials
 * of the report) and `cordon explain --bundle`'s paths. init's mount walk
 * (lib/oci-init.c) executes the config's mounts in the spec's order; the
 * model describes what that walk makes (docs/oci.md, "One model"). */
#pragma once
#include <stdbool.h>
#include <linux/landlock.h>
#include "compat.h"
#include "model.h"
#include "oci-config.h"

#define OCI_LL_READ (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define OCI_LL_DEV (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* The model of c (no syscall): root.path (MK_ROOT), each mount not covered
 * by a later one on the same destination (binds, tmpfs, proc, sysfs, devpts,
 * mqueue, cgroup, other types), linux.devices, the default devices of a
 * /dev mount, readonlyPaths, maskedPaths (MK_MASK, VIEW_MASKED) and the
 * run's CA directory when run.cordon.policy intercepts TLS. The entries'
 * paths are c's strings (c outlives the model). */
int oci_model_build(const struct oci_config *c, struct boundary_model *m, cordon_error *err);
/* A kernel filesystem's entry (proc, sysfs, devpts, mqueue, cgroup): its
 * files' permissions are the kernel's, Landlock does not carve them. */
bool oci_model_kernel(const struct model_entry *e);
/* A read-only path a writable grant above it is carved around: a read-only
 * bind, tmpfs or other mount, readonlyPaths, maskedPaths. */
bool oci_model_carved_around(const struct model_entry *e);
