/* The egress proxy's request parser (pxparse.c): HTTP CONNECT,
 * absolute-form HTTP and SOCKS5, what a client sent so far; pure, fuzzed. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "redact.h"
#include "strv.h"

#define PROXY_HDR_MAX 16384
enum { PR_OK, PR_MORE, PR_BAD, PR_NOAUTH, PR_BADADDR, PR_BADCMD };
/* PROTO_TRANSPARENT: a connection of network.transparent's, for the name
 * and port announced for it (sup-handoff.h): no request names them. */
enum { PROTO_CONNECT = 1, PROTO_FORWARD, PROTO_SOCKS, PROTO_TRANSPARENT };
struct proxy_request {
	int proto;
	char host[256];
	uint16_t port;
	size_t greeting;  /* SOCKS5: length of the greeting seen (answer it) */
	size_t consumed;
	buf upstream;     /* bytes to send upstream first (rewritten request, early data) */
};
/* Parse what a client sent so far: PR_MORE (incomplete), PR_OK (target
 * known), or an error. Hosts are names or addresses only; ports 1-65535,
 * digits only; an http:// URL carries no userinfo. The caller frees
 * r->upstream. */
int proxy_parse_request(const char *data, size_t len, struct proxy_request *r);
int proxy_parse_socks(const char *data, size_t len, struct proxy_request *r);
/* For the record of a refused or unfinished request: its target as far as
 * it was sent, or a description. With rd, the target is redacted in full
 * first, then cut and made printable (the rest as '?'). */
void proxy_partial_target(const redactor *rd, const char *data, size_t len, char *out, size_t outsz);
