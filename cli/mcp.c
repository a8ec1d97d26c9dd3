/* cordon mcp: the verb (mcp.h). Options, the private cordon serve, the
 * reading of standard input and the quick methods; tools/call goes to a
 * thread of its own (mcp-tools.c).
 *
 * Standard output is the protocol's alone: at start its descriptor is
 * moved to a private one and descriptor 1 becomes standard error, so that
 * nothing else this process or its children write (the private server's
 * messages, a library's stray print) can reach the client's stream. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cleanup.h"
#include "cli-mcp.h"
#include "error.h"
#include "jsonrpc.h"
#include "mcp.h"
#include "pol-parse.h"

struct mcp_state M = {.lock = PTHREAD_MUTEX_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER, .max_sessions = 8};
static int proto_fd = -1;
static pthread_mutex_t send_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t serve_pid = -1;
static char tmpdir[PATH_MAX];
static volatile sig_atomic_t stopping;

/* SIGTERM, SIGINT, SIGHUP: end as at standard input's end (the stdio
 * transport's shutdown is stdin closed, then SIGTERM). Installed without
 * SA_RESTART so that the read of standard input returns. */
static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

/* Newest first; an initialize with another gets the newest (the client
 * then decides whether it can go on). */
static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

void mcp_send(const char *line)
{
	pthread_mutex_lock(&send_lock);
	size_t n = strlen(line);
	for (const char *p = line; n > 0;) {
		ssize_t w = write(proto_fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break; /* the client is gone: its stdin's end follows */
		p += w;
		n -= (size_t)w;
	}
	pthread_mutex_unlock(&send_lock);
}

static void send_error(const jnode *id, int code, const char *msg)
{
	char *line = jrpc_error_line(id, code, msg);
	if (line)
		mcp_send(line);
	free(line);
}

static void send_result(const jnode *id, const char *result)
{
	char *line = jrpc_result_line(id, result);
	if (line)
		mcp_send(line);
	else
		send_error(id, JRPC_INTERNAL_ERROR, "out of memory");
	free(line);
}

static void on_initialize(const struct jrpc_msg *m)
{
	const jnode *v = json_get(m->params, "protocolVersion");
	const char *version = versions[0];
	for (size_t i = 0; v && v->type == J_STR && i < sizeof(versions) / sizeof(versions[0]); i++)
		if (strcmp(v->str, versions[i]) == 0)
			version = versions[i];
	jwriter w = {.compact = true};
	jw_obj_begin(&w);
	jw_key_str(&w, "protocolVersion", version);
	jw_key(&w, "capabilities");
	jw_raw(&w, "{\"tools\":{\"listChanged\":false}}");
	jw_key(&w, "serverInfo");
	jw_obj_begin(&w);
	jw_key_str(&w, "name", "cordon");
	jw_key_str(&w, "title", "cordon execution boundary");
	jw_key_str(&w, "version", cordon_version());
	jw_obj_end(&w);
	jw_key_str(&w, "instructions",
		   "Commands run inside a cordon boundary: system directories read-only, a writable workspace, a "
		   "private /tmp, no network unless the policy grants it. Use run for one command, or session_open, "
		   "session_exec, file_* and session_close to keep files between commands. What the boundary refused "
		   "is listed in denials, one line each; a non-zero exit is a normal result.");
	jw_obj_end(&w);
	char *r = jw_take(&w);
	send_result(m->id, r ? r : "{}");
	free(r);
}

static bool same_id(const jnode *a, const jnode *b)
{
	if (!a || !b || a->type != b->type)
		return false;
	return a->type == J_STR ? strcmp(a->str, b->str) == 0 : a->num == b->num;
}

static void on_cancelled(const struct jrpc_msg *m)
{
	const jnode *rid = json_get(m->params, "requestId");
	pthread_mutex_lock(&M.lock);
	for (struct mcp_call *c = M.calls; c; c = c->next)
		if (same_id(c->id, rid)) {
			atomic_store(&c->cancelled, true);
			mcp_cancel_exec(c);
		}
	pthread_mutex_unlock(&M.lock);
}

static void *call_thread(void *arg)
{
	struct mcp_call *c = arg;
	mcp_tools_call(c);
	pthread_mutex_lock(&M.lock);
	for (struct mcp_call **p = &M.calls; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	M.ncalls--;
	pthread_cond_broadcast(&M.idle);
	pthread_mutex_unlock(&M.lock);
	pthread_mutex_destroy(&c->lock);
	json_free(c->root);
	free(c);
	return NULL;
}

static void on_tools_call(struct jrpc_msg *m)
{
	pthread_mutex_lock(&M.lock);
	bool busy = M.ncalls >= MCP_MAX_CALLS;
	pthread_mutex_unlock(&M.lock);
	if (busy) {
		send_error(m->id, -32000, "busy: 16 tool calls are running already; retry when one has ended");
		return;
	}
	struct mcp_call *c = calloc(1, sizeof(*c));
	if (!c) {
		send_error(m->id, JRPC_INTERNAL_ERROR, "out of memory");
		return;
	}
	c->root = m->root;
	c->id = m->id;
	c->progress = json_get(json_get(m->params, "_meta"), "progressToken");
	if (c->progress && c->progress->type != J_STR && c->progress->type != J_NUM)
		c->progress = NULL;
	pthread_mutex_init(&c->lock, NULL);
	m->root = NULL; /* the call's now */
	pthread_mutex_lock(&M.lock);
	c->next = M.calls;
	M.calls = c;
	M.ncalls++;
	pthread_mutex_unlock(&M.lock);
	pthread_t t;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	/* the stop signals are the main thread's (its read returns): a call's
	 * thread starts with them blocked */
	sigset_t stop_sigs, old;
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGTERM);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop_sigs, &old);
	int rc = pthread_create(&t, &a, call_thread, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		send_error(c->id, JRPC_INTERNAL_ERROR, "cannot start a thread for the call");
		pthread_mutex_lock(&M.lock);
		M.calls = c->next;
		M.ncalls--;
		pthread_mutex_unlock(&M.lock);
		json_free(c->root);
		free(c);
	}
	pthread_attr_destroy(&a);
}

