/* libFuzzer target: the run's resolver's reading of a query and writing of
 * its answer (lib/dns.c), as the supervisor does for every datagram. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_query q;
	uint8_t out[DNS_MSG_MAX];
	int rc = dns_parse_query(data, size, &q);
	if (rc < 0)
		return 0;
	if (strlen(q.name) > DNS_NAME_MAX || q.qlen > size)
		__builtin_trap();
	static const uint8_t a6[16] = {0xfd, 0x63, 0x6f, 0x72, 0x64, 0x6e};
	int n = dns_build_answer(&q, rc, a6, q.qtype == DNS_T_A ? 4 : 16, 5, out, sizeof(out));
	if (n < 12)
		__builtin_trap();
	/* whatever was read is answered within 512 bytes, and the answer reads
	 * as a response (never as a query) */
	struct dns_query back;
	if (dns_parse_query(out, (size_t)n, &back) != -1)
		__builtin_trap();
	return 0;
}
