/* Snapshots of a session's workspace (session-snap.h). The copy is taken
 * in the worker, its processes frozen by the session's freezer (the same
 * as a pause's, session-cg.c) for the time of the copy and thawed after it
 * unless the session was paused already: a consistent point of the
 * workspace, at the cost of what it changed (only the upper layer is
 * copied). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "session-snap.h"
#include "changeset.h"
#include "cleanup.h"
#include "error.h"
#include "session-cg.h"
#include "session-util.h"
#include "snapshot.h"
#include "units.h"
#include "upper-copy.h"

/* How long a snapshot waits for the kernel to say every process is frozen
 * (a loaded host's v1 freezer can take its time); past it, 503. */
#define SNAP_FREEZE_WAIT_MS 10000

static uint64_t budget(const struct sx *s)
{
	return s->pol && s->pol->snapshots_max ? s->pol->snapshots_max : SX_SNAP_BUDGET_DEFAULT;
}

static uint64_t max_entries(void)
{
	const char *e = getenv("CORDON_SNAPSHOT_MAX_ENTRIES");
	char *end = NULL;
	unsigned long long v = e && *e ? strtoull(e, &end, 10) : 0;
	return v > 0 && end && !*end && v < SX_SNAP_MAX_ENTRIES ? v : SX_SNAP_MAX_ENTRIES;
}

