/* The CA bundle a run trusts while the proxy opens its TLS (issue 16; OCI
 * mode, issue 31): the host's trusted CAs, then the run's own CA
 * certificate (never its key). cordon run binds it at CORDON_CA_FILE in
 * the view (mounts.c), cordon-oci's init mounts it there in the container
 * (oci-egress.c). */
#pragma once
#include <stddef.h>
#include "error.h"
#include "strv.h"

/* The host's bundle (Debian's path; bounded; none is fine). */
#define HOST_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define HOST_CA_MAX (8u << 20)

/* out gets the host's bundle (if readable: a regular file of at most
 * HOST_CA_MAX bytes, no link followed), a newline if it lacks one, then
 * pem (len bytes). */
int ca_bundle_build(buf *out, const char *pem, size_t len, cordon_error *err);
