#include "pol-parse.h"
#include "pol-view.h"
#include "unit.h"
#include "policy.h"

static cordon_policy *load(const char *json, cordon_error *e)
{
	cordon_policy *p = policy_new();
	if (policy_load_json(p, json, strlen(json), "p.json", "/base/dir", e) < 0) {
		policy_free(p);
		return NULL;
	}
	return p;
}

static void expect_err(const char *json, const char *msg)
{
	cordon_error e = {0};
	cordon_policy *p = load(json, &e);
	if (p) {
		policy_free(p);
		fail_msg("accepted: %s", json);
	}
	if (!strstr(e.msg, msg))
		fail_msg("error \"%s\" lacks \"%s\"", e.msg, msg);
}

static void test_check_object(void **st)
{
	(void)st;
	cordon_error e = {0};
	cordon_policy *p = load("{\"env\": {\"A\": \"1\"}, \"cwd\": \"./w\", \"check\": {\"command\": \"true\", "
				"\"files\": \"./t\", \"cwd\": \"/check/./x\", \"env\": {\"B\": \"2\"}}}", &e);
	if (!p) {
		fail_msg("%s", e.msg);
		return;
	}
	assert_string_equal(p->check, "true");
	assert_string_equal(p->check_files, "/base/dir/t");
	assert_string_equal(p->check_cwd, "/check/x");
	assert_int_equal(p->check_env.n, 1);
	cordon_policy *c = policy_for_check(p, "/base/dir/w");
	if (!c) {
		fail_msg("policy_for_check");
		return;
	}
	assert_true(c->is_check);
	assert_null(c->check);
	assert_string_equal(c->check_files, "/base/dir/t");
	assert_string_equal(c->cwd, "/check/x");
	assert_int_equal(c->env.n, 2);
	assert_string_equal(c->env.v[1], "B=2");
	assert_true(c->nmounts == 1 && c->mounts[0].mode == MOUNT_RO && c->mounts[0].owned);
	assert_true(c->mounts[0].scratch); /* writable, thrown away (issue 28.2) */
	policy_free(c);
	policy_free(p);
	expect_err("{\"check\": {\"command\": \"\"}}", "p.json:1:23: \"check.command\" is empty");
	expect_err("{\"check\": 3}", "p.json:1:11: \"check\" must be a string or an object, not a number");
	expect_err("{\"check\": {\"command\": \"t\", \"env\": {\"X\": 1}}}", "p.json:1:41: \"X\" must be a string");
}

static void test_full_example(void **st)
{
	const char *j =
		"{\n"
		"  \"filesystem\": {\"read\": [\"/opt/data\"], \"write\": [\"./out\"], \"tmpfs\": [\"/scratch:16M\"]},\n"
		"  \"network\":    {\"allow\": [\"pypi.org:443\", \"127.0.0.1:8080\", \"*.example.com:*\"]},\n"
		"  \"env\":        {\"LANG\": \"C.UTF-8\"},\n"
		"  \"secrets\":    {\"API_TOKEN\": {\"env\": \"HOST_API_TOKEN\"}, \"DB_PASS\": {\"file\": \"/run/db.pass\"}},\n"
		"  \"limits\":     {\"wall_time\": \"10s\", \"cpu_time\": 5, \"memory\": \"256M\", \"pids\": 64,\n"
		"                 \"output\": \"1M\", \"file_size\": 16777216},\n"
		"  \"syscalls\":   {\"allow\": [], \"deny\": [\"ptrace\"]},\n"
		"  \"inputs\":     [\"./task\"],\n"
		"  \"check\":      \"python3 -m pytest -q tests\",\n"
		"  \"ledger\":     [{\"alloc\": \"input\", \"bytes\": \"40M\"}, {\"free\": \"input\"}]\n"
		"}\n";
	cordon_error e = {0};
	cordon_policy *p = load(j, &e);
	if (!p) {
		fail_msg("%s", e.msg);
		return;
	}
	assert_int_equal(p->nmounts, 3);
	assert_string_equal(p->mounts[1].path, "/base/dir/out");
	assert_int_equal(p->mounts[1].mode, MOUNT_RW);
	assert_true(p->mounts[2].size == 16ULL << 20);
	assert_int_equal(p->net_allow.n, 3);
	assert_int_equal(p->nsecrets, 2);
	assert_string_equal(p->secrets[0].from_env, "HOST_API_TOKEN");
	assert_true(p->limits[LIM_WALL].value == 10000000000ULL);
	assert_true(p->limits[LIM_CPU].value == 5000000000ULL);
	assert_true(p->limits[LIM_MEMORY].value == 256ULL << 20);
	assert_true(p->limits[LIM_FILE_SIZE].value == 16ULL << 20);
	assert_int_equal(p->limits[LIM_PIDS].src, SRC_POLICY);
	assert_string_equal(p->inputs.v[0], "/base/dir/task");
	assert_int_equal(p->ledger.n, 2);
	policy_free(p);
}

