/* Change sets (changeset.h): protected names held back by the list the run
 * recorded, host changes held back, special files refused, set-id bits
 * dropped, host links never followed, an interrupted apply rolled back. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cs-apply.h"
#include "cs-rollback.h"
#include "cs-seal.h"
#include "cs-walk.h"
#include "unit.h"
#include "changeset.h"
#include "clock.h"
#include "protect.h"
#include "upper-copy.h"

static char base[64], host[96];

static int setup(void **st)
{
	(void)st;
	strcpy(base, "/tmp/cordon-cs.XXXXXX");
	if (!mkdtemp(base))
		return -1;
	snprintf(host, sizeof(host), "%s/w", base);
	/* The key that seals change sets: this test's own. */
	char state[96];
	snprintf(state, sizeof(state), "%s/state", base);
	setenv("CORDON_STATE_DIR", state, 1);
	return mkdir(host, 0755);
}

static int teardown(void **st)
{
	(void)st;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static void put(const char *dir, const char *name, const char *text, mode_t mode)
{
	char p[8192];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(p, mode), 0);
}

static bool exists(const char *dir, const char *name)
{
	char p[8192];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return lstat(p, &st) == 0;
}

/* A new change set over host, with these protected names. */
static void make_cs(struct changeset *cs, const char *const *names, char *upper, size_t sz)
{
	strv prot = {0};
	for (size_t i = 0; names && names[i]; i++)
		assert_int_equal(strv_push(&prot, names[i]), 0);
	const char *hosts[] = {host};
	cordon_error err = {0};
	assert_int_equal(changeset_create(cs, base, hosts, 1, getuid(), getgid(), getuid(), getgid(), &prot, &err), 0);
	assert_int_equal(changeset_begin(cs, &err), 0);
	strv_free(&prot);
	snprintf(upper, sz, "%s/0/upper", cs->dir);
}

static bool has(const strv *s, const char *rel)
{
	char p[8192];
	snprintf(p, sizeof(p), "%s/%s", host, rel);
	return strv_contains(s, p);
}

static void test_held_back_rule(void **st)
{
	(void)st;
	struct changeset cs;
	memset(&cs, 0, sizeof(cs));
	strv_push(&cs.protect, ".envrc");
	strv_push(&cs.protect, ".git/config");
	strv_push(&cs.protect, ".config/git");
	char why[256];
	assert_true(changeset_held_back(&cs, 0, ".envrc", 0, why, sizeof(why)));
	assert_string_equal(why, "protected path .envrc");
	assert_true(changeset_held_back(&cs, 0, ".git/config", 0, why, sizeof(why)));
	assert_true(changeset_held_back(&cs, 0, ".git/config/x", PROTECT_DIR_KEPT, why, sizeof(why)));
	/* Above a name: a plain directory passes, nothing else does. */
	assert_false(changeset_held_back(&cs, 0, ".git", PROTECT_DIR_KEPT, why, sizeof(why)));
	assert_true(changeset_held_back(&cs, 0, ".git", 0, why, sizeof(why)));
	assert_true(changeset_held_back(&cs, 0, ".config", 0, why, sizeof(why)));
	/* Not the name: a longer one, a shorter one, one below a directory. */
	assert_false(changeset_held_back(&cs, 0, ".envrc2", 0, why, sizeof(why)));
	assert_false(changeset_held_back(&cs, 0, ".gi", 0, why, sizeof(why)));
	assert_false(changeset_held_back(&cs, 0, "sub/.envrc", 0, why, sizeof(why)));
	assert_false(changeset_held_back(&cs, 0, ".git/HEAD", 0, why, sizeof(why)));
	strv_free(&cs.protect);
}

static void test_apply_holds_protected_by_the_recorded_list(void **st)
{
	(void)st;
	struct changeset cs;
	char upper[4200], dir[4096];
	static const char *const names[] = {".envrc", ".git/config", NULL};
	make_cs(&cs, names, upper, sizeof(upper));
	snprintf(dir, sizeof(dir), "%s", cs.dir);
	put(upper, "a", "a", 0644);
	put(upper, ".envrc", "e", 0644);
	put(upper, ".vscode", "v", 0644); /* a default, not in this run's list */
	char g[4300];
	snprintf(g, sizeof(g), "%s/.git", upper);
	assert_int_equal(mkdir(g, 0755), 0);
	put(g, "config", "[core]", 0644);
	put(g, "HEAD", "ref", 0644);
	changeset_close(&cs);

	/* Opened again: the list is the run's, from the change set. */
	cordon_error err = {0};
	assert_int_equal(changeset_open(&cs, dir, &err), 0);
	assert_int_equal(cs.protect.n, 2);
	strv refused = {0}, prot = {0}, conflicts = {0};
	struct changeset_held held = {&refused, &prot, &conflicts};
	struct changeset_apply_opts o = {0};
	assert_int_equal(changeset_apply(&cs, &o, &held, &err), 0);
	assert_int_equal(prot.n, 2);
	/* A .git directory made where there was none is held back whole (a
	 * repository git on the host would use). */
	assert_true(has(&prot, ".envrc") && has(&prot, ".git"));
	assert_true(exists(host, "a") && exists(host, ".vscode"));
	assert_false(exists(host, ".envrc") || exists(host, ".git"));
	assert_false(changeset_interrupted(&cs));
	changeset_close(&cs);
	strv_free(&prot);

	/* On request only. */
	assert_int_equal(changeset_open(&cs, dir, &err), 0);
	o.include_protected = true;
	assert_int_equal(changeset_apply(&cs, &o, &held, &err), 0);
	assert_int_equal(prot.n, 0);
	assert_true(exists(host, ".envrc") && exists(host, ".git/config"));
	assert_false(exists(dir, "."));
	changeset_close(&cs);
	strv_free(&refused);
	strv_free(&conflicts);
}

