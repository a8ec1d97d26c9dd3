/* The command's environment (lib/sup-env.c): defaults, the caller's LANG
 * and TERM, the policy's variables (the last of a name wins), the proxy's
 * variables, secrets last; nothing of the test's own environment. */
#include "unit.h"
#include <stdlib.h>
#include <string.h>
#include "cordon.h"
#include "sup-env.h"

static char *joined(const strv *env)
{
	size_t n = 1;
	for (size_t i = 0; i < env->n; i++)
		n += strlen(env->v[i]) + 1;
	char *out = calloc(1, n);
	for (size_t i = 0; i < env->n; i++) {
		strcat(out, env->v[i]);
		strcat(out, "\n");
	}
	return out;
}

static char *build(cordon_policy *p, const char *check_dir, const struct secrets *sec, size_t *secret_start)
{
	strv env = {0};
	cordon_error e;
	size_t start = 99;
	assert_int_equal(sup_env_build(p, check_dir, sec, &env, &start, &e), 0);
	if (secret_start)
		*secret_start = start;
	char *s = joined(&env);
	strv_free(&env);
	return s;
}

static void test_defaults_and_no_host_environment(void **state)
{
	setenv("LANG", "xx_XX.UTF-8", 1); /* the library reads no environment */
	cordon_policy *p = policy_new();
	size_t start;
	char *s = build(p, NULL, NULL, &start);
	assert_string_equal(s, "PATH=/usr/local/bin:/usr/bin:/bin\nHOME=/tmp\nLANG=C.UTF-8\nTERM=dumb\n");
	assert_int_equal(start, 4);
	free(s);
	struct cordon_run_options o;
	cordon_run_options_init(&o);
	o.lang = "de_DE.UTF-8";
	o.term = "xterm";
	p->opts = &o;
	s = build(p, NULL, NULL, NULL);
	assert_string_equal(s, "PATH=/usr/local/bin:/usr/bin:/bin\nHOME=/tmp\nLANG=de_DE.UTF-8\nTERM=xterm\n");
	free(s);
	policy_free(p);
}

static void test_policy_overrides_and_last_wins(void **state)
{
	cordon_policy *p = policy_new();
	cordon_error e;
	assert_int_equal(policy_add_env(p, "A=1", &e), 0);
	assert_int_equal(policy_add_env(p, "HOME=/work", &e), 0);
	assert_int_equal(policy_add_env(p, "A=2", &e), 0);
	char *s = build(p, "/.cordon-check-ab", NULL, NULL);
	assert_string_equal(s, "PATH=/usr/local/bin:/usr/bin:/bin\nLANG=C.UTF-8\nTERM=dumb\nHOME=/work\nA=2\n"
			       "CORDON_CHECK_DIR=/.cordon-check-ab\n");
	free(s);
	policy_free(p);
}

static void test_proxy_and_secrets_last(void **state)
{
	cordon_policy *p = policy_new();
	cordon_error e;
	assert_int_equal(policy_add_net(p, "example.org:443", &e), 0);
	uint8_t val[] = "s3cr3t-value";
	struct secret_value v[2] = {{"TOKEN", NULL, val, 12}, {"FILE_ONE", "/run/secrets/f", val, 12}};
	struct secrets sec = {v, 2, NULL};
	size_t start;
	char *s = build(p, NULL, &sec, &start);
	assert_non_null(strstr(s, "HTTPS_PROXY=http://127.0.0.1:"));
	assert_non_null(strstr(s, "ALL_PROXY=socks5h://127.0.0.1:"));
	assert_non_null(strstr(s, "NO_PROXY=localhost,127.0.0.1,::1\n"));
	/* the variable last, the file-delivered one absent */
	const char *last = "TOKEN=s3cr3t-value\n";
	assert_string_equal(s + strlen(s) - strlen(last), last);
	assert_null(strstr(s, "FILE_ONE"));
	assert_int_equal(start, 4 + 4 + 2 + 2);
	free(s);
	/* a declared endpoint on the host's loopback: loopback goes through the proxy */
	assert_int_equal(policy_add_net(p, "127.0.0.1:8080", &e), 0);
	s = build(p, NULL, NULL, NULL);
	assert_null(strstr(s, "NO_PROXY"));
	free(s);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_no_host_environment),
		cmocka_unit_test(test_policy_overrides_and_last_wins),
		cmocka_unit_test(test_proxy_and_secrets_last),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