static void test_refusals(void **st)
{
	expect_err("{\"filesytem\": {}}", "p.json:1:2: unknown key \"filesytem\"");
	expect_err("{\n \"limits\": {\"memroy\": \"1M\"}}", "p.json:2:13: unknown key \"memroy\" in \"limits\"");
	expect_err("{\"limits\": {\"memory\": \"12Q\"}}", "p.json:1:23: \"limits.memory\": malformed size \"12Q\"");
	expect_err("{\"limits\": {\"pids\": \"many\"}}", "malformed process count");
	expect_err("{\"limits\": {\"pids\": 1.5}}", "whole number");
	expect_err("{\"limits\": {\"memory\": true}}", "must be a string or a number");
	expect_err("{\"limits\": {\"wall_time\": \"5x\"}}", "malformed duration");
	expect_err("{\"filesystem\": {\"read\": \"/x\"}}", "\"filesystem.read\" must be an array, not a string");
	expect_err("{\"filesystem\": {\"read\": [1]}}", "must be a string");
	expect_err("{\"filesystem\": {\"write\": [\"../../etc\"]}}", "escapes its base directory");
	expect_err("{\"filesystem\": {\"write\": [\"/\"]}}", "the root itself");
	expect_err("{\"env\": {\"1BAD\": \"x\"}}", "not a valid variable name");
	expect_err("{\"secrets\": {\"T\": {\"env\": \"A\", \"file\": \"/b\"}}}", "exactly one of");
	expect_err("{\"network\": {\"allow\": [\"host\"]}}", "expected HOST:PORT");
	expect_err("{\"network\": {\"allow\": [\"host:99999\"]}}", "port must be");
	expect_err("{\"network\": {\"allow\": [\"a*b.com:80\"]}}", "leading");
	expect_err("{\"syscalls\": {\"deny\": [\"notacall\"]}}", "unknown system call \"notacall\"");
	expect_err("{\"on_violation\": \"explode\"}", "\"report\" or \"kill\"");
	expect_err("{\"ledger\": [{\"alloc\": \"a\"}]}", "needs \"bytes\"");
	expect_err("{\"ledger\": [{\"alloc\": \"a\", \"free\": \"a\"}]}", "exactly one of");
	expect_err("{\"a\": 1, \"a\": 1}", "duplicate key");
	expect_err("[]", "must be a JSON object");
	expect_err("{\"enforcement\": {\"allow_weaker\": [\"all\"]}}", "unknown layer");
	/* the degraded boundary's two names (docs/hosts.md) */
	cordon_error e;
	cordon_policy *p = load("{\"enforcement\": {\"allow_weaker\": [\"namespaces\", \"network\"]}}", &e);
	assert_non_null(p);
	assert_int_equal(p->allow_weaker, WEAK_NAMESPACES | WEAK_NETWORK);
	policy_free(p);
}

static void test_flags(void **st)
{
	cordon_policy *p = policy_new();
	cordon_error e;
	assert_int_equal(policy_set_limit(p, LIM_MEMORY, "1M", SRC_FLAG, &e), 0);
	assert_int_equal(policy_set_limit(p, LIM_MEMORY, "1K", SRC_FLAG, &e), -1);
	assert_int_equal(policy_set_limit(p, LIM_OUTPUT, "0", SRC_FLAG, &e), -1);
	assert_int_equal(policy_add_env(p, "A=b=c", &e), 0);
	assert_int_equal(policy_add_env(p, "=x", &e), -1);
	assert_int_equal(policy_add_env(p, "noequals", &e), -1);
	assert_int_equal(policy_add_mount(p, MOUNT_TMPFS, "/t:1G", SRC_FLAG, "/", &e), 0);
	assert_true(p->mounts[0].size == 1ULL << 30);
	assert_int_equal(policy_add_mount(p, MOUNT_TMPFS, "/t:zz", SRC_FLAG, "/", &e), -1);
	assert_int_equal(policy_add_secret_spec(p, "TOKEN=value", &e), -1);
	assert_non_null(strstr(e.msg, "never given on the command line"));
	policy_free(p);
}

