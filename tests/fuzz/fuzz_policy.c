/* libFuzzer target: the policy parser (and through it the JSON reader, the
 * size and duration parsers), then the canonical writer on what was accepted. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "policy.h"
#include "pol-parse.h"
#include "report.h"
#include "units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cordon_error e;
	cordon_policy *p = policy_new();
	if (policy_load_json(p, (const char *)data, size, "fuzz.json", "/base", &e) == 0) {
		char *c = policy_canonical_json(p);
		free(c);
	}
	policy_free(p);
	/* Sizes and durations straight from the bytes, NUL-terminated. */
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	uint64_t v;
	parse_size(s, &v, &e);
	parse_duration(s, &v, &e);
	free(s);
	return 0;
}
