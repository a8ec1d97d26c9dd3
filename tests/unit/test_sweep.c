/* The sweep after a run (sweep.h): privilege bits cleared on what changed,
 * never through a symlink, never outside a root; the roots put back. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "report-json.h"
#include "unit.h"
#include "report.h"
#include "sweep.h"

static char root[64], outside[64];

static mode_t mode_of(const char *dir, const char *name)
{
	char p[256];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_int_equal(lstat(p, &st), 0);
	return st.st_mode & 07777;
}

static void make(const char *dir, const char *name, mode_t mode)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(p, mode), 0);
}

static int setup(void **st)
{
	strcpy(root, "/tmp/cordon-sweep.XXXXXX");
	strcpy(outside, "/tmp/cordon-sweep-out.XXXXXX");
	if (!mkdtemp(root) || !mkdtemp(outside))
		return -1;
	return 0;
}

static int teardown(void **st)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", root, outside);
	return system(cmd) == 0 ? 0 : -1;
}

static void add(struct file_list *l, const char *path, enum change c)
{
	l->r = realloc(l->r, (l->n + 1) * sizeof(*l->r));
	assert_non_null(l->r);
	memset(&l->r[l->n], 0, sizeof(l->r[0]));
	l->r[l->n].path = strdup(path);
	l->r[l->n].change = c;
	l->n++;
}

static void test_changed_files_and_root(void **st)
{
	char p[256];
	assert_int_equal(chmod(root, 0750), 0);
	make(root, "a", 04755);
	snprintf(p, sizeof(p), "%s/sub", root);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(chmod(p, 02755), 0);
	make(root, "sub/b", 02711);
	make(root, "plain", 0755);
	make(outside, "target", 04755);
	snprintf(p, sizeof(p), "%s/ln", root);
	char t[256];
	snprintf(t, sizeof(t), "%s/target", outside);
	assert_int_equal(symlink(t, p), 0);
	make(outside, "abs", 04755);

	struct sweep sw;
	cordon_error e;
	const char *roots[] = {root};
	assert_int_equal(sweep_pin(&sw, roots, 1, &e), 0);
	assert_int_equal(chmod(root, 0777), 0); /* what the run did */

	struct file_list l = {0};
	add(&l, "a", CHANGE_CREATED);
	add(&l, "sub/b", CHANGE_MODIFIED);
	add(&l, "plain", CHANGE_CREATED);
	add(&l, "ln", CHANGE_CREATED);
	add(&l, "gone", CHANGE_DELETED);
	add(&l, "../x", CHANGE_CREATED);
	snprintf(p, sizeof(p), "%s/abs", outside);
	add(&l, p, CHANGE_CREATED); /* outside every root */
	struct fix_list cleared = {0}, restored = {0};
	struct sweep_status ss;
	sweep_run(&sw, &l, false, root, &cleared, &restored, &ss);
	assert_false(ss.incomplete);

	assert_int_equal(mode_of(root, "a"), 0755);
	assert_int_equal(mode_of(root, "sub/b"), 0711);
	assert_int_equal(mode_of(root, "sub"), 02755); /* a setgid directory stays */
	assert_int_equal(mode_of(root, "plain"), 0755);
	assert_int_equal(mode_of(outside, "target"), 04755); /* through a symlink: never */
	assert_int_equal(mode_of(outside, "abs"), 04755);
	assert_int_equal(cleared.n, 2);
	assert_string_equal(cleared.f[0].path, "a");
	assert_string_equal(cleared.f[0].what, "mode 04755 -> 0755");
	assert_string_equal(cleared.f[1].path, "sub/b");
	assert_string_equal(cleared.f[1].what, "mode 02711 -> 0711");
	struct stat rs;
	assert_int_equal(stat(root, &rs), 0);
	assert_int_equal(rs.st_mode & 07777, 0750);
	assert_int_equal(restored.n, 1);
	assert_string_equal(restored.f[0].path, ".");
	assert_string_equal(restored.f[0].what, "mode 0777 -> 0750");

	/* A file capability (root only may set one here). */
	fix_list_free(&cleared);
	fix_list_free(&restored);
	make(root, "capped", 0755);
	snprintf(p, sizeof(p), "%s/capped", root);
	/* VFS_CAP_REVISION_2, CAP_SETUID permitted+effective */
	const unsigned char cap[20] = {0x01, 0x00, 0x00, 0x02, 0x80, 0, 0, 0, 0x80, 0, 0, 0};
	if (geteuid() == 0) {
		assert_int_equal(setxattr(p, "security.capability", cap, sizeof(cap), 0), 0);
		struct file_list l2 = {0};
		add(&l2, "capped", CHANGE_CREATED);
		sweep_run(&sw, &l2, false, root, &cleared, &restored, &ss);
		assert_true(getxattr(p, "security.capability", NULL, 0) < 0);
		assert_int_equal(cleared.n, 1);
		assert_string_equal(cleared.f[0].what, "security.capability removed");
		file_list_free(&l2);
	}

	/* A truncated change list: every file below the roots. */
	fix_list_free(&cleared);
	fix_list_free(&restored);
	make(root, "sub/c", 06755);
	make(root, "sub/capped", 0755);
	snprintf(p, sizeof(p), "%s/sub/capped", root);
	bool capped = geteuid() == 0;
	if (capped)
		assert_int_equal(setxattr(p, "security.capability", cap, sizeof(cap), 0), 0);
	assert_int_equal(chmod(root, 0750), 0);
	sweep_run(&sw, NULL, true, root, &cleared, &restored, &ss);
	assert_true(ss.walked);
	assert_false(ss.incomplete);
	assert_int_equal(mode_of(root, "sub/c"), 0755);
	assert_int_equal(mode_of(outside, "target"), 04755);
	assert_int_equal(cleared.n, capped ? 2 : 1);
	for (size_t i = 0; i < cleared.n; i++) {
		if (strcmp(cleared.f[i].path, "sub/c") == 0)
			assert_string_equal(cleared.f[i].what, "mode 06755 -> 0755");
		else {
			assert_string_equal(cleared.f[i].path, "sub/capped");
			assert_string_equal(cleared.f[i].what, "security.capability removed");
		}
	}
	assert_true(getxattr(p, "security.capability", NULL, 0) < 0);
	assert_int_equal(restored.n, 0);

	fix_list_free(&cleared);
	fix_list_free(&restored);
	file_list_free(&l);
	sweep_free(&sw);
}

