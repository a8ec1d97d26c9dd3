/* Init's side of the mounts (the supervisor prepares the steps and the
 * trees: mounts-prep.c). Building the view, in this order (each step's reason alongside):
 *  1. "/" becomes a recursive slave: nothing we mount propagates to the host.
 *  2. tmpfs on /tmp, pivot_root into it: the host root is now /oldroot, so
 *     binds from any host path (even under /tmp) resolve through /oldroot.
 *  3. tmpfs /newroot: the sandbox root, read-only once populated.
 *  4. the boundary model's entries (model.h), in its order: cordon's own
 *     (system dirs as ro binds or the same symlinks the host has, /tmp,
 *     /proc, /dev), then the task's own binds and tmpfs, parents first,
 *     secrets, a check's files, the run's cgroup.
 *  5. detach /oldroot and pivot into /newroot.
 * Sources and targets are opened with openat2(RESOLVE_NO_SYMLINKS) below
 * their root: a symlink planted in a workspace by an earlier run cannot
 * redirect a bind. Mounts are moved by fd (open_tree/move_mount). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "openat2.h"
#include "cleanup.h"
#include "changeset.h"
#include "compat.h"
#include "error.h"
#include "mounts.h"
#include "overlay.h"
#include "snapshot.h"

int mounts_openat2_nofollow(int dirfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH,
	};
	while (*path == '/')
		path++;
	if (!*path)
		path = ".";
	return sys_openat2(dirfd, path, &how);
}


/* What the walk below knows (init, while it builds the new root; nothing
 * is allocated): an O_PATH fd of the deepest directory below rootfd it has
 * verified (opened without symlinks, beneath, one component at a time), and
 * its path. Only init changes the new root before the run starts, and a
 * mount at or above that directory makes it forget (walk_forget: the fd
 * would name the covered directory), so /dev's nodes or the CPU files in
 * /sys/devices/system/cpu do not open every component again: each one is a
 * syscall, and on a virtual machine a costly one. The fd, never the path, is
 * what later steps start from: a directory in a writable bind can be swapped
 * for a symlink by another run sharing it (review 3 F3). */
static struct {
	int rootfd;
	int dirfd;      /* -1 = none */
	char dir[4096]; /* "/dev", "/sys/devices/system/cpu" */
} walk = {-1, -1, ""};

/* The directories of the new root the walk knows are there, by the hash of
 * their path below the root, and of them the fresh ones: they hold only what
 * the walk made in them (the root, a fresh tmpfs; each one a tmpfs is
 * mounted on; each one ensure_one made, until something is mounted on it).
 * A directory below a fresh one that is not known is most likely absent: it
 * is made first, not looked for first (a lookup answering ENOENT is one
 * system call of three). Only a hint: a name that is there after all (a
 * symlink cordon made) answers EEXIST and is opened as before, so a stale
 * or full list costs a call, never a difference. */
#define FRESH_MAX 64
static struct {
	uint64_t h[FRESH_MAX];
	bool fresh[FRESH_MAX];
	size_t n;
} fresh;

static uint64_t fresh_hash(const char *p, size_t l)
{
	while (l && *p == '/')
		p++, l--;
	while (l && p[l - 1] == '/')
		l--;
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < l; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ULL;
	return h;
}

/* -1: not known; 0: there; 1: there and fresh. */
static int fresh_state(uint64_t h)
{
	for (size_t i = 0; i < fresh.n; i++)
		if (fresh.h[i] == h)
			return fresh.fresh[i];
	return -1;
}

static void fresh_set(uint64_t h, bool is_fresh)
{
	size_t i = 0;
	while (i < fresh.n && fresh.h[i] != h)
		i++;
	if (i == fresh.n) {
		if (fresh.n == FRESH_MAX)
			return;
		fresh.h[fresh.n++] = h;
	}
	fresh.fresh[i] = is_fresh;
}

static void walk_forget(const char *mounted_at)
{
	if (walk.dirfd >= 0 && path_has_prefix(walk.dir, mounted_at)) {
		close(walk.dirfd);
		walk.dirfd = -1;
	}
}

static void walk_reset(int rootfd)
{
	if (walk.dirfd >= 0)
		close(walk.dirfd);
	walk.dirfd = -1;
	walk.rootfd = rootfd;
	fresh.n = 0;
	fresh_set(fresh_hash("", 0), true); /* a tmpfs just mounted (mounts_begin) */
}

