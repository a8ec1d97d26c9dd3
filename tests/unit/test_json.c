#include "unit.h"
#include "json.h"

static jnode *parse_ok(const char *s)
{
	cordon_error e = {0};
	jnode *n = json_parse(s, strlen(s), &e);
	if (!n)
		fail_msg("parse failed: %s", e.msg);
	return n;
}

static void expect_err(const char *s, const char *msg)
{
	cordon_error e = {0};
	jnode *n = json_parse(s, strlen(s), &e);
	assert_null(n);
	if (!strstr(e.msg, msg))
		fail_msg("error \"%s\" does not contain \"%s\"", e.msg, msg);
}

static void test_values(void **st)
{
	jnode *n = parse_ok(" {\"a\": [1, -2.5e3, true, false, null, \"x\\u00e9\\ud83d\\ude00\\n\"]}");
	assert_int_equal(n->type, J_OBJ);
	jnode *a = json_get(n, "a");
	assert_non_null(a);
	assert_int_equal(a->n, 6);
	assert_true(a->items[0]->num_is_int);
	assert_false(a->items[1]->num_is_int);
	assert_true(a->items[1]->num == -2500.0);
	assert_true(a->items[2]->b);
	assert_int_equal(a->items[4]->type, J_NULL);
	assert_string_equal(a->items[5]->str, "x\xc3\xa9\xf0\x9f\x98\x80\n");
	json_free(n);
}

static void test_positions(void **st)
{
	jnode *n = parse_ok("{\n  \"k\": {\n    \"inner\": 5\n  }\n}");
	assert_int_equal(n->kline[0], 2);
	assert_int_equal(n->kcol[0], 3);
	jnode *k = json_get(n, "k");
	assert_int_equal(k->kline[0], 3);
	assert_int_equal(k->kcol[0], 5);
	assert_int_equal(k->items[0]->line, 3);
	assert_int_equal(k->items[0]->col, 14);
	json_free(n);
}

static void test_errors(void **st)
{
	expect_err("{\"a\": 1, \"a\": 2}", "1:10: duplicate key \"a\"");
	expect_err("{\"a\": 1,}", "expected a string key");
	expect_err("[1 2]", "1:4: expected ',' or ']'");
	expect_err("{\"a\": 01}", "1:8: expected ',' or '}'");
	expect_err("\"abc", "unterminated string");
	expect_err("\"a\x01\"", "control character");
	expect_err("\"\\u0000\"", "NUL");
	expect_err("\"\\ud800\"", "surrogate");
	expect_err("\"\xff\"", "invalid UTF-8");
	expect_err("\"\xc0\xaf\"", "invalid UTF-8"); /* overlong */
	expect_err("[1] x", "1:5: trailing");
	expect_err("", "unexpected end");
	expect_err("nul", "unexpected");
	expect_err("1e999", "out of range");
	char deep[200];
	memset(deep, '[', 100);
	deep[100] = '\0';
	expect_err(deep, "nesting too deep");
}

static void test_writer(void **st)
{
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "s");
	jw_str(&w, "a\"b\\c\n\x01\xff");
	jw_key(&w, "arr");
	jw_arr_begin(&w);
	jw_int(&w, -3);
	jw_bool(&w, true);
	jw_null(&w);
	jw_arr_end(&w);
	jw_key(&w, "empty");
	jw_obj_begin(&w);
	jw_obj_end(&w);
	jw_obj_end(&w);
	assert_int_equal(jw_finish(&w), 0);
	/* round trip through the reader */
	cordon_error e;
	jnode *n = json_parse(w.out.p, w.out.len, &e);
	assert_non_null(n);
	assert_string_equal(json_get(n, "s")->str, "a\"b\\c\n\x01\xef\xbf\xbd");
	assert_int_equal(json_get(n, "arr")->n, 3);
	assert_int_equal(json_get(n, "empty")->n, 0);
	json_free(n);
	buf_free(&w.out);
}

