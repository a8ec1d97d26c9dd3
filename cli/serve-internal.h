/* What the pieces of cordon serve share: serve.c (the state S, the main
 * loop, the listening socket), serve-options.c (the command line),
 * serve-http.c (responses, authentication, the handler), serve-session.c
 * (session workers and the warm pool), serve-exec.c (requests to a
 * session), serve-run.c (one-shot runs); and serve-kept.c, serve-limits.c,
 * serve-peer.c with headers of their own. */
#pragma once
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <microhttpd.h>
#include "clock.h"
#include "pol-ceiling.h"
#include "json.h"
#include "serve-limits.h"
#include "serve-metrics.h"
#include "serve-route.h"
#include "strv.h"

#define BODY_MAX (64u << 20)
#define MAX_ALLOW 32
#define WARM_MAX 64
#define WARM_MAX_S "64"
/* The longest a claim holds the pool's refill back (see hold). */
#define HOLD_MAX_NS (2000ULL * 1000000ULL)
/* A session's lease (docs/api.md): it ends after this long with no call
 * of its client's, unless --idle-timeout or its request says otherwise. */
#define IDLE_DEFAULT_NS (30ULL * 60ULL * 1000000000ULL)
/* How long a session may stay paused (--max-pause): past it, it ends
 * (session.end "pause-limit"). A paused session keeps its memory, its slot
 * and its clocks stopped: without this a client could hold them for ever,
 * whatever wall time a ceiling requires. */
#define MAX_PAUSE_DEFAULT_NS (60ULL * 60ULL * 1000000000ULL)

struct session_ent {
	bool used;
	char id[ROUTE_ID_LEN + 1];
	pid_t pid;
	int ctl;
	uid_t owner;
	bool ending; /* DELETE sent: no longer counted, reaped when its worker exits */
	/* In the warm pool: no client's, not found by id, not counted; ready
	 * once its worker answered that the boundary is up. */
	bool warm, warm_ready;
	/* Taken from the pool by a one-shot run (POST /v1/runs): the run's,
	 * not a session of its client's (not found by id, not counted). */
	bool oneshot;
	/* Just taken from the pool: its refill waits (pool_release) until this
	 * session's first exec or one-shot run is over, so that building the
	 * next boundary does not take the CPU from it. */
	bool hold;
	pthread_mutex_t lock; /* sends on ctl */
};

/* The server's state: its options, the session table, the pool, the runs
 * (defined in serve.c). */
struct serve_state {
	const char *socket_path, *listen, *state_dir, *ceiling;
	char cordon[PATH_MAX]; /* the cordon beside this program: runs and session workers */
	char token[256];
	uid_t allow[MAX_ALLOW];
	int nallow;
	int max_sessions, max_per_client, keep_runs, keep_sessions;
	uint64_t idle_ns, timeout_ns, max_pause_ns;
	/* The longest a request waits for a session's worker to answer (then
	 * 504; a session that never came up is killed), and the longest
	 * SIGTERM waits for the workers before it kills them. */
	uint64_t worker_ns, grace_ns;
	struct session_ent *ss;
	pthread_mutex_t lock;
	strv runs; /* ids kept, oldest first */
	bool stopping;
	bool activated; /* the listening socket came from systemd (serve-activate.c) */
	int nslots;  /* 2 * max_sessions (ending ones keep theirs until reaped) + warm */
	/* The warm pool (--warm N, --warm-policy F): N sessions started ahead
	 * for one policy, F's (re-serialized) or, without F, a request without
	 * a policy; refilled by one thread, woken on every change. */
	int warm;
	char *warm_policy;
	pthread_cond_t pool_cond;
	pthread_t pool_thread;
	uint64_t pool_hits, pool_misses, pool_failures;
	int pool_holds;          /* sessions with hold set */
	uint64_t hold_until;     /* CLOCK_MONOTONIC ns: no hold lasts past this */
	/* Connections (docs/api.md, "Limits of the server"): at most this
	 * many at once (those not yet authenticated: serve-limits.c), and an
	 * idle or incomplete request closed after conn_timeout seconds. */
	unsigned max_conns, conn_timeout;
	uid_t tcp_uid;             /* who a bearer-token client is (--tcp-uid) */
	/* One-shot runs going on (at most max_runs, max_runs_client of one
	 * uid), and what is kept of each stream of a run. */
	int nruns, max_runs, max_runs_client;
	struct run_ent { uid_t uid; int n; } run_by[64];
	size_t run_out_max;
	struct ceiling ceil;       /* loaded when there is one */
	bool have_ceil;
	/* --socket-mode (0: 0600, or 0660 with --socket-group), --socket-group */
	mode_t sock_mode;
	gid_t sock_gid;
	bool sock_gid_set;
	/* GET /v1/metrics's counters (lib/serve-metrics.h) */
	struct serve_metrics metrics;
};
extern struct serve_state S;

