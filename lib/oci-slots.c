/* Host uid/gid ranges, one lock file each: OCI_SLOTS_DIR/N is range N
 * (host ids OCI_SLOT_BASE + N * OCI_SLOT_SIZE, OCI_SLOT_SIZE of them).
 *
 * The directory is root's and 0700 (oci_safe_dir_open), whatever --root is:
 * two engines with roots of their own (podman's, containerd's) take from
 * the same ranges. A file holds its container's state directory (its path,
 * device and inode); its owner keeps an flock on it while the container's
 * supervisor lives. Takes, reclaims and releases run under an flock on the
 * directory, so none sees another's half-made file. A range is stale when
 * its lock is free (no create or supervisor of it left) and its state
 * directory is gone, another directory, or has no state.json (a create that
 * died before its supervisor wrote it): a stopped container that was not
 * deleted keeps its range, as processes it left in its cgroup may still run
 * as its ids until delete kills them. */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "oci-slots.h"
#include "cleanup.h"
#include "error.h"
#include "oci-safedir.h"

/* The slots directory, opened and locked (LOCK_EX) for the caller. */
static int slots_open_locked(cordon_error *err)
{
	int dfd = -1;
	if (oci_safe_dir_open(OCI_SLOTS_DIR, true, 0700, &dfd, err) < 0)
		return -1;
	/* an O_PATH descriptor takes no flock: the directory itself, read-only */
	int lfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(dfd);
	if (lfd < 0)
		return cordon_err_errno(err, "%s", OCI_SLOTS_DIR);
	while (flock(lfd, LOCK_EX) < 0)
		if (errno != EINTR) {
			int e = errno;
			close(lfd);
			return cordon_err(err, e, "locking %s", OCI_SLOTS_DIR);
		}
	return lfd;
}

static int owner_line(int state_dfd, const char *state_path, char *out, size_t outsz)
{
	struct stat st;
	if (fstat(state_dfd, &st) < 0)
		return -1;
	snprintf(out, outsz, "%llu %llu %s\n", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
		 state_path);
	return 0;
}

/* Read fd's owner line: device, inode, path. */
static bool read_owner(int fd, unsigned long long *dev, unsigned long long *ino, char *path, size_t pathsz)
{
	char b[PATH_MAX + 64];
	ssize_t n = pread(fd, b, sizeof(b) - 1, 0);
	if (n <= 0)
		return false;
	b[n] = '\0';
	int off = 0;
	if (sscanf(b, "%llu %llu %n", dev, ino, &off) != 2 || off <= 0)
		return false;
	snprintf(path, pathsz, "%.*s", (int)strcspn(b + off, "\n"), b + off);
	return path[0] == '/';
}

