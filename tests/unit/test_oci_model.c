/* cordon-oci's boundary model (lib/oci-model.c): the entries of a config,
 * the observer's classes derived from them, and Landlock's grants. */
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include "oci-landlock.h"
#include "oci-model.h"
#include "unit.h"
#include "view.h"

static struct oci_mount mounts[] = {
	{.dest = "/proc", .type = "proc", .source = "proc"},
	{.dest = "/dev", .type = "tmpfs", .source = "tmpfs"},
	{.dest = "/ro", .type = "bind", .source = "/host/ro", .bind = true, .flags = MS_RDONLY},
	{.dest = "/rw", .type = "bind", .source = "/host/rw", .bind = true},
	{.dest = "/sys", .type = "sysfs", .source = "sysfs"},
	{.dest = "/run", .type = "tmpfs", .source = "tmpfs"},
	{.dest = "/run", .type = "tmpfs", .source = "tmpfs", .flags = MS_RDONLY},
};
static struct oci_dev devs[] = {{.type = 'c', .major = 10, .minor = 229, .path = "/dev/fuse"}};
static char *masked[] = {"/proc/kcore", "/secret"}, *ro[] = {"/proc/sys", "/etc"};

static void config(struct oci_config *c)
{
	memset(c, 0, sizeof(*c));
	c->root = "/b/rootfs";
	c->mounts = mounts;
	c->nmounts = sizeof(mounts) / sizeof(mounts[0]);
	c->devices = devs;
	c->ndevices = 1;
	c->masked = (strv){.v = masked, .n = 2};
	c->ro_paths = (strv){.v = ro, .n = 2};
	c->ns_new[OCI_NS_NET] = false; /* the host's sysfs: read-only */
}

static void test_entries_and_view(void **st)
{
	struct oci_config c;
	config(&c);
	struct boundary_model m;
	cordon_error e;
	assert_int_equal(oci_model_build(&c, &m, &e), 0);
	size_t runs = 0;
	for (size_t i = 0; i < m.n; i++)
		runs += strcmp(m.e[i].path, "/run") == 0;
	assert_int_equal(runs, 1); /* the covered mount is not seen */
	struct view v;
	assert_int_equal(view_build(&m, 0, &v, &e), 0);
	char r[4096];
	struct { const char *p; enum view_class c; } t[] = {
		{"/x", VIEW_RW}, {"/ro/f", VIEW_RO}, {"/rw/f", VIEW_RW}, {"/etc/passwd", VIEW_RO},
		{"/secret", VIEW_MASKED}, {"/proc/kcore", VIEW_MASKED}, {"/proc/self/status", VIEW_PROC},
		{"/proc/sys/kernel/x", VIEW_RO}, {"/sys/kernel", VIEW_RO}, {"/run/x", VIEW_RO}, {"/dev/x", VIEW_RW},
		{"/dev/fuse", VIEW_RW},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (view_classify(&v, t[i].p, r, sizeof(r)) != t[i].c)
			fail_msg("%s: class %d, expected %d", t[i].p, view_classify(&v, t[i].p, r, sizeof(r)), t[i].c);
	assert_true(view_denies(VIEW_MASKED, "/secret", false, true));
	assert_false(view_denies(VIEW_MASKED, "/absent", false, false));
	view_free(&v);
	c.readonly = true;
	model_free(&m);
	assert_int_equal(oci_model_build(&c, &m, &e), 0);
	assert_int_equal(view_build(&m, 0, &v, &e), 0);
	assert_int_equal(view_classify(&v, "/x", r, sizeof(r)), VIEW_RO);
	view_free(&v);
	model_free(&m);
}

static void test_landlock_grants(void **st)
{
	struct oci_config c;
	config(&c);
	struct oci_ll_grants g;
	cordon_error e;
	assert_int_equal(oci_landlock_grants(&c, &g, &e), 0);
	char got[1024] = "";
	for (size_t i = 0; i < g.n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s:%s%s", i ? " " : "", g.g[i].path,
			 g.g[i].device ? "dev" : g.g[i].write ? "w" : "r", g.g[i].carve ? "c" : "");
	assert_string_equal(got, "/:r /:wc /proc:w /dev:wc /rw:wc /dev/fuse:dev");
	char ex[1024] = "";
	for (size_t i = 0; i < g.except.n; i++)
		snprintf(ex + strlen(ex), sizeof(ex) - strlen(ex), "%s%s", i ? " " : "", g.except.v[i]);
	/* below /proc: the kernel's; /sys: a kernel filesystem, not carved */
	assert_string_equal(ex, "/ro /run /etc /secret");
	oci_landlock_grants_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries_and_view), cmocka_unit_test(test_landlock_grants),
	};
	return cmocka_run_group_tests_name("oci_model", tests, NULL, NULL);
}