static void on_line(const char *line, size_t len)
{
	struct jrpc_msg m;
	int code = 0;
	cordon_error err;
	if (jrpc_parse(line, len, &m, &code, &err) < 0) {
		send_error(m.id, code, err.msg);
		jrpc_msg_free(&m);
		return;
	}
	if (m.kind == JRPC_RESPONSE) {
		/* we send no requests: nothing waits for it */
	} else if (m.kind == JRPC_NOTIFICATION) {
		if (strcmp(m.method, "notifications/cancelled") == 0)
			on_cancelled(&m);
		/* notifications/initialized and others: nothing to do */
	} else if (strcmp(m.method, "initialize") == 0) {
		on_initialize(&m);
	} else if (strcmp(m.method, "ping") == 0) {
		send_result(m.id, "{}");
	} else if (strcmp(m.method, "tools/list") == 0) {
		send_result(m.id, mcp_tools_list_json());
	} else if (strcmp(m.method, "tools/call") == 0) {
		on_tools_call(&m);
	} else {
		char msg[160];
		snprintf(msg, sizeof(msg), "method not found: \"%.100s\"", m.method);
		send_error(m.id, JRPC_METHOD_NOT_FOUND, msg);
	}
	jrpc_msg_free(&m);
}

static const char usage[] =
	"usage: cordon mcp [--policy FILE] [--ceiling FILE] [--workspace DIR [--review]] [--max-sessions N]\n"
	"       cordon mcp --server SOCKET|http://127.0.0.1:PORT [--token-file F] [--policy FILE] [...]\n"
	"An MCP server on standard input and output (newline-delimited JSON-RPC 2.0) whose\n"
	"tools run commands inside cordon boundaries (docs/mcp.md). Logs go to standard error.\n"
	"  --policy FILE           the policy of every run and session whose call gives none\n"
	"  --ceiling FILE          the operator's ceiling (the private server's)\n"
	"  --workspace DIR         a host directory every run and session gets read-write, as\n"
	"                          its working directory (else each gets a fresh empty one)\n"
	"  --review                every run's and session's changes are kept for review (the\n"
	"                          changes tool, cordon changes), never applied to the workspace\n"
	"  --max-sessions N        sessions open at once (default 8)\n"
	"  --server S              use this cordon serve (a Unix socket path, or\n"
	"                          http://127.0.0.1:PORT with --token-file) instead of a private one\n"
	"  --token-file F          the bearer token of a --server on TCP\n"
	"  -h, --help              this text\n";

const char *cli_mcp_usage(void) { return usage; }

static int usage_err(const char *what, const char *v)
{
	fprintf(stderr, "cordon mcp: %s%s%s\n%s", what, v ? ": " : "", v ? v : "", usage);
	return -1;
}

static int read_small(const char *path, char **out, size_t max)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max)
		return -1;
	char *b = calloc(1, (size_t)st.st_size + 1);
	if (!b)
		return -1;
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, b + got, (size_t)st.st_size - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	*out = b;
	return 0;
}

