/* A run's change set on disk: its directory and control files (create,
 * open, close, the names of the directories of change sets, what is held
 * back), and removing it. The pieces: cs-seal.c (the key and the seal),
 * cs-walk.c (walking the upper layers: select, ignore, list), cs-apply.c
 * (the journalled apply), cs-rollback.c (discard: the journal undone).
 * See changeset.h for the layout. */
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
#include "clock.h"
#include "cs-internal.h"
#include "cs-io.h"
#include "cs-seal.h"
#include "error.h"
#include "hash.h"
#include "protect.h"
#include "upper-copy.h"

#define META_MAGIC "cordon-changes 1"
#define PROTECT_MAX (64 * 1024) /* the protect file's bound */


void changeset_close(struct changeset *cs)
{
	if (cs->dirfd >= 0)
		close(cs->dirfd);
	cs->dirfd = -1;
	for (size_t i = 0; i < cs->nlayers; i++)
		free(cs->host[i]);
	cs->nlayers = 0;
	strv_free(&cs->protect);
	explicit_bzero(cs->key, sizeof(cs->key));
	cs->key_held = false;
}

/* The names, each ended by a NUL (a name may hold any other byte). */
static int write_protect(const struct changeset *cs, cordon_error *err)
{
	buf b = {0};
	for (size_t i = 0; i < cs->protect.n; i++)
		if (buf_append(&b, cs->protect.v[i], strlen(cs->protect.v[i]) + 1) < 0) {
			buf_free(&b);
			return cordon_oom(err);
		}
	if (b.len > PROTECT_MAX) {
		buf_free(&b);
		return cordon_err(err, E2BIG, "the protected names take more than %d bytes", PROTECT_MAX);
	}
	int r = cs_write_file_at(cs->dirfd, "protect", b.p ? b.p : "", b.len, err);
	buf_free(&b);
	return r;
}

static int write_meta_as(const struct changeset *cs, const char *name, cordon_error *err);
static int write_meta(const struct changeset *cs, cordon_error *err)
{
	return write_meta_as(cs, "meta", err);
}

