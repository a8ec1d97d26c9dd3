/* lib/base64.c: the library's one base64 (RFC 4648's vectors, and what it
 * refuses). */
#include "unit.h"
#include "base64.h"

static void test_vectors(void **st)
{
	const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	const char *out[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		buf b = {0};
		assert_int_equal(b64_encode(&b, in[i], strlen(in[i])), 0);
		assert_int_equal(b.len, strlen(out[i]));
		assert_memory_equal(b.p ? b.p : "", out[i], b.len);
		buf_free(&b);
		uint8_t d[16];
		assert_int_equal(b64_decode(out[i], strlen(out[i]), d), (ssize_t)strlen(in[i]));
		assert_memory_equal(d, in[i], strlen(in[i]));
		buf c = {0};
		assert_true(b64_decode_buf(out[i], strlen(out[i]), &c));
		assert_int_equal(c.len, strlen(in[i]));
		assert_memory_equal(c.p ? c.p : "", in[i], c.len);
		buf_free(&c);
	}
	/* every byte value, across the encoder's chunks */
	uint8_t all[1000], back[1000];
	for (size_t i = 0; i < sizeof(all); i++)
		all[i] = (uint8_t)(i * 7);
	buf b = {0};
	assert_int_equal(b64_encode(&b, all, sizeof(all)), 0);
	assert_int_equal(b64_decode(b.p, b.len, back), (ssize_t)sizeof(all));
	assert_memory_equal(all, back, sizeof(all));
	buf_free(&b);
	assert_string_equal(base64_url + 62, "-_");
	assert_string_equal(base64_std + 62, "+/");
}

static void test_refused(void **st)
{
	const char *bad[] = {"Zg=", "Zg", "Z===", "Zg=A", "=g==", "Zm9v=g==", "Zm-v", "Zm_v", "Zm9 ", "Zg==Zg=="};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t d[16];
		assert_int_equal(b64_decode(bad[i], strlen(bad[i]), d), -1);
		buf c = {0};
		assert_false(b64_decode_buf(bad[i], strlen(bad[i]), &c));
		buf_free(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors), cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests_name("base64", tests, NULL, NULL);
}
