/* cgroup v2 device rules (lib/cgroup-devbpf.c), for real: a cgroup made on
 * this host's cgroup2 hierarchy (a hybrid host's too: a device program needs
 * no controller), the program attached, a child moved in opening devices.
 * Root only (loading a device program needs CAP_SYS_ADMIN): skipped else. */
#include "unit.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cgroup-devbpf.h"
#include "cgroup-util.h"

static char dir[2300];
static int dirfd_ = -1;

static int setup(void **st)
{
	(void)st;
	char root[2048];
	if (geteuid() != 0 || cg_mount_point(NULL, true, root, sizeof(root)) < 0)
		return 0;
	snprintf(dir, sizeof(dir), "%s/cordon-test-devbpf-%d", root, (int)getpid());
	if (mkdir(dir, 0755) < 0)
		fail_msg("mkdir %s: %s", dir, strerror(errno));
	dirfd_ = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	if (dirfd_ >= 0)
		close(dirfd_);
	if (*dir)
		rmdir(dir);
	return 0;
}

/* What opening each device (O_RDONLY, O_WRONLY) gives in the cgroup: a
 * string of "y" (opened) and "n" (EPERM) per path, read from a child. */
static void opens(const char *const *paths, int flags, char *out)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		char v[32];
		snprintf(v, sizeof(v), "%d", (int)getpid());
		if (cg_write(dir, "cgroup.procs", v, NULL) < 0)
			_exit(9);
		for (size_t i = 0; paths[i]; i++) {
			int fd = open(paths[i], flags | O_CLOEXEC);
			char r = fd >= 0 ? 'y' : errno == EPERM ? 'n' : '?';
			if (fd >= 0)
				close(fd);
			if (write(p[1], &r, 1) != 1)
				_exit(8);
		}
		_exit(0);
	}
	close(p[1]);
	size_t got = 0;
	ssize_t n;
	while (got < 15 && (n = read(p[0], out + got, 15 - got)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(p[0]);
	int status;
	assert_int_equal(waitpid(c, &status, 0), c);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static const char *const devs[] = {"/dev/null", "/dev/zero", "/dev/full", NULL};

/* Deny all, then allow what is listed: later rules win; a rule's access
 * letters are all it allows. */
static void test_rules_in_order(void **st)
{
	(void)st;
	if (dirfd_ < 0)
		skip();
	struct cg_devrule r[] = {
		{.allow = true, .type = 'a', .major = -1, .minor = -1},
		{.allow = false, .type = 'a', .major = -1, .minor = -1},
		{.allow = true, .type = 'c', .major = 1, .minor = 3, .access = "rwm"}, /* null */
		{.allow = true, .type = 'c', .major = 1, .minor = 5, .access = "r"},   /* zero, read only */
		{.allow = true, .type = 'b', .major = 1, .minor = 7},                   /* not full: a block rule */
	};
	cordon_error e;
	if (cg_devbpf_apply(dirfd_, r, 5, &e) < 0)
		fail_msg("%s", e.msg);
	char got[16];
	opens(devs, O_RDONLY, got);
	assert_string_equal(got, "yyn");
	opens(devs, O_WRONLY, got);
	assert_string_equal(got, "ynn");
}

/* An update replaces the rules: one program attached, the new rules only. */
static void test_update_replaces(void **st)
{
	(void)st;
	if (dirfd_ < 0)
		skip();
	struct cg_devrule a[] = {{.allow = true, .type = 'c', .major = 1, .minor = 3}};
	struct cg_devrule b[] = {{.allow = true, .type = 'c', .major = 1, .minor = -1, .access = "rw"},
				 {.allow = false, .type = 'c', .major = 1, .minor = 3}};
	cordon_error e;
	if (cg_devbpf_apply(dirfd_, a, 1, &e) < 0 || cg_devbpf_apply(dirfd_, b, 2, &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(cg_devbpf_count(dirfd_), 1);
	char got[16];
	opens(devs, O_RDONLY, got);
	assert_string_equal(got, "nyy");
}

static void test_bad_rules_named(void **st)
{
	(void)st;
	struct cg_devrule r[] = {{.allow = true, .type = 'a', .major = -1, .minor = -1},
				 {.allow = true, .type = 'c', .major = 1, .minor = 3, .access = "rx"}};
	cordon_error e;
	assert_int_equal(cg_devbpf_check(r, 2, &e), -1);
	assert_non_null(strstr(e.msg, "device rule 1"));
	r[1].access = "r";
	r[1].type = 'p';
	assert_int_equal(cg_devbpf_check(r, 2, &e), -1);
	assert_non_null(strstr(e.msg, "type 'p'"));
}

int main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_rules_in_order),
		cmocka_unit_test(test_update_replaces),
		cmocka_unit_test(test_bad_rules_named),
	};
	return cmocka_run_group_tests(t, setup, teardown);
}