static int write_meta_as(const struct changeset *cs, const char *name, cordon_error *err)
{
	char meta[256];
	int n = snprintf(meta, sizeof(meta), META_MAGIC "\nstarted %" PRId64 "\nowner %u %u\nrun %u %u\nlayers %zu\n",
			 cs->started_ns, (unsigned)cs->uid, (unsigned)cs->gid, (unsigned)cs->run_uid,
			 (unsigned)cs->run_gid, cs->nlayers);
	return cs_write_file_at(cs->dirfd, name, meta, (size_t)n, err);
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
	if (l < 0 || cs_write_file_at(l, "host", cs->host[i], strlen(cs->host[i]), err) < 0)
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


static int make_dir(struct changeset *cs, int b, const char *base, uid_t run_uid, uid_t uid, cordon_error *err);

static int create_at(struct changeset *cs, const char *base, const char *const *hosts, size_t n, uid_t uid,
		     gid_t gid, uid_t run_uid, gid_t run_gid, const strv *protect, int64_t started, const char *seal,
		     cordon_error *err);

int changeset_create(struct changeset *cs, const char *base, const char *const *hosts, size_t n, uid_t uid,
		     gid_t gid, uid_t run_uid, gid_t run_gid, const strv *protect, cordon_error *err)
{
	return create_at(cs, base, hosts, n, uid, gid, run_uid, run_gid, protect, 0, "seal", err);
}

int changeset_derive(struct changeset *cs, const struct changeset *src, size_t layer, int upper, bool pending,
		     const struct ucopy_limits *lim, struct ucopy_stat *st, cordon_error *err)
{
	memset(cs, 0, sizeof(*cs));
	cs->dirfd = -1;
	if (layer >= src->nlayers)
		return cordon_err(err, EINVAL, "%s: no layer %zu", src->dir, layer);
	/* src->dir is BASE/CHANGESET_DIRNAME[-UID]/ID. */
	char base[4096];
	snprintf(base, sizeof(base), "%s", src->dir);
	for (int k = 0; k < 2; k++) {
		char *slash = strrchr(base, '/');
		if (!slash)
			return cordon_err(err, EINVAL, "%s: not a change set's path", src->dir);
		slash[slash == base ? 1 : 0] = '\0';
	}
	if (create_at(cs, base, (const char *const *)src->host, src->nlayers, src->uid, src->gid, src->run_uid,
		      src->run_gid, &src->protect, src->started_ns, pending ? "pending" : "seal", err) < 0) {
		if (cs->dirfd >= 0)
			cs_remove_dir(cs, &(cordon_error){0});
		changeset_close(cs);
		return -1;
	}
	/* The layer's empty upper/ replaced by the copy, the run's as the
	 * rest of the set's upper directories are (changeset_open checks). */
	char name[32];
	snprintf(name, sizeof(name), "%zu", layer);
	_cleanup_close_ int l = open_beneath(cs->dirfd, name, O_RDONLY | O_DIRECTORY);
	int rc = -1;
	if (l < 0)
		cordon_err_errno(err, "open %s/%s", cs->dir, name);
	else if (unlinkat(l, "upper", AT_REMOVEDIR) < 0)
		cordon_err_errno(err, "%s/%s/upper", cs->dir, name);
	else if (upper_copy(upper, l, "upper", lim, st, err) < 0)
		;
	else if (geteuid() == 0 && fchownat(l, "upper", cs->run_uid, cs->run_gid, AT_SYMLINK_NOFOLLOW) < 0)
		cordon_err_errno(err, "hand %s/%s/upper to the run's uid", cs->dir, name);
	else
		rc = 0;
	if (rc < 0) {
		cordon_error keep = *err;
		cs_remove_dir(cs, &(cordon_error){0});
		changeset_close(cs);
		*err = keep;
		return -1;
	}
	return 0;
}

static int write_start(struct changeset *cs, const char *seal, cordon_error *err);

/* started: the run's start (0: changeset_begin stamps it); seal: the name
 * its seal is written as ("pending": changeset_derive's, which no open
 * takes until changeset_restart; never a "seal" on the way). */
static int create_at(struct changeset *cs, const char *base, const char *const *hosts, size_t n, uid_t uid,
		     gid_t gid, uid_t run_uid, gid_t run_gid, const strv *protect, int64_t started, const char *seal,
		     cordon_error *err)
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
	cs->made_ns = stamp_now_ns();
	cs->started_ns = started; /* 0: changeset_begin stamps it */
	cs->uid = uid;
	cs->gid = gid;
	cs->run_uid = run_uid;
	cs->run_gid = run_gid;
	for (size_t i = 0; i < n; i++, cs->nlayers++)
		if (!(cs->host[i] = strdup(hosts[i])))
			return cordon_oom(err);
	for (size_t i = 0; protect && i < protect->n; i++)
		if (strv_push(&cs->protect, protect->v[i]) < 0)
			return cordon_oom(err);
	if (write_protect(cs, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (create_layer(cs, i, run_uid, run_gid, err) < 0)
			return -1;
	/* The key now (no key: no change set, the run falls back before it
	 * starts); meta and seal at changeset_begin. */
	if (cs_seal_key_load(cs->key, err) < 0) {
		cs->no_key = true;
		return -1;
	}
	cs->key_held = true;
	/* A derived set's start is its source's: sealed now. */
	return started ? write_start(cs, seal, err) : 0;
}

/* Meta and seal, with the start stamp set; the key let go either way. */
static int write_start(struct changeset *cs, const char *seal, cordon_error *err)
{
	int r = write_meta(cs, err) < 0 || cs_write_seal_as(cs, seal, err) < 0 ? -1 : 0;
	explicit_bzero(cs->key, sizeof(cs->key));
	cs->key_held = false;
	return r;
}

int changeset_begin(struct changeset *cs, cordon_error *err)
{
	cs->started_ns = stamp_floor_after_ns(cs->made_ns);
	return write_start(cs, "seal", err);
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
	if (cs_dirfd_path(top, top_path, sizeof(top_path)) == 0)
		cs_registry_add(top_path);
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
		return cordon_oom(err);
	int r = read_protect_in(cs, text, err);
	free(text);
	return r;
}

static int read_protect_in(struct changeset *cs, char *text, cordon_error *err)
{
	ssize_t n = cs_read_file_at(cs->dirfd, "protect", text, PROTECT_MAX + 1);
	if (n < 0 && errno == ENOENT) {
		for (size_t i = 0; protect_defaults[i]; i++)
			if (strv_push(&cs->protect, protect_defaults[i]) < 0)
				return cordon_oom(err);
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
			return cordon_oom(err);
	}
	return 0;
}

static int open_as(struct changeset *cs, const char *dir, const char *seal, cordon_error *err);

int changeset_open(struct changeset *cs, const char *dir, cordon_error *err)
{
	return open_as(cs, dir, "seal", err);
}

static int open_as(struct changeset *cs, const char *dir, const char *seal, cordon_error *err)
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
	if (cs_dirfd_path(cs->dirfd, cs->dir, sizeof(cs->dir)) < 0)
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
	if (cs_read_file_at(cs->dirfd, "meta", meta, sizeof(meta)) < 0)
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
		ssize_t len = cs_read_file_at(cs->dirfd, name, host, sizeof(host));
		if (len <= 0 || host[0] != '/' || strlen(host) != (size_t)len)
			return cordon_err(err, EINVAL, "%s/%s: not a host path", dir, name);
		if (!(cs->host[i] = strdup(host)))
			return cordon_oom(err);
	}
	if (read_protect(cs, err) < 0)
		return -1;
	return cs_check_seal_as(cs, seal, err);
}

