/* TLS loaded on demand (lib/tls-load.c, the cordon program): tls_ops_get,
 * declared in tls.h, loads cordon-tls.so beside the executable on its first
 * call. A program links this file or tls-static.c, never both. */
#pragma once
#include "tls.h"