/* A run that changed nothing (most runs): its change set is removed
 * without a journal or a sync (1, not 0); one entry makes it an apply. */
static void test_empty_change_set_removed_unsynced(void **st)
{
	(void)st;
	struct changeset cs;
	char upper[4200], dir[4096];
	make_cs(&cs, NULL, upper, sizeof(upper));
	snprintf(dir, sizeof(dir), "%s", cs.dir);
	cordon_error err = {0};
	assert_int_equal(changeset_apply(&cs, &(struct changeset_apply_opts){0}, NULL, &err), 1);
	assert_false(exists(dir, "."));
	changeset_close(&cs);
	make_cs(&cs, NULL, upper, sizeof(upper));
	snprintf(dir, sizeof(dir), "%s", cs.dir);
	put(upper, "a", "a", 0644);
	assert_int_equal(changeset_apply(&cs, &(struct changeset_apply_opts){0}, NULL, &err), 0);
	assert_true(exists(host, "a"));
	assert_false(exists(dir, "."));
	changeset_close(&cs);
}

static void test_protect_file_checked(void **st)
{
	(void)st;
	struct changeset cs;
	char upper[4200], dir[4096], p[4200];
	make_cs(&cs, NULL, upper, sizeof(upper));
	snprintf(dir, sizeof(dir), "%s", cs.dir);
	changeset_close(&cs);
	snprintf(p, sizeof(p), "%s/protect", dir);
	cordon_error err = {0};
	/* Not a name: refused, not guessed at. */
	static const char bad[][16] = {"../x", "/etc/x", "a/./b", "x"};
	static const size_t len[] = {5, 7, 6, 1};
	for (size_t i = 0; i < 4; i++) {
		unlink(p);
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fwrite(bad[i], 1, len[i], f);
		fclose(f);
		memset(&err, 0, sizeof(err));
		assert_int_equal(changeset_open(&cs, dir, &err), -1);
		assert_int_equal(err.code, EINVAL);
		changeset_close(&cs);
	}
	/* A link in its place: not followed. */
	unlink(p);
	assert_int_equal(symlink("/etc/hostname", p), 0);
	assert_int_equal(changeset_open(&cs, dir, &err), -1);
	changeset_close(&cs);
	/* None: fewer names than it was sealed with (an apply would hold
	 * back cordon's defaults only): refused. */
	unlink(p);
	assert_int_equal(changeset_open(&cs, dir, &err), -1);
	assert_int_equal(err.code, EPERM);
	changeset_close(&cs);
}

#define sh(...)                                                 \
	do {                                                    \
		char cmd_[8192];                                \
		snprintf(cmd_, sizeof(cmd_), __VA_ARGS__);      \
		assert_int_equal(system(cmd_), 0);              \
	} while (0)

/* Outside review 6 F2: a run that can write a directory lays out a change
 * set there (meta, 0/host naming any host directory, 0/upper with what it
 * likes) and waits for `cordon apply`. Only what this user's cordon sealed,
 * where it made it, is opened. */
