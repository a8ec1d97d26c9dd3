/* The egress proxy's opened TLS (pxtls-conn.c): the client's handshake and
 * the upstream's, then the connection is read as HTTP (pxio.c). */
#pragma once
#include <stddef.h>
#include "pxconn.h"

void px_on_handshake(struct proxy *px, size_t slot);
void px_tls_start(struct proxy *px, size_t slot);