static char *upper(void *ctx, const char *s)
{
	char *d = strdup(s);
	for (char *p = d; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			*p -= 32;
	return d;
}

static void test_writer_filter(void **st)
{
	jwriter w = {.filter = upper};
	jw_obj_begin(&w);
	jw_key(&w, "key");
	jw_str(&w, "value");
	jw_obj_end(&w);
	jw_finish(&w);
	assert_non_null(strstr(w.out.p, "\"key\": \"VALUE\""));
	buf_free(&w.out);
}

/* An object of n keys "K0".."K<n-1>" (and "K0" again at the end if dup). */
static char *many_keys(size_t n, bool dup)
{
	buf b = {0};
	buf_append(&b, "{", 1);
	for (size_t i = 0; i < n; i++)
		buf_printf(&b, "%s\"K%zu\": \"v\"", i ? ", " : "", i);
	if (dup)
		buf_printf(&b, ", \"K0\": 1");
	buf_append(&b, "}", 1);
	return b.p;
}

/* Issue 10: 40k env keys took 5.8 s, the duplicate check comparing every
 * key with every earlier one. Counted, not timed: 40x the keys must cost
 * about 40x the comparisons (quadratic would be 1600x). */
/* A member in one call writes what jw_key and the value write; jw_take
 * hands over the text, or NULL (and frees it) when memory ran out. */
static void test_writer_members(void **st)
{
	strv v = {0};
	strv_push(&v, "x");
	strv_push(&v, "y");
	jwriter a = {0}, b = {0};
	jw_obj_begin(&a);
	jw_key(&a, "s");
	jw_str(&a, "t");
	jw_key(&a, "n");
	jw_null(&a);
	jw_key(&a, "i");
	jw_int(&a, -3);
	jw_key(&a, "u");
	jw_uint(&a, 7);
	jw_key(&a, "d");
	jw_double(&a, 0.5);
	jw_key(&a, "b");
	jw_bool(&a, true);
	jw_key(&a, "v");
	jw_str_array(&a, (const char *const *)v.v, v.n);
	jw_obj_end(&a);
	jw_obj_begin(&b);
	jw_key_str(&b, "s", "t");
	jw_key_str(&b, "n", NULL);
	jw_key_int(&b, "i", -3);
	jw_key_uint(&b, "u", 7);
	jw_key_double(&b, "d", 0.5);
	jw_key_bool(&b, "b", true);
	jw_key_strv(&b, "v", &v);
	jw_obj_end(&b);
	char *ta = jw_take(&a), *tb = jw_take(&b);
	assert_non_null(ta);
	assert_non_null(tb);
	assert_string_equal(ta, tb);
	assert_non_null(strstr(tb, "\"n\": null"));
	free(ta);
	free(tb);
	jwriter c = {0};
	jw_str(&c, "x");
	c.oom = true;
	assert_null(jw_take(&c));
	assert_null(c.out.p);
	strv_free(&v);
}

static void test_duplicate_check_is_linear(void **st)
{
	uint64_t small = 0, big = 0;
	cordon_error e = {0};
	char *a = many_keys(1000, false), *b = many_keys(40000, false);
	jnode *na = json_parse_counted(a, strlen(a), &small, &e);
	jnode *nb = json_parse_counted(b, strlen(b), &big, &e);
	assert_non_null(na);
	assert_non_null(nb);
	assert_int_equal(nb->n, 40000);
	assert_true(small > 0);
	if (big > 80 * small)
		fail_msg("40x the keys cost %llu comparisons vs %llu: not linear",
			 (unsigned long long)big, (unsigned long long)small);
	assert_true(big < 4 * 40000);
	json_free(na);
	json_free(nb);
	free(a);
	free(b);
	/* Still refused, with its position, past the hash threshold. */
	char *d = many_keys(40000, true);
	assert_null(json_parse(d, strlen(d), &e));
	assert_non_null(strstr(e.msg, "duplicate key \"K0\""));
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values), cmocka_unit_test(test_positions),
		cmocka_unit_test(test_errors), cmocka_unit_test(test_writer),
		cmocka_unit_test(test_writer_filter), cmocka_unit_test(test_writer_members),
		cmocka_unit_test(test_duplicate_check_is_linear),
	};
	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
