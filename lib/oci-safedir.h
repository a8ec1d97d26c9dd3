/* A directory whose contents later verbs trust (lib/oci-safedir.c): the
 * state root (--root) and the host-wide uid slots. */
#pragma once
#include <stdbool.h>
#include <sys/types.h>
#include "cordon.h"

/* Open the absolute path dir (O_PATH), refusing it, with one line naming the
 * directory at fault, where another user could change what is in it:
 *   - every directory on the way (symbolic links followed, their targets
 *     checked the same) is owned by root or by the caller and writable by no
 *     one else, or is sticky (as /tmp), and then the entry in it is owned
 *     by root or by the caller (another user can neither make nor replace
 *     it);
 *   - dir itself is a directory owned by root or by the caller and writable
 *     by no one else (sticky or not).
 * create: what is missing is made (mode for dir itself, 0755 above it), then
 * checked as the rest; without it *fd is -1 (and 0 returned) when a
 * component is missing. Nothing is made when a refusal comes first. */
int oci_safe_dir_open(const char *dir, bool create, mode_t mode, int *fd, cordon_error *err);
