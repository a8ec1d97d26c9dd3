/* Ended sessions kept (serve-kept.h). The list is this file's, under its
 * own lock; removal is done outside it (a big tree takes time). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "serve-ipc.h"
#include "serve-kept.h"
#include "serve-route.h"

static struct {
	pthread_mutex_t lock;
	strv ids; /* oldest first */
	strv gone; /* to be removed (kept_sessions_trim) */
	int keep;
	const char *state;
} K = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void rm_session(const char *id)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/sessions", K.state);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	serve_rm_tree(fd, id);
	close(fd);
}

/* A file of the session's own directory (not of its workspace: the run
 * cannot write there), opened without following a link. */
static int open_in(const char *id, const char *name, int flags)
{
	char p[PATH_MAX];
	if (!route_id_valid(id, "s-") ||
	    snprintf(p, sizeof(p), "%s/sessions/%s/%s", K.state, id, name) >= (int)sizeof(p))
		return -1;
	return open(p, flags | O_CLOEXEC | O_NOFOLLOW, 0600);
}

void kept_session_add(const char *id)
{
	int fd = open_in(id, "report.json", O_RDONLY | O_NONBLOCK);
	pthread_mutex_lock(&K.lock);
	/* Never started (or killed before its report): nothing to keep. */
	strv_push(fd >= 0 ? &K.ids : &K.gone, id);
	while ((int)K.ids.n > K.keep) {
		if (strv_push(&K.gone, K.ids.v[0]) < 0)
			break;
		free(K.ids.v[0]);
		memmove(K.ids.v, K.ids.v + 1, (K.ids.n - 1) * sizeof(char *));
		K.ids.n--;
		K.ids.v[K.ids.n] = NULL;
	}
	pthread_mutex_unlock(&K.lock);
	if (fd >= 0)
		close(fd);
}

void kept_sessions_trim(void)
{
	pthread_mutex_lock(&K.lock);
	strv old = K.gone;
	memset(&K.gone, 0, sizeof(K.gone));
	pthread_mutex_unlock(&K.lock);
	for (size_t i = 0; i < old.n; i++)
		rm_session(old.v[i]);
	strv_free(&old);
}

struct ent { char id[ROUTE_ID_LEN + 1]; long long t; };

static int ent_cmp(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t ? 1 : strcmp(x->id, y->id);
}

/* Waits for the worker of session directory name (in dfd) of a previous
 * server, if one still holds it, until deadline (CLOCK_MONOTONIC ns).
 * true: it still holds it then (still ending). */
static bool wait_worker(int dfd, const char *name, uint64_t deadline)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool held = false;
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK)
			break;
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec >= deadline) {
			held = true;
			break;
		}
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
	}
	close(fd);
	return held;
}

void kept_sessions_init(const char *state_dir, int keep, uint64_t wait_ns)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	uint64_t deadline = (uint64_t)t0.tv_sec * 1000000000ULL + (uint64_t)t0.tv_nsec + wait_ns;
	K.state = state_dir;
	K.keep = keep;
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/sessions", state_dir);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct ent *k = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && n < 1000000) {
		struct stat st;
		if (!route_id_valid(e->d_name, "s-") || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		/* Its worker may still be ending (the previous server killed):
		 * its report, its workspace made whole, come first. */
		if (wait_worker(dirfd(d), e->d_name, deadline))
			continue; /* still ending past the wait: left as it is, not
				   * judged (a session with no report yet would be
				   * taken for gone and removed under its worker);
				   * a later start judges it */
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (n == cap) {
			struct ent *nk = realloc(k, (cap = cap ? cap * 2 : 64) * sizeof(*k));
			if (!nk)
				break;
			k = nk;
		}
		snprintf(k[n].id, sizeof(k[n].id), "%s", e->d_name);
		k[n].t = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
		n++;
	}
	closedir(d);
	if (n)
		qsort(k, n, sizeof(*k), ent_cmp);
	/* A previous server's sessions have all ended (their workers went
	 * with it, or were ended by its SIGTERM). */
	for (size_t i = 0; i < n; i++)
		kept_session_add(k[i].id);
	free(k);
	kept_sessions_trim();
}

void kept_owner_write(const char *id, uid_t uid)
{
	int fd = open_in(id, "owner", O_WRONLY | O_CREAT | O_TRUNC);
	if (fd < 0)
		return;
	char t[32];
	int l = snprintf(t, sizeof(t), "%u\n", (unsigned)uid);
	if (write(fd, t, (size_t)l) != l) {
		/* no owner: only root sees it once it ended */
	}
	close(fd);
}

static bool owner_is(const char *id, uid_t uid)
{
	if (uid == 0)
		return true;
	int fd = open_in(id, "owner", O_RDONLY | O_NONBLOCK);
	char t[32] = "";
	ssize_t n = fd >= 0 ? read(fd, t, sizeof(t) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	t[n] = '\0';
	char *end;
	unsigned long u = strtoul(t, &end, 10);
	return end != t && (*end == '\n' || !*end) && u == (unsigned long)uid;
}

bool kept_session_visible(const char *id, uid_t uid)
{
	bool kept = false;
	pthread_mutex_lock(&K.lock);
	for (size_t i = 0; i < K.ids.n && !kept; i++)
		kept = strcmp(K.ids.v[i], id) == 0;
	pthread_mutex_unlock(&K.lock);
	return kept && owner_is(id, uid);
}

int kept_session_report(const char *id, buf *out)
{
	int fd = open_in(id, "report.json", O_RDONLY | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		errno = ENOENT;
		return -1;
	}
	int r = ipc_read_fd(fd, 64u << 20, out);
	close(fd);
	return r;
}

void kept_sessions_list(jwriter *w, uid_t uid)
{
	strv ids = {0};
	pthread_mutex_lock(&K.lock);
	for (size_t i = 0; i < K.ids.n; i++)
		strv_push(&ids, K.ids.v[i]);
	pthread_mutex_unlock(&K.lock);
	for (size_t i = 0; i < ids.n; i++) {
		if (!owner_is(ids.v[i], uid))
			continue;
		jw_obj_begin(w);
		jw_key(w, "id");
		jw_str(w, ids.v[i]);
		jw_key(w, "state");
		jw_str(w, "ended");
		jw_obj_end(w);
	}
	strv_free(&ids);
}