static void test_only_sealed_change_sets_open(void **st)
{
	(void)st;
	struct changeset cs;
	char upper[4200], dir[4096], fake[4200];
	cordon_error err = {0};
	make_cs(&cs, NULL, upper, sizeof(upper));
	snprintf(dir, sizeof(dir), "%s", cs.dir);
	changeset_close(&cs);
	assert_int_equal(changeset_open(&cs, dir, &err), 0);
	changeset_close(&cs);

	/* Laid out by hand, as a run would: no seal. */
	snprintf(fake, sizeof(fake), "%s/.cordon-changes/fake", host);
	sh("mkdir -p %s/0/upper && chmod 700 %s", fake, fake);
	sh("cp %s/meta %s/meta", dir, fake);
	sh("printf /etc > %s/0/host", fake);
	sh("chmod 700 %s/0 && echo x > %s/0/upper/hostname", fake, fake);
	memset(&err, 0, sizeof(err));
	assert_int_equal(changeset_open(&cs, fake, &err), -1);
	assert_int_equal(err.code, EPERM);
	assert_non_null(strstr(err.msg, "no seal"));
	changeset_close(&cs);
	/* With a genuine set's seal and protect file copied over: sealed for
	 * another place (and other host paths). */
	sh("cp %s/seal %s/seal", dir, fake);
	sh("cp %s/protect %s/protect", dir, fake);
	memset(&err, 0, sizeof(err));
	assert_int_equal(changeset_open(&cs, fake, &err), -1);
	assert_int_equal(err.code, EPERM);
	assert_non_null(strstr(err.msg, "does not match"));
	changeset_close(&cs);
	/* Its host path pointed elsewhere in place: refused. */
	sh("cp %s/0/host %s/0/host.orig && printf /etc > %s/0/host", dir, dir, dir);
	assert_int_equal(changeset_open(&cs, dir, &err), -1);
	assert_int_equal(err.code, EPERM);
	changeset_close(&cs);
	sh("mv %s/0/host.orig %s/0/host", dir, dir);
	/* Moved: sealed where it was made only. */
	sh("mv %s %s.moved", dir, dir);
	snprintf(fake, sizeof(fake), "%s.moved", dir);
	assert_int_equal(changeset_open(&cs, fake, &err), -1);
	assert_int_equal(err.code, EPERM);
	changeset_close(&cs);
	sh("mv %s %s", fake, dir);
	/* Under another key (another user's, or the key replaced): refused. */
	char key[256];
	snprintf(key, sizeof(key), "%s/state/changeset.key", base);
	sh("mv %s %s.old", key, key);
	assert_int_equal(changeset_open(&cs, dir, &err), -1);
	changeset_close(&cs);
	sh("mv %s.old %s", key, key);
	/* A key anyone else may read is not used. */
	assert_int_equal(chmod(key, 0644), 0);
	assert_int_equal(changeset_open(&cs, dir, &err), -1);
	assert_int_equal(err.code, EPERM);
	changeset_close(&cs);
	assert_int_equal(chmod(key, 0600), 0);
	/* A directory on the way anyone may write (not sticky): someone else
	 * could have put the key there. */
	struct stat bs;
	assert_int_equal(stat(base, &bs), 0);
	assert_int_equal(chmod(base, 0777), 0);
	memset(&err, 0, sizeof(err));
	assert_int_equal(changeset_open(&cs, dir, &err), -1);
	assert_non_null(strstr(err.msg, "someone else could replace the change-set key"));
	changeset_close(&cs);
	assert_int_equal(chmod(base, bs.st_mode & 07777), 0);
	assert_int_equal(changeset_open(&cs, dir, &err), 0);
	assert_int_equal(changeset_discard(&cs, &err), 0);
	changeset_close(&cs);
}

/* The directories of change sets cordon made are listed beside the key
 * (model.c masks them at any depth): each once, those gone dropped. */
static void test_change_set_directories_listed(void **st)
{
	(void)st;
	char b2[128], top1[128], top2[128], name[64];
	changeset_dirname(name, sizeof(name));
	snprintf(b2, sizeof(b2), "%s/b2", base);
	assert_int_equal(mkdir(b2, 0755), 0);
	const char *hosts[] = {host};
	struct changeset cs;
	cordon_error err = {0};
	for (int i = 0; i < 3; i++) {
		/* The same place again (the directory made anew each time). */
		assert_int_equal(changeset_create(&cs, base, hosts, 1, getuid(), getgid(), getuid(), getgid(), NULL, &err), 0);
		assert_int_equal(changeset_begin(&cs, &err), 0);
		assert_int_equal(changeset_discard(&cs, &err), 0);
		changeset_close(&cs);
	}
	char kept[4096];
	assert_int_equal(changeset_create(&cs, base, hosts, 1, getuid(), getgid(), getuid(), getgid(), NULL, &err), 0);
	assert_int_equal(changeset_begin(&cs, &err), 0);
	snprintf(kept, sizeof(kept), "%s", cs.dir);
	changeset_close(&cs);
	assert_int_equal(changeset_create(&cs, b2, hosts, 1, getuid(), getgid(), getuid(), getgid(), NULL, &err), 0);
	assert_int_equal(changeset_begin(&cs, &err), 0);
	changeset_close(&cs);
	snprintf(top1, sizeof(top1), "%s/%s", base, name);
	snprintf(top2, sizeof(top2), "%s/%s", b2, name);
	strv l = {0};
	assert_int_equal(changeset_registered(&l, &err), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.v[0], top1);
	assert_string_equal(l.v[1], top2);
	strv_free(&l);
	/* base's is gone (its last change set discarded, the directory that
	 * stays removed by hand): dropped when the list is next written. */
	assert_int_equal(changeset_open(&cs, kept, &err), 0);
	assert_int_equal(changeset_discard(&cs, &err), 0);
	changeset_close(&cs);
	assert_int_equal(rmdir(top1), 0);
	char b3[128];
	snprintf(b3, sizeof(b3), "%s/b3", base);
	assert_int_equal(mkdir(b3, 0755), 0);
	assert_int_equal(changeset_create(&cs, b3, hosts, 1, getuid(), getgid(), getuid(), getgid(), NULL, &err), 0);
	assert_int_equal(changeset_begin(&cs, &err), 0);
	changeset_close(&cs);
	assert_int_equal(changeset_registered(&l, &err), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.v[0], top2);
	assert_non_null(strstr(l.v[1], "/b3/"));
	strv_free(&l);
}

