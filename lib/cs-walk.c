/* Walking a change set's upper directories (each layer's, beside its
 * host directory): the helpers every walk uses, selecting and ignoring
 * (changeset_apply_opts: select, no_ignore), the plan before an apply,
 * listing the changes (changeset_list), and leaving out what the default
 * apply leaves out (changeset_drop_ignored). */
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
#include "cs-walk.h"
#include "changeset.h"
#include "cleanup.h"
#include "dirstream.h"
#include "error.h"
#include "hash.h"
#include "protect.h"
#include "cs-internal.h"

/* ---- walking an upper directory ---- */

bool cs_is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == 0;
}

bool cs_is_opaque(int dfd)
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

const char *cs_special_name(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : S_ISBLK(m) ? "a block device" :
	       S_ISCHR(m) ? "a character device" : "a special file";
}

/* w->rel + "/" + name while fn runs; restored afterwards. */
int cs_push_name(struct walk *w, const char *name, size_t *saved, cordon_error *err)
{
	*saved = strlen(w->rel);
	int n = snprintf(w->rel + *saved, sizeof(w->rel) - *saved, "%s%s", *saved ? "/" : "", name);
	if (n < 0 || (size_t)n >= sizeof(w->rel) - *saved)
		return cordon_err(err, ENAMETOOLONG, "%s: a path longer than %d bytes", w->cs->host[w->layer], REL_MAX);
	if (++w->entries > CHANGESET_MAX_ENTRIES)
		return cordon_err(err, EFBIG, "more than %d entries", CHANGESET_MAX_ENTRIES);
	return 0;
}

int cs_host_path(const struct walk *w, char *out, size_t sz)
{
	const char *h = w->cs->host[w->layer];
	return snprintf(out, sz, "%s%s%s", h, strcmp(h, "/") ? "/" : "", w->rel) >= (int)sz ? -1 : 0;
}

/* A line of one of held's lists: "PATH: why", or PATH alone. */
int cs_add_held(strv *s, const char *path, const char *why, cordon_error *err)
{
	if (!s)
		return 0;
	char line[REL_MAX + 4096 + 300];
	snprintf(line, sizeof(line), "%s%s%s", path, why ? ": " : "", why ? why : "");
	if (strv_push(s, line) < 0)
		return cordon_oom(err);
	return 0;
}

strv *cs_held_list(const struct walk *w, int which)
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
	return ud >= 0 && !cs_is_opaque(ud);
}

/* What the protect matcher is told of an entry (protect.h): 0 for a file,
 * link, replacement or a deletion of something there; PROTECT_DIR_KEPT for
 * a directory merged into the host's (or a deletion of nothing);
 * PROTECT_DIR_NEW for a directory made where nothing was. */
int cs_held_dir(int U, const char *name, const struct stat *st, bool host, const struct stat *hs)
{
	if (cs_is_whiteout(st))
		return host ? 0 : PROTECT_DIR_KEPT;
	if (!plain_dir(U, name, st, host, hs))
		return 0;
	return host ? PROTECT_DIR_KEPT : PROTECT_DIR_NEW;
}

/* Does the entry (a whiteout or anything not a plain directory) act on a
 * host entry changed since the run started (ctime)? */
bool cs_changed_since(const struct walk *w, const struct stat *st, bool host, const struct stat *hs)
{
	if (!host || (S_ISDIR(st->st_mode) && S_ISDIR(hs->st_mode)))
		return false;
	int64_t ct = (int64_t)hs->st_ctim.tv_sec * 1000000000LL + hs->st_ctim.tv_nsec;
	return ct >= w->cs->started_ns; /* stamp_floor_ns */
}

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

/* The entry's path as changeset_list names it (relative to layer 0's host
 * directory if below it, else absolute). */
const char *cs_display_path(const struct walk *w, char *out, size_t sz)
{
	if (w->layer == 0)
		return w->rel;
	if (cs_host_path(w, out, sz) < 0)
		return w->rel;
	const char *b = w->cs->host[0];
	size_t bl = strlen(b);
	return path_has_prefix(out, b) && out[bl] == '/' ? out + bl + 1 : out;
}

static bool plain_dir(int U, const char *name, const struct stat *st, bool host, const struct stat *hs);

/* Taken (selected, not ignored), ignored, left (not selected), or a plain
 * directory on the way to what may be selected below it: entered, not
 * applied itself (made where it is new, if something below is selected). */
