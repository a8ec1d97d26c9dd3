/* lib/serve-metrics.c: cordon serve's counters read from results as they
 * come (a hostile or broken one counts as "other", never more), and the
 * Prometheus text. */
#include "unit.h"
#include "serve-metrics.h"

static const char *line_of(const buf *b, const char *prefix)
{
	static char l[256];
	const char *p = b->p;
	while (p && *p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (strncmp(p, prefix, strlen(prefix)) == 0 && n < sizeof(l)) {
			memcpy(l, p, n);
			l[n] = '\0';
			return l;
		}
		p = e ? e + 1 : NULL;
	}
	return "";
}

static void test_results_and_text(void **st)
{
	static struct serve_metrics m;
	const char *ok = "{\"type\": \"result\", \"status\": \"ok\", \"denials\": "
			 "[{\"kind\": \"syscall\", \"count\": 2}, {\"kind\": \"file\", \"count\": 3}]}";
	metrics_note_result(&m, METRICS_EXEC, ok, strlen(ok));
	const char *bad[] = {"", "{", "[]", "{\"status\": 7}", "{\"status\": \"pwned\\\"} 1\\n\"}",
			     "{\"status\": \"ok\", \"denials\": [{\"count\": -5}, {\"count\": 1e300}, 3]}"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		metrics_note_result(&m, METRICS_RUN, bad[i], strlen(bad[i]));
	metrics_session_started(&m, METRICS_COLD, 30000000); /* 30 ms */
	metrics_session_started(&m, METRICS_WARM, 2000000);  /* 2 ms */
	struct metrics_now now = {.sessions = 1, .sessions_max = 64, .pool_size = 2, .pool_ready = 1, .pool_hits = 1};
	buf b = {0};
	assert_int_equal(metrics_render(&m, &now, &b), 0);
	assert_string_equal(line_of(&b, "cordon_serve_results_total{kind=\"exec\",status=\"ok\"}"),
			    "cordon_serve_results_total{kind=\"exec\",status=\"ok\"} 1");
	assert_string_equal(line_of(&b, "cordon_serve_denials_total{kind=\"exec\"}"), "cordon_serve_denials_total{kind=\"exec\"} 5");
	/* the last bad one says "ok" but no count is a sane number */
	assert_string_equal(line_of(&b, "cordon_serve_results_total{kind=\"run\",status=\"ok\"}"),
			    "cordon_serve_results_total{kind=\"run\",status=\"ok\"} 1");
	assert_string_equal(line_of(&b, "cordon_serve_results_total{kind=\"run\",status=\"other\"}"),
			    "cordon_serve_results_total{kind=\"run\",status=\"other\"} 5");
	assert_string_equal(line_of(&b, "cordon_serve_denials_total{kind=\"run\"}"), "cordon_serve_denials_total{kind=\"run\"} 0");
	assert_null(strstr(b.p, "pwned"));
	assert_string_equal(line_of(&b, "cordon_serve_session_start_seconds_bucket{pool=\"cold\",le=\"0.025\"}"),
			    "cordon_serve_session_start_seconds_bucket{pool=\"cold\",le=\"0.025\"} 0");
	assert_string_equal(line_of(&b, "cordon_serve_session_start_seconds_bucket{pool=\"cold\",le=\"0.05\"}"),
			    "cordon_serve_session_start_seconds_bucket{pool=\"cold\",le=\"0.05\"} 1");
	assert_string_equal(line_of(&b, "cordon_serve_session_start_seconds_bucket{pool=\"warm\",le=\"0.005\"}"),
			    "cordon_serve_session_start_seconds_bucket{pool=\"warm\",le=\"0.005\"} 1");
	assert_string_equal(line_of(&b, "cordon_serve_session_start_seconds_count{pool=\"cold\"}"),
			    "cordon_serve_session_start_seconds_count{pool=\"cold\"} 1");
	assert_string_equal(line_of(&b, "cordon_serve_sessions_created_total"), "cordon_serve_sessions_created_total 2");
	assert_string_equal(line_of(&b, "cordon_serve_pool_sessions{state=\"starting\"}"),
			    "cordon_serve_pool_sessions{state=\"starting\"} 1");
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_results_and_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
