/* cordon serve: the HTTP/1.1 + JSON API on a Unix socket (or loopback TCP
 * with a bearer token), docs/api.md. libmicrohttpd parses HTTP, one thread
 * per connection; the server authenticates, routes (lib/serve-route.c),
 * checks bodies (lib/json.c) and hands each request to the session's worker
 * process (lib/session.c) or, for one-shot runs, to `cordon run`. Sessions
 * are separate processes: one that fails takes no other down.
 *
 * This file: the server's state (S), its start (cmd_serve: the options,
 * the listening socket, the HTTP server, the warm pool's thread), its main
 * loop (workers reaped) and its stop. The rest: serve-internal.h. */
#include <dirent.h>
#include <grp.h>
#include <sys/fsuid.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/openat2.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>
#include "changeset.h"
#include "error.h"
#include "json.h"
#include "policy.h"
#include "pol-ceiling.h"
#include "serve-activate.h"
#include "serve-ipc.h"
#include "serve-limits.h"
#include "serve-kept.h"
#include "serve-peer.h"
#include "serve-route.h"
#include "session.h"
#include "strv.h"
#include "units.h"
#include "cli-serve.h"
#include "serve-internal.h"
#include "serve-tls.h"

extern char **environ;

struct serve_state S = {.worker_ns = 120ULL * 1000000000ULL, .grace_ns = 20ULL * 1000000000ULL, .max_sessions = 64, .keep_runs = 100, .keep_sessions = 100, .idle_ns = IDLE_DEFAULT_NS, .max_pause_ns = MAX_PAUSE_DEFAULT_NS, .lock = PTHREAD_MUTEX_INITIALIZER, .pool_cond = PTHREAD_COND_INITIALIZER,
       .max_conns = 256, .conn_timeout = 30, .tcp_uid = 65534, .max_runs = 16, .run_out_max = 16u << 20};

/* ---- the main loop ---- */

/* Never waits: S.lock is held (a worker that does not exit must not stop
 * the request threads). */
static void reap_workers(void)
{
	bool sweep = false;
	pthread_mutex_lock(&S.lock);
	for (int i = 0; i < S.nslots; i++) {
		struct session_ent *se = &S.ss[i];
		if (!se->used || se->pid <= 0)
			continue;
		if (waitpid(se->pid, NULL, WNOHANG) == se->pid) {
			pthread_mutex_lock(&se->lock);
			close(se->ctl);
			se->ctl = -1;
			if (se->warm) {
				/* A pool session no client took: no report, an
				 * empty workspace nothing ran in. */
				char d[PATH_MAX], cs[64];
				session_ws(d, sizeof(d), se->id);
				rmdir(d);
				*strrchr(d, '/') = '\0';
				/* and the directory of change sets beside it
				 * (it stays once made: changeset.h), empty */
				changeset_dirname(cs, sizeof(cs));
				char top[PATH_MAX + 80];
				snprintf(top, sizeof(top), "%s/%s", d, cs);
				rmdir(top);
				rmdir(d);
			}
			/* A client's session: kept (serve-kept.c). */
			if (!se->warm && !se->oneshot)
				kept_session_add(se->id);
			sweep |= !se->warm;
			se->id[0] = '\0';
			pool_release_locked(se);
			se->used = se->warm = se->warm_ready = se->oneshot = false;
			pthread_mutex_unlock(&se->lock);
		}
	}
	pthread_mutex_unlock(&S.lock);
	kept_sessions_trim();
	pthread_cond_broadcast(&S.pool_cond);
	/* (the main loop: never waiting for a fork's copy) */
	if (sweep)
		layers_sweep_now(false);
}

static int live_workers(int sig)
{
	int n = 0;
	pthread_mutex_lock(&S.lock);
	for (int i = 0; i < S.nslots; i++)
		if (S.ss[i].used && S.ss[i].pid > 0) {
			n++;
			if (sig)
				kill(S.ss[i].pid, sig);
		}
	pthread_mutex_unlock(&S.lock);
	return n;
}

/* SIGTERM: the workers (sent SIGTERM) write their reports and exit; one
 * still there after --stop-grace is killed, and waited for at most as
 * long again. Reaped on SIGCHLD, never waited for under S.lock. */
