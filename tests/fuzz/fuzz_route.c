/* libFuzzer target: the server's request parsing that is its own (routes
 * and ids; the bodies go through the JSON reader, fuzzed by fuzz_policy):
 * METHOD, a NUL, then the path. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "serve-route.h"
#include "serve-ipc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 2);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = s[size + 1] = '\0';
	const char *path = s + strlen(s) + 1;
	struct route r;
	route_parse(s, path, &r);
	uint8_t *out = malloc(size + 4);
	if (out)
		b64_decode(s, strlen(s), out);
	free(out);
	free(s);
	return 0;
}