/* A chain of n directories named name below dirfd; returns an fd on the
 * last (no path string: the chain may be longer than PATH_MAX). */
static int chain(int dirfd, const char *name, int n)
{
	int fd = dup(dirfd);
	assert_true(fd >= 0);
	for (int i = 0; i < n; i++) {
		assert_int_equal(mkdirat(fd, name, 0755), 0);
		int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(sub >= 0);
		close(fd);
		fd = sub;
	}
	return fd;
}

static mode_t make_at(int dirfd, const char *name, mode_t mode)
{
	int fd = openat(dirfd, name, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(fchmodat(dirfd, name, mode, 0), 0);
	struct stat st;
	assert_int_equal(fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
	return st.st_mode & 07777;
}

/* A file below 300 directories, and one at a path of ~5,000 bytes (longer
 * than PATH_MAX, 20 levels): the full walk has no depth limit and resolves
 * no path string; a listed file that cannot be opened at once (its path is
 * too long) makes the sweep walk everything. */
static void test_deep_and_long_paths(void **st)
{
	int rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(rfd >= 0);
	int deep = chain(rfd, "a", 300);
	assert_int_equal(make_at(deep, "py", 02755), 02755);
	char lname[251];
	memset(lname, 'L', 250);
	lname[250] = '\0';
	int lng = chain(rfd, lname, 20);
	assert_int_equal(make_at(lng, "py", 04755), 04755);

	struct sweep sw;
	cordon_error e;
	const char *roots[] = {root};
	assert_int_equal(sweep_pin(&sw, roots, 1, &e), 0);
	struct fix_list cleared = {0}, restored = {0};
	struct sweep_status ss;

	/* The change list names only the long one: opening it beneath the root
	 * fails (ENAMETOOLONG), so everything is walked. */
	buf p = {0};
	for (int i = 0; i < 20; i++)
		assert_int_equal(buf_printf(&p, "%s%s", i ? "/" : "", lname), 0);
	assert_int_equal(buf_printf(&p, "/py"), 0);
	struct file_list l = {0};
	add(&l, p.p, CHANGE_CREATED);
	sweep_run(&sw, &l, false, root, &cleared, &restored, &ss);
	struct stat fs;
	assert_int_equal(fstatat(deep, "py", &fs, 0), 0);
	assert_int_equal(fs.st_mode & 07777, 0755);
	assert_int_equal(fstatat(lng, "py", &fs, 0), 0);
	assert_int_equal(fs.st_mode & 07777, 0755);
	assert_true(ss.walked);
	assert_false(ss.incomplete);
	assert_int_equal(cleared.n, 2);
	bool saw_long = false;
	for (size_t i = 0; i < cleared.n; i++)
		saw_long |= strcmp(cleared.f[i].path, p.p) == 0;
	assert_true(saw_long);
	fix_list_free(&cleared);
	fix_list_free(&restored);

	/* A cut change list: the full walk reaches below depth 256. */
	assert_int_equal(fchmodat(deep, "py", 02755, 0), 0);
	sweep_run(&sw, NULL, true, root, &cleared, &restored, &ss);
	assert_int_equal(fstatat(deep, "py", &fs, 0), 0);
	assert_int_equal(fs.st_mode & 07777, 0755);
	assert_false(ss.incomplete);
	assert_int_equal(cleared.n, 1);
	assert_int_equal(strncmp(cleared.f[0].path, "a/a/a/", 6), 0);
	assert_true(ss.entries > 320);
	fix_list_free(&cleared);
	fix_list_free(&restored);

	/* A bound reached: the sweep says it is incomplete, never nothing. */
	assert_int_equal(fchmodat(deep, "py", 02755, 0), 0);
	sw.max_entries = 100;
	sweep_run(&sw, NULL, true, root, &cleared, &restored, &ss);
	assert_true(ss.incomplete);
	assert_non_null(strstr(ss.reason, "entry bound"));
	assert_int_equal(ss.entries, 101);
	fix_list_free(&cleared);
	sw.max_entries = SWEEP_MAX_ENTRIES;
	sw.budget_ns = 0;
	sweep_run(&sw, NULL, true, root, &cleared, &restored, &ss);
	assert_true(ss.incomplete);
	assert_non_null(strstr(ss.reason, "time bound"));
	fix_list_free(&cleared);
	sw.budget_ns = SWEEP_BUDGET_NS;
	sw.max_name_bytes = 10;
	sweep_run(&sw, NULL, true, root, &cleared, &restored, &ss);
	assert_true(ss.incomplete);
	fix_list_free(&cleared);
	fix_list_free(&restored);

	buf_free(&p);
	file_list_free(&l);
	sweep_free(&sw);
	close(deep);
	close(lng);
	close(rfd);
}

/* A root is pinned from / with no symlink on its path: one swapped in for
 * a parent directory (a concurrent run) is refused, not followed. */
static void test_pin_refuses_symlink_on_path(void **st)
{
	char p[256], r2[256];
	snprintf(p, sizeof(p), "%s/real", outside);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/real/inner", outside);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/real", outside);
	snprintf(r2, sizeof(r2), "%s/link", root);
	assert_int_equal(symlink(p, r2), 0);
	snprintf(r2, sizeof(r2), "%s/link/inner", root);
	struct sweep sw;
	cordon_error e;
	const char *roots[] = {r2};
	assert_int_equal(sweep_pin(&sw, roots, 1, &e), -1);
	assert_non_null(strstr(e.msg, "symbolic link"));
	/* A root that does not exist is left out. */
	snprintf(r2, sizeof(r2), "%s/none", root);
	assert_int_equal(sweep_pin(&sw, roots, 1, &e), 0);
	assert_int_equal(sw.n, 0);
	sweep_free(&sw);
}

/* An incomplete sweep is in the report, and the containment verdict is
 * never "clean" with it. */
static void test_incomplete_sweep_never_clean(void **st)
{
	struct run_report r;
	report_init(&r);
	char *j = report_to_json(&r);
	assert_non_null(j);
	assert_non_null(strstr(j, "\"containment\": \"clean\""));
	assert_null(strstr(j, "privilege_sweep"));
	free(j);
	r.privilege_sweep.walked = true;
	r.privilege_sweep.incomplete = true;
	r.privilege_sweep.entries = 1000001;
	snprintf(r.privilege_sweep.reason, sizeof(r.privilege_sweep.reason), "the entry bound was reached at /w/x");
	j = report_to_json(&r);
	assert_non_null(j);
	assert_non_null(strstr(j, "\"containment\": \"violations\""));
	const char *ps = strstr(j, "\"privilege_sweep\": {");
	assert_non_null(ps);
	assert_non_null(strstr(ps, "\"complete\": false"));
	assert_non_null(strstr(ps, "\"reason\": \"the entry bound was reached at /w/x\""));
	assert_non_null(strstr(ps, "\"entries_checked\": 1000001"));
	free(j);
	report_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_changed_files_and_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deep_and_long_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pin_refuses_symlink_on_path, setup, teardown),
		cmocka_unit_test(test_incomplete_sweep_never_clean),
	};
	return cmocka_run_group_tests_name("sweep", tests, NULL, NULL);
}
