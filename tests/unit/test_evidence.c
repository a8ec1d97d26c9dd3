/* Issue 10, part 3: the supervisor's work on what a run leaves is bounded.
 * Counted, never timed. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "unit.h"
#include "hash.h"
#include "report.h"

/* 100k distinct refused targets cost 43 s of supervisor CPU (a linear scan
 * per denial). Now: a hash index, 1024 targets kept, the rest counted. */
static void test_denials_bounded_and_constant_time(void **st)
{
	struct run_report r;
	report_init(&r);
	char t[64];
	for (int i = 0; i < 100000; i++) {
		snprintf(t, sizeof(t), "10.1.%d.%d:%d", i >> 16, (i >> 8) & 255, i & 255);
		assert_int_equal(report_add_denial(&r, "network", t), 0);
	}
	assert_int_equal(r.ndenials, DENIALS_MAX_TARGETS);
	assert_int_equal(r.denials_omitted, 100000 - DENIALS_MAX_TARGETS);
	/* A kept target is still counted, once per call. */
	assert_int_equal(report_add_denial(&r, "network", "10.1.0.0:0"), 0);
	assert_int_equal(r.denials[0].count, 2);
	/* The same target under another kind is another record (or omitted). */
	assert_int_equal(report_add_denial(&r, "file", "10.1.0.0:0"), 0);
	assert_int_equal(r.denials_omitted, 100000 - DENIALS_MAX_TARGETS + 1);
	/* Constant work per denial: candidate comparisons, not a scan. */
	if (r.denial_idx.probes > 2 * 100002)
		fail_msg("%llu comparisons for 100002 denials", (unsigned long long)r.denial_idx.probes);
	/* A target longer than a record is one record, not one per call. */
	char big[600];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	struct run_report r2;
	report_init(&r2);
	for (int i = 0; i < 3; i++)
		report_add_denial(&r2, "file", big);
	assert_int_equal(r2.ndenials, 1);
	assert_int_equal(r2.denials[0].count, 3);
	report_free(&r2);
	report_free(&r);
}

static int temp_file(char *path)
{
	strcpy(path, "/tmp/cordon-unit-hash.XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	return fd;
}

/* A 20 GB sparse file: not read at all, the budget untouched. */
static void test_hash_budget_refuses_without_reading(void **st)
{
	char path[64];
	int fd = temp_file(path);
	assert_int_equal(ftruncate(fd, 20LL << 30), 0);
	struct stat sb;
	assert_int_equal(fstat(fd, &sb), 0);
	struct hash_budget b;
	hash_budget_init(&b);
	char out[65];
	assert_int_equal(sha256_fd_budget(fd, &sb, &b, out), HASH_OVER_BYTES);
	assert_int_equal(b.hashed, 0);
	assert_int_equal(b.skipped, 1);
	assert_int_equal(b.bytes_left, HASH_BUDGET_BYTES);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 0);
	close(fd);
}

/* Holes (found with SEEK_DATA) hash as the zeros they read as. */
static void test_sparse_hash_matches_dense(void **st)
{
	char path[64];
	int fd = temp_file(path);
	size_t size = 3u << 20;
	char *dense = calloc(1, size);
	assert_non_null(dense);
	memcpy(dense + (1u << 20), "data", 4);
	assert_int_equal(pwrite(fd, "data", 4, 1 << 20), 4);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	char want[65], got[65];
	sha256_hex(dense, size, want);
	struct stat sb;
	assert_int_equal(fstat(fd, &sb), 0);
	struct hash_budget b;
	hash_budget_init(&b);
	assert_int_equal(sha256_fd_budget(fd, &sb, &b, got), HASH_OK);
	assert_string_equal(got, want);
	assert_int_equal(b.hashed, size);
	free(dense);
	close(fd);
}

/* A spent time budget stops hashing (the deadline set in the past, not a
 * clock measured by the test). */
static void test_time_budget(void **st)
{
	char path[64];
	int fd = temp_file(path);
	assert_int_equal(pwrite(fd, "abc", 3, 0), 3);
	struct stat sb;
	assert_int_equal(fstat(fd, &sb), 0);
	struct hash_budget b;
	hash_budget_init(&b);
	b.deadline_ns = 1;
	char out[65];
	assert_int_equal(sha256_fd_budget(fd, &sb, &b, out), HASH_OVER_TIME);
	assert_int_equal(b.skipped, 1);
	assert_string_equal(out, "");
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_denials_bounded_and_constant_time),
		cmocka_unit_test(test_hash_budget_refuses_without_reading),
		cmocka_unit_test(test_sparse_hash_matches_dense),
		cmocka_unit_test(test_time_budget),
	};
	return cmocka_run_group_tests_name("evidence", tests, NULL, NULL);
}
