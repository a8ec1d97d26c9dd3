/* cordon serve's metrics (serve-metrics.h). */
#include <stdbool.h>
#include <string.h>
#include "serve-metrics.h"
#include "error.h"
#include "json.h"

static const char *const statuses[METRICS_STATUSES] = {
	"ok", "exit-nonzero", "signaled", "timeout", "cpu-limit", "memory-limit", "output-limit",
	"file-size-limit", "denied", "unauthorized", "infeasible", "setup-error", "interrupted",
	"exit", "killed", "start-error", "session-ended", "other",
};
static const double bucket_le[METRICS_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
static const char *const kinds[METRICS_KINDS] = {"exec", "run"};
static const char *const starts[METRICS_STARTS] = {"warm", "cold"};

void metrics_session_started(struct serve_metrics *m, enum metrics_start how, uint64_t ns)
{
	atomic_fetch_add(&m->sessions_created, 1);
	for (int i = 0; i < METRICS_BUCKETS; i++)
		if ((double)ns / 1e9 <= bucket_le[i])
			atomic_fetch_add(&m->start_bucket[how][i], 1);
	atomic_fetch_add(&m->start_count[how], 1);
	atomic_fetch_add(&m->start_sum_us[how], ns / 1000);
}

static int status_index(const jnode *st)
{
	for (int i = 0; st && st->type == J_STR && i < METRICS_STATUSES - 1; i++)
		if (strcmp(st->str, statuses[i]) == 0)
			return i;
	return METRICS_STATUSES - 1;
}

void metrics_note_result(struct serve_metrics *m, enum metrics_kind kind, const char *json, size_t len)
{
	cordon_error e;
	jnode *j = json_parse(json, len, &e);
	const jnode *st = j && j->type == J_OBJ ? json_get(j, "status") : NULL;
	atomic_fetch_add(&m->results[kind][status_index(st)], 1);
	const jnode *d = j && j->type == J_OBJ ? json_get(j, "denials") : NULL;
	uint64_t n = 0;
	for (size_t i = 0; d && d->type == J_ARR && i < d->n; i++) {
		const jnode *c = d->items[i]->type == J_OBJ ? json_get(d->items[i], "count") : NULL;
		if (c && c->type == J_NUM && c->num >= 1 && c->num < 1e15)
			n += (uint64_t)c->num;
	}
	atomic_fetch_add(&m->denials[kind], n);
	json_free(j);
}

/* Every line through P: a failed append (out of memory) is remembered. */
#define P(...) (bad |= buf_printf(__VA_ARGS__) < 0)
#define family(o, name, type, help) P(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type)

int metrics_render(const struct serve_metrics *m, const struct metrics_now *now, buf *o)
{
	bool bad = false;
	family(o, "cordon_serve_sessions", "gauge", "Sessions of clients now (the warm pool's apart).");
	P(o, "cordon_serve_sessions %d\n", now->sessions);
	family(o, "cordon_serve_sessions_max", "gauge", "The most sessions the server runs at once (--max-sessions).");
	P(o, "cordon_serve_sessions_max %d\n", now->sessions_max);
	family(o, "cordon_serve_sessions_created_total", "counter", "Sessions started for clients.");
	P(o, "cordon_serve_sessions_created_total %llu\n",
		   (unsigned long long)atomic_load(&m->sessions_created));
	family(o, "cordon_serve_runs_active", "gauge", "One-shot runs going on.");
	P(o, "cordon_serve_runs_active %d\n", now->runs_active);
	family(o, "cordon_serve_pool_sessions", "gauge", "Warm pool sessions, by state.");
	P(o, "cordon_serve_pool_sessions{state=\"ready\"} %d\n", now->pool_ready);
	P(o, "cordon_serve_pool_sessions{state=\"starting\"} %d\n",
		   now->pool_size > now->pool_ready ? now->pool_size - now->pool_ready : 0);
	family(o, "cordon_serve_pool_claims_total", "counter", "Requests the warm pool served (hit) or could not (miss).");
	P(o, "cordon_serve_pool_claims_total{result=\"hit\"} %llu\n", (unsigned long long)now->pool_hits);
	P(o, "cordon_serve_pool_claims_total{result=\"miss\"} %llu\n", (unsigned long long)now->pool_misses);
	family(o, "cordon_serve_pool_failures_total", "counter", "Warm sessions that failed to start.");
	P(o, "cordon_serve_pool_failures_total %llu\n", (unsigned long long)now->pool_failures);
	family(o, "cordon_serve_results_total", "counter",
	       "Execs and one-shot runs that ended, by kind and status (cordon.report/1's).");
	for (int k = 0; k < METRICS_KINDS; k++)
		for (int s = 0; s < METRICS_STATUSES; s++)
			P(o, "cordon_serve_results_total{kind=\"%s\",status=\"%s\"} %llu\n", kinds[k], statuses[s],
				   (unsigned long long)atomic_load(&m->results[k][s]));
	family(o, "cordon_serve_denials_total", "counter", "Denials the ended execs and runs reported (their counts summed).");
	for (int k = 0; k < METRICS_KINDS; k++)
		P(o, "cordon_serve_denials_total{kind=\"%s\"} %llu\n", kinds[k],
			   (unsigned long long)atomic_load(&m->denials[k]));
	family(o, "cordon_serve_session_start_seconds", "histogram",
	       "From POST /v1/sessions to its answer, by where the session came from.");
	for (int h = 0; h < METRICS_STARTS; h++) {
		for (int i = 0; i < METRICS_BUCKETS; i++)
			P(o, "cordon_serve_session_start_seconds_bucket{pool=\"%s\",le=\"%g\"} %llu\n", starts[h],
				   bucket_le[i], (unsigned long long)atomic_load(&m->start_bucket[h][i]));
		unsigned long long n = atomic_load(&m->start_count[h]);
		P(o, "cordon_serve_session_start_seconds_bucket{pool=\"%s\",le=\"+Inf\"} %llu\n", starts[h], n);
		P(o, "cordon_serve_session_start_seconds_sum{pool=\"%s\"} %.6f\n", starts[h],
			   (double)atomic_load(&m->start_sum_us[h]) / 1e6);
		P(o, "cordon_serve_session_start_seconds_count{pool=\"%s\"} %llu\n", starts[h], n);
	}
	return bad ? -1 : 0;
}
