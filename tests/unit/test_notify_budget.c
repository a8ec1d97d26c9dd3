/* lib/notify-budget.c: the supervisor's token bucket for seccomp
 * notifications, on simulated time (no clock, no sleep): the burst, the
 * hold until the next period, the rate bound whatever the run does, the
 * cap after a pause, and CORDON_NOTIFY_BUDGET's forms. */
#include "unit.h"
#include <errno.h>
#include "notify-budget.h"

#define MS 1000000ULL

/* Denials answered before the first hold, from a full bucket at now. */
static unsigned until_hold(struct notify_budget *b, uint64_t now)
{
	unsigned n = 0;
	while (n < 1000000 && notify_budget_wait_ns(b, now) == 0) { /* bounded: a bucket that never empties fails */
		notify_budget_charge(b, NOTIFY_COST_DENIAL);
		n++;
	}
	return n;
}

static void test_burst_then_hold(void **st)
{
	struct notify_budget b;
	notify_budget_init(&b, 0, 0, 1000);
	assert_int_equal(b.burst, NOTIFY_BURST);
	assert_int_equal(b.refill, NOTIFY_REFILL);
	assert_int_equal(until_hold(&b, 1000), NOTIFY_BURST / NOTIFY_COST_DENIAL);
	assert_int_equal(b.answered, NOTIFY_BURST / NOTIFY_COST_DENIAL);
	/* empty: held until the next whole period from the start */
	assert_int_equal(notify_budget_wait_ns(&b, 1000), 10 * MS);
	assert_int_equal(notify_budget_wait_ns(&b, 1000 + 4 * MS), 6 * MS);
	/* one period later: one period's worth */
	assert_int_equal(until_hold(&b, 1000 + 10 * MS), NOTIFY_REFILL / NOTIFY_COST_DENIAL);
	/* a call that costs more than is left: the level goes below zero by
	 * it, and the hold lasts until it is above zero again */
	struct notify_budget c;
	notify_budget_init(&c, 10, 3, 0);
	notify_budget_charge(&c, 17);
	assert_int_equal(c.level, -7);
	assert_int_equal(notify_budget_wait_ns(&c, 0), 3 * 10 * MS); /* -7 -> -4 -> -1 -> 2 */
	assert_int_equal(notify_budget_wait_ns(&c, 30 * MS), 0);
	assert_int_equal(c.level, 2);
}

/* A run that calls as fast as it can for 10 s of simulated time (each call
 * 1 us apart): what is answered is the burst and the refills, no more, and
 * the rest of the time it was held. */
static void test_rate_bounded(void **st)
{
	struct notify_budget b;
	notify_budget_init(&b, 0, 0, 0);
	uint64_t now = 0, end = 10000 * MS;
	while (now < end) {
		uint64_t w = notify_budget_wait_ns(&b, now);
		if (w) {
			notify_budget_held(&b, w);
			now += w;
			continue;
		}
		notify_budget_charge(&b, NOTIFY_COST_DENIAL);
		now += 1000;
	}
	uint64_t most = (NOTIFY_BURST + NOTIFY_REFILL * (end / (10 * MS))) / NOTIFY_COST_DENIAL + 1;
	assert_true(b.answered <= most);
	assert_true(b.answered >= most - NOTIFY_REFILL / NOTIFY_COST_DENIAL - 1); /* not starved */
	assert_true(b.throttled >= 999);
	assert_true(b.held_ns >= end - b.answered * 1000 - 10 * MS);
	assert_true(b.level > -NOTIFY_COST_DENIAL);
}

/* After a pause the bucket is full, never more: a long-idle run gets the
 * burst again, not the pause's refills. */
static void test_refill_capped(void **st)
{
	struct notify_budget b;
	notify_budget_init(&b, 0, 0, 0);
	assert_int_equal(until_hold(&b, 0), NOTIFY_BURST / NOTIFY_COST_DENIAL);
	uint64_t later = 3600ULL * 1000 * MS;
	assert_int_equal(until_hold(&b, later), NOTIFY_BURST / NOTIFY_COST_DENIAL);
	assert_int_equal(notify_budget_wait_ns(&b, later), 10 * MS);
	/* observed calls cost less than denials */
	struct notify_budget c;
	notify_budget_init(&c, 0, 0, 0);
	unsigned n = 0;
	while (n < 1000000 && notify_budget_wait_ns(&c, 0) == 0) {
		notify_budget_charge(&c, NOTIFY_COST_CALL);
		n++;
	}
	assert_int_equal(n, NOTIFY_BURST / NOTIFY_COST_CALL);
}

static void test_parse(void **st)
{
	int64_t burst = 0, refill = 0;
	cordon_error err = {0};
	assert_int_equal(notify_budget_parse(NULL, &burst, &refill, &err), 0);
	assert_true(burst == NOTIFY_BURST && refill == NOTIFY_REFILL);
	assert_int_equal(notify_budget_parse("", &burst, &refill, &err), 0);
	assert_true(burst == NOTIFY_BURST && refill == NOTIFY_REFILL);
	assert_int_equal(notify_budget_parse("64:2", &burst, &refill, &err), 0);
	assert_true(burst == 64 && refill == 2);
	assert_int_equal(notify_budget_parse("1073741824:1073741824", &burst, &refill, &err), 0);
	const char *bad[] = {"x", "64", "64:", ":2", "0:1", "1:0", "-1:2", "64:-2", "64:2:3", " 64:2",
			     "64: 2", "64:2x", "+64:2", "1073741825:1", "64:99999999999999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cordon_error e = {0};
		assert_int_equal(notify_budget_parse(bad[i], &burst, &refill, &e), -1);
		assert_int_equal(e.code, EINVAL);
		assert_non_null(strstr(e.msg, "CORDON_NOTIFY_BUDGET"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_then_hold), cmocka_unit_test(test_rate_bounded),
		cmocka_unit_test(test_refill_capped), cmocka_unit_test(test_parse),
	};
	return cmocka_run_group_tests_name("notify_budget", tests, NULL, NULL);
}
