/* CLOCK_MONOTONIC, the library's one reader (lib/clock.c): the vDSO, no
 * system call, nothing allocated (init and an exec's process call it). */
#pragma once
#include <stdint.h>

/* Now, in nanoseconds and in milliseconds since an arbitrary start. */
uint64_t mono_ns(void);
uint64_t mono_ms(void);
