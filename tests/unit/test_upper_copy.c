/* The copy of an overlay upper layer (upper-copy.h), a session's snapshot:
 * whiteouts, opaque directories' attributes, hard links kept as links,
 * links never followed, FIFOs made anew, and the bounds (entries, depth,
 * bytes) refusing with nothing left behind. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "unit.h"
#include "upper-copy.h"

static char base[64];
static int src = -1, dst = -1;

static void put(const char *path, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/src/%s", base, path);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **st)
{
	(void)st;
	strcpy(base, "/tmp/cordon-ucopy.XXXXXX");
	if (!mkdtemp(base))
		return -1;
	char p[128];
	snprintf(p, sizeof(p), "%s/src", base);
	if (mkdir(p, 0755) < 0 || (src = open(p, O_RDONLY | O_DIRECTORY)) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/dst", base);
	if (mkdir(p, 0700) < 0 || (dst = open(p, O_RDONLY | O_DIRECTORY)) < 0)
		return -1;
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	close(src);
	close(dst);
	return system(cmd) == 0 ? 0 : -1;
}

static const struct ucopy_limits big = {1000, 1 << 20, 16};

static void test_copy_kinds(void **st)
{
	(void)st;
	put("a", "hello\n");
	assert_int_equal(mkdirat(src, "d", 0750), 0);
	put("d/f", "x\n");
	assert_int_equal(linkat(src, "d/f", src, "hl", 0), 0);
	assert_int_equal(symlinkat("/etc/passwd", src, "out"), 0);
	assert_int_equal(symlinkat("../../..", src, "d/up"), 0);
	assert_int_equal(mkfifoat(src, "fifo", 0600), 0);
	bool wh = mknodat(src, "gone", S_IFCHR, makedev(0, 0)) == 0;
	assert_int_equal(mkdirat(src, "opq", 0755), 0);
	int o = openat(src, "opq", O_RDONLY | O_DIRECTORY);
	assert_true(o >= 0);
	bool xa = fsetxattr(o, "user.overlay.opaque", "y", 1, 0) == 0;
	close(o);

	struct ucopy_stat us;
	cordon_error err = {0};
	assert_int_equal(upper_copy(src, dst, "p-1", &big, &us, &err), 0);
	assert_int_equal(us.files, 2); /* a, d/f (hl is a link of d/f) */
	assert_int_equal(us.bytes, 8);
	struct stat s1, s2;
	char p[256];
	snprintf(p, sizeof(p), "%s/dst/p-1/hl", base);
	assert_int_equal(lstat(p, &s1), 0);
	snprintf(p, sizeof(p), "%s/dst/p-1/d/f", base);
	assert_int_equal(lstat(p, &s2), 0);
	assert_int_equal(s1.st_ino, s2.st_ino); /* a link within the copy */
	assert_int_equal(s1.st_nlink, 2);
	snprintf(p, sizeof(p), "%s/dst/p-1/out", base);
	char t[64] = {0};
	assert_int_equal(readlink(p, t, sizeof(t) - 1), 11);
	assert_string_equal(t, "/etc/passwd"); /* a link, not /etc/passwd's bytes */
	snprintf(p, sizeof(p), "%s/dst/p-1/d/up", base);
	assert_int_equal(lstat(p, &s1), 0);
	assert_true(S_ISLNK(s1.st_mode));
	snprintf(p, sizeof(p), "%s/dst/p-1/fifo", base);
	assert_int_equal(lstat(p, &s1), 0);
	assert_true(S_ISFIFO(s1.st_mode));
	snprintf(p, sizeof(p), "%s/dst/p-1/d", base);
	assert_int_equal(lstat(p, &s1), 0);
	assert_int_equal(s1.st_mode & 07777, 0750);
	if (wh) {
		snprintf(p, sizeof(p), "%s/dst/p-1/gone", base);
		assert_int_equal(lstat(p, &s1), 0);
		assert_true(S_ISCHR(s1.st_mode) && s1.st_rdev == makedev(0, 0));
	}
	if (xa) {
		snprintf(p, sizeof(p), "%s/dst/p-1/opq", base);
		char v[4] = {0};
		assert_int_equal(getxattr(p, "user.overlay.opaque", v, sizeof(v)), 1);
		assert_int_equal(v[0], 'y');
	}
	assert_int_equal(upper_remove(dst, "p-1", 16, &err), 0);
	assert_int_equal(faccessat(dst, "p-1", F_OK, AT_SYMLINK_NOFOLLOW), -1);
}