static void test_host_changes_held(void **st)
{
	(void)st;
	struct changeset cs;
	char upper[4200];
	put(host, "k", "host", 0644);
	put(host, "old", "old", 0644);
	make_cs(&cs, NULL, upper, sizeof(upper));
	put(upper, "k", "run", 0644);
	put(upper, "n", "new", 0644);
	put(upper, "old", "run", 0644);
	/* Every host file counts as changed since a start at the epoch. */
	int64_t started = cs.started_ns;
	cs.started_ns = 1;
	strv refused = {0}, prot = {0}, conflicts = {0};
	struct changeset_held held = {&refused, &prot, &conflicts};
	struct changeset_apply_opts o = {.hold_conflicts = true};
	cordon_error err = {0};
	assert_int_equal(changeset_apply(&cs, &o, &held, &err), 0);
	assert_int_equal(conflicts.n, 2);
	assert_true(has(&conflicts, "k") && has(&conflicts, "old"));
	assert_true(exists(host, "n"));
	/* The whole apply refused without hold_conflicts, naming one. */
	strv_free(&conflicts);
	o.hold_conflicts = false;
	assert_int_equal(changeset_apply(&cs, &o, &held, &err), -1);
	assert_non_null(strstr(err.msg, "changed since the run started"));
	cs.started_ns = started;
	o.force = true;
	assert_int_equal(changeset_apply(&cs, &o, &held, &err), 0);
	FILE *f = fopen(strcat(strcpy((char[200]){0}, host), "/k"), "r");
	char line[16] = "";
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_string_equal(line, "run");
	changeset_close(&cs);
	strv_free(&refused);
	strv_free(&prot);
	strv_free(&conflicts);
}

static void test_hostile_entries(void **st)
{
	(void)st;
	struct changeset cs;
	char upper[4200], outside[128], p[4300];
	snprintf(outside, sizeof(outside), "%s/outside", base);
	assert_int_equal(mkdir(outside, 0755), 0);
	/* The host's "sub" is a link out of the workspace. */
	snprintf(p, sizeof(p), "%s/sub", host);
	assert_int_equal(symlink(outside, p), 0);
	make_cs(&cs, NULL, upper, sizeof(upper));
	snprintf(p, sizeof(p), "%s/sub", upper);
	assert_int_equal(mkdir(p, 0755), 0);
	put(p, "x", "x", 0644);
	put(upper, "suid", "s", 0644);
	snprintf(p, sizeof(p), "%s/suid", upper);
	assert_int_equal(chmod(p, 06755), 0);
	snprintf(p, sizeof(p), "%s/fifo", upper);
	assert_int_equal(mkfifo(p, 0644), 0);
	snprintf(p, sizeof(p), "%s/l", upper);
	assert_int_equal(symlink("/etc/passwd", p), 0);
	strv refused = {0}, prot = {0}, conflicts = {0};
	struct changeset_held held = {&refused, &prot, &conflicts};
	struct changeset_apply_opts o = {.force = true};
	cordon_error err = {0};
	assert_int_equal(changeset_apply(&cs, &o, &held, &err), 0);
	/* Refused, and kept. */
	assert_int_equal(refused.n, 1);
	assert_non_null(strstr(refused.v[0], "/fifo: a FIFO"));
	assert_true(exists(cs.dir, "0/upper/fifo"));
	assert_false(exists(host, "fifo"));
	/* No set-id bit; a link applied as a link; nothing through the host's. */
	struct stat s;
	snprintf(p, sizeof(p), "%s/suid", host);
	assert_int_equal(stat(p, &s), 0);
	assert_int_equal(s.st_mode & 07777, 0755);
	snprintf(p, sizeof(p), "%s/l", host);
	assert_int_equal(lstat(p, &s), 0);
	assert_true(S_ISLNK(s.st_mode));
	snprintf(p, sizeof(p), "%s/sub", host);
	assert_int_equal(lstat(p, &s), 0);
	assert_true(S_ISDIR(s.st_mode));
	assert_true(exists(host, "sub/x"));
	assert_false(exists(outside, "x"));
	assert_int_equal(changeset_discard(&cs, &err), 0);
	changeset_close(&cs);
	strv_free(&refused);
	strv_free(&prot);
	strv_free(&conflicts);
}

static void test_interrupted_apply_rolled_back(void **st)
{
	(void)st;
	struct changeset cs;
	char upper[4200];
	put(host, "k", "host", 0644);
	put(host, "gone", "host", 0644);
	make_cs(&cs, NULL, upper, sizeof(upper));
	put(upper, "k", "run", 0644);
	put(upper, "n1", "1", 0644);
	put(upper, "n2", "2", 0644);
	put(upper, "n3", "3", 0644);
	pid_t pid = fork();
	if (pid == 0) {
		struct changeset_apply_opts o = {.force = true, .crash_after = 2};
		changeset_apply(&cs, &o, NULL, &(cordon_error){0});
		_exit(0);
	}
	int ws;
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
	assert_true(changeset_interrupted(&cs));
	cordon_error err = {0};
	assert_int_equal(changeset_discard(&cs, &err), 0);
	assert_false(exists(host, "n1") || exists(host, "n2") || exists(host, "n3"));
	FILE *f = fopen(strcat(strcpy((char[200]){0}, host), "/k"), "r");
	char line[16] = "";
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_string_equal(line, "host");
	changeset_close(&cs);
}

