/* libFuzzer target: the redactor. The first byte chooses a secret length
 * (8..40), the next bytes are the secret, the rest is a stream fed in two
 * parts at a split chosen by the second byte. Whatever the input, the raw
 * secret must never come out. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t slen = 8 + data[0] % 33, split = data[1];
	data += 2;
	size -= 2;
	if (size < slen)
		return 0;
	const uint8_t *secret = data;
	const uint8_t *in = data + slen;
	size_t n = size - slen;
	redactor *r = redactor_new();
	cordon_error e;
	if (redactor_add_secret(r, "S", secret, slen, &e) < 0 || redactor_compile(r, &e) < 0) {
		redactor_free(r);
		return 0;
	}
	/* the stream: input, then the secret itself, then the input again */
	size_t total = 2 * n + slen;
	uint8_t *s = malloc(total ? total : 1);
	memcpy(s, in, n);
	memcpy(s + n, secret, slen);
	memcpy(s + n + slen, in, n);
	if (split > total)
		split = total;
	struct redact_stream st;
	buf out = {0};
	redact_stream_init(&st, r);
	redact_feed(&st, s, split, &out);
	redact_feed(&st, s + split, total - split, &out);
	redact_flush(&st, &out);
	/* The secret got through: an occurrence that does not overlap a marker
	 * (the marker's own "[" may complete a secret ending in "[" with the
	 * genuine bytes before it; that reveals nothing). */
	static const char marker[] = "[REDACTED:S]";
	const size_t ml = sizeof(marker) - 1;
	for (size_t i = 0; out.len >= slen && i + slen <= out.len; i++) {
		if (memcmp(out.p + i, secret, slen) != 0)
			continue;
		bool overlaps = false;
		for (size_t j = (i >= ml ? i - ml + 1 : 0); j < i + slen && j + ml <= out.len; j++)
			if (memcmp(out.p + j, marker, ml) == 0)
				overlaps = true;
		if (!overlaps)
			abort();
	}
	redact_stream_free(&st);
	buf_free(&out);
	free(s);
	redactor_free(r);
	return 0;
}
