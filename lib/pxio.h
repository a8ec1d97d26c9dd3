/* The egress proxy's read connections (pxio.c): plain HTTP with restricted
 * rules or injected secrets, or opened TLS; each request through pxhttp.c. */
#pragma once
#include <stddef.h>
#include "pxconn.h"

void px_on_http(struct proxy *px, size_t slot);
void px_http_start(struct proxy *px, size_t slot);