int changeset_layer_fd(const struct changeset *cs, size_t i, const char *which, cordon_error *err)
{
	char name[48];
	if (cs->upper_at[0] && i == cs->only_layer && strcmp(which, "upper") == 0) {
		int fd = open_root(cs->upper_at, O_PATH | O_DIRECTORY);
		if (fd < 0)
			return cordon_err_errno(err, "open %s", cs->upper_at);
		return fd;
	}
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

/* One set's start moved: a new meta and seal written beside the old ones,
 * then each renamed over its own (a crash between the two renames leaves
 * a set whose seal no longer matches: refused, never misread). */
static int restart_one(struct changeset *cs, int64_t started, cordon_error *err)
{
	int64_t was = cs->started_ns;
	cs->started_ns = started;
	(void)unlinkat(cs->dirfd, "meta.new", 0);
	(void)unlinkat(cs->dirfd, "seal.new", 0);
	int rc = 0;
	if (write_meta_as(cs, "meta.new", err) < 0 || cs_write_seal_as(cs, "seal.new", err) < 0)
		rc = -1;
	else if (renameat(cs->dirfd, "meta.new", cs->dirfd, "meta") < 0 ||
		 renameat(cs->dirfd, "seal.new", cs->dirfd, "seal") < 0)
		rc = cordon_err_errno(err, "%s: its new start", cs->dir);
	if (rc < 0) {
		(void)unlinkat(cs->dirfd, "meta.new", 0);
		(void)unlinkat(cs->dirfd, "seal.new", 0);
		cs->started_ns = was;
	}
	return rc;
}

static bool same_hosts(const struct changeset *a, const struct changeset *b)
{
	if (a->nlayers != b->nlayers)
		return false;
	for (size_t i = 0; i < a->nlayers; i++)
		if (strcmp(a->host[i], b->host[i]) != 0)
			return false;
	return true;
}

static int each_pending(struct changeset *cs, int64_t was, int64_t started, cordon_error *err);

int changeset_restart(struct changeset *cs, int64_t started, cordon_error *err)
{
	int64_t was = cs->started_ns;
	if (restart_one(cs, started, err) < 0)
		return -1;
	return each_pending(cs, was, started, err);
}

int changeset_orphan(struct changeset *cs, cordon_error *err)
{
	return each_pending(cs, cs->started_ns, 0, err);
}

/* Each set derived from cs pending (beside it, with its hosts and its
 * start was): sealed with the start started, or (0) orphaned. */
static int each_pending(struct changeset *cs, int64_t was, int64_t started, cordon_error *err)
{
	/* The sets derived from it that wait for this (changeset_derive,
	 * pending: beside it, with its hosts and start, sealed under the name
	 * "pending"): sealed now. No other set is touched. */
	char parent[4096];
	snprintf(parent, sizeof(parent), "%s", cs->dir);
	char *slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		return 0;
	*slash = '\0';
	const char *own = slash + 1;
	_cleanup_closedir_ DIR *d = opendir(parent);
	struct dirent *e;
	int n = 0, rc = 0;
	while (d && (e = readdir(d)) && n++ < 4096) {
		if (e->d_name[0] == '.' || strcmp(e->d_name, own) == 0 || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
			continue;
		char path[4400];
		snprintf(path, sizeof(path), "%s/%s", parent, e->d_name);
		struct changeset o;
		cordon_error oe = {0};
		if (open_as(&o, path, "pending", &oe) == 0 && o.started_ns == was && same_hosts(&o, cs)) {
			if (started == 0) {
				/* (changeset_orphan: never to be sealed) */
				if (renameat(o.dirfd, "pending", o.dirfd, "orphaned") < 0 && rc == 0)
					rc = cordon_err_errno(err, "%s: orphaned", o.dir);
			} else if (restart_one(&o, started, &oe) == 0) {
				(void)unlinkat(o.dirfd, "pending", 0);
			} else if (rc == 0) {
				*err = oe;
				rc = -1;
			}
		}
		changeset_close(&o);
	}
	return rc;
}

/* Held back by every apply, --include-protected too: a directory of change
 * sets (anyone's) at any depth, and the directory of the change-set key
 * (and, above it, anything but a plain directory: a link there would move
 * it). */
bool cs_always_held(const struct changeset *cs, size_t layer, const char *rel, int dir, char *why, size_t whysz)
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

/* ---- removing a tree (cordon's own directories, or host entries being
 * rolled back): never follows a link, bounded depth ---- */

static int rm_at_in(int dfd, const char *name, int depth, int reloc, unsigned *seq);

int cs_rm_at(int dfd, const char *name, int depth)
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
 * deeper than cs_rm_at goes are moved up into the change set's directory and
 * removed from there (bounded by the entries there are). */
int cs_rm_layer(struct changeset *cs, const char *name)
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

/* A layer as a run that changed nothing leaves it (overlayfs's work/work
 * the only thing made in it), removed by name; anything else there fails
 * one of the calls (ENOTEMPTY, ENOTDIR: rmdir follows no last link) and
 * cs_rm_layer's walk removes what is left. The layer and its work/ are
 * opened beneath, never through a link or a mount: a concurrent run of the
 * same user that reaches the set (one that started before
 * .cordon-changes was made: no mask covers it) may have put a link at 0
 * or 0/work, and a removal by the path "0/work/work" or "0/host" followed
 * it out of the set (outside review attack15). */
static int rm_layer_fast(struct changeset *cs, size_t i)
{
	char p[32];
	snprintf(p, sizeof(p), "%zu", i);
	_cleanup_close_ int l = open_beneath(cs->dirfd, p, O_PATH | O_DIRECTORY);
	if (l < 0 || (unlinkat(l, "upper", AT_REMOVEDIR) < 0 && errno != ENOENT))
		return -1;
	_cleanup_close_ int w = open_beneath(l, "work", O_PATH | O_DIRECTORY);
	if (w < 0 && errno != ENOENT)
		return -1;
	if (w >= 0 && unlinkat(w, "work", AT_REMOVEDIR) < 0 && errno != ENOENT)
		return -1;
	if ((unlinkat(l, "work", AT_REMOVEDIR) < 0 && errno != ENOENT) ||
	    (unlinkat(l, "host", 0) < 0 && errno != ENOENT))
		return -1;
	return unlinkat(cs->dirfd, p, AT_REMOVEDIR);
}

/* The control files, then the set's directory (p: its parent): -1 when
 * anything else is in it (cs_rm_at's walk then). */
static int rm_top_fast(struct changeset *cs, int p, const char *name)
{
	static const char *const files[] = {"meta", "protect", "seal"};
	for (size_t k = 0; k < ARRAY_SIZE(files); k++)
		if (unlinkat(cs->dirfd, files[k], 0) < 0 && errno != ENOENT)
			return -1;
	return unlinkat(p, name, AT_REMOVEDIR);
}

/* Remove DIR itself (.cordon-changes[-UID] above it stays). The layers
 * first, the control files last: a change set that cannot be removed whole
 * stays one cordon opens. */
int cs_remove_dir(struct changeset *cs, cordon_error *err)
{
	for (size_t i = 0; i < cs->nlayers; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%zu", i);
		if (rm_layer_fast(cs, i) < 0 && cs_rm_layer(cs, name) < 0)
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
	if (rm_top_fast(cs, p, slash + 1) < 0 && cs_rm_at(p, slash + 1, 0) < 0)
		return cordon_err_errno(err, "remove %s", cs->dir);
	/* .cordon-changes[-UID] stays, empty: made once, it is listed and
	 * masked in every run that starts later; made anew for each run, it
	 * appeared while other runs were alive, unmasked in their view (outside
	 * review 10: a concurrent run read and altered a change set there). */
	return 0;
}
