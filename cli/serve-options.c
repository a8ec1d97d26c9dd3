/* cordon serve's command line: the options read into the server's state
 * (S), checked, and what they name (token, ceiling, state directory, warm
 * policy) loaded. */
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

/* --socket-mode MODE (octal: read-write for the owner, at most 0666) and
 * --socket-group GROUP (a name or a gid). */
static int serve_socket_opt(const char *o, const char *v)
{
	char *end;
	errno = 0;
	if (strcmp(o, "--socket-mode") == 0) {
		long m = strtol(v, &end, 8);
		if (errno || *end || !*v || m < 0 || (m & ~0666L) || (m & 0600) != 0600) {
			fprintf(stderr, "cordon serve: --socket-mode %s: an octal mode with rw for the owner and no more than 0666 expected (0600, 0660, 0666)\n", v);
			return -1;
		}
		S.sock_mode = (mode_t)m;
		return 0;
	}
	struct group gr, *res = NULL;
	char grbuf[4096];
	long g = strtol(v, &end, 10);
	if (*v && !*end && !errno && g >= 0 && g < 0xffffffffL)
		S.sock_gid = (gid_t)g;
	else if (getgrnam_r(v, &gr, grbuf, sizeof(grbuf), &res) == 0 && res)
		S.sock_gid = res->gr_gid;
	else {
		fprintf(stderr, "cordon serve: --socket-group %s: no such group\n", v);
		return -1;
	}
	S.sock_gid_set = true;
	return 0;
}