static void test_bounds(void **st)
{
	(void)st;
	char n[32];
	for (int i = 0; i < 20; i++) {
		snprintf(n, sizeof(n), "f%d", i);
		put(n, "0123456789");
	}
	struct ucopy_stat us;
	cordon_error err = {0};
	/* Past the entries: refused, nothing left. */
	struct ucopy_limits few = {10, 1 << 20, 16};
	assert_int_equal(upper_copy(src, dst, "p-2", &few, &us, &err), -1);
	assert_int_equal(err.code, UCOPY_OVER_BOUND);
	assert_non_null(strstr(err.msg, "more than 10 entries"));
	assert_int_equal(faccessat(dst, "p-2", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	/* Past the bytes: EDQUOT, nothing left. */
	struct ucopy_limits small = {1000, 100, 16};
	memset(&err, 0, sizeof(err));
	assert_int_equal(upper_copy(src, dst, "p-3", &small, &us, &err), -1);
	assert_int_equal(err.code, UCOPY_OVER_BUDGET);
	assert_int_equal(faccessat(dst, "p-3", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	/* Deeper than the depth: refused. */
	char p[256];
	snprintf(p, sizeof(p), "%s/src/a/b/c/d", base);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "mkdir -p %s", p);
	assert_int_equal(system(cmd), 0);
	struct ucopy_limits shallow = {1000, 1 << 20, 2};
	memset(&err, 0, sizeof(err));
	assert_int_equal(upper_copy(src, dst, "p-4", &shallow, &us, &err), -1);
	assert_int_equal(err.code, UCOPY_OVER_BOUND);
	assert_non_null(strstr(err.msg, "deeper than 2 levels"));
	assert_int_equal(faccessat(dst, "p-4", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	/* The name exists already: refused, the old one kept. */
	assert_int_equal(mkdirat(dst, "p-5", 0700), 0);
	assert_int_equal(upper_copy(src, dst, "p-5", &big, &us, &err), -1);
	assert_int_equal(err.code, EEXIST);
	assert_int_equal(faccessat(dst, "p-5", F_OK, AT_SYMLINK_NOFOLLOW), 0);
}

/* Many files with links (the table grows): each link a link of its own
 * file in the copy, none of another's. */
static void test_many_links(void **st)
{
	(void)st;
	char n[32], m[32];
	for (int i = 0; i < 200; i++) {
		snprintf(n, sizeof(n), "f%d", i);
		snprintf(m, sizeof(m), "%d", i);
		put(n, m);
		snprintf(m, sizeof(m), "l%d", i);
		assert_int_equal(linkat(src, n, src, m, 0), 0);
	}
	struct ucopy_stat us;
	cordon_error err = {0};
	assert_int_equal(upper_copy(src, dst, "p-6", &big, &us, &err), 0);
	assert_int_equal(us.files, 200);
	for (int i = 0; i < 200; i++) {
		char a[256], b[256];
		struct stat sa, sb;
		snprintf(a, sizeof(a), "%s/dst/p-6/f%d", base, i);
		snprintf(b, sizeof(b), "%s/dst/p-6/l%d", base, i);
		assert_int_equal(stat(a, &sa), 0);
		assert_int_equal(stat(b, &sb), 0);
		assert_int_equal(sa.st_ino, sb.st_ino);
		assert_int_equal(sa.st_nlink, 2);
	}
}

/* The patch of a restore (upper_patch): applied over the view now (the
 * lower tree with the current upper layer over it), it gives the
 * snapshot's view (the lower tree with the snapshot's layer over it), and
 * it holds nothing of what neither layer touched. */
static void mk(const char *rel, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (!text) {
		assert_int_equal(mkdir(p, 0755), 0);
		return;
	}
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static bool wh(const char *rel)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	return mknod(p, S_IFCHR, makedev(0, 0)) == 0;
}

static bool opq(const char *rel)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	return setxattr(p, "user.overlay.opaque", "y", 1, 0) == 0;
}

static int sub(const char *rel)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	return open(p, O_RDONLY | O_DIRECTORY);
}

static void test_patch(void **st)
{
	(void)st;
	static const char *const dirs[] = {"L", "C", "S", "L/d", "L/e", "L/g", "L/o", "L/n", "L/n/m", "L/big",
					   "L/big/sub", "C/f", "C/o", "C/n", "C/n/m", "C/big", "C/big/sub", "S/d",
					   "S/o", "S/q", "S/g"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		mk(dirs[i], NULL);
	static const char *const files[][2] = {
		{"L/a", "a\n"}, {"L/b", "b\n"}, {"L/f", "f\n"}, {"L/d/x", "x\n"}, {"L/d/y", "y\n"}, {"L/e/p", "p\n"},
		{"L/g/h", "h\n"}, {"L/o/1", "1\n"}, {"L/o/2", "2\n"}, {"L/n/m/k", "k\n"}, {"L/big/f1", "1\n"},
		{"L/big/f2", "2\n"}, {"L/big/sub/s1", "s\n"},
		/* now: a changed, b and e deleted, z new, g a file, f a
		 * directory, o and big/sub made anew, n/m/k changed */
		{"C/a", "a2\n"}, {"C/z", "z\n"}, {"C/g", "g\n"}, {"C/f/i", "i\n"}, {"C/o/3", "3\n"}, {"C/n/m/k", "k2\n"},
		/* the snapshot: a and d/x changed, o/4 new beside the lower
		 * o's, q/r new, g/h2 beside g/h */
		{"S/a", "a3\n"}, {"S/d/x", "x3\n"}, {"S/o/4", "4\n"}, {"S/q/r", "r\n"}, {"S/g/h2", "h2\n"}};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		mk(files[i][0], files[i][1]);
	if (!wh("C/b") || !wh("C/e") || !opq("C/f") || !opq("C/o") || !opq("C/big/sub")) {
		skip(); /* no whiteouts or user attributes here */
		return;
	}
	int b = open(base, O_RDONLY | O_DIRECTORY), l = sub("L"), c = sub("C"), s = sub("S");
	assert_true(b >= 0 && l >= 0 && c >= 0 && s >= 0);
	struct ucopy_stat us;
	cordon_error e = {0};
	struct ucopy_limits lim = {1000, 1 << 20, 16};
	/* the two views, made by hand as the overlay shows them */
	assert_int_equal(upper_copy(l, b, "now", &lim, &us, &e), 0);
	assert_int_equal(upper_copy(l, b, "then", &lim, &us, &e), 0);
	int now = sub("now"), then = sub("then");
	assert_int_equal(upper_apply(c, now, &lim, &us, &e), 0);
	assert_int_equal(upper_apply(s, then, &lim, &us, &e), 0);
	assert_int_equal(upper_patch(l, c, s, b, "patch", &lim, &us, &e), 0);
	int patch = sub("patch");
	assert_true(patch >= 0);
	struct stat x;
	assert_int_equal(fstatat(patch, "big/f1", &x, 0), -1); /* big/f1: in neither layer */
	assert_int_equal(fstatat(patch, "d/y", &x, 0), -1);    /* d/y: neither */
	assert_int_equal(fstatat(patch, "big/sub/s1", &x, 0), 0); /* below a directory made anew */
	assert_int_equal(upper_apply(patch, now, &lim, &us, &e), 0);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "diff -r --no-dereference %s/now %s/then >&2", base, base);
	assert_int_equal(system(cmd), 0);
	/* and back: the patch from the snapshot's view to the view now */
	assert_int_equal(upper_patch(l, s, c, b, "back", &lim, &us, &e), 0);
	int back = sub("back");
	assert_int_equal(upper_apply(back, now, &lim, &us, &e), 0);
	assert_int_equal(upper_copy(l, b, "now2", &lim, &us, &e), 0);
	int now2 = sub("now2");
	assert_int_equal(upper_apply(c, now2, &lim, &us, &e), 0);
	snprintf(cmd, sizeof(cmd), "diff -r --no-dereference %s/now %s/now2 >&2", base, base);
	assert_int_equal(system(cmd), 0);
	/* bounded: past the entries, refused, nothing left */
	struct ucopy_limits few = {3, 1 << 20, 16};
	assert_int_equal(upper_patch(l, c, s, b, "small", &few, &us, &e), -1);
	assert_int_equal(e.code, UCOPY_OVER_BOUND);
	assert_int_equal(fstatat(b, "small", &x, 0), -1);
	int fds[] = {b, l, c, s, now, then, patch, back, now2};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		close(fds[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_copy_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_patch, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
