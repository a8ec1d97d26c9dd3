/* The systemd cgroup driver's cgroupsPath as cgroupfs paths
 * (lib/oci-sdpath.c): where systemd puts a scope below nested slices,
 * checked against what systemd and runc give (kubelet's pod slices:
 * kubepods-besteffort-pod1.slice lives at
 * kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice). */
#include "unit.h"
#include <stdio.h>
#include "oci-sdpath.h"

static void path_is(const char *spec, const char *want)
{
	char out[4096];
	cordon_error e = {0};
	int r = oci_systemd_cgroup_path(spec, out, sizeof(out), &e);
	if (r != 0)
		fail_msg("%s: %s", spec, e.msg);
	assert_string_equal(out, want);
}

static void refused(const char *spec, const char *part)
{
	char out[4096];
	cordon_error e = {0};
	assert_int_equal(oci_systemd_cgroup_path(spec, out, sizeof(out), &e), -1);
	if (!strstr(e.msg, part))
		fail_msg("%s: \"%s\" lacks \"%s\"", spec, e.msg, part);
}

static void test_nested_slices(void **st)
{
	(void)st;
	path_is("kubepods-besteffort-pod1.slice:cri-containerd:abc",
		"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/cri-containerd-abc.scope");
	path_is("kubepods-burstable-pod2_3.slice:crio:x",
		"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod2_3.slice/crio-x.scope");
	path_is("kubepods.slice:cri-containerd:abc", "/kubepods.slice/cri-containerd-abc.scope");
	path_is("machine.slice:libpod:1", "/machine.slice/libpod-1.scope");
}

static void test_defaults_and_root(void **st)
{
	(void)st;
	path_is(":cordon:c1", "/system.slice/cordon-c1.scope");
	path_is("-.slice:cordon:c1", "/cordon-c1.scope");
	path_is("user.slice::c1", "/user.slice/c1.scope");
	/* a name that is a slice is that slice, below the parent (as runc) */
	path_is("kubepods.slice:x:kubepods-pod9.slice", "/kubepods.slice/kubepods-pod9.slice");
}

static void test_refused(void **st)
{
	(void)st;
	refused("/kubepods/besteffort/pod1/abc", "not slice:prefix:name");
	refused("a.slice:b", "not slice:prefix:name");
	refused("a.slice:b:c:d", "not slice:prefix:name");
	refused("a.slice:b:", "name (after the second ':') is empty");
	refused("kubepods:p:n", "is not a slice name");
	refused(".slice:p:n", "is not a slice name");
	refused("a/b.slice:p:n", "is not a slice name");
	refused("a--b.slice:p:n", "empty part between dashes");
	refused("-a.slice:p:n", "empty part between dashes");
	refused("a-.slice:p:n", "empty part between dashes");
	refused("a.slice:p:../../x", "no unit name");
	refused("a.slice:p/q:n", "no unit name");
	char big[400];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	char spec[512];
	snprintf(spec, sizeof(spec), "a.slice:p:%s", big);
	refused(spec, "at most 255 bytes");
	/* a small buffer: an error, never a cut path */
	char out[16];
	cordon_error e = {0};
	assert_int_equal(oci_systemd_cgroup_path("kubepods-besteffort-pod1.slice:p:n", out, sizeof(out), &e), -1);
	assert_non_null(strstr(e.msg, "too long"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested_slices),
		cmocka_unit_test(test_defaults_and_root),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
