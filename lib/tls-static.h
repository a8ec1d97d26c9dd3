/* TLS linked in (lib/tls-static.c: libcordon.so, cordon-serve, the tests):
 * tls_ops_get, declared in tls.h, returns tls.c's table. A program links
 * this file or tls-load.c, never both. */
#pragma once
#include "tls.h"