static void test_effective_mounts(void **st)
{
	cordon_policy *p = policy_new();
	cordon_error e;
	policy_add_mount(p, MOUNT_RO, "/w/sub", SRC_FLAG, "/", &e);
	policy_add_mount(p, MOUNT_RO, "/a-b", SRC_FLAG, "/", &e);
	policy_add_mount(p, MOUNT_RO, "/a/b", SRC_FLAG, "/", &e);
	policy_add_mount(p, MOUNT_RO, "/a", SRC_FLAG, "/", &e);
	struct cordon_mount *m;
	size_t n;
	assert_int_equal(policy_effective_mounts(p, "/w", &m, &n, &e), 0);
	assert_int_equal(n, 5);
	assert_string_equal(m[0].path, "/a");
	assert_string_equal(m[1].path, "/a/b");
	assert_string_equal(m[2].path, "/a-b");
	assert_string_equal(m[3].path, "/w");
	assert_int_equal(m[3].mode, MOUNT_RW);
	assert_int_equal(m[3].src, SRC_DEFAULT);
	assert_string_equal(m[4].path, "/w/sub");
	mounts_free(m, n);
	/* an explicit mount of the workspace replaces the default */
	policy_add_mount(p, MOUNT_RO, "/w", SRC_FLAG, "/", &e);
	assert_int_equal(policy_effective_mounts(p, "/w", &m, &n, &e), 0);
	assert_int_equal(n, 5);
	assert_int_equal(m[3].mode, MOUNT_RO);
	mounts_free(m, n);
	policy_add_mount(p, MOUNT_RW, "/a", SRC_FLAG, "/", &e);
	assert_int_equal(policy_effective_mounts(p, "/w", &m, &n, &e), -1);
	assert_non_null(strstr(e.msg, "both ro and rw"));
	policy_free(p);
}
static void test_devices(void **st)
{
	(void)st;
	cordon_error e = {0};
	cordon_policy *p = load("{\"filesystem\": {\"devices\": [\"/dev/fuse\", \"/dev/dri/../fuse\", \"/dev//kvm\"]}}", &e);
	assert_non_null(p);
	assert_int_equal(p->devices.n, 2); /* normalised, duplicates dropped */
	assert_string_equal(p->devices.v[0], "/dev/fuse");
	assert_string_equal(p->devices.v[1], "/dev/kvm");
	policy_free(p);
	expect_err("{\"filesystem\": {\"devices\": [\"/dev/mem\"]}}", "p.json:1:29: \"filesystem.devices\": device /dev/mem: refused");
	expect_err("{\"filesystem\": {\"devices\": [\"/dev/port\"]}}", "refused: raw access");
	expect_err("{\"filesystem\": {\"devices\": [\"/dev/kmem\"]}}", "refused: raw access");
	expect_err("{\"filesystem\": {\"devices\": [\"/dev/mapper/control\"]}}", "refused: device-mapper");
	expect_err("{\"filesystem\": {\"devices\": [\"/dev/../dev/mapper/x\"]}}", "refused: device-mapper");
	expect_err("{\"filesystem\": {\"devices\": [\"fuse\"]}}", "absolute path under /dev");
	expect_err("{\"filesystem\": {\"devices\": [\"/etc/passwd\"]}}", "absolute path under /dev");
	expect_err("{\"filesystem\": {\"devices\": [\"/dev/../etc/x\"]}}", "absolute path under /dev");
	expect_err("{\"filesystem\": {\"devices\": [\"/dev\"]}}", "absolute path under /dev");
	expect_err("{\"filesystem\": {\"devices\": \"/dev/fuse\"}}", "must be an array");
	expect_err("{\"filesystem\": {\"devices\": [1]}}", "filesystem.devices");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_example), cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_flags), cmocka_unit_test(test_effective_mounts),
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_check_object),
	};
	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
