/* cordon changes | apply | discard DIR: a change set kept by a review-mode
 * run (or by an apply that failed or was interrupted). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "changeset.h"
#include "cleanup.h"
#include "cli-changes.h"
#include "cs-apply.h"
#include "cs-rollback.h"
#include "cs-walk.h"
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

/* The length of the valid UTF-8 sequence at s that a terminal shows as
 * text (2 to 4 bytes), or 0: an invalid or overlong sequence, a C1 control
 * (U+0080-U+009F: CSI among them), or a bidirectional override or isolate
 * (U+202A-U+202E, U+2066-U+2069), which would show a name other than it is. */
static size_t utf8_text(const unsigned char *s)
{
	size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
	if (!n || s[0] > 0xf4)
		return 0;
	uint32_t cp = s[0] & (0xff >> (n + 1));
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
	if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp <= 0x9f ||
	    (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
		return 0;
	return n;
}

/* A name the run chose, made safe for a terminal: control bytes (an escape
 * sequence, a newline that fakes a line) and every byte that is not part
 * of printable UTF-8 (above) as \xNN, into out. */
static const char *safe(const char *s, char *out, size_t sz)
{
	size_t k = 0;
	const unsigned char *u = (const unsigned char *)s;
	while (*u && k + 5 < sz) {
		size_t n = *u >= 0x80 ? utf8_text(u) : 0;
		if (n && k + n < sz) {
			memcpy(out + k, u, n);
			k += n, u += n;
		} else if (*u < 0x20 || *u >= 0x7f || *u == '\\') {
			k += (size_t)snprintf(out + k, sz - k, "\\x%02x", *u++);
		} else {
			out[k++] = (char)*u++;
		}
	}
	out[k] = '\0';
	return out;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
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

/* The largest file handed to diff, which reads each whole into memory: a
 * run can make a file sparse and as large as the filesystem allows (a few
 * bytes of text, then a hole of a terabyte). Past it the file is named. */
#define DIFF_FILE_MAX (16ULL << 20)

/* The unified diff of a file against nothing (created: every line added;
 * else deleted: every line removed), written here: one diff process per
 * created or deleted file was a fork storm for a run that made 20,000
 * (outside review). What diff -u prints: the hunk "@@ -0,0 +1,N @@" (",N"
 * left out for one line), "\ No newline at end of file" after a last line
 * without one, nothing for an empty file, and for a file with a NUL byte
 * (anywhere: the file is read whole, at most DIFF_FILE_MAX) "Binary files
 * ... differ". fd is taken. */
static void one_sided(int fd, size_t size, const char *la, const char *lb, bool created)
{
	char *data = size ? malloc(size) : NULL;
	size_t got = 0;
	while (data && got < size) {
		ssize_t n = read(fd, data + got, size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (size && !data) {
		printf("Files %s and %s differ: out of memory to diff\n", la, lb);
		return;
	}
	if (got == 0) {
		free(data);
		return;
	}
	if (memchr(data, '\0', got)) {
		printf("Binary files %s and %s differ\n", la, lb);
		free(data);
		return;
	}
	size_t lines = 0;
	for (size_t i = 0; i < got; i++)
		lines += data[i] == '\n';
	bool open_end = data[got - 1] != '\n';
	lines += open_end;
	char range[48];
	if (lines == 1)
		snprintf(range, sizeof(range), "1");
	else
		snprintf(range, sizeof(range), "1,%zu", lines);
	printf("--- %s\n+++ %s\n@@ %s%s %s%s @@\n", la, lb, created ? "-0,0" : "-", created ? "" : range,
	       created ? "+" : "+0,0", created ? range : "");
	char mark = created ? '+' : '-';
	for (size_t i = 0; i < got;) {
		char *nl = memchr(data + i, '\n', got - i);
		size_t end = nl ? (size_t)(nl - data) : got;
		putchar(mark);
		fwrite(data + i, 1, end - i, stdout);
		putchar('\n');
		i = end + 1;
	}
	if (open_end)
		fputs("\\ No newline at end of file\n", stdout);
	free(data);
}

/* diff -u of a and b (fds, taken), labelled la and lb, as /dev/fd/3 and 4;
 * a file larger than DIFF_FILE_MAX is named, not diffed. A created or
 * deleted file (one side /dev/null, lone) is written here (one_sided). */
static void run_diff(int a, int b, const char *la, const char *lb)
{
	struct stat sa = {0}, sb = {0};
	if (fstat(a, &sa) < 0 || fstat(b, &sb) < 0 || (uint64_t)sa.st_size > DIFF_FILE_MAX ||
	    (uint64_t)sb.st_size > DIFF_FILE_MAX) {
		printf("Files %s and %s differ: too large to diff (%jd and %jd bytes; at most %llu MiB each)\n", la, lb,
		       (intmax_t)sa.st_size, (intmax_t)sb.st_size, DIFF_FILE_MAX >> 20);
		close(a);
		close(b);
		return;
	}
	bool a_null = strcmp(la, "/dev/null") == 0, b_null = strcmp(lb, "/dev/null") == 0;
	if (a_null != b_null) {
		close(a_null ? a : b);
		one_sided(a_null ? b : a, (size_t)(a_null ? sb.st_size : sa.st_size), la, lb, a_null);
		return;
	}
	fflush(stdout);
	pid_t self = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		/* It dies with us: the server kills `cordon changes` past its
		 * time or output bound, and a diff left running would go on
		 * reading the session's files (outside review, attack10). */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != self || dup2(a, 3) < 0 || dup2(b, 4) < 0)
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

/* A deleted directory: each regular file below it (the host's, opened
 * beneath it, no link followed; bounded depth) diffed to /dev/null. */
static void diff_deleted_tree(int dfd, const char *path, int depth)
{
	if (depth > 64)
		return;
	int fd = open_beneath(dfd, ".", O_RDONLY | O_DIRECTORY);
	_cleanup_closedir_ DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	/* In name order, as a listing is. */
	strv names = {0};
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			(void)strv_push(&names, e->d_name);
	if (names.n) /* no array to sort: v is NULL */
		qsort(names.v, names.n, sizeof(char *), cmp_names);
	for (size_t i = 0; i < names.n; i++) {
		char sub[8192], name[8192], la[8300];
		snprintf(sub, sizeof(sub), "%s/%s", path, names.v[i]);
		struct stat st;
		if (fstatat(dirfd(d), names.v[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int sd = open_beneath(dirfd(d), names.v[i], O_PATH | O_DIRECTORY);
			if (sd >= 0)
				diff_deleted_tree(sd, sub, depth + 1);
			continue;
		}
		int a = reopen_regular(open_beneath(dirfd(d), names.v[i], O_PATH));
		int b = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (a < 0 || b < 0) {
			if (a >= 0)
				close(a);
			if (b >= 0)
				close(b);
			continue;
		}
		snprintf(la, sizeof(la), "a/%s", safe(sub, name, sizeof(name)));
		run_diff(a, b, la, "/dev/null");
	}
	strv_free(&names);
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
	if (r->change == CHANGE_DELETED) {
		_cleanup_close_ int hd = open_root(host, O_PATH | O_DIRECTORY);
		if (hd >= 0) {
			diff_deleted_tree(hd, r->path, 0);
			return;
		}
	}
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
	/* git's convention: a created file from /dev/null, a deleted one to
	 * it (git apply and patch -p1 create and delete them). */
	char la[8300], lb[8300], name[8192];
	safe(r->path, name, sizeof(name));
	snprintf(la, sizeof(la), r->change == CHANGE_CREATED ? "/dev/null" : "a/%s", name);
	snprintf(lb, sizeof(lb), r->change == CHANGE_DELETED ? "/dev/null" : "b/%s", name);
	run_diff(a, b, la, lb);
}

/* What a listing or an apply takes: the paths or globs named (none: all),
 * and whether the default ignore list leaves entries out. */
struct selection {
	strv pats; /* normalized (changeset_select_normalize) */
	bool all;  /* changes --all, apply --no-ignore */
};

static bool selected(const struct selection *sel, const char *path)
{
	if (!sel->pats.n)
		return true;
	for (size_t i = 0; i < sel->pats.n; i++)
		if (changeset_selects(sel->pats.v[i], path) == 1)
			return true;
	return false;
}

/* Is the record left out by the ignore list (and not asked for)? git's
 * index is where the host's changed since the run started (else the apply
 * takes it: listed). */
static bool left_out(const struct changeset *cs, const struct selection *sel, const char *path)
{
	int kind = sel->all ? 0 : changeset_ignore_kind(path);
	if (kind != 2)
		return kind == 1;
	char abs[16384];
	struct stat st;
	snprintf(abs, sizeof(abs), "%s%s%s", path[0] == '/' ? "" : cs->host[0],
		 path[0] == '/' || !strcmp(cs->host[0], "/") ? "" : "/", path);
	_cleanup_close_ int fd = open_root(abs, O_PATH);
	if (fd < 0 || fstat(fd, &st) < 0)
		return false;
	return (int64_t)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec > cs->started_ns;
}

/* The records a listing shows (the others: counted in *ignored), in
 * place; the list is the caller's still. */
static void filter(const struct changeset *cs, struct file_list *l, const struct selection *sel, size_t *ignored)
{
	size_t k = 0;
	*ignored = 0;
	for (size_t i = 0; i < l->n; i++) {
		struct file_record *r = &l->r[i];
		bool keep = selected(sel, r->path);
		if (keep && left_out(cs, sel, r->path)) {
			(*ignored)++;
			keep = false;
		}
		if (keep) {
			l->r[k++] = *r;
			continue;
		}
		free(r->path);
	}
	l->n = k;
}

/* The change and apply JSON objects (one line each on stdout): begun with
 * the change set's "dir", what was held back said alike, printed and
 * freed at the end. */
static void json_begin(jwriter *w, const struct changeset *cs)
{
	memset(w, 0, sizeof(*w));
	jw_obj_begin(w);
	jw_key(w, "dir");
	jw_str(w, cs->dir);
}

static void json_held(jwriter *w, const strv *refused, const strv *protected, size_t ignored)
{
	jw_key(w, "refused");
	jw_str_array(w, (const char *const *)refused->v, refused->n);
	jw_key(w, "protected");
	jw_str_array(w, (const char *const *)protected->v, protected->n);
	jw_key(w, "ignored");
	jw_uint(w, ignored);
}

static void json_print(jwriter *w)
{
	jw_obj_end(w);
	if (jw_finish(w) == 0)
		printf("%.*s\n", (int)w->out.len, w->out.p);
	buf_free(&w->out);
}

static void print_json(const struct changeset *cs, const struct file_list *l, const strv *refused,
		       const strv *protected, size_t ignored)
{
	jwriter jw, *w = &jw;
	json_begin(w, cs);
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
	json_held(w, refused, protected, ignored);
	json_print(w);
}

static int cmd_list(struct changeset *cs, const struct selection *sel, bool json, bool diff)
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
	size_t ignored;
	filter(cs, &l, sel, &ignored);
	if (json) {
		print_json(cs, &l, &refused, &protected, ignored);
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
		if (ignored)
			printf("(%zu ignored: the default ignore list, cordon changes --all lists them)\n", ignored);
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

/* The entries an apply applied, in order (changeset_apply_opts.applied). */
struct applied {
	size_t n, cap;
	enum change *c;
	char **path;
	bool oom;
};

static void on_applied(void *ctx, enum change c, const char *path)
{
	struct applied *a = ctx;
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		enum change *nc = realloc(a->c, cap * sizeof(*nc));
		if (nc)
			a->c = nc;
		char **np = nc ? realloc(a->path, cap * sizeof(*np)) : NULL;
		if (np)
			a->path = np;
		if (!nc || !np) {
			a->oom = true;
			return;
		}
		a->cap = cap;
	}
	char *p = strdup(path);
	if (!p) {
		a->oom = true;
		return;
	}
	a->c[a->n] = c;
	a->path[a->n++] = p;
}

/* Is the record (path as listed) at or below a held entry (a line of
 * held: "PATH" or "PATH: why", absolute)? */
static bool under_held(const struct changeset *cs, const char *path, const strv *h)
{
	char abs[16384];
	if (path[0] == '/')
		snprintf(abs, sizeof(abs), "%s", path);
	else
		snprintf(abs, sizeof(abs), "%s%s%s", cs->host[0], strcmp(cs->host[0], "/") ? "/" : "", path);
	for (size_t i = 0; i < h->n; i++) {
		size_t l = strlen(h->v[i]);
		const char *why = strstr(h->v[i], ": ");
		if (why && h->v[i][0] == '/')
			l = (size_t)(why - h->v[i]);
		if (strncmp(abs, h->v[i], l) == 0 && (abs[l] == '\0' || abs[l] == '/'))
			return true;
	}
	return false;
}

/* What `cordon changes DIR` would list of it now (with the selection,
 * not counting what the ignore list leaves out nor what is at or below an
 * entry of held), and how many the ignore list leaves out; 0 and 0 where
 * it is gone. */
static void count_listed(struct changeset *cs, const struct selection *sel, const strv *held, size_t *listed,
			 size_t *ignored)
{
	struct file_list l;
	cordon_error e = {0};
	*listed = *ignored = 0;
	file_list_start(&l);
	if (access(cs->dir, F_OK) == 0 && changeset_list(cs, cs->host[0], &l, NULL, NULL, &e) == 0) {
		filter(cs, &l, sel, ignored);
		for (size_t i = 0; i < l.n; i++)
			*listed += !(held && under_held(cs, l.r[i].path, held));
	}
	file_list_free(&l);
}

static int cmd_apply(struct changeset *cs, const struct selection *sel, bool force, bool include_protected,
		     long crash_after, bool json, bool quiet)
{
	strv refused = {0}, protected = {0};
	struct changeset_held held = {&refused, &protected, NULL};
	struct applied done = {0};
	struct changeset_apply_opts o = {.force = force, .include_protected = include_protected,
					 .crash_after = crash_after, .select = (const char *const *)sel->pats.v,
					 .nselect = sel->pats.n, .no_ignore = sel->all, .applied = on_applied,
					 .applied_ctx = &done};
	/* What the ignore list leaves out of it (listed before: a change set
	 * applied whole is gone after, its ignored entries with it). */
	size_t selected_n, ignored, left, left_ignored;
	count_listed(cs, sel, NULL, &selected_n, &ignored);
	cordon_error err = {0};
	int rc = 0, r = changeset_apply(cs, &o, &held, &err);
	char m[sizeof(err.msg) * 4 + 8], name[16384];
	if (r < 0) {
		safe(err.msg, m, sizeof(m));
		/* A pattern that selects nothing is bad input: nothing done. */
		rc = err.code == EINVAL && !done.n ? 2 : 1;
	}
	/* Left: what the change set still holds (all of it, not only what
	 * was selected), but what was held back and what is ignored. */
	strv heldv = {0};
	for (size_t i = 0; i < refused.n; i++)
		(void)strv_push(&heldv, refused.v[i]);
	for (size_t i = 0; i < protected.n; i++)
		(void)strv_push(&heldv, protected.v[i]);
	struct selection everything = {.all = sel->all};
	count_listed(cs, &everything, &heldv, &left, &left_ignored);
	strv_free(&heldv);
	bool kept = access(cs->dir, F_OK) == 0;
	size_t nheld = refused.n + protected.n;
	if (json) {
		jwriter jw, *w = &jw;
		json_begin(w, cs);
		jw_key(w, "applied");
		jw_arr_begin(w);
		for (size_t i = 0; i < done.n; i++) {
			jw_obj_begin(w);
			jw_key(w, "path");
			jw_str(w, done.path[i]);
			jw_key(w, "change");
			jw_str(w, change_name(done.c[i]));
			jw_obj_end(w);
		}
		jw_arr_end(w);
		json_held(w, &refused, &protected, ignored);
		jw_key(w, "left");
		jw_uint(w, left);
		jw_key(w, "kept");
		jw_bool(w, kept);
		jw_key(w, "error");
		if (r < 0)
			jw_str(w, err.msg);
		else
			jw_null(w);
		json_print(w);
	} else if (!quiet) {
		for (size_t i = 0; i < done.n; i++)
			printf("%s %s\n", change_name(done.c[i]), safe(done.path[i], name, sizeof(name)));
		if (r == 0)
			printf("%zu applied, %zu held back, %zu ignored, %zu left\n", done.n, nheld, ignored, left);
	}
	if (r < 0)
		fprintf(stderr, "cordon: apply %s: %s\n", cs->dir, m);
	for (size_t i = 0; i < refused.n; i++)
		fprintf(stderr, "cordon: not applied: %s\n", safe(refused.v[i], name, sizeof(name)));
	for (size_t i = 0; i < protected.n; i++)
		fprintf(stderr, "cordon: not applied: %s: a protected path (--include-protected applies it)\n",
			safe(protected.v[i], name, sizeof(name)));
	if (r == 0 && kept && (nheld || left))
		fprintf(stderr, "cordon: %s keeps what was not applied\n", cs->dir);
	if (done.oom)
		fprintf(stderr, "cordon: out of memory: not every entry applied is named above\n");
	for (size_t i = 0; i < done.n; i++)
		free(done.path[i]);
	free(done.path);
	free(done.c);
	strv_free(&refused);
	strv_free(&protected);
	return rc;
}

/* --host-tree LAYER FD (cordon serve's, for a stacked fork: docs/api.md
 * "Fork"): the tree at descriptor FD (a detached overlay of the
 * workspace's directory over its layers) mounted over the host directory
 * of the change set's layer LAYER, in a mount namespace of this process's
 * own: the listing and the diff read the session's lower tree there. */
static int host_tree(struct changeset *cs, const char *layer, const char *fd, const char *verb)
{
	char *end;
	unsigned long l = strtoul(layer, &end, 10);
	bool ok = end != layer && !*end && l < cs->nlayers;
	long f = ok ? strtol(fd, &end, 10) : -1;
	ok = ok && end != fd && !*end && f >= 3 && f < 1024;
	if (!ok) {
		fprintf(stderr, "cordon %s: --host-tree %s %s: a layer of the change set and a descriptor are expected\n", verb,
			layer, fd);
		return -1;
	}
	/* A clone of it: the tree stays detached for the next reader. A
	 * kernel that clones no detached mount (EINVAL: Debian 12's 6.1)
	 * gets the tree itself (the worker makes one per call). */
	int t = -1;
	bool ns = unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0;
	if (ns) {
		t = open_tree((int)f, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
		if (t < 0 && errno == EINVAL)
			t = dup((int)f);
	}
	if (!ns || t < 0 || move_mount(t, "", AT_FDCWD, cs->host[l], MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		if (t >= 0)
			close(t);
		fprintf(stderr, "cordon %s: --host-tree: mount the lower tree over %s: %s\n", verb, cs->host[l], strerror(errno));
		return -1;
	}
	close(t);
	close((int)f);
	return 0;
}

int cmd_changes(const char *verb, int argc, char **argv)
{
	if (cli_wants_help(argc, argv)) {
		fputs(cli_usage(verb), stdout);
		return 0;
	}
	const char *dir = NULL;
	bool json = false, diff = false, force = false, include_protected = false, quiet = false, dashdash = false;
	bool list = strcmp(verb, "changes") == 0, apply = strcmp(verb, "apply") == 0;
	struct selection sel = {0};
	strv pats = {0};
	long crash_after = 0;
	const char *snap_layer = NULL, *snap_upper = NULL, *tree_layer = NULL, *tree_fd = NULL;
	for (int i = 0; i < argc; i++) {
		if (dashdash || argv[i][0] != '-') {
			if (!dir)
				dir = argv[i];
			else if ((list || apply) && strv_push(&pats, argv[i]) == 0)
				continue;
			else {
				fprintf(stderr, "cordon %s: unexpected argument \"%s\"\n%s", verb, argv[i], cli_usage(verb));
				strv_free(&pats);
				return 2;
			}
		} else if (strcmp(argv[i], "--") == 0)
			dashdash = true;
		else if ((list || apply) && strcmp(argv[i], "--json") == 0)
			json = true;
		else if (list && strcmp(argv[i], "--diff") == 0)
			diff = true;
		else if (list && strcmp(argv[i], "--all") == 0)
			sel.all = true;
		else if (list && strcmp(argv[i], "--snapshot-upper") == 0 && i + 2 < argc) {
			snap_layer = argv[++i];
			snap_upper = argv[++i];
		} else if (list && strcmp(argv[i], "--host-tree") == 0 && i + 2 < argc) {
			tree_layer = argv[++i];
			tree_fd = argv[++i];
		}
		else if (apply && strcmp(argv[i], "--no-ignore") == 0)
			sel.all = true;
		else if (apply && (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0))
			quiet = true;
		else if (apply && strcmp(argv[i], "--force") == 0)
			force = true;
		else if (apply && strcmp(argv[i], "--include-protected") == 0)
			include_protected = true;
		else if (apply && strcmp(argv[i], "--test-apply-crash-after") == 0 && i + 1 < argc)
			crash_after = strtol(argv[++i], NULL, 10); /* tests only */
		else {
			fprintf(stderr, "cordon %s: unexpected argument \"%s\"\n%s", verb, argv[i], cli_usage(verb));
			strv_free(&pats);
			return 2;
		}
	}
	if (!dir) {
		fprintf(stderr, "cordon %s: which change set? (the report's changes.dir)\n%s", verb, cli_usage(verb));
		strv_free(&pats);
		return 2;
	}
	struct changeset cs;
	cordon_error err = {0};
	if (changeset_open(&cs, dir, &err) < 0) {
		fprintf(stderr, "cordon: %s\n", err.msg);
		changeset_close(&cs);
		strv_free(&pats);
		return 2;
	}
	if (snap_upper) {
		/* A session's snapshot (cordon serve's GET .../snapshots/{pid}/changes):
		 * its directory read for one layer, the others left out. */
		char *end;
		unsigned long l = strtoul(snap_layer, &end, 10);
		if (end == snap_layer || *end || l >= cs.nlayers || snap_upper[0] != '/' ||
		    strlen(snap_upper) >= sizeof(cs.upper_at)) {
			fprintf(stderr, "cordon %s: --snapshot-upper %s %s: a layer of the change set and an absolute directory are expected\n",
				verb, snap_layer, snap_upper);
			changeset_close(&cs);
			strv_free(&pats);
			return 2;
		}
		cs.only_layer = l;
		snprintf(cs.upper_at, sizeof(cs.upper_at), "%s", snap_upper);
	}
	if (tree_fd && host_tree(&cs, tree_layer, tree_fd, verb) < 0) {
		changeset_close(&cs);
		strv_free(&pats);
		return 2;
	}
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < pats.n; i++) {
		char norm[16384], m[sizeof(err.msg) * 4 + 8];
		if (changeset_select_normalize(&cs, pats.v[i], norm, sizeof(norm), &err) < 0 ||
		    strv_push(&sel.pats, norm) < 0) {
			fprintf(stderr, "cordon %s: %s\n", verb, safe(err.msg, m, sizeof(m)));
			rc = 2;
		}
	}
	if (rc) {
	} else if (list) {
		rc = cmd_list(&cs, &sel, json, diff);
	} else if (apply) {
		rc = cmd_apply(&cs, &sel, force, include_protected, crash_after, json, quiet);
	} else if (changeset_discard(&cs, &err) < 0) {
		char m[sizeof(err.msg) * 4 + 8];
		fprintf(stderr, "cordon: discard %s: %s\n", dir, safe(err.msg, m, sizeof(m)));
		rc = 1;
	}
	changeset_close(&cs);
	strv_free(&pats);
	strv_free(&sel.pats);
	return rc;
}
