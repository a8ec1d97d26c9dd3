/* CLOCK_MONOTONIC, the library's one reader (lib/clock.c): the vDSO, no
 * system call, nothing allocated (init and an exec's process call it). */
#pragma once
#include <stdint.h>

/* Now, in nanoseconds and in milliseconds since an arbitrary start. */
uint64_t mono_ns(void);
uint64_t mono_ms(void);

/* CLOCK_REALTIME in nanoseconds, a T that orders file stamps: a change
 * made before the call has a ctime/mtime < T, one made after >= T. It can
 * wait up to one tick of the coarse clock (4 ms at HZ 250). */
int64_t stamp_floor_ns(void);

/* The same in two steps: FINE = stamp_now_ns() first, then
 * stamp_floor_after_ns(FINE) gives a T with every stamp given before FINE
 * was taken < T <= every stamp given after the call; a stamp given in
 * between falls either side. It waits only if no tick of the coarse clock
 * has come since FINE. */
int64_t stamp_now_ns(void);
int64_t stamp_floor_after_ns(int64_t fine);