static int load_policy(const char *path)
{
	cordon_policy *p = policy_new();
	cordon_error err;
	if (!p || policy_load_file(p, path, &err) < 0) {
		fprintf(stderr, "cordon mcp: --policy: %s\n", p ? err.msg : "out of memory");
		policy_free(p);
		return -1;
	}
	policy_free(p);
	if (read_small(path, &M.policy_json, 16u << 20) < 0) {
		fprintf(stderr, "cordon mcp: --policy %s: cannot read it\n", path);
		return -1;
	}
	return 0;
}

static int set_server(const char *s, const char *token_file)
{
	if (strncmp(s, "http://", 7) == 0) {
		unsigned port = 0;
		char host[64];
		if (sscanf(s + 7, "%63[0-9.]:%u", host, &port) != 2 || port < 1 || port > 65535)
			return usage_err("--server: http://IPV4:PORT expected", s);
		snprintf(M.srv.host, sizeof(M.srv.host), "%s", host);
		M.srv.port = (int)port;
		if (!token_file)
			return usage_err("--server on TCP needs --token-file F", s);
		_cleanup_free_ char *t = NULL;
		if (read_small(token_file, &t, 4096) < 0)
			return usage_err("--token-file: cannot read it", token_file);
		t[strcspn(t, "\r\n")] = '\0';
		snprintf(M.srv.token, sizeof(M.srv.token), "%s", t);
		explicit_bzero(t, strlen(t));
		return 0;
	}
	if (strlen(s) >= sizeof(M.srv.sock))
		return usage_err("--server: path too long", s);
	snprintf(M.srv.sock, sizeof(M.srv.sock), "%s", s);
	return 0;
}

static int parse(int argc, char **argv, const char **ceiling, bool *private_server)
{
	const char *server = NULL, *token = NULL, *policy = NULL;
	for (int i = 0; i < argc; i += 2) { /* every option but --review takes a value */
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(o, "-h") == 0 || strcmp(o, "--help") == 0) {
			fputs(usage, stdout);
			return 1;
		}
		if (strcmp(o, "--review") == 0) { /* the one flag without a value */
			M.review = true;
			i--;
			continue;
		}
		if (!v)
			return usage_err("a value expected after", o);
		if (strcmp(o, "--policy") == 0)
			policy = v;
		else if (strcmp(o, "--ceiling") == 0)
			*ceiling = v;
		else if (strcmp(o, "--server") == 0)
			server = v;
		else if (strcmp(o, "--token-file") == 0)
			token = v;
		else if (strcmp(o, "--workspace") == 0) {
			if (!realpath(v, M.workspace))
				return usage_err("--workspace: no such directory", v);
		} else if (strcmp(o, "--max-sessions") == 0) {
			char *end;
			long n = strtol(v, &end, 10);
			if (*end || n < 1 || n > 64)
				return usage_err("--max-sessions: a number from 1 to 64 expected", v);
			M.max_sessions = (int)n;
		} else
			return usage_err("unknown option", o);
	}
	if (server && *ceiling)
		return usage_err("--ceiling is the server's own (cordon serve --ceiling) with --server", NULL);
	if (token && !server)
		return usage_err("--token-file is for --server http://...", NULL);
	if (M.review && !M.workspace[0])
		return usage_err("--review keeps the changes to --workspace DIR: give one", NULL);
	if (policy && load_policy(policy) < 0)
		return -1;
	*private_server = !server;
	return server ? set_server(server, token) : 0;
}

/* The private server: cordon serve on a Unix socket in a fresh 0700
 * directory, the same binary, its output on our standard error. It is
 * ended with SIGTERM at our end (and by the kernel if we die first). */
static int start_server(const char *ceiling)
{
	const char *base = getenv("TMPDIR");
	snprintf(tmpdir, sizeof(tmpdir), "%s/cordon-mcp-XXXXXX", base && base[0] == '/' ? base : "/tmp");
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "cordon mcp: %s: %s\n", tmpdir, strerror(errno));
		tmpdir[0] = '\0';
		return -1;
	}
	char state[PATH_MAX + 8], self[PATH_MAX];
	snprintf(M.srv.sock, sizeof(M.srv.sock), "%s/serve.sock", tmpdir);
	snprintf(state, sizeof(state), "%s/state", tmpdir);
	/* as the server's reports name it: canonical (TMPDIR may be a link) */
	char canon[PATH_MAX];
	snprintf(M.private_sessions, sizeof(M.private_sessions), "%s/state/sessions/",
		 realpath(tmpdir, canon) ? canon : tmpdir);
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	char max[16];
	snprintf(max, sizeof(max), "%d", M.max_sessions + MCP_MAX_CALLS);
	const char *av[] = {self, "serve", "--socket", M.srv.sock, "--state-dir", state, "--keep-sessions", "0",
			    "--keep-runs", "0", "--max-sessions", max, ceiling ? "--ceiling" : NULL, ceiling, NULL};
	pid_t parent = getpid();
	serve_pid = fork();
	if (serve_pid < 0)
		return -1;
	if (serve_pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(1);
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0 || dup2(2, 1) < 0)
			_exit(125);
		execv(self, (char *const *)av);
		_exit(125);
	}
	/* ready once the socket answers (serve renames it into place when it
	 * listens); gone if the child exits first */
	for (int i = 0; i < 6000; i++) {
		int st;
		if (waitpid(serve_pid, &st, WNOHANG) == serve_pid) {
			serve_pid = -1;
			fprintf(stderr, "cordon mcp: the private cordon serve exited at start (above)\n");
			return -1;
		}
		struct http_resp r;
		cordon_error err;
		if (access(M.srv.sock, F_OK) == 0 && mh_request(&M.srv, "GET", "/v1/health", NULL, 0, &r, &err) == 0) {
			buf_free(&r.body);
			if (r.status == 200)
				return 0;
		}
		nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
	}
	fprintf(stderr, "cordon mcp: the private cordon serve did not answer within a minute\n");
	return -1;
}

