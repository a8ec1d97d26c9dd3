#include "unit.h"
#include "units.h"

static void test_sizes(void **st)
{
	uint64_t v;
	cordon_error e;
	struct { const char *s; uint64_t v; } ok[] = {
		{"0", 0}, {"512", 512}, {"1K", 1024}, {"1KiB", 1024}, {"64M", 64ULL << 20},
		{"1MiB", 1ULL << 20}, {"2G", 2ULL << 30}, {"3GiB", 3ULL << 30}, {"1T", 1ULL << 40},
		{"10B", 10},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(parse_size(ok[i].s, &v, &e), 0);
		assert_true(v == ok[i].v);
	}
	const char *bad[] = {"", "M", "-1", "+1", "1.5M", "1m", "1 M", "1MB", "1Ki", "12Q",
			     "99999999999999999999", "17179869184G"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse_size(bad[i], &v, &e), -1);
		assert_non_null(strstr(e.msg, bad[i]));
	}
}

static void test_durations(void **st)
{
	uint64_t v;
	cordon_error e;
	struct { const char *s; uint64_t v; } ok[] = {
		{"1", 1000000000ULL}, {"1.5", 1500000000ULL}, {"250ms", 250000000ULL},
		{"10s", 10000000000ULL}, {"2m", 120000000000ULL}, {"0.001", 1000000ULL},
		{"1h", 3600000000000ULL}, {"0.0000000015", 1},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(parse_duration(ok[i].s, &v, &e), 0);
		assert_true(v == ok[i].v);
	}
	const char *bad[] = {"", "s", "0", "0ms", "-1", "1.", ".5", "1x", "1 s", "31d", "1000000h"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse_duration(bad[i], &v, &e), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes), cmocka_unit_test(test_durations),
	};
	return cmocka_run_group_tests_name("units", tests, NULL, NULL);
}
