/* cordon's own view in one table (system_view), and what the policy layer
 * asks of it before any model exists. To make a path visible to every run,
 * add one entry to system_view below; the model (model.c) starts from it,
 * and the mounts, Landlock, the observer and explain follow. Calls nothing
 * above the base (strv.c's path_has_prefix). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup.h"
#include "model.h"
#include "model-access.h"
#include "model-sys.h"
#include "mounts.h" /* the default tmpfs sizes */
#include "strv.h"

/* A top-level link (MODEL_FROM_HOST) is written as MK_SYMLINK with the
 * access and class of a directory: on a merged-/usr host it is a symlink
 * into /usr (no rule, no class: /usr has them), elsewhere an ro bind, or
 * absent (add_system). */

#define SYS(path_, kind_, ll_, view_, flags_, reason_) \
	{.path = path_, .kind = kind_, .source = SRC_DEFAULT, .landlock = ll_, .view = view_, \
	 .flags = MODEL_SYSTEM | (flags_), .reason = reason_, .host = path_, .mount = -1, .tree = -1}
/* A symlink cordon makes in /dev. */
#define DEVLINK(path_, target_) \
	{.path = path_, .kind = MK_SYMLINK, .source = SRC_DEFAULT, .view = VIEW_OUTSIDE, \
	 .flags = MODEL_SYSTEM, .reason = "as every /dev has it", .target = target_, .mount = -1, .tree = -1}
/* The host's CPU counts (the same numbers are in the run's /proc). */
#define CPU(path_, explain_path_, explain_mode_) \
	{.path = path_, .kind = MK_RO_BIND, .source = SRC_DEFAULT, .landlock = FS(READ_FILE), \
	 .view = VIEW_RO, .flags = MODEL_SYSTEM | MODEL_OPTIONAL, \
	 .reason = "the CPU count that libc and runtimes read", .host = path_, .noexec = true, \
	 .mount = -1, .tree = -1, .explain_path = explain_path_, .explain_mode = explain_mode_}

