/* The image's privileged files, held read-only (lib/oci-privguard.c;
 * docs/oci.md, "No setuid or setgid file out of a container"). The rootfs
 * is idmapped: its root-owned setuid, setgid-executable and file-capability
 * files are the container root's to write, and a write through a shared
 * mapping keeps their bits (write(2) clears them, mmap does not). Where a
 * host user other than root could reach the rootfs, init binds each such
 * file read-only onto itself before anything else is mounted: the
 * container can neither change it (EROFS), link it elsewhere (EXDEV) nor
 * move or remove it (EBUSY), and no mount call is left to it (the deny
 * list, Landlock). */
#pragma once
#include <stdbool.h>
#include "error.h"

/* Can a host user other than root reach the directory path (absolute,
 * links resolved by the caller)? False when some directory on the way is
 * root's and lets neither its group nor others through (mode & 011 == 0),
 * as podman's storage (0700) does; true otherwise, and on any doubt. */
bool oci_privguard_needed(const char *path);
/* In init: bind every privileged regular file of the mount rootfd (its own
 * filesystem only: no submount is entered) read-only onto itself; *n gets
 * how many. Directories deeper than 256 levels are refused. */
int oci_privguard_apply(int rootfd, unsigned *n, cordon_error *err);
