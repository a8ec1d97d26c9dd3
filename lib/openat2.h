/* openat2(2), with its resolve flags kept where the call is refused
 * (lib/openat2.c): cordon nested in cordon, or under a container profile
 * older than the call, gets ENOSYS from the filter. The bottom layer: libc
 * only. */
#pragma once
#include <linux/openat2.h>

/* The call itself; where it answers ENOSYS (remembered for the process),
 * the same resolution walked a component at a time with openat: each one
 * opened O_PATH | O_NOFOLLOW and fstat'd (a link is ELOOP under
 * RESOLVE_NO_SYMLINKS, never followed), ".." and an absolute path refused
 * under RESOLVE_BENEATH (EXDEV, as openat2 says for an escape), a mount
 * crossed refused under RESOLVE_NO_XDEV (EXDEV: the mount ID of each step,
 * statx; the last one's before it is opened). Only what cordon asks is emulated: a resolve without
 * RESOLVE_NO_SYMLINKS, or with RESOLVE_IN_ROOT or RESOLVE_CACHED, stays
 * ENOSYS. The last component is opened with the caller's flags and mode
 * plus O_NOFOLLOW (O_PATH | O_NOFOLLOW gives the link itself, as openat2). */
int sys_openat2(int dirfd, const char *path, const struct open_how *how);
/* The emulation alone (tests). */
int openat2_walk(int dirfd, const char *path, const struct open_how *how);
