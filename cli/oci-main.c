/* cordon-oci: cordon as an OCI runtime, with runc's command line
 * (docs/oci.md). Global options come before the verb; each verb takes its own.
 * Errors: one line on stderr and, with --log, in the log (--log-format json:
 * {"level":"error","msg":...,"time":...} per line). Exit status 1 on error, as
 * runc's. */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "error.h"
#include "json.h"
#include "oci.h"

static const char *g_root = OCI_DEFAULT_ROOT, *g_log, *g_log_format = "text";
static bool g_debug, g_systemd;

static void log_line(const char *level, const char *msg)
{
	if (!g_log)
		return;
	FILE *f = fopen(g_log, "ae");
	if (!f)
		return;
	char t[64];
	oci_now(t, sizeof(t));
	if (strcmp(g_log_format, "json") == 0) {
		jwriter w = {0};
		jw_obj_begin(&w);
		jw_key(&w, "level");
		jw_str(&w, level);
		jw_key(&w, "msg");
		jw_str(&w, msg);
		jw_key(&w, "time");
		jw_str(&w, t);
		jw_obj_end(&w);
		if (jw_finish(&w) == 0) {
			/* one object per line */
			for (size_t i = 0; i < w.out.len; i++)
				if (w.out.p[i] != '\n')
					fputc(w.out.p[i] == '\t' ? ' ' : w.out.p[i], f);
			fputc('\n', f);
		}
		buf_free(&w.out);
	} else
		fprintf(f, "time=\"%s\" level=%s msg=\"%s\"\n", t, level, msg);
	fclose(f);
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	char m[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	fprintf(stderr, "cordon-oci: %s\n", m);
	log_line("error", m);
	return 1;
}

/* the library's warnings (a failed poststart or poststop hook): stderr and the log */
static void warn_line(const char *msg)
{
	fprintf(stderr, "cordon-oci: warning: %s\n", msg);
	log_line("warning", msg);
}

static int fail_err(const char *verb, const cordon_error *e)
{
	return fail("%s: %s", verb, e->msg);
}

static void usage(FILE *f)
{
	fputs("usage: cordon-oci [--root DIR] [--log FILE] [--log-format text|json] [--debug] [--systemd-cgroup]\n"
	      "                  VERB [OPTIONS] ID ...\n"
	      "verbs: create start run state kill delete list ps exec pause resume update features\n"
	      "       (docs/oci.md; cordon-oci VERB --help)\n",
	      f);
}

/* getopt_long over a verb's own arguments; unknown options are errors. */
#define VERB_OPTS(...) static const struct option lo[] = {__VA_ARGS__, {0, 0, 0, 0}}

static int need_id(int argc, char **argv, const char *verb, const char **id)
{
	if (optind >= argc)
		return fail("%s: a container id is needed", verb);
	*id = argv[optind++];
	return 0;
}

static int v_create(int argc, char **argv, bool run)
{
	struct oci_create_opts o = {.root = g_root, .bundle = ".", .systemd_cgroup = g_systemd};
	VERB_OPTS({"bundle", required_argument, 0, 'b'}, {"pid-file", required_argument, 0, 'p'},
		  {"console-socket", required_argument, 0, 'c'}, {"no-pivot", no_argument, 0, 'n'},
		  {"no-new-keyring", no_argument, 0, 'k'}, {"preserve-fds", required_argument, 0, 'f'},
		  {"detach", no_argument, 0, 'd'}, {"keep", no_argument, 0, 'K'});
	int ch;
	bool detach = false;
	char pidf[4096];
	while ((ch = getopt_long(argc, argv, "+b:d", lo, NULL)) != -1) {
		switch (ch) {
		case 'b': o.bundle = optarg; break;
		case 'p':
			if (optarg[0] != '/' && getcwd(pidf, sizeof(pidf) - strlen(optarg) - 2)) {
				strcat(pidf, "/");
				strcat(pidf, optarg);
				o.pid_file = pidf;
			} else
				o.pid_file = optarg;
			break;
		case 'c': o.console_socket = optarg; break;
		case 'n': o.no_pivot = true; break;
		case 'd': detach = true; break;
		case 'f': {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (*end || end == optarg || n < 0 || n > 65536)
				return fail("%s: --preserve-fds %s: not a count of descriptors", run ? "run" : "create",
					    optarg);
			o.preserve_fds = (int)n;
			break;
		}
		case 'k': case 'K': break;
		default: return fail("%s: unknown option %s", run ? "run" : "create", argv[optind - 1]);
		}
	}
	if (need_id(argc, argv, run ? "run" : "create", &o.id))
		return 1;
	o.id = o.id;
	cordon_error e = {0};
	pid_t pid;
	if (oci_create(&o, &pid, &e) < 0)
		return fail_err(run ? "run" : "create", &e);
	if (!run)
		return 0;
	if (oci_start(g_root, o.id, &e) < 0) {
		int r = fail_err("run", &e);
		oci_delete(g_root, o.id, true, &e);
		return r;
	}
	if (detach)
		return 0;
	int st = 0;
	oci_wait(g_root, o.id, &st, &e);
	oci_delete(g_root, o.id, true, &e);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int simple_id(int argc, char **argv, const char *verb, const char **id)
{
	VERB_OPTS({"help", no_argument, 0, 'h'});
	if (getopt_long(argc, argv, "+", lo, NULL) != -1)
		return fail("%s: unknown option %s", verb, argv[optind - 1]);
	return need_id(argc, argv, verb, id);
}

static int v_state(int argc, char **argv)
{
	const char *id = NULL;
	if (simple_id(argc, argv, "state", &id))
		return 1;
	cordon_error e = {0};
	int dfd;
	struct oci_state s;
	if (oci_state_open(g_root, id, &dfd, &e) < 0)
		return fail_err("state", &e);
	if (oci_state_read(dfd, &s, &e) < 0) {
		/* no state.json yet: creating */
		memset(&s, 0, sizeof(s));
		snprintf(s.id, sizeof(s.id), "%s", id);
	}
	buf b = {0};
	oci_state_json(&s, oci_state_status(dfd, &s), &b);
	printf("%.*s\n", (int)b.len, b.p);
	buf_free(&b);
	oci_state_free(&s);
	close(dfd);
	return 0;
}

static int v_kill(int argc, char **argv)
{
	VERB_OPTS({"all", no_argument, 0, 'a'});
	bool all = false;
	int ch;
	while ((ch = getopt_long(argc, argv, "+a", lo, NULL)) != -1) {
		if (ch == 'a')
			all = true;
		else
			return fail("kill: unknown option %s", argv[optind - 1]);
	}
	const char *id = NULL;
	if (need_id(argc, argv, "kill", &id))
		return 1;
	int sig = SIGTERM;
	if (optind < argc && (sig = oci_signal_number(argv[optind])) < 0)
		return fail("kill: unknown signal \"%s\"", argv[optind]);
	cordon_error e = {0};
	return oci_kill(g_root, id, sig, all, &e) < 0 ? fail_err("kill", &e) : 0;
}

static int v_delete(int argc, char **argv)
{
	VERB_OPTS({"force", no_argument, 0, 'f'});
	bool force = false;
	int ch;
	while ((ch = getopt_long(argc, argv, "+f", lo, NULL)) != -1) {
		if (ch == 'f')
			force = true;
		else
			return fail("delete: unknown option %s", argv[optind - 1]);
	}
	const char *id = NULL;
	if (need_id(argc, argv, "delete", &id))
		return 1;
	cordon_error e = {0};
	if (oci_delete(g_root, id, force, &e) < 0) {
		/* runc: delete --force of a container that does not exist is not an error */
		if (force && e.code == ENOENT)
			return 0;
		return fail_err("delete", &e);
	}
	return 0;
}

static int v_list(int argc, char **argv)
{
	VERB_OPTS({"format", required_argument, 0, 'f'}, {"quiet", no_argument, 0, 'q'});
	const char *fmt = "table";
	bool quiet = false;
	int ch;
	while ((ch = getopt_long(argc, argv, "+f:q", lo, NULL)) != -1) {
		if (ch == 'f')
			fmt = optarg;
		else if (ch == 'q')
			quiet = true;
		else
			return fail("list: unknown option %s", argv[optind - 1]);
	}
	bool json = strcmp(fmt, "json") == 0;
	if (!json && strcmp(fmt, "table") != 0)
		return fail("list: --format %s: table or json", fmt);
	int rfd = -1;
	cordon_error re = {0};
	if (oci_safe_dir_open(g_root, false, 0, &rfd, &re) < 0)
		return fail_err("list", &re);
	int lfd = rfd < 0 ? -1 : openat(rfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd >= 0)
		close(rfd);
	DIR *d = lfd < 0 ? NULL : fdopendir(lfd);
	if (!d && lfd >= 0)
		close(lfd);
	jwriter w = {0};
	jw_arr_begin(&w);
	if (!json && !quiet)
		printf("%-40s %-8s %-10s %s\n", "ID", "PID", "STATUS", "BUNDLE");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "reports") == 0)
			continue;
		int dfd;
		struct oci_state s;
		cordon_error e;
		if (oci_state_open(g_root, de->d_name, &dfd, &e) < 0)
			continue;
		if (oci_state_read(dfd, &s, &e) < 0) {
			close(dfd);
			continue;
		}
		enum oci_status st = oci_state_status(dfd, &s);
		if (json) {
			jw_obj_begin(&w);
			jw_key(&w, "id");
			jw_str(&w, s.id);
			jw_key(&w, "pid");
			jw_int(&w, st == OCI_STOPPED ? 0 : s.pid);
			jw_key(&w, "status");
			jw_str(&w, oci_status_names[st]);
			jw_key(&w, "bundle");
			jw_str(&w, s.bundle);
			jw_key(&w, "created");
			jw_str(&w, s.created);
			jw_obj_end(&w);
		} else if (quiet)
			printf("%s\n", s.id);
		else
			printf("%-40s %-8d %-10s %s\n", s.id, st == OCI_STOPPED ? 0 : s.pid, oci_status_names[st], s.bundle);
		oci_state_free(&s);
		close(dfd);
	}
	if (d)
		closedir(d);
	jw_arr_end(&w);
	if (json && jw_finish(&w) == 0)
		printf("%.*s\n", (int)w.out.len, w.out.p);
	buf_free(&w.out);
	return 0;
}

