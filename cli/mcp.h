/* cordon mcp: an MCP server on stdio (docs/mcp.md) that runs every tool
 * call through a cordon serve, its own private one or the one given with
 * --server. The protocol's framing is lib/jsonrpc.c; this side is the
 * program: options and the serve child (mcp.c), the HTTP client (mcp-http.c),
 * the tools (mcp-tools.c) and execs with their output, progress and
 * cancellation (mcp-exec.c).
 *
 * Concurrency: the main thread reads standard input and answers what is
 * quick (initialize, ping, tools/list, cancellations); each tools/call runs
 * on a thread of its own with blocking HTTP calls, so that a long exec
 * neither holds the others nor the reading of a cancellation. Every line to
 * standard output goes through mcp_send, one writer at a time. */
#pragma once
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include "cordon.h"
#include "json.h"
#include "strv.h"

#define MCP_MAX_CALLS 16            /* tools/call in flight at once */
#define MCP_LINE_MAX (8u << 20)     /* longest request line (bytes) */
#define MCP_OUTPUT_KEEP (64u << 10) /* bytes kept per stream per call */
#define MCP_FILE_KEEP (1u << 20)    /* bytes of a file read returned */

/* Where the server is: a Unix socket path, or 127.0.0.1:port with a token. */
struct mcp_server {
	char sock[PATH_MAX];
	char host[64];
	int port;
	char token[512];
};

struct http_resp {
	int status;
	buf body;
};

/* One request, the whole answer (at most 64 MiB). body may be NULL. */
int mh_request(const struct mcp_server *s, const char *method, const char *path, const char *body, size_t blen,
	       struct http_resp *out, cordon_error *err);
/* A request whose answer is read as it comes: returns the connection's fd
 * with *status and the body bytes already read in *rest. */
int mh_open(const struct mcp_server *s, const char *method, const char *path, const char *body, size_t blen,
	    int *status, buf *rest, cordon_error *err);
/* Percent-encode s into out (for ?path=). */
int mh_escape(buf *out, const char *s);
/* A server's error answer as one line: its {"error"} or the status. */
void mh_error_text(const struct http_resp *r, char *out, size_t n);

/* One tools/call in flight. */
struct mcp_call {
	jnode *root;                /* the request (owns id, params) */
	const jnode *id;
	const jnode *progress;      /* params._meta.progressToken, or NULL */
	atomic_bool cancelled;
	pthread_mutex_t lock;       /* sid, eid */
	char sid[64], eid[64];      /* the exec to signal on cancel */
	struct mcp_call *next;
};

struct mcp_state {
	struct mcp_server srv;
	char *policy_json;          /* --policy FILE's object, or NULL */
	char workspace[PATH_MAX];   /* --workspace DIR, or "" */
	bool review;                /* --review: its changes kept, never applied */
	int max_sessions;
	pthread_mutex_t lock;       /* calls, sessions, ncalls */
	pthread_cond_t idle;
	struct mcp_call *calls;
	int ncalls;
	strv sessions;              /* opened by session_open, not closed */
	int opening;                /* session_open calls under way: counted in the bound */
	strv ended;                 /* the last MCP_ENDED_KEEP sessions the server ended by itself */
	char private_sessions[PATH_MAX + 32]; /* the private server's STATE/sessions/, or "" (--server) */
};

#define MCP_ENDED_KEEP 64

extern struct mcp_state M;

/* Write one protocol line to standard output (whole, one writer at a time). */
void mcp_send(const char *line);
/* Run a tools/call on the calling thread and answer it (unless cancelled). */
void mcp_tools_call(struct mcp_call *c);
/* The tools' list (the result of tools/list). */
const char *mcp_tools_list_json(void);

/* Execs (mcp-exec.c). */
struct exec_out {
	buf out[2];                 /* stdout, stderr: the first MCP_OUTPUT_KEEP bytes */
	uint64_t bytes[2];          /* all of it */
	jnode *result;              /* the result event */
	char eid[64];
};
/* POST /v1/sessions/SID/exec with body and read its stream to the result,
 * sending progress notifications when the call asked for them. */
int mcp_exec(struct mcp_call *c, const char *sid, const char *body, struct exec_out *o, cordon_error *err);
void exec_out_free(struct exec_out *o);
/* Kill the exec a call has running (its cancel). */
void mcp_cancel_exec(struct mcp_call *c);
/* Write the exec's part of a result: status, exit_code, signal, stdout,
 * stderr, the cut flags, denials as lines (the result's, or these). */
void mcp_write_exec(jwriter *w, const struct exec_out *o, const jnode *denials);
/* Denials (a report's or a result's array) as one readable line each. */
void mcp_write_denials(jwriter *w, const jnode *denials);
