/* cordon changes | apply | discard DIR: a change set kept by a review-mode
 * run (or by an apply that failed or was interrupted). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "changeset.h"
#include "cleanup.h"
#include "cli-changes.h"
#include "error.h"
#include "json.h"
#include "opts.h"
#include "snapshot.h"

/* The layer and the path below it of a record (relative to layer 0's
 * host directory, or absolute). */
static const char *record_layer(const struct changeset *cs, const char *path, size_t *layer)
{
	if (path[0] != '/') {
		*layer = 0;
		return path;
	}
	for (size_t i = 0; i < cs->nlayers; i++) {
		size_t n = strlen(cs->host[i]);
		if (strncmp(path, cs->host[i], n) == 0 && path[n] == '/') {
			*layer = i;
			return path + n + 1;
		}
	}
	return NULL;
}

/* A name the run chose, made safe for a terminal: control bytes (an escape
 * sequence, a newline that fakes a line) as \xNN, into out. */
static const char *safe(const char *s, char *out, size_t sz)
{
	size_t k = 0;
	for (; *s && k + 5 < sz; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f || c == '\\')
			k += (size_t)snprintf(out + k, sz - k, "\\x%02x", c);
		else
			out[k++] = (char)c;
	}
	out[k] = '\0';
	return out;
}

/* fd (O_PATH, taken) reopened for reading if it is a regular file; else -1
 * (a FIFO would block diff, a device node is never opened). */
static int reopen_regular(int fd)
{
	struct stat st;
	int r = -1;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		char p[64];
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		r = open(p, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	}
	if (fd >= 0)
		close(fd);
	return r;
}

/* diff -u of the host's file and the change set's, both opened here
 * without following any link, regular files only, and handed to diff as
 * /dev/fd/3 and 4. */
static void diff_one(const struct changeset *cs, const struct file_record *r)
{
	size_t layer;
	const char *rel = record_layer(cs, r->path, &layer);
	if (!rel || (!r->regular && r->change != CHANGE_DELETED))
		return;
	char host[8192];
	snprintf(host, sizeof(host), "%s/%s", cs->host[layer], rel);
	_cleanup_close_ int up = changeset_layer_fd(cs, layer, "upper", &(cordon_error){0});
	int a = r->change == CHANGE_CREATED ? open("/dev/null", O_RDONLY | O_CLOEXEC) :
		reopen_regular(open_root(host, O_PATH));
	int b = r->change == CHANGE_DELETED || up < 0 ? open("/dev/null", O_RDONLY | O_CLOEXEC) :
		reopen_regular(open_beneath(up, rel, O_PATH));
	if (a < 0 || b < 0) {
		if (a >= 0)
			close(a);
		if (b >= 0)
			close(b);
		return;
	}
	char la[8300], lb[8300], name[8192];
	snprintf(la, sizeof(la), "a/%s", safe(r->path, name, sizeof(name)));
	snprintf(lb, sizeof(lb), "b/%s", name);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (dup2(a, 3) < 0 || dup2(b, 4) < 0)
			_exit(127);
		execlp("diff", "diff", "-u", "--label", la, "--label", lb, "/dev/fd/3", "/dev/fd/4", (char *)NULL);
		_exit(127);
	}
	close(a);
	close(b);
	int st;
	if (pid > 0)
		waitpid(pid, &st, 0);
}