/* Parse text (a C string) as a 2-layer journal: the record count, or -1. */
static long parse(const char *text, struct changeset_jrec **j)
{
	size_t n = 99;
	cordon_error err = {0};
	int r = changeset_parse_journal(text, strlen(text), 2, "J", j, &n, &err);
	if (r < 0) {
		assert_null(*j);
		assert_int_equal(err.code, EBADMSG);
		assert_non_null(strstr(err.msg, "J: malformed record at offset"));
		return -1;
	}
	return (long)n;
}

/* The journal's names are the run's: leading spaces and newlines, records
 * forged inside a name, "." and "..", are read exactly as written (the
 * length frames the name) or refused; a cut last record is dropped. */
static void test_journal_strictly_framed(void **st)
{
	(void)st;
	struct changeset_jrec *j = NULL;
	/* A name that begins with newlines and carries a forged record. */
	const char *forged = "C 0 0 3\n\n\n5\nC 0 0 23\n\n\n5/aaaaaM 0 511 2\n..\nz\n";
	assert_int_equal(parse(forged, &j), 2);
	assert_string_equal(j[0].rel, "\n\n5");
	assert_string_equal(j[1].rel, "\n\n5/aaaaaM 0 511 2\n..\nz");
	assert_int_equal(j[1].kind, 'C');
	changeset_jrecs_free(j, 2);
	assert_int_equal(parse("M 1 493 3\n  a\nB 0 12 1\nb\n", &j), 2);
	assert_string_equal(j[0].rel, "  a");
	assert_int_equal(j[0].arg, 0755);
	assert_int_equal(j[1].arg, 12);
	changeset_jrecs_free(j, 2);
	/* A record cut by a crash at any byte: dropped, the earlier kept. */
	const char *whole = "C 0 0 1\na\nM 0 448 3\nd/e\n";
	for (size_t cut = 11; cut < strlen(whole); cut++) {
		char t[64];
		snprintf(t, sizeof(t), "%.*s", (int)cut, whole);
		assert_int_equal(parse(t, &j), 1);
		changeset_jrecs_free(j, 1);
	}
	/* Refused, whole: names that leave the layer, unknown kinds, loose
	 * framing, out-of-range numbers, a missing terminator. */
	const char *bad[] = {
		"M 0 511 2\n..\n", "C 0 0 1\n.\n", "C 0 0 4\na/..\n", "C 0 0 4\n../a\n", "C 0 0 2\n/a\n",
		"C 0 0 2\na/\n", "C 0 0 3\na//\n", "C 0 0 0\n\n", "X 0 0 1\na\n", "C  0 0 1\na\n",
		"C 0 0  1\na\n", "C 0 0 1\nab\n", "C 0 0 +1\na\n", "C 0 0 01\na\n", "C 2 0 1\na\n",
		"C 0 1 1\na\n", "M 0 4096 1\na\n", "B 0 -1 1\na\n", "C 0 0 1 \na\n", " C 0 0 1\na\n",
		"C 0 0 1\na\nC 0 0 1\n.\n", "C 0 0 99999999999999999999\na\n", "\nC 0 0 1\na\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		j = NULL;
		if (parse(bad[i], &j) != -1)
			fail_msg("accepted: %s", bad[i]);
	}
	/* A NUL inside a name. */
	size_t n = 0;
	cordon_error err = {0};
	assert_int_equal(changeset_parse_journal("C 0 0 3\na\0b\n", 12, 2, "J", &j, &n, &err), -1);
}

/* A run's names, however hostile, roll back exactly: an apply interrupted
 * after the first step, then discard, leaves the host as it was. */
static void test_hostile_names_rolled_back(void **st)
{
	(void)st;
	struct changeset cs;
	char upper[8192], d[8300];
	mkdir(strcat(strcpy((char[200]){0}, host), "/keep"), 0755);
	make_cs(&cs, NULL, upper, sizeof(upper));
	snprintf(d, sizeof(d), "%s/\n\n5", upper);
	assert_int_equal(mkdir(d, 0755), 0);
	put(d, "aaaaaM 0 511 2\n..\nM 0 2541 4\nkeep\nC 0 0 1\n.\nz", "", 0644);
	pid_t pid = fork();
	if (pid == 0) {
		struct changeset_apply_opts o = {.force = true, .crash_after = 1};
		changeset_apply(&cs, &o, NULL, &(cordon_error){0});
		_exit(0);
	}
	int ws;
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFSIGNALED(ws));
	cordon_error err = {0};
	struct stat before, after;
	assert_int_equal(stat(base, &before), 0);
	assert_int_equal(changeset_discard(&cs, &err), 0);
	assert_int_equal(stat(base, &after), 0);
	assert_int_equal(before.st_mode, after.st_mode);
	assert_true(exists(host, "keep"));
	assert_int_equal(stat(strcat(strcpy((char[200]){0}, host), "/keep"), &after), 0);
	assert_int_equal(after.st_mode & 07777, 0755);
	assert_false(exists(host, "\n\n5"));
	changeset_close(&cs);
}

/* Issue 28: selection patterns, the default ignore list, an apply in part
 * (what is not selected stays; a second apply replacing a host file), the
 * entries an apply says it applied. */
