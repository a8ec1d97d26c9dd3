/* The observer's paths: what a trapped call names, read from the calling
 * process, resolved as the kernel will (its cwd and dirfd, links, the
 * run's view), then judged against the view and the protected names. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <limits.h>
#include <linux/openat2.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "openat2.h"
#include "sup-observe-path.h"
#include "cleanup.h"
#include "compat.h"
#include "error.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include "proxy.h"
#include "observe.h"
#include "landlock.h"
#include "protect.h"
#include <sys/vfs.h>
#include <linux/magic.h>
#include "seccomp-policy.h"
#include "sup-observe-deny.h"
#include "systab.h"
#include "sockdiag.h"
#include "sup-observe.h"

/* Read a NUL-terminated string from the target, page by page. */
static int read_string(pid_t pid, uint64_t addr, char *out, size_t outsz)
{
	size_t got = 0;
	while (got + 1 < outsz) {
		size_t page_left = 4096 - ((addr + got) & 4095);
		size_t want = outsz - 1 - got < page_left ? outsz - 1 - got : page_left;
		struct iovec local = {out + got, want};
		struct iovec remote = {(void *)(uintptr_t)(addr + got), want};
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			return -1;
		void *nul = memchr(out + got, '\0', (size_t)n);
		got += (size_t)n;
		if (nul)
			return 0;
	}
	out[outsz - 1] = '\0';
	return 0;
}

/* The absolute path as the target sees it; rel gets the path as written
 * (PATH_MAX). */
/* -1: no path (AT_EMPTY_PATH: an fd); -2: a path that could not be read
 * or resolved whole (a cwd deeper than PATH_MAX, say): the caller fails
 * closed where that matters. */
static int target_path(pid_t pid, int dirfd, uint64_t addr, char *out, size_t outsz, char *rel)
{
	rel[0] = '\0';
	if (read_string(pid, addr, rel, PATH_MAX) < 0)
		return -2;
	if (rel[0] == '/')
		return snprintf(out, outsz, "%s", rel) >= (int)outsz ? -2 : 0;
	if (rel[0] == '\0')
		return -1; /* AT_EMPTY_PATH: an fd, not a path */
	char link[64], base[PATH_MAX];
	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	else
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)pid, dirfd);
	ssize_t n = readlink(link, base, sizeof(base) - 1);
	if (n <= 0 || n >= (ssize_t)sizeof(base) - 1)
		return -2;
	base[n] = '\0';
	if (base[0] != '/')
		return -2;
	if (snprintf(out, outsz, "%s/%s", strcmp(base, "/") == 0 ? "" : base, rel) >= (int)outsz)
		return -2;
	return 0;
}

/* Does the path (resolved, in the view) exist? cordon run's binds are at
 * the host's own paths, so the host answers for the view; cordon-oci's are
 * in the container's root, looked up from pid's (RESOLVE_IN_ROOT: a link
 * of the container's never leads out of it). */
static bool view_exists(const struct observer *o, pid_t pid, const char *resolved)
{
	struct stat st;
	if (!o->in_root)
		return lstat(resolved, &st) == 0;
	char root[64];
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	_cleanup_close_ int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return false;
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	const char *rel = resolved + strspn(resolved, "/");
	_cleanup_close_ int fd = sys_openat2(rfd, *rel ? rel : ".", &how);
	return fd >= 0;
}

static bool open_writes(const struct observer *o, pid_t pid, uint64_t flags, const char *resolved)
{
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
		return true;
	/* O_CREAT of an existing file creates nothing. */
	return (flags & O_CREAT) && !view_exists(o, pid, resolved);
}

/* The ids of thread tid in its own pid namespace (the run's /proc): its
 * thread group's and its own, from /proc/TID/status (NStgid, NSpid: the
 * last of each). */
