#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup.h"
#include "error.h"
#include "ledger.h"

int ledger_compute(const struct ledger *l, const char *name, struct ledger_result *out,
		   cordon_error *err)
{
	memset(out, 0, sizeof(*out));
	/* live[i]: event index of the alloc that is live, or SIZE_MAX. */
	size_t *live = calloc(l->n ? l->n : 1, sizeof(size_t));
	size_t nlive = 0;
	uint64_t cur = 0, peak = 0;
	size_t *peak_set = calloc(l->n ? l->n : 1, sizeof(size_t));
	size_t npeak = 0;
	int r = -1;
	if (!live || !peak_set) {
		cordon_oom(err);
		goto out;
	}
	for (size_t i = 0; i < l->n; i++) {
		const struct ledger_event *e = &l->ev[i];
		size_t k;
		for (k = 0; k < nlive; k++)
			if (strcmp(l->ev[live[k]].name, e->name) == 0)
				break;
		if (e->alloc) {
			if (k < nlive) {
				cordon_err(err, 0, "%s:%d:%d: \"%s\" is allocated again while still live",
					   name, e->line, e->col, e->name);
				goto out;
			}
			if (cur > UINT64_MAX - e->bytes) {
				cordon_err(err, 0, "%s:%d:%d: total bytes overflow", name, e->line, e->col);
				goto out;
			}
			cur += e->bytes;
			live[nlive++] = i;
			if (cur > peak) {
				peak = cur;
				memcpy(peak_set, live, nlive * sizeof(size_t));
				npeak = nlive;
			}
		} else {
			if (k == nlive) {
				cordon_err(err, 0, "%s:%d:%d: \"%s\" is freed but not live (never allocated, or freed twice)",
					   name, e->line, e->col, e->name);
				goto out;
			}
			cur -= l->ev[live[k]].bytes;
			memmove(&live[k], &live[k + 1], (nlive - k - 1) * sizeof(size_t));
			nlive--;
		}
	}
	out->peak_bytes = peak;
	for (size_t i = 0; i < npeak; i++)
		if (strv_push(&out->live_at_peak, l->ev[peak_set[i]].name) < 0) {
			cordon_oom(err);
			goto out;
		}
	r = 0;
out:
	free(live);
	free(peak_set);
	if (r < 0)
		ledger_result_free(out);
	return r;
}

void ledger_result_free(struct ledger_result *r)
{
	strv_free(&r->live_at_peak);
}

void ledger_free(struct ledger *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->ev[i].name);
	free(l->ev);
	l->ev = NULL;
	l->n = 0;
}