/* What the private server leaves: its socket and the empty directories of
 * its state (every session was ended and, kept none, removed by it). Only
 * these are removed, by name: anything else stays and is named. */
static void remove_tmpdir(void)
{
	if (!tmpdir[0])
		return;
	static const char *const names[] = {"state/sessions", "state/runs", "state", "serve.sock", NULL};
	_cleanup_close_ int d = open(tmpdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	for (size_t i = 0; d >= 0 && names[i]; i++)
		if (unlinkat(d, names[i], AT_REMOVEDIR) < 0 && errno == ENOTDIR)
			unlinkat(d, names[i], 0);
	if (rmdir(tmpdir) < 0 && errno != ENOENT)
		fprintf(stderr, "cordon mcp: %s left in place: %s\n", tmpdir, strerror(errno));
}

static void stop(void)
{
	/* every call in flight ends (its exec killed), without an answer */
	pthread_mutex_lock(&M.lock);
	for (struct mcp_call *c = M.calls; c; c = c->next) {
		atomic_store(&c->cancelled, true);
		mcp_cancel_exec(c);
	}
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	while (M.ncalls > 0 && pthread_cond_timedwait(&M.idle, &M.lock, &until) == 0)
		;
	int left = M.ncalls;
	pthread_mutex_unlock(&M.lock);
	if (left)
		fprintf(stderr, "cordon mcp: %d calls still running at exit\n", left);
	/* sessions the client did not close (the server's own would end them
	 * anyway; another server would keep them to their idle timeout) */
	for (size_t i = 0; i < M.sessions.n; i++) {
		char path[128];
		struct http_resp r;
		cordon_error err;
		snprintf(path, sizeof(path), "/v1/sessions/%s", M.sessions.v[i]);
		if (mh_request(&M.srv, "DELETE", path, NULL, 0, &r, &err) < 0)
			fprintf(stderr, "cordon mcp: closing session %s: %s\n", M.sessions.v[i], err.msg);
		buf_free(&r.body);
	}
	if (serve_pid > 0) {
		kill(serve_pid, SIGTERM);
		while (waitpid(serve_pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	remove_tmpdir();
}

int cmd_mcp(int argc, char **argv)
{
	const char *ceiling = NULL;
	bool private_server = false;
	int p = parse(argc, argv, &ceiling, &private_server);
	if (p != 0)
		return p > 0 ? 0 : 2;
	/* the protocol's descriptor; 1 is standard error from here on */
	proto_fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
	if (proto_fd < 0 || dup2(2, 1) < 0) {
		fprintf(stderr, "cordon mcp: standard output: %s\n", strerror(errno));
		return 125;
	}
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (private_server && start_server(ceiling) < 0) {
		stop();
		return 125;
	}
	struct jrpc_reader r = {.max = MCP_LINE_MAX};
	char in[65536];
	while (!stopping) {
		ssize_t n = read(0, in, sizeof(in));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (jrpc_reader_push(&r, in, (size_t)n) < 0) {
			fprintf(stderr, "cordon mcp: out of memory\n");
			break;
		}
		const char *line;
		size_t len;
		int k;
		while ((k = jrpc_reader_next(&r, &line, &len)) != JRPC_NONE) {
			if (k == JRPC_TOOBIG)
				send_error(NULL, JRPC_INVALID_REQUEST, "message too large: more than 8 MiB on one line");
			else
				on_line(line, len);
		}
	}
	jrpc_reader_free(&r);
	stop();
	free(M.policy_json);
	strv_free(&M.sessions);
	strv_free(&M.ended);
	return 0;
}
