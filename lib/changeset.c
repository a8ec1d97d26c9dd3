/* A run's change set on disk: create, open, list, apply (journalled),
 * discard (rolled back first when an apply was interrupted). See
 * changeset.h for the layout.
 *
 * The apply walks each layer's upper directory once, parents first:
 *   whiteout (char 0/0)  the host entry is renamed into <i>/backup
 *   directory            created on the host if absent; an opaque one (or
 *                        one replacing a file) replaces the host entry,
 *                        which goes to backup; then its entries
 *   file, symlink        owner and mode set on the upper inode, the host
 *                        entry hard-linked into backup, then the upper entry
 *                        renamed over it (atomic); copied beside and renamed
 *                        when the host is another filesystem
 *   anything else        refused (FIFO, socket, device node)
 * Each step is written to the journal, and synced, before it is taken
 * (files and links in groups: the records of a group, one fdatasync, then
 * its steps), and every step is idempotent, so an interrupted apply
 * completes by walking again; the journal, read backwards, undoes it
 * (changeset_discard). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include "changeset.h"
#include "cleanup.h"
#include "error.h"
#include "hash.h"
#include "protect.h"

#define META_MAGIC "cordon-changes 1"
#define REL_MAX 16384
#define PROTECT_MAX (64 * 1024) /* the protect file's bound */

static int64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int write_file_at(int dfd, const char *name, const void *data, size_t n, cordon_error *err)
{
	_cleanup_close_ int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || write_all(fd, data, n) < 0)
		return cordon_err_errno(err, "write %s", name);
	return 0;
}

/* At most max-1 bytes of dfd/name (a file of cordon's), NUL-terminated. */
/* A control file of a change set (meta, protect, N/host, journal): the
 * caller's own, written by cordon only (no group or other write, one link). */
static bool control_file_ok(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == geteuid() && !(st->st_mode & 022) && st->st_nlink == 1;
}

static int dirfd_path(int fd, char *out, size_t sz);

static ssize_t read_file_at(int dfd, const char *name, char *out, size_t max)
{
	_cleanup_close_ int fd = open_beneath(dfd, name, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !control_file_ok(&st))
		return -1;
	size_t n = 0;
	for (ssize_t r; n < max - 1 && (r = read(fd, out + n, max - 1 - n)) != 0;) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		n += (size_t)r;
	}
	out[n] = '\0';
	return (ssize_t)n;
}

void changeset_close(struct changeset *cs)
{
	if (cs->dirfd >= 0)
		close(cs->dirfd);
	cs->dirfd = -1;
	for (size_t i = 0; i < cs->nlayers; i++)
		free(cs->host[i]);
	cs->nlayers = 0;
	strv_free(&cs->protect);
}

/* The names, each ended by a NUL (a name may hold any other byte). */
static int write_protect(const struct changeset *cs, cordon_error *err)
{
	buf b = {0};
	for (size_t i = 0; i < cs->protect.n; i++)
		if (buf_append(&b, cs->protect.v[i], strlen(cs->protect.v[i]) + 1) < 0) {
			buf_free(&b);
			return cordon_err(err, ENOMEM, "out of memory");
		}
	if (b.len > PROTECT_MAX) {
		buf_free(&b);
		return cordon_err(err, E2BIG, "the protected names take more than %d bytes", PROTECT_MAX);
	}
	int r = write_file_at(cs->dirfd, "protect", b.p ? b.p : "", b.len, err);
	buf_free(&b);
	return r;
}

static int write_meta(const struct changeset *cs, cordon_error *err)
{
	char meta[256];
	int n = snprintf(meta, sizeof(meta), META_MAGIC "\nstarted %" PRId64 "\nowner %u %u\nrun %u %u\nlayers %zu\n",
			 cs->started_ns, (unsigned)cs->uid, (unsigned)cs->gid, (unsigned)cs->run_uid,
			 (unsigned)cs->run_gid, cs->nlayers);
	return write_file_at(cs->dirfd, "meta", meta, (size_t)n, err);
}

static int create_layer(struct changeset *cs, size_t i, uid_t run_uid, gid_t run_gid, cordon_error *err)
{
	char name[32];
	snprintf(name, sizeof(name), "%zu", i);
	/* 0711 as root: the run's init (another uid) passes it to upper/ and
	 * work/, its own; host and backup/ stay root's. */
	if (mkdirat(cs->dirfd, name, geteuid() == 0 && run_uid != cs->uid ? 0711 : 0700) < 0)
		return cordon_err_errno(err, "create %s/%s", cs->dir, name);
	_cleanup_close_ int l = open_beneath(cs->dirfd, name, O_PATH | O_DIRECTORY);
	if (l < 0 || write_file_at(l, "host", cs->host[i], strlen(cs->host[i]), err) < 0)
		return l < 0 ? cordon_err_errno(err, "open %s/%s", cs->dir, name) : -1;
	static const char *const sub[] = {"upper", "work"};
	for (size_t k = 0; k < 2; k++) {
		/* 0700: what the run wrote is nobody else's to read while the
		 * change set is kept (its layer dir is 0711 to let init pass). */
		if (mkdirat(l, sub[k], 0700) < 0)
			return cordon_err_errno(err, "create %s/%s/%s", cs->dir, name, sub[k]);
		/* The run's host identity writes them (through its overlay). */
		if (geteuid() == 0 && fchownat(l, sub[k], run_uid, run_gid, AT_SYMLINK_NOFOLLOW) < 0)
			return cordon_err_errno(err, "hand %s/%s/%s to the run's uid", cs->dir, name, sub[k]);
	}
	return 0;
}


/* ---- the seal ---- */

#define SEAL_KEY_NAME "changeset.key"
#define SEAL_KEY_LEN 32

static int keydir_configured(char *out, size_t sz);

int changeset_keydir(char *out, size_t sz)
{
	/* Asked several times a run: resolved once per configured path (the
	 * place is checked, from /, with no link followed, when it is used). */
	static _Thread_local char cfg[4096], res[4096];
	char d[4096], n[4096];
	if (keydir_configured(d, sizeof(d)) < 0 || path_normalize(d, n, sizeof(n)) < 0)
		return -1;
	if (!res[0] || strcmp(cfg, n) != 0) {
		cordon_error e = {0};
		if (path_walk(n, true, NULL, NULL, res, sizeof(res), NULL, 0, &e) < 0) {
			res[0] = '\0';
			errno = e.code;
			return -1;
		}
		snprintf(cfg, sizeof(cfg), "%s", n);
	}
	return snprintf(out, sz, "%s", res) < (int)sz ? 0 : -1;
}

static int keydir_configured(char *out, size_t sz)
{
	const char *d = secure_getenv("CORDON_STATE_DIR");
	int n;
	if (d && d[0] == '/')
		n = snprintf(out, sz, "%s", d);
	else if (geteuid() == 0)
		n = snprintf(out, sz, "/var/lib/cordon");
	else if ((d = secure_getenv("XDG_STATE_HOME")) && d[0] == '/')
		n = snprintf(out, sz, "%s/cordon", d);
	else {
		const char *home = secure_getenv("HOME");
		struct passwd pw, *res = NULL;
		char pwbuf[4096];
		if ((!home || home[0] != '/') && getpwuid_r(geteuid(), &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res)
			home = res->pw_dir;
		if (!home || home[0] != '/')
			return -1;
		n = snprintf(out, sz, "%s/.local/state/cordon", strcmp(home, "/") ? home : "");
	}
	return n > 0 && (size_t)n < sz ? 0 : -1;
}

/* mkdir -p, new directories 0700. */
static int make_parents(const char *path)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s", path);
	for (char *c = p + 1;; c++) {
		if (*c != '/' && *c != '\0')
			continue;
		char was = *c;
		*c = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return -1;
		if (!(*c = was))
			return 0;
	}
}

/* Every directory from / to dir (open at fd), opened one below the other
 * with no link followed: the same directory as fd at the end, and each
 * root's or the user's, not group- or other-writable unless sticky and
 * root's. */