static int ns_ids(pid_t tid, long *tg, long *t)
{
	char path[64], st[2048];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	ssize_t n = fd < 0 ? -1 : read(fd, st, sizeof(st) - 1);
	if (n <= 0)
		return -1;
	st[n] = '\0';
	const char *keys[2] = {"\nNStgid:", "\nNSpid:"};
	long *out[2] = {tg, t};
	for (int k = 0; k < 2; k++) {
		const char *l = strstr(st, keys[k]);
		if (!l)
			return -1;
		l += strlen(keys[k]);
		const char *e = strchr(l, '\n');
		const char *last = NULL;
		for (const char *c = l; *c && (!e || c < e); c++)
			if ((*c >= '0' && *c <= '9') && (c == l || c[-1] == ' ' || c[-1] == '\t'))
				last = c;
		if (!last)
			return -1;
		*out[k] = strtol(last, NULL, 10);
	}
	return 0;
}

/* The path of a directory fd the supervisor opened in the run's tree, as
 * the run sees it (/proc/self/fd names it from the run's root). */
static int fd_path(int fd, char *out, size_t outsz)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, out, outsz - 1);
	if (n <= 0 || out[0] != '/')
		return -1;
	out[n] = '\0';
	return 0;
}

static int fd_path_join(int dfd, const char *name, char *out, size_t outsz)
{
	char d[PATH_MAX];
	if (fd_path(dfd, d, sizeof(d)) < 0)
		return -1;
	if (snprintf(out, outsz, "%s/%s", strcmp(d, "/") == 0 ? "" : d, name) >= (int)outsz)
		return -1;
	return 0;
}

/* Put text (a link's target) before the rest still to resolve. */
static int prepend(char *rest, size_t sz, const char *text)
{
	size_t lt = strlen(text), lr = strlen(rest);
	if (lt + 1 + lr + 1 > sz)
		return -1;
	memmove(rest + lt + 1, rest, lr + 1);
	memcpy(rest, text, lt);
	rest[lt] = '/';
	return 0;
}

/* The path a call on `path` (as the run wrote it, relative to dirfd; ".." taken as
 * the kernel takes it, after the links before it) will reach, resolved the
 * way the kernel resolves it for pid, one component at a time from the
 * run's root (/proc/PID/root): each directory opened by the supervisor
 * (O_PATH, no link followed), each link read and followed, at most 40; in
 * the run's /proc, "self" and "thread-self" name pid's own entries, and
 * the magic links (cwd, root, fd/N, ...) are opened, which makes the
 * kernel follow them to the very objects it gives pid. The last
 * component's own link is followed when follow_last. Writes the real path
 * (the directory's path from /proc/self/fd, then the last name) to out and
 * whether it exists to *exists. -1 when it cannot be told (a directory on
 * the way is missing: the call fails there too). */
