/* libFuzzer target: cordon-oci's systemd cgroupsPath (lib/oci-sdpath.c);
 * whatever it accepts is an absolute path with no "." or ".." component. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "oci-sdpath.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	char out[600];
	cordon_error e;
	if (oci_systemd_cgroup_path(s, out, sizeof(out), &e) == 0) {
		if (out[0] != '/' || strstr(out, "/./") || strstr(out, "/../") || strstr(out, "//"))
			abort();
		size_t n = strlen(out);
		if ((n >= 2 && strcmp(out + n - 2, "/.") == 0) || (n >= 3 && strcmp(out + n - 3, "/..") == 0))
			abort();
	}
	free(s);
	return 0;
}
