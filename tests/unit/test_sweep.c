/* The sweep after a run (sweep.h): privilege bits cleared on what changed,
 * never through a symlink, never outside a root; the roots put back. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "unit.h"
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
	sweep_run(&sw, &l, false, root, &cleared, &restored);

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
		sweep_run(&sw, &l2, false, root, &cleared, &restored);
		assert_true(getxattr(p, "security.capability", NULL, 0) < 0);
		assert_int_equal(cleared.n, 1);
		assert_string_equal(cleared.f[0].what, "security.capability removed");
		file_list_free(&l2);
	}

	/* A truncated change list: every file below the roots. */
	fix_list_free(&cleared);
	fix_list_free(&restored);
	make(root, "sub/c", 06755);
	assert_int_equal(chmod(root, 0750), 0);
	sweep_run(&sw, NULL, true, root, &cleared, &restored);
	assert_int_equal(mode_of(root, "sub/c"), 0755);
	assert_int_equal(mode_of(outside, "target"), 04755);
	assert_int_equal(cleared.n, 1);
	assert_string_equal(cleared.f[0].path, "sub/c");
	assert_int_equal(restored.n, 0);

	fix_list_free(&cleared);
	fix_list_free(&restored);
	file_list_free(&l);
	sweep_free(&sw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_changed_files_and_root, setup, teardown),
	};
	return cmocka_run_group_tests_name("sweep", tests, NULL, NULL);
}