static int usage_err(const char *msg, const char *arg)
{
	fprintf(stderr, "cordon serve: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	return 2;
}

/* The ceiling every session and run gets (--ceiling, $CORDON_CEILING,
 * /etc/cordon/ceiling.json). A root server that admits anyone but root must
 * have one: its clients act with root's rights on the host otherwise. */
static int load_ceiling(void)
{
	static char path[PATH_MAX];
	cordon_error e = {0};
	ceiling_resolve(S.ceiling, getenv("CORDON_CEILING"), path, sizeof(path), &S.have_ceil, &e);
	bool others = S.listen != NULL;
	for (int i = 0; i < S.nallow; i++)
		others |= S.allow[i] != 0;
	if (!S.have_ceil && geteuid() == 0 && others) {
		fprintf(stderr, "cordon serve: a server running as root that admits other users (--allow-uid, --listen) "
				"needs a ceiling (--ceiling FILE or /etc/cordon/ceiling.json)\n");
		return -1;
	}
	if (S.have_ceil && ceiling_load(path, &S.ceil, &e) < 0) {
		fprintf(stderr, "cordon serve: %s\n", e.msg);
		return -1;
	}
	return 0;
}

/* The bearer token: a regular file (not a symlink) no one else may read. */
static int read_token(const char *path)
{
	if (!path) {
		usage_err("--listen needs --token-file F with the bearer token", NULL);
		return -1;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "cordon serve: --token-file %s: %s\n", path,
			errno == ELOOP ? "a symlink (give the file itself)" : strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	const char *bad = !S_ISREG(st.st_mode) ? "not a regular file" :
			  st.st_mode & 077 ? "readable or writable by group or others (chmod 600 it)" : NULL;
	buf b = {0};
	if (!bad && (ipc_read_fd(fd, sizeof(S.token) - 1, &b) < 0 || !b.len))
		bad = "could not be read, or is empty";
	close(fd);
	if (!bad) {
		snprintf(S.token, sizeof(S.token), "%.*s", (int)b.len, b.p);
		S.token[strcspn(S.token, "\r\n")] = '\0';
		if (strlen(S.token) < 16)
			bad = "the token must have at least 16 characters";
	}
	buf_free(&b);
	if (bad) {
		fprintf(stderr, "cordon serve: --token-file %s: %s\n", path, bad);
		return -1;
	}
	return 0;
}

/* The options into S (and the token file's and warm policy's names):
 * -1 to go on, else the exit status (0 after --help, 2 on a bad option). */
int serve_parse_options(int argc, char **argv, const char **token_file, const char **warm_policy)
{
	cordon_error e;
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
			fputs(SERVE_USAGE, stdout);
			return 0;
		}
		if (strcmp(o, "--insecure-tcp") == 0) {
			tls_insecure();
			continue;
		}
		if (!v)
			return usage_err("option needs a value", o);
		i++;
		if (strcmp(o, "--socket") == 0)
			S.socket_path = v;
		else if (strcmp(o, "--listen") == 0)
			S.listen = v;
		else if (strcmp(o, "--token-file") == 0)
			*token_file = v;
		else if (strcmp(o, "--state-dir") == 0)
			S.state_dir = v;
		else if (strcmp(o, "--ceiling") == 0)
			S.ceiling = v;
		else if (strcmp(o, "--warm-policy") == 0)
			*warm_policy = v;
		else if (strcmp(o, "--socket-mode") == 0 || strcmp(o, "--socket-group") == 0) {
			if (serve_socket_opt(o, v) < 0)
				return 2;
		}
		else if (strcmp(o, "--allow-uid") == 0 || strcmp(o, "--tcp-uid") == 0) {
			char *end;
			long u = strtol(v, &end, 10);
			if (*end || u < 0 || u >= 0xffffffffL || S.nallow >= MAX_ALLOW)
				return usage_err("a uid expected", o);
			if (o[2] == 't')
				S.tcp_uid = (uid_t)u;
			else
				S.allow[S.nallow++] = (uid_t)u;
		} else if (strcmp(o, "--max-sessions") == 0 || strcmp(o, "--max-sessions-per-client") == 0 ||
			   strcmp(o, "--keep-runs") == 0 || strcmp(o, "--warm") == 0 || strcmp(o, "--keep-sessions") == 0) {
			char *end;
			long n = strtol(v, &end, 10);
			if (*end || n < 0 || n > 100000)
				return usage_err("a count expected", o);
			if (strcmp(o, "--keep-sessions") == 0)
				S.keep_sessions = (int)n;
			else if (o[2] == 'k')
				S.keep_runs = (int)n;
			else if (o[2] == 'w') {
				if (n > WARM_MAX)
					return usage_err("--warm: at most " WARM_MAX_S " sessions in the pool", v);
				S.warm = (int)n;
			}
			else if (strlen(o) > 15)
				S.max_per_client = (int)n;
			else
				S.max_sessions = (int)n;
		} else if (strcmp(o, "--max-connections") == 0 || strcmp(o, "--connection-timeout") == 0 ||
			   strcmp(o, "--max-runs") == 0 || strcmp(o, "--max-runs-per-client") == 0 ||
			   strcmp(o, "--run-output-max") == 0) {
			/* --max-runs*: in the usage; the others are for tests and
			 * unusual hosts (docs/api.md). */
			char *end;
			long n = strtol(v, &end, 10);
			if (*end || n < 1 || n > (o[2] == 'r' ? (1L << 30) : 100000))
				return usage_err("a positive count expected", o);
			if (strcmp(o, "--max-connections") == 0)
				S.max_conns = (unsigned)n;
			else if (o[2] == 'c')
				S.conn_timeout = (unsigned)n;
			else if (o[2] == 'r')
				S.run_out_max = (size_t)n;
			else if (strlen(o) > 10)
				S.max_runs_client = (int)n;
			else
				S.max_runs = (int)n;
		} else if (strcmp(o, "--worker-timeout") == 0 || strcmp(o, "--stop-grace") == 0) {
			/* For tests and unusual hosts (docs/api.md). */
			uint64_t ns;
			if (parse_duration(v, &ns, &e) < 0 || ns < 1000000ULL)
				return usage_err("a duration of at least 1ms expected", o);
			if (o[2] == 'w')
				S.worker_ns = ns;
			else
				S.grace_ns = ns;
		} else if (strcmp(o, "--max-pause") == 0) {
			uint64_t ns;
			if (parse_duration(v, &ns, &e) < 0)
				return usage_err(e.msg, o);
			if (!ns)
				return usage_err("a positive duration expected (a pause is always bounded)", o);
			S.max_pause_ns = ns;
		} else if (strcmp(o, "--idle-timeout") == 0 || strcmp(o, "--session-timeout") == 0) {
			uint64_t ns;
			if (parse_duration(v, &ns, &e) < 0)
				return usage_err(e.msg, o);
			if (o[2] == 'i')
				S.idle_ns = ns;
			else
				S.timeout_ns = ns;
		} else {
			int lr = limits_option(o, v);
			if (lr == 0)
				lr = tls_option(o, v);
			if (lr < 0)
				return 2;
			if (lr == 0)
				return usage_err("unknown option", o);
		}
	}
	return -1;
}