struct req {
	buf body;
	bool too_big;
	bool over_budget; /* the bodies' budget had no room (503), the rest discarded */
	body_hold held;   /* of that budget (serve-limits.c) */
	uid_t uid;
	uint64_t t_req; /* CLOCK_MONOTONIC: the whole request was in */
};

/* serve-options.c */
int serve_parse_options(int argc, char **argv, const char **token_file, const char **warm_policy);
int serve_check_options(const char *token_file);
int serve_state_dirs(void);
int serve_warm_policy(const char *warm_policy);
/* serve-http.c */
enum MHD_Result send_text(struct MHD_Connection *c, unsigned code, const char *type, const char *text,
				 size_t len);
enum MHD_Result send_error(struct MHD_Connection *c, unsigned code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
uint64_t realtime_ns(void);
void new_id(char *out, const char *prefix);
bool reply_ready(int reply);
enum MHD_Result worker_late(struct MHD_Connection *c);
enum MHD_Result relay_reply(struct MHD_Connection *c, int reply, unsigned ok_code, const char *type);
enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			       const char *version, const char *upload, size_t *upload_size, void **con_cls);
void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t);
/* serve-session.c */
struct session_ent *find_session(const char *id, uid_t uid);
/* A session being ended (its DELETE came; its worker is not reaped yet),
 * visible to uid. S.lock held. */
bool session_is_ending(const char *id, uid_t uid);
int to_worker(struct session_ent *se, const char *id, const char *json, int extra_fd);
pid_t spawn_self(const char *const *argv, int fd3, const char *cwd, int in, int out, int errfd);
int mkdir_p(const char *path, mode_t mode);
char *node_text(const jnode *n);
bool session_ws(char *out, size_t sz, const char *id);
bool pool_matches(const jnode *pol, const jnode *tmo);
bool pool_for(uid_t uid);
struct session_ent *pool_take(uid_t uid, bool oneshot);
void pool_release_locked(struct session_ent *se);
void pool_release(const char *sid);
int pool_count(void);
void *pool_main(void *unused);
/* Sessions of clients (not ending, not warm, not one-shot); *mine: uid owner's. Under S.lock. */
int count_sessions(uid_t owner, int *mine);
/* A fork's workspace: its parent's lower tree and a snapshot of its upper
 * layer (directory fds), before the worker starts: the snapshot copied as a
 * new shared layer over the parent's stack (layers.h) where the server can
 * mount it, else the lower tree copied and the snapshot applied over it.
 * snaps: the parent's snapshots directory, held LOCK_SH by the caller for
 * the copy (a snapshot's removal and the parent's end take it LOCK_EX):
 * seed_workspace lets it go once the copy is made. parent: its id. */
struct fork_seed {
	int lower, upper, snaps;
	const char *parent;
};
#define FORK_MAX_ENTRIES 400000
#define FORK_MAX_DEPTH 258
/* Its bytes of files without limits.snapshots in its policy (the default
 * snapshot budget, SX_SNAP_BUDGET_DEFAULT). */
#define FORK_MAX_BYTES_DEFAULT (1ULL << 30)
/* The shared layers of stacked forks (layers.h) no session lists:
 * removed now (a worker reaped), or at the start once the earlier
 * server's workers have ended (a thread of its own). */
void layers_sweep_now(bool wait);
void layers_at_start(void);
/* POST /v1/sessions (seed NULL), or a fork's (serve-fork.c). */
enum MHD_Result create_session(struct MHD_Connection *c, const jnode *body, uid_t uid, uint64_t t_req,
			       const struct fork_seed *seed);
/* serve-fork.c: POST /v1/sessions/{id}/fork */
enum MHD_Result fork_session(struct MHD_Connection *c, struct session_ent *se, const char *sid, struct req *rq);
/* serve-exec.c */
void exec_op_begin(jwriter *w, const jnode *argv, uint64_t t_req);
enum MHD_Result list_sessions(struct MHD_Connection *c, uid_t uid);
enum MHD_Result session_op(struct MHD_Connection *c, const struct route *rt, struct req *rq);
/* A session's change set's diff in GET .../changes: cut past this. */
#define CHANGES_DIFF_MAX (1u << 20)
/* serve-changes.c: GET /v1/sessions/{id}/changes, the diff cut at diff_max
 * bytes; with pid, GET .../snapshots/{pid}/changes: that snapshot's against
 * the session's lower tree. */
enum MHD_Result session_changes(struct MHD_Connection *c, struct session_ent *se, const char *sid, const char *pid,
				size_t diff_max);
/* serve-run.c */
void load_kept_runs(void);
enum MHD_Result do_run(struct MHD_Connection *c, struct req *rq);
enum MHD_Result get_run(struct MHD_Connection *c, const char *id, uid_t uid);
