/* What the run's seccomp notifications may cost the supervisor: a token
 * bucket per run (lib/notify-budget.c). Every notification is answered and
 * counted as before; when the bucket is empty the supervisor stops reading
 * the listener until it has refilled, so the run's next calls wait in the
 * kernel (the run pays with its own time) and the supervisor's CPU per
 * second stays bounded whatever the run does: at most refill units per
 * period, beyond the burst. Pure arithmetic on times the caller passes
 * (no clock read, no system call): cordon run's observer thread
 * (sup-observe.c) and cordon-oci's supervisor loop (oci-supervisor.c)
 * each hold one. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "error.h"

/* The defaults: a burst of 4,096 units, 256 units back every 10 ms
 * (25,600 a second). An observed call (answered CONTINUE: the kernel
 * decides) costs 2, a denial 16: at most 12,800 observed calls or 1,600
 * denials a second once the burst is spent. */
#define NOTIFY_BURST 4096
#define NOTIFY_REFILL 256
#define NOTIFY_PERIOD_NS 10000000ULL
#define NOTIFY_COST_CALL 2
#define NOTIFY_COST_DENIAL 16

struct notify_budget {
	int64_t level;       /* units left; one call's cost below zero at most */
	int64_t burst;       /* the most it holds */
	int64_t refill;      /* units back per NOTIFY_PERIOD_NS */
	uint64_t last_ns;    /* when the last whole period was credited */
	uint64_t answered;   /* notifications answered */
	uint64_t throttled;  /* times the supervisor held the listener */
	uint64_t held_ns;    /* how long, in all */
};

/* Full at now_ns, with burst and refill (0: the defaults). */
void notify_budget_init(struct notify_budget *b, int64_t burst, int64_t refill, uint64_t now_ns);
/* CORDON_NOTIFY_BUDGET=BURST:REFILL (units; refill per 10 ms), NULL or
 * empty: the defaults. Anything else (not two integers from 1 to 2^30) is
 * refused with EINVAL. */
int notify_budget_parse(const char *s, int64_t *burst, int64_t *refill, cordon_error *err);
/* One notification answered, which cost this many units. */
void notify_budget_charge(struct notify_budget *b, unsigned cost);
/* How long to leave the listener unread from now_ns before the next
 * notification (0: read it now). Credits the whole periods past. */
uint64_t notify_budget_wait_ns(struct notify_budget *b, uint64_t now_ns);
/* A hold is over: it lasted held_ns (counted once in throttled). */
void notify_budget_held(struct notify_budget *b, uint64_t held_ns);