/* cordon's own view, in the order explain lists it. */
static const struct model_entry system_view[] = {
	SYS("/", MK_ROOT, FS(READ_DIR), VIEW_OUTSIDE, 0,
	    "the read-only root: only the directories that lead to mounts"),
	{.path = "/usr", .kind = MK_RO_BIND, .landlock = LL_RO, .view = VIEW_RO, .flags = MODEL_SYSTEM,
	 .reason = "the host's programs and libraries", .host = "/usr", .mount = -1, .tree = -1,
	 .explain_path = "/usr", .explain_mode = "ro"},
	{.path = "/etc", .kind = MK_RO_BIND, .landlock = LL_RO, .view = VIEW_RO, .flags = MODEL_SYSTEM,
	 .reason = "the host's configuration", .host = "/etc", .mount = -1, .tree = -1,
	 .explain_path = "/etc", .explain_mode = "ro"},
	SYS("/etc/hosts", MK_FILE, 0, VIEW_RO, MODEL_OPTIONAL,
	    "the host's, with the run's own hostname and without the host's"),
	{.path = "/bin", .kind = MK_SYMLINK, .landlock = LL_RO, .view = VIEW_RO,
	 .flags = MODEL_SYSTEM | MODEL_FROM_HOST,
	 .reason = "as the host has it (a symlink into /usr, or a directory)", .host = "/bin", .mount = -1, .tree = -1,
	 .explain_path = "/bin /sbin /lib /lib64", .explain_mode = "symlink or ro"},
	SYS("/sbin", MK_SYMLINK, LL_RO, VIEW_RO, MODEL_FROM_HOST, "as the host has it"),
	SYS("/lib", MK_SYMLINK, LL_RO, VIEW_RO, MODEL_FROM_HOST, "as the host has it"),
	SYS("/lib32", MK_SYMLINK, LL_RO, VIEW_RO, MODEL_FROM_HOST, "as the host has it"),
	SYS("/lib64", MK_SYMLINK, LL_RO, VIEW_RO, MODEL_FROM_HOST, "as the host has it"),
	SYS("/libx32", MK_SYMLINK, LL_RO, VIEW_RO, MODEL_FROM_HOST, "as the host has it"),
	{.path = "/tmp", .kind = MK_TMPFS, .landlock = MODEL_LL_ALL, .view = VIEW_RW, .flags = MODEL_SYSTEM,
	 .reason = "the run's own scratch space", .mode = "1777", .size = CORDON_TMPFS_DEFAULT_SIZE,
	 .mount = -1, .tree = -1, .explain_path = "/tmp", .explain_mode = "tmpfs (1 GiB)"},
	{.path = "/proc", .kind = MK_PROC, .landlock = FS(READ_FILE) | FS(READ_DIR) | FS(WRITE_FILE),
	 .view = VIEW_PROC, .flags = MODEL_SYSTEM, .reason = "the run's own PID namespace", .mount = -1, .tree = -1,
	 .explain_path = "/proc", .explain_mode = "proc (own PID namespace)"},
	{.path = "/dev", .kind = MK_DEV, .landlock = LL_DEV, .view = VIEW_DEV, .flags = MODEL_SYSTEM,
	 .reason = "the standard nodes only", .mode = "0755", .size = 1 << 20, .noexec = true, .mount = -1,
	 .tree = -1,
	 .explain_path = "/dev",
	 .explain_mode = "minimal (null zero full random urandom tty pts; shm: tmpfs 64 MiB)"},
	SYS("/dev/null", MK_DEVICE, 0, VIEW_DEV, 0, "a standard node"),
	SYS("/dev/zero", MK_DEVICE, 0, VIEW_DEV, 0, "a standard node"),
	SYS("/dev/full", MK_DEVICE, 0, VIEW_DEV, 0, "a standard node"),
	SYS("/dev/random", MK_DEVICE, 0, VIEW_DEV, 0, "a standard node"),
	SYS("/dev/urandom", MK_DEVICE, 0, VIEW_DEV, 0, "a standard node"),
	SYS("/dev/tty", MK_DEVICE, 0, VIEW_DEV, 0, "a standard node"),
	SYS("/dev/pts", MK_DEVPTS, 0, VIEW_DEV, 0, "the run's own ptys"),
	{.path = "/dev/shm", .kind = MK_TMPFS, .landlock = MODEL_LL_ALL, .view = VIEW_RW, .flags = MODEL_SYSTEM,
	 .reason = "POSIX shared memory", .mode = "1777", .size = CORDON_SHM_DEFAULT_SIZE, .mount = -1,
	 .tree = -1},
	DEVLINK("/dev/ptmx", "pts/ptmx"), DEVLINK("/dev/fd", "/proc/self/fd"),
	DEVLINK("/dev/stdin", "/proc/self/fd/0"), DEVLINK("/dev/stdout", "/proc/self/fd/1"),
	DEVLINK("/dev/stderr", "/proc/self/fd/2"),
	CPU("/sys/devices/system/cpu/online", "/sys/devices/system/cpu/{online,possible,present}",
	    "ro (CPU counts)"),
	CPU("/sys/devices/system/cpu/possible", NULL, NULL),
	CPU("/sys/devices/system/cpu/present", NULL, NULL),
	{.path = "/sys/fs/cgroup", .kind = MK_CGROUP, .landlock = LL_READ, .view = VIEW_RO,
	 .flags = MODEL_SYSTEM | MODEL_OPTIONAL | MODEL_IF_CGROUP,
	 .reason = "the run's own cgroup (runtimes size heaps and threads from its limits)",
	 .mode = "0755", .size = 1 << 16, .noexec = true, .mount = -1, .tree = -1,
	 .explain_path = "/sys/fs/cgroup", .explain_mode = "ro (the run's own cgroup)"},
};

const struct model_entry *model_system_view(size_t *n)
{
	*n = ARRAY_SIZE(system_view);
	return system_view;
}

const char *model_system_read(const char *real)
{
	for (size_t i = 0; i < ARRAY_SIZE(system_view); i++) {
		const struct model_entry *e = &system_view[i];
		char hr[PATH_MAX];
		if (e->view != VIEW_RO || !e->host || (e->kind != MK_RO_BIND && !(e->flags & MODEL_FROM_HOST)))
			continue;
		/* /bin may be a link into /usr: compared as the kernel resolves it. */
		const char *h = realpath(e->host, hr) ? hr : e->host;
		if (path_has_prefix(real, h) || path_has_prefix(h, real))
			return e->host;
	}
	return NULL;
}

/* The first component of an absolute path, into out ("/sys/fs" -> "/sys"). */
static void top_of(const char *path, char *out, size_t outsz)
{
	size_t l = strcspn(path + 1, "/") + 1;
	snprintf(out, outsz, "%.*s", (int)l, path);
}

const char *model_system_top(const char *path)
{
	static char tops[ARRAY_SIZE(system_view)][64];
	for (size_t i = 0; i < ARRAY_SIZE(system_view); i++) {
		if (system_view[i].kind == MK_ROOT)
			continue;
		top_of(system_view[i].path, tops[i], sizeof(tops[i]));
		if (path_has_prefix(path, tops[i]))
			return tops[i];
	}
	return NULL;
}

bool model_is_system_dir(const char *path)
{
	for (size_t i = 0; i < ARRAY_SIZE(system_view); i++)
		if ((system_view[i].kind == MK_RO_BIND || (system_view[i].flags & MODEL_FROM_HOST)) &&
		    strchr(system_view[i].path + 1, '/') == NULL && strcmp(path, system_view[i].path) == 0)
			return true;
	return false;
}
