/* The container's init (docs/oci.md, "Lifecycle"): the process cordon-oci's
 * supervisor clones into the container's namespaces, always with a user
 * namespace of its own. In order:
 *   1. wait for MSG_GO1 (the supervisor wrote the uid/gid maps, attached the
 *      cgroup, set rlimits and oom_score_adj from the host); become uid 0 of
 *      the user namespace;
 *   2. the mount tree: propagation, the rootfs (the supervisor's idmapped
 *      tree when it sent one, else a bind of root.path), the config's mounts
 *      in order, the default devices and links, the console; pivot_root;
 *      maskedPaths, readonlyPaths, root.readonly;
 *   3. hostname, domainname, sysctl; the process's executable looked up;
 *      the Landlock rules of the view as mounted (lib/oci-landlock.c);
 *   4. MSG_READY (its text: the Landlock plan, for the report); wait for
 *      MSG_GO2 (start); startContainer hooks;
 *   5. Landlock (while init still has CAP_SYS_ADMIN in its user namespace,
 *      before the process's user and capabilities; after the hooks, which
 *      are the runtime's), user (groups, gid, uid), capabilities (inside its
 *      own user namespace only), umask, cwd, noNewPrivileges, seccomp
 *      (linux.seccomp and cordon's deny list, whose listener goes to the
 *      supervisor: it answers EPERM and reports the denials, and observes
 *      the path calls cordon run observes: lib/oci-observe.h); exec. The
 *      sync socket is close-on-exec: its EOF tells the supervisor the exec
 *      happened.
 * Every error goes back as MSG_ERROR with its context, then init exits. */
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/nsfs.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>
#include "openat2.h"
#include "oci-init.h"
#include "error.h"
#include "oci-config.h"
#include "oci-seccomp.h"
#include "oci-common.h"
#include "oci-landlock.h"
#include "oci-egress.h"
#include "oci-privguard.h"
#include "policy.h"

static int open_beneath_how(int rootfd, const char *path, int flags, uint64_t resolve, cordon_error *err)
{
	struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC), .resolve = RESOLVE_IN_ROOT | resolve};
	while (*path == '/')
		path++;
	int fd = sys_openat2(rootfd, *path ? path : ".", &how);
	if (fd < 0)
		return cordon_err_errno(err, "%s", path);
	return fd;
}

static int open_beneath(int rootfd, const char *path, int flags, cordon_error *err)
{
	return open_beneath_how(rootfd, path, flags, 0, err);
}

/* Make path (in the container's root) exist as a directory or, file, an empty
 * file; return an O_PATH fd of it. Links are resolved inside the root;
 * resolve RESOLVE_NO_SYMLINKS: refused. */
static int ensure_how(int rootfd, const char *path, bool file, uint64_t resolve, cordon_error *err)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", path);
	int dfd = dup(rootfd);
	char *save = NULL;
	char *parts[256];
	int np = 0;
	for (char *s = strtok_r(p, "/", &save); s && np < 256; s = strtok_r(NULL, "/", &save))
		parts[np++] = s;
	if (np == 0)
		return dfd;
	for (int i = 0; i < np; i++) {
		bool last = i == np - 1;
		/* each step resolved in the root: a link pointing outside stays inside */
		char rel[PATH_MAX] = "";
		for (int k = 0; k <= i; k++) {
			strncat(rel, "/", sizeof(rel) - strlen(rel) - 1);
			strncat(rel, parts[k], sizeof(rel) - strlen(rel) - 1);
		}
		cordon_error e2;
		int fd = open_beneath_how(rootfd, rel, O_PATH, resolve, &e2);
		if (fd < 0 && errno == ENOENT) {
			if (last && file) {
				int cf = openat(dfd, parts[i], O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
				if (cf >= 0)
					close(cf);
			} else
				mkdirat(dfd, parts[i], 0755);
			fd = open_beneath_how(rootfd, rel, O_PATH, resolve, err);
		} else if (fd < 0)
			*err = e2;
		close(dfd);
		if (fd < 0)
			return -1;
		dfd = fd;
	}
	return dfd;
}

