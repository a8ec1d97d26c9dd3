/* libFuzzer target: the proxy's request parser, which reads what the code
 * inside the boundary sends. Whatever it accepts must name a sane target. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "proxy.h"
#include "pxparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proxy_request r;
	int rc = proxy_parse_request((const char *)data, size, &r);
	if (rc == PR_OK && (r.port == 0 || !r.host[0] || strchr(r.host, '@') || strchr(r.host, '/')))
		abort();
	/* A forward request goes upstream with exactly one Host, the checked one. */
	if (rc == PR_OK && r.proto == PROTO_FORWARD) {
		size_t hosts = 0;
		for (size_t i = 0; i + 8 <= r.upstream.len; i++)
			if (memcmp(r.upstream.p + i, "\r\nHost: ", 8) == 0 || memcmp(r.upstream.p + i, "\r\nhost:", 7) == 0)
				hosts++;
		if (hosts == 0)
			abort();
	}
	buf_free(&r.upstream);
	/* The record of a refused request: bounded, printable. */
	char t[300];
	proxy_partial_target(NULL, (const char *)data, size, t, sizeof(t));
	for (const char *p = t; *p; p++)
		if (*p < ' ' || *p > '~')
			abort();
	bool lit;
	char rule[64];
	size_t n = size < 40 ? size : 40;
	memcpy(rule, data, n);
	rule[n] = '\0';
	proxy_rule_matches(rule, "a.example.com", 443, &lit);
	return 0;
}