static int secure_path(const char *dir, int fd, cordon_error *err)
{
	_cleanup_close_ int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char comp[256];
	struct stat st;
	for (const char *c = dir;;) {
		if (cur < 0 || fstat(cur, &st) < 0)
			return cordon_err_errno(err, "%s: on the way to the change-set key", dir);
		/* Group write only in the user's own group (a user private
		 * group, umask 002); other write only on a sticky directory of
		 * root's (/tmp). */
		bool mine = st.st_uid == geteuid(), sticky_root = (st.st_mode & S_ISVTX) && st.st_uid == 0;
		bool group_ok = !(st.st_mode & 020) || (mine && st.st_gid == getegid()) || sticky_root;
		bool other_ok = !(st.st_mode & 002) || sticky_root;
		if ((st.st_uid != 0 && !mine) || !group_ok || !other_ok)
			return cordon_err(err, EPERM,
					  "%.*s: owner uid %u, mode %04o: someone else could replace the change-set key below it",
					  (int)(c - dir), dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		while (*c == '/')
			c++;
		size_t l = strcspn(c, "/");
		if (!l)
			break;
		if (l >= sizeof(comp))
			return cordon_err(err, ENAMETOOLONG, "%s: too long", dir);
		memcpy(comp, c, l);
		comp[l] = '\0';
		c += l;
		int next = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(cur);
		cur = next;
	}
	struct stat want;
	if (fstat(fd, &want) < 0 || want.st_dev != st.st_dev || want.st_ino != st.st_ino)
		return cordon_err(err, EPERM, "%s: changed while opened", dir);
	return 0;
}

/* The key that seals this user's change sets: SEAL_KEY_LEN random bytes in
 * changeset_keydir()/changeset.key, made on first use (create), the
 * caller's own and nobody else's to read or write, the directory too. */
/* The key's directory, checked (below), made first with create; its fd or
 * -1 with err set. */
static int open_keydir(bool create, char dir[4096], cordon_error *err)
{
	char cfg[4096];
	if (keydir_configured(cfg, sizeof(cfg)) < 0)
		return cordon_err(err, ENOENT, "no directory for the change-set key (set HOME, XDG_STATE_HOME or CORDON_STATE_DIR)");
	if (changeset_keydir(dir, 4096) < 0)
		return cordon_err_errno(err, "the change-set key's directory %s cannot be reached", cfg);
	if (create) {
		/* The part that is there checked before anything is made in it:
		 * a directory made below a place someone else could replace
		 * would be one that no later run can be kept from. */
		char have[4096];
		snprintf(have, sizeof(have), "%s", dir);
		int a;
		for (;;) {
			a = open(have, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			char *sl = strrchr(have, '/');
			if (a >= 0 || errno != ENOENT || !sl)
				break;
			if (sl == have)
				sl[1] = '\0';
			else
				*sl = '\0';
		}
		if (a < 0)
			return cordon_err_errno(err, "open %s", have);
		int r = secure_path(have, a, err);
		close(a);
		if (r < 0)
			return -1;
		if (make_parents(dir) < 0)
			return cordon_err_errno(err, "create %s", dir);
	}
	/* Reached from / with no link followed (dir is resolved: a link on
	 * the way now was put there since), every directory on the way root's
	 * or the user's and writable by no one else (or sticky and root's, as
	 * /tmp): nobody else could have put the key there, or move it. */
	int d = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (d < 0 || fstat(d, &st) < 0) {
		cordon_err_errno(err, "open %s", dir);
		if (d >= 0)
			close(d);
		return -1;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(d);
		return cordon_err(err, EPERM, "%s: owner uid %u or mode %03o: not the change-set key's directory", dir,
				  (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
	}
	if (secure_path(dir, d, err) < 0) {
		close(d);
		return -1;
	}
	return d;
}

static int seal_key(unsigned char key[SEAL_KEY_LEN], bool create, cordon_error *err)
{
	char dir[4096];
	struct stat st;
	_cleanup_close_ int d = open_keydir(create, dir, err);
	if (d < 0)
		return -1;
	for (int tries = 0;; tries++) {
		_cleanup_close_ int fd = openat(d, SEAL_KEY_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && create && tries < 3) {
			/* Written beside, then linked into place: whoever links
			 * first made the key, and nobody reads half of one. */
			char tmp[64];
			unsigned char k[SEAL_KEY_LEN];
			snprintf(tmp, sizeof(tmp), SEAL_KEY_NAME ".%d", (int)getpid());
			(void)unlinkat(d, tmp, 0);
			int t = openat(d, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			int ok = t >= 0 && getentropy(k, sizeof(k)) == 0 && write_all(t, k, sizeof(k)) == 0 &&
				 fsync(t) == 0;
			explicit_bzero(k, sizeof(k));
			if (t >= 0)
				close(t);
			if (!ok || (linkat(d, tmp, d, SEAL_KEY_NAME, 0) < 0 && errno != EEXIST)) {
				int e = errno;
				(void)unlinkat(d, tmp, 0);
				errno = e;
				return cordon_err_errno(err, "create %s/%s", dir, SEAL_KEY_NAME);
			}
			(void)unlinkat(d, tmp, 0);
			continue;
		}
		if (fd < 0 || fstat(fd, &st) < 0)
			return cordon_err_errno(err, "open %s/%s", dir, SEAL_KEY_NAME);
		if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) || st.st_nlink != 1 ||
		    st.st_size != SEAL_KEY_LEN)
			return cordon_err(err, EPERM, "%s/%s: not a key of yours (a %d-byte file, mode 0600, one link)", dir,
					  SEAL_KEY_NAME, SEAL_KEY_LEN);
		ssize_t r = read(fd, key, SEAL_KEY_LEN);
		if (r != SEAL_KEY_LEN)
			return cordon_err(err, EIO, "%s/%s: short read", dir, SEAL_KEY_NAME);
		return 0;
	}
}

/* ---- the list of directories of change sets ---- */

#define REGISTRY_NAME "sets"
#define REGISTRY_MAX 1000
#define REGISTRY_BYTES (REGISTRY_MAX * 4096)

/* The user's list (beside the key) of the directories of change sets
 * their cordon made: model.c masks each one a run would see, at any depth
 * (one at the top of a path is found without it). Each entry a canonical
 * absolute path ended by a NUL (a name may hold a newline); the newest
 * last. Read into out (at most REGISTRY_MAX of the newest well-formed
 * entries, the file at most REGISTRY_BYTES); nothing if there is none or
 * it is not cordon's. */
static int registry_read(int d, strv *out)
{
	_cleanup_close_ int fd = openat(d, REGISTRY_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !control_file_ok(&st) || st.st_size > REGISTRY_BYTES)
		return 0;
	char *text = malloc((size_t)st.st_size + 1);
	if (!text)
		return -1;
	size_t n = 0;
	for (ssize_t r; n < (size_t)st.st_size && (r = read(fd, text + n, (size_t)st.st_size - n)) != 0;) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
	}
	text[n] = '\0';
	strv all = {0};
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n;) {
		const char *e = text + i;
		size_t l = strnlen(e, n - i);
		char norm[4096];
		if (l < n - i && e[0] == '/' && l < sizeof(norm) && path_normalize(e, norm, sizeof(norm)) == 0 &&
		    strcmp(norm, e) == 0 && !strv_contains(&all, e))
			rc = strv_push(&all, e);
		i += l + 1;
	}
	size_t first = all.n > REGISTRY_MAX ? all.n - REGISTRY_MAX : 0;
	for (size_t i = first; rc == 0 && i < all.n; i++)
		rc = strv_push(out, all.v[i]);
	strv_free(&all);
	free(text);
	return rc;
}

/* Add top (canonical) to the list; a directory gone (ENOENT, ENOTDIR, or
 * no directory there) is dropped, the oldest past REGISTRY_MAX too; one
 * that cannot be looked at stays. Under the key directory's lock; written
 * beside and renamed. Best effort: a set not listed is still masked at the
 * top of a path. */
static void registry_add(const char *top)
{
	char dir[4096];
	cordon_error e = {0};
	_cleanup_close_ int d = open_keydir(true, dir, &e);
	if (d < 0 || flock(d, LOCK_EX) < 0)
		return;
	strv old = {0};
	buf b = {0};
	if (registry_read(d, &old) < 0 || strv_contains(&old, top)) {
		/* Listed already (the directory is made again after each run
		 * that left it empty): nothing to write. */
		strv_free(&old);
		return;
	}
	/* Those gone first, then the oldest past the bound. */
	size_t live = 0;
	for (size_t i = 0; i < old.n; i++) {
		struct stat st;
		if (lstat(old.v[i], &st) < 0 ? (errno == ENOENT || errno == ENOTDIR) : !S_ISDIR(st.st_mode)) {
			free(old.v[i]);
			continue;
		}
		old.v[live++] = old.v[i];
	}
	old.n = live;
	for (size_t i = live + 1 > REGISTRY_MAX ? live + 1 - REGISTRY_MAX : 0; i < live; i++)
		if (buf_append(&b, old.v[i], strlen(old.v[i]) + 1) < 0)
			goto out;
	if (buf_append(&b, top, strlen(top) + 1) < 0)
		goto out;
	char tmp[64];
	snprintf(tmp, sizeof(tmp), REGISTRY_NAME ".%d", (int)getpid());
	(void)unlinkat(d, tmp, 0);
	int t = openat(d, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	bool ok = t >= 0 && write_all(t, b.p, b.len) == 0;
	if (t >= 0)
		close(t);
	if (!ok || renameat(d, tmp, d, REGISTRY_NAME) < 0)
		(void)unlinkat(d, tmp, 0);
out:
	buf_free(&b);
	strv_free(&old);
}

int changeset_registered(strv *out, cordon_error *err)
{
	char dir[4096];
	_cleanup_close_ int d = open_keydir(false, dir, err);
	if (d < 0)
		return err->code == ENOENT ? 0 : -1;
	return registry_read(d, out) < 0 ? cordon_err(err, ENOMEM, "out of memory") : 0;
}

static int note_link(void *ctx, const char *link, const char *dir, cordon_error *err)
{
	(void)dir;
	return strv_push(ctx, link) < 0 ? cordon_err(err, ENOMEM, "out of memory") : 0;
}

int changeset_key_guard(const char *const *paths, const bool *writable, size_t n, cordon_error *err)
{
	char cfg[4096], norm[4096], resolved[4096], stop[4096];
	if (keydir_configured(cfg, sizeof(cfg)) < 0 || path_normalize(cfg, norm, sizeof(norm)) < 0)
		return 0; /* no key: no change set is made or opened either */
	/* The links on the way (each at its canonical place), and where the
	 * walk stopped if it could not go on (a directory that cannot be
	 * searched, a link loop). */
	strv links = {0};
	cordon_error we = {0};
	int stop_errno = path_walk(norm, true, note_link, &links, resolved, sizeof(resolved), stop, sizeof(stop), &we) < 0
				 ? we.code
				 : 0;
	int r = 0;
	for (size_t i = 0; r == 0 && i < n; i++) {
		for (size_t k = 0; r == 0 && writable[i] && k < links.n; k++)
			if (path_has_prefix(links.v[k], paths[i]))
				r = cordon_err(err, EPERM,
					       "rw %s holds %s, a symbolic link on the way to the change-set key's directory %s: a run could point it at a key of its own; grant a path without it, or set CORDON_STATE_DIR to a directory no run may write",
					       paths[i], links.v[k], cfg);
		if (r == 0 && stop_errno && stop[0] && (path_has_prefix(stop, paths[i]) || path_has_prefix(paths[i], stop)))
			r = cordon_err(err, stop_errno,
				       "%s %s: the way to the change-set key's directory %s stops at %s (%s), and the run would see there: a run may have changed its mode; restore it, or set CORDON_STATE_DIR",
				       writable[i] ? "rw" : "ro", paths[i], cfg, stop, strerror(stop_errno));
	}
	strv_free(&links);
	return r;
}

int changeset_key_ensure(cordon_error *err)
{
	unsigned char key[SEAL_KEY_LEN];
	int r = seal_key(key, true, err);
	explicit_bzero(key, sizeof(key));
	return r;
}

/* The directory's canonical path, as the kernel names its descriptor. */
static int dirfd_path(int fd, char *out, size_t sz)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(p, out, sz - 1);
	if (n <= 0 || (size_t)n >= sz - 1 || out[0] != '/')
		return -1;
	out[n] = '\0';
	return 0;
}

/* HMAC-SHA-256, under the user's key, of what says where an apply writes
 * and what it holds back: the change set's own path (a set moved, or its
 * control files copied elsewhere, is no longer cordon's), its meta, each
 * layer's host directory and the protected names. Everything else in it
 * (the upper layers) is the run's, hostile and treated so. */
static int seal_compute(const struct changeset *cs, const unsigned char key[SEAL_KEY_LEN], char hex[65],
			cordon_error *err)
{
	char path[4096];
	if (dirfd_path(cs->dirfd, path, sizeof(path)) < 0)
		return cordon_err_errno(err, "%s: its path", cs->dir);
	buf b = {0};
	int bad = buf_printf(&b, "cordon-changes seal 1\n%s", path) < 0 || buf_append(&b, "", 1) < 0 ||
		  buf_printf(&b, "started %" PRId64 "\nowner %u %u\nrun %u %u\nlayers %zu\n", cs->started_ns,
			     (unsigned)cs->uid, (unsigned)cs->gid, (unsigned)cs->run_uid, (unsigned)cs->run_gid,
			     cs->nlayers) < 0;
	for (size_t i = 0; !bad && i < cs->nlayers; i++)
		bad = buf_append(&b, cs->host[i], strlen(cs->host[i]) + 1) < 0;
	bad = bad || buf_append(&b, "\n", 1) < 0;
	for (size_t i = 0; !bad && i < cs->protect.n; i++)
		bad = buf_append(&b, cs->protect.v[i], strlen(cs->protect.v[i]) + 1) < 0;
	if (bad) {
		buf_free(&b);
		return cordon_err(err, ENOMEM, "out of memory");
	}
	unsigned char mac[32];
	hmac_sha256(key, SEAL_KEY_LEN, b.p, b.len, mac);
	buf_free(&b);
	static const char x[] = "0123456789abcdef";
	for (size_t i = 0; i < sizeof(mac); i++) {
		hex[2 * i] = x[mac[i] >> 4];
		hex[2 * i + 1] = x[mac[i] & 15];
	}
	hex[64] = '\0';
	return 0;
}

static int write_seal(const struct changeset *cs, cordon_error *err)
{
	unsigned char key[SEAL_KEY_LEN];
	char hex[65];
	if (seal_key(key, true, err) < 0)
		return -1;
	int r = seal_compute(cs, key, hex, err);
	explicit_bzero(key, sizeof(key));
	return r < 0 ? -1 : write_file_at(cs->dirfd, "seal", hex, 64, err);
}

/* A change set that a run could have written (in a workspace it could
 * write directly, say) names any host directory it likes: only one this
 * user's cordon sealed, where it made it, is opened. */
static int check_seal(const struct changeset *cs, cordon_error *err)
{
	char want[65] = {0}, got[80] = {0};
	unsigned char key[SEAL_KEY_LEN];
	ssize_t n = read_file_at(cs->dirfd, "seal", got, sizeof(got));
	if (n < 0)
		return cordon_err(err, EPERM, "%s: no seal: not a change set your cordon made (or an older cordon's)",
				  cs->dir);
	if (seal_key(key, false, err) < 0)
		return -1;
	int r = seal_compute(cs, key, want, err);
	explicit_bzero(key, sizeof(key));
	if (r < 0)
		return -1;
	unsigned char diff = n != 64;
	for (size_t i = 0; i < 64; i++)
		diff |= (unsigned char)(want[i] ^ got[i]);
	if (diff)
		return cordon_err(err, EPERM,
				  "%s: its seal does not match: not a change set your cordon made there (moved, copied, altered, "
				  "or forged)",
				  cs->dir);
	return 0;
}

static int make_dir(struct changeset *cs, int b, const char *base, uid_t run_uid, uid_t uid, cordon_error *err);

int changeset_create(struct changeset *cs, const char *base, const char *const *hosts, size_t n, uid_t uid,
		     gid_t gid, uid_t run_uid, gid_t run_gid, const strv *protect, cordon_error *err)
{
	memset(cs, 0, sizeof(*cs));
	cs->dirfd = -1;
	if (changeset_keydir(cs->keydir, sizeof(cs->keydir)) < 0)
		cs->keydir[0] = '\0';
	if (n > CHANGESET_MAX_LAYERS)
		return cordon_err(err, E2BIG, "more than %d writable paths", CHANGESET_MAX_LAYERS);
	_cleanup_close_ int b = open_root(base, O_PATH | O_DIRECTORY);
	if (b < 0)
		return cordon_err_errno(err, "open %s", base);
	/* Another run may remove an empty .cordon-changes[-UID] at any moment:
	 * made again, a few times. */
	for (int tries = 0;; tries++) {
		if (make_dir(cs, b, base, run_uid, uid, err) == 0)
			break;
		if (err->code != ENOENT || tries == 3)
			return -1;
	}
	cs->started_ns = realtime_ns();
	cs->uid = uid;
	cs->gid = gid;
	cs->run_uid = run_uid;
	cs->run_gid = run_gid;
	for (size_t i = 0; i < n; i++, cs->nlayers++)
		if (!(cs->host[i] = strdup(hosts[i])))
			return cordon_err(err, ENOMEM, "out of memory");
	for (size_t i = 0; protect && i < protect->n; i++)
		if (strv_push(&cs->protect, protect->v[i]) < 0)
			return cordon_err(err, ENOMEM, "out of memory");
	if (write_meta(cs, err) < 0 || write_protect(cs, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (create_layer(cs, i, run_uid, run_gid, err) < 0)
			return -1;
	if (write_seal(cs, err) < 0) {
		cs->no_key = true;
		return -1;
	}
	return 0;
}

static int make_dir(struct changeset *cs, int b, const char *base, uid_t run_uid, uid_t uid, cordon_error *err)
{
	char top_name[64];
	changeset_dirname(top_name, sizeof(top_name));
	bool made = mkdirat(b, top_name, 0711) == 0;
	if (!made && errno != EEXIST)
		return cordon_err_errno(err, "create %s/%s", base, top_name);
	_cleanup_close_ int top = open_beneath(b, top_name, O_PATH | O_DIRECTORY);
	struct stat st;
	if (top < 0 && (errno == ENOTDIR || errno == ELOOP)) {
		/* Someone else's name there: a file or a link. */
		cs->squatted = true;
		return cordon_err(err, EPERM, "%s%s%s is not a directory (a file or a link someone made): not using it",
				  base, strcmp(base, "/") ? "/" : "", top_name);
	}
	if (top < 0 || fstat(top, &st) < 0)
		return cordon_err_errno(err, "open %s/%s", base, top_name);
	/* The user's own, writable by others (a run's chmod, say): its mode
	 * put right (what is in it is sealed); anyone else's: not used. */
	if (st.st_uid == geteuid() && (st.st_mode & 022)) {
		char link[64];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", top);
		if (chmod(link, st.st_mode & 07755) < 0 || fstat(top, &st) < 0)
			return cordon_err_errno(err, "%s%s%s: mode %04o, writable by others, and cannot be made 0755 (chmod go-w)",
						base, strcmp(base, "/") ? "/" : "", top_name, (unsigned)(st.st_mode & 07777));
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		cs->squatted = true;
		return cordon_err(err, EPERM, "%s%s%s belongs to uid %u, not to you (uid %u): not using it", base,
				  strcmp(base, "/") ? "/" : "", top_name, (unsigned)st.st_uid, (unsigned)geteuid());
	}
	char top_path[4096];
	if (dirfd_path(top, top_path, sizeof(top_path)) == 0)
		registry_add(top_path);
	unsigned char rnd[8];
	if (getentropy(rnd, sizeof(rnd)) < 0)
		return cordon_err_errno(err, "getentropy");
	char id[40];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	int k = (int)strftime(id, sizeof(id), "%Y%m%dT%H%M%S-", &tm);
	for (size_t i = 0; i < 4; i++)
		k += snprintf(id + k, sizeof(id) - (size_t)k, "%02x", rnd[i]);
	/* 0711 as root: the run's init (another uid) reaches its layer's
	 * directory (its own, 0700) by path; nothing here can be listed. */
	if (mkdirat(top, id, geteuid() == 0 && run_uid != uid ? 0711 : 0700) < 0)
		return cordon_err_errno(err, "create %s/%s/%s", base, top_name, id);
	if (snprintf(cs->dir, sizeof(cs->dir), "%s%s%s/%s", base, strcmp(base, "/") ? "/" : "", top_name,
		     id) >= (int)sizeof(cs->dir))
		return cordon_err(err, ENAMETOOLONG, "%s: too long", base);
	cs->dirfd = open_beneath(top, id, O_RDONLY | O_DIRECTORY);
	if (cs->dirfd < 0)
		return cordon_err_errno(err, "open %s", cs->dir);
	return 0;
}

/* The protect file: names ended by NULs, each one a valid name
 * (protect_check_name). Absent (an older cordon's change set): the
 * defaults. Anything else wrong: the change set is not used. */
static int read_protect_in(struct changeset *cs, char *text, cordon_error *err);

/* (Allocation and free by hand around the body: scan-build does not follow
 * cleanup attributes through its early returns.) */
static int read_protect(struct changeset *cs, cordon_error *err)
{
	char *text = malloc(PROTECT_MAX + 1);
	if (!text)
		return cordon_err(err, ENOMEM, "out of memory");
	int r = read_protect_in(cs, text, err);
	free(text);
	return r;
}

static int read_protect_in(struct changeset *cs, char *text, cordon_error *err)
{
	ssize_t n = read_file_at(cs->dirfd, "protect", text, PROTECT_MAX + 1);
	if (n < 0 && errno == ENOENT) {
		for (size_t i = 0; protect_defaults[i]; i++)
			if (strv_push(&cs->protect, protect_defaults[i]) < 0)
				return cordon_err(err, ENOMEM, "out of memory");
		return 0;
	}
	if (n < 0 || n == PROTECT_MAX || (n > 0 && text[n - 1] != '\0'))
		return cordon_err(err, EINVAL, "%s/protect: not a list of protected names", cs->dir);
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(text + i) + 1) {
		char norm[4096];
		cordon_error e = {0};
		if (text[i] == '/' && protect_marker_valid(text + i))
			snprintf(norm, sizeof(norm), "%s", text + i); /* a home's marker (protect.h) */
		else if (protect_check_name(text + i, norm, sizeof(norm), &e) < 0 || strcmp(norm, text + i) != 0)
			return cordon_err(err, EINVAL, "%s/protect: not a list of protected names", cs->dir);
		if (strv_push(&cs->protect, norm) < 0)
			return cordon_err(err, ENOMEM, "out of memory");
	}
	return 0;
}

int changeset_open(struct changeset *cs, const char *dir, cordon_error *err)
{
	memset(cs, 0, sizeof(*cs));
	if (changeset_keydir(cs->keydir, sizeof(cs->keydir)) < 0)
		cs->keydir[0] = '\0';
	if (snprintf(cs->dir, sizeof(cs->dir), "%s", dir) >= (int)sizeof(cs->dir))
		return cordon_err(err, ENAMETOOLONG, "%s: too long", dir);
	cs->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (cs->dirfd < 0 || fstat(cs->dirfd, &st) < 0)
		return cordon_err_errno(err, "%s", dir);
	/* Named as the kernel names it from here on: `cordon apply ID` from
	 * inside .cordon-changes has a parent to be removed from. */
	if (dirfd_path(cs->dirfd, cs->dir, sizeof(cs->dir)) < 0)
		return cordon_err_errno(err, "%s: its path", dir);
	dir = cs->dir;
	/* Its meta and host files say where the apply writes and whose the
	 * files become: only the caller's own change set is trusted (root
	 * included: a user's could name /etc). */
	if (st.st_uid != geteuid() || (st.st_mode & 022))
		return cordon_err(err, EPERM, "%s: not a change set of yours (owner uid %u, mode %03o)", dir,
				  (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
	char meta[512];
	long long started;
	unsigned u, g, ru, rg;
	size_t n;
	if (read_file_at(cs->dirfd, "meta", meta, sizeof(meta)) < 0)
		return cordon_err(err, EINVAL, "%s: not a change set (no meta file)", dir);
	/* The run's uid line is newer: without it (an older cordon's), the
	 * owner's. */
	int f = sscanf(meta, META_MAGIC "\nstarted %lld\nowner %u %u\nrun %u %u\nlayers %zu\n", &started, &u, &g, &ru,
		       &rg, &n);
	bool has_run = f == 6;
	if (f != 6 && sscanf(meta, META_MAGIC "\nstarted %lld\nowner %u %u\nlayers %zu\n", &started, &u, &g, &n) == 4) {
		ru = u;
		rg = g;
		f = 6;
	}
	if (f != 6 || n == 0 || n > CHANGESET_MAX_LAYERS)
		return cordon_err(err, EINVAL, "%s/meta: not a change set's (version 1)", dir);
	/* An ordinary user's runs are that user. */
	if (geteuid() != 0 && ru != geteuid())
		return cordon_err(err, EPERM, "%s/meta: run uid %u is not yours", dir, ru);
	cs->run_uid = ru;
	cs->run_gid = rg;
	/* An ordinary user's apply makes files theirs: any other owner in meta
	 * was not written by their cordon. */
	if (geteuid() != 0 && u != geteuid())
		return cordon_err(err, EPERM, "%s/meta: owner uid %u is not yours", dir, u);
	cs->started_ns = started;
	cs->uid = u;
	cs->gid = g;
	for (size_t i = 0; i < n; i++, cs->nlayers++) {
		char name[48], host[4096];
		struct stat ls;
		snprintf(name, sizeof(name), "%zu", i);
		if (fstatat(cs->dirfd, name, &ls, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(ls.st_mode) ||
		    ls.st_uid != geteuid() || (ls.st_mode & 022))
			return cordon_err(err, EPERM, "%s/%s: not a layer of yours (owner, mode)", dir, name);
		/* The upper layer is the run's (its host uid wrote it), or
		 * gone (applied): anyone else's was not made by this run. */
		snprintf(name, sizeof(name), "%zu/upper", i);
		if (has_run && fstatat(cs->dirfd, name, &ls, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (!S_ISDIR(ls.st_mode) || ls.st_uid != ru))
			return cordon_err(err, EPERM, "%s/%s: not the run's upper layer (owner uid %u, the run's %u)", dir,
					  name, (unsigned)ls.st_uid, ru);
		snprintf(name, sizeof(name), "%zu/host", i);
		ssize_t len = read_file_at(cs->dirfd, name, host, sizeof(host));
		if (len <= 0 || host[0] != '/' || strlen(host) != (size_t)len)
			return cordon_err(err, EINVAL, "%s/%s: not a host path", dir, name);
		if (!(cs->host[i] = strdup(host)))
			return cordon_err(err, ENOMEM, "out of memory");
	}
	if (read_protect(cs, err) < 0)
		return -1;
	return check_seal(cs, err);
}

int changeset_layer_fd(const struct changeset *cs, size_t i, const char *which, cordon_error *err)
{
	char name[48];
	snprintf(name, sizeof(name), "%zu/%s", i, which);
	int fd = open_beneath(cs->dirfd, name, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return cordon_err_errno(err, "open %s/%s", cs->dir, name);
	return fd;
}

bool changeset_interrupted(const struct changeset *cs)
{
	return faccessat(cs->dirfd, "journal", F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Held back by every apply, --include-protected too: a directory of change
 * sets (anyone's) at any depth, and the directory of the change-set key
 * (and, above it, anything but a plain directory: a link there would move
 * it). */
static bool always_held(const struct changeset *cs, size_t layer, const char *rel, int dir, char *why, size_t whysz)
{
	size_t at = changeset_dirname_in(rel);
	if (at) {
		snprintf(why, whysz, "a directory of change sets %.*s", (int)at, rel);
		return true;
	}
	const char *kd = cs->keydir, *h = layer < cs->nlayers ? cs->host[layer] : NULL;
	size_t hl = h && strcmp(h, "/") ? strlen(h) : 0;
	if (!h || !kd[0] || strncmp(kd, h, hl) != 0 || kd[hl] != '/')
		return false;
	char *one[] = {(char *)kd + hl + 1};
	strv names = {one, 1, 1};
	return protect_match(&names, rel, dir, why, whysz);
}

bool changeset_held_back(const struct changeset *cs, size_t layer, const char *rel, int dir, char *why, size_t whysz)
{
	/* The same matcher as the observer's (protect.h): at or below a name;
	 * above one, anything but a directory merged (a file or a link .git,
	 * .git deleted or replaced, takes .git/config along); git's names at
	 * any depth, and a directory .git made where there was none. */
	return protect_match_in(&cs->protect, layer < cs->nlayers ? cs->host[layer] : NULL, rel, dir, why, whysz);
}

/* ---- walking an upper directory ---- */

static bool is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == 0;
}

static bool is_opaque(int dfd)
{
	char v[4];
	static const char *const names[] = {"user.overlay.opaque", "trusted.overlay.opaque"};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		ssize_t n = fgetxattr(dfd, names[i], v, sizeof(v));
		if (n == 1 && v[0] == 'y')
			return true;
	}
	return false;
}

static const char *special_name(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : S_ISBLK(m) ? "a block device" :
	       S_ISCHR(m) ? "a character device" : "a special file";
}

struct walk {
	const struct changeset *cs;
	size_t layer;
	char rel[REL_MAX]; /* the current entry, relative to the layer */
	size_t entries;
	size_t steps; /* list: the apply's synced steps (changeset_list) */
	size_t files; /* list: files and links (synced in groups) */
	/* list */
	const char *base;
	struct file_list *out;
	const struct changeset_held *held; /* what is not applied (each may be NULL) */
	char held_rel[REL_MAX]; /* the last entry listed as protected: not its entries again */
	/* conflicts */
	strv *conflicts;
	bool rmdir_after; /* apply: an upper directory goes once emptied */
	/* apply: called with a directory's U and H when its entries are done */
	int (*level_end)(struct walk *w, int U, int H, cordon_error *err);
	/* apply: what is selected and ignored (changeset_apply_opts) */
	const struct changeset_apply_opts *sel;
	bool planning;      /* the walk before the apply (plan_visit) */
	size_t *hits;       /* planning: per pattern, entries it selected */
	size_t *ign_hits;   /* planning: per pattern, ignored entries it selected */
	strv needed;        /* "LAYER/REL" of each directory on the way to a
			     * selected entry (sorted once planned) */
	size_t needed_layer;
	char needed_last[REL_MAX]; /* the last directory noted (its ancestors were) */
	size_t left;        /* apply: entries not selected, kept */
	bool planned;       /* the plan walk ran: needed is complete */
	size_t dropped;     /* changeset_drop_ignored: entries removed */
};

/* w->rel + "/" + name while fn runs; restored afterwards. */
static int push_name(struct walk *w, const char *name, size_t *saved, cordon_error *err)
{
	*saved = strlen(w->rel);
	int n = snprintf(w->rel + *saved, sizeof(w->rel) - *saved, "%s%s", *saved ? "/" : "", name);
	if (n < 0 || (size_t)n >= sizeof(w->rel) - *saved)
		return cordon_err(err, ENAMETOOLONG, "%s: a path longer than %d bytes", w->cs->host[w->layer], REL_MAX);
	if (++w->entries > CHANGESET_MAX_ENTRIES)
		return cordon_err(err, EFBIG, "more than %d entries", CHANGESET_MAX_ENTRIES);
	return 0;
}

static int host_path(const struct walk *w, char *out, size_t sz)
{
	const char *h = w->cs->host[w->layer];
	return snprintf(out, sz, "%s%s%s", h, strcmp(h, "/") ? "/" : "", w->rel) >= (int)sz ? -1 : 0;
}

/* A line of one of held's lists: "PATH: why", or PATH alone. */
static int add_held(strv *s, const char *path, const char *why, cordon_error *err)
{
	if (!s)
		return 0;
	char line[REL_MAX + 4096 + 300];
	snprintf(line, sizeof(line), "%s%s%s", path, why ? ": " : "", why ? why : "");
	if (strv_push(s, line) < 0)
		return cordon_err(err, ENOMEM, "out of memory");
	return 0;
}

static strv *held_list(const struct walk *w, int which)
{
	if (!w->held)
		return NULL;
	return which == 0 ? w->held->refused : which == 1 ? w->held->protected : w->held->conflicts;
}

/* Does the entry U/name (st; the host's hs if host) replace nothing on the
 * host: a directory made, or merged into a host directory (not opaque)?
 * An upper directory that cannot be opened counts as replacing. */
static bool plain_dir(int U, const char *name, const struct stat *st, bool host, const struct stat *hs)
{
	if (!S_ISDIR(st->st_mode))
		return false;
	if (!host)
		return true;
	if (!S_ISDIR(hs->st_mode))
		return false;
	_cleanup_close_ int ud = open_beneath(U, name, O_RDONLY | O_DIRECTORY);
	return ud >= 0 && !is_opaque(ud);
}

/* What the protect matcher is told of an entry (protect.h): 0 for a file,
 * link, replacement or a deletion of something there; PROTECT_DIR_KEPT for
 * a directory merged into the host's (or a deletion of nothing);
 * PROTECT_DIR_NEW for a directory made where nothing was. */
static int held_dir(int U, const char *name, const struct stat *st, bool host, const struct stat *hs)
{
	if (is_whiteout(st))
		return host ? 0 : PROTECT_DIR_KEPT;
	if (!plain_dir(U, name, st, host, hs))
		return 0;
	return host ? PROTECT_DIR_KEPT : PROTECT_DIR_NEW;
}

/* Does the entry (a whiteout or anything not a plain directory) act on a
 * host entry changed since the run started (ctime)? */
static bool changed_since(const struct walk *w, const struct stat *st, bool host, const struct stat *hs)
{
	if (!host || (S_ISDIR(st->st_mode) && S_ISDIR(hs->st_mode)))
		return false;
	int64_t ct = (int64_t)hs->st_ctim.tv_sec * 1000000000LL + hs->st_ctim.tv_nsec;
	return ct > w->cs->started_ns;
}

typedef int (*visit_fn)(struct walk *w, int U, int H, const char *name, const struct stat *st, cordon_error *err);

/* ---- selecting and ignoring (changeset_apply_opts: select, no_ignore) ---- */

const char *const changeset_ignore_defaults[] = {
	"__pycache__", "*.pyc", ".pytest_cache", ".mypy_cache", ".ruff_cache", "node_modules/.cache", ".git/index",
	NULL,
};

static size_t components(const char *p)
{
	size_t n = 1;
	for (; *p; p++)
		n += *p == '/';
	return n;
}

/* The length of p's first k components. */
static size_t first_components(const char *p, size_t k)
{
	size_t i = 0;
	for (; p[i]; i++)
		if (p[i] == '/' && --k == 0)
			break;
	return i;
}

int changeset_selects(const char *pattern, const char *path)
{
	if ((pattern[0] == '/') != (path[0] == '/'))
		return 0;
	size_t k = components(pattern), n = components(path);
	char head[REL_MAX + 4096];
	if (n >= k) {
		size_t l = first_components(path, k);
		if (l >= sizeof(head))
			return 0;
		memcpy(head, path, l);
		head[l] = '\0';
		return fnmatch(pattern, head, FNM_PATHNAME) == 0 ? 1 : 0;
	}
	size_t l = first_components(pattern, n);
	if (l >= sizeof(head))
		return 0;
	memcpy(head, pattern, l);
	head[l] = '\0';
	return fnmatch(head, path, FNM_PATHNAME) == 0 ? 2 : 0;
}

bool changeset_ignored(const char *path)
{
	return changeset_ignore_kind(path) != 0;
}

int changeset_ignore_kind(const char *path)
{
	/* Each directory above path and path itself (its first j components),
	 * against each pattern of k components: its last k of those j. */
	size_t n = components(path);
	char win[REL_MAX];
	for (size_t j = 1; j <= n; j++) {
		size_t end = first_components(path, j);
		for (size_t i = 0; changeset_ignore_defaults[i]; i++) {
			size_t k = components(changeset_ignore_defaults[i]);
			if (k > j)
				continue;
			size_t start = j == k ? 0 : first_components(path, j - k) + 1;
			if (end - start >= sizeof(win))
				continue;
			memcpy(win, path + start, end - start);
			win[end - start] = '\0';
			if (fnmatch(changeset_ignore_defaults[i], win, FNM_PATHNAME) == 0)
				return strcmp(changeset_ignore_defaults[i], ".git/index") == 0 ? 2 : 1;
		}
	}
	return 0;
}

int changeset_select_normalize(const struct changeset *cs, const char *pattern, char *out, size_t sz,
			       cordon_error *err)
{
	const char *p = pattern;
	if (p[0] == '/' && cs->nlayers) {
		const char *h = cs->host[0];
		size_t hl = strcmp(h, "/") ? strlen(h) : 0;
		if (strncmp(p, h, hl) == 0 && p[hl] == '/')
			p += hl + 1;
	}
	while (p[0] == '.' && p[1] == '/')
		for (p += 2; *p == '/';)
			p++;
	size_t l = strlen(p);
	while (l > 1 && p[l - 1] == '/')
		l--;
	if (l + 1 > sz || l >= REL_MAX)
		return cordon_err(err, ENAMETOOLONG, "%s: too long", pattern);
	memcpy(out, p, l);
	out[l] = '\0';
	/* Every component a name: none empty, ".", or "..". */
	for (const char *c = out + (out[0] == '/');;) {
		size_t n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return cordon_err(err, EINVAL,
					  "%s: not a path or glob below the workspace (an empty, \".\" or \"..\" component)",
					  pattern);
		if (!c[n])
			return 0;
		c += n + 1;
	}
}

enum sel_class { SEL_TAKE, SEL_IGNORED, SEL_LEFT, SEL_PATH };

/* The entry's path as changeset_list names it (relative to layer 0's host
 * directory if below it, else absolute). */
static const char *display_path(const struct walk *w, char *out, size_t sz)
{
	if (w->layer == 0)
		return w->rel;
	if (host_path(w, out, sz) < 0)
		return w->rel;
	const char *b = w->cs->host[0];
	size_t bl = strlen(b);
	return path_has_prefix(out, b) && out[bl] == '/' ? out + bl + 1 : out;
}

static bool plain_dir(int U, const char *name, const struct stat *st, bool host, const struct stat *hs);

/* Taken (selected, not ignored), ignored, left (not selected), or a plain
 * directory on the way to what may be selected below it: entered, not
 * applied itself (made where it is new, if something below is selected). */
static enum sel_class classify(struct walk *w, int U, const char *name, const struct stat *st, bool host,
			       const struct stat *hs)
{
	const struct changeset_apply_opts *o = w->sel;
	if (!o)
		return SEL_TAKE;
	char dp[REL_MAX + 4096];
	const char *p = display_path(w, dp, sizeof(dp));
	int kind = o->no_ignore ? 0 : changeset_ignore_kind(w->rel);
	/* git's index: the run's is applied where the host's has not changed
	 * since the run started; where it has (a host `git status`), the
	 * host's stays, and that is no conflict. */
	bool ign = kind == 1 || (kind == 2 && changed_since(w, st, host, hs)), take = !o->nselect, way = false;
	for (size_t i = 0; i < o->nselect; i++) {
		int m = changeset_selects(o->select[i], p);
		if (m == 1 && w->planning && w->hits)
			(ign ? w->ign_hits : w->hits)[i]++;
		take = take || m == 1;
		way = way || m == 2;
	}
	if (ign)
		return SEL_IGNORED;
	if (take)
		return SEL_TAKE;
	if (way && !is_whiteout(st) && plain_dir(U, name, st, host, hs))
		return SEL_PATH;
	return SEL_LEFT;
}

/* A taken entry: the directories above it are needed (made if new), and
 * itself with self (an empty new directory). */
static int note_needed(struct walk *w, bool self, cordon_error *err)
{
	char key[REL_MAX + 32];
	if (self) {
		snprintf(key, sizeof(key), "%zu/%s", w->layer, w->rel);
		if (strv_push(&w->needed, key) < 0)
			return cordon_err(err, ENOMEM, "out of memory");
	}
	const char *slash = strrchr(w->rel, '/');
	if (!slash)
		return 0;
	size_t n = (size_t)(slash - w->rel);
	if (w->needed_layer == w->layer && strlen(w->needed_last) == n && strncmp(w->needed_last, w->rel, n) == 0)
		return 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && w->rel[i] != '/')
			continue;
		snprintf(key, sizeof(key), "%zu/%.*s", w->layer, (int)i, w->rel);
		if (strv_push(&w->needed, key) < 0)
			return cordon_err(err, ENOMEM, "out of memory");
	}
	w->needed_layer = w->layer;
	snprintf(w->needed_last, sizeof(w->needed_last), "%.*s", (int)n, w->rel);
	return 0;
}

static bool dir_empty(int U, const char *name)
{
	_cleanup_close_ int fd = open_beneath(U, name, O_RDONLY | O_DIRECTORY);
	_cleanup_closedir_ DIR *d = fd < 0 ? NULL : fdopendir(TAKE_FD(fd));
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			return false;
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool is_needed(const struct walk *w)
{
	char key[REL_MAX + 32];
	const char *k = key;
	snprintf(key, sizeof(key), "%zu/%s", w->layer, w->rel);
	return w->needed.n && bsearch(&k, w->needed.v, w->needed.n, sizeof(char *), cmp_str);
}

static int conflict_visit(struct walk *w, int U, int H, const char *name, const struct stat *st, cordon_error *err);

/* Before an apply with a selection or a conflict check: what each pattern
 * selects, the directories needed, and the conflicts of what is taken. */
static int plan_visit(struct walk *w, int U, int H, const char *name, const struct stat *st, cordon_error *err)
{
	struct stat hs;
	bool host = H >= 0 && fstatat(H, name, &hs, AT_SYMLINK_NOFOLLOW) == 0;
	enum sel_class c = classify(w, U, name, st, host, &hs);
	if (c == SEL_IGNORED || c == SEL_LEFT)
		return 0;
	if (c == SEL_PATH)
		return 1;
	/* A new directory is made if something below it is taken, or if it
	 * is empty: not for what is ignored alone. */
	bool newdir = S_ISDIR(st->st_mode) && !host;
	if (!newdir || dir_empty(U, name)) {
		if (note_needed(w, newdir, err) < 0)
			return -1;
	}
	if (w->conflicts)
		return conflict_visit(w, U, H, name, st, err);
	return S_ISDIR(st->st_mode) ? 1 : 0;
}

/* Each entry of upper directory U (host directory H, -1 if none). */
static int walk_dir(struct walk *w, int U, int H, int depth, visit_fn fn, cordon_error *err)
{
	if (depth > CHANGESET_MAX_DEPTH)
		return cordon_err(err, ELOOP, "deeper than %d levels", CHANGESET_MAX_DEPTH);
	int rfd = openat(U, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return cordon_err_errno(err, "open %s", w->rel);
	_cleanup_closedir_ DIR *d = fdopendir(rfd);
	if (!d) {
		close(rfd);
		return cordon_err_errno(err, "read %s", w->rel);
	}
	struct dirent *e;
	while ((errno = 0, e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		struct stat st;
		if (fstatat(U, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			return cordon_err_errno(err, "stat %s", e->d_name);
		}
		size_t saved;
		if (push_name(w, e->d_name, &saved, err) < 0)
			return -1;
		int r = fn(w, U, H, e->d_name, &st, err);
		if (r == 1 && S_ISDIR(st.st_mode)) { /* descend */
			_cleanup_close_ int sub = open_beneath(U, e->d_name, O_RDONLY | O_DIRECTORY);
			_cleanup_close_ int hsub = H < 0 ? -1 : open_beneath(H, e->d_name, O_PATH | O_DIRECTORY);
			if (sub < 0)
				return cordon_err_errno(err, "open %s", w->rel);
			r = walk_dir(w, sub, hsub, depth + 1, fn, err);
			if (r == 0 && w->rmdir_after)
				unlinkat(U, e->d_name, AT_REMOVEDIR); /* ENOTEMPTY: refused entries stay */
		}
		w->rel[saved] = '\0';
		if (r < 0)
			return -1;
	}
	if (errno)
		return cordon_err_errno(err, "read %s", w->rel);
	return w->level_end ? w->level_end(w, U, H, err) : 0;
}

static int for_each_layer(struct walk *w, visit_fn fn, cordon_error *err)
{
	for (w->layer = 0; w->layer < w->cs->nlayers; w->layer++) {
		w->rel[0] = '\0';
		_cleanup_close_ int up = changeset_layer_fd(w->cs, w->layer, "upper", err);
		if (up < 0)
			return -1;
		_cleanup_close_ int u = open_beneath(up, ".", O_RDONLY | O_DIRECTORY);
		_cleanup_close_ int h = open_root(w->cs->host[w->layer], O_PATH | O_DIRECTORY);
		if (u < 0)
			return cordon_err_errno(err, "open %s/%zu/upper", w->cs->dir, w->layer);
		if (walk_dir(w, u, h, 0, fn, err) < 0)
			return cordon_err_wrap(err, "%s", w->cs->host[w->layer]);
	}
	return 0;
}

/* ---- listing ---- */

static int list_opaque(struct walk *w, int U, int H, const char *name, cordon_error *err)
{
	/* The host entries below a directory the run replaced are deleted. */
	_cleanup_close_ int hd = H < 0 ? -1 : open_beneath(H, name, O_RDONLY | O_DIRECTORY);
	if (hd < 0)
		return 0;
	_cleanup_close_ int ud = open_beneath(U, name, O_PATH | O_DIRECTORY);
	_cleanup_closedir_ DIR *d = fdopendir(TAKE_FD(hd));
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		struct stat st;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    (ud >= 0 && fstatat(ud, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0))
			continue;
		size_t saved;
		char path[REL_MAX + 4096];
		if (push_name(w, e->d_name, &saved, err) < 0)
			return -1;
		int r = host_path(w, path, sizeof(path)) < 0 ? 0 :
			file_list_add(w->out, path, w->base, CHANGE_DELETED, false, -1, err);
		w->rel[saved] = '\0';
		if (r < 0)
			return -1;
	}
	return 0;
}

static int list_visit(struct walk *w, int U, int H, const char *name, const struct stat *st, cordon_error *err)
{
	char path[REL_MAX + 4096], why[256];
	if (host_path(w, path, sizeof(path)) < 0)
		return cordon_err(err, ENAMETOOLONG, "%s: too long", w->rel);
	struct stat hs;
	bool host = H >= 0 && fstatat(H, name, &hs, AT_SYMLINK_NOFOLLOW) == 0;
	/* Held back (named once, at the top of what is held): still a change
	 * the run made, listed below. */
	size_t hl = strlen(w->held_rel);
	bool below = hl && strncmp(w->rel, w->held_rel, hl) == 0 && w->rel[hl] == '/';
	int hd = held_dir(U, name, st, host, &hs);
	if (!below && (changeset_held_back(w->cs, w->layer, w->rel, hd, why, sizeof(why)) ||
		       always_held(w->cs, w->layer, w->rel, hd, why, sizeof(why)))) {
		snprintf(w->held_rel, sizeof(w->held_rel), "%s", w->rel);
		if (add_held(held_list(w, 1), path, NULL, err) < 0)
			return -1;
	}
	/* What the apply syncs the journal for: each directory (made, merged
	 * or replacing; its files' group), each deletion, each host directory
	 * a file replaces, and files in groups of PENDING_MAX. */
	if (is_whiteout(st) || S_ISDIR(st->st_mode) || (host && S_ISDIR(hs.st_mode)))
		w->steps++;
	else if (++w->files % 256 == 0)
		w->steps++;
	if (is_whiteout(st))
		return file_list_add(w->out, path, w->base, CHANGE_DELETED, false, -1, err);
	if (S_ISDIR(st->st_mode)) {
		_cleanup_close_ int ud = open_beneath(U, name, O_RDONLY | O_DIRECTORY);
		bool opaque = ud >= 0 && is_opaque(ud);
		if (host && S_ISDIR(hs.st_mode) && opaque && list_opaque(w, U, H, name, err) < 0)
			return -1;
		/* A new directory is not an output (its files are), as in
		 * direct mode; one that replaced a host file or link is. */
		if (host && !S_ISDIR(hs.st_mode))
			if (file_list_add(w->out, path, w->base, CHANGE_MODIFIED, false, -1, err) < 0)
				return -1;
		return 1;
	}
	if (S_ISREG(st->st_mode) || S_ISLNK(st->st_mode)) {
		int fd = S_ISREG(st->st_mode) ? open_beneath(U, name, O_RDONLY) : -1;
		return file_list_add(w->out, path, w->base, host ? CHANGE_MODIFIED : CHANGE_CREATED,
				     S_ISREG(st->st_mode), fd, err);
	}
	/* A FIFO, socket or device: refused (never applied), still a change
	 * the run made, listed without a hash as direct mode lists it. */
	if (file_list_add(w->out, path, w->base, host ? CHANGE_MODIFIED : CHANGE_CREATED, false, -1, err) < 0)
		return -1;
	return add_held(held_list(w, 0), path, special_name(st->st_mode), err) < 0 ? -1 : 0;
}

int changeset_list(const struct changeset *cs, const char *base, struct file_list *out,
		   const struct changeset_held *held, size_t *steps, cordon_error *err)
{
	_cleanup_free_ struct walk *w = calloc(1, sizeof(*w));
	if (!w)
		return cordon_err(err, ENOMEM, "out of memory");
	w->cs = cs;
	w->base = base;
	w->out = out;
	w->held = held;
	int r = for_each_layer(w, list_visit, err);
	if (steps)
		*steps = w->steps;
	/* By path, as a direct-mode snapshot lists them: the order of the
	 * upper layer's directories is the filesystem's. */
	file_list_sort(out);
	if (r < 0 && (err->code == EFBIG || err->code == ELOOP || err->code == ENAMETOOLONG)) {
		out->truncated = true;
		out->cut = err->code == EFBIG ? CUT_WALK_ENTRIES : err->code == ELOOP ? CUT_WALK_DEPTH : CUT_WALK_PATH_BYTES;
		return 0;
	}
	return r;
}

/* ---- conflicts ---- */

static int conflict_visit(struct walk *w, int U, int H, const char *name, const struct stat *st, cordon_error *err)
{
	(void)U;
	struct stat hs;
	if (H < 0 || fstatat(H, name, &hs, AT_SYMLINK_NOFOLLOW) < 0)
		return S_ISDIR(st->st_mode) ? 1 : 0;
	if (S_ISDIR(st->st_mode) && S_ISDIR(hs.st_mode))
		return 1; /* merged: its own entries say */
	if (!changed_since(w, st, true, &hs))
		return S_ISDIR(st->st_mode) ? 1 : 0;
	char path[REL_MAX + 4096];
	host_path(w, path, sizeof(path));
	if (strv_push(w->conflicts, path) < 0)
		return cordon_err(err, ENOMEM, "out of memory");
	return S_ISDIR(st->st_mode) ? 1 : 0;
}

int changeset_conflicts(const struct changeset *cs, strv *out, cordon_error *err)
{
	struct walk *w = calloc(1, sizeof(*w));
	if (!w)
		return cordon_err(err, ENOMEM, "out of memory");
	w->cs = cs;
	w->conflicts = out;
	int r = for_each_layer(w, conflict_visit, err);
	free(w);
	return r;
}

/* ---- removing a tree (cordon's own directories, or host entries being
 * rolled back): never follows a link, bounded depth ---- */

static int rm_at_in(int dfd, const char *name, int depth, int reloc, unsigned *seq);

static int rm_at(int dfd, const char *name, int depth)
{
	return rm_at_in(dfd, name, depth, -1, NULL);
}

/* rm -r of dfd/name, at most CHANGESET_MAX_DEPTH levels at a time (one
 * directory fd each); deeper, with reloc >= 0, a subtree is moved up into
 * reloc as .cordon-deep-SEQ instead, for the caller to remove in turn. */
static int rm_at_in(int dfd, const char *name, int depth, int reloc, unsigned *seq)
{
	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -1;
	if (depth > CHANGESET_MAX_DEPTH) {
		if (reloc < 0) {
			errno = ELOOP;
			return -1;
		}
		char nn[40];
		snprintf(nn, sizeof(nn), ".cordon-deep-%u", (*seq)++);
		return renameat(dfd, name, reloc, nn);
	}
	int sub = open_beneath(dfd, name, O_RDONLY | O_DIRECTORY);
	if (sub < 0 && errno == EACCES && fchmodat(dfd, name, 0700, AT_SYMLINK_NOFOLLOW) == 0)
		sub = open_beneath(dfd, name, O_RDONLY | O_DIRECTORY);
	if (sub < 0)
		return -1;
	_cleanup_closedir_ DIR *d = fdopendir(sub);
	if (!d) {
		close(sub);
		return -1;
	}
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    rm_at_in(dirfd(d), e->d_name, depth + 1, reloc, seq) < 0)
			return -1;
	return unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -1 : 0;
}

/* A layer of the change set, however deep the run made its tree: parts
 * deeper than rm_at goes are moved up into the change set's directory and
 * removed from there (bounded by the entries there are). */
static int rm_layer(struct changeset *cs, const char *name)
{
	unsigned seq = 0, done = 0;
	if (rm_at_in(cs->dirfd, name, 1, cs->dirfd, &seq) < 0)
		return -1;
	while (done < seq) {
		char nn[40];
		snprintf(nn, sizeof(nn), ".cordon-deep-%u", done++);
		if (rm_at_in(cs->dirfd, nn, 1, cs->dirfd, &seq) < 0)
			return -1;
	}
	return 0;
}

/* ---- leaving out what the default apply leaves out (the task check) ---- */

/* An entry the default ignore list names, as classify judges it (a cache;
 * .git/index where the host's changed since the run started): removed,
 * whatever it is (file, link, whiteout, directory: never followed), and
 * not entered. Anything else: its directory is entered. */
static int drop_visit(struct walk *w, int U, int H, const char *name, const struct stat *st, cordon_error *err)
{
	int kind = changeset_ignore_kind(w->rel);
	if (kind == 2) {
		struct stat hs;
		bool host = H >= 0 && fstatat(H, name, &hs, AT_SYMLINK_NOFOLLOW) == 0;
		kind = changed_since(w, st, host, &hs) ? 1 : 0;
	}
	if (kind == 0)
		return S_ISDIR(st->st_mode) ? 1 : 0;
	if (rm_at(U, name, (int)components(w->rel)) < 0) {
		/* for_each_layer prefixes the layer's host directory. */
		return cordon_err_errno(err, "%s (in the change set, left out of the apply) could not be removed", w->rel);
	}
	w->dropped++;
	return 0;
}

int changeset_drop_ignored(struct changeset *cs, size_t *dropped, cordon_error *err)
{
	struct walk *w = calloc(1, sizeof(*w));
	if (!w)
		return cordon_err(err, ENOMEM, "out of memory");
	w->cs = cs;
	int r = for_each_layer(w, drop_visit, err);
	if (dropped)
		*dropped = w->dropped;
	free(w);
	return r;
}

/* Remove DIR itself, and .cordon-changes[-UID] above it when that is
 * empty. The layers first, the control files last: a change set that
 * cannot be removed whole stays one cordon opens. */
static int remove_dir(struct changeset *cs, cordon_error *err)
{
	for (size_t i = 0; i < cs->nlayers; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%zu", i);
		if (rm_layer(cs, name) < 0)
			return cordon_err_errno(err, "remove %s/%s", cs->dir, name);
	}
	char parent[4096], *slash;
	snprintf(parent, sizeof(parent), "%s", cs->dir);
	if (!(slash = strrchr(parent, '/')) || slash == parent)
		return cordon_err(err, EINVAL, "%s: not a change set's path", cs->dir);
	*slash = '\0';
	_cleanup_close_ int p = open(parent, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat a, b;
	if (p < 0 || fstatat(p, slash + 1, &a, AT_SYMLINK_NOFOLLOW) < 0 || fstat(cs->dirfd, &b) < 0 ||
	    a.st_ino != b.st_ino || a.st_dev != b.st_dev)
		return cordon_err_errno(err, "%s: moved while in use", cs->dir);
	if (rm_at(p, slash + 1, 0) < 0)
		return cordon_err_errno(err, "remove %s", cs->dir);
	/* .cordon-changes[-UID] stays, empty: made once, it is listed and
	 * masked in every run that starts later; made anew for each run, it
	 * appeared while other runs were alive, unmasked in their view (outside
	 * review 10: a concurrent run read and altered a change set there). */
	return 0;
}

/* ---- the journal ---- */

/* A file or link of the current directory whose records are written but
 * not yet synced: its steps wait for the group's fdatasync. Only entries
 * whose undo is harmless before their step is taken are grouped: no host
 * entry (undo: remove what is not there), or a host file (undo: put back a
 * backup link that was never made, skipped). */
struct pending {
	char name[256];
	struct stat st;
	bool host;
	long long seq; /* the backup's name (host) */
};
#define PENDING_MAX 256

struct apply {
	struct changeset *cs;
	const struct changeset_apply_opts *o;
	int journal;
	int backup; /* <layer>/backup, created on first use */
	size_t layer;
	long done;
	struct walk *w;
	struct pending *q; /* PENDING_MAX */
	size_t nq;
};

/* One write per record (O_APPEND): a crash cuts at most the last. On
 * disk (fdatasync) before the step it records is taken: a machine that goes
 * down in between finds every step it must undo. Files are applied in
 * groups (struct pending): their records are written, synced once, then
 * their steps taken. */
static int journal_write(struct apply *a, char kind, long long arg, const char *rel, bool sync, cordon_error *err)
{
	char rec[REL_MAX + 96];
	int n = snprintf(rec, sizeof(rec), "%c %zu %lld %zu\n%s\n", kind, a->layer, arg, strlen(rel), rel);
	if (n < 0 || (size_t)n >= sizeof(rec) || write_all(a->journal, rec, (size_t)n) < 0 ||
	    (sync && fdatasync(a->journal) < 0))
		return cordon_err_errno(err, "write %s/journal", a->cs->dir);
	return 0;
}

static int journal(struct apply *a, char kind, long long arg, const char *rel, cordon_error *err)
{
	return journal_write(a, kind, arg, rel, true, err);
}

/* fsync of the directory dfd/name ("." for dfd itself). */
static int sync_dir(int dfd, const char *name)
{
	_cleanup_close_ int d = open_beneath(dfd, name, O_RDONLY | O_DIRECTORY);
	return d < 0 || fsync(d) < 0 ? -1 : 0;
}

/* syncfs of the filesystem of the host directory of each layer, and of the
 * change set's: what was renamed or written is on disk. */
static int sync_all(const struct changeset *cs, cordon_error *err)
{
	if (syncfs(cs->dirfd) < 0)
		return cordon_err_errno(err, "syncfs %s", cs->dir);
	for (size_t i = 0; i < cs->nlayers; i++) {
		_cleanup_close_ int h = open_root(cs->host[i], O_RDONLY | O_DIRECTORY);
		if (h >= 0 && syncfs(h) < 0)
			return cordon_err_errno(err, "syncfs %s", cs->host[i]);
	}
	return 0;
}

static int backup_dir(struct apply *a, cordon_error *err)
{
	if (a->backup >= 0)
		return a->backup;
	char name[48];
	snprintf(name, sizeof(name), "%zu/backup", a->layer);
	if (mkdirat(a->cs->dirfd, name, 0700) < 0 && errno != EEXIST)
		return cordon_err_errno(err, "create %s/%s", a->cs->dir, name);
	a->backup = open_beneath(a->cs->dirfd, name, O_PATH | O_DIRECTORY);
	if (a->backup < 0)
		return cordon_err_errno(err, "open %s/%s", a->cs->dir, name);
	/* Its entry on disk before anything is moved into it. */
	snprintf(name, sizeof(name), "%zu", a->layer);
	if (sync_dir(a->cs->dirfd, name) < 0)
		return cordon_err_errno(err, "fsync %s/%s", a->cs->dir, name);
	return a->backup;
}

/* Keep the host entry H/name in backup (journalled first): moved there
 * (it goes: a deletion or a replaced directory) or hard-linked (a file
 * about to be replaced by a rename). Another filesystem: deleted. */
static int backup(struct apply *a, int H, const char *name, bool move, cordon_error *err)
{
	int b = backup_dir(a, err);
	if (b < 0)
		return -1;
	off_t seq = lseek(a->journal, 0, SEEK_END);
	char sname[32];
	snprintf(sname, sizeof(sname), "%lld", (long long)seq);
	if (journal(a, 'B', (long long)seq, a->w->rel, err) < 0)
		return -1;
	int r = move ? renameat(H, name, b, sname) : linkat(H, name, b, sname, 0);
	if (r == 0 || errno == ENOENT)
		return 0;
	if (errno != EXDEV)
		return cordon_err_errno(err, "keep %s in the change set's backup", a->w->rel);
	/* Nowhere to keep it: the apply is not undoable past this entry. */
	if (move && rm_at(H, name, 0) < 0)
		return cordon_err_errno(err, "delete %s", a->w->rel);
	return 0;
}

/* ---- applying one entry ---- */

/* overlayfs's own attributes, file capabilities, and POSIX ACLs (an
 * entry for another user or group would grant what the mode does not). The
 * whole list is read (the kernel's bound, 64 KiB: a run can add names until
 * a smaller buffer no longer holds them). -1 if it cannot be. */
static int strip_xattrs(int fd)
{
	enum { LIST_MAX = 65536 };
	char *names = malloc(LIST_MAX);
	if (!names)
		return -1;
	ssize_t n = flistxattr(fd, names, LIST_MAX);
	if (n < 0 && (errno == ENOTSUP || errno == EOPNOTSUPP))
		n = 0;
	for (ssize_t i = 0; i < n;) {
		const char *x = names + i;
		if (strncmp(x, "user.overlay.", 13) == 0 || strncmp(x, "trusted.overlay.", 16) == 0 ||
		    strcmp(x, "security.capability") == 0 || strncmp(x, "system.posix_acl_", 17) == 0)
			if (fremovexattr(fd, x) < 0 && errno != ENODATA)
				n = -1;
		i += (ssize_t)strlen(x) + 1;
	}
	free(names);
	return n < 0 ? -1 : 0;
}

/* The mode an entry gets on the host: the run's, with no set-id bit, and
 * no group or other write that the host's entry there (hs, NULL: none) did
 * not have already: a run's `chmod 0777 .git`, applied, let any local user
 * put hooks in (outside review 9 F2). */
static mode_t applied_mode(mode_t m, const struct stat *hs)
{
	mode_t keep = S_ISDIR(m) ? 01777 : 0777;
	mode_t w = hs ? hs->st_mode & 022 : 0;
	return m & keep & ~(mode_t)(022 & ~w);
}

/* The upper inode made the invoking user's, with no set-id bit (a chown
 * clears them too), before it is renamed into the host (hs: the host's
 * entry it replaces, or NULL). */
static int own(struct apply *a, int fd, const struct stat *st, const struct stat *hs, cordon_error *err)
{
	if (geteuid() == 0 && fchown(fd, a->cs->uid, a->cs->gid) < 0)
		return cordon_err_errno(err, "chown %s", a->w->rel);
	if (strip_xattrs(fd) < 0)
		return cordon_err_errno(err, "remove the attributes of %s", a->w->rel);
	if (fchmod(fd, applied_mode(st->st_mode, hs)) < 0)
		return cordon_err_errno(err, "chmod %s", a->w->rel);
	return 0;
}

/* Upper file or symlink U/name into H/name on another filesystem: copied
 * beside the target, then renamed over it. */
static int copy_into(struct apply *a, int U, int H, const char *name, const struct stat *st, cordon_error *err)
{
	char tmp[64];
	unsigned char rnd[6];
	if (getentropy(rnd, sizeof(rnd)) < 0)
		return cordon_err_errno(err, "getentropy");
	snprintf(tmp, sizeof(tmp), ".cordon-apply-%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
		 rnd[5]);
	if (S_ISLNK(st->st_mode)) {
		char target[4096];
		ssize_t n = readlinkat(U, name, target, sizeof(target) - 1);
		if (n < 0)
			return cordon_err_errno(err, "read the link %s", a->w->rel);
		target[n] = '\0';
		if (symlinkat(target, H, tmp) < 0)
			return cordon_err_errno(err, "create the link %s", a->w->rel);
		if (geteuid() == 0 && fchownat(H, tmp, a->cs->uid, a->cs->gid, AT_SYMLINK_NOFOLLOW) < 0) {
			int e = errno;
			unlinkat(H, tmp, 0);
			return cordon_err(err, e, "chown the link %s", a->w->rel);
		}
	} else {
		_cleanup_close_ int in = open_beneath(U, name, O_RDONLY);
		struct stat is;
		if (in < 0 || fstat(in, &is) < 0 || !S_ISREG(is.st_mode))
			return cordon_err_errno(err, "open %s", a->w->rel);
		_cleanup_close_ int out = openat(H, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (out < 0)
			return cordon_err_errno(err, "create beside %s", a->w->rel);
		for (off_t left = is.st_size; left > 0;) {
			ssize_t c = copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
			if (c <= 0) {
				int e = c < 0 ? errno : EIO;
				unlinkat(H, tmp, 0);
				return cordon_err(err, e, "copy %s", a->w->rel);
			}
			left -= c;
		}
		/* On disk before it is renamed over the host's file. */
		if ((geteuid() == 0 && fchown(out, a->cs->uid, a->cs->gid) < 0) || fchmod(out, is.st_mode & 0777) < 0 ||
		    fsync(out) < 0) {
			unlinkat(H, tmp, 0);
			return cordon_err_errno(err, "chown/chmod/fsync %s", a->w->rel);
		}
	}
	if (renameat(H, tmp, H, name) < 0) {
		int e = errno;
		unlinkat(H, tmp, 0);
		return cordon_err(err, e, "rename into %s", a->w->rel);
	}
	if (unlinkat(U, name, 0) < 0 && errno != ENOENT)
		return cordon_err_errno(err, "remove %s from the change set", a->w->rel);
	return 0;
}

static void crash_hook(struct apply *a)
{
	if (a->o && a->o->crash_after > 0 && ++a->done >= a->o->crash_after)
		raise(SIGKILL); /* the test of an interrupted apply */
}

/* The steps for a file or link whose record is on disk: owner and mode on
 * the upper inode, the host's file linked into backup/seq (host), then the
 * rename (or a copy beside and a rename). */
static int apply_file_steps(struct apply *a, int U, int H, const char *name, const struct stat *st, bool host,
			    long long seq, cordon_error *err)
{
	if (S_ISREG(st->st_mode)) {
		_cleanup_close_ int fd = open_beneath(U, name, O_RDONLY);
		struct stat fs;
		if (fd < 0 || fstat(fd, &fs) < 0 || fs.st_ino != st->st_ino || !S_ISREG(fs.st_mode))
			return cordon_err_errno(err, "open %s in the change set", a->w->rel);
		struct stat hst;
		bool hok = host && fstatat(H, name, &hst, AT_SYMLINK_NOFOLLOW) == 0;
		if (own(a, fd, &fs, hok ? &hst : NULL, err) < 0)
			return -1;
	} else if (geteuid() == 0 && fchownat(U, name, a->cs->uid, a->cs->gid, AT_SYMLINK_NOFOLLOW) < 0) {
		return cordon_err_errno(err, "chown the link %s", a->w->rel);
	}
	if (host) {
		char sname[32];
		snprintf(sname, sizeof(sname), "%lld", seq);
		int b = backup_dir(a, err);
		if (b < 0)
			return -1;
		/* Another filesystem: nowhere to keep it (not undoable). */
		if (linkat(H, name, b, sname, 0) < 0 && errno != ENOENT && errno != EXDEV)
			return cordon_err_errno(err, "keep %s in the change set's backup", a->w->rel);
	}
	if (renameat(U, name, H, name) < 0) {
		if (errno != EXDEV)
			return cordon_err_errno(err, "rename %s into place", a->w->rel);
		if (copy_into(a, U, H, name, st, err) < 0)
			return -1;
	}
	crash_hook(a);
	return 0;
}

/* A file or link replacing a host directory: the directory moved to backup
 * (journalled, synced), then as any file. */
static int apply_file(struct apply *a, int U, int H, const char *name, const struct stat *st, bool host,
		      const struct stat *hs, cordon_error *err)
{
	if (host && S_ISDIR(hs->st_mode)) {
		if (backup(a, H, name, true, err) < 0)
			return -1;
		host = false;
	}
	if (journal(a, 'C', 0, a->w->rel, err) < 0)
		return -1;
	return apply_file_steps(a, U, H, name, st, host, 0, err);
}

static int apply_dir_entry(struct apply *a, int U, int H, const char *name, const struct stat *st, bool host,
			   const struct stat *hs, cordon_error *err)
{
	_cleanup_close_ int ud = open_beneath(U, name, O_RDONLY | O_DIRECTORY);
	if (ud < 0 && errno == EACCES && fchmodat(U, name, 0700, AT_SYMLINK_NOFOLLOW) == 0) /* the run's chmod 000: ours now */
		ud = open_beneath(U, name, O_RDONLY | O_DIRECTORY);
	if (ud < 0)
		return cordon_err_errno(err, "open %s in the change set", a->w->rel);
	bool opaque = is_opaque(ud);
	/* Replaced (opaque, or where the host had a file): the old entry goes
	 * to backup, then the mark goes, then the new directory is made; an
	 * apply interrupted anywhere in between completes the same way. */
	if (host && (!S_ISDIR(hs->st_mode) || opaque)) {
		if (backup(a, H, name, true, err) < 0)
			return -1;
		host = false;
	}
	if (opaque) {
		fremovexattr(ud, "user.overlay.opaque");
		fremovexattr(ud, "trusted.overlay.opaque");
	}
	if (!host) {
		if (journal(a, 'C', 0, a->w->rel, err) < 0)
			return -1;
		if (mkdirat(H, name, 0700) < 0 && errno != EEXIST)
			return cordon_err_errno(err, "create %s", a->w->rel);
	} else if ((hs->st_mode & 07777) != applied_mode(st->st_mode, hs) &&
		   journal(a, 'M', (long long)(hs->st_mode & 07777), a->w->rel, err) < 0) {
		return -1;
	}
	mode_t want = applied_mode(st->st_mode, host ? hs : NULL);
	_cleanup_close_ int hd = open_beneath(H, name, O_RDONLY | O_DIRECTORY);
	struct stat hds;
	if (hd < 0 || fstat(hd, &hds) < 0)
		return cordon_err_errno(err, "open %s on the host", a->w->rel);
	if ((!host && geteuid() == 0 && fchown(hd, a->cs->uid, a->cs->gid) < 0) ||
	    ((hds.st_mode & 07777) != want && fchmod(hd, want) < 0))
		return cordon_err_errno(err, "chown/chmod %s", a->w->rel);
	return 1;
}

static struct apply *the_apply; /* the walk's context (one apply at a time) */

/* The names in host directory H/name that upper directory U/name, opaque,
 * does not have (what its apply deletes); nothing if it is not opaque. */
static int opaque_gone(int U, int H, const char *name, strv *out)
{
	_cleanup_close_ int ud = open_beneath(U, name, O_RDONLY | O_DIRECTORY);
	_cleanup_close_ int hd = ud < 0 || !is_opaque(ud) ? -1 : open_beneath(H, name, O_RDONLY | O_DIRECTORY);
	if (hd < 0)
		return 0;
	_cleanup_closedir_ DIR *d = fdopendir(TAKE_FD(hd));
	struct dirent *e;
	struct stat st;
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && fstatat(ud, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
		    strv_push(out, e->d_name) < 0)
			return -1;
	return 0;
}

/* Said to the caller (changeset_apply_opts.applied): an entry applied. */
static void report_applied(struct walk *w, enum change c)
{
	const struct changeset_apply_opts *o = the_apply ? the_apply->o : NULL;
	char dp[REL_MAX + 4096];
	if (o && o->applied)
		o->applied(o->applied_ctx, c, display_path(w, dp, sizeof(dp)));
}

/* The group's records on disk, then its steps, as apply_file takes them.
 * cur: the entry being visited (w->rel ends with it), or NULL at the end of
 * the directory (w->rel is the directory). */
static int flush(struct walk *w, int U, int H, const char *cur, cordon_error *err)
{
	struct apply *a = the_apply;
	if (!a->nq)
		return 0;
	if (fdatasync(a->journal) < 0)
		return cordon_err_errno(err, "fsync %s/journal", a->cs->dir);
	size_t n = a->nq, len = strlen(w->rel), dir = len;
	if (cur)
		dir = len > strlen(cur) ? len - strlen(cur) - 1 : 0;
	char *tail = strdup(w->rel + dir);
	if (!tail)
		return cordon_err(err, ENOMEM, "out of memory");
	a->nq = 0;
	int r = 0;
	for (size_t i = 0; r == 0 && i < n; i++) {
		const struct pending *p = &a->q[i];
		/* w->rel names the entry in messages. */
		snprintf(w->rel + dir, sizeof(w->rel) - dir, "%s%s", dir ? "/" : "", p->name);
		r = apply_file_steps(a, U, H, p->name, &p->st, p->host, p->seq, err);
		if (r == 0)
			report_applied(w, p->host ? CHANGE_MODIFIED : CHANGE_CREATED);
	}
	snprintf(w->rel + dir, sizeof(w->rel) - dir, "%s", tail);
	free(tail);
	return r;
}

static int level_end(struct walk *w, int U, int H, cordon_error *err)
{
	return flush(w, U, H, NULL, err);
}

/* A file or link over no host entry or over a host file: its record
 * written now, its steps taken with its group's. */
static int queue_file(struct apply *a, int U, int H, const char *name, const struct stat *st, bool host,
		      cordon_error *err)
{
	if (a->nq == PENDING_MAX && flush(a->w, U, H, name, err) < 0)
		return -1;
	struct pending *p = &a->q[a->nq];
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->st = *st;
	p->host = host;
	p->seq = host ? (long long)lseek(a->journal, 0, SEEK_END) : 0;
	if (host && backup_dir(a, err) < 0)
		return -1;
	if (journal_write(a, host ? 'B' : 'C', p->seq, a->w->rel, false, err) < 0)
		return -1;
	a->nq++;
	return 0;
}

static int apply_visit(struct walk *w, int U, int H, const char *name, const struct stat *st, cordon_error *err)

{
	struct apply *a = the_apply;
	char path[REL_MAX + 4096], why[256] = "";
	host_path(w, path, sizeof(path));
	if (H < 0)
		return cordon_err(err, ENOENT, "%s: its directory is not on the host", path);
	struct stat hs;
	bool host = fstatat(H, name, &hs, AT_SYMLINK_NOFOLLOW) == 0;
	bool file = S_ISREG(st->st_mode) || S_ISLNK(st->st_mode);
	/* Anything but a file or link over no host directory: the group
	 * before it is applied first, and it is applied alone. */
	if (!(file && !(host && S_ISDIR(hs.st_mode))) && flush(w, U, H, name, err) < 0)
		return -1;
	/* Not selected, or ignored: it stays (the ignored go with the change
	 * set when nothing else is left in it). */
	enum sel_class sc = classify(w, U, name, st, host, &hs);
	if (sc == SEL_PATH && !is_needed(w))
		sc = SEL_LEFT;
	/* A new directory with nothing taken below it: all of it ignored. */
	if (sc == SEL_TAKE && w->planned && S_ISDIR(st->st_mode) && !host && !is_needed(w))
		sc = SEL_IGNORED;
	if (sc == SEL_IGNORED || sc == SEL_LEFT) {
		w->left += sc == SEL_LEFT;
		return 0;
	}
	/* Held back: the entry and all below it stay in the change set. */
	int hd = held_dir(U, name, st, host, &hs);
	if (always_held(a->cs, w->layer, w->rel, hd, why, sizeof(why)) ||
	    (!(a->o && a->o->include_protected) && changeset_held_back(a->cs, w->layer, w->rel, hd, why, sizeof(why))))
		return add_held(held_list(w, 1), path, NULL, err) < 0 ? -1 : 0;
	if (a->o && a->o->hold_conflicts && !a->o->force && changed_since(w, st, host, &hs))
		return add_held(held_list(w, 2), path, NULL, err) < 0 ? -1 : 0;
	if (is_whiteout(st)) {
		if (host && backup(a, H, name, true, err) < 0)
			return -1;
		if (unlinkat(U, name, 0) < 0 && errno != ENOENT)
			return cordon_err_errno(err, "remove %s from the change set", w->rel);
		report_applied(w, CHANGE_DELETED);
		crash_hook(a);
		return 0;
	}
	/* On the way to what is selected: entered; made where it is new. */
	if (sc == SEL_PATH && host)
		return 1;
	if (S_ISDIR(st->st_mode)) {
		/* A directory the run replaced: the host entries not in it are
		 * deleted (as changeset_list lists them). */
		strv gone = {0};
		if (host && S_ISDIR(hs.st_mode) && the_apply->o && the_apply->o->applied && opaque_gone(U, H, name, &gone) < 0) {
			strv_free(&gone);
			return cordon_err(err, ENOMEM, "out of memory");
		}
		int r = apply_dir_entry(a, U, H, name, st, host, &hs, err);
		if (r == 1 && host && !S_ISDIR(hs.st_mode))
			report_applied(w, CHANGE_MODIFIED);
		for (size_t i = 0; r == 1 && i < gone.n; i++) {
			size_t saved;
			if (push_name(w, gone.v[i], &saved, err) < 0) {
				r = -1;
				break;
			}
			report_applied(w, CHANGE_DELETED);
			w->rel[saved] = '\0';
		}
		strv_free(&gone);
		return r;
	}
	if (file && !(host && S_ISDIR(hs.st_mode)))
		return queue_file(a, U, H, name, st, host, err);
	if (file) {
		int r = apply_file(a, U, H, name, st, host, &hs, err);
		if (r == 0)
			report_applied(w, CHANGE_MODIFIED);
		return r;
	}
	return add_held(held_list(w, 0), path, special_name(st->st_mode), err) < 0 ? -1 : 0;
}

static size_t held_count(const struct changeset_held *h)
{
	return !h ? 0 : (h->refused ? h->refused->n : 0) + (h->protected ? h->protected->n : 0) +
				(h->conflicts ? h->conflicts->n : 0);
}

static int apply_in(struct changeset *cs, const struct changeset_apply_opts *o, const struct changeset_held *held,
		    struct walk *w, struct pending *q, cordon_error *err);

/* Is every layer's upper directory empty (the run changed nothing)? false
 * where one cannot be read: the apply then says why. */
static bool uppers_empty(const struct changeset *cs)
{
	for (size_t i = 0; i < cs->nlayers; i++) {
		_cleanup_close_ int up = changeset_layer_fd(cs, i, "upper", NULL);
		int u = up < 0 ? -1 : open_beneath(up, ".", O_RDONLY | O_DIRECTORY);
		if (u < 0)
			return false;
		_cleanup_closedir_ DIR *d = fdopendir(u);
		if (!d) {
			close(u);
			return false;
		}
		struct dirent *e;
		errno = 0;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				return false;
		if (errno)
			return false;
	}
	return true;
}

int changeset_apply(struct changeset *cs, const struct changeset_apply_opts *o, const struct changeset_held *held,
		    cordon_error *err)
{
	static const struct changeset_apply_opts none = {0};
	struct walk *w = calloc(1, sizeof(*w));
	struct pending *q = calloc(PENDING_MAX, sizeof(*q));
	size_t ns = o ? o->nselect : 0;
	size_t *hits = calloc(2 * ns + 1, sizeof(size_t));
	int r = 0;
	if (!w || !q || !hits) {
		r = cordon_err(err, ENOMEM, "out of memory");
	} else {
		w->sel = o ? o : &none;
		w->hits = hits;
		w->ign_hits = hits + ns;
		r = apply_in(cs, o, held, w, q, err);
		strv_free(&w->needed);
	}
	free(hits);
	free(w);
	free(q);
	return r;
}

static int apply_in(struct changeset *cs, const struct changeset_apply_opts *o, const struct changeset_held *held,
		    struct walk *w, struct pending *q, cordon_error *err)
{
	w->cs = cs;
	bool resume = changeset_interrupted(cs);
	/* Nothing changed (most runs): nothing to journal, sync or hold back;
	 * the change set goes (an apply would end the same way after four
	 * syncfs, a journal and its fsyncs). */
	if (!resume && uppers_empty(cs))
		return remove_dir(cs, err) < 0 ? -1 : 1;
	/* Backups of an earlier apply that ended with entries kept: no
	 * journal names them any more, and this one's names would meet them. */
	for (size_t i = 0; !resume && i < cs->nlayers; i++) {
		char bname[48];
		snprintf(bname, sizeof(bname), "%zu/backup", i);
		if (rm_layer(cs, bname) < 0)
			return cordon_err_errno(err, "remove %s/%s", cs->dir, bname);
	}
	bool check = !resume && !(o && (o->force || o->hold_conflicts));
	if (check || w->sel->nselect || !w->sel->no_ignore) {
		/* What is selected (each pattern something), the directories on
		 * the way, and the conflicts of what is taken (not of what is
		 * ignored or left). */
		strv c = {0};
		w->conflicts = check ? &c : NULL;
		w->planning = true;
		int r = for_each_layer(w, plan_visit, err);
		for (size_t i = 0; r == 0 && !resume && i < w->sel->nselect; i++)
			if (!w->hits[i]) {
				r = cordon_err(err, 0, "%s: %s", w->sel->select[i],
					       w->ign_hits[i] ? "only entries the ignore list leaves out (--no-ignore applies them)" :
					       "no change at or below it to apply (cordon changes DIR lists them)");
				err->code = EINVAL; /* said without strerror */
			}
		if (r == 0 && c.n)
			r = cordon_err(err, 0, "%s changed since the run started%s (--force applies anyway)", c.v[0],
				       c.n > 1 ? ", and more" : "");
		strv_free(&c);
		if (r < 0)
			return -1;
		if (w->needed.n) /* qsort of no array: v is NULL */
			qsort(w->needed.v, w->needed.n, sizeof(char *), cmp_str);
		w->planning = false;
		w->planned = true;
		w->conflicts = NULL;
		w->entries = 0;
	}
	struct apply a = {cs, o, -1, -1, 0, 0, w, NULL, 0};
	a.q = q;
	w->held = held;
	size_t held_before = held_count(held);
	/* What the run wrote is on disk before any of it is renamed into the
	 * host (a rename that outlives a crash never names a file whose data
	 * did not), and so is the journal's own entry. */
	if (!resume && sync_all(cs, err) < 0)
		return -1;
	a.journal = openat(cs->dirfd, "journal", O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	struct stat js;
	if (a.journal < 0 || fstat(a.journal, &js) < 0 || !S_ISREG(js.st_mode) || js.st_nlink != 1) {
		if (a.journal >= 0)
			close(a.journal);
		return cordon_err_errno(err, "open %s/journal", cs->dir);
	}
	if (fsync(cs->dirfd) < 0) {
		close(a.journal);
		return cordon_err_errno(err, "fsync %s", cs->dir);
	}
	the_apply = &a;
	w->rmdir_after = true;
	w->level_end = level_end;
	int r = 0;
	for (w->layer = 0; r == 0 && w->layer < cs->nlayers; w->layer++) {
		a.layer = w->layer;
		w->rel[0] = '\0';
		_cleanup_close_ int up = changeset_layer_fd(cs, w->layer, "upper", err);
		_cleanup_close_ int u = up < 0 ? -1 : open_beneath(up, ".", O_RDONLY | O_DIRECTORY);
		_cleanup_close_ int h = open_root(cs->host[w->layer], O_PATH | O_DIRECTORY);
		if (u < 0 || h < 0)
			r = cordon_err_errno(err, "open %s", u < 0 ? "the change set's upper directory" : cs->host[w->layer]);
		else if (walk_dir(w, u, h, 0, apply_visit, err) < 0)
			r = cordon_err_wrap(err, "apply to %s", cs->host[w->layer]);
		if (a.backup >= 0)
			close(a.backup);
		a.backup = -1;
	}
	the_apply = NULL;
	close(a.journal);
	/* Every step on disk before the journal that could undo it goes. */
	if (r < 0 || sync_all(cs, err) < 0)
		return -1;
	/* Done: nothing to roll back, nothing left but what was held back or
	 * not selected (what was ignored goes with the change set). */
	if (held_count(held) > held_before || w->left)
		return unlinkat(cs->dirfd, "journal", 0) < 0 ? cordon_err_errno(err, "remove %s/journal", cs->dir) : 0;
	return remove_dir(cs, err);
}

/* ---- rolling back ---- */

/* The journal is read as untrusted input: the names in it are the run's.
 * Strictly framed, one pass (linear in its size):
 *   KIND ' ' LAYER ' ' ARG ' ' LEN '\n' REL(LEN bytes) '\n'
 * KIND one of C (created), M (a directory's mode), B (kept in backup);
 * numbers plain decimal digits; REL relative, no empty, "." or ".."
 * component, no NUL. A record cut by the end of the file is the one a crash
 * interrupted (it was never acted on) and is dropped; any other deviation
 * refuses the whole journal, and nothing is undone. */

/* Decimal digits at *i up to the byte stop. 0 ok, 1 the text ends first
 * (a cut record), -1 malformed. */
static int jnum(const char *t, size_t len, size_t *i, char stop, unsigned long long max, unsigned long long *v)
{
	size_t k = *i;
	unsigned long long x = 0;
	for (; k < len && t[k] >= '0' && t[k] <= '9'; k++) {
		if (k - *i >= 20 || x > max / 10 || x * 10 + (unsigned)(t[k] - '0') > max)
			return -1; /* max <= INT64_MAX: no overflow */
		x = x * 10 + (unsigned)(t[k] - '0');
	}
	if (k == len)
		return 1;
	if (k == *i || t[k] != stop || (k - *i > 1 && t[*i] == '0'))
		return -1;
	*v = x;
	*i = k + 1;
	return 0;
}

/* rel (len bytes): relative, every component a name. */
static bool jrel_ok(const char *rel, size_t len)
{
	if (!len || memchr(rel, '\0', len))
		return false;
	for (size_t a = 0; a <= len;) {
		const char *e = memchr(rel + a, '/', len - a);
		size_t b = e ? (size_t)(e - rel) : len;
		if (b == a || (b - a == 1 && rel[a] == '.') || (b - a == 2 && rel[a] == '.' && rel[a + 1] == '.'))
			return false;
		a = b + 1;
	}
	return true;
}

void changeset_jrecs_free(struct changeset_jrec *j, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(j[i].rel);
	free(j);
}

int changeset_parse_journal(const char *t, size_t len, size_t nlayers, const char *where,
			    struct changeset_jrec **out, size_t *n, cordon_error *err)
{
	*out = NULL;
	*n = 0;
	size_t cap = 0;
	for (size_t i = 0; i < len;) {
		size_t at = i;
		unsigned long long layer = 0, arg = 0, rl = 0;
		char kind = t[i];
		int r = 0;
		if (kind != 'C' && kind != 'M' && kind != 'B')
			r = -1;
		else if (i + 1 == len)
			r = 1;
		else if (t[i + 1] != ' ')
			r = -1;
		if (!r) {
			i += 2;
			r = jnum(t, len, &i, ' ', CHANGESET_MAX_LAYERS, &layer);
		}
		if (!r)
			r = jnum(t, len, &i, ' ', kind == 'M' ? 07777 : kind == 'C' ? 0 : INT64_MAX, &arg);
		if (!r)
			r = jnum(t, len, &i, '\n', REL_MAX - 1, &rl);
		if (!r && len - i < rl + 1)
			r = 1;
		if (!r && (layer >= nlayers || t[i + rl] != '\n' || !jrel_ok(t + i, rl)))
			r = -1;
		if (r > 0)
			break; /* a record cut by the crash: it was never acted on */
		if (r < 0) {
			changeset_jrecs_free(*out, *n);
			*out = NULL;
			*n = 0;
			return cordon_err(err, EBADMSG, "%s: malformed record at offset %zu: refused, nothing rolled back",
					  where, at);
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			struct changeset_jrec *g = realloc(*out, cap * sizeof(**out));
			if (!g) {
				changeset_jrecs_free(*out, *n);
				*out = NULL;
				*n = 0;
				return cordon_err(err, ENOMEM, "out of memory");
			}
			*out = g;
		}
		struct changeset_jrec *j = &(*out)[*n];
		*j = (struct changeset_jrec){kind, (size_t)layer, (long long)arg, strndup(t + i, rl)};
		if (!j->rel) {
			changeset_jrecs_free(*out, *n);
			*out = NULL;
			*n = 0;
			return cordon_err(err, ENOMEM, "out of memory");
		}
		(*n)++;
		i += rl + 1;
	}
	return 0;
}

static int read_journal(struct changeset *cs, struct changeset_jrec **out, size_t *n, cordon_error *err)
{
	_cleanup_close_ int fd = open_beneath(cs->dirfd, "journal", O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return cordon_err_errno(err, "open %s/journal", cs->dir);
	if (!control_file_ok(&st))
		return cordon_err(err, EPERM, "%s/journal: not a regular file of yours, mode-restricted: refused, nothing rolled back",
				  cs->dir);
	if (st.st_size > (256LL << 20))
		return cordon_err(err, EFBIG, "%s/journal: larger than 256 MiB", cs->dir);
	char *text = malloc((size_t)st.st_size + 1);
	if (!text)
		return cordon_err(err, ENOMEM, "out of memory");
	size_t len = 0;
	for (ssize_t r; len < (size_t)st.st_size && (r = read(fd, text + len, (size_t)st.st_size - len)) > 0;)
		len += (size_t)r;
	text[len] = '\0';
	char where[4200];
	snprintf(where, sizeof(where), "%s/journal", cs->dir);
	int r = changeset_parse_journal(text, len, cs->nlayers, where, out, n, err);
	free(text);
	return r;
}

/* The host directory holding rel (below layer's root), and rel's name. */
static int open_parent(const struct changeset *cs, size_t layer, const char *rel, const char **name)
{
	_cleanup_close_ int h = open_root(cs->host[layer], O_PATH | O_DIRECTORY);
	const char *slash = strrchr(rel, '/');
	*name = slash ? slash + 1 : rel;
	if (h < 0 || !slash)
		return h < 0 ? -1 : TAKE_FD(h);
	char dir[REL_MAX];
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
	return open_beneath(h, dir, O_PATH | O_DIRECTORY);
}

/* A directory's mode put back: the directory itself opened beneath the
 * layer's root (never a name that could be ".."), fchmod on that fd; a
 * directory of mode 000 the owner may not read is reached by O_PATH and
 * changed through its /proc/self/fd link (the same inode). */
static int undo_mode(const struct changeset *cs, const struct changeset_jrec *j, cordon_error *err)
{
	_cleanup_close_ int h = open_root(cs->host[j->layer], O_PATH | O_DIRECTORY);
	if (h < 0)
		return errno == ENOENT ? 0 : cordon_err_errno(err, "roll back %s: open %s", j->rel, cs->host[j->layer]);
	_cleanup_close_ int d = open_beneath(h, j->rel, O_RDONLY | O_DIRECTORY);
	if (d >= 0)
		return fchmod(d, (mode_t)j->arg) < 0 ? cordon_err_errno(err, "roll back %s: its mode", j->rel) : 0;
	if (errno == ENOENT || errno == ENOTDIR)
		return 0;
	d = open_beneath(h, j->rel, O_PATH | O_DIRECTORY);
	struct stat st;
	if (d < 0 || fstat(d, &st) < 0 || !S_ISDIR(st.st_mode))
		return errno == ENOENT || errno == ENOTDIR ? 0 : cordon_err_errno(err, "roll back %s: open it", j->rel);
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", d);
	return chmod(proc, (mode_t)j->arg) < 0 ? cordon_err_errno(err, "roll back %s: its mode", j->rel) : 0;
}

static int undo(struct changeset *cs, const struct changeset_jrec *j, cordon_error *err)
{
	if (j->kind == 'M')
		return undo_mode(cs, j, err);

	const char *name;
	_cleanup_close_ int p = open_parent(cs, j->layer, j->rel, &name);
	if (p < 0)
		return errno == ENOENT ? 0 : cordon_err_errno(err, "roll back %s: open its directory", j->rel);
	if (j->kind == 'C' && rm_at(p, name, 0) < 0)
		return cordon_err_errno(err, "roll back %s: remove it", j->rel);
	if (j->kind == 'B') {
		char bname[64];
		snprintf(bname, sizeof(bname), "%zu/backup/%lld", j->layer, j->arg);
		struct stat st;
		if (fstatat(cs->dirfd, bname, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return 0; /* never taken */
		struct stat hs;
		if (S_ISDIR(st.st_mode) && fstatat(p, name, &hs, AT_SYMLINK_NOFOLLOW) == 0 && rm_at(p, name, 0) < 0)
			return cordon_err_errno(err, "roll back %s: remove the new one", j->rel);
		snprintf(bname, sizeof(bname), "%zu/backup", j->layer);
		_cleanup_close_ int bd = open_beneath(cs->dirfd, bname, O_PATH | O_DIRECTORY);
		char seq[32];
		snprintf(seq, sizeof(seq), "%lld", j->arg);
		if (bd < 0 || renameat(bd, seq, p, name) < 0)
			return cordon_err_errno(err, "roll back %s: put the original back", j->rel);
	}
	return 0;
}

int changeset_discard(struct changeset *cs, cordon_error *err)
{
	if (changeset_interrupted(cs)) {
		struct changeset_jrec *j = NULL;
		size_t n = 0;
		int r = read_journal(cs, &j, &n, err);
		for (size_t i = n; r == 0 && i-- > 0;)
			r = undo(cs, &j[i], err);
		changeset_jrecs_free(j, n);
		if (r < 0)
			return cordon_err_wrap(err, "%s: the interrupted apply could not be rolled back", cs->dir);
	}
	return remove_dir(cs, err);
}
