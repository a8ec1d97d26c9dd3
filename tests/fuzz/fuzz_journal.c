/* libFuzzer target: the change set journal parser (changeset.c). The
 * journal's names are the run's, so its bytes are hostile.
 *
 * Invariants:
 * - it accepts or refuses, never reads out of the input (ASan);
 * - an accepted journal's records are what the writer could have written:
 *   kind C, M or B, layer below the count, M's mode within 07777, C's arg
 *   0, a relative name without empty, "." or ".." components;
 * - the records written back in the writer's format are a prefix of the
 *   input of at least all but its last partial record (framing is exact:
 *   nothing skipped, nothing read out of frame). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "changeset.h"
#include "cs-rollback.h"

static void check(const struct changeset_jrec *j, size_t n, const uint8_t *data, size_t size)
{
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		const char *r = j[i].rel;
		size_t rl = strlen(r);
		if ((j[i].kind != 'C' && j[i].kind != 'M' && j[i].kind != 'B') || j[i].layer >= 3 || j[i].arg < 0 ||
		    (j[i].kind == 'M' && j[i].arg > 07777) || (j[i].kind == 'C' && j[i].arg) || !rl || r[0] == '/' ||
		    r[rl - 1] == '/' || strstr(r, "//") || !strcmp(r, ".") || !strcmp(r, "..") || !strncmp(r, "./", 2) ||
		    !strncmp(r, "../", 3) || strstr(r, "/./") || strstr(r, "/../") ||
		    (rl >= 2 && !strcmp(r + rl - 2, "/.")) || (rl >= 3 && !strcmp(r + rl - 3, "/..")))
			abort();
		char head[96];
		int h = snprintf(head, sizeof(head), "%c %zu %lld %zu\n", j[i].kind, j[i].layer, j[i].arg, rl);
		if (at + (size_t)h + rl + 1 > size || memcmp(data + at, head, (size_t)h) ||
		    memcmp(data + at + h, r, rl) || data[at + h + rl] != '\n')
			abort();
		at += (size_t)h + rl + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct changeset_jrec *j = NULL;
	size_t n = 0;
	cordon_error err = {0};
	if (changeset_parse_journal((const char *)data, size, 3, "fuzz", &j, &n, &err) == 0)
		check(j, n, data, size);
	else if (j || !strstr(err.msg, "fuzz: malformed record at offset"))
		abort();
	changeset_jrecs_free(j, n);
	return 0;
}