/* One component below the verified directory dfd, without following a
 * symlink: made if absent (a directory, or for the last component a file if
 * !dir; EEXIST: it was there), then opened beneath dfd. absent: the
 * directory is most likely not there (fresh above): made first; *made: it
 * was made here. */
static int ensure_one(int dfd, const char *name, bool dir, bool absent, bool *made, const char *path,
		      cordon_error *err)
{
	int fd = -1;
	*made = false;
	if (dir) {
		/* A directory on the way is usually there: open first, unless
		 * what is above holds only what the walk made. mkdirat answers
		 * EEXIST for any name there, a symlink too (then refused by
		 * the opening below, as when opened first). */
		if (!absent) {
			fd = mounts_openat2_nofollow(dfd, name, O_PATH);
			if (fd >= 0 || errno != ENOENT)
				goto out;
		}
		if (mkdirat(dfd, name, 0755) == 0)
			*made = true;
		else if (errno != EEXIST)
			return cordon_err_errno(err, "create mount point %s", path);
	} else if (mknodat(dfd, name, S_IFREG | 0644, 0) < 0 && errno != EEXIST) {
		return cordon_err_errno(err, "create mount point %s", path);
	}
	fd = mounts_openat2_nofollow(dfd, name, O_PATH);
out:
	if (fd < 0)
		return cordon_err_errno(err, "mount point %s", path);
	return fd;
}

/* Create every missing component of path below rootfd (directories; the last
 * one a file if !dir) without following symlinks; return an O_PATH fd. Each
 * component is made and opened relative to the fd of the directory above
 * it, verified by the step before (or remembered by the walk), never by a
 * path from the root: nothing is made through a symlink. */
static int ensure_path(int rootfd, const char *path, bool dir, cordon_error *err)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return cordon_err(err, ENAMETOOLONG, "%s", path);
	char *name = tmp;
	while (*name == '/')
		name++;
	if (!*name) {
		int fd = mounts_openat2_nofollow(rootfd, ".", O_PATH);
		return fd < 0 ? cordon_err_errno(err, "mount point /") : fd;
	}
	bool remember = walk.rootfd == rootfd;
	int dfd = rootfd; /* rootfd, or walk.dirfd (owned by the walk), or owned here */
	size_t wl = strlen(walk.dir);
	if (remember && walk.dirfd >= 0 && path_has_prefix(tmp, walk.dir) && tmp[wl] == '/') {
		dfd = walk.dirfd;
		name = tmp + wl + 1;
	}
	for (;;) {
		char *slash = strchr(name, '/');
		bool last = !slash || !slash[1];
		if (slash)
			*slash = '\0';
		bool d = last ? dir : true, made;
		size_t end = (size_t)(name - tmp) + strlen(name);
		uint64_t h = fresh_hash(tmp, end);
		bool absent = d && remember && fresh_state(fresh_hash(tmp, (size_t)(name - tmp))) == 1 && fresh_state(h) < 0;
		int fd = ensure_one(dfd, name, d, absent, &made, path, err);
		if (fd >= 0 && made && remember)
			fresh_set(h, true);
		if (dfd != rootfd && dfd != walk.dirfd)
			close(dfd);
		if (fd < 0 || last)
			return fd;
		if (remember) {
			/* The directory above the next component: the walk's now. */
			if (walk.dirfd >= 0 && walk.dirfd != fd)
				close(walk.dirfd);
			walk.dirfd = fd;
			snprintf(walk.dir, sizeof(walk.dir), "%.*s", (int)(slash - tmp), tmp);
		}
		dfd = fd;
		*slash = '/';
		name = slash + 1;
	}
}

