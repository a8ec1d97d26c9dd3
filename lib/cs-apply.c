/* Applying a change set to the host (changeset_apply): the journal, each
 * record on disk before its step; the backups; one entry applied (owner,
 * mode, rename or copy); files in synced groups. The walk itself is
 * cs-walk.c's; the undo is cs-rollback.c's.
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
#include "cs-apply.h"
#include "changeset.h"
#include "cleanup.h"
#include "dirstream.h"
#include "cs-io.h"
#include "cs-walk.h"
#include "error.h"
#include "hash.h"
#include "protect.h"
#include "cs-internal.h"

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
	if (n < 0 || (size_t)n >= sizeof(rec) || cs_write_all(a->journal, rec, (size_t)n) < 0 ||
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
	if (move && cs_rm_at(H, name, 0) < 0)
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
	bool opaque = cs_is_opaque(ud);
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
	_cleanup_close_ int hd = ud < 0 || !cs_is_opaque(ud) ? -1 : open_beneath(H, name, O_RDONLY | O_DIRECTORY);
	if (hd < 0)
		return 0;
	_cleanup_dstream_ struct dstream *d = dstream_open(TAKE_FD(hd));
	struct dirent *e;
	struct stat st;
	while (d && (e = dstream_read(d)))
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
		o->applied(o->applied_ctx, c, cs_display_path(w, dp, sizeof(dp)));
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
		return cordon_oom(err);
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
	cs_host_path(w, path, sizeof(path));
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
	enum sel_class sc = cs_classify(w, U, name, st, host, &hs);
	if (sc == SEL_PATH && !cs_is_needed(w))
		sc = SEL_LEFT;
	/* A new directory with nothing taken below it: all of it ignored. */
	if (sc == SEL_TAKE && w->planned && S_ISDIR(st->st_mode) && !host && !cs_is_needed(w))
		sc = SEL_IGNORED;
	if (sc == SEL_IGNORED || sc == SEL_LEFT) {
		w->left += sc == SEL_LEFT;
		return 0;
	}
	/* Held back: the entry and all below it stay in the change set. */
	int hd = cs_held_dir(U, name, st, host, &hs);
	if (cs_always_held(a->cs, w->layer, w->rel, hd, why, sizeof(why)) ||
	    (!(a->o && a->o->include_protected) && changeset_held_back(a->cs, w->layer, w->rel, hd, why, sizeof(why))))
		return cs_add_held(cs_held_list(w, 1), path, NULL, err) < 0 ? -1 : 0;
	if (a->o && a->o->hold_conflicts && !a->o->force && cs_changed_since(w, st, host, &hs))
		return cs_add_held(cs_held_list(w, 2), path, NULL, err) < 0 ? -1 : 0;
	if (cs_is_whiteout(st)) {
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
			return cordon_oom(err);
		}
		int r = apply_dir_entry(a, U, H, name, st, host, &hs, err);
		if (r == 1 && host && !S_ISDIR(hs.st_mode))
			report_applied(w, CHANGE_MODIFIED);
		for (size_t i = 0; r == 1 && i < gone.n; i++) {
			size_t saved;
			if (cs_push_name(w, gone.v[i], &saved, err) < 0) {
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
	return cs_add_held(cs_held_list(w, 0), path, cs_special_name(st->st_mode), err) < 0 ? -1 : 0;
}

static size_t held_count(const struct changeset_held *h)
{
	return !h ? 0 : (h->refused ? h->refused->n : 0) + (h->protected ? h->protected->n : 0) +
				(h->conflicts ? h->conflicts->n : 0);
}

static int apply_in(struct changeset *cs, const struct changeset_apply_opts *o, const struct changeset_held *held,
		    struct walk *w, struct pending *q, cordon_error *err);

/* Is every layer's upper directory empty (the run changed nothing)? One
 * open and a read or two each: most runs change nothing, and this is on
 * every overlay run's way out. false where one cannot be read: the apply
 * then says why. */
static bool uppers_empty(const struct changeset *cs)
{
	for (size_t i = 0; i < cs->nlayers; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%zu/upper", i);
		int u = open_beneath(cs->dirfd, name, O_RDONLY | O_DIRECTORY);
		if (u < 0)
			return false;
		_cleanup_dstream_ struct dstream *d = dstream_open(u);
		if (!d) {
			close(u);
			return false;
		}
		struct dirent *e;
		errno = 0;
		while ((e = dstream_read(d)))
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				return false;
		if (errno)
			return false;
	}
	return true;
}

bool changeset_unchanged(const struct changeset *cs)
{
	return !changeset_interrupted(cs) && uppers_empty(cs);
}

int changeset_apply(struct changeset *cs, const struct changeset_apply_opts *o, const struct changeset_held *held,
		    cordon_error *err)
{
	static const struct changeset_apply_opts none = {0};
	/* Nothing changed (most runs): nothing to journal, sync or hold back,
	 * nor anything to allocate; the change set goes (an apply would end
	 * the same way after four syncfs, a journal and its fsyncs). */
	if (changeset_unchanged(cs))
		return cs_remove_dir(cs, err) < 0 ? -1 : 1;
	struct walk *w = calloc(1, sizeof(*w));
	struct pending *q = calloc(PENDING_MAX, sizeof(*q));
	size_t ns = o ? o->nselect : 0;
	size_t *hits = calloc(2 * ns + 1, sizeof(size_t));
	int r = 0;
	if (!w || !q || !hits) {
		r = cordon_oom(err);
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
	/* Backups of an earlier apply that ended with entries kept: no
	 * journal names them any more, and this one's names would meet them. */
	for (size_t i = 0; !resume && i < cs->nlayers; i++) {
		char bname[48];
		snprintf(bname, sizeof(bname), "%zu/backup", i);
		if (cs_rm_layer(cs, bname) < 0)
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
		int r = cs_for_each_layer(w, cs_plan_visit, err);
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
			qsort(w->needed.v, w->needed.n, sizeof(char *), cs_cmp_str);
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
		else if (cs_walk_dir(w, u, h, 0, apply_visit, err) < 0)
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
	 * not selected (what was ignored goes with the change set). The
	 * journal goes first, its removal on disk, before anything of the set
	 * goes: a crash while the layers and their backups are removed would
	 * leave a journal that a later discard replays, undoing the completed
	 * apply in part (the created files removed, the replaced ones kept new:
	 * their backups gone; outside review attack15). */
	if (unlinkat(cs->dirfd, "journal", 0) < 0)
		return cordon_err_errno(err, "remove %s/journal", cs->dir);
	if (held_count(held) > held_before || w->left)
		return 0;
	if (fsync(cs->dirfd) < 0)
		return cordon_err_errno(err, "fsync %s", cs->dir);
	if (o && o->crash_after < 0)
		raise(SIGKILL); /* the test of a crash while the set is removed */
	return cs_remove_dir(cs, err);
}
