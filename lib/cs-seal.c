/* The change set's seal: the user's key directory (found, checked from /
 * with no link followed, the key made once), the registry of directories
 * of change sets beside the key, the guard that keeps a run from the key,
 * and the HMAC over a change set's control files that changeset_open
 * checks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <pthread.h>
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
#include "cs-seal.h"
#include "ident.h"
#include "changeset.h"
#include "cleanup.h"
#include "cs-io.h"
#include "error.h"
#include "hash.h"
#include "protect.h"
#include "cs-internal.h"

/* ---- the seal ---- */

#define SEAL_KEY_NAME "changeset.key"
#define SEAL_KEY_LEN 32

static int keydir_configured(char *out, size_t sz);

/* What a thread remembers here (changeset_keydir's answer, the held state
 * directory below), made at its first ask and freed when it ends. Not
 * static thread-local storage: every thread's is zeroed or copied when it
 * starts, 12 KiB (three pages to fault in) in each of a run's threads
 * that never asks (issue 34). */
struct seal_thread {
	char cfg[4096], res[4096]; /* changeset_keydir: configured, resolved */
	struct {
		bool on;
		int fd;
		dev_t dev;
		ino_t ino;
		char dir[4096];
	} held;
};
static pthread_key_t seal_key_tls;
static pthread_once_t seal_once = PTHREAD_ONCE_INIT;
static bool seal_key_ok;

static void seal_thread_free(void *p)
{
	struct seal_thread *t = p;
	if (t->held.fd >= 0)
		close(t->held.fd);
	free(t);
}

static void seal_key_make(void)
{
	seal_key_ok = pthread_key_create(&seal_key_tls, seal_thread_free) == 0;
}

/* This thread's, or NULL (no memory: nothing remembered). */
static struct seal_thread *seal_thread(void)
{
	if (pthread_once(&seal_once, seal_key_make) != 0 || !seal_key_ok)
		return NULL;
	struct seal_thread *t = pthread_getspecific(seal_key_tls);
	if (t || !(t = malloc(sizeof(*t))))
		return t;
	t->cfg[0] = t->res[0] = '\0';
	t->held.on = false;
	t->held.fd = -1;
	t->held.dir[0] = '\0';
	if (pthread_setspecific(seal_key_tls, t) != 0) {
		free(t);
		return NULL;
	}
	return t;
}

int changeset_keydir(char *out, size_t sz)
{
	/* Asked several times a run: resolved once per configured path (the
	 * place is checked, from /, with no link followed, when it is used). */
	struct seal_thread *t = seal_thread();
	char d[4096], n[4096], own[4096];
	char *cfg = t ? t->cfg : NULL, *res = t ? t->res : own;
	if (keydir_configured(d, sizeof(d)) < 0 || path_normalize(d, n, sizeof(n)) < 0)
		return -1;
	if (!t || !res[0] || strcmp(cfg, n) != 0) {
		cordon_error e = {0};
		if (path_walk(n, true, NULL, NULL, res, 4096, NULL, 0, &e) < 0) {
			res[0] = '\0';
			errno = e.code;
			return -1;
		}
		if (cfg)
			snprintf(cfg, 4096, "%s", n);
	}
	return snprintf(out, sz, "%s", res) < (int)sz ? 0 : -1;
}