static int ensure(int rootfd, const char *path, bool file, cordon_error *err)
{
	return ensure_how(rootfd, path, file, 0, err);
}

/* ensure's for a secret's directory (oci_egress_mount_secrets): no link on
 * the way, so that the image cannot move it into a bind of the config's (a
 * host directory), where its string check (oci-egress.c) would not see it
 * (outside review 4, F3) */
static int ensure_dir(int rootfd, const char *path, cordon_error *err)
{
	return ensure_how(rootfd, path, false, RESOLVE_NO_SYMLINKS, err);
}

static char *fdpath(int fd, char *out, size_t outsz)
{
	snprintf(out, outsz, "/proc/self/fd/%d", fd);
	return out;
}

/* The flags a remount must keep (locked by the user namespace). */
static unsigned long locked_flags(const char *path)
{
	struct statvfs sv;
	unsigned long f = 0;
	if (statvfs(path, &sv) < 0)
		return 0;
	if (sv.f_flag & ST_NOSUID)
		f |= MS_NOSUID;
	if (sv.f_flag & ST_NODEV)
		f |= MS_NODEV;
	if (sv.f_flag & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (sv.f_flag & ST_RDONLY)
		f |= MS_RDONLY;
	return f;
}

static int remount(const char *tgt, unsigned long flags, cordon_error *err, const char *what)
{
	unsigned long keep = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME | MS_RELATIME |
			     MS_STRICTATIME | MS_RDONLY;
	flags &= keep;
	if (mount(NULL, tgt, NULL, MS_REMOUNT | MS_BIND | flags, NULL) == 0)
		return 0;
	unsigned long l = locked_flags(tgt) & ~MS_RDONLY;
	if (mount(NULL, tgt, NULL, MS_REMOUNT | MS_BIND | flags | l, NULL) == 0)
		return 0;
	return cordon_err_errno(err, "%s: remounting", what);
}

/* Whether a bind's source is a directory (its target is made one, else an
 * empty file: move_mount and MS_BIND want the two of one kind, EINVAL
 * otherwise). From the supervisor's clone when there is one: init may not
 * reach the source itself (podman's userdata/shm, a tmpfs below a 0700
 * directory: stat fails with EACCES); fstat of the tree needs no search
 * permission on the path. */
static bool is_dir_src(const char *src, int tree)
{
	struct stat st;
	if (tree >= 0)
		return fstat(tree, &st) == 0 && S_ISDIR(st.st_mode);
	return stat(src, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A bind's source, cloned by the supervisor (send_trees), attached at
 * m->dest (*fd: the destination; on success, the attached mount's root).
 * The supervisor cloned it before init made the config's other mounts, and
 * /proc/self/mountinfo lists a namespace's mounts by when they were made
 * (Linux 6.8 on): a clone of it made now takes its place, so the container
 * sees its mounts in the config's order (the spec's "in order"). */
static int attach_tree(int rootfd, const struct oci_mount *m, int tree, int *fd, cordon_error *err)
{
	if (syscall(SYS_move_mount, tree, "", *fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return cordon_err_errno(err, "mount %s: attaching %s", m->dest, m->source);
	close(*fd);
	if ((*fd = ensure(rootfd, m->dest, false, err)) < 0)
		return -1;
	int now = (int)syscall(SYS_open_tree, *fd, "",
			       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | (m->rec ? AT_RECURSIVE : 0));
	char tp[64];
	if (now < 0)
		return 0; /* the first stays: only the order differs */
	if (umount2(fdpath(*fd, tp, sizeof(tp)), MNT_DETACH) < 0) {
		close(now);
		return 0;
	}
	close(*fd);
	if ((*fd = ensure(rootfd, m->dest, false, err)) < 0) {
		close(now);
		return -1;
	}
	int r = (int)syscall(SYS_move_mount, now, "", *fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	close(now);
	if (r < 0)
		return cordon_err_errno(err, "mount %s: attaching %s", m->dest, m->source);
	close(*fd);
	return (*fd = ensure(rootfd, m->dest, false, err)) < 0 ? -1 : 0;
}

/* A clone of a shared mount is a peer of it (open_tree as bind): the
 * container's mounts on it would show in the host's namespace, and
 * pivot_root refuses a shared root. Made a slave of it (the host's mounts
 * still show inside), or private, before anything is mounted on it. */
static int not_shared(int fd, unsigned long prop, const char *what, cordon_error *err)
{
	char tp[64];
	if (mount(NULL, fdpath(fd, tp, sizeof(tp)), NULL, prop | MS_REC, NULL) < 0)
		return cordon_err_errno(err, "%s: its propagation (a slave of its source)", what);
	return 0;
}

/* Is our NAME namespace (/proc/self/ns/NAME) owned by our user namespace?
 * A new one is; one joined by path is where its owner is the user namespace
 * joined too (a pod's ipc, owned by its sandbox's user namespace). */
static bool ns_ours(const char *name)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/ns/%s", name);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	int own = ioctl(fd, NS_GET_USERNS);
	close(fd);
	if (own < 0)
		return false;
	struct stat a, b;
	bool same = fstat(own, &a) == 0 && stat("/proc/self/ns/user", &b) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino;
	close(own);
	return same;
}

static int mount_one(int rootfd, const struct oci_mount *m, int tree, bool own_net, bool own_ipc, cordon_error *err)
{
	char tp[64];
	const char *type = m->type ? m->type : "bind";
	bool bind = m->bind;
	const char *src = m->source;
	if (bind && (!src || !*src))
		return cordon_err(err, 0, "mount %s: a bind needs a source", m->dest);
	/* sysfs and mqueue need a namespace the user namespace owns: without one, the host's, read-only */
	if (!bind && strcmp(type, "sysfs") == 0 && !own_net)
		bind = true, src = "/sys";
	if (!bind && strcmp(type, "mqueue") == 0 && !own_ipc)
		bind = true, src = "/dev/mqueue";
	int fd = ensure(rootfd, m->dest, bind && !is_dir_src(src, m->bind ? tree : -1), err);
	if (fd < 0)
		return cordon_err_wrap(err, "mount %s", m->dest);
	fdpath(fd, tp, sizeof(tp));
	int r = 0;
	if (bind && tree >= 0 && m->bind) {
		if (attach_tree(rootfd, m, tree, &fd, err) < 0 || not_shared(fd, MS_SLAVE, m->dest, err) < 0)
			r = -1;
		else {
			fdpath(fd, tp, sizeof(tp));
			if (m->flags & ~MS_REMOUNT)
				r = remount(tp, m->flags, err, m->dest);
		}
	} else if (bind) {
		if (mount(src, tp, NULL, MS_BIND | (m->rec || !m->type || strcmp(type, "sysfs") == 0 ? MS_REC : 0), NULL) < 0)
			r = cordon_err_errno(err, "mount %s: binding %s", m->dest, src);
		else {
			close(fd);
			fd = ensure(rootfd, m->dest, false, err);
			if (fd < 0)
				return -1;
			fdpath(fd, tp, sizeof(tp));
			unsigned long fl = m->flags | (strcmp(type, "sysfs") == 0 ? MS_RDONLY : 0);
			if (fl & ~MS_REMOUNT)
				r = remount(tp, fl, err, m->dest);
		}
	} else if (strcmp(type, "cgroup") == 0 || strcmp(type, "cgroup2") == 0) {
		if (mount("cgroup2", tp, "cgroup2", m->flags & ~MS_REMOUNT, NULL) < 0 &&
		    mount("/sys/fs/cgroup", tp, NULL, MS_BIND | MS_REC, NULL) < 0)
			r = cordon_err_errno(err, "mount %s: cgroup", m->dest);
		else if (m->flags & MS_RDONLY)
			remount(tp, m->flags, err, m->dest);
	} else {
		if (mount(src ? src : type, tp, type, m->flags & ~MS_REMOUNT, m->data) < 0) {
			int e = errno;
			/* devpts's gid= names a group the user namespace may not map */
			if (strcmp(type, "devpts") == 0 && m->data && strstr(m->data, "gid=")) {
				char d2[512] = "";
				char tmp[512];
				snprintf(tmp, sizeof(tmp), "%s", m->data);
				char *sv = NULL;
				for (char *s = strtok_r(tmp, ",", &sv); s; s = strtok_r(NULL, ",", &sv))
					if (strncmp(s, "gid=", 4) != 0)
						snprintf(d2 + strlen(d2), sizeof(d2) - strlen(d2), "%s%s", d2[0] ? "," : "", s);
				if (mount(src ? src : type, tp, type, m->flags & ~MS_REMOUNT, d2) == 0)
					e = 0;
			}
			if (e)
				r = cordon_err(err, e, "mount %s (%s)", m->dest, type);
		}
	}
	if (r == 0 && m->prop) {
		close(fd);
		fd = ensure(rootfd, m->dest, false, err);
		if (fd >= 0 && mount(NULL, fdpath(fd, tp, sizeof(tp)), NULL, m->prop, NULL) < 0)
			r = cordon_err_errno(err, "mount %s: propagation", m->dest);
	}
	if (fd >= 0)
		close(fd);
	return r;
}

static bool has_mount(const struct oci_config *c, const char *dest)
{
	for (size_t i = 0; i < c->nmounts; i++)
		if (strcmp(c->mounts[i].dest, dest) == 0)
			return true;
	return false;
}

static int default_devices(int rootfd, const struct oci_config *c, cordon_error *err)
{
	static const char *const devs[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
					   "/dev/tty", NULL};
	if (!has_mount(c, "/dev"))
		return 0;
	for (const char *const *d = devs; *d; d++) {
		if (has_mount(c, *d))
			continue;
		int fd = ensure(rootfd, *d, true, err);
		if (fd < 0)
			return -1;
		char tp[64];
		if (mount(*d, fdpath(fd, tp, sizeof(tp)), NULL, MS_BIND, NULL) < 0) {
			close(fd);
			return cordon_err_errno(err, "binding %s", *d);
		}
		close(fd);
	}
	static const char *const links[][2] = {{"/proc/self/fd", "/dev/fd"}, {"/proc/self/fd/0", "/dev/stdin"},
					       {"/proc/self/fd/1", "/dev/stdout"}, {"/proc/self/fd/2", "/dev/stderr"},
					       {"/proc/kcore", "/dev/core"}};
	int dev = open_beneath(rootfd, "/dev", O_PATH | O_DIRECTORY, err);
	if (dev < 0)
		return -1;
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		if (symlinkat(links[i][0], dev, links[i][1] + 5) < 0 && errno != EEXIST) {
			close(dev);
			return cordon_err_errno(err, "%s", links[i][1]);
		}
	if (has_mount(c, "/dev/pts")) {
		unlinkat(dev, "ptmx", 0);
		if (symlinkat("pts/ptmx", dev, "ptmx") < 0) {
			close(dev);
			return cordon_err_errno(err, "/dev/ptmx");
		}
	}
	close(dev);
	return 0;
}

/* linux.devices: each node the supervisor made (send_devices: a user
 * namespace cannot mknod) attached at its path. */
static int config_devices(int rootfd, const struct oci_config *c, const int *devtrees, cordon_error *err)
{
	for (size_t i = 0; i < c->ndevices; i++) {
		const struct oci_dev *d = &c->devices[i];
		int fd = ensure(rootfd, d->path, true, err);
		if (fd < 0)
			return cordon_err_wrap(err, "linux.devices %s", d->path);
		if (syscall(SYS_move_mount, devtrees[i], "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
			close(fd);
			return cordon_err_errno(err, "linux.devices %s (%c %lld:%lld): attaching the node", d->path, d->type,
						(long long)d->major, (long long)d->minor);
		}
		close(fd);
		close(devtrees[i]);
	}
	return 0;
}

static int console(int rootfd, const struct oci_config *c, int sock, bool devconsole, cordon_error *err)
{
	int fd = open_beneath(rootfd, "/dev/pts/ptmx", O_RDWR | O_NOCTTY, err);
	if (fd < 0)
		return cordon_err_wrap(err, "terminal: the container's /dev/pts/ptmx");
	int unlock = 0, n = -1;
	if (ioctl(fd, TIOCSPTLCK, &unlock) < 0 || ioctl(fd, TIOCGPTN, &n) < 0)
		return cordon_err_errno(err, "terminal");
	if (c->cons_h || c->cons_w) {
		struct winsize ws = {.ws_row = (unsigned short)c->cons_h, .ws_col = (unsigned short)c->cons_w};
		ioctl(fd, TIOCSWINSZ, &ws);
	}
	int slave = (int)ioctl(fd, TIOCGPTPEER, O_RDWR | O_NOCTTY);
	if (slave < 0)
		return cordon_err_errno(err, "terminal: opening the pty's peer");
	if (oci_send(sock, OCI_MSG_PTY, "", fd) < 0)
		return cordon_err_errno(err, "terminal: sending the pty");
	close(fd);
	setsid();
	if (ioctl(slave, TIOCSCTTY, 0) < 0)
		return cordon_err_errno(err, "terminal: TIOCSCTTY");
	for (int i = 0; i < 3; i++)
		dup2(slave, i);
	if (slave > 2)
		close(slave);
	/* /dev/console: the pty (not in a joined mount namespace's tree) */
	if (devconsole && has_mount(c, "/dev")) {
		char pts[64], tp[64];
		snprintf(pts, sizeof(pts), "/dev/pts/%d", n);
		int cfd = ensure(rootfd, "/dev/console", true, err);
		int sfd = open_beneath(rootfd, pts, O_PATH, err);
		if (cfd >= 0 && sfd >= 0) {
			char sp[64];
			mount(fdpath(sfd, sp, sizeof(sp)), fdpath(cfd, tp, sizeof(tp)), NULL, MS_BIND, NULL);
		}
		if (cfd >= 0)
			close(cfd);
		if (sfd >= 0)
			close(sfd);
	}
	return 0;
}

static int mask_paths(const struct oci_config *c, cordon_error *err)
{
	for (size_t i = 0; i < c->masked.n; i++) {
		const char *p = c->masked.v[i];
		struct stat st;
		if (lstat(p, &st) < 0)
			continue;
		int r = S_ISDIR(st.st_mode) ? mount("tmpfs", p, "tmpfs", MS_RDONLY, "size=0k")
					    : mount("/dev/null", p, NULL, MS_BIND, NULL);
		if (r < 0 && errno != ENOENT)
			return cordon_err_errno(err, "maskedPaths %s", p);
	}
	for (size_t i = 0; i < c->ro_paths.n; i++) {
		const char *p = c->ro_paths.v[i];
		if (mount(p, p, NULL, MS_BIND | MS_REC, NULL) < 0) {
			if (errno == ENOENT)
				continue;
			return cordon_err_errno(err, "readonlyPaths %s", p);
		}
		if (remount(p, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, err, p) < 0 &&
		    remount(p, MS_RDONLY, err, p) < 0)
			return -1;
	}
	return 0;
}

static int write_file(const char *path, const char *v, cordon_error *err)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return cordon_err_errno(err, "%s", path);
	ssize_t n = write(fd, v, strlen(v));
	int e = errno;
	close(fd);
	if (n != (ssize_t)strlen(v))
		return cordon_err(err, n < 0 ? e : EIO, "%s", path);
	return 0;
}

static const char *env_path(const struct oci_config *c)
{
	for (size_t i = 0; i < c->env.n; i++)
		if (strncmp(c->env.v[i], "PATH=", 5) == 0)
			return c->env.v[i] + 5;
	return "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
}

/* The executable, as execvpe would find it (after pivot_root). */
int oci_find_exec(const struct oci_config *c, char *out, size_t outsz, cordon_error *err)
{
	const char *a = c->args.v[0];
	if (strchr(a, '/')) {
		snprintf(out, outsz, "%s", a);
		if (access(out, X_OK) < 0)
			return cordon_err_errno(err, "process.args[0] \"%s\"", a);
		return 0;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s", env_path(c));
	char *sv = NULL;
	for (char *d = strtok_r(path, ":", &sv); d; d = strtok_r(NULL, ":", &sv)) {
		snprintf(out, outsz, "%s/%s", d, a);
		struct stat st;
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
	}
	return cordon_err(err, 0, "process.args[0] \"%s\": not found in $PATH of the container", a);
}

int oci_apply_process(const struct oci_config *c, cordon_error *err)
{
	if (c->nagids && setgroups(c->nagids, c->agids) < 0)
		return cordon_err_errno(err, "process.user.additionalGids");
	if (!c->nagids)
		setgroups(0, NULL);
	if (setresgid(c->gid, c->gid, c->gid) < 0)
		return cordon_err_errno(err, "process.user.gid %u (is it mapped?)", (unsigned)c->gid);
	uint64_t caps[5] = {0};
	if (c->has_caps)
		memcpy(caps, c->caps, sizeof(caps));
	/* the bounding set while still uid 0 (it takes CAP_SETPCAP in the
	 * effective set, which becoming another uid clears); then the uid with
	 * the permitted set kept, then the sets asked for */
	for (int i = 0; i <= CAP_LAST_CAP; i++)
		if (!(caps[0] & (1ull << i)) && prctl(PR_CAPBSET_DROP, i, 0, 0, 0) < 0 && errno != EINVAL)
			return cordon_err_errno(err, "capabilities: dropping %d from the bounding set", i);
	if (prctl(PR_SET_KEEPCAPS, 1) < 0 || setresuid(c->uid, c->uid, c->uid) < 0)
		return cordon_err_errno(err, "process.user.uid %u (is it mapped?)", (unsigned)c->uid);
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {0};
	for (int k = 0; k < 2; k++) {
		d[k].effective = (uint32_t)(caps[1] >> (32 * k));
		d[k].inheritable = (uint32_t)(caps[2] >> (32 * k));
		d[k].permitted = (uint32_t)(caps[3] >> (32 * k));
	}
	if (syscall(SYS_capset, &h, d) < 0)
		return cordon_err_errno(err, "capabilities: capset");
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	for (int i = 0; i <= CAP_LAST_CAP; i++)
		if ((caps[4] & caps[3] & caps[2] & (1ull << i)) && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, i, 0, 0) < 0)
			return cordon_err_errno(err, "capabilities: ambient %d", i);
	if (c->has_umask)
		umask(c->umask);
	else
		umask(022);
	if (chdir(c->cwd ? c->cwd : "/") < 0)
		return cordon_err_errno(err, "process.cwd \"%s\"", c->cwd);
	if (c->nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return cordon_err_errno(err, "noNewPrivileges");
	return 0;
}

/* What the container's copies of the host's mounts are to them: slaves,
 * private for rootfsPropagation private; never shared with them. */
static unsigned long copy_prop(const struct oci_config *c)
{
	return (c->rootfs_prop & (MS_SHARED | MS_SLAVE | MS_PRIVATE | MS_UNBINDABLE)) == MS_PRIVATE ? MS_PRIVATE
												      : MS_SLAVE;
}

static int setup_ns(const struct oci_config *c, cordon_error *err)
{
	if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
		return cordon_err_errno(err, "becoming root of the container's user namespace");
	if (c->ns_path[OCI_NS_MNT])
		return 0; /* a joined mount namespace: the other container's, as it is */
	/* the copy of the host's tree this namespace starts with: a slave of the
	 * host's (private for rootfsPropagation private), never shared with it,
	 * and not unbindable (the default devices are binds from it); the
	 * container's root gets rootfsPropagation itself after pivot_root */
	if (mount(NULL, "/", NULL, copy_prop(c) | MS_REC, NULL) < 0)
		return cordon_err_errno(err, "rootfsPropagation");
	return 0;
}

/* In a mount namespace joined by path (oci-nsjoin.h), owned by the user
 * namespace joined: its tree is the other container's and stays as it is
 * (root, mounts, devices, maskedPaths, readonlyPaths, propagation are not
 * applied: they would change that container's tree); init is at its root
 * already (setns). The console, sysctl, hostname as in setup. */
static int setup_joined(const struct oci_config *c, int sock, cordon_error *err)
{
	if (c->terminal) {
		int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rootfd < 0)
			return cordon_err_errno(err, "the joined mount namespace's root");
		int r = console(rootfd, c, sock, false, err);
		close(rootfd);
		if (r < 0)
			return -1;
	}
	return 0;
}

static int setup(const struct oci_config *c, int sock, int tree, const int *trees, const int *devtrees,
		 cordon_error *err)
{
	if (c->ns_path[OCI_NS_MNT]) {
		if (setup_joined(c, sock, err) < 0)
			return -1;
		goto names;
	}
	/* the supervisor's clone of root.path, attached over it: the clone's fd is
	 * the root of the attached mount */
	int rootfd = tree;
	bool own_net = c->ns_new[OCI_NS_NET] || (c->ns_path[OCI_NS_NET] && ns_ours("net")),
	     own_ipc = c->ns_new[OCI_NS_IPC] || (c->ns_path[OCI_NS_IPC] && ns_ours("ipc"));
	if (not_shared(rootfd, copy_prop(c), c->root, err) < 0)
		return -1;
	/* the image's privileged files, before any mount of the config is on
	 * the rootfs (oci-privguard.h) */
	unsigned held = 0;
	if (c->priv_guard && oci_privguard_apply(rootfd, &held, err) < 0)
		return -1;
	for (size_t i = 0; i < c->nmounts; i++)
		if (mount_one(rootfd, &c->mounts[i], trees[i], own_net, own_ipc, err) < 0)
			return -1;
	if (default_devices(rootfd, c, err) < 0 || config_devices(rootfd, c, devtrees, err) < 0)
		return -1;
	/* run.cordon.policy's TLS: the run's CA bundle, after the config's
	 * mounts (a tmpfs on /run does not hide it) */
	if (c->egress_run && c->egress_run->bundle.len) {
		int d = ensure(rootfd, CORDON_CA_DIR, false, err);
		int r = d < 0 ? cordon_err_wrap(err, "%s: making %s in root.path for the run's CA", OCI_POLICY_ANNOTATION, CORDON_CA_DIR)
			      : oci_egress_mount_ca(d, c, err);
		if (d >= 0)
			close(d);
		if (r < 0)
			return -1;
	}
	/* its secrets delivered as files: a tmpfs of init's own each, after the
	 * config's mounts too */
	if (oci_egress_mount_secrets(rootfd, c, ensure_dir, err) < 0)
		return -1;
	if (c->terminal && console(rootfd, c, sock, true, err) < 0)
		return -1;
	if (fchdir(rootfd) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		return cordon_err_errno(err, "pivot_root into %s", c->root);
	if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return cordon_err_errno(err, "leaving the old root");
	close(rootfd);
	if (c->rootfs_prop && mount(NULL, "/", NULL, c->rootfs_prop, NULL) < 0)
		return cordon_err_errno(err, "rootfsPropagation");
names:
	for (size_t i = 0; i < c->sysctl_k.n; i++) {
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "/proc/sys/%s", c->sysctl_k.v[i]);
		for (char *s = p + 10; *s; s++)
			if (*s == '.')
				*s = '/';
		if (write_file(p, c->sysctl_v.v[i], err) < 0)
			return cordon_err_wrap(err, "linux.sysctl %s", c->sysctl_k.v[i]);
	}
	if (!c->ns_path[OCI_NS_MNT] && mask_paths(c, err) < 0)
		return -1;
	if (!c->ns_path[OCI_NS_MNT] && c->readonly && remount("/", MS_RDONLY, err, "root.readonly") < 0)
		return -1;
	if (c->hostname && *c->hostname && sethostname(c->hostname, strlen(c->hostname)) < 0)
		return cordon_err_errno(err, "hostname (no uts namespace of its own?)");
	if (c->domainname && *c->domainname && setdomainname(c->domainname, strlen(c->domainname)) < 0)
		return cordon_err_errno(err, "domainname");
	return 0;
}

static int send_listener(int sock, int *fd, cordon_error *err)
{
	if (*fd < 0)
		return 0;
	int r = oci_send(sock, OCI_MSG_LISTENER, "", *fd);
	close(*fd);
	*fd = -1;
	return r < 0 ? cordon_err_errno(err, "seccomp: sending the listener") : 0;
}

void oci_init_main(const struct oci_config *c, int sock)
{
	cordon_error err = {0};
	int fd = -1;
	char text[OCI_MSG_MAX];
	/* the secrets' values and the CA's key are the supervisor's alone */
	oci_egress_drop_in_init(c);
	int t = oci_recv(sock, text, &fd);
	if (t != OCI_MSG_GO1)
		_exit(1);
	int tree = -1;
	if (setup_ns(c, &err) < 0)
		goto fail;
	/* the trees: none in a joined mount namespace (the supervisor sends none) */
	bool trees_sent = !c->ns_path[OCI_NS_MNT];
	if (trees_sent && (oci_send(sock, OCI_MSG_NSREADY, "", -1) < 0 || oci_recv(sock, text, &tree) != OCI_MSG_TREE ||
			   tree < 0))
		_exit(1);
	int *trees = calloc(c->nmounts + 1, sizeof(int));
	if (!trees)
		_exit(1);
	for (size_t i = 0; trees_sent && i < c->nmounts; i++)
		if (oci_recv(sock, text, &trees[i]) != OCI_MSG_TREE)
			_exit(1);
	int *devtrees = calloc(c->ndevices + 1, sizeof(int));
	if (!devtrees)
		_exit(1);
	for (size_t i = 0; trees_sent && i < c->ndevices; i++)
		if (oci_recv(sock, text, &devtrees[i]) != OCI_MSG_TREE || devtrees[i] < 0)
			_exit(1);
	char exe[PATH_MAX], ll_text[64];
	struct landlock_plan ll;
	if (setup(c, sock, tree, trees, devtrees, &err) < 0 || oci_find_exec(c, exe, sizeof(exe), &err) < 0 ||
	    oci_landlock_prepare(c, &ll, &err) < 0)
		goto fail;
	/* run.cordon.policy: the proxy listens in the container's own network
	 * namespace; the supervisor serves it from outside */
	if (c->egress && c->egress->net_allow.n && !c->pod_proxy) {
		int l = -1;
		if (oci_egress_listen(&l, &err) < 0)
			goto fail;
		int r = oci_send(sock, OCI_MSG_PROXY, "", l);
		close(l);
		if (r < 0)
			_exit(1);
	}
	oci_landlock_describe(&ll, ll_text, sizeof(ll_text));
	if (oci_send(sock, OCI_MSG_READY, ll_text, -1) < 0)
		_exit(1);
	t = oci_recv(sock, text, &fd);
	if (t != OCI_MSG_GO2)
		_exit(1);
	if (c->hooks[OCI_H_START_CONTAINER].n && oci_hooks_run(c, OCI_H_START_CONTAINER, text, &err) < 0)
		goto fail;
	if (oci_landlock_apply(&ll, &err) < 0)
		goto fail;
	/* without noNewPrivileges, the filters are loaded while init still has
	 * CAP_SYS_ADMIN; the deny list's listener goes to the supervisor at once
	 * (no call of the list is made before it holds it) */
	int listener = -1;
	if (!c->nnp && (oci_seccomp_load_notify(c, &listener, &err) < 0 || send_listener(sock, &listener, &err) < 0))
		goto fail;
	if (oci_apply_process(c, &err) < 0)
		goto fail;
	if (c->nnp && (oci_seccomp_load_notify(c, &listener, &err) < 0 || send_listener(sock, &listener, &err) < 0))
		goto fail;
	sigset_t all;
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	execve(exe, c->args.v, c->env.v);
	cordon_err_errno(&err, "exec %s", exe);
fail:
	oci_send(sock, OCI_MSG_ERROR, err.msg, -1);
	_exit(1);
}