static void test_select_and_ignore_match(void **st)
{
	(void)st;
	assert_int_equal(changeset_selects("src", "src"), 1);
	assert_int_equal(changeset_selects("src", "src/a/b.c"), 1);
	assert_int_equal(changeset_selects("src", "srcx"), 0);
	assert_int_equal(changeset_selects("src/a", "src"), 2);
	assert_int_equal(changeset_selects("src/*.py", "src/m.py"), 1);
	assert_int_equal(changeset_selects("src/*.py", "src/sub/m.py"), 0);
	assert_int_equal(changeset_selects("*/x", "a"), 2);
	assert_int_equal(changeset_selects("*/x", "a/x/y"), 1);
	assert_int_equal(changeset_selects("**/x", "a/b/x"), 0); /* ** is * */
	assert_int_equal(changeset_selects("*", "/abs/x"), 0);
	assert_true(changeset_ignored(".git/index"));
	assert_true(changeset_ignored("sub/.git/index"));
	assert_true(changeset_ignored("a/__pycache__/m.cpython-311.pyc"));
	assert_true(changeset_ignored("m.pyc"));
	assert_true(changeset_ignored(".pytest_cache/v/cache/nodeids"));
	assert_true(changeset_ignored("web/node_modules/.cache/babel/x"));
	assert_false(changeset_ignored(".git/index.lock"));
	assert_false(changeset_ignored(".git/HEAD"));
	assert_false(changeset_ignored("m.py"));
	assert_false(changeset_ignored("node_modules/x"));
	assert_int_equal(changeset_ignore_kind(".git/index"), 2);
	assert_int_equal(changeset_ignore_kind("x/__pycache__"), 1);
	struct changeset cs = {0};
	cs.nlayers = 1;
	cs.host[0] = (char *)"/w";
	char out[256];
	cordon_error err = {0};
	assert_int_equal(changeset_select_normalize(&cs, "./src/", out, sizeof(out), &err), 0);
	assert_string_equal(out, "src");
	assert_int_equal(changeset_select_normalize(&cs, "/w/src/a", out, sizeof(out), &err), 0);
	assert_string_equal(out, "src/a");
	assert_int_equal(changeset_select_normalize(&cs, "src/../x", out, sizeof(out), &err), -1);
	assert_int_equal(changeset_select_normalize(&cs, "", out, sizeof(out), &err), -1);
}

static void note(void *ctx, enum change c, const char *path)
{
	char line[512];
	snprintf(line, sizeof(line), "%s %s", change_name(c), path);
	assert_int_equal(strv_push(ctx, line), 0);
}

static void test_apply_in_part(void **st)
{
	(void)st;
	struct changeset cs;
	char upper[4200], dir[4096], p[4400];
	put(host, "k", "host", 0644);
	put(host, "k2", "host", 0644);
	make_cs(&cs, NULL, upper, sizeof(upper));
	snprintf(dir, sizeof(dir), "%s", cs.dir);
	put(upper, "k", "run", 0644);
	put(upper, "k2", "run", 0644);
	snprintf(p, sizeof(p), "%s/n", upper);
	assert_int_equal(mkdir(p, 0755), 0);
	put(p, "f", "f", 0644);
	snprintf(p, sizeof(p), "%s/c", upper); /* a new directory of caches only */
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(mkdir(strcat(p, "/__pycache__"), 0755), 0);
	put(p, "m.pyc", "c", 0644);
	strv said = {0};
	const char *sel[] = {"n/f", "k"};
	struct changeset_apply_opts o = {.select = sel, .nselect = 2, .applied = note, .applied_ctx = &said};
	cordon_error err = {0};
	assert_int_equal(changeset_apply(&cs, &o, NULL, &err), 0);
	assert_int_equal(said.n, 2);
	assert_true(strv_contains(&said, "created n/f") && strv_contains(&said, "modified k"));
	assert_true(exists(host, "n/f") && !exists(host, "c"));
	assert_true(exists(dir, ".") && exists(upper, "k2") && !exists(upper, "k"));
	/* A pattern that selects nothing: refused, nothing applied. */
	const char *none[] = {"k2", "nothere"};
	o.select = none;
	assert_int_equal(changeset_apply(&cs, &o, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "nothere: no change"));
	assert_true(exists(upper, "k2"));
	/* The rest (a host file replaced again: backups of the first apply
	 * do not stand in the way); the caches go with the change set. */
	strv_free(&said);
	o.select = NULL;
	o.nselect = 0;
	assert_int_equal(changeset_apply(&cs, &o, NULL, &err), 0);
	assert_int_equal(said.n, 1);
	assert_string_equal(said.v[0], "modified k2");
	assert_false(exists(host, "c"));
	assert_false(exists(dir, "."));
	changeset_close(&cs);
	strv_free(&said);
}

/* check-ignored (F4): what a default apply leaves out is removed from the
 * upper layer before the task check, whatever it is, never followed;
 * .git/index only where the host's changed since the run started. */
