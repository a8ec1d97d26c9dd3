/* base64 (RFC 4648), the library's one copy (lib/base64.c): the serve
 * protocol's data_b64 and input_b64, the proxy's Basic credentials, the
 * alphabets of the redactor's forms. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "strv.h"

/* The standard alphabet and the URL-safe one ("-_" for "+/"), 64 characters each. */
extern const char base64_std[65];
extern const char base64_url[65];

/* Append the standard, padded encoding of data to b. 0, or -1 out of memory. */
int b64_encode(buf *b, const void *data, size_t len);
/* Decode s (standard alphabet, padded; anything else is refused) into out
 * (room for the decoded length; 3 * len / 4 is enough): its length, or -1
 * when s is not that (out may then hold some bytes). */
ssize_t b64_decode(const char *s, size_t len, uint8_t *out);
/* The same, appended to out; false when s is not base64 or out of memory
 * (the decoded bytes pass through no other buffer). */
bool b64_decode_buf(const char *s, size_t len, buf *out);