static int real_target(pid_t pid, int dirfd, const char *path, bool follow_last, char *out, size_t outsz,
		       bool *exists)
{
	char root[64], start[64], rest[PATH_MAX * 2], name[NAME_MAX + 1], t[PATH_MAX];
	struct stat rst, st;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	_cleanup_close_ int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0 || fstat(rfd, &rst) < 0 || snprintf(rest, sizeof(rest), "%s", path) >= (int)sizeof(rest))
		return -1;
	/* A relative path starts at the caller's very directory (its cwd or
	 * dirfd, opened through the magic link), not at its name now. */
	if (dirfd == AT_FDCWD)
		snprintf(start, sizeof(start), "/proc/%d/cwd", (int)pid);
	else
		snprintf(start, sizeof(start), "/proc/%d/fd/%d", (int)pid, dirfd);
	_cleanup_close_ int cur = path[0] == '/' ? fcntl(rfd, F_DUPFD_CLOEXEC, 0)
						  : open(start, O_PATH | O_DIRECTORY | O_CLOEXEC);
	*exists = false;
	for (int links = 0; cur >= 0;) {
		char *c = rest;
		while (*c == '/')
			c++;
		size_t l = strcspn(c, "/");
		if (l == 0) /* the directory itself ("/", "dir/") */
			return *exists = true, fd_path(cur, out, outsz);
		if (l > NAME_MAX)
			return -1;
		memcpy(name, c, l);
		name[l] = '\0';
		c += l;
		while (*c == '/')
			c++;
		bool last = *c == '\0';
		memmove(rest, c, strlen(c) + 1);
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
			struct stat cs;
			if (name[1] && fstat(cur, &cs) == 0 && !(cs.st_dev == rst.st_dev && cs.st_ino == rst.st_ino)) {
				int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
				close(cur);
				cur = up;
				if (cur < 0)
					return -1;
			}
			if (last)
				return *exists = true, fd_path(cur, out, outsz);
			continue;
		}
		if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (last && errno == ENOENT)
				return fd_path_join(cur, name, out, outsz);
			return -1;
		}
		if (S_ISLNK(st.st_mode) && (!last || follow_last)) {
			if (++links > 40)
				return -1;
			struct statfs sf;
			if (fstatfs(cur, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC) {
				long tg, tid;
				if (strcmp(name, "self") == 0 || strcmp(name, "thread-self") == 0) {
					if (ns_ids(pid, &tg, &tid) < 0)
						return -1;
					if (name[0] == 's')
						snprintf(t, sizeof(t), "%ld", tg);
					else
						snprintf(t, sizeof(t), "%ld/task/%ld", tg, tid);
					if (prepend(rest, sizeof(rest), t) < 0)
						return -1;
					continue;
				}
				/* A magic link: the supervisor's open follows it to
				 * the object itself (root may open another's). */
				int to = openat(cur, name, O_PATH | O_CLOEXEC);
				if (to < 0)
					return -1;
				close(cur);
				cur = to;
				if (last)
					return *exists = true, fd_path(cur, out, outsz);
				if (fstat(cur, &st) < 0 || !S_ISDIR(st.st_mode))
					return -1;
				continue;
			}
			ssize_t n = readlinkat(cur, name, t, sizeof(t) - 1);
			if (n <= 0)
				return -1;
			t[n] = '\0';
			if (t[0] == '/') {
				close(cur);
				if ((cur = fcntl(rfd, F_DUPFD_CLOEXEC, 0)) < 0)
					return -1;
			}
			if (prepend(rest, sizeof(rest), t) < 0)
				return -1;
			continue;
		}
		if (last)
			return *exists = true, fd_path_join(cur, name, out, outsz);
		if (!S_ISDIR(st.st_mode))
			return -1;
		int next = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(cur);
		cur = next;
	}
	return -1;
}

/* Is the real path (in the run's view) protected by name inside one of the
 * writable paths (protect_match: the .git names at any depth too)? dir as
 * protect_match's. The path is matched against where the run sees each
 * writable path (--rw HOST:PATH: PATH), the home markers against its host
 * path (protect_add_home's). */
static bool protected_name(const struct observer *o, const char *real, int dir)
{
	for (size_t i = 0; i < o->rw_roots.n && i < o->rw_views.n; i++) {
		const char *r = o->rw_views.v[i];
		size_t l = strcmp(r, "/") == 0 ? 0 : strlen(r);
		if (strncmp(real, r, l) != 0 || real[l] != '/' || !real[l + 1])
			continue;
		if (protect_match_in(&o->protect_names, o->rw_roots.v[i], real + l + 1, dir, NULL, 0))
			return true;
	}
	return false;
}

/* Record what the boundary denies; *refuse is set for a write to a
 * protected path (protect.h), and for a name above one made anything but
 * a directory (above: a rename, link or symlink could bring a protected
 * file along, and a file .git is git's pointer to a directory of the run's
 * choosing, config included): the observer fails those itself (EACCES), as
 * a protected path absent at the start has no mount to stop it. */
/* A path whose start cordon cannot name (a cwd or dirfd deeper than
 * PATH_MAX): safe only if it is relative, goes down only (no "..", so it
 * stays below that deep directory, never at a writable root's top-level
 * names) and names no protected path as if that directory were a root
 * (git's names hold at any depth; a top-level name there is refused too:
 * failing closed). */
