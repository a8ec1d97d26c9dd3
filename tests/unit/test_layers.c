/* A stack of lower layers named in one overlayfs option (lib/layers.c,
 * layers_create: the form before Linux 6.8, forced here): a caller whose
 * layer descriptors are of four digits (it holds a thousand or more) gets
 * its overlay all the same (outside review attack18: 64 of them took more
 * than the option's 255 bytes). Needs root (an overlay mount); skipped
 * otherwise. */
#include "unit.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "layers.h"

#define NLAYERS 60

static void test_four_digit_descriptors(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		skip();
		return;
	}
	/* descriptors past 1000: the soft limit up to the hard one (a
	 * login's soft limit is 1024) */
	struct rlimit rl;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 1300) {
		skip();
		return;
	}
	rl.rlim_cur = rl.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	char tmpl[] = "/tmp/test-layers.XXXXXX";
	assert_non_null(mkdtemp(tmpl));
	int top = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(top >= 0);
	int fds[NLAYERS];
	char name[32];
	for (int i = 0; i < NLAYERS; i++) {
		snprintf(name, sizeof(name), "l%02d", i);
		assert_int_equal(mkdirat(top, name, 0700), 0);
		int d = openat(top, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(d >= 0);
		char f[32];
		snprintf(f, sizeof(f), "f%02d", i);
		int w = openat(d, f, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		assert_true(w >= 0);
		close(w);
		/* above 1000: as a caller holding many descriptors has them */
		fds[i] = fcntl(d, F_DUPFD_CLOEXEC, 1200 + i);
		assert_true(fds[i] >= 1000);
		close(d);
	}
	setenv("CORDON_TEST_LOWERDIR_ONE", "1", 1);
	int fs = fsopen("overlay", FSOPEN_CLOEXEC);
	if (fs < 0) {
		skip();
		return;
	}
	cordon_error err = {0};
	assert_int_equal(fsconfig(fs, FSCONFIG_SET_STRING, "index", "off", 0), 0);
	int rc = layers_create(fs, fds, NLAYERS, "/proc/self/fd", &err);
	if (rc < 0)
		fprintf(stderr, "layers_create: %s\n", err.msg);
	assert_int_equal(rc, 0);
	int mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY);
	assert_true(mnt >= 0);
	struct stat st;
	assert_int_equal(fstatat(mnt, "f00", &st, 0), 0);
	assert_int_equal(fstatat(mnt, "f59", &st, 0), 0);
	/* the copies below 1000 are closed again */
	for (int d = 3; d < 1000; d++)
		if (d != fs && d != mnt && d != top && fcntl(d, F_GETFD) >= 0) {
			char p[64], t[256];
			snprintf(p, sizeof(p), "/proc/self/fd/%d", d);
			ssize_t n = readlink(p, t, sizeof(t) - 1);
			t[n > 0 ? n : 0] = '\0';
			assert_null(strstr(t, tmpl));
		}
	close(mnt);
	close(fs);
	for (int i = 0; i < NLAYERS; i++)
		close(fds[i]);
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
	assert_int_equal(system(cmd), 0);
	close(top);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_four_digit_descriptors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
