/* The proxy's reading of HTTP responses (pxhttp-resp.c): each matched
 * with its request, injected values put back to their placeholders, a
 * refusal sent after the responses before it. No syscalls. */
#pragma once
#include <stddef.h>
#include "pxhttp.h"
#include "strv.h"

/* Bytes from the upstream, for the client (to_down). */
int pxhttp_upstream(struct pxhttp *h, const char *d, size_t n, buf *to_down);
/* The upstream closed. */
void pxhttp_upstream_eof(struct pxhttp *h, buf *to_down);
