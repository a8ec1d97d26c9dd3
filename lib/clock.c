#include <time.h>
#include "clock.h"

uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t mono_ms(void)
{
	return mono_ns() / 1000000ULL;
}

static int64_t ts_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A file system stamps a change with the coarse clock (or, since 6.13 on
 * some, with a finer time above it when the old stamp was read): a stamp
 * given before stamp_now_ns() is at most what it returned; one given after
 * a reading of the coarse clock is at least that reading. So the first
 * coarse reading past FINE is a T with every stamp given before FINE was
 * taken < T <= every stamp given after T was read. Compared with the fine
 * time alone, a change in the same tick after it looked older (Debian
 * 12's 6.1). A stamp given between the two readings may fall either side:
 * callers take FINE early and T once they need it (a run's change set: T
 * just before its command may start), so that the wait for the tick, if
 * any is left, is not on their path. */
int64_t stamp_now_ns(void)
{
	return ts_ns(CLOCK_REALTIME);
}

int64_t stamp_floor_after_ns(int64_t fine)
{
	struct timespec res;
	if (clock_getres(CLOCK_REALTIME_COARSE, &res) < 0 || res.tv_sec > 0)
		res.tv_nsec = 10000000;
	/* A tick can come late (a loaded virtual machine): up to 256 waits of
	 * a quarter tick or more, then the fine time (the old order). */
	for (int i = 0; i < 256; i++) {
		int64_t coarse = ts_ns(CLOCK_REALTIME_COARSE);
		if (coarse > fine)
			return coarse;
		int64_t wait = coarse + res.tv_nsec - ts_ns(CLOCK_REALTIME);
		if (wait < res.tv_nsec / 4)
			wait = res.tv_nsec / 4;
		struct timespec d = {0, (long)(wait < 999999999 ? wait : 999999999)};
		nanosleep(&d, NULL);
	}
	return fine + 1;
}

int64_t stamp_floor_ns(void)
{
	return stamp_floor_after_ns(stamp_now_ns());
}
