/* The address classes a name may never lead to (proxy_addr_forbidden,
 * proxy.h): loopback, private, link-local, cloud metadata, multicast and
 * the like, as two tables, one per family. Pure; unit-tested
 * (tests/unit/test_proxy.c). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "pxaddr.h"
#include "cleanup.h"
#include "proxy.h"

/* IPv4: refused where the address is in one of these prefixes. */
static const struct {
	uint32_t net;
	unsigned len;
} v4_refused[] = {
	{0x00000000, 8},  /* 0/8, this network */
	{0x0a000000, 8},  /* 10/8 */
	{0x64400000, 10}, /* 100.64/10, CGNAT */
	{0x7f000000, 8},  /* 127/8 */
	{0xa9fe0000, 16}, /* 169.254/16, link-local and cloud metadata */
	{0xac100000, 12}, /* 172.16/12 */
	{0xc0000000, 24}, /* 192.0.0/24 */
	{0xc0a80000, 16}, /* 192.168/16 */
	{0xc6120000, 15}, /* 198.18/15, benchmarking */
	{0xe0000000, 4},  /* 224/4, multicast */
	{0xf0000000, 4},  /* 240/4, reserved, and 255.255.255.255 */
};

static bool v4_forbidden(uint32_t a)
{
	for (size_t i = 0; i < ARRAY_SIZE(v4_refused); i++)
		if ((a ^ v4_refused[i].net) >> (32 - v4_refused[i].len) == 0)
			return true;
	return false;
}

static bool v4_at(const uint8_t *b, const uint8_t at[4])
{
	return v4_forbidden((uint32_t)b[at[0]] << 24 | (uint32_t)b[at[1]] << 16 | (uint32_t)b[at[2]] << 8 | b[at[3]]);
}

/* IPv6, in order, the first prefix that matches decides: a class that
 * carries a v4 address (at the byte positions given; a further position
 * counts only where its first byte is not zero: zeros there are padding) is
 * refused when that address is; the others are refused outright.
 *   ::/96 (unspecified, loopback, IPv4-compatible), ::ffff:0:0/96
 *   (IPv4-mapped), NAT64 64:ff9b::/96, the local 64:ff9b:1::/48 (at any of
 *   the RFC 6052 positions a /48../96 prefix puts it; byte 8 is reserved),
 *   6to4 2002::/16: the v4 address inside.
 *   fe80::/10 (link-local), fec0::/10 (site-local), fc00::/7 (ULA, where
 *   cloud metadata lives too), ff00::/8 (multicast): refused. */
#define V6_NONE 0xff
static const struct {
	uint8_t prefix[12];
	unsigned len; /* bits */
	uint8_t at[4][4]; /* v4 positions; at[k][0] == V6_NONE: none (more) */
} v6_classes[] = {
	{{0}, 96, {{12, 13, 14, 15}, {V6_NONE}}},
	{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96, {{12, 13, 14, 15}, {V6_NONE}}},
	{{0, 0x64, 0xff, 0x9b}, 96, {{12, 13, 14, 15}, {V6_NONE}}},
	{{0, 0x64, 0xff, 0x9b, 0, 1}, 48, {{12, 13, 14, 15}, {6, 7, 9, 10}, {7, 9, 10, 11}, {9, 10, 11, 12}}},
	{{0x20, 0x02}, 16, {{2, 3, 4, 5}, {V6_NONE}}},
	{{0xfe, 0x80}, 9, {{V6_NONE}}}, /* fe80::/10 and fec0::/10 */
	{{0xfc}, 7, {{V6_NONE}}},
	{{0xff}, 8, {{V6_NONE}}},
};

static bool v6_has_prefix(const uint8_t *b, const uint8_t *prefix, unsigned len)
{
	unsigned whole = len / 8, rest = len % 8;
	if (memcmp(b, prefix, whole) != 0)
		return false;
	return !rest || ((b[whole] ^ prefix[whole]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

bool proxy_addr_forbidden(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return v4_forbidden(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	if (sa->sa_family != AF_INET6)
		return true;
	const uint8_t *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	for (size_t i = 0; i < ARRAY_SIZE(v6_classes); i++) {
		if (!v6_has_prefix(b, v6_classes[i].prefix, v6_classes[i].len))
			continue;
		if (v6_classes[i].at[0][0] == V6_NONE)
			return true;
		bool refused = false;
		for (size_t k = 0; k < 4 && v6_classes[i].at[k][0] != V6_NONE && !refused; k++)
			refused = (k == 0 || b[v6_classes[i].at[k][0]]) && v4_at(b, v6_classes[i].at[k]);
		return refused;
	}
	return false;
}

void host_port(char *out, size_t n, const char *host, unsigned port)
{
	snprintf(out, n, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
}
