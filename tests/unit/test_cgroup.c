/* cgroup v2 delegation, for real on this host's cgroup2 hierarchy. A
 * supervisor alone in its cgroup (systemd-run --scope -p Delegate=yes, a
 * container's cgroup) cannot hand controllers to the runs' cgroups while it
 * is a member itself ("no internal processes"): cg_v2_enable moves it into a
 * leaf of its own first. With another member there, it must not move, and
 * the error is EBUSY. The test uses a domain controller the cgroup2 root
 * offers (hugetlb on a hybrid host; memory on a pure-v2 one). */
#include "cgroup-v1.h"
#include "unit.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cgroup.h"

static char root[2048], ctrl[64], plus[80];
static bool enabled_at_root;

static int slurp(const char *path, char *out, size_t sz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, out, sz - 1);
	close(fd);
	if (n < 0)
		return -1;
	out[n] = '\0';
	return 0;
}

static int setup(void **st)
{
	(void)st;
	char path[2200], buf[512];
	if (cg_mount_point(NULL, true, root, sizeof(root)) < 0)
		fail_msg("no cgroup2 hierarchy is mounted");
	snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
	if (slurp(path, buf, sizeof(buf)) < 0 || sscanf(buf, "%63s", ctrl) != 1)
		fail_msg("the cgroup2 root offers no controller to test with");
	/* A domain controller: threaded ones (cpuset, cpu, pids, perf_event)
	 * may be enabled beside processes, so they would never be EBUSY. On a
	 * pure-v2 host the first one offered is cpuset. */
	static const char *const domain[] = {"memory", "io", "hugetlb", "rdma", "misc"};
	for (size_t i = 0; i < sizeof(domain) / sizeof(domain[0]); i++) {
		char w[80];
		snprintf(w, sizeof(w), " %s ", domain[i]);
		char padded[600];
		snprintf(padded, sizeof(padded), " %s", buf);
		padded[strcspn(padded, "\n")] = ' ';
		if (strstr(padded, w)) {
			snprintf(ctrl, sizeof(ctrl), "%s", domain[i]);
			break;
		}
	}
	snprintf(plus, sizeof(plus), "+%s", ctrl);
	/* The root is exempt from "no internal processes": make the controller
	 * available to its children for the test, and undo that afterwards. */
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
	if (slurp(path, buf, sizeof(buf)) < 0)
		fail_msg("read %s", path);
	if (!strstr(buf, ctrl)) {
		cordon_error e;
		if (cg_write(root, "cgroup.subtree_control", plus, &e) < 0)
			fail_msg("%s", e.msg);
		enabled_at_root = true;
	}
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	if (enabled_at_root) {
		char minus[80];
		snprintf(minus, sizeof(minus), "-%s", ctrl);
		cg_write(root, "cgroup.subtree_control", minus, NULL);
	}
	return 0;
}

static void join(const char *dir, pid_t pid)
{
	char v[32];
	snprintf(v, sizeof(v), "%d", (int)pid);
	cordon_error e;
	if (cg_write(dir, "cgroup.procs", v, &e) < 0)
		fail_msg("%s", e.msg);
}

/* Alone in its cgroup: moves into cordon-PID-supervisor, the controller is
 * enabled, and the runs' directory is still the delegated cgroup. */
