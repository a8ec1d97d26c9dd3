/* cordon explain --bundle DIR: the boundary cordon-oci would give a bundle
 * (lib/oci-explain.c). */
#pragma once
#include <stdbool.h>
#include "error.h"

/* Text, or JSON (cordon.explain-bundle/1); the caller frees it. *would_run:
 * create would not refuse it (else the verdict says why). NULL and err on a
 * bundle that cannot be read: no directory, config.json missing or bad
 * ("FILE:LINE:COL: what", as cordon-oci says). */
char *oci_explain_bundle(const char *bundle, bool json, bool *would_run, cordon_error *err);
