#include <stdio.h>
#include "unit.h"
#include "redact.h"

static const char *SECRET = "s3cr3t-T0ken/with+chars=";

static redactor *mk(void)
{
	redactor *r = redactor_new();
	cordon_error e;
	assert_int_equal(redactor_add_secret(r, "TOKEN", (const uint8_t *)SECRET, strlen(SECRET), &e), 0);
	assert_int_equal(redactor_compile(r, &e), 0);
	return r;
}

static void b64(const char *alpha, const uint8_t *in, size_t n, char *out, bool pad)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t x = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
		size_t rem = n - i;
		out[o++] = alpha[(x >> 18) & 63];
		out[o++] = alpha[(x >> 12) & 63];
		out[o++] = rem > 1 ? alpha[(x >> 6) & 63] : pad ? '=' : 0;
		out[o++] = rem > 2 ? alpha[x & 63] : pad ? '=' : 0;
		if (!pad && rem < 3)
			o -= 3 - rem;
	}
	out[o] = 0;
}

/* The encodings a program would print: every one must be redacted. */
static int encodings(char out[][256])
{
	static const char std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	static const char url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	const uint8_t *v = (const uint8_t *)SECRET;
	size_t n = strlen(SECRET);
	int k = 0;
	strcpy(out[k++], SECRET);
	b64(std, v, n, out[k++], true);
	b64(url, v, n, out[k++], false);
	char *h = out[k++], *H = out[k++];
	for (size_t i = 0; i < n; i++) {
		sprintf(h + 2 * i, "%02x", v[i]);
		sprintf(H + 2 * i, "%02X", v[i]);
	}
	char *u = out[k++];
	u[0] = 0;
	for (size_t i = 0; i < n; i++) {
		char c = (char)v[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		    c == '.' || c == '~')
			sprintf(u + strlen(u), "%c", c);
		else
			sprintf(u + strlen(u), "%%%02X", (unsigned char)c);
	}
	/* The secret inside a longer base64 text, at each alignment. */
	for (int pre = 1; pre <= 2; pre++) {
		uint8_t tmp[64] = "xyz";
		memcpy(tmp + pre, v, n);
		memcpy(tmp + pre + n, "tail", 4);
		b64(std, tmp, (size_t)pre + n + 4, out[k++], true);
	}
	return k;
}

static bool leaks(const char *out, const char *form)
{
	/* Any 12-byte window of the form must not survive (the stable core of a
	 * shifted base64 differs from the raw form at its edges only). */
	size_t n = strlen(form);
	for (size_t i = 0; i + 12 <= n; i++) {
		char w[13];
		memcpy(w, form + i, 12);
		w[12] = 0;
		if (strstr(out, w) && !strstr(SECRET, w))
			return true;
	}
	return strstr(out, SECRET) != NULL;
}

static void test_every_form_every_split(void **st)
{
	redactor *r = mk();
	char forms[16][256];
	int nf = encodings(forms);
	for (int f = 0; f < nf; f++) {
		char text[600];
		snprintf(text, sizeof(text), "before %s after\n", forms[f]);
		size_t n = strlen(text);
		for (size_t split = 0; split <= n; split++) {
			struct redact_stream s;
			buf out = {0};
			redact_stream_init(&s, r);
			assert_int_equal(redact_feed(&s, (const uint8_t *)text, split, &out), 0);
			assert_int_equal(redact_feed(&s, (const uint8_t *)text + split, n - split, &out), 0);
			assert_int_equal(redact_flush(&s, &out), 0);
			buf_append(&out, "", 0);
			if (!strstr(out.p, "[REDACTED:TOKEN]") || leaks(out.p, forms[f]))
				fail_msg("form %d split %zu: %s", f, split, out.p);
			assert_non_null(strstr(out.p, "before "));
			assert_non_null(strstr(out.p, "after\n"));
			redact_stream_free(&s);
			buf_free(&out);
		}
	}
	redactor_free(r);
}

static void test_byte_by_byte_and_minimal_delay(void **st)
{
	redactor *r = mk();
	struct redact_stream s;
	buf out = {0};
	redact_stream_init(&s, r);
	/* Ordinary text comes straight out. */
	assert_int_equal(redact_feed(&s, (const uint8_t *)"hello world\n", 12, &out), 0);
	assert_int_equal(out.len, 12);
	/* A prefix of the secret is held, and only that. */
	assert_int_equal(redact_feed(&s, (const uint8_t *)"xx s3c", 6, &out), 0);
	assert_int_equal(out.len, 12 + 3);
	/* Then it turns out not to be the secret: released. */
	assert_int_equal(redact_feed(&s, (const uint8_t *)"ond", 3, &out), 0);
	buf_append(&out, "", 0);
	assert_string_equal(out.p, "hello world\nxx s3cond");
	/* One byte at a time. */
	out.len = 0;
	for (const char *p = SECRET; *p; p++)
		assert_int_equal(redact_feed(&s, (const uint8_t *)p, 1, &out), 0);
	redact_flush(&s, &out);
	buf_append(&out, "", 0);
	assert_string_equal(out.p, "[REDACTED:TOKEN]");
	redact_stream_free(&s);
	buf_free(&out);
	redactor_free(r);
}

static void test_across_pipe_buffer(void **st)
{
	/* A secret that straddles a 64 KiB read. */
	redactor *r = mk();
	size_t n = 65536 + 100;
	char *text = malloc(n + 1);
	memset(text, 'a', n);
	memcpy(text + 65536 - 7, SECRET, strlen(SECRET));
	text[n] = 0;
	struct redact_stream s;
	buf out = {0};
	redact_stream_init(&s, r);
	redact_feed(&s, (const uint8_t *)text, 65536, &out);
	redact_feed(&s, (const uint8_t *)text + 65536, n - 65536, &out);
	redact_flush(&s, &out);
	buf_append(&out, "", 0);
	assert_null(strstr(out.p, SECRET));
	assert_non_null(strstr(out.p, "[REDACTED:TOKEN]"));
	redact_stream_free(&s);
	buf_free(&out);
	free(text);
	redactor_free(r);
}

static void test_string_and_many_secrets(void **st)
{
	redactor *r = redactor_new();
	cordon_error e;
	redactor_add_secret(r, "A", (const uint8_t *)"alpha-secret-1", 14, &e);
	redactor_add_secret(r, "B", (const uint8_t *)"bravo-secret-22", 15, &e);
	redactor_add_secret(r, "C", (const uint8_t *)"secret-1", 8, &e); /* a suffix of A */
	redactor_compile(r, &e);
	char *o = redact_string(r, "x alpha-secret-1 y bravo-secret-22 z secret-1");
	assert_non_null(o);
	assert_null(strstr(o, "secret-1 "));
	assert_null(strstr(o, "bravo-secret-22"));
	assert_non_null(strstr(o, "[REDACTED:B]"));
	free(o);
	redactor_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_form_every_split), cmocka_unit_test(test_byte_by_byte_and_minimal_delay),
		cmocka_unit_test(test_across_pipe_buffer), cmocka_unit_test(test_string_and_many_secrets),
	};
	return cmocka_run_group_tests_name("redact", tests, NULL, NULL);
}
