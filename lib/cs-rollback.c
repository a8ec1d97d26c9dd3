/* Rolling back an interrupted apply (changeset_discard): the journal read
 * as untrusted input (changeset_parse_journal), each step undone, newest
 * first, then the change set removed. */
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
#include "cs-rollback.h"
#include "changeset.h"
#include "cleanup.h"
#include "cs-io.h"
#include "error.h"
#include "hash.h"
#include "protect.h"
#include "cs-internal.h"

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
				return cordon_oom(err);
			}
			*out = g;
		}
		struct changeset_jrec *j = &(*out)[*n];
		*j = (struct changeset_jrec){kind, (size_t)layer, (long long)arg, strndup(t + i, rl)};
		if (!j->rel) {
			changeset_jrecs_free(*out, *n);
			*out = NULL;
			*n = 0;
			return cordon_oom(err);
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
	if (!cs_control_file_ok(&st))
		return cordon_err(err, EPERM, "%s/journal: not a regular file of yours, mode-restricted: refused, nothing rolled back",
				  cs->dir);
	if (st.st_size > (256LL << 20))
		return cordon_err(err, EFBIG, "%s/journal: larger than 256 MiB", cs->dir);
	char *text = malloc((size_t)st.st_size + 1);
	if (!text)
		return cordon_oom(err);
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
	if (j->kind == 'C' && cs_rm_at(p, name, 0) < 0)
		return cordon_err_errno(err, "roll back %s: remove it", j->rel);
	if (j->kind == 'B') {
		char bname[64];
		snprintf(bname, sizeof(bname), "%zu/backup/%lld", j->layer, j->arg);
		struct stat st;
		if (fstatat(cs->dirfd, bname, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return 0; /* never taken */
		struct stat hs;
		if (S_ISDIR(st.st_mode) && fstatat(p, name, &hs, AT_SYMLINK_NOFOLLOW) == 0 && cs_rm_at(p, name, 0) < 0)
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
	return cs_remove_dir(cs, err);
}
