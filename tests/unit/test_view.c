#include "model.h"
#include "plan.h"
#include "pol-plan.h"
#include "policy.h"
#include "unit.h"
#include "view.h"

static struct view mk(void)
{
	static struct cordon_mount m[] = {
		{MOUNT_RW, "/work/ws", 0, SRC_DEFAULT}, {MOUNT_RO, "/work/ws/ro", 0, SRC_FLAG},
		{MOUNT_RO, "/opt/data", 0, SRC_FLAG}, {MOUNT_TMPFS, "/scratch", 0, SRC_FLAG},
	};
	struct run_plan plan = {.mounts = m, .nmounts = 4};
	struct view v;
	cordon_error e;
	assert_int_equal(model_build(&plan.model, &plan, NULL, &e), 0);
	assert_int_equal(view_build(&plan.model, 0, &v, &e), 0);
	model_free(&plan.model);
	return v;
}

static void test_classify(void **st)
{
	struct view v = mk();
	char r[4096];
	struct { const char *p; enum view_class c; } t[] = {
		{"/work/ws/a.txt", VIEW_RW}, {"/work/ws/ro/x", VIEW_RO}, {"/work/ws/ro/../b", VIEW_RW},
		{"/opt/data/f", VIEW_RO}, {"/opt/other", VIEW_OUTSIDE}, {"/opt", VIEW_ROOT},
		{"/work", VIEW_ROOT}, {"/", VIEW_ROOT}, {"/scratch/t", VIEW_RW}, {"/usr/bin/sh", VIEW_RO},
		{"/etc/passwd", VIEW_RO}, {"/tmp/x", VIEW_RW}, {"/proc/self/status", VIEW_PROC},
		{"/dev/null", VIEW_DEV}, {"/dev/shm/s", VIEW_RW}, {"/root/.ssh/id_rsa", VIEW_OUTSIDE},
		{"/sys/kernel", VIEW_OUTSIDE}, {"/workshop", VIEW_OUTSIDE}, {"relative", VIEW_OUTSIDE},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (view_classify(&v, t[i].p, r, sizeof(r)) != t[i].c)
			fail_msg("%s: class %d, expected %d", t[i].p, view_classify(&v, t[i].p, r, sizeof(r)), t[i].c);
	view_free(&v);
}

static void test_denies(void **st)
{
	assert_false(view_denies(VIEW_RW, "/w/x", true, false));
	assert_true(view_denies(VIEW_RO, "/usr/x", true, true));
	assert_false(view_denies(VIEW_RO, "/usr/x", false, true));
	assert_true(view_denies(VIEW_ROOT, "/x", true, false));
	assert_true(view_denies(VIEW_OUTSIDE, "/root/x", false, true));
	assert_false(view_denies(VIEW_OUTSIDE, "/nonexistent", false, false));
	assert_true(view_denies(VIEW_OUTSIDE, "/nonexistent", true, false));
	assert_false(view_denies(VIEW_DEV, "/dev/null", true, false));
	assert_true(view_denies(VIEW_DEV, "/dev/evil", true, false));
	assert_false(view_denies(VIEW_PROC, "/proc/self/attr", true, false));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify), cmocka_unit_test(test_denies),
	};
	return cmocka_run_group_tests_name("view", tests, NULL, NULL);
}
