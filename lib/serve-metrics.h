/* cordon serve's counters and their Prometheus text (GET /v1/metrics,
 * docs/api.md "Health and metrics"). The counters are atomics any thread
 * of the server adds to; metrics_note_result reads one result (an exec's
 * result event, a one-shot run's report) for its status and denials;
 * metrics_render writes the text. No allocation but the output buffer, no
 * system call (the result parser is json.c's, fuzzed). */
#pragma once
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "strv.h"

/* The statuses of cordon.report/1 and of an exec's result (docs/api.md:
 * exit, killed, start-error, session-ended besides), and "other" for
 * anything else a result might say (the label set stays bounded whatever
 * comes back). */
#define METRICS_STATUSES 18
/* Session start latency buckets, seconds (le="+Inf" besides). */
#define METRICS_BUCKETS 12

enum metrics_kind { METRICS_EXEC, METRICS_RUN, METRICS_KINDS };
enum metrics_start { METRICS_WARM, METRICS_COLD, METRICS_STARTS };

struct serve_metrics {
	atomic_uint_fast64_t sessions_created;
	atomic_uint_fast64_t sessions_refused; /* 4xx/5xx to POST /v1/sessions after the checks */
	atomic_uint_fast64_t results[METRICS_KINDS][METRICS_STATUSES];
	atomic_uint_fast64_t denials[METRICS_KINDS];
	/* session start: POST /v1/sessions to its 201, warm (from the pool) or cold */
	atomic_uint_fast64_t start_bucket[METRICS_STARTS][METRICS_BUCKETS];
	atomic_uint_fast64_t start_count[METRICS_STARTS];
	atomic_uint_fast64_t start_sum_us[METRICS_STARTS];
};

/* What the server knows at the moment of the scrape. */
struct metrics_now {
	int sessions, sessions_max;
	int pool_size, pool_ready;
	uint64_t pool_hits, pool_misses, pool_failures;
	int runs_active;
};

/* One session started after ns nanoseconds. */
void metrics_session_started(struct serve_metrics *m, enum metrics_start how, uint64_t ns);
/* One result of kind: the JSON text (an exec's result event or a run's
 * report) gives its status and its denials (the sum of denials[].count). A
 * text that does not parse counts as status "other" with no denials. */
void metrics_note_result(struct serve_metrics *m, enum metrics_kind kind, const char *json, size_t len);
/* The exposition text (text/plain; version=0.0.4) appended to out; -1 when
 * out of memory. */
int metrics_render(const struct serve_metrics *m, const struct metrics_now *now, buf *out);