enum sel_class cs_classify(struct walk *w, int U, const char *name, const struct stat *st, bool host,
			       const struct stat *hs)
{
	const struct changeset_apply_opts *o = w->sel;
	if (!o)
		return SEL_TAKE;
	char dp[REL_MAX + 4096];
	const char *p = cs_display_path(w, dp, sizeof(dp));
	int kind = o->no_ignore ? 0 : changeset_ignore_kind(w->rel);
	/* git's index: the run's is applied where the host's has not changed
	 * since the run started; where it has (a host `git status`), the
	 * host's stays, and that is no conflict. */
	bool ign = kind == 1 || (kind == 2 && cs_changed_since(w, st, host, hs)), take = !o->nselect, way = false;
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
	if (way && !cs_is_whiteout(st) && plain_dir(U, name, st, host, hs))
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
			return cordon_oom(err);
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
			return cordon_oom(err);
	}
	w->needed_layer = w->layer;
	snprintf(w->needed_last, sizeof(w->needed_last), "%.*s", (int)n, w->rel);
	return 0;
}

static bool dir_empty(int U, const char *name)
{
	_cleanup_close_ int fd = open_beneath(U, name, O_RDONLY | O_DIRECTORY);
	_cleanup_dstream_ struct dstream *d = fd < 0 ? NULL : dstream_open(TAKE_FD(fd));
	struct dirent *e;
	while (d && (e = dstream_read(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			return false;
	return true;
}

int cs_cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

bool cs_is_needed(const struct walk *w)
{
	char key[REL_MAX + 32];
	const char *k = key;
	snprintf(key, sizeof(key), "%zu/%s", w->layer, w->rel);
	return w->needed.n && bsearch(&k, w->needed.v, w->needed.n, sizeof(char *), cs_cmp_str);
}

static int conflict_visit(struct walk *w, int U, int H, const char *name, const struct stat *st, cordon_error *err)
{
	(void)U;
	struct stat hs;
	if (H < 0 || fstatat(H, name, &hs, AT_SYMLINK_NOFOLLOW) < 0)
		return S_ISDIR(st->st_mode) ? 1 : 0;
	if (S_ISDIR(st->st_mode) && S_ISDIR(hs.st_mode))
		return 1; /* merged: its own entries say */
	if (!cs_changed_since(w, st, true, &hs))
		return S_ISDIR(st->st_mode) ? 1 : 0;
	char path[REL_MAX + 4096];
	cs_host_path(w, path, sizeof(path));
	if (strv_push(w->conflicts, path) < 0)
		return cordon_oom(err);
	return S_ISDIR(st->st_mode) ? 1 : 0;
}

/* Before an apply with a selection or a conflict check: what each pattern
 * selects, the directories needed, and the conflicts of what is taken. */
int cs_plan_visit(struct walk *w, int U, int H, const char *name, const struct stat *st, cordon_error *err)
{
	struct stat hs;
	bool host = H >= 0 && fstatat(H, name, &hs, AT_SYMLINK_NOFOLLOW) == 0;
	enum sel_class c = cs_classify(w, U, name, st, host, &hs);
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
int cs_walk_dir(struct walk *w, int U, int H, int depth, visit_fn fn, cordon_error *err)
{
	if (depth > CHANGESET_MAX_DEPTH && w->skip_deep) {
		w->deep_cut = true;
		return 0;
	}
	if (depth > CHANGESET_MAX_DEPTH)
		return cordon_err(err, ELOOP, "deeper than %d levels", CHANGESET_MAX_DEPTH);
	int rfd = openat(U, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return cordon_err_errno(err, "open %s", w->rel);
	_cleanup_dstream_ struct dstream *d = dstream_open(rfd);
	if (!d) {
		close(rfd);
		return cordon_err_errno(err, "read %s", w->rel);
	}
	struct dirent *e;
	while ((errno = 0, e = dstream_read(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		struct stat st;
		if (fstatat(U, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			return cordon_err_errno(err, "stat %s", e->d_name);
		}
		size_t saved;
		if (cs_push_name(w, e->d_name, &saved, err) < 0)
			return -1;
		int r = fn(w, U, H, e->d_name, &st, err);
		if (r == 1 && S_ISDIR(st.st_mode)) { /* descend */
			_cleanup_close_ int sub = open_beneath(U, e->d_name, O_RDONLY | O_DIRECTORY);
			_cleanup_close_ int hsub = H < 0 ? -1 : open_beneath(H, e->d_name, O_PATH | O_DIRECTORY);
			if (sub < 0)
				return cordon_err_errno(err, "open %s", w->rel);
			r = cs_walk_dir(w, sub, hsub, depth + 1, fn, err);
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

int cs_for_each_layer(struct walk *w, visit_fn fn, cordon_error *err)
{
	for (w->layer = 0; w->layer < w->cs->nlayers; w->layer++) {
		if (w->cs->upper_at[0] && w->layer != w->cs->only_layer)
			continue;
		w->rel[0] = '\0';
		_cleanup_close_ int up = changeset_layer_fd(w->cs, w->layer, "upper", err);
		if (up < 0)
			return -1;
		_cleanup_close_ int u = open_beneath(up, ".", O_RDONLY | O_DIRECTORY);
		_cleanup_close_ int h = open_root(w->cs->host[w->layer], O_PATH | O_DIRECTORY);
		if (u < 0)
			return cordon_err_errno(err, "open %s/%zu/upper", w->cs->dir, w->layer);
		if (cs_walk_dir(w, u, h, 0, fn, err) < 0)
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
	_cleanup_dstream_ struct dstream *d = dstream_open(TAKE_FD(hd));
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = dstream_read(d))) {
		struct stat st;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    (ud >= 0 && fstatat(ud, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0))
			continue;
		size_t saved;
		char path[REL_MAX + 4096];
		if (cs_push_name(w, e->d_name, &saved, err) < 0)
			return -1;
		int r = cs_host_path(w, path, sizeof(path)) < 0 ? 0 :
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
	if (cs_host_path(w, path, sizeof(path)) < 0)
		return cordon_err(err, ENAMETOOLONG, "%s: too long", w->rel);
	struct stat hs;
	bool host = H >= 0 && fstatat(H, name, &hs, AT_SYMLINK_NOFOLLOW) == 0;
	/* Held back (named once, at the top of what is held): still a change
	 * the run made, listed below. */
	size_t hl = strlen(w->held_rel);
	bool below = hl && strncmp(w->rel, w->held_rel, hl) == 0 && w->rel[hl] == '/';
	int hd = cs_held_dir(U, name, st, host, &hs);
	if (!below && (changeset_held_back(w->cs, w->layer, w->rel, hd, why, sizeof(why)) ||
		       cs_always_held(w->cs, w->layer, w->rel, hd, why, sizeof(why)))) {
		snprintf(w->held_rel, sizeof(w->held_rel), "%s", w->rel);
		if (cs_add_held(cs_held_list(w, 1), path, NULL, err) < 0)
			return -1;
	}
	/* What the apply syncs the journal for: each directory (made, merged
	 * or replacing; its files' group), each deletion, each host directory
	 * a file replaces, and files in groups of PENDING_MAX. */
	if (cs_is_whiteout(st) || S_ISDIR(st->st_mode) || (host && S_ISDIR(hs.st_mode)))
		w->steps++;
	else if (++w->files % 256 == 0)
		w->steps++;
	if (cs_is_whiteout(st))
		return file_list_add(w->out, path, w->base, CHANGE_DELETED, false, -1, err);
	if (S_ISDIR(st->st_mode)) {
		_cleanup_close_ int ud = open_beneath(U, name, O_RDONLY | O_DIRECTORY);
		bool opaque = ud >= 0 && cs_is_opaque(ud);
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
	return cs_add_held(cs_held_list(w, 0), path, cs_special_name(st->st_mode), err) < 0 ? -1 : 0;
}

int changeset_list(const struct changeset *cs, const char *base, struct file_list *out,
		   const struct changeset_held *held, size_t *steps, cordon_error *err)
{
	struct walk *w = calloc(1, sizeof(*w));
	if (!w)
		return cordon_oom(err);
	w->cs = cs;
	w->base = base;
	w->out = out;
	w->held = held;
	w->skip_deep = true;
	int r = cs_for_each_layer(w, list_visit, err);
	if (steps)
		*steps = w->steps;
	bool deep = w->deep_cut;
	free(w);
	if (r == 0 && deep) {
		out->truncated = true;
		out->cut = CUT_WALK_DEPTH;
	}
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

/* ---- leaving out what the default apply leaves out (the task check) ---- */

/* An entry the default ignore list names, as cs_classify judges it (a cache;
 * .git/index where the host's changed since the run started): removed,
 * whatever it is (file, link, whiteout, directory: never followed), and
 * not entered. Anything else: its directory is entered. */
static int drop_visit(struct walk *w, int U, int H, const char *name, const struct stat *st, cordon_error *err)
{
	int kind = changeset_ignore_kind(w->rel);
	if (kind == 2) {
		struct stat hs;
		bool host = H >= 0 && fstatat(H, name, &hs, AT_SYMLINK_NOFOLLOW) == 0;
		kind = cs_changed_since(w, st, host, &hs) ? 1 : 0;
	}
	if (kind == 0)
		return S_ISDIR(st->st_mode) ? 1 : 0;
	if (cs_rm_at(U, name, (int)components(w->rel)) < 0) {
		/* cs_for_each_layer prefixes the layer's host directory. */
		return cordon_err_errno(err, "%s (in the change set, left out of the apply) could not be removed", w->rel);
	}
	w->dropped++;
	return 0;
}

int changeset_drop_ignored(struct changeset *cs, size_t *dropped, cordon_error *err)
{
	struct walk *w = calloc(1, sizeof(*w));
	if (!w)
		return cordon_oom(err);
	w->cs = cs;
	int r = cs_for_each_layer(w, drop_visit, err);
	if (dropped)
		*dropped = w->dropped;
	free(w);
	return r;
}
