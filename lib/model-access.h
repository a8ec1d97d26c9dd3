/* The Landlock rights of the model's entries, as model.c and model-sys.c
 * write them (private to the two). */
#pragma once
#include <linux/landlock.h>
#include "compat.h"

#define FS(x) LANDLOCK_ACCESS_FS_##x
#define LL_RO (FS(EXECUTE) | FS(READ_FILE) | FS(READ_DIR))
#define LL_READ (FS(READ_FILE) | FS(READ_DIR))
#define LL_DEV (FS(READ_FILE) | FS(WRITE_FILE) | FS(READ_DIR) | LANDLOCK_ACCESS_FS_IOCTL_DEV)
