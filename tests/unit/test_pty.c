/* lib/cordon-pty.c's pieces on a pty of the test's own (openpty): end of input
 * as a terminal user types it, a master's end, window size. */
#include <fcntl.h>
#include <pty.h>
#include <unistd.h>
#include "unit.h"
#include "cordon-pty.h"

struct pair {
	int m, s;
};

static struct pair open_pair(void)
{
	struct pair p;
	assert_int_equal(openpty(&p.m, &p.s, NULL, NULL, NULL), 0);
	fcntl(p.m, F_SETFL, O_NONBLOCK);
	fcntl(p.s, F_SETFL, O_NONBLOCK); /* a missing end of file fails, never hangs */
	return p;
}

/* What a canonical-mode reader of the slave gets, read by read. */
static void expect_reads(int s, const char *const *want, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char b[256];
		ssize_t r = read(s, b, sizeof(b));
		assert_true(r >= 0);
		b[r] = '\0';
		assert_string_equal(b, want[i]);
	}
}

static void test_eof_after_partial_line(void **st)
{
	struct pair p = open_pair();
	struct pty_input in;
	pty_input_init(&in, p.m);
	assert_int_equal(pty_input_push(&in, "abc", 3), 0);
	assert_int_equal(pty_input_eof(&in), 0);
	assert_int_equal(pty_input_flush(&in), 1);
	/* The first VEOF ends the line, the second is end of file. */
	const char *want[] = {"abc", ""};
	expect_reads(p.s, want, 2);
	assert_int_equal(pty_input_push(&in, "x", 1), -1); /* nothing after the end */
	pty_input_free(&in);
	close(p.m);
	close(p.s);
}

static void test_eof_after_full_line(void **st)
{
	struct pair p = open_pair();
	struct pty_input in;
	pty_input_init(&in, p.m);
	assert_int_equal(pty_input_push(&in, "one\n", 4), 0);
	assert_int_equal(pty_input_eof(&in), 0);
	assert_int_equal(pty_input_flush(&in), 1);
	assert_int_equal(pty_input_push(&in, "", 0), -1);
	/* One VEOF only: a second would be an end of file too many for a
	 * reader that goes on (a shell reading the next command). */
	const char *want[] = {"one\n", ""};
	expect_reads(p.s, want, 2);
	char b[8];
	assert_int_equal(read(p.s, b, sizeof(b)), -1);
	pty_input_free(&in);
	close(p.m);
	close(p.s);
}

static void test_master_end_is_eof(void **st)
{
	struct pair p = open_pair();
	assert_int_equal(write(p.s, "bye", 3), 3);
	close(p.s);
	char b[16];
	assert_int_equal(pty_read(p.m, b, sizeof(b)), 3);
	assert_int_equal(pty_read(p.m, b, sizeof(b)), 0); /* EIO: every slave closed */
	close(p.m);
}

static void test_winsize(void **st)
{
	struct pair p = open_pair();
	struct pty_winsize ws = {33, 101}, got = {0, 0};
	assert_int_equal(pty_set_winsize(p.m, &ws), 0);
	assert_true(pty_get_winsize(p.s, &got));
	assert_int_equal(got.rows, 33);
	assert_int_equal(got.cols, 101);
	int fd = open("/dev/null", O_RDONLY);
	assert_false(pty_get_winsize(fd, &got));
	close(fd);
	close(p.m);
	close(p.s);
}

int main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_eof_after_partial_line),
		cmocka_unit_test(test_eof_after_full_line),
		cmocka_unit_test(test_master_end_is_eof),
		cmocka_unit_test(test_winsize),
	};
	return cmocka_run_group_tests(t, NULL, NULL);
}