static void test_alone_moves_into_leaf(void **st)
{
	(void)st;
	char dir[2300];
	snprintf(dir, sizeof(dir), "%s/cordon-test-alone-%d", root, (int)getpid());
	assert_int_equal(mkdir(dir, 0755), 0);
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		join(dir, getpid());
		cordon_error e;
		if (cg_v2_enable(dir, plus, &e) < 0) {
			fprintf(stderr, "cg_v2_enable: %s\n", e.msg);
			_exit(1);
		}
		char path[2400], buf[512], want[2400], self[2400];
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
		if (slurp(path, buf, sizeof(buf)) < 0 || !strstr(buf, ctrl))
			_exit(2);
		/* Our own cgroup is now the leaf... */
		if (slurp("/proc/self/cgroup", buf, sizeof(buf)) < 0)
			_exit(3);
		snprintf(want, sizeof(want), "%s/" CG_V2_LEAF_FMT "\n", strrchr(dir, '/'), (int)getpid());
		size_t bl = strlen(buf), wl = strlen(want);
		if (bl < wl || strcmp(buf + bl - wl, want) != 0) {
			fprintf(stderr, "in %s, want ...%s", buf, want);
			_exit(4);
		}
		/* ...and the runs still go in the delegated cgroup, beside it. */
		if (cg_v2_self_dir(self, sizeof(self)) < 0 || strcmp(self, dir) != 0) {
			fprintf(stderr, "runs go in %s, want %s\n", self, dir);
			_exit(5);
		}
		/* A run's cgroup there gets the controller. */
		snprintf(path, sizeof(path), "%s/run", dir);
		if (mkdir(path, 0755) < 0)
			_exit(6);
		snprintf(path, sizeof(path), "%s/run/cgroup.controllers", dir);
		int ok = slurp(path, buf, sizeof(buf)) == 0 && strstr(buf, ctrl);
		snprintf(path, sizeof(path), "%s/run", dir);
		rmdir(path);
		_exit(ok ? 0 : 7);
	}
	int status;
	assert_int_equal(waitpid(c, &status, 0), c);
	char leaf[2400];
	snprintf(leaf, sizeof(leaf), "%s/" CG_V2_LEAF_FMT, dir, (int)c);
	rmdir(leaf);
	rmdir(dir);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Another process shares the cgroup: no move, EBUSY. */
static void test_shared_cgroup_is_ebusy(void **st)
{
	(void)st;
	char dir[2300];
	snprintf(dir, sizeof(dir), "%s/cordon-test-shared-%d", root, (int)getpid());
	assert_int_equal(mkdir(dir, 0755), 0);
	pid_t other = fork();
	assert_true(other >= 0);
	if (other == 0) {
		pause();
		_exit(0);
	}
	join(dir, other);
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		join(dir, getpid());
		cordon_error e;
		if (cg_v2_enable(dir, plus, &e) == 0)
			_exit(1);
		if (e.code != EBUSY) {
			fprintf(stderr, "error %d: %s\n", e.code, e.msg);
			_exit(2);
		}
		char leaf[2400];
		snprintf(leaf, sizeof(leaf), "%s/" CG_V2_LEAF_FMT, dir, (int)getpid());
		_exit(access(leaf, F_OK) == 0 ? 3 : 0); /* it did not move */
	}
	int status;
	assert_int_equal(waitpid(c, &status, 0), c);
	kill(other, SIGKILL);
	waitpid(other, NULL, 0);
	char leaf[2400];
	snprintf(leaf, sizeof(leaf), "%s/" CG_V2_LEAF_FMT, dir, (int)c);
	rmdir(leaf); /* only there if it moved, which is the failure */
	rmdir(dir);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* The layer's fallback decision, for every case: a run whose limits need a
 * cgroup and that gets none is refused unless it accepts per-process
 * rlimits (allow_weaker "cgroup"); without such limits it goes on. */
static void test_fallback_table(void **st)
{
	static const struct {
		bool need, weak_ok;
		const char *failure;
		int rc;
		const char *msg; /* a part of the refusal */
	} t[] = {
		{false, false, NULL, 0, NULL},
		{false, true, NULL, 0, NULL},
		{true, true, NULL, 0, NULL},
		{true, true, "mkdir: EACCES", 0, NULL},
		{false, false, "mkdir: EACCES", 0, NULL},
		{true, false, NULL, -1, "no usable cgroup hierarchy on this host"},
		{true, false, "mkdir: EACCES", -1, "mkdir: EACCES (the memory, pids and cpu limits need a cgroup"},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		cordon_error e = {0};
		assert_int_equal(cgroup_fallback(t[i].need, t[i].weak_ok, t[i].failure, &e), t[i].rc);
		if (t[i].msg) {
			assert_non_null(strstr(e.msg, t[i].msg));
			assert_non_null(strstr(e.msg, "allow_weaker [\"cgroup\"]"));
		}
	}
}

/* prepare with no backend (CORDON_CGROUP=none): refused when the limits
 * need one, else rlimits only, decided before clone; a bad choice is an
 * error whatever the policy accepts. */
