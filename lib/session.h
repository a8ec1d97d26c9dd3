/* A session: one long-lived boundary in which commands are started on
 * request (`cordon serve`, docs/api.md).
 *
 * Processes: the server (cli/serve.c) starts one worker per session (this
 * file's session_worker_main, a `cordon` process of its own); the worker is
 * the run's supervisor (sup-run.c, with struct run_hooks) and init, every layer
 * applied, stays up as the agent (session-agent.c) that forks each exec.
 * Channels: server <-> worker, one SOCK_SEQPACKET "control" socket carrying
 * JSON requests, each with its own reply socket (SCM_RIGHTS); worker <->
 * init, the run's sync socket with the MSG_SX_* frames (sync.h). */
#pragma once
#include <stdint.h>
#include "cordon.h"

/* Usage of one exec, as init measured it (wait4 of the exec's process). */
struct sx_usage {
	uint64_t cpu_user_ns, cpu_sys_ns;
	uint64_t max_rss; /* bytes */
	uint64_t wall_ns;
};

enum sx_file_op { SX_FILE_READ = 1, SX_FILE_WRITE, SX_FILE_DELETE, SX_FILE_LIST };
/* Or-ed into MSG_SX_FILE's op: a write makes the missing directories on
 * its path first (mode 0755, one component at a time, no link followed). */
#define SX_FILE_PARENTS 0x100

/* Concurrent execs in one session. */
#define SX_SLOTS 64
/* An exec request (argv, env, cwd) in its memfd: at most this much. */
#define SX_REQ_MAX (4u << 20)
/* MSG_SX_EXEC's .err.code: the request in a memfd (fd), the same with a pty
 * (.err.msg its struct winsize), or inline (no fd; .err.msg a u16 length
 * and the request: a small one, most, spares a memfd each way). */
enum { SX_EXEC_MEMFD = 0, SX_EXEC_PTY = 1, SX_EXEC_INLINE = 2 };

/* The worker: reads its first request (the session: policy, limits, paths)
 * from ctl, runs the session until it ends, writes its report. Returns the
 * process's exit status. */
int session_worker_main(int ctl);
