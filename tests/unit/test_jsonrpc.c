#include <stdio.h>
#include "unit.h"
#include "jsonrpc.h"

/* The next line as a string ("" for none, "TOOBIG"). */
static const char *next(struct jrpc_reader *r, char *out, size_t n)
{
	const char *line;
	size_t len;
	int k = jrpc_reader_next(r, &line, &len);
	if (k == JRPC_NONE)
		return "";
	if (k == JRPC_TOOBIG)
		return "TOOBIG";
	snprintf(out, n, "%.*s", (int)len, line);
	return out;
}

static void test_reader_lines(void **st)
{
	struct jrpc_reader r = {.max = 16};
	char b[64];
	assert_int_equal(jrpc_reader_push(&r, "ab", 2), 0);
	assert_string_equal(next(&r, b, sizeof(b)), "");
	assert_int_equal(jrpc_reader_push(&r, "c\r\n\n\nde\n", 8), 0);
	assert_string_equal(next(&r, b, sizeof(b)), "abc"); /* CRLF, then empty lines skipped */
	assert_string_equal(next(&r, b, sizeof(b)), "de");
	assert_string_equal(next(&r, b, sizeof(b)), "");
	jrpc_reader_free(&r);
}

static void test_reader_oversized(void **st)
{
	struct jrpc_reader r = {.max = 8};
	char b[64];
	/* a long line in pieces: reported once, dropped to its newline, and
	 * never held beyond max */
	assert_int_equal(jrpc_reader_push(&r, "0123456789", 10), 0);
	assert_string_equal(next(&r, b, sizeof(b)), "TOOBIG");
	assert_string_equal(next(&r, b, sizeof(b)), "");
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(jrpc_reader_push(&r, "xxxxxxxx", 8), 0);
		assert_string_equal(next(&r, b, sizeof(b)), "");
		assert_true(r.len - r.start <= 8);
	}
	assert_int_equal(jrpc_reader_push(&r, "yy\nok\n", 6), 0);
	assert_string_equal(next(&r, b, sizeof(b)), "ok");
	/* a long line that arrives whole with its newline */
	assert_int_equal(jrpc_reader_push(&r, "0123456789abc\nfine\n", 19), 0);
	assert_string_equal(next(&r, b, sizeof(b)), "TOOBIG");
	assert_string_equal(next(&r, b, sizeof(b)), "fine");
	jrpc_reader_free(&r);
}

static int parse(const char *s, struct jrpc_msg *m, int *code)
{
	cordon_error err;
	*code = 0;
	return jrpc_parse(s, strlen(s), m, code, &err);
}

static void test_parse(void **st)
{
	struct jrpc_msg m;
	int code;
	assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}", &m, &code), 0);
	assert_int_equal(m.kind, JRPC_REQUEST);
	assert_string_equal(m.method, "ping");
	char *line = jrpc_result_line(m.id, "{}\n");
	assert_string_equal(line, "{\"jsonrpc\": \"2.0\",\"id\": 7,\"result\": {}}\n");
	free(line);
	jrpc_msg_free(&m);
	assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &m, &code), 0);
	assert_int_equal(m.kind, JRPC_NOTIFICATION);
	jrpc_msg_free(&m);
	assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}", &m, &code), 0);
	assert_int_equal(m.kind, JRPC_RESPONSE);
	jrpc_msg_free(&m);

	assert_int_equal(parse("{\"jsonrpc\":", &m, &code), -1);
	assert_int_equal(code, JRPC_PARSE_ERROR);
	assert_null(m.id);
	jrpc_msg_free(&m);
	static const char *const invalid[] = {
		"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", "\"x\"", "{\"id\":1,\"method\":\"ping\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":3}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[]}", "{\"jsonrpc\":\"2.0\",\"id\":1}",
	};
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		assert_int_equal(parse(invalid[i], &m, &code), -1);
		assert_int_equal(code, JRPC_INVALID_REQUEST);
		jrpc_msg_free(&m);
	}
	/* the id is kept for the answer when it could be read */
	assert_int_equal(parse("{\"jsonrpc\":\"1.0\",\"id\":\"q\",\"method\":\"x\"}", &m, &code), -1);
	assert_non_null(m.id);
	line = jrpc_error_line(m.id, code, "bad\nline");
	assert_string_equal(line, "{\"jsonrpc\": \"2.0\",\"id\": \"q\",\"error\": {\"code\": -32600,\"message\": \"bad\\u000aline\"}}\n");
	free(line);
	jrpc_msg_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reader_lines),
		cmocka_unit_test(test_reader_oversized),
		cmocka_unit_test(test_parse),
	};
	return cmocka_run_group_tests_name("jsonrpc", tests, NULL, NULL);
}
