/* base64 (RFC 4648), table-driven: no allocation but the caller's buffer. */
#include <stdbool.h>
#include <string.h>
#include "base64.h"

const char base64_std[65] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const char base64_url[65] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static int digit(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

int b64_encode(buf *b, const void *data, size_t len)
{
	const uint8_t *d = data;
	char o[256];
	size_t ol = 0;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t x = (uint32_t)d[i] << 16 | (i + 1 < len ? (uint32_t)d[i + 1] << 8 : 0) |
			     (i + 2 < len ? d[i + 2] : 0);
		o[ol++] = base64_std[x >> 18 & 63];
		o[ol++] = base64_std[x >> 12 & 63];
		o[ol++] = i + 1 < len ? base64_std[x >> 6 & 63] : '=';
		o[ol++] = i + 2 < len ? base64_std[x & 63] : '=';
		if (ol == sizeof(o) || i + 3 >= len) {
			if (buf_append(b, o, ol) < 0)
				return -1;
			ol = 0;
		}
	}
	return 0;
}

/* One group of four at s (the last when last): its bytes into o, their
 * number (1-3), or -1 when it is not base64. '=' only ends the last group,
 * as "x=" + "=" or "xx=". */
static int group(const char *s, bool last, uint8_t o[3])
{
	int v[4];
	for (int k = 0; k < 4; k++) {
		v[k] = s[k] == '=' && last && k >= 2 ? 0 : digit(s[k]);
		if (v[k] < 0)
			return -1;
	}
	if (s[2] == '=' && s[3] != '=')
		return -1;
	uint32_t x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
	o[0] = (uint8_t)(x >> 16);
	o[1] = (uint8_t)(x >> 8);
	o[2] = (uint8_t)x;
	return s[2] == '=' ? 1 : s[3] == '=' ? 2 : 3;
}

ssize_t b64_decode(const char *s, size_t len, uint8_t *out)
{
	if (len % 4)
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < len; i += 4) {
		uint8_t o[3];
		int k = group(s + i, i + 4 == len, o);
		if (k > 0)
			memcpy(out + n, o, (size_t)k);
		explicit_bzero(o, sizeof(o));
		if (k < 0)
			return -1;
		n += (size_t)k;
	}
	return (ssize_t)n;
}

bool b64_decode_buf(const char *s, size_t len, buf *out)
{
	if (len % 4)
		return false;
	for (size_t i = 0; i < len; i += 4) {
		uint8_t o[3];
		int k = group(s + i, i + 4 == len, o);
		bool ok = k > 0 && buf_append(out, o, (size_t)k) == 0;
		explicit_bzero(o, sizeof(o));
		if (!ok)
			return false;
	}
	return true;
}