static bool unresolved_is_safe(const struct observer *o, const char *raw, int dir)
{
	char norm[PATH_MAX];
	size_t n = 0;
	if (!raw[0] || raw[0] == '/')
		return false;
	for (const char *p = raw; *p;) {
		size_t l = strcspn(p, "/");
		if (l == 2 && p[0] == '.' && p[1] == '.')
			return false;
		if (l && !(l == 1 && p[0] == '.')) {
			if (n + l + 2 > sizeof(norm))
				return false;
			if (n)
				norm[n++] = '/';
			memcpy(norm + n, p, l);
			n += l;
		}
		p += l;
		while (*p == '/')
			p++;
	}
	norm[n] = '\0';
	return n && !protect_match(&o->protect_names, norm, dir, NULL, 0);
}

int observer_path(struct observer *o, struct run_report *rep, pid_t pid, int dirfd, uint64_t addr,
			int write_mode, uint64_t flags, bool follow_last, int dir, bool *refuse)
{
	char path[PATH_MAX], resolved[PATH_MAX], raw[PATH_MAX];
	int tp = target_path(pid, dirfd, addr, path, sizeof(path), raw);
	if (tp < 0) {
		/* Where the model protects anything, a call that may create or
		 * write on a path cordon cannot resolve is refused: it could
		 * be a protected one (`../../.envrc` from a cwd deeper than
		 * PATH_MAX). */
		bool may_write = write_mode == W_YES ||
				 (write_mode != W_NO && ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC))));
		if (tp == -2 && o->protects && may_write && !unresolved_is_safe(o, raw, dir)) {
			*refuse = true;
			observer_deny(o, rep, "file", raw[0] ? raw : "(a path cordon could not read)");
			return 1;
		}
		return 0;
	}
	enum view_class cls = view_classify(&o->view, path, resolved, sizeof(resolved));
	bool write = write_mode == W_YES || (write_mode != W_NO && open_writes(o, pid, flags, resolved));
	/* Where the model protects anything, a call that may write is
	 * classified again at what the kernel will reach: a writable place by
	 * name may reach a protected one through a link (`ln -s .envrc x;
	 * echo >x`), /proc's magic links included (`ln -s /proc/self/cwd/.envrc
	 * x`, /dev/fd/N/..., /proc/N/root/...). */
	char real[PATH_MAX];
	bool there = false;
	if (o->protects && write_mode != W_NO && (write || (flags & O_CREAT)) &&
	    real_target(pid, dirfd, raw, follow_last, real, sizeof(real), &there) == 0) {
		if (write_mode != W_YES)
			write = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC) || ((flags & O_CREAT) && !there);
		if (write && strcmp(real, resolved) != 0)
			cls = view_classify(&o->view, real, resolved, sizeof(resolved));
		if (dir == PROTECT_DIR_NEW && there)
			dir = PROTECT_DIR_KEPT; /* mkdir -p over a .git: EEXIST, nothing made */
	}
	/* O_TMPFILE (issue 28.2): an unnamed file in the directory named,
	 * which becomes a name only by a linkat whose new name is checked
	 * (or refused: AT_EMPTY_PATH where anything is protected). Never a
	 * protected name: not refused; where the kernel refuses it (a
	 * protected directory is a read-only mount), not a denial. */
	bool tmpfile = write_mode == W_OPENFLAGS && (flags & (O_TMPFILE & ~O_DIRECTORY)) != 0;
	if (tmpfile && cls == VIEW_PROTECTED)
		return 0;
	if (write && !tmpfile && ((cls == VIEW_PROTECTED) ||
		      (!dir && cls == VIEW_RW && view_protects_below(&o->view, resolved)) ||
		      (cls == VIEW_RW && protected_name(o, resolved, dir)))) {
		*refuse = true;
		observer_deny(o, rep, "file", resolved);
		return 1;
	}
	if (!o->file_reports)
		return 0;
	bool exists = (cls == VIEW_OUTSIDE || cls == VIEW_MASKED) && view_exists(o, pid, resolved);
	if (!view_denies(cls, resolved, write, exists))
		return 0;
	observer_deny(o, rep, "file", resolved);
	return 1;
}
