/* The supervisor's token bucket for seccomp notifications (notify-budget.h). */
#include <errno.h>
#include <stdlib.h>
#include "notify-budget.h"

#define NOTIFY_MAX (1LL << 30)

void notify_budget_init(struct notify_budget *b, int64_t burst, int64_t refill, uint64_t now_ns)
{
	*b = (struct notify_budget){0};
	b->burst = burst > 0 ? burst : NOTIFY_BURST;
	b->refill = refill > 0 ? refill : NOTIFY_REFILL;
	b->level = b->burst;
	b->last_ns = now_ns;
}

static int parse_units(const char *s, char end, const char **rest, int64_t *v)
{
	char *e;
	errno = 0;
	long long n = strtoll(s, &e, 10);
	if (e == s || *e != end || errno || n < 1 || n > NOTIFY_MAX || (*s < '0' || *s > '9'))
		return -1;
	*v = n;
	*rest = e + 1;
	return 0;
}

int notify_budget_parse(const char *s, int64_t *burst, int64_t *refill, cordon_error *err)
{
	*burst = NOTIFY_BURST;
	*refill = NOTIFY_REFILL;
	if (!s || !*s)
		return 0;
	const char *rest;
	int64_t bv, rv;
	if (parse_units(s, ':', &rest, &bv) < 0 || parse_units(rest, '\0', &rest, &rv) < 0)
		return cordon_err(err, EINVAL,
				  "CORDON_NOTIFY_BUDGET '%s': expected BURST:REFILL, two whole numbers of units from 1 to %lld (refill per 10 ms)",
				  s, NOTIFY_MAX);
	*burst = bv;
	*refill = rv;
	return 0;
}

void notify_budget_charge(struct notify_budget *b, unsigned cost)
{
	b->answered++;
	b->level -= cost;
}

/* Whole periods since the last credit, each refill units, up to the burst. */
static void credit(struct notify_budget *b, uint64_t now_ns)
{
	if (now_ns <= b->last_ns)
		return;
	uint64_t periods = (now_ns - b->last_ns) / NOTIFY_PERIOD_NS;
	if (!periods)
		return;
	b->last_ns += periods * NOTIFY_PERIOD_NS;
	/* No overflow: a level below the burst needs fewer than burst + cost
	 * refills, and the burst is at most 2^30. */
	uint64_t need = (uint64_t)(b->burst - b->level + b->refill - 1) / (uint64_t)b->refill;
	b->level = periods >= need ? b->burst : b->level + (int64_t)periods * b->refill;
}

uint64_t notify_budget_wait_ns(struct notify_budget *b, uint64_t now_ns)
{
	credit(b, now_ns);
	if (b->level > 0)
		return 0;
	/* The periods until the level is above zero again, from the last credit. */
	uint64_t periods = (uint64_t)(-b->level) / (uint64_t)b->refill + 1;
	uint64_t until = b->last_ns + periods * NOTIFY_PERIOD_NS;
	return until > now_ns ? until - now_ns : 1;
}

void notify_budget_held(struct notify_budget *b, uint64_t held_ns)
{
	b->throttled++;
	b->held_ns += held_ns;
}