static void test_drop_ignored(void **st)
{
	(void)st;
	struct changeset cs;
	char upper[4200], p[4400], outside[128];
	snprintf(outside, sizeof(outside), "%s/outside", base);
	assert_int_equal(mkdir(outside, 0755), 0);
	put(outside, "keep.pyc", "o", 0644);
	snprintf(p, sizeof(p), "%s/.git", host);
	assert_int_equal(mkdir(p, 0755), 0);
	put(p, "index", "host", 0644);
	make_cs(&cs, NULL, upper, sizeof(upper));
	put(upper, "mod.py", "run", 0644);
	put(upper, "mod.pyc", "run", 0644);
	snprintf(p, sizeof(p), "%s/__pycache__", upper);
	assert_int_equal(mkdir(p, 0755), 0);
	put(p, "mod.cpython-311.pyc", "c", 0644);
	snprintf(p, sizeof(p), "%s/sub", upper);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/sub/__pycache__", upper);
	assert_int_equal(symlink(outside, p), 0); /* removed as a link */
	snprintf(p, sizeof(p), "%s/node_modules", upper);
	assert_int_equal(mkdir(p, 0755), 0);
	put(p, "pkg.js", "js", 0644);
	snprintf(p, sizeof(p), "%s/node_modules/.cache", upper);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(mkdir(strcat(p, "/a"), 0), 0); /* unreadable: still goes */
	snprintf(p, sizeof(p), "%s/.git", upper);
	assert_int_equal(mkdir(p, 0755), 0);
	put(p, "index", "run", 0644);
	size_t n = 0;
	cordon_error err = {0};
	assert_int_equal(changeset_drop_ignored(&cs, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_true(exists(upper, "mod.py") && exists(upper, "sub") && exists(upper, "node_modules/pkg.js"));
	assert_false(exists(upper, "mod.pyc") || exists(upper, "__pycache__") || exists(upper, "sub/__pycache__") ||
		     exists(upper, "node_modules/.cache"));
	assert_true(exists(outside, "keep.pyc"));
	/* The host's index unchanged: the run's is applied, so it stays. */
	assert_true(exists(upper, ".git/index"));
	/* Changed on the host since: the host's stays, the run's goes. */
	snprintf(p, sizeof(p), "%s/.git/index", host);
	assert_int_equal(chmod(p, 0600), 0);
	assert_int_equal(changeset_drop_ignored(&cs, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_false(exists(upper, ".git/index"));
	/* A whiteout of a host cache: removed, the host's shows again (a
	 * default apply keeps it). mknod of 0/0 needs privilege. */
	snprintf(p, sizeof(p), "%s/__pycache__", upper);
	if (mknod(p, S_IFCHR | 0, 0) == 0) {
		assert_int_equal(changeset_drop_ignored(&cs, &n, &err), 0);
		assert_int_equal(n, 1);
		assert_false(exists(upper, "__pycache__"));
	}
	assert_int_equal(changeset_discard(&cs, &err), 0);
	changeset_close(&cs);
}

/* A host change right after the change set was made (the same tick of the
 * coarse clock the file system stamps with): still a change since the run
 * started. Nothing stats the host's index between its write and the chmod,
 * so its new ctime is a coarse one (failed with started_ns from the fine
 * clock: the run's index stayed and would have been applied over it). */
static void test_host_change_in_the_first_tick(void **st)
{
	(void)st;
	struct changeset cs;
	char upper[4200], p[4400];
	snprintf(p, sizeof(p), "%s/.git", host);
	assert_int_equal(mkdir(p, 0755), 0);
	put(p, "index", "host", 0644);
	make_cs(&cs, NULL, upper, sizeof(upper));
	snprintf(p, sizeof(p), "%s/.git/index", host);
	assert_int_equal(chmod(p, 0600), 0);
	snprintf(p, sizeof(p), "%s/.git", upper);
	assert_int_equal(mkdir(p, 0755), 0);
	put(p, "index", "run", 0644);
	size_t n = 0;
	cordon_error err = {0};
	assert_int_equal(changeset_drop_ignored(&cs, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_false(exists(upper, ".git/index"));
	assert_int_equal(changeset_discard(&cs, &err), 0);
	changeset_close(&cs);
}

/* stamp_floor_ns orders file stamps: a change before it is older, a change
 * after it (stamped from the coarse clock: nothing read the file's stamps
 * in between) is not, also within the tick. Failed with the fine clock's
 * time in its place (the chmod's ctime came out under it). */
static void test_stamp_floor_orders_file_stamps(void **st)
{
	(void)st;
	char p[4400];
	struct stat sb;
	for (int i = 0; i < 20; i++) {
		snprintf(p, sizeof(p), "%s/f%d", host, i);
		int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		close(fd);
		int64_t t = stamp_floor_ns();
		assert_int_equal(chmod(p, 0600), 0);
		assert_int_equal(stat(p, &sb), 0);
		assert_true((int64_t)sb.st_ctim.tv_sec * 1000000000LL + sb.st_ctim.tv_nsec >= t);
		snprintf(p, sizeof(p), "%s", host);
		assert_int_equal(stat(p, &sb), 0);
		assert_true((int64_t)sb.st_ctim.tv_sec * 1000000000LL + sb.st_ctim.tv_nsec < t);
	}
}

/* The same in two steps, as a run takes it (FINE when its change set is
 * made, T before its command may start): a change before FINE is older
 * than T, a change after T is not, whatever was stamped in between. */
static void test_stamp_floor_in_two_steps(void **st)
{
	(void)st;
	char p[4400];
	struct stat sb;
	for (int i = 0; i < 20; i++) {
		snprintf(p, sizeof(p), "%s/g%d", host, i);
		int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		close(fd);
		int64_t fine = stamp_now_ns();
		/* between the two: the same file changed, and (some rounds) a
		 * tick or more passes, as while a run is set up */
		assert_int_equal(chmod(p, 0640), 0);
		if (i % 2)
			nanosleep(&(struct timespec){0, 5000000}, NULL);
		int64_t t = stamp_floor_after_ns(fine);
		assert_true(t > fine);
		assert_int_equal(chmod(p, 0600), 0);
		assert_int_equal(stat(p, &sb), 0);
		assert_true((int64_t)sb.st_ctim.tv_sec * 1000000000LL + sb.st_ctim.tv_nsec >= t);
		snprintf(p, sizeof(p), "%s", host);
		assert_int_equal(stat(p, &sb), 0);
		assert_true((int64_t)sb.st_ctim.tv_sec * 1000000000LL + sb.st_ctim.tv_nsec < t);
	}
}

/* A stacked fork's change sets made from its snapshots wait for its end
 * (changeset_derive, pending: not opened before, saying why), when
 * changeset_restart of its own set seals them with its new start. Another
 * set beside it, with the same start and hosts (another session's, made in
 * the same tick), is never touched (outside review attack19). */
static void test_restart_seals_pending_only(void **st)
{
	(void)st;
	struct changeset a, b, c, o;
	char upper[4200], snap[128], bdir[4096], cdir[4096];
	cordon_error err = {0};
	make_cs(&a, NULL, upper, sizeof(upper));
	snprintf(snap, sizeof(snap), "%s/snap", base);
	assert_int_equal(mkdir(snap, 0700), 0);
	put(snap, "f", "x\n", 0644);
	int up = open(snap, O_RDONLY | O_DIRECTORY);
	assert_true(up >= 0);
	struct ucopy_limits lim = {1000, 1 << 20, 16};
	struct ucopy_stat us;
	assert_int_equal(changeset_derive(&b, &a, 0, up, true, &lim, &us, &err), 0);
	assert_int_equal(changeset_derive(&c, &a, 0, up, false, &lim, &us, &err), 0);
	close(up);
	snprintf(bdir, sizeof(bdir), "%s", b.dir);
	snprintf(cdir, sizeof(cdir), "%s", c.dir);
	changeset_close(&b);
	changeset_close(&c);
	int64_t was = a.started_ns;
	assert_int_equal(changeset_open(&o, bdir, &err), -1);
	assert_int_equal(err.code, EBUSY);
	assert_non_null(strstr(err.msg, "sealed when that session ends"));
	changeset_close(&o);
	/* Its pending seal is no seal (attack20): renamed, it does not match. */
	sh("cp %s/pending %s/seal", bdir, bdir);
	assert_int_equal(changeset_open(&o, bdir, &err), -1);
	assert_int_equal(err.code, EPERM);
	assert_non_null(strstr(err.msg, "does not match"));
	changeset_close(&o);
	sh("rm %s/seal", bdir);
	assert_int_equal(changeset_restart(&a, was + 1000, &err), 0);
	assert_int_equal(changeset_open(&o, bdir, &err), 0);
	assert_true(o.started_ns == was + 1000);
	assert_false(exists(bdir, "pending"));
	changeset_close(&o);
	assert_int_equal(changeset_open(&o, cdir, &err), 0);
	assert_true(o.started_ns == was);
	changeset_close(&o);
	char adir[4096];
	snprintf(adir, sizeof(adir), "%s", a.dir);
	/* One more, orphaned (the stack not made whole): named so. */
	up = open(snap, O_RDONLY | O_DIRECTORY);
	assert_int_equal(changeset_derive(&b, &a, 0, up, true, &lim, &us, &err), 0);
	close(up);
	snprintf(bdir, sizeof(bdir), "%s", b.dir);
	changeset_close(&b);
	assert_int_equal(changeset_orphan(&a, &err), 0);
	assert_int_equal(changeset_open(&o, bdir, &err), -1);
	assert_non_null(strstr(err.msg, "could not be made whole at its end"));
	changeset_close(&o);
	changeset_close(&a);
	assert_int_equal(changeset_open(&o, adir, &err), 0);
	assert_true(o.started_ns == was + 1000);
	changeset_close(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_held_back_rule),
		cmocka_unit_test_setup_teardown(test_apply_holds_protected_by_the_recorded_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_change_set_removed_unsynced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_protect_file_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_changes_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_only_sealed_change_sets_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_change_set_directories_listed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_entries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interrupted_apply_rolled_back, setup, teardown),
		cmocka_unit_test(test_journal_strictly_framed),
		cmocka_unit_test_setup_teardown(test_hostile_names_rolled_back, setup, teardown),
		cmocka_unit_test(test_select_and_ignore_match),
		cmocka_unit_test_setup_teardown(test_apply_in_part, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drop_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_change_in_the_first_tick, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stamp_floor_orders_file_stamps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stamp_floor_in_two_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_seals_pending_only, setup, teardown),
	};
	return cmocka_run_group_tests_name("changeset", tests, NULL, NULL);
}
