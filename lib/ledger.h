/* Resource feasibility: the peak live payload of an alloc/free event list. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "policy.h"

struct ledger_result {
	uint64_t peak_bytes;
	strv live_at_peak; /* names, in allocation order */
};

/* Sweep the events in order. Refuses freeing an unknown (or already freed)
 * buffer, allocating a live name twice, and overflow, naming the event's
 * position (name: "FILE:LINE:COL"). */
int ledger_compute(const struct ledger *l, const char *name, struct ledger_result *out,
		   cordon_error *err);
void ledger_result_free(struct ledger_result *r);
void ledger_free(struct ledger *l);
