/* What the pieces of the session worker share (internal; session.h is the
 * session's public side): the worker's state (struct sx, its execs and
 * file requests) and the event tags. Each piece declares its functions in
 * a header of its own name: lib/session.c (the worker: the server's
 * requests, run.c's hooks, its set-up), session-util.c (small helpers),
 * session-stream.c (an exec's output and pty streams), session-exec.c (an
 * exec started, and its result), session-files.c (the files API),
 * session-report.c (GET and the session report). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cordon-pty.h"
#include "hash.h"
#include "json.h"
#include "redact-stream.h"
#include "redact.h"
#include "report.h"
#include "sup-run.h"
#include "session.h"
#include "strv.h"

#define EXEC_QUEUE_MAX (8u << 20)
#define FILE_MAX (64u << 20)
#define LIST_MAX 100000

enum { K_CTL = 1, K_OUT, K_TIMER, K_IDLE, K_REPLY, K_CLIENT, K_PTYIN, K_PAUSE };

static inline uint64_t tag(int kind, uint32_t idx)
{
	return RUN_HOOK_TAG | ((uint64_t)kind << 32) | idx;
}

struct sx_exec {
	char id[24];
	strv argv;
	bool running, done;
	int slot;
	int out[2];          /* read ends, -1 at EOF */
	struct redact_stream rs[2];
	sha256_ctx *h[2];
	uint64_t raw, bytes[2];
	/* The hash budget (CORDON_OUTPUT_HASH, as cordon run's): bytes of each
	 * stream still to hash, and hashed; past it, sha[] is the prefix's. */
	uint64_t hash_left[2], hashed[2];
	bool hash_over[2];
	char sha[2][65];
	uint64_t dropped;
	bool paused;         /* out[] off the epoll set: the client's queue is full */
	bool draining;       /* finalize reads what is left: no pause */
	int reply;           /* to the client's stream; -1 once it is gone */
	buf queue;           /* packets not yet sent (emit) */
	size_t qoff;
	bool reply_wait;     /* EPOLLOUT registered */
	int timer;
	uint64_t *den0;      /* unattributed denial counts at the start */
	int pid;             /* in the run's PID namespace: its process group */
	size_t nden0;
	int wstatus;
	bool exited;
	struct sx_usage usage;
	bool cg_cpu;        /* cg_cpu_ns read from the exec's cgroup (session-cg.h) */
	uint64_t cg_cpu_ns;
	/* CLOCK_MONOTONIC: when the server had the whole request (its
	 * "t_req_ns"; 0 if it gave none) and when the exec's process called
	 * execve (the agent's MSG_SX_STARTED). */
	uint64_t t_req, t_exec;
	const char *status;  /* once done */
	const char *forced;  /* killed, timeout, output-limit: why we ended it */
	int kill_pending;    /* a signal asked before it started (MSG_SX_STARTED): sent then */
	char error[512];
	char *result;        /* the result event's JSON, once done */
	/* A pty exec: the master (init's, passed at start), and the client's
	 * upgraded connection relayed to it both ways. */
	bool pty;
	int ptm;
	int client;
	buf cq;              /* output not yet written to the client */
	size_t cqoff;
	buf pin;             /* input that came before the master did */
	struct pty_winsize pws; /* a resize that came before the master did */
	bool pws_set;
	struct pty_input in; /* input for the master (lib/cordon-pty.c), once it came */
	bool in_ready;       /* in is set up */
	bool ptm_wait;       /* the master is registered for EPOLLOUT */
	bool client_eof;     /* the client shut its side: the pty's end of input */
	bool client_reg;     /* client is in the epoll set */
	bool client_gone;    /* it came and went: its output is dropped (counted) */
	uint64_t input_dropped;
	/* A background exec: no client waits on it; its packets stay queued
	 * (flow control as for a slow reader) for a reader that comes for
	 * them ("output"), each taking what it reads. fetching: that reader
	 * takes fetch_left bytes of the queue (what was there) and goes. */
	bool background, fetching;
	size_t fetch_left;
	/* The session paused (session-pause.c): its timeout's time left,
	 * kept while its timer is stopped (0: no timeout), and the time it
	 * spent paused. */
	uint64_t timer_left, paused_ns;
};