static int v_ps(int argc, char **argv)
{
	VERB_OPTS({"format", required_argument, 0, 'f'});
	const char *fmt = "table";
	int ch;
	while ((ch = getopt_long(argc, argv, "+f:", lo, NULL)) != -1) {
		if (ch == 'f')
			fmt = optarg;
		else
			return fail("ps: unknown option %s", argv[optind - 1]);
	}
	const char *id = NULL;
	if (need_id(argc, argv, "ps", &id))
		return 1;
	pid_t *p = NULL;
	size_t n = 0;
	cordon_error e = {0};
	if (oci_ps(g_root, id, &p, &n, &e) < 0)
		return fail_err("ps", &e);
	if (strcmp(fmt, "json") == 0) {
		printf("[");
		for (size_t i = 0; i < n; i++)
			printf("%s%d", i ? "," : "", (int)p[i]);
		printf("]\n");
	} else {
		printf("PID\n");
		for (size_t i = 0; i < n; i++)
			printf("%d\n", (int)p[i]);
	}
	free(p);
	return 0;
}

static int v_exec(int argc, char **argv)
{
	struct oci_exec_opts o = {0};
	VERB_OPTS({"process", required_argument, 0, 'p'}, {"detach", no_argument, 0, 'd'},
		  {"pid-file", required_argument, 0, 'P'}, {"console-socket", required_argument, 0, 'c'},
		  {"tty", no_argument, 0, 't'}, {"cwd", required_argument, 0, 'w'}, {"env", required_argument, 0, 'e'},
		  {"user", required_argument, 0, 'u'}, {"preserve-fds", required_argument, 0, 'f'},
		  {"no-new-privs", no_argument, 0, 'N'}, {"cap", required_argument, 0, 'C'});
	int ch;
	while ((ch = getopt_long(argc, argv, "+p:dtw:e:u:", lo, NULL)) != -1) {
		switch (ch) {
		case 'p': o.process_file = optarg; break;
		case 'd': o.detach = true; break;
		case 'P': o.pid_file = optarg; break;
		case 'c': o.console_socket = optarg; break;
		case 't': o.tty = true; break;
		case 'w': o.cwd = optarg; break;
		case 'e': strv_push(&o.env, optarg); break;
		case 'u': o.user = optarg; break;
		case 'f': case 'N': case 'C': break;
		default: return fail("exec: unknown option %s", argv[optind - 1]);
		}
	}
	const char *id = NULL;
	if (need_id(argc, argv, "exec", &id))
		return 1;
	for (int i = optind; i < argc; i++)
		strv_push(&o.args, argv[i]);
	if (!o.process_file && o.args.n == 0)
		return fail("exec: a command (or --process FILE) is needed");
	cordon_error e = {0};
	int st = 0;
	int r = oci_exec(g_root, id, &o, &st, &e);
	strv_free(&o.args);
	strv_free(&o.env);
	if (r < 0)
		return fail_err("exec", &e);
	if (o.detach)
		return 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int v_update(int argc, char **argv)
{
	VERB_OPTS({"resources", required_argument, 0, 'r'}, {"memory", required_argument, 0, 'm'},
		  {"pids-limit", required_argument, 0, 'P'});
	const char *file = NULL;
	int ch;
	while ((ch = getopt_long(argc, argv, "+r:", lo, NULL)) != -1) {
		if (ch == 'r')
			file = optarg;
		else
			return fail("update: unknown option %s (cordon-oci takes --resources FILE|-)", argv[optind - 1]);
	}
	const char *id = NULL;
	if (need_id(argc, argv, "update", &id))
		return 1;
	if (!file)
		return fail("update: --resources FILE|- is needed");
	cordon_error e = {0};
	return oci_update(g_root, id, file, &e) < 0 ? fail_err("update", &e) : 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"root", required_argument, 0, 'r'}, {"log", required_argument, 0, 'l'},
		{"log-format", required_argument, 0, 'F'}, {"debug", no_argument, 0, 'd'},
		{"systemd-cgroup", no_argument, 0, 's'}, {"version", no_argument, 0, 'v'},
		{"help", no_argument, 0, 'h'}, {"rootless", required_argument, 0, 'R'},
		{"criu", required_argument, 0, 'C'}, {0, 0, 0, 0}};
	int ch;
	opterr = 0;
	oci_set_warn(warn_line);
	while ((ch = getopt_long(argc, argv, "+hv", lo, NULL)) != -1) {
		switch (ch) {
		case 'r': g_root = optarg; break;
		case 'l': g_log = optarg; break;
		case 'F':
			if (strcmp(optarg, "text") && strcmp(optarg, "json"))
				return fail("--log-format %s: text or json", optarg);
			g_log_format = optarg;
			break;
		case 'd': g_debug = true; break;
		case 's': g_systemd = true; break;
		case 'R': case 'C': break;
		case 'v':
			printf("cordon-oci version 0.1.0\nspec: %s\n", OCI_VERSION);
			return 0;
		case 'h': usage(stdout); return 0;
		default:
			return fail("unknown global option %s (cordon-oci --help)", argv[optind - 1]);
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 1;
	}
	if (g_root[0] != '/')
		return fail("--root %s: an absolute path is needed", g_root);
	const char *verb = argv[optind];
	int vargc = argc - optind;
	char **vargv = argv + optind;
	optind = 1;
	opterr = 0;
	const char *id = NULL;
	cordon_error e = {0};
	if (strcmp(verb, "create") == 0)
		return v_create(vargc, vargv, false);
	if (strcmp(verb, "run") == 0)
		return v_create(vargc, vargv, true);
	if (strcmp(verb, "start") == 0)
		return simple_id(vargc, vargv, verb, &id) ? 1 : oci_start(g_root, id, &e) < 0 ? fail_err(verb, &e) : 0;
	if (strcmp(verb, "pause") == 0 || strcmp(verb, "resume") == 0)
		return simple_id(vargc, vargv, verb, &id)                            ? 1
		       : oci_pause(g_root, id, verb[0] == 'p', &e) < 0 ? fail_err(verb, &e) : 0;
	if (strcmp(verb, "state") == 0)
		return v_state(vargc, vargv);
	if (strcmp(verb, "kill") == 0)
		return v_kill(vargc, vargv);
	if (strcmp(verb, "delete") == 0)
		return v_delete(vargc, vargv);
	if (strcmp(verb, "list") == 0)
		return v_list(vargc, vargv);
	if (strcmp(verb, "ps") == 0)
		return v_ps(vargc, vargv);
	if (strcmp(verb, "exec") == 0)
		return v_exec(vargc, vargv);
	if (strcmp(verb, "update") == 0)
		return v_update(vargc, vargv);
	if (strcmp(verb, "features") == 0) {
		buf b = {0};
		if (oci_features_json(&b) < 0)
			return fail("features: out of memory");
		printf("%.*s\n", (int)b.len, b.p);
		buf_free(&b);
		return 0;
	}
	return fail("unknown verb \"%s\" (cordon-oci --help)", verb);
}
