/* An unpacked image directory as the run's system view (cordon run
 * --rootfs DIR, policy "root"): the checks made on it before anything
 * starts (lib/rootfs.c). The model (model.c) shows its top-level entries
 * in place of the host's /usr, /etc, /bin, /lib... */
#pragma once
#include <stddef.h>
#include "error.h"

/* Resolve dir (absolute, as the policy layer made it) into out, its
 * canonical path, refusing with one line naming dir: a path that is not
 * there or not a directory, a symbolic link itself, the host's root, a
 * directory on the way or dir itself that a user other than root or the
 * caller owns or may write (a sticky one on the way holds only root's or
 * the caller's entry), or an image /proc or /dev that is a symbolic link.
 * As root, also a directory on the way that others cannot search: the run
 * is another user, and its init binds the image's directories. */
int rootfs_resolve(const char *dir, char *out, size_t outsz, cordon_error *err);
