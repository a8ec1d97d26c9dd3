/* libcordon used in-process: many runs must leave no descriptor, no child
 * and no memory-visible state behind (a long-lived caller would notice). */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "unit.h"
#include "policy.h"
#include "report.h"
#include "sup-run.h"

static int count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void test_fds_after_runs(void **st)
{
	if (geteuid() != 0)
		skip(); /* the suite runs as root; the unprivileged path is covered by the integration tests */
	char *argv[] = {"/bin/true", NULL};
	/* one run first: lazily opened library state (e.g. libc's) is not a leak */
	cordon_policy *p = policy_new();
	struct run_report r;
	cordon_error e;
	report_init(&r);
	int devnull = open("/dev/null", O_WRONLY);
	int saved = dup(1);
	dup2(devnull, 1);
	assert_int_equal(run_command(p, argv, &r, &e), 0);
	report_free(&r);
	int before = count_fds();
	for (int i = 0; i < 30; i++) {
		report_init(&r);
		assert_int_equal(run_command(p, argv, &r, &e), 0);
		assert_int_equal(r.status, ST_OK);
		report_free(&r);
	}
	int after = count_fds();
	dup2(saved, 1);
	close(saved);
	close(devnull);
	assert_int_equal(after, before);
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1); /* no child left */
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_fds_after_runs)};
	return cmocka_run_group_tests_name("leak", tests, NULL, NULL);
}
