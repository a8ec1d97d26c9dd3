/* A fork's stack of shared layers (layers.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "cleanup.h"
#include "layers.h"
#include "upper-copy.h"

#define LIST_BYTES (LAYERS_MAX * (LAYER_NAME_LEN + 1) + 1)
/* The end's copy and the removal of a layer: as deep as a fork's copy
 * may go (serve's FORK_MAX_DEPTH), and more. */
#define TREE_DEPTH 1024

bool layer_name_valid(const char *s)
{
	if (strncmp(s, "l-", 2) != 0 || strlen(s) != LAYER_NAME_LEN)
		return false;
	for (const char *p = s + 2; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

int layers_read(int sdir, strv *out, cordon_error *err)
{
	_cleanup_close_ int fd = openat(sdir, LAYERS_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : cordon_err_errno(err, "open the session's list of layers");
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size >= LIST_BYTES)
		return cordon_err(err, EINVAL, "the session's list of layers is not one");
	char b[LIST_BYTES];
	size_t len = 0;
	for (ssize_t n; len < sizeof(b) - 1 && (n = read(fd, b + len, sizeof(b) - 1 - len)) != 0; len += (size_t)n)
		if (n < 0)
			return cordon_err_errno(err, "read the session's list of layers");
	b[len] = '\0';
	for (char *save = NULL, *t = strtok_r(b, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
		if (!layer_name_valid(t) || out->n >= LAYERS_MAX)
			return cordon_err(err, EINVAL, "the session's list of layers: %s", out->n >= LAYERS_MAX ? "too deep" : "a malformed name");
		if (strv_push(out, t) < 0)
			return cordon_oom(err);
	}
	return 0;
}

int layers_write(int sdir, const strv *names, cordon_error *err)
{
	buf b = {0};
	for (size_t i = 0; i < names->n; i++)
		if (buf_printf(&b, "%s\n", names->v[i]) < 0) {
			buf_free(&b);
			return cordon_oom(err);
		}
	const char *tmp = LAYERS_FILE ".tmp";
	unlinkat(sdir, tmp, 0);
	int fd = openat(sdir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int rc = fd < 0 ? -1 : 0;
	if (rc == 0 && b.len && write(fd, b.p, b.len) != (ssize_t)b.len)
		rc = -1;
	if (rc == 0 && fsync(fd) < 0)
		rc = -1;
	if (fd >= 0 && close(fd) < 0)
		rc = -1;
	if (rc == 0 && renameat(sdir, tmp, sdir, LAYERS_FILE) < 0)
		rc = -1;
	buf_free(&b);
	if (rc < 0) {
		cordon_err_errno(err, "write the session's list of layers");
		unlinkat(sdir, tmp, 0);
	}
	return rc;
}

/* "lowerdir+" (Linux 6.8). Before 6.5 overlayfs takes its options as one
 * legacy string parsed only at FSCONFIG_CMD_CREATE: fsconfig accepts any
 * key there, so a refusal of "lowerdir+" cannot be seen before the create;
 * the release tells. */
static bool lowerdir_plus(void)
{
	struct utsname u;
	unsigned maj = 0, min = 0;
	if (getenv("CORDON_TEST_LOWERDIR_ONE") || uname(&u) < 0 || sscanf(u.release, "%u.%u", &maj, &min) != 2)
		return false;
	return maj > 6 || (maj == 6 && min >= 8);
}

int layers_create(int fs, const int *lower, size_t n, const char *procfd, cordon_error *err)
{
	char p[64];
	bool plus = lowerdir_plus();
	for (size_t i = 0; plus && i < n; i++) {
		snprintf(p, sizeof(p), "%s/%d", procfd, lower[i]);
		if (fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir+", p, 0) == 0)
			continue;
		if (i > 0 || errno != EINVAL)
			return cordon_err_errno(err, "overlay: lower layer %zu", i);
		plus = false; /* a kernel without it after all */
	}
	if (plus) {
		if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
			return cordon_err_errno(err, "overlay of %zu lower layers: create", n);
		return 0;
	}
	/* One string of at most 255 bytes: descriptor numbers, relative to
	 * a cwd of procfd, which stays the cwd until the create (before 6.5
	 * the paths are looked up there, not at fsconfig), then the cwd is
	 * what it was. */
	if (n > LAYERS_MAX + 1)
		return cordon_err(err, E2BIG, "overlay: %zu lower layers, more than %d", n, LAYERS_MAX + 1);
	/* A caller holding a thousand descriptors or more: a layer's of four
	 * digits is named by a copy below 1000 (64 numbers of 3 digits and
	 * their colons fit). */
	int num[LAYERS_MAX + 1], low[LAYERS_MAX + 1];
	size_t nlow = 0;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		num[i] = lower[i];
		if (lower[i] <= 999)
			continue;
		int d = fcntl(lower[i], F_DUPFD_CLOEXEC, 3);
		if (d >= 0 && d <= 999)
			num[i] = low[nlow++] = d;
		else {
			if (d >= 0)
				close(d);
			rc = cordon_err(err, EMFILE, "overlay: no descriptor below 1000 to name lower layer %zu by", i);
		}
	}
	char l[256];
	size_t len = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		int w = snprintf(l + len, sizeof(l) - len, "%s%d", i ? ":" : "", num[i]);
		if (w < 0 || (size_t)w >= sizeof(l) - len)
			rc = cordon_err(err, E2BIG, "overlay: %zu lower layers do not fit in one option", n);
		else
			len += (size_t)w;
	}
	_cleanup_close_ int back = rc == 0 ? open(".", O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	if (rc == 0 && (back < 0 || chdir(procfd) < 0))
		rc = cordon_err_errno(err, "overlay: chdir %s", procfd);
	if (rc == 0) {
		int r = fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", l, 0);
		if (r == 0)
			r = fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
		int e = errno;
		if (fchdir(back) < 0 && r == 0)
			rc = cordon_err_errno(err, "overlay: back to the cwd");
		errno = e;
		if (r < 0)
			rc = cordon_err_errno(err, "overlay of its %zu lower layers: create", n);
	}
	for (size_t i = 0; i < nlow; i++)
		close(low[i]);
	return rc;
}

int layers_merged(int top, int layers_dir, const strv *names, int *mnt_out, cordon_error *err)
{
	if (mnt_out)
		*mnt_out = -1;
	int fds[LAYERS_MAX + 1];
	size_t n = 0;
	int rc = 0;
	if (names->n > LAYERS_MAX)
		return cordon_err(err, E2BIG, "the stack is deeper than %d layers", LAYERS_MAX);
	if (top >= 0)
		fds[n++] = top;
	size_t first = n;
	for (size_t i = 0; rc == 0 && i < names->n; i++) {
		int fd = openat(layers_dir, names->v[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			rc = cordon_err_errno(err, "layer %s", names->v[i]);
		else
			fds[n++] = fd;
	}
	_cleanup_close_ int fs = rc == 0 ? fsopen("overlay", FSOPEN_CLOEXEC) : -1;
	if (rc == 0 && fs < 0)
		rc = cordon_err_errno(err, "fsopen overlay");
	/* userxattr: the layers' opaque marks are user.overlay.* (the run's
	 * overlay writes them so in its user namespace). */
	if (rc == 0 && (fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
			fsconfig(fs, FSCONFIG_SET_STRING, "metacopy", "off", 0) < 0 ||
			fsconfig(fs, FSCONFIG_SET_STRING, "index", "off", 0) < 0))
		rc = cordon_err_errno(err, "overlay: its options");
	if (rc == 0)
		rc = layers_create(fs, fds, n, "/proc/self/fd", err);
	int root = -1;
	if (rc == 0) {
		_cleanup_close_ int mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
		root = mnt < 0 ? -1 : openat(mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (root < 0)
			rc = cordon_err_errno(err, "overlay of the stack: fsmount");
		else if (mnt_out)
			*mnt_out = TAKE_FD(mnt);
	}
	for (size_t i = first; i < n; i++)
		close(fds[i]);
	return rc < 0 ? -1 : root;
}

int layers_materialize(int merged, int parent, int work, const char *scratch, cordon_error *err)
{
	struct ucopy_limits lim = {UINT64_MAX, UINT64_MAX, TREE_DEPTH, true, false, 0, 0};
	struct ucopy_stat st;
	upper_remove(parent, scratch, TREE_DEPTH, &(cordon_error){0}); /* an earlier end's, cut short */
	if (upper_copy(merged, parent, scratch, &lim, &st, err) < 0)
		return cordon_err_wrap(err, "the workspace's layers");
	_cleanup_close_ int s = openat(parent, scratch, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc = s < 0 ? cordon_err_errno(err, "open %s", scratch) : 0;
	/* Into work, a top entry at a time (work is the workspace's
	 * directory: the same inode before and after). */
	int d = rc == 0 ? dup(s) : -1;
	DIR *dir = d < 0 ? NULL : fdopendir(d);
	if (rc == 0 && !dir) {
		if (d >= 0)
			close(d);
		rc = cordon_err_errno(err, "list %s", scratch);
	}
	struct dirent *de;
	strv moved = {0};
	while (rc == 0 && dir && (errno = 0, de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (renameat2(s, de->d_name, work, de->d_name, RENAME_NOREPLACE) < 0)
			rc = cordon_err_errno(err, "move %s into the workspace", de->d_name);
		else if (strv_push(&moved, de->d_name) < 0) {
			renameat2(work, de->d_name, s, de->d_name, RENAME_NOREPLACE);
			rc = cordon_oom(err);
		}
	}
	if (dir)
		closedir(dir);
	/* Cut short: what was moved goes back (outside review attack18), so
	 * that the directory is as it was, not part of the stack's tree under
	 * a kept change set. */
	for (size_t i = 0; rc < 0 && i < moved.n; i++)
		renameat2(work, moved.v[i], s, moved.v[i], RENAME_NOREPLACE);
	strv_free(&moved);
	if (rc == 0 && upper_remove(parent, scratch, TREE_DEPTH, err) < 0)
		rc = -1;
	if (rc < 0)
		upper_remove(parent, scratch, TREE_DEPTH, &(cordon_error){0});
	return rc;
}

bool layers_own_workspace(const char *list, dev_t dev, ino_t ino)
{
	char d[4200];
	struct stat st;
	const char *sl = list ? strrchr(list, '/') : NULL;
	if (!sl || snprintf(d, sizeof(d), "%.*s/work", (int)(sl - list), list) >= (int)sizeof(d))
		return false;
	return lstat(d, &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == dev && st.st_ino == ino;
}

int layers_sweep(int layers_dir, int sessions_dir, bool wait, cordon_error *err)
{
	if (flock(layers_dir, LOCK_EX | (wait ? 0 : LOCK_NB)) < 0)
		return !wait && errno == EWOULDBLOCK ? 0 : cordon_err_errno(err, "lock the layers");
	strv listed = {0};
	int rc = 0, removed = 0;
	int d = dup(sessions_dir);
	DIR *dir = d < 0 ? NULL : fdopendir(d);
	if (!dir) {
		if (d >= 0)
			close(d);
		rc = cordon_err_errno(err, "list the sessions");
	}
	struct dirent *de;
	while (rc == 0 && dir && (errno = 0, de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		_cleanup_close_ int s = openat(sessions_dir, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (s < 0)
			continue;
		strv l = {0};
		cordon_error e = {0};
		/* A list that cannot be read keeps every layer (its session's
		 * may be among them). */
		if (layers_read(s, &l, &e) < 0)
			rc = cordon_err(err, e.code, "%s: %s", de->d_name, e.msg);
		for (size_t i = 0; rc == 0 && i < l.n; i++)
			if (!strv_contains(&listed, l.v[i]) && strv_push(&listed, l.v[i]) < 0)
				rc = cordon_oom(err);
		strv_free(&l);
	}
	if (rc == 0 && errno)
		rc = cordon_err_errno(err, "list the sessions");
	if (dir)
		closedir(dir);
	d = rc == 0 ? dup(layers_dir) : -1;
	dir = d < 0 ? NULL : fdopendir(d);
	if (rc == 0 && !dir) {
		if (d >= 0)
			close(d);
		rc = cordon_err_errno(err, "list the layers");
	}
	while (rc == 0 && dir && (errno = 0, de = readdir(dir))) {
		if (!layer_name_valid(de->d_name) || strv_contains(&listed, de->d_name))
			continue;
		if (upper_remove(layers_dir, de->d_name, TREE_DEPTH, err) < 0)
			rc = -1;
		else
			removed++;
	}
	if (dir)
		closedir(dir);
	strv_free(&listed);
	flock(layers_dir, LOCK_UN);
	return rc < 0 ? -1 : removed;
}