static int attach_tree(int tree, int rootfd, const char *path, bool dir, cordon_error *err)
{
	_cleanup_close_ int target = ensure_path(rootfd, path, dir, err);
	if (target < 0)
		return -1;
	walk_forget(path);
	if (dir && rootfd == walk.rootfd) /* there, and what is below now the tree's */
		fresh_set(fresh_hash(path, strlen(path)), false);
	if (move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return cordon_err_errno(err, "move_mount onto %s", path);
	return 0;
}

/* Bind host path src (seen at /oldroot) at dst under the new root. */
static int bind_at(int oldroot, int newroot, const char *src, const char *dst, unsigned attrs,
		   cordon_error *err)
{
	_cleanup_close_ int fd = mounts_openat2_nofollow(oldroot, src, O_PATH);
	if (fd < 0)
		return cordon_err_errno(err, "%s", src);
	struct stat st;
	if (fstat(fd, &st) < 0)
		return cordon_err_errno(err, "stat %s", src);
	_cleanup_close_ int tree = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
					     AT_RECURSIVE | AT_EMPTY_PATH);
	if (tree < 0)
		return cordon_err_errno(err, "open_tree %s", src);
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | attrs};
	if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0)
		return cordon_err_errno(err, "make %s %s", src, attrs & MOUNT_ATTR_RDONLY ? "read-only" : "nosuid");
	return attach_tree(tree, newroot, dst, S_ISDIR(st.st_mode), err);
}

