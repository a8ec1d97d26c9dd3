#include <stdio.h>
#include "unit.h"
#include "ledger.h"

#define MB (1ULL << 20)

static struct ledger mk(struct ledger_event *ev, size_t n)
{
	struct ledger l = {ev, n};
	return l;
}

static void test_lesson_example(void **st)
{
	/* 40 MiB input and 32 MiB output live together: 72 MiB peak. */
	struct ledger_event a[] = {
		{true, "input", 40 * MB, 1, 1}, {true, "output", 32 * MB, 1, 2},
		{false, "input", 0, 1, 3}, {false, "output", 0, 1, 4},
	};
	struct ledger l = mk(a, 4);
	struct ledger_result r;
	cordon_error e;
	assert_int_equal(ledger_compute(&l, "t", &r, &e), 0);
	assert_true(r.peak_bytes == 72 * MB);
	assert_int_equal(r.live_at_peak.n, 2);
	assert_string_equal(r.live_at_peak.v[0], "input");
	assert_string_equal(r.live_at_peak.v[1], "output");
	ledger_result_free(&r);
	/* Free the input first: 40 MiB. */
	struct ledger_event b[] = {
		{true, "input", 40 * MB, 1, 1}, {false, "input", 0, 1, 2},
		{true, "output", 32 * MB, 1, 3}, {false, "output", 0, 1, 4},
	};
	l = mk(b, 4);
	assert_int_equal(ledger_compute(&l, "t", &r, &e), 0);
	assert_true(r.peak_bytes == 40 * MB);
	assert_int_equal(r.live_at_peak.n, 1);
	assert_string_equal(r.live_at_peak.v[0], "input");
	ledger_result_free(&r);
}

static void test_errors(void **st)
{
	struct ledger_event a[] = {{false, "x", 0, 3, 7}};
	struct ledger l = mk(a, 1);
	struct ledger_result r;
	cordon_error e;
	assert_int_equal(ledger_compute(&l, "f.json", &r, &e), -1);
	assert_non_null(strstr(e.msg, "f.json:3:7: \"x\" is freed but not live"));
	struct ledger_event b[] = {{true, "x", 1, 1, 1}, {true, "x", 1, 2, 1}};
	l = mk(b, 2);
	assert_int_equal(ledger_compute(&l, "f", &r, &e), -1);
	assert_non_null(strstr(e.msg, "allocated again"));
	struct ledger_event c[] = {{true, "x", 1, 1, 1}, {false, "x", 0, 2, 1}, {false, "x", 0, 3, 1}};
	l = mk(c, 3);
	assert_int_equal(ledger_compute(&l, "f", &r, &e), -1);
	struct ledger_event d[] = {{true, "x", UINT64_MAX, 1, 1}, {true, "y", 2, 2, 1}};
	l = mk(d, 2);
	assert_int_equal(ledger_compute(&l, "f", &r, &e), -1);
	assert_non_null(strstr(e.msg, "overflow"));
}

/* Property: the sweep's peak equals the maximum, over every prefix of the
 * event list, of the sum of live allocations computed from scratch. */
static void test_property_vs_reference(void **st)
{
	unsigned seed = 12345;
	for (int round = 0; round < 500; round++) {
		struct ledger_event ev[40];
		char names[40][8];
		bool live[10] = {0};
		uint64_t size[10] = {0};
		size_t n = 0;
		int steps = 1 + (int)(rand_r(&seed) % 40);
		for (int i = 0; i < steps; i++) {
			int k = (int)(rand_r(&seed) % 10);
			snprintf(names[n], sizeof(names[n]), "b%d", k);
			if (live[k]) {
				ev[n] = (struct ledger_event){false, names[n], 0, 1, (int)n};
				live[k] = false;
			} else {
				size[k] = 1 + rand_r(&seed) % 1000;
				ev[n] = (struct ledger_event){true, names[n], size[k], 1, (int)n};
				live[k] = true;
			}
			n++;
		}
		/* reference */
		uint64_t ref_peak = 0;
		for (size_t p = 1; p <= n; p++) {
			uint64_t sum = 0;
			for (int k = 0; k < 10; k++) {
				char nm[8];
				snprintf(nm, sizeof(nm), "b%d", k);
				bool is_live = false;
				uint64_t sz = 0;
				for (size_t i = 0; i < p; i++)
					if (strcmp(ev[i].name, nm) == 0) {
						is_live = ev[i].alloc;
						sz = ev[i].bytes;
					}
				if (is_live)
					sum += sz;
			}
			if (sum > ref_peak)
				ref_peak = sum;
		}
		struct ledger l = mk(ev, n);
		struct ledger_result r;
		cordon_error e;
		assert_int_equal(ledger_compute(&l, "p", &r, &e), 0);
		assert_true(r.peak_bytes == ref_peak);
		ledger_result_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lesson_example), cmocka_unit_test(test_errors),
		cmocka_unit_test(test_property_vs_reference),
	};
	return cmocka_run_group_tests_name("ledger", tests, NULL, NULL);
}
