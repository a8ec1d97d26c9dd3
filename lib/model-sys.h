/* cordon's own view: the static table every model starts from
 * (lib/model-sys.c), and the questions the policy layer asks of it before
 * any model exists. Needs no model, makes no system call but realpath. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

struct model_entry;
/* The table (n entries), in the order explain lists it. */
const struct model_entry *model_system_view(size_t *n);
/* The host path of cordon's own read-only view (/usr, /etc, /bin, ...)
 * that real (canonical) lies at or below, or holds; NULL if none. */
const char *model_system_read(const char *real);
/* The top-level directory of cordon's own view that path lies in ("/usr",
 * "/dev", "/sys", ...), or NULL: a secret's tmpfs there would be hidden by
 * a mount of cordon's or created inside a bind. */
const char *model_system_top(const char *path);
/* Is path exactly one of the host's system directories that the view shows
 * (/usr, /etc, and /bin, /lib... as binds or symlinks)? */
bool model_is_system_dir(const char *path);
