/* A fork's stack of shared layers (issue 38, docs/api.md "Fork"): a
 * session's workspace is its own directory `work` over the layers its
 * session directory lists in `layers` (top first, one `l-<16 hex>` a
 * line), each an immutable directory <state-dir>/layers/<name> holding a
 * snapshot's copy (an overlayfs upper layer: whiteouts and
 * user.overlay.opaque marks kept). A fork copies one snapshot as a new
 * layer and lists it over its parent's stack; a layer is removed when no
 * session lists it (layers_sweep).
 *
 * The stack is mounted as lower layers: by the run's init under its
 * upper layer (overlay.c), and by the session's worker as a detached,
 * read-only overlay of work and the layers (layers_merged: restore,
 * changes and the end, which makes `work` whole again). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "error.h"
#include "strv.h"

/* The deepest stack: with `work` on top, 64 lower layers, each named to
 * overlayfs by a descriptor number of at most 3 digits (fsconfig takes
 * 255 bytes: 64 * 3 + 63 colons). */
#define LAYERS_MAX 63
#define LAYERS_FILE "layers"
#define LAYER_NAME_LEN 18 /* "l-" and 16 hex digits */

bool layer_name_valid(const char *s);

/* The list of the session directory sdir (fd): names, top first; none
 * (0 entries) when it has no list. Refused (-1, err) when malformed or
 * deeper than LAYERS_MAX. */
int layers_read(int sdir, strv *out, cordon_error *err);
/* Writes the list (names top first) in sdir, atomically (a temporary
 * file renamed over it). */
int layers_write(int sdir, const strv *names, cordon_error *err);

/* Sets overlayfs's lower layers on the fs context fs (fsopen'd, every
 * other option set) and creates it (FSCONFIG_CMD_CREATE): the directories
 * lower[0] (top) to lower[n-1], by descriptor; procfd is the path of a
 * /proc/self/fd the caller sees ("/proc/self/fd", or init's
 * "/newroot/proc/self/fd"). With "lowerdir+" from Linux 6.8, else one
 * "lowerdir" named relative to a cwd of procfd until the create (the cwd
 * is changed meanwhile, then put back: only for a caller no other thread
 * of which uses it). No allocation. (CORDON_TEST_LOWERDIR_ONE in the
 * environment: the one string always; tests only.) */
int layers_create(int fs, const int *lower, size_t n, const char *procfd, cordon_error *err);

/* A detached, read-only overlay of top (a directory fd, or -1) over the
 * layers names (top first) of the directory layers_dir (fd): the merged
 * tree, never attached; its root opened O_DIRECTORY, or -1 and err. With
 * mnt: *mnt is the mount's own fd (fsmount's, O_PATH: what move_mount
 * attaches; the mount is dissolved once it is closed, the tree still read
 * through the other). Needs CAP_SYS_ADMIN. */
int layers_merged(int top, int layers_dir, const strv *names, int *mnt, cordon_error *err);

/* The end of a session with a stack: its workspace directory work (fd,
 * empty: a fork's) made whole, the merged tree merged (fd, layers_merged
 * of work) copied into it (whiteouts and overlay marks left out), by way
 * of scratch, a name in parent (work's parent directory, fd), whose top
 * entries are then moved in. -1 and err on failure (scratch removed; what
 * was moved in stays). */
int layers_materialize(int merged, int parent, int work, const char *scratch, cordon_error *err);

/* Is the directory dev/ino the session's own workspace directory, "work"
 * beside its list of layers (list: that file's path)? A stack is mounted
 * over, and made whole into, only that one: never a host tree or an
 * image's (a fork of a session with such a workspace is refused, and this
 * holds where that check was raced). */
bool layers_own_workspace(const char *list, dev_t dev, ino_t ino);

/* Removes every layer of layers_dir (fd) no session directory of
 * sessions_dir (fd) lists. Held LOCK_EX on layers_dir meanwhile (a fork
 * holds it LOCK_SH from its parent's list read to its own list written);
 * !wait: nothing done (0) while a fork holds it. Returns the number
 * removed, -1 and err. */
int layers_sweep(int layers_dir, int sessions_dir, bool wait, cordon_error *err);