static void stop_workers(const sigset_t *mask)
{
	for (int phase = 0; phase < 2; phase++) {
		uint64_t end = mono_ns() + S.grace_ns;
		for (;;) {
			reap_workers();
			uint64_t now = mono_ns();
			if (!live_workers(0) || now >= end)
				break;
			uint64_t left = end - now < 100000000ULL ? end - now : 100000000ULL;
			struct timespec ts = {0, (long)left};
			sigtimedwait(mask, NULL, &ts);
		}
		if (!live_workers(0))
			return;
		if (phase == 0) {
			fprintf(stderr, "cordon serve: %d session worker(s) still running after the grace period: killed\n",
				live_workers(0));
			live_workers(SIGKILL);
		}
	}
}

static int listen_unix(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(a.sun_path)) {
		fprintf(stderr, "cordon serve: --socket %s: longer than %zu bytes\n", path, sizeof(a.sun_path) - 1);
		return -1;
	}
	strcpy(a.sun_path, path);
	struct stat st;
	if (lstat(path, &st) == 0) {
		/* A stale socket of ours is replaced; anything else is left. */
		if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
			fprintf(stderr, "cordon serve: --socket %s: exists and is not a socket of uid %u\n", path,
				(unsigned)geteuid());
			return -1;
		}
		unlink(path);
	}
	/* Bound under a name of its own and renamed into place once it
	 * listens: a client that sees PATH can connect. */
	bool tmp = (size_t)snprintf(a.sun_path, sizeof(a.sun_path), "%s.%d", path, (int)getpid()) <
		   sizeof(a.sun_path);
	if (!tmp)
		strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* The socket file has its mode and group from its creation (no chmod
	 * or chown by path after: the path could be another file by then):
	 * the umask and this thread's fsgid. Still one thread here. */
	mode_t old = umask(0777 & ~S.sock_mode);
	gid_t ofs = S.sock_gid_set ? (gid_t)setfsgid(S.sock_gid) : 0;
	int r = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&a, sizeof(a));
	if (S.sock_gid_set)
		setfsgid(ofs);
	umask(old);
	if (r == 0 && S.sock_gid_set && (lstat(a.sun_path, &st) < 0 || st.st_gid != S.sock_gid)) {
		fprintf(stderr, "cordon serve: --socket-group %u: the socket could not be made that group's (not a group of the server's, or a set-group-ID directory)\n",
			(unsigned)S.sock_gid);
		unlink(a.sun_path);
		close(fd);
		return -1;
	}
	if (r < 0 || listen(fd, 128) < 0 || (tmp && rename(a.sun_path, path) < 0)) {
		fprintf(stderr, "cordon serve: --socket %s: %s\n", path, strerror(errno));
		if (r == 0 && tmp)
			unlink(a.sun_path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int listen_tcp(const char *spec)
{
	char host[64];
	const char *colon = strrchr(spec, ':');
	if (!colon || colon - spec >= (long)sizeof(host)) {
		fprintf(stderr, "cordon serve: --listen %s: HOST:PORT expected\n", spec);
		return -1;
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
	char *end;
	errno = 0;
	long port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port < 1 || port > 65535) {
		fprintf(stderr, "cordon serve: --listen %s: the port must be a number from 1 to 65535\n", spec);
		return -1;
	}
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
		fprintf(stderr, "cordon serve: --listen %s: an IPv4 address and a port expected\n", spec);
		return -1;
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 128) < 0) {
		fprintf(stderr, "cordon serve: --listen %s: %s\n", spec, strerror(errno));
		return -1;
	}
	return fd;
}

/* The cordon beside this program (it runs the runs and the session
 * workers) into S.cordon. */
static int find_cordon(void)
{
	ssize_t self_len = readlink("/proc/self/exe", S.cordon, sizeof(S.cordon) - 1);
	char *slash = self_len > 0 ? memrchr(S.cordon, '/', (size_t)self_len) : NULL;
	if (!slash || (size_t)(slash - S.cordon) + sizeof("/cordon") > sizeof(S.cordon)) {
		fprintf(stderr, "cordon serve: /proc/self/exe: cannot find the cordon beside this program\n");
		return -1;
	}
	strcpy(slash, "/cordon");
	return 0;
}

/* The HTTP server on lfd: one thread per connection, so connections are
 * counted and an idle one is closed; a client not yet authenticated gets a
 * share (serve-limits.c: loopback is one address, a header deadline). */