/* The options together: one of the two sockets, the socket's mode, the
 * token, the state directory named, the ceiling; the per-client counts
 * at most the totals. 0, or the exit status. */
int serve_check_options(const char *token_file)
{
	if (!!S.socket_path == !!S.listen)
		return usage_err("give one of --socket PATH or --listen 127.0.0.1:PORT --token-file F", NULL);
	if (!S.sock_mode)
		S.sock_mode = S.sock_gid_set ? 0660 : 0600;
	if (S.listen && (S.sock_mode != 0600 || S.sock_gid_set))
		return usage_err("--socket-mode and --socket-group are for --socket", NULL);
	/* An --allow-uid that cannot reach the socket is said at once. */
	for (int i = 1; S.socket_path && !(S.sock_mode & 006) && !(S.sock_gid_set && (S.sock_mode & 060)) && i < S.nallow; i++)
		if (S.allow[i] != 0 && S.allow[i] != geteuid())
			fprintf(stderr, "cordon serve: --allow-uid %u: the socket is mode %04o of uid %u, which uid %u cannot open (--socket-group GROUP, --socket-mode 0660 or 0666)\n",
				(unsigned)S.allow[i], (unsigned)S.sock_mode, (unsigned)geteuid(), (unsigned)S.allow[i]);
	if (tls_check(S.listen) < 0 || (S.listen && read_token(token_file) < 0))
		return 2;
	if (!S.state_dir)
		return usage_err("--state-dir DIR is required (reports and workspaces are kept there)", NULL);
	if (load_ceiling() < 0)
		return 2;
	if (!S.max_per_client || S.max_per_client > S.max_sessions)
		S.max_per_client = S.max_sessions;
	if (!S.max_runs_client || S.max_runs_client > S.max_runs)
		S.max_runs_client = S.max_runs;
	return 0;
}

/* The state directory (made, absolute, under the ceiling's writes), its
 * runs/ and sessions/ and what they keep. 0, or the exit status. */
int serve_state_dirs(void)
{
	static char state_abs[PATH_MAX];
	char sub[PATH_MAX];
	if (mkdir_p(S.state_dir, 0700) < 0 || !realpath(S.state_dir, state_abs))
		return usage_err(strerror(errno), S.state_dir);
	S.state_dir = state_abs;
	if (S.have_ceil && !peer_ceiling_writes(S.ceil.p, S.state_dir)) {
		fprintf(stderr, "cordon serve: --state-dir %s: not under any write prefix of the ceiling's filesystem.write, and every session's and run's workspace is below it (%s/sessions/ID/work): every one would be refused; add it to the ceiling\n",
			S.state_dir, S.state_dir);
		return 2;
	}
	snprintf(sub, sizeof(sub), "%s/runs", S.state_dir);
	mkdir_p(sub, 0700);
	load_kept_runs();
		snprintf(sub, sizeof(sub), "%s/sessions", S.state_dir);
	mkdir_p(sub, 0700);
	kept_sessions_init(S.state_dir, S.keep_sessions, S.worker_ns);
	if (S.warm > S.max_sessions)
		return usage_err("--warm: more than --max-sessions", NULL);
	return 0;
}

/* --warm-policy F: parsed once (a policy that does not parse is refused
 * now, not at every refill) and kept re-serialized, the form requests'
 * policies are compared in. 0, or the exit status. */
int serve_warm_policy(const char *warm_policy)
{
	cordon_error e;
	if (warm_policy) {
		buf t = {0};
		FILE *f = fopen(warm_policy, "re");
		char chunk[4096];
		for (size_t k; f && (k = fread(chunk, 1, sizeof(chunk), f)) > 0 && t.len < (1u << 20);)
			buf_append(&t, chunk, k);
		if (f)
			fclose(f);
		jnode *j = t.len ? json_parse(t.p, t.len, &e) : NULL;
		buf_free(&t);
		if (!j || j->type != J_OBJ) {
			json_free(j);
			return usage_err("--warm-policy: a JSON policy object expected", warm_policy);
		}
		S.warm_policy = node_text(j);
		json_free(j);
		if (!S.warm)
			return usage_err("--warm-policy needs --warm N", NULL);
	}
	return 0;
}