/* fd's lock is free (taken now by the caller): is its container's state gone? */
static bool stale(int fd)
{
	unsigned long long dev, ino;
	char path[PATH_MAX];
	if (!read_owner(fd, &dev, &ino, path, sizeof(path)))
		return true; /* written under the directory's lock: never half-made by a live owner */
	_cleanup_close_ int d = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (d < 0 || fstat(d, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP;
	if (st.st_dev != dev || st.st_ino != ino)
		return true;
	return fstatat(d, "state.json", &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

/* Try range k: a new file, or a stale one reclaimed in place. fd of it, locked, or -1. */
static int try_slot(int dfd, int k, const char *owner)
{
	char name[16];
	snprintf(name, sizeof(name), "%d", k);
	int fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	bool fresh = fd >= 0;
	if (!fresh && errno == EEXIST)
		fd = openat(dfd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (!fresh && !stale(fd))) {
		close(fd);
		return -1;
	}
	size_t n = strlen(owner);
	/* written, the lock becomes shared: a container that joins this one's
	 * user namespace by path holds it shared too (oci_slot_pin), and the
	 * range is busy while any of them lives. Converted under the
	 * directory's lock: no other take can come between. */
	if (ftruncate(fd, 0) < 0 || pwrite(fd, owner, n, 0) != (ssize_t)n || flock(fd, LOCK_SH | LOCK_NB) < 0) {
		if (fresh)
			unlinkat(dfd, name, 0);
		close(fd);
		return -1;
	}
	return fd;
}

int oci_slot_take(int state_dfd, const char *state_path, int *slot, int *lockfd, cordon_error *err)
{
	char owner[PATH_MAX + 64];
	if (owner_line(state_dfd, state_path, owner, sizeof(owner)) < 0)
		return cordon_err_errno(err, "%s", state_path);
	int dfd = slots_open_locked(err);
	if (dfd < 0)
		return -1;
	/* the lowest free: a range's files on disk (an image's, a volume's)
	 * are met again by as few containers as can be */
	for (int k = 0; k < OCI_SLOTS; k++) {
		int fd = try_slot(dfd, k, owner);
		if (fd >= 0) {
			close(dfd); /* unlocks the directory; fd keeps the range's lock */
			*slot = k;
			*lockfd = fd;
			return 0;
		}
	}
	close(dfd);
	return cordon_err(err, EBUSY, "all %d uid ranges are taken (%s)", OCI_SLOTS, OCI_SLOTS_DIR);
}

void oci_slot_release(int state_dfd, int slot)
{
	if (slot < 0 || slot >= OCI_SLOTS)
		return;
	cordon_error e = {0};
	_cleanup_close_ int dfd = slots_open_locked(&e);
	if (dfd < 0)
		return;
	char name[16];
	snprintf(name, sizeof(name), "%d", slot);
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	unsigned long long dev, ino;
	char path[PATH_MAX];
	struct stat st;
	/* only our own (a range reclaimed since is another container's), and
	 * only when no one holds it: a container that joined this one's user
	 * namespace still runs as its ids (then the file stays, and is stale
	 * once that one is gone too) */
	if (fd >= 0 && fstat(state_dfd, &st) == 0 && read_owner(fd, &dev, &ino, path, sizeof(path)) &&
	    dev == st.st_dev && ino == st.st_ino && flock(fd, LOCK_EX | LOCK_NB) == 0)
		unlinkat(dfd, name, 0);
}

/* Are the maps m (outside ids) within one of cordon-oci's ranges, *slot
 * (-1: none of them)? False across ranges, or in two. */
static bool in_slot(const struct oci_idmap *m, size_t n, int *slot)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t lo = m[i].outer, hi = lo + m[i].size;
		uint64_t base = OCI_SLOT_BASE, end = base + (uint64_t)OCI_SLOTS * OCI_SLOT_SIZE;
		if (hi <= base || lo >= end)
			continue; /* not cordon-oci's ids */
		int k = lo < base ? -1 : (int)((lo - base) / OCI_SLOT_SIZE);
		if (k < 0 || hi > base + (uint64_t)(k + 1) * OCI_SLOT_SIZE || (*slot >= 0 && *slot != k))
			return false; /* across ranges, or two of them */
		*slot = k;
	}
	return true;
}

int oci_slot_pin(const struct oci_idmap *u, size_t nu, const struct oci_idmap *g, size_t ng, int *lockfd,
		 cordon_error *err)
{
	*lockfd = -1;
	int slot = -1;
	if (!in_slot(u, nu, &slot) || !in_slot(g, ng, &slot))
		return cordon_err(err, EPERM, "its mappings reach into more than one of cordon-oci's id ranges (%s)",
				  OCI_SLOTS_DIR);
	if (slot < 0)
		return 0; /* none of cordon-oci's ids: the operator's to give */
	int dfd = slots_open_locked(err);
	if (dfd < 0)
		return -1;
	char name[16];
	snprintf(name, sizeof(name), "%d", slot);
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int r = 0;
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) == 0)
		r = cordon_err(err, EPERM, "its ids are range %d (%s/%d), which no live container holds: they may be "
					   "given to another container", slot, OCI_SLOTS_DIR, slot);
	else if (flock(fd, LOCK_SH | LOCK_NB) < 0)
		r = cordon_err(err, EAGAIN, "its ids are range %d (%s/%d), held by an older cordon-oci: it cannot be "
					    "shared", slot, OCI_SLOTS_DIR, slot);
	close(dfd);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*lockfd = fd;
	return 0;
}
