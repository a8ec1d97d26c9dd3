/* The state directory: ROOT/ID/ holds state.json (written to a temporary
 * name and renamed: a reader sees the old or the new file, never half of
 * one), the supervisor's socket and the report. The directory's existence is
 * the id's: mkdir is the exclusive claim. Verbs that change a container hold
 * an flock on the directory. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "oci-state.h"
#include "cleanup.h"
#include "error.h"
#include "oci-safedir.h"
#include "oci-config.h"
#include "oci-cgroup.h"
#include "oci-common.h"

const char *const oci_status_names[] = {"creating", "created", "running", "stopped", "paused"};

bool oci_id_valid(const char *id)
{
	size_t n = strlen(id);
	/* not ROOT's own entries: "reports", and nothing hidden (temporary names) */
	if (n == 0 || n > 200 || id[0] == '.' || strcmp(id, "reports") == 0)
		return false;
	for (const char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr("._-+", *p)))
			return false;
	return true;
}

int oci_state_mkdir(const char *root, const char *id, int *dirfd, cordon_error *err)
{
	if (!oci_id_valid(id))
		return cordon_err(err, 0, "invalid container id \"%s\" (letters, digits and ._-+, not first a dot, not \"reports\", at most 200)", id);
	_cleanup_close_ int rfd = -1;
	if (oci_safe_dir_open(root, true, 0700, &rfd, err) < 0)
		return -1;
	if (mkdirat(rfd, id, 0700) < 0) {
		if (errno == EEXIST)
			return cordon_err(err, 0, "container \"%s\" already exists", id);
		return cordon_err_errno(err, "%s/%s", root, id);
	}
	*dirfd = openat(rfd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (*dirfd < 0)
		return cordon_err_errno(err, "%s/%s", root, id);
	return 0;
}

int oci_state_open(const char *root, const char *id, int *dirfd, cordon_error *err)
{
	if (!oci_id_valid(id))
		return cordon_err(err, 0, "invalid container id \"%s\"", id);
	_cleanup_close_ int rfd = -1;
	if (oci_safe_dir_open(root, false, 0, &rfd, err) < 0)
		return -1;
	*dirfd = rfd < 0 ? -1 : openat(rfd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (*dirfd < 0) {
		if (rfd < 0 || errno == ENOENT) {
			cordon_err(err, 0, "container \"%s\" does not exist", id);
			err->code = ENOENT;
			return -1;
		}
		return cordon_err_errno(err, "%s/%s", root, id);
	}
	return 0;
}

int oci_state_lock(int dirfd, cordon_error *err)
{
	while (flock(dirfd, LOCK_EX) < 0)
		if (errno != EINTR)
			return cordon_err_errno(err, "locking the state directory");
	return 0;
}

static const char *sget(const jnode *o, const char *k)
{
	const jnode *n = json_get(o, k);
	return n && n->type == J_STR ? n->str : "";
}

static int64_t iget(const jnode *o, const char *k)
{
	const jnode *n = json_get(o, k);
	return n && n->type == J_NUM ? (int64_t)n->num : 0;
}

int oci_state_read(int dirfd, struct oci_state *s, cordon_error *err)
{
	memset(s, 0, sizeof(*s));
	int fd = openat(dirfd, "state.json", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return cordon_err_errno(err, "state.json");
	char text[1 << 16];
	ssize_t n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return cordon_err_errno(err, "state.json");
	jnode *j = json_parse(text, (size_t)n, err);
	if (!j)
		return cordon_err_wrap(err, "state.json");
	snprintf(s->id, sizeof(s->id), "%s", sget(j, "id"));
	snprintf(s->bundle, sizeof(s->bundle), "%s", sget(j, "bundle"));
	snprintf(s->created, sizeof(s->created), "%s", sget(j, "created"));
	snprintf(s->cgroup, sizeof(s->cgroup), "%s", sget(j, "cgroup"));
	snprintf(s->report, sizeof(s->report), "%s", sget(j, "report"));
	s->pid = (pid_t)iget(j, "pid");
	s->start_time = (uint64_t)iget(j, "start_time");
	s->sup = (pid_t)iget(j, "supervisor");
	s->sup_start = (uint64_t)iget(j, "supervisor_start");
	s->slot = (int)iget(j, "slot");
	const jnode *b = json_get(j, "started");
	s->started = b && b->type == J_BOOL && b->b;
	const jnode *a = json_get(j, "annotations");
	for (size_t i = 0; a && a->type == J_OBJ && i < a->n; i++)
		if (a->items[i]->type == J_STR) {
			strv_push(&s->ann_k, a->keys[i]);
			strv_push(&s->ann_v, a->items[i]->str);
		}
	json_free(j);
	return 0;
}

/* "annotations": the config's, as an object (state.json and the spec's
 * state alike). */
static void write_annotations(jwriter *w, const struct oci_state *s)
{
	jw_key(w, "annotations");
	jw_obj_begin(w);
	for (size_t i = 0; i < s->ann_k.n; i++) {
		jw_key(w, s->ann_k.v[i]);
		jw_str(w, s->ann_v.v[i]);
	}
	jw_obj_end(w);
}

int oci_state_write(int dirfd, const struct oci_state *s, cordon_error *err)
{
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "id");
	jw_str(&w, s->id);
	jw_key(&w, "bundle");
	jw_str(&w, s->bundle);
	jw_key(&w, "created");
	jw_str(&w, s->created);
	jw_key(&w, "pid");
	jw_int(&w, s->pid);
	jw_key(&w, "start_time");
	jw_uint(&w, s->start_time);
	jw_key(&w, "supervisor");
	jw_int(&w, s->sup);
	jw_key(&w, "supervisor_start");
	jw_uint(&w, s->sup_start);
	jw_key(&w, "slot");
	jw_int(&w, s->slot);
	jw_key(&w, "started");
	jw_bool(&w, s->started);
	jw_key(&w, "cgroup");
	jw_str(&w, s->cgroup);
	jw_key(&w, "report");
	jw_str(&w, s->report);
	write_annotations(&w, s);
	jw_obj_end(&w);
	if (jw_finish(&w) < 0)
		return cordon_oom(err);
	int fd = openat(dirfd, "state.json.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		buf_free(&w.out);
		return cordon_err_errno(err, "state.json");
	}
	ssize_t n = write(fd, w.out.p, w.out.len);
	int e = errno;
	close(fd);
	bool ok = n == (ssize_t)w.out.len;
	buf_free(&w.out);
	if (!ok || renameat(dirfd, "state.json.tmp", dirfd, "state.json") < 0)
		return cordon_err(err, ok ? errno : e, "writing state.json");
	return 0;
}

void oci_state_free(struct oci_state *s)
{
	strv_free(&s->ann_k);
	strv_free(&s->ann_v);
	strv_free(&s->poststop);
}

uint64_t oci_proc_start(pid_t pid)
{
	char p[64], text[2048];
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	char *s = strrchr(text, ')');
	if (!s)
		return 0;
	/* after ") ": state(3) ... starttime(22) */
	char st = s[2];
	if (st == 'Z' || st == 'X')
		return 0;
	s += 2;
	for (int f = 3; f < 22 && s; f++) {
		s = strchr(s, ' ');
		if (s)
			s++;
	}
	return s ? strtoull(s, NULL, 10) : 0;
}

bool oci_proc_same(pid_t pid, uint64_t start)
{
	return pid > 0 && start && oci_proc_start(pid) == start;
}

int oci_pidfd_same(pid_t pid, uint64_t start)
{
	if (pid <= 0)
		return -1;
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return -1;
	if (!oci_proc_same(pid, start)) {
		close(fd);
		return -1;
	}
	return fd;
}

enum oci_status oci_state_status(int dirfd, const struct oci_state *s)
{
	if (s->pid <= 0)
		return OCI_CREATING;
	if (!oci_proc_same(s->pid, s->start_time))
		return OCI_STOPPED;
	if (!s->started)
		return OCI_CREATED;
	if (s->cgroup[0] && oci_cgroup_frozen(s->cgroup))
		return OCI_PAUSED;
	return OCI_RUNNING;
}

int oci_state_json(const struct oci_state *s, enum oci_status st, buf *out)
{
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "ociVersion");
	jw_str(&w, OCI_VERSION);
	jw_key(&w, "id");
	jw_str(&w, s->id);
	jw_key(&w, "status");
	jw_str(&w, oci_status_names[st]);
	jw_key(&w, "pid");
	jw_int(&w, st == OCI_STOPPED ? 0 : s->pid);
	jw_key(&w, "bundle");
	jw_str(&w, s->bundle);
	jw_key(&w, "rootfs");
	char rootfs[4200];
	snprintf(rootfs, sizeof(rootfs), "%s/rootfs", s->bundle);
	jw_str(&w, rootfs);
	jw_key(&w, "created");
	jw_str(&w, s->created);
	write_annotations(&w, s);
	jw_obj_end(&w);
	if (jw_finish(&w) < 0)
		return -1;
	*out = w.out;
	return 0;
}

static int rm_tree_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		DIR *d = fdopendir(fd);
		if (!d) {
			close(fd);
			return -1;
		}
		struct dirent *e;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				rm_tree_at(dirfd(d), e->d_name);
		closedir(d);
		return unlinkat(dfd, name, AT_REMOVEDIR);
	}
	return unlinkat(dfd, name, 0);
}

int oci_state_remove(const char *root, const char *id, cordon_error *err)
{
	int fd = -1;
	if (oci_safe_dir_open(root, false, 0, &fd, err) < 0)
		return -1;
	if (fd < 0)
		return 0;
	int r = rm_tree_at(fd, id);
	int e = errno;
	close(fd);
	if (r < 0 && e != ENOENT)
		return cordon_err(err, e, "removing %s/%s", root, id);
	return 0;
}

void oci_now(char *out, size_t outsz)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	char b[32];
	strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, outsz, "%s.%09ldZ", b, ts.tv_nsec);
}