static struct MHD_Daemon *start_http(int lfd)
{
	if (limits_start(S.listen != NULL, S.max_conns) < 0) {
		fprintf(stderr, "cordon serve: the connections' deadline thread did not start\n");
		return NULL;
	}
	struct MHD_OptionItem lim[8] = {
		{MHD_OPTION_CONNECTION_LIMIT, S.max_conns, NULL},
		{MHD_OPTION_CONNECTION_TIMEOUT, S.conn_timeout, NULL},
		{MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)limits_notify, NULL},
	};
	/* TLS (serve-tls.c): its certificate, key and priorities. */
	int n = 3 + tls_mhd_options(lim + 3, 4);
	lim[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_ALLOW_UPGRADE;
	struct MHD_Daemon *d = MHD_start_daemon(flags | (tls_on() ? MHD_USE_TLS : 0),
						0, NULL, NULL, handler, NULL, MHD_OPTION_LISTEN_SOCKET, lfd,
						MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
						MHD_OPTION_ARRAY, lim, MHD_OPTION_END);
	if (!d && tls_on())
		fprintf(stderr, "cordon serve: --tls-cert/--tls-key: the HTTPS server did not start (a certificate or key that does not parse, or a key not the certificate's)\n");
	else if (!d)
		fprintf(stderr, "cordon serve: the HTTP server did not start\n");
	return d;
}

/* Until SIGTERM or SIGINT: the workers that exit reaped (SIGCHLD). */
static void serve_until_stopped(const sigset_t *mask)
{
	for (;;) {
		int sig = 0;
		sigwait(mask, &sig);
		if (sig == SIGCHLD) {
			reap_workers();
			continue;
		}
		break;
	}
}

/* SIGTERM: no new sessions; every session ended, its report written to the
 * state directory (its worker's own SIGTERM handling). */
static void shut_down(const sigset_t *mask, bool pool, struct MHD_Daemon *d)
{
	pthread_mutex_lock(&S.lock);
	S.stopping = true;
	for (int i = 0; i < S.nslots; i++)
		if (S.ss[i].used && S.ss[i].pid > 0)
			kill(S.ss[i].pid, SIGTERM);
	pthread_mutex_unlock(&S.lock);
	pthread_cond_broadcast(&S.pool_cond);
	if (pool)
		pthread_join(S.pool_thread, NULL);
	stop_workers(mask);
	MHD_stop_daemon(d);
	if (S.socket_path && !S.activated) /* systemd's socket stays systemd's */
		unlink(S.socket_path);
}

int cmd_serve(int argc, char **argv)
{
	const char *token_file = NULL, *warm_policy = NULL;
	if (find_cordon() < 0)
		return 125;
	S.allow[S.nallow++] = getuid();
	if (getuid() != 0)
		S.allow[S.nallow++] = 0;
	int r = serve_parse_options(argc, argv, &token_file, &warm_policy);
	if (r >= 0)
		return r;
	if ((r = serve_check_options(token_file)) || (r = serve_state_dirs()) || (r = serve_warm_policy(warm_policy)))
		return r;
	static char ceil_abs[PATH_MAX];
	if (S.ceiling && realpath(S.ceiling, ceil_abs))
		S.ceiling = ceil_abs;
	S.nslots = 2 * S.max_sessions + S.warm;
	S.ss = calloc((size_t)S.nslots + 1, sizeof(*S.ss));
	for (int i = 0; S.ss && i < S.nslots; i++)
		pthread_mutex_init(&S.ss[i].lock, NULL);
	int lfd = serve_activated_socket(S.socket_path, S.listen);
	S.activated = lfd >= 0;
	if (lfd == SERVE_NOT_ACTIVATED)
		lfd = S.listen ? listen_tcp(S.listen) : listen_unix(S.socket_path);
	if (lfd < 0 || !S.ss)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	struct MHD_Daemon *d = start_http(lfd);
	if (!d)
		return 1;
	layers_at_start();
	bool pool = S.warm > 0 && pthread_create(&S.pool_thread, NULL, pool_main, NULL) == 0;
	if (S.warm > 0 && !pool)
		fprintf(stderr, "cordon serve: the warm pool's thread did not start; sessions start cold\n");
	fprintf(stderr, "cordon serve: listening on %s%s%s\n", S.listen ? S.listen : S.socket_path,
		tls_on() ? " (TLS)" : "", S.activated ? " (socket activation)" : "");
	serve_until_stopped(&mask);
	shut_down(&mask, pool, d);
	fprintf(stderr, "cordon serve: stopped\n");
	return 0;
}

/* cordon-serve: `cordon serve` execs it (cli/main.c), argv[0] and the
 * options. */
int main(int argc, char **argv)
{
	return cmd_serve(argc - 1, argv + 1);
}