/* The session's snapshots directory, made (0700) if missing; opened. */
static int snap_dir(struct sx *s, bool make, cordon_error *err)
{
	if (!s->snap_dir[0])
		return cordon_err(err, ENOENT, "the session has no state directory");
	if (make && mkdir(s->snap_dir, 0700) < 0 && errno != EEXIST)
		return cordon_err_errno(err, "%s", s->snap_dir);
	int fd = open(s->snap_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return cordon_err_errno(err, "%s", s->snap_dir);
	return fd;
}

static void not_covered(const struct sx *s, jwriter *w);

/* A snapshot's JSON; with s (its answer), what it does not cover too. */
static void snap_json(const struct sx_snap *p, jwriter *w, const struct sx *s)
{
	char t[32];
	struct tm tm;
	time_t sec = (time_t)p->created;
	gmtime_r(&sec, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%SZ", &tm);
	jw_obj_begin(w);
	jw_key(w, "snapshot");
	jw_str(w, p->id);
	jw_key(w, "bytes");
	jw_uint(w, p->bytes);
	jw_key(w, "files");
	jw_uint(w, p->files);
	jw_key(w, "entries");
	jw_uint(w, p->entries);
	jw_key(w, "created");
	jw_str(w, t);
	if (s)
		not_covered(s, w);
	jw_obj_end(w);
}

static void reply_writer(int reply, jwriter *w)
{
	if (jw_finish(w) == 0)
		sx_reply_json(reply, w->out.p);
	else
		sx_reply_error(reply, 500, "out of memory");
	buf_free(&w->out);
}

/* Frozen for the copy: *froze when this call froze it (to be thawed).
 * Without a freezer only a session where nothing runs can be copied. */
static int freeze_for_copy(struct sx *s, bool *froze, int *code, cordon_error *err)
{
	*froze = false;
	if (s->paused)
		return 0;
	if (!sxcg_can_freeze()) {
		bool busy = false;
		for (size_t i = 0; i < s->nex; i++)
			busy |= s->ex[i].running;
		for (size_t i = 0; i < sizeof(s->files) / sizeof(s->files[0]); i++)
			busy |= s->files[i].used;
		if (!busy)
			return 0;
		*code = 409;
		return cordon_err(err, EBUSY, "the session has no freezer cgroup on this host: a snapshot is taken only while nothing runs in it");
	}
	bool reached = false;
	if (sxcg_freeze(true, SNAP_FREEZE_WAIT_MS, &reached, err) < 0 || !reached) {
		sxcg_thaw();
		*code = 503;
		if (!reached && !err->msg[0])
			cordon_err(err, EAGAIN, "the session's processes did not freeze within %d s: try again",
				   SNAP_FREEZE_WAIT_MS / 1000);
		return -1;
	}
	*froze = true;
	return 0;
}

/* The other writable paths of the session (each a layer of its change
 * set besides the workspace's: --rw, filesystem.write): not in a
 * snapshot, listed in its answer ("not_covered"). */
static void not_covered(const struct sx *s, jwriter *w)
{
	jw_key(w, "not_covered");
	jw_arr_begin(w);
	for (unsigned i = 0; i < 256; i++) {
		char p[4200], up[4200], host[4097];
		snprintf(p, sizeof(p), "%s/%u/host", s->rep->live_changes, i);
		snprintf(up, sizeof(up), "%s/%u/upper", s->rep->live_changes, i);
		int fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			break;
		ssize_t n = read(fd, host, sizeof(host) - 1);
		close(fd);
		if (n > 0 && strcmp(up, s->rep->live_upper) != 0) {
			host[n] = '\0';
			jw_str(w, host);
		}
	}
	jw_arr_end(w);
}

uint64_t sx_snap_budget(const struct sx *s)
{
	return budget(s);
}

int sx_workspace_layer(const struct sx *s)
{
	if (!s->rep || !s->rep->live_upper[0] || !s->rep->live_changes[0])
		return -1;
	for (unsigned i = 0; i < 256; i++) {
		char up[4200];
		snprintf(up, sizeof(up), "%s/%u/upper", s->rep->live_changes, i);
		if (strcmp(up, s->rep->live_upper) == 0)
			return (int)i;
	}
	return -1;
}

void sx_do_snapshot(struct sx *s, int reply)
{
	if (!s->rep || !s->rep->live_upper[0]) {
		sx_reply_error(reply, 409, "the session's workspace has no change set to snapshot: its workspace mode is direct (overlay and review keep one)");
		return;
	}
	uint64_t max = budget(s), emax = max_entries(), eused = 0;
	/* Empty files, directories and links weigh nothing in the byte
	 * budget: the entries of all the session's snapshots are bounded too
	 * (by the bound of one), else its 64 snapshots hold 64 times that
	 * many inodes of the state directory's filesystem. */
	for (size_t i = 0; i < s->nsnaps; i++)
		eused += s->snaps[i].entries;
	if (eused >= emax && s->nsnaps < SX_SNAPS_MAX) {
		sx_reply_error(reply, 429, "the session's snapshots hold %llu entries of their bound of %llu: DELETE one first",
			       (unsigned long long)eused, (unsigned long long)emax);
		return;
	}
	if (s->snap_bytes >= max || s->nsnaps >= SX_SNAPS_MAX) {
		if (s->nsnaps >= SX_SNAPS_MAX)
			sx_reply_error(reply, 429, "the session has its maximum of %d snapshots: DELETE one first", SX_SNAPS_MAX);
		else
			sx_reply_error(reply, 429, "the session's snapshots take %llu bytes of their budget of %llu (limits.snapshots): DELETE one first",
				       (unsigned long long)s->snap_bytes, (unsigned long long)max);
		return;
	}
	cordon_error e = {0};
	_cleanup_close_ int dir = snap_dir(s, true, &e);
	if (dir < 0) {
		sx_reply_error(reply, 500, "snapshot: %s", e.msg);
		return;
	}
	_cleanup_close_ int up = open_root(s->rep->live_upper, O_RDONLY | O_DIRECTORY);
	if (up < 0) {
		sx_reply_error(reply, 500, "snapshot: the workspace's upper layer: %s", strerror(errno));
		return;
	}
	int code = 500;
	bool froze = false;
	if (freeze_for_copy(s, &froze, &code, &e) < 0) {
		sx_reply_error(reply, code, "snapshot: %s", e.msg);
		return;
	}
	struct sx_snap *p = &s->snaps[s->nsnaps];
	memset(p, 0, sizeof(*p));
	sx_new_id(p->id, sizeof(p->id), "p-");
	struct ucopy_limits lim = {emax, max - s->snap_bytes, SX_SNAP_MAX_DEPTH};
	struct ucopy_stat st;
	int rc = upper_copy(up, dir, p->id, &lim, &st, &e);
	if (froze)
		sxcg_freeze(false, 0, &(bool){false}, &(cordon_error){0});
	if (rc < 0) {
		if (e.code == UCOPY_OVER_BUDGET)
			sx_reply_error(reply, 429, "the snapshot would take the session's snapshots past their budget of %llu bytes (limits.snapshots; %llu used): %s",
				       (unsigned long long)max, (unsigned long long)s->snap_bytes, e.msg);
		else if (e.code == UCOPY_OVER_BOUND)
			sx_reply_error(reply, 413, "the workspace's changes are too large to snapshot: %s", e.msg);
		else
			sx_reply_error(reply, 500, "snapshot: %s", e.msg);
		return;
	}
	if (st.entries > emax - eused) {
		upper_remove(dir, p->id, SX_SNAP_MAX_DEPTH + 1, &(cordon_error){0});
		sx_reply_error(reply, 429, "the snapshot (%llu entries) would take the session's snapshots past their bound of %llu entries (%llu held): DELETE one first",
			       (unsigned long long)st.entries, (unsigned long long)emax, (unsigned long long)eused);
		return;
	}
	p->bytes = st.bytes;
	p->files = st.files;
	p->entries = st.entries;
	p->created = (uint64_t)time(NULL);
	s->snap_bytes += p->bytes;
	s->nsnaps++;
	jwriter w = {0};
	snap_json(p, &w, s);
	reply_writer(reply, &w);
}

void sx_do_snapshots(struct sx *s, int reply)
{
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "snapshots");
	jw_arr_begin(&w);
	for (size_t i = 0; i < s->nsnaps; i++)
		snap_json(&s->snaps[i], &w, NULL);
	jw_arr_end(&w);
	jw_key(&w, "bytes");
	jw_uint(&w, s->snap_bytes);
	jw_key(&w, "budget");
	jw_uint(&w, budget(s));
	jw_obj_end(&w);
	reply_writer(reply, &w);
}

void sx_do_snapshot_delete(struct sx *s, const jnode *req, int reply)
{
	const jnode *id = json_get(req, "snapshot");
	size_t i = 0;
	while (id && id->str && i < s->nsnaps && strcmp(s->snaps[i].id, id->str) != 0)
		i++;
	if (!id || !id->str || i == s->nsnaps) {
		sx_reply_error(reply, 404, "no such snapshot in this session");
		return;
	}
	cordon_error e = {0};
	_cleanup_close_ int dir = snap_dir(s, false, &e);
	/* A fork's copy of it (serve-fork.c, LOCK_SH on the snapshot's own
	 * directory) is whole first; a copy of another one is not waited
	 * for. */
	_cleanup_close_ int one = dir < 0 ? -1 : openat(dir, s->snaps[i].id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (one >= 0)
		flock(one, LOCK_EX);
	if (dir < 0 || upper_remove(dir, s->snaps[i].id, SX_SNAP_MAX_DEPTH + 1, &e) < 0) {
		sx_reply_error(reply, 500, "snapshot %s: %s", s->snaps[i].id, e.msg);
		return;
	}
	char j[96];
	snprintf(j, sizeof(j), "{\"deleted\":\"%s\"}", s->snaps[i].id);
	s->snap_bytes -= s->snaps[i].bytes;
	memmove(&s->snaps[i], &s->snaps[i + 1], (s->nsnaps - i - 1) * sizeof(s->snaps[0]));
	s->nsnaps--;
	sx_reply_json(reply, j);
}

void sx_do_snapshot_changeset(struct sx *s, const jnode *req, int reply)
{
	const jnode *id = json_get(req, "snapshot");
	size_t i = 0;
	while (id && id->str && i < s->nsnaps && strcmp(s->snaps[i].id, id->str) != 0)
		i++;
	int layer = sx_workspace_layer(s);
	if (!id || !id->str || i == s->nsnaps) {
		sx_reply_error(reply, 404, "no such snapshot in this session");
		return;
	}
	if (layer < 0) {
		sx_reply_error(reply, 409, "the session's workspace has no change set: its workspace mode is direct (overlay and review keep one)");
		return;
	}
	uint64_t max = budget(s), emax = max_entries();
	if (s->cs_bytes >= max) {
		sx_reply_error(reply, 429, "the change sets made from the session's snapshots take %llu bytes of their budget of %llu (limits.snapshots)",
			       (unsigned long long)s->cs_bytes, (unsigned long long)max);
		return;
	}
	/* Empty files, directories and links weigh nothing in bytes: their
	 * entries are bounded in all too, as the snapshots' are, else one
	 * snapshot of many empty files (or none) made into change sets
	 * without end held as many inodes of the workspace's filesystem. */
	if (s->cs_entries >= emax) {
		sx_reply_error(reply, 429, "the change sets made from the session's snapshots hold %llu entries of their bound of %llu",
			       (unsigned long long)s->cs_entries, (unsigned long long)emax);
		return;
	}
	cordon_error e = {0};
	_cleanup_close_ int dir = snap_dir(s, false, &e);
	_cleanup_close_ int up = dir >= 0 ? open_beneath(dir, s->snaps[i].id, O_RDONLY | O_DIRECTORY) : -1;
	if (up < 0) {
		sx_reply_error(reply, 500, "snapshot %s: %s", s->snaps[i].id, e.msg[0] ? e.msg : strerror(errno));
		return;
	}
	struct changeset src, cs;
	if (changeset_open(&src, s->rep->live_changes, &e) < 0) {
		changeset_close(&src);
		sx_reply_error(reply, 500, "the session's change set: %s", e.msg);
		return;
	}
	/* The snapshot's directory was written from the run's upper layer:
	 * read as hostile (upper_copy), bounded as a snapshot is. */
	struct ucopy_limits lim = {emax - s->cs_entries, max - s->cs_bytes, SX_SNAP_MAX_DEPTH};
	struct ucopy_stat st;
	/* A stacked fork's: sealed at its end (its workspace directory
	 * holds its start from then on: sup-finish.c, stack_whole). */
	int rc = changeset_derive(&cs, &src, (size_t)layer, up, s->layers.n > 0, &lim, &st, &e);
	if (rc < 0) {
		changeset_close(&src);
		if (e.code == UCOPY_OVER_BUDGET)
			sx_reply_error(reply, 429, "the change set would take those made from the session's snapshots past their budget of %llu bytes (limits.snapshots; %llu used): %s",
				       (unsigned long long)max, (unsigned long long)s->cs_bytes, e.msg);
		else if (e.code == UCOPY_OVER_BOUND && s->cs_entries)
			sx_reply_error(reply, 429, "the change set would take those made from the session's snapshots past their bound of %llu entries (%llu held): %s",
				       (unsigned long long)emax, (unsigned long long)s->cs_entries, e.msg);
		else
			sx_reply_error(reply, e.code == UCOPY_OVER_BOUND ? 413 : 500, "the snapshot's change set: %s", e.msg);
		return;
	}
	s->cs_bytes += st.bytes;
	s->cs_entries += st.entries + 3 + 4 * cs.nlayers;
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "dir");
	jw_str(&w, cs.dir);
	jw_key(&w, "snapshot");
	jw_str(&w, s->snaps[i].id);
	jw_key(&w, "hosts");
	jw_arr_begin(&w);
	for (size_t k = 0; k < cs.nlayers; k++)
		jw_str(&w, cs.host[k]);
	jw_arr_end(&w);
	jw_key(&w, "bytes");
	jw_uint(&w, st.bytes);
	jw_key(&w, "files");
	jw_uint(&w, st.files);
	jw_key(&w, "entries");
	jw_uint(&w, st.entries);
	jw_obj_end(&w);
	changeset_close(&cs);
	changeset_close(&src);
	reply_writer(reply, &w);
}

void sx_snaps_end(struct sx *s)
{
	if (!s->snap_dir[0])
		return;
	char parent[4096];
	snprintf(parent, sizeof(parent), "%s", s->snap_dir);
	char *slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		return;
	*slash = '\0';
	int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return;
	/* A fork's copy of one of them (serve-fork.c, LOCK_SH on that
	 * snapshot's directory) is whole first: each held LOCK_EX until all
	 * are removed (a fork that opened one before then finds it gone). */
	int held[SX_SNAPS_MAX];
	size_t nheld = 0;
	int sd = open(s->snap_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	for (size_t i = 0; sd >= 0 && i < s->nsnaps && nheld < SX_SNAPS_MAX; i++) {
		int one = openat(sd, s->snaps[i].id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (one >= 0 && flock(one, LOCK_EX) == 0)
			held[nheld++] = one;
		else if (one >= 0)
			close(one);
	}
	upper_remove(pfd, slash + 1, SX_SNAP_MAX_DEPTH + 2, &(cordon_error){0});
	for (size_t i = 0; i < nheld; i++)
		close(held[i]);
	if (sd >= 0)
		close(sd);
	close(pfd);
	s->nsnaps = 0;
	s->snap_bytes = 0;
}