static void test_prepare_without_backend(void **st)
{
	struct cg_prep cp;
	cordon_error e = {0};
	assert_int_equal(cgroup_prepare(&cp, "none", true, false, &e), -1);
	assert_non_null(strstr(e.msg, "no usable cgroup hierarchy"));
	assert_int_equal(cgroup_prepare(&cp, "none", true, true, &e), 0);
	assert_null(cp.ops);
	assert_true(cp.rlimits_only);
	assert_int_equal(cgroup_prepare(&cp, "none", false, false, &e), 0);
	assert_true(cp.rlimits_only);
	assert_int_equal(cgroup_prepare(&cp, "v3", false, true, &e), -1);
	assert_non_null(strstr(e.msg, "expected v1, v2 or none"));
	/* with no backend, start makes nothing and is not an error */
	struct cgroup cg;
	bool have = true;
	assert_int_equal(cgroup_prepare(&cp, "none", true, true, &e), 0);
	assert_int_equal(cgroup_start(&cp, &cg, &(struct cg_limits){1 << 20, 8}, 0, &have, &e), 0);
	assert_false(have);
}

/* The host is read once, in cgroup_prepare, and that reading serves the
 * backend's choice, the run's cgroup and the reaping of leftovers (a run
 * read /proc/self/mountinfo three times): with a host whose v1 hierarchies
 * are plain directories here, the cgroup is made and a leftover removed
 * there, not in the real hierarchies. */
static void test_host_read_once_serves_all(void **st)
{
	char tmp[] = "/tmp/cordon-cghost.XXXXXX", mi[1024], cgp[64], d[200];
	assert_non_null(mkdtemp(tmp));
	const char *sub[] = {"m", "p", "c"};
	for (int i = 0; i < 3; i++) {
		snprintf(d, sizeof(d), "%s/%s", tmp, sub[i]);
		assert_int_equal(mkdir(d, 0755), 0);
	}
	snprintf(mi, sizeof(mi),
		 "30 25 0:26 / %s/m rw,nosuid - cgroup cgroup rw,memory\n"
		 "31 25 0:27 / %s/p rw,nosuid - cgroup cgroup rw,pids\n"
		 "32 25 0:28 / %s/c rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n", tmp, tmp, tmp);
	snprintf(cgp, sizeof(cgp), "5:memory:/\n4:pids:/\n3:cpu,cpuacct:/\n");
	struct cg_host h = {mi, cgp};
	cordon_error e = {0};
	assert_ptr_equal(cgroup_detect_in(NULL, &h, &e), &cgroup_v1_ops);
	struct cgroup cg;
	assert_int_equal(cgroup_create(&cg, &cgroup_v1_ops, &(struct cg_limits){0, 0}, &h, &e), 0);
	snprintf(d, sizeof(d), "%s/m/cordon-%d-", tmp, (int)getpid());
	assert_int_equal(strncmp(cg.dirs[0], d, strlen(d)), 0);
	struct stat sb;
	assert_int_equal(stat(cg.dirs[2], &sb), 0);
	cgroup_v1_ops.destroy(&cg);
	/* a leftover of a supervisor that is gone (pid 2^22 + 1 is above
	 * pid_max's limit) */
	snprintf(d, sizeof(d), "%s/p/cordon-4194305-0", tmp);
	assert_int_equal(mkdir(d, 0755), 0);
	cgroup_reap_stale(&cgroup_v1_ops, &h);
	assert_int_equal(stat(d, &sb), -1);
	for (int i = 0; i < 3; i++) {
		snprintf(d, sizeof(d), "%s/%s", tmp, sub[i]);
		assert_int_equal(rmdir(d), 0);
	}
	assert_int_equal(rmdir(tmp), 0);
	/* and prepare keeps what it read for start and the reaping */
	struct cg_prep cp;
	if (cgroup_prepare(&cp, NULL, false, true, &e) == 0 && cp.ops) {
		assert_non_null(cp.host.mountinfo);
		assert_non_null(cp.host.cgroup);
	}
	cgroup_prep_free(&cp);
	assert_null(cp.host.mountinfo);
}

int main(void)
{
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_fallback_table),
		cmocka_unit_test(test_prepare_without_backend),
		cmocka_unit_test(test_host_read_once_serves_all),
	};
	int rc = cmocka_run_group_tests_name("cgroup fallback", pure, NULL, NULL);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alone_moves_into_leaf),
		cmocka_unit_test(test_shared_cgroup_is_ebusy),
	};
	return rc + cmocka_run_group_tests(tests, setup, teardown);
}
