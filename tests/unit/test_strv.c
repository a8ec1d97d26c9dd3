#include "unit.h"
#include "strv.h"

static void test_normalize(void **st)
{
	char out[256];
	struct { const char *in, *out; } c[] = {
		{"/", "/"}, {"//a//b/", "/a/b"}, {"/a/./b/../c", "/a/c"}, {"/../..", "/"},
		{"/a/b/../../..", "/"}, {"/a/..b", "/a/..b"}, {"/.x/.", "/.x"},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		assert_int_equal(path_normalize(c[i].in, out, sizeof(out)), 0);
		assert_string_equal(out, c[i].out);
	}
	assert_int_equal(path_normalize("relative", out, sizeof(out)), -1);
}

static void test_prefix(void **st)
{
	assert_true(path_has_prefix("/work/a", "/work"));
	assert_true(path_has_prefix("/work", "/work"));
	assert_false(path_has_prefix("/workshop", "/work"));
	assert_true(path_has_prefix("/x", "/"));
}

static void test_strv_buf(void **st)
{
	strv s = {0};
	assert_int_equal(strv_push(&s, "a"), 0);
	assert_int_equal(strv_push(&s, "b"), 0);
	assert_true(strv_contains(&s, "b"));
	assert_false(strv_contains(&s, "c"));
	assert_null(s.v[2]);
	strv_free(&s);
	buf b = {0};
	for (int i = 0; i < 1000; i++)
		assert_int_equal(buf_printf(&b, "%d,", i), 0);
	assert_int_equal(strncmp(b.p, "0,1,2,", 6), 0);
	buf_wipe(&b);
	assert_null(b.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalize), cmocka_unit_test(test_prefix),
		cmocka_unit_test(test_strv_buf),
	};
	return cmocka_run_group_tests_name("strv", tests, NULL, NULL);
}