static int keydir_configured(char *out, size_t sz)
{
	const char *d = secure_getenv("CORDON_STATE_DIR");
	int n;
	if (d && d[0] == '/')
		n = snprintf(out, sz, "%s", d);
	else if (ident_euid() == 0)
		n = snprintf(out, sz, "/var/lib/cordon");
	else if ((d = secure_getenv("XDG_STATE_HOME")) && d[0] == '/')
		n = snprintf(out, sz, "%s/cordon", d);
	else {
		const char *home = secure_getenv("HOME");
		struct passwd pw, *res = NULL;
		char pwbuf[4096];
		if ((!home || home[0] != '/') && getpwuid_r(ident_euid(), &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res)
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
		bool mine = st.st_uid == ident_euid(), sticky_root = (st.st_mode & S_ISVTX) && st.st_uid == 0;
		bool group_ok = !(st.st_mode & 020) || (mine && st.st_gid == ident_egid()) || sticky_root;
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
/* The directory as checked once in this run (cordon_state_dir_hold): its fd
 * and path. A run asks for it several times (the registry for the model,
 * the key, the registry again, the seccomp cache); each full check walks
 * from / again, two system calls a component. Held, each later ask costs an
 * fstat of the fd (still the user's, writable by nobody else) and an
 * openat of "." beneath it:
 * what was checked is the directory the fd names, wherever it is moved. */
void cordon_state_dir_hold(bool on)
{
	struct seal_thread *t = seal_thread();
	if (!t)
		return; /* nothing held: each ask checks from / */
	if (t->held.fd >= 0)
		close(t->held.fd);
	t->held.fd = -1;
	t->held.dir[0] = '\0';
	t->held.on = on;
}

/* The held fd again (a dup), if held for dir and still as checked; -1. */
static int held_again(const char *dir)
{
	struct stat st;
	struct seal_thread *t = seal_thread();
	if (!t)
		return -1;
	if (t->held.fd < 0 || strcmp(t->held.dir, dir) != 0)
		return -1;
	if (fstat(t->held.fd, &st) < 0 || st.st_dev != t->held.dev || st.st_ino != t->held.ino || st.st_uid != ident_euid() ||
	    (st.st_mode & 022)) {
		cordon_state_dir_hold(t->held.on);
		return -1;
	}
	/* A new open file description of it, not a dup: a flock taken on
	 * the fd returned (cs_registry_add) ends when the caller closes it,
	 * not when the run lets the held one go. */
	return openat(t->held.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void hold_fd(int d, const char *dir)
{
	struct stat st;
	struct seal_thread *t = seal_thread();
	if (!t)
		return;
	if (!t->held.on || t->held.fd >= 0 || fstat(d, &st) < 0 || strlen(dir) >= sizeof(t->held.dir))
		return;
	t->held.fd = openat(d, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* its own file description, as above */
	t->held.dev = st.st_dev;
	t->held.ino = st.st_ino;
	snprintf(t->held.dir, sizeof(t->held.dir), "%s", dir);
}

static int open_keydir(bool create, char dir[4096], cordon_error *err)
{
	char cfg[4096];
	if (keydir_configured(cfg, sizeof(cfg)) < 0)
		return cordon_err(err, ENOENT, "no directory for the change-set key (set HOME, XDG_STATE_HOME or CORDON_STATE_DIR)");
	if (changeset_keydir(dir, 4096) < 0)
		return cordon_err_errno(err, "the change-set key's directory %s cannot be reached", cfg);
	int h = held_again(dir);
	if (h >= 0)
		return h;
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
	if (st.st_uid != ident_euid() || (st.st_mode & 022)) {
		close(d);
		return cordon_err(err, EPERM, "%s: owner uid %u or mode %03o: not the change-set key's directory", dir,
				  (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
	}
	if (secure_path(dir, d, err) < 0) {
		close(d);
		return -1;
	}
	hold_fd(d, dir);
	return d;
}

int cordon_state_dir_open(bool create, cordon_error *err)
{
	char dir[4096];
	return open_keydir(create, dir, err);
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
			int ok = t >= 0 && getentropy(k, sizeof(k)) == 0 && cs_write_all(t, k, sizeof(k)) == 0 &&
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
		if (!S_ISREG(st.st_mode) || st.st_uid != ident_euid() || (st.st_mode & 077) || st.st_nlink != 1 ||
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
	if (fd < 0 || fstat(fd, &st) < 0 || !cs_control_file_ok(&st) || st.st_size > REGISTRY_BYTES)
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

/* Add top (canonical) to the list. A run in a new place adds one (a
 * harness's task directory made for each run: every run), so an add looks
 * at REGISTRY_CHECK of the entries, not all of them (up to REGISTRY_MAX
 * lstats): the least recently looked at, at the head. One gone (ENOENT,
 * ENOTDIR, or no directory there) is dropped; one still there goes to the
 * end, as one added now (the list turns over: each is looked at again after
 * about n / REGISTRY_CHECK adds); one that cannot be looked at stays where
 * it is. Past REGISTRY_MAX the head goes. Under the key directory's lock;
 * written beside and renamed. Best effort: a set not listed is still
 * masked at the top of a path. */
#define REGISTRY_CHECK 16
void cs_registry_add(const char *top)
{
	char dir[4096];
	cordon_error e = {0};
	_cleanup_close_ int d = open_keydir(true, dir, &e);
	if (d < 0 || flock(d, LOCK_EX) < 0)
		return;
	strv old = {0}, again = {0};
	buf b = {0};
	if (registry_read(d, &old) < 0 || strv_contains(&old, top)) {
		/* Listed already (the directory is made again after each run
		 * that left it empty): nothing to write. */
		strv_free(&old);
		return;
	}
	size_t live = 0, looked = old.n < REGISTRY_CHECK ? old.n : REGISTRY_CHECK;
	for (size_t i = 0; i < old.n; i++) {
		char *p = old.v[i];
		if (i < looked) {
			struct stat st;
			int r = lstat(p, &st);
			if (r < 0 ? (errno == ENOENT || errno == ENOTDIR) : !S_ISDIR(st.st_mode)) {
				free(p); /* gone */
				continue;
			}
			if (r == 0 && strv_push(&again, p) == 0) {
				free(p); /* there: to the end */
				continue;
			}
		}
		old.v[live++] = p;
	}
	old.n = live;
	for (size_t i = 0; i < again.n; i++)
		if (strv_push(&old, again.v[i]) < 0)
			goto out;
	for (size_t i = old.n + 1 > REGISTRY_MAX ? old.n + 1 - REGISTRY_MAX : 0; i < old.n; i++)
		if (buf_append(&b, old.v[i], strlen(old.v[i]) + 1) < 0)
			goto out;
	if (buf_append(&b, top, strlen(top) + 1) < 0)
		goto out;
	char tmp[64];
	snprintf(tmp, sizeof(tmp), REGISTRY_NAME ".%d", (int)getpid());
	(void)unlinkat(d, tmp, 0);
	int t = openat(d, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	bool ok = t >= 0 && cs_write_all(t, b.p, b.len) == 0;
	if (t >= 0)
		close(t);
	if (!ok || renameat(d, tmp, d, REGISTRY_NAME) < 0)
		(void)unlinkat(d, tmp, 0);
out:
	buf_free(&b);
	strv_free(&old);
	strv_free(&again);
}

int changeset_registered(strv *out, cordon_error *err)
{
	char dir[4096];
	_cleanup_close_ int d = open_keydir(false, dir, err);
	if (d < 0)
		return err->code == ENOENT ? 0 : -1;
	return registry_read(d, out) < 0 ? cordon_oom(err) : 0;
}

static int note_link(void *ctx, const char *link, const char *dir, cordon_error *err)
{
	(void)dir;
	return strv_push(ctx, link) < 0 ? cordon_oom(err) : 0;
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

/* HMAC-SHA-256, under the user's key, of what says where an apply writes
 * and what it holds back: the change set's own path (a set moved, or its
 * control files copied elsewhere, is no longer cordon's), its meta, each
 * layer's host directory and the protected names. Everything else in it
 * (the upper layers) is the run's, hostile and treated so. */
/* name: the seal's file; "pending" (changeset_derive) seals a set waiting
 * for its session's end, under another input than "seal": one renamed to
 * the other does not match. */
static int seal_compute(const struct changeset *cs, const char *name, const unsigned char key[SEAL_KEY_LEN],
			char hex[65], cordon_error *err)
{
	char path[4096];
	if (cs_dirfd_path(cs->dirfd, path, sizeof(path)) < 0)
		return cordon_err_errno(err, "%s: its path", cs->dir);
	buf b = {0};
	const char *kind = strcmp(name, "seal") == 0 ? "" : " pending";
	int bad = buf_printf(&b, "cordon-changes seal 1%s\n%s", kind, path) < 0 || buf_append(&b, "", 1) < 0 ||
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
		return cordon_oom(err);
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

int cs_seal_key_load(unsigned char key[32], cordon_error *err)
{
	_Static_assert(SEAL_KEY_LEN == 32, "struct changeset holds a 32-byte key");
	return seal_key(key, true, err);
}

int cs_write_seal(const struct changeset *cs, cordon_error *err)
{
	return cs_write_seal_as(cs, "seal", err);
}

int cs_write_seal_as(const struct changeset *cs, const char *name, cordon_error *err)
{
	unsigned char key[SEAL_KEY_LEN];
	char hex[65];
	if (cs->key_held)
		memcpy(key, cs->key, sizeof(key));
	else if (seal_key(key, true, err) < 0)
		return -1;
	int r = seal_compute(cs, strcmp(name, "seal.new") == 0 ? "seal" : name, key, hex, err);
	explicit_bzero(key, sizeof(key));
	return r < 0 ? -1 : cs_write_file_at(cs->dirfd, name, hex, 64, err);
}

/* A change set that a run could have written (in a workspace it could
 * write directly, say) names any host directory it likes: only one this
 * user's cordon sealed, where it made it, is opened. */
int cs_check_seal(const struct changeset *cs, cordon_error *err)
{
	return cs_check_seal_as(cs, "seal", err);
}

int cs_check_seal_as(const struct changeset *cs, const char *name, cordon_error *err)
{
	char want[65] = {0}, got[80] = {0};
	unsigned char key[SEAL_KEY_LEN];
	ssize_t n = cs_read_file_at(cs->dirfd, name, got, sizeof(got));
	if (n < 0 && strcmp(name, "seal") == 0 && faccessat(cs->dirfd, "pending", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return cordon_err(err, EBUSY, "%s: made from a snapshot of a stacked fork, it is sealed when that session ends (its workspace directory is whole from then on): list or apply it after",
				  cs->dir);
	if (n < 0 && strcmp(name, "seal") == 0 && faccessat(cs->dirfd, "orphaned", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return cordon_err(err, EBUSY, "%s: made from a snapshot of a stacked fork whose workspace directory could not be made whole at its end: never sealed, it cannot be listed or applied (its host tree does not hold the fork's start); remove it",
				  cs->dir);
	if (n < 0)
		return cordon_err(err, EPERM, "%s: no seal: not a change set your cordon made (or an older cordon's)",
				  cs->dir);
	if (seal_key(key, false, err) < 0)
		return -1;
	int r = seal_compute(cs, name, key, want, err);
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
