/* Directory entries by getdents64 (lib/dirstream.c): the same names as
 * readdir, past one buffer's worth, and an error where readdir has one. */
#include "unit.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "dirstream.h"

#define NAMES 3000 /* ~40 bytes a record: past one 32 KiB read */

static char tmpl[] = "/tmp/test-dirstream.XXXXXX";

static void test_same_names_as_readdir(void **state)
{
	assert_non_null(mkdtemp(tmpl));
	int dfd = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	char name[64];
	for (int i = 0; i < NAMES; i++) {
		snprintf(name, sizeof(name), "entry-with-a-longish-name-%05d", i);
		int f = openat(dfd, name, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		assert_true(f >= 0);
		close(f);
	}
	assert_int_equal(mkdirat(dfd, "sub", 0700), 0);
	static unsigned char seen[NAMES];
	struct dstream *d = dstream_open(dfd);
	assert_non_null(d);
	assert_int_equal(dstream_fd(d), dfd);
	size_t n = 0, dots = 0, sub = 0;
	struct dirent *e;
	errno = 0;
	while ((e = dstream_read(d))) {
		int k;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			dots++;
		else if (!strcmp(e->d_name, "sub"))
			sub += e->d_type == DT_DIR;
		else {
			assert_int_equal(sscanf(e->d_name, "entry-with-a-longish-name-%05d", &k), 1);
			assert_true(k >= 0 && k < NAMES && !seen[k]);
			seen[k] = 1;
			assert_int_equal(e->d_type, DT_REG);
			n++;
		}
	}
	assert_int_equal(errno, 0); /* the end, not an error */
	dstream_close(d);
	assert_int_equal(n, NAMES);
	assert_int_equal(dots, 2);
	assert_int_equal(sub, 1);
	/* cleanup */
	dfd = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < NAMES; i++) {
		snprintf(name, sizeof(name), "entry-with-a-longish-name-%05d", i);
		unlinkat(dfd, name, 0);
	}
	unlinkat(dfd, "sub", AT_REMOVEDIR);
	close(dfd);
	rmdir(tmpl);
}

static void test_not_a_directory_is_an_error(void **state)
{
	int f = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	assert_true(f >= 0);
	struct dstream *d = dstream_open(f);
	assert_non_null(d);
	errno = 0;
	assert_null(dstream_read(d));
	assert_int_equal(errno, ENOTDIR);
	dstream_close(d);
	assert_null(dstream_open(-1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_names_as_readdir),
		cmocka_unit_test(test_not_a_directory_is_an_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