/* One pause of the session: from start to end (CLOCK_MONOTONIC ns; end 0
 * while it lasts). */
struct sx_pause_iv {
	uint64_t start, end;
};
#define SX_PAUSES_MAX 256

/* A snapshot of the workspace (session-snap.c): its directory is
 * snap_dir/id. */
struct sx_snap {
	char id[24];
	uint64_t bytes, files, entries;
	uint64_t created; /* seconds since the epoch */
};
#define SX_SNAPS_MAX 64

struct sx_file {
	bool used;
	int op;
	int reply;
	int body;            /* PUT: the bytes, in a memfd */
	char path[1024];
};

struct sx {
	char id[40];
	cordon_policy *pol;
	struct run_report *rep;
	int ctl, sock, epfd, idle;
	uint64_t idle_ns;
	bool ready, ended, ending;
	const char *end_reason;
	int create_reply;    /* the POST /v1/sessions waiting for ready */
	int end_reply;       /* the DELETE waiting for the report */
	struct sx_exec *ex;
	size_t nex;
	int slot_ex[SX_SLOTS]; /* slot -> index in ex, -1 free */
	struct sx_file files[16];
	buf evidence;        /* the files API's entries, JSON objects joined by "," */
	size_t nevidence;
	/* A warm session (cordon serve --warm): built before any client asked
	 * for it, handed out by a "claim" request; until then its idle timer
	 * is off and it takes no other request. */
	bool warm, claimed;
	/* Claimed for a one-shot run (POST /v1/runs): its report's outcome is
	 * its one exec's, as cordon run's is its command's. */
	bool oneshot;
	int wall_timer;
	uint64_t t_ready, pool_ns;
	uint64_t out_hash;   /* each exec's hash budget per stream */
	char report_path[4096];
	bool published;      /* the report written and the DELETE answered */
	/* The session's workspace (as the run sees it: the same path) and
	 * its working directory (the policy's cwd, else the workspace):
	 * a relative files-API path or exec cwd is the cwd's. */
	char ws[4096], cwd[4096];
	/* Paused (POST .../pause, session-pause.c): every process frozen, the
	 * wall, idle and exec timers stopped (wall_left: the wall timer's
	 * time left, 0 if it was not armed). The pauses for the report: the
	 * first SX_PAUSES_MAX listed, every one counted in paused_ns. */
	bool paused, pause_listed;
	uint64_t pause_t0, wall_left, paused_ns;
	/* The longest a pause may last (the server's --max-pause; 0: none):
	 * pause_timer, armed while paused, ends the session past it. */
	uint64_t max_pause_ns;
	int pause_timer;
	struct sx_pause_iv pauses[SX_PAUSES_MAX];
	size_t npauses, pauses_omitted;
	/* Snapshots (session-snap.c): in snap_dir (<session dir>/snapshots),
	 * snap_bytes of them in all. */
	char snap_dir[4096];
	struct sx_snap snaps[SX_SNAPS_MAX];
	size_t nsnaps;
	uint64_t snap_bytes;
	/* Bytes of the change sets made from snapshots (sx_do_snapshot_changeset),
	 * bounded by the same budget: they are kept for the client to apply. */
	uint64_t cs_bytes;
	/* and their entries, each set's own files too (meta, seal, protect,
	 * each layer's directory, host, upper, work): bounded in all as the
	 * snapshots' are, empty files weighing nothing in bytes */
	uint64_t cs_entries;
	/* A restore under way (session-restore.c): its reply (-1: none), its
	 * snapshot, waiting for the execs it ended. */
	int restore_reply;
	char restore_snap[24];
	/* The session's directory, held LOCK_EX while the worker lives (a
	 * restarted server waits for it before it sweeps the layers), and
	 * its workspace's stack (layers.h: host paths, top first; none for
	 * a session that is not a stacked fork). */
	int sess_fd;
	strv layers;
};