/* A fresh tmpfs at path under the new root. */
static int mount_tmpfs(int newroot, const char *path, const char *mode, uint64_t size,
		       unsigned extra_attr, cordon_error *err)
{
	_cleanup_close_ int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return cordon_err_errno(err, "fsopen tmpfs");
	if (fsconfig(fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0)
		return cordon_err_errno(err, "tmpfs %s mode", path);
	if (size) {
		char sz[32];
		snprintf(sz, sizeof(sz), "%llu", (unsigned long long)size);
		if (fsconfig(fs, FSCONFIG_SET_STRING, "size", sz, 0) < 0)
			return cordon_err_errno(err, "tmpfs %s size", path);
	}
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return cordon_err_errno(err, "create tmpfs %s", path);
	_cleanup_close_ int mnt = fsmount(fs, FSMOUNT_CLOEXEC,
					  MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | extra_attr);
	if (mnt < 0)
		return cordon_err_errno(err, "fsmount tmpfs %s", path);
	if (attach_tree(mnt, newroot, path, true, err) < 0)
		return -1;
	if (newroot == walk.rootfd)
		fresh_set(fresh_hash(path, strlen(path)), true); /* empty */
	return 0;
}

/* The run's own cgroup at e->path, read-only (see struct cgroup_view). */
static int setup_cgroup_view(const struct model_entry *e, const struct cgroup_view *cv, int oldroot,
			     int newroot, cordon_error *err)
{
	const unsigned ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC;
	if (!cv || !cv->n)
		return 0;
	if (cv->v2)
		return bind_at(oldroot, newroot, cv->path[0], e->path, ro, err);
	if (mount_tmpfs(newroot, e->path, e->mode, e->size, e->noexec ? MOUNT_ATTR_NOEXEC : 0, err) < 0)
		return -1;
	for (size_t i = 0; i < cv->n; i++) {
		char dst[4096];
		snprintf(dst, sizeof(dst), "%s/%s", e->path, cv->name[i]);
		if (bind_at(oldroot, newroot, cv->path[i], dst, ro, err) < 0)
			return -1;
	}
	_cleanup_close_ int top = mounts_openat2_nofollow(newroot, e->path, O_PATH | O_DIRECTORY);
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
	if (top < 0 || mount_setattr(top, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
		return cordon_err_errno(err, "make %s read-only", e->path);
	return 0;
}

static unsigned noexec(const struct model_entry *e)
{
	return e->noexec ? MOUNT_ATTR_NOEXEC : 0;
}

/* A read-only bind of cordon's own view (a system directory, or a host file
 * that may be absent). */
static int setup_system_bind(const struct model_entry *e, int oldroot, int newroot, cordon_error *err)
{
	if (e->flags & MODEL_OPTIONAL) {
		struct stat st;
		if (fstatat(oldroot, e->host + 1, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			return 0; /* absent on this host */
	}
	return bind_at(oldroot, newroot, e->host, e->path, MOUNT_ATTR_RDONLY | noexec(e), err);
}

static int setup_proc(int newroot, const char *path, cordon_error *err)
{
	_cleanup_close_ int fs = fsopen("proc", FSOPEN_CLOEXEC);
	if (fs < 0)
		return cordon_err_errno(err, "fsopen proc");
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return cordon_err_errno(err, "create proc");
	_cleanup_close_ int mnt = fsmount(fs, FSMOUNT_CLOEXEC,
					  MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	if (mnt < 0)
		return cordon_err_errno(err, "fsmount proc");
	if (attach_tree(mnt, newroot, path, true, err) < 0)
		return -1;
	/* As bubblewrap does: the kernel-tuning parts of /proc read-only. */
	static const char *const ro[] = {"sys", "sysrq-trigger", "irq", "bus"};
	_cleanup_close_ int proc = mounts_openat2_nofollow(newroot, path, O_PATH | O_DIRECTORY);
	if (proc < 0)
		return cordon_err_errno(err, "open /proc");
	/* Before that: any port of the run's own loopback may be bound (a test
	 * server on port 80 too); the network namespace is the run's alone.
	 * The setting is per namespace (ours, as the opener's), absent on old
	 * kernels. */
	{
		_cleanup_close_ int dir = mounts_openat2_nofollow(proc, "sys/net/ipv4", O_PATH | O_DIRECTORY);
		_cleanup_close_ int f = dir < 0 ? -1 : openat(dir, "ip_unprivileged_port_start", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		if (f < 0 && errno != ENOENT)
			return cordon_err_errno(err, "open /proc/sys/net/ipv4/ip_unprivileged_port_start");
		if (f >= 0 && write(f, "0", 1) != 1)
			return cordon_err_errno(err, "write /proc/sys/net/ipv4/ip_unprivileged_port_start");
	}
	for (size_t i = 0; i < ARRAY_SIZE(ro); i++) {
		_cleanup_close_ int t = open_tree(proc, ro[i], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		if (t < 0)
			continue; /* absent on this kernel */
		struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
		if (mount_setattr(t, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0 ||
		    move_mount(t, "", proc, ro[i], MOVE_MOUNT_F_EMPTY_PATH) < 0)
			return cordon_err_errno(err, "make /proc/%s read-only", ro[i]);
	}
	return 0;
}

/* A node opened on the host (src), cloned nosuid and noexec and attached
 * at the same path in the view. */
static int attach_node(int src, int newroot, const char *path, cordon_error *err)
{
	_cleanup_close_ int t = open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (t < 0)
		return cordon_err_errno(err, "open_tree %s", path);
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC};
	if (mount_setattr(t, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
		return cordon_err_errno(err, "mount_setattr %s", path);
	return attach_tree(t, newroot, path, false, err);
}

/* A host character device at its own path in the run's /dev (before /dev
 * turns read-only). Checked again here, where it is opened: a character
 * device, reached without any symlink. No nodev (a device is the point),
 * nosuid and noexec as the standard nodes. */
static int bind_device(int oldroot, int newroot, const char *path, cordon_error *err)
{
	_cleanup_close_ int src = mounts_openat2_nofollow(oldroot, path, O_PATH);
	struct stat st;
	if (src < 0 || fstat(src, &st) < 0)
		return cordon_err_errno(err, "device %s", path);
	if (!S_ISCHR(st.st_mode))
		return cordon_err(err, 0, "device %s: not a character device", path);
	const char *why = policy_device_refused_number(major(st.st_rdev), minor(st.st_rdev));
	if (why)
		return cordon_err(err, 0, "device %s: refused: %s", path, why);
	return attach_node(src, newroot, path, err);
}

/* A standard node: the host's, bound at the same path. */
static int bind_node(int oldroot, int newroot, const char *path, cordon_error *err)
{
	_cleanup_close_ int src = mounts_openat2_nofollow(oldroot, path, O_PATH);
	if (src < 0)
		return cordon_err_errno(err, "host %s", path);
	return attach_node(src, newroot, path, err);
}

/* A private devpts instance: the run's ptys are its own. */
static int mount_devpts(int newroot, const char *path, cordon_error *err)
{
	_cleanup_close_ int fs = fsopen("devpts", FSOPEN_CLOEXEC);
	if (fs < 0)
		return cordon_err_errno(err, "fsopen devpts");
	if (fsconfig(fs, FSCONFIG_SET_FLAG, "newinstance", NULL, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "ptmxmode", "0666", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0620", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return cordon_err_errno(err, "create devpts");
	_cleanup_close_ int mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	if (mnt < 0)
		return cordon_err_errno(err, "fsmount devpts");
	return attach_tree(mnt, newroot, path, true, err);
}



/* Populated: nothing more may be created in /dev (shm and pts are mounts
 * of their own and stay writable). */
static int seal_dev(const struct model_entry *d, int newroot, cordon_error *err)
{
	_cleanup_close_ int dev = mounts_openat2_nofollow(newroot, d->path, O_PATH | O_DIRECTORY);
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
	if (dev < 0 || mount_setattr(dev, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0)
		return cordon_err_errno(err, "make %s read-only", d->path);
	return 0;
}

/* A bind or tmpfs of the task's (or the check's files): the tree the
 * supervisor prepared for it, else a plain bind of the host path. */
static int setup_task_mount(const struct model_entry *e, const struct mount_plan *plan, int oldroot,
			    int newroot, cordon_error *err)
{
	int r;
	if (e->kind == MK_TMPFS)
		r = mount_tmpfs(newroot, e->path, e->mode, e->size, noexec(e), err);
	else if (plan->tree_fds && e->tree >= 0 && plan->tree_fds[e->tree] >= 0) {
		struct stat st;
		r = fstat(plan->tree_fds[e->tree], &st);
		if (r < 0)
			cordon_err_errno(err, "stat the tree");
		else
			r = attach_tree(plan->tree_fds[e->tree], newroot, e->path, S_ISDIR(st.st_mode), err);
	} else
		r = bind_at(oldroot, newroot, e->host, e->path, e->kind == MK_RO_BIND ? MOUNT_ATTR_RDONLY : 0, err);
	if (r == 0 && e->kind == MK_RW_BIND && e->mount >= 0 && plan->overlay_dirs && plan->overlay_dirs[e->mount] &&
	    !(plan->overlay_trees && plan->overlay_trees[e->mount] == OVERLAY_NONE))
		r = overlay_mount(oldroot, newroot, e->path, plan->overlay_dirs[e->mount],
				  plan->overlay_trees ? plan->overlay_trees[e->mount] : -1, (size_t)e->mount,
				  plan->nws_layers && plan->ws_path && strcmp(e->path, plan->ws_path) == 0 ? plan->ws_layers : NULL,
				  plan->nws_layers, err);
	/* A task check's view of the change set, and its throwaway workspace
	 * (overlay.h). */
	const char *view =
		e->kind == MK_RO_BIND && e->mount >= 0 && plan->overlay_dirs ? plan->overlay_dirs[e->mount] : NULL;
	cordon_error note = {0};
	if (r == 0 && (view || (e->flags & MODEL_SCRATCH)))
		r = overlay_mount_view(oldroot, newroot, e->path, view,
				       view && plan->overlay_subs ? &plan->overlay_subs[e->mount] : NULL,
				       plan->overlay_trees ? plan->overlay_trees[e->mount] : -1, (size_t)e->mount,
				       (e->flags & MODEL_SCRATCH) ? e->size : 0, &note, err);
	if (note.msg[0] && plan->scratch_note) {
		*plan->scratch_note = note;
		plan->scratch_note->code = (int)e->mount;
	}
	walk_forget(e->path); /* the overlay (if any) is mounted there too */
	if (r < 0 && e->mount < 0)
		return cordon_err_wrap(err, "check.files %s", e->host);
	if (r < 0)
		return cordon_err_wrap(err, "%s %s", model_kind_name(e->kind), e->path);
	return 0;
}

/* The host's "127.0.1.1 HOSTNAME" lines (every Debian install has one)
 * go: they would name the host inside the run, and a reverse lookup of
 * 127.0.1.1 (socket.getfqdn) would answer with it. In place, len bytes. */
static size_t drop_host_name_lines(char *text, size_t len)
{
	size_t out = 0;
	for (size_t i = 0; i < len;) {
		size_t end = i;
		while (end < len && text[end] != '\n')
			end++;
		if (end < len)
			end++;
		bool ours = end - i > 9 && memcmp(text + i, "127.0.1.1", 9) == 0 &&
			    (text[i + 9] == ' ' || text[i + 9] == '\t');
		if (!ours) {
			memmove(text + out, text + i, end - i);
			out += end - i;
		}
		i = end;
	}
	return out;
}

/* The run's hostname resolves on its own loopback. /etc/hosts is the host's
 * with one line added (and the host's own name taken out), so that a program
 * looking up its own name (Kerberos, Java's getLocalHost, socket.getfqdn)
 * asks no DNS server it cannot reach. The
 * file is written in the base tmpfs (left behind at pivot) and bound
 * read-only. A host without a plain /etc/hosts, or with a very long one,
 * keeps its own file. */
static int setup_hosts(int oldroot, int newroot, const char *src, const char *path, cordon_error *err)
{
	char text[32768];
	const char line[] = "127.0.1.1\t" CORDON_HOSTNAME "\n";
	size_t n = 0, room = sizeof(text) - sizeof(line) - 1;
	_cleanup_close_ int in = mounts_openat2_nofollow(oldroot, src, O_RDONLY);
	if (in < 0)
		return 0;
	for (ssize_t r; n < room && (r = read(in, text + n, room - n)) > 0;)
		n += (size_t)r;
	char more;
	if (n == room && read(in, &more, 1) > 0)
		return 0;
	n = drop_host_name_lines(text, n);
	if (n && text[n - 1] != '\n')
		text[n++] = '\n';
	memcpy(text + n, line, sizeof(line) - 1);
	n += sizeof(line) - 1;
	_cleanup_close_ int out = open("/hosts", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0 || write(out, text, n) != (ssize_t)n)
		return cordon_err_errno(err, "write /etc/hosts for the run");
	_cleanup_close_ int tree = open_tree(AT_FDCWD, "/hosts", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					      MOUNT_ATTR_NOEXEC};
	if (tree < 0 || mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
		return cordon_err_errno(err, "bind /etc/hosts for the run");
	return attach_tree(tree, newroot, path, false, err);
}

static int apply_step(const struct mount_step *st, const struct mount_plan *plan, int oldroot, int newroot,
		      cordon_error *err);

/* network.transparent: the run's resolver is the supervisor, at
 * CORDON_DNS_ADDR in the run's namespace (sup-dns.c). Written in the base
 * tmpfs, as /etc/hosts, and bound read-only over the host's file (which
 * must be there as a file: a link is not followed, and /etc is read-only). */
static int setup_resolv(int newroot, const char *path, cordon_error *err)
{
	static const char text[] = "# cordon: the run's own resolver (network.transparent)\n"
				   "nameserver " CORDON_DNS_ADDR "\noptions edns0\n";
	_cleanup_close_ int out = open("/resolv.conf", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0 || write(out, text, sizeof(text) - 1) != (ssize_t)sizeof(text) - 1)
		return cordon_err_errno(err, "write /etc/resolv.conf for the run");
	_cleanup_close_ int tree = open_tree(AT_FDCWD, "/resolv.conf", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					      MOUNT_ATTR_NOEXEC};
	if (tree < 0 || mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
		return cordon_err_errno(err, "bind /etc/resolv.conf for the run");
	if (attach_tree(tree, newroot, path, false, err) < 0)
		return cordon_err_wrap(err, "the run's resolver (network.transparent): the host's %s must be a file", path);
	return 0;
}

int mounts_begin(struct mount_ctx *mc, cordon_error *err)
{
	mc->oldroot = mc->newroot = -1;
	/* 1 */
	if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
		return cordon_err_errno(err, "make / a slave mount");
	/* 2 */
	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k") < 0)
		return cordon_err_errno(err, "mount base tmpfs");
	if (chdir("/tmp") < 0 || mkdir("newroot", 0755) < 0 || mkdir("oldroot", 0755) < 0)
		return cordon_err_errno(err, "prepare base tmpfs");
	if (syscall(SYS_pivot_root, "/tmp", "/tmp/oldroot") < 0)
		return cordon_err_errno(err, "pivot_root into the base tmpfs");
	if (chdir("/") < 0)
		return cordon_err_errno(err, "chdir /");
	/* 3 */
	if (mount("tmpfs", "/newroot", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		return cordon_err_errno(err, "mount root tmpfs");
	mc->oldroot = open("/oldroot", O_PATH | O_DIRECTORY | O_CLOEXEC);
	mc->newroot = open("/newroot", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (mc->oldroot < 0 || mc->newroot < 0)
		return cordon_err_errno(err, "open roots");
	walk_reset(mc->newroot);
	/* 4, the part that needs nothing from the supervisor: cordon's own
	 * view (mounts_prepare's first steps). */
	for (size_t i = 0; i < mc->steps->nbegin; i++)
		if (apply_step(&mc->steps->v[i], NULL, mc->oldroot, mc->newroot, err) < 0)
			return -1;
	return 0;
}

/* A secret's directory: a private tmpfs, with the secrets delivered there
 * written 0400 (owned by the command's user). */
static int setup_secret_dir(const struct model_entry *d, const struct mount_plan *plan, int newroot,
			    cordon_error *err)
{
	if (mount_tmpfs(newroot, d->path, d->mode, d->size, noexec(d), err) < 0)
		return cordon_err_wrap(err, "secrets in %s", d->path);
	_cleanup_close_ int dfd = mounts_openat2_nofollow(newroot, d->path, O_PATH | O_DIRECTORY);
	if (dfd < 0)
		return cordon_err_errno(err, "secrets in %s", d->path);
	size_t dl = strlen(d->path);
	if (strcmp(d->path, CORDON_CA_DIR) == 0 && plan->ca_pem) {
		_cleanup_close_ int f = openat(dfd, "ca.pem", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
		if (f < 0)
			return cordon_err_errno(err, "create %s", CORDON_CA_FILE);
		for (size_t off = 0; off < plan->ca_len;) {
			ssize_t n = write(f, plan->ca_pem + off, plan->ca_len - off);
			if (n < 0)
				return cordon_err_errno(err, "write %s", CORDON_CA_FILE);
			off += (size_t)n;
		}
	}
	for (size_t i = 0; i < plan->nsecrets; i++) {
		const struct secret_value *s = &plan->secrets[i];
		if (!s->mount || strncmp(s->mount, d->path, dl) != 0 || s->mount[dl] != '/' ||
		    strchr(s->mount + dl + 1, '/'))
			continue;
		_cleanup_close_ int f = openat(dfd, s->mount + dl + 1, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
		if (f < 0)
			return cordon_err_errno(err, "secret %s: create %s", s->name, s->mount);
		size_t off = 0, len;
		const uint8_t *val = secret_delivered(s, &len);
		while (off < len) {
			ssize_t n = write(f, val + off, len - off);
			if (n < 0)
				return cordon_err_errno(err, "secret %s: write %s", s->name, s->mount);
			off += (size_t)n;
		}
	}
	return 0;
}

/* A protected path (MK_PROTECT): the view's own tree there (the workspace's
 * bind, idmapped or not) bound onto itself read-only, with everything below
 * it; a pin (MK_PIN): the same, writable, so that the directory is a mount
 * point (no rename, no rmdir: EBUSY). Opened below the new root without
 * following any link; nothing is created: a path gone since the plan
 * (absent now) is left to the observer, as an absent one. */
static int setup_protect(const struct model_entry *e, int newroot, cordon_error *err)
{
	if (e->flags & MODEL_NOT_YET)
		return 0;
	_cleanup_close_ int at = mounts_openat2_nofollow(newroot, e->path, O_PATH | O_NOFOLLOW);
	if (at < 0 && errno == ENOENT)
		return 0;
	if (at < 0)
		return cordon_err_errno(err, "%s %s", e->kind == MK_PIN ? "pin" : "protected path", e->path);
	/* Change sets kept for review, anyone's, and the key that seals
	 * them: not even read (masked). */
	struct stat st;
	if (e->kind == MK_PROTECT && ((e->flags & MODEL_MASKED) || (e->target && changeset_is_dirname(e->target))) &&
	    fstat(at, &st) == 0 &&
	    S_ISDIR(st.st_mode)) {
		walk_forget(e->path);
		return mount_tmpfs(newroot, e->path, "0555", 4096, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC, err);
	}
	_cleanup_close_ int t = open_tree(at, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
	if (t < 0)
		return cordon_err_errno(err, "open_tree %s", e->path);
	if (e->kind == MK_PROTECT) {
		struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
		if (mount_setattr(t, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro, sizeof(ro)) < 0)
			return cordon_err_errno(err, "make protected path %s read-only", e->path);
	}
	walk_forget(e->path);
	if (move_mount(t, "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return cordon_err_errno(err, "move_mount onto %s", e->path);
	return 0;
}


const char *mount_op_name(enum mount_op op)
{
	static const char *const n[] = {"system-bind", "symlink", "hosts", "tmpfs", "proc", "dev", "dev-node",
					"dev-device", "devpts", "dev-seal", "task", "secret-dir", "protect", "cgroup",
					"ca-bundle", "resolv"};
	return (size_t)op < ARRAY_SIZE(n) ? n[op] : "?";
}

/* One step, in init. plan: NULL before sync 2 (no step then needs it). */
static int apply_step(const struct mount_step *st, const struct mount_plan *plan, int oldroot, int newroot,
		      cordon_error *err)
{
	const struct model_entry *e = st->e;
	if (!plan && (st->op == MO_TASK || st->op == MO_SECRET_DIR || st->op == MO_CGROUP || st->op == MO_CA_BUNDLE))
		return cordon_err(err, EINVAL, "mount step %s of %s before sync 2", mount_op_name(st->op), e->path);
	switch (st->op) {
	case MO_SYSTEM_BIND:
		return setup_system_bind(e, oldroot, newroot, err);
	case MO_SYMLINK:
		if (symlinkat(e->target, newroot, e->path + 1) < 0)
			return cordon_err_errno(err, "symlink %s", e->path);
		return 0;
	case MO_HOSTS:
		return setup_hosts(oldroot, newroot, e->host, e->path, err);
	case MO_TMPFS:
	case MO_DEV:
		return mount_tmpfs(newroot, e->path, e->mode, e->size, noexec(e), err);
	case MO_PROC:
		return setup_proc(newroot, e->path, err);
	case MO_DEV_NODE:
		return bind_node(oldroot, newroot, e->path, err);
	case MO_DEV_DEVICE:
		return bind_device(oldroot, newroot, e->path, err);
	case MO_DEVPTS:
		return mount_devpts(newroot, e->path, err);
	case MO_DEV_SEAL:
		return seal_dev(e, newroot, err);
	case MO_TASK:
		return setup_task_mount(e, plan, oldroot, newroot, err);
	case MO_SECRET_DIR:
		return setup_secret_dir(e, plan, newroot, err);
	case MO_PROTECT:
		return setup_protect(e, newroot, err);
	case MO_CA_BUNDLE:
		/* the file MO_SECRET_DIR wrote in the run's CA directory (an
		 * earlier step), from the new root itself */
		if (!plan->ca_pem)
			return 0;
		if (bind_at(newroot, newroot, e->host, e->path, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC, err) < 0)
			return cordon_err_wrap(err, "the run's CA bundle over %s", e->path);
		return 0;
	case MO_RESOLV:
		return setup_resolv(newroot, e->path, err);
	case MO_CGROUP:
		if (setup_cgroup_view(e, plan->cgview, oldroot, newroot, err) < 0)
			return cordon_err_wrap(err, "the run's cgroup at %s", e->path);
		return 0;
	}
	return cordon_err(err, EINVAL, "mount step %d", (int)st->op);
}

int mounts_finish(struct mount_ctx *mc, const struct mount_plan *plan, cordon_error *err)
{
	/* 4, the task's own mounts (idmapped trees come from the supervisor),
	 * secrets, a check's files, protected paths, in the model's order;
	 * then the run's cgroup (mounts_prepare's other steps). */
	for (size_t i = mc->steps->nbegin; i < mc->steps->n; i++)
		if (apply_step(&mc->steps->v[i], plan, mc->oldroot, mc->newroot, err) < 0)
			return -1;
	close(mc->oldroot);
	close(mc->newroot);
	mc->oldroot = mc->newroot = -1;
	walk_reset(-1);
	/* The root itself: read-only, nothing can be created beside the binds. */
	if (mount(NULL, "/newroot", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
		return cordon_err_errno(err, "make the root read-only");
	/* 5 */
	if (umount2("/oldroot", MNT_DETACH) < 0)
		return cordon_err_errno(err, "detach the host root");
	if (chdir("/newroot") < 0)
		return cordon_err_errno(err, "chdir /newroot");
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return cordon_err_errno(err, "pivot_root into the new root");
	if (umount2(".", MNT_DETACH) < 0)
		return cordon_err_errno(err, "detach the base tmpfs");
	if (chdir("/") < 0)
		return cordon_err_errno(err, "chdir /");
	return 0;
}