static void print_json(const struct changeset *cs, const struct file_list *l, const strv *refused,
		       const strv *protected)
{
	jwriter jw;
	memset(&jw, 0, sizeof(jw));
	jwriter *w = &jw;
	jw_obj_begin(w);
	jw_key(w, "dir");
	jw_str(w, cs->dir);
	jw_key(w, "hosts");
	jw_str_array(w, (const char *const *)cs->host, cs->nlayers);
	jw_key(w, "interrupted");
	jw_bool(w, changeset_interrupted(cs));
	jw_key(w, "changes");
	jw_arr_begin(w);
	for (size_t i = 0; i < l->n; i++) {
		const struct file_record *r = &l->r[i];
		jw_obj_begin(w);
		jw_key(w, "path");
		jw_str(w, r->path);
		jw_key(w, "change");
		jw_str(w, change_name(r->change));
		jw_key(w, "type");
		jw_str(w, r->regular ? "file" : "other");
		jw_key(w, "bytes");
		jw_uint(w, r->bytes);
		jw_key(w, "sha256");
		if (r->sha256[0])
			jw_str(w, r->sha256);
		else
			jw_null(w);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_key(w, "truncated");
	jw_bool(w, l->truncated);
	jw_key(w, "refused");
	jw_str_array(w, (const char *const *)refused->v, refused->n);
	jw_key(w, "protected");
	jw_str_array(w, (const char *const *)protected->v, protected->n);
	jw_obj_end(w);
	if (jw_finish(w) == 0)
		printf("%.*s\n", (int)w->out.len, w->out.p);
	buf_free(&w->out);
}

static int cmd_list(struct changeset *cs, bool json, bool diff)
{
	struct file_list l;
	strv refused = {0}, protected = {0};
	cordon_error err = {0};
	file_list_start(&l);
	struct changeset_held held = {&refused, &protected, NULL};
	if (changeset_list(cs, cs->host[0], &l, &held, NULL, &err) < 0) {
		char m[sizeof(err.msg) * 4 + 8];
		fprintf(stderr, "cordon: %s: %s\n", cs->dir, safe(err.msg, m, sizeof(m)));
		file_list_free(&l);
		strv_free(&refused);
		strv_free(&protected);
		return 2;
	}
	if (json) {
		print_json(cs, &l, &refused, &protected);
	} else if (diff) {
		for (size_t i = 0; i < l.n; i++)
			diff_one(cs, &l.r[i]);
	} else {
		char name[16384];
		for (size_t i = 0; i < l.n; i++) {
			const struct file_record *r = &l.r[i];
			printf("%-9s %10llu %s %s\n", change_name(r->change), (unsigned long long)r->bytes,
			       r->sha256[0] ? r->sha256 : "-", safe(r->path, name, sizeof(name)));
		}
		for (size_t i = 0; i < refused.n; i++)
			printf("refused   %s\n", safe(refused.v[i], name, sizeof(name)));
		for (size_t i = 0; i < protected.n; i++)
			printf("protected %s (held back: cordon apply --include-protected applies it)\n",
			       safe(protected.v[i], name, sizeof(name)));
		if (l.truncated)
			printf("(the list is cut: %s)\n", cut_name(l.cut));
		if (changeset_interrupted(cs))
			printf("(an apply of it was interrupted: cordon apply completes it, cordon discard rolls it back)\n");
	}
	file_list_free(&l);
	strv_free(&refused);
	strv_free(&protected);
	return 0;
}

int cmd_changes(const char *verb, int argc, char **argv)
{
	if (cli_wants_help(argc, argv)) {
		fputs(cli_usage(verb), stdout);
		return 0;
	}
	const char *dir = NULL;
	bool json = false, diff = false, force = false, include_protected = false;
	long crash_after = 0;
	for (int i = 0; i < argc; i++) {
		bool list = strcmp(verb, "changes") == 0, apply = strcmp(verb, "apply") == 0;
		if (list && strcmp(argv[i], "--json") == 0)
			json = true;
		else if (list && strcmp(argv[i], "--diff") == 0)
			diff = true;
		else if (apply && strcmp(argv[i], "--force") == 0)
			force = true;
		else if (apply && strcmp(argv[i], "--include-protected") == 0)
			include_protected = true;
		else if (apply && strcmp(argv[i], "--test-apply-crash-after") == 0 && i + 1 < argc)
			crash_after = strtol(argv[++i], NULL, 10); /* tests only */
		else if (argv[i][0] != '-' && !dir)
			dir = argv[i];
		else {
			fprintf(stderr, "cordon %s: unexpected argument \"%s\"\n%s", verb, argv[i], cli_usage(verb));
			return 2;
		}
	}
	if (!dir) {
		fprintf(stderr, "cordon %s: which change set? (the report's changes.dir)\n%s", verb, cli_usage(verb));
		return 2;
	}
	struct changeset cs;
	cordon_error err = {0};
	if (changeset_open(&cs, dir, &err) < 0) {
		fprintf(stderr, "cordon: %s\n", err.msg);
		changeset_close(&cs);
		return 2;
	}
	int rc = 0;
	if (strcmp(verb, "changes") == 0) {
		rc = cmd_list(&cs, json, diff);
	} else if (strcmp(verb, "apply") == 0) {
		strv refused = {0}, protected = {0};
		struct changeset_held held = {&refused, &protected, NULL};
		struct changeset_apply_opts o = {.force = force, .include_protected = include_protected,
						 .crash_after = crash_after};
		if (changeset_apply(&cs, &o, &held, &err) < 0) {
			char m[sizeof(err.msg) * 4 + 8];
			fprintf(stderr, "cordon: apply %s: %s\n", dir, safe(err.msg, m, sizeof(m)));
			rc = 1;
		}
		char name[16384];
		for (size_t i = 0; i < refused.n; i++)
			fprintf(stderr, "cordon: not applied: %s\n", safe(refused.v[i], name, sizeof(name)));
		for (size_t i = 0; i < protected.n; i++)
			fprintf(stderr, "cordon: not applied: %s: a protected path (--include-protected applies it)\n",
				safe(protected.v[i], name, sizeof(name)));
		if (rc == 0 && (refused.n || protected.n))
			fprintf(stderr, "cordon: %s keeps what was not applied\n", dir);
		strv_free(&refused);
		strv_free(&protected);
	} else if (changeset_discard(&cs, &err) < 0) {
		char m[sizeof(err.msg) * 4 + 8];
		fprintf(stderr, "cordon: discard %s: %s\n", dir, safe(err.msg, m, sizeof(m)));
		rc = 1;
	}
	changeset_close(&cs);
	return rc;
}
