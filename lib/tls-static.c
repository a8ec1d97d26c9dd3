/* TLS linked in (libcordon.so, cordon-serve, the tests): the table is
 * tls.c's own. The cordon program loads it instead (tls-load.c). */
#include "tls-static.h"
#include "tls.h"

const struct tls_ops *tls_ops_get(cordon_error *err)
{
	(void)err;
	return &tls_module_ops;
}
