/* linux.seccomp and cordon's deny list, loaded by init (lib/oci-seccomp.c). */
#pragma once
#include "cordon.h"
#include "oci-config.h"

/* init: load linux.seccomp (if any) and cordon's deny list as a second filter. */
int oci_seccomp_load(const struct oci_config *c, cordon_error *err);
/* The same, with the deny list's calls sent to a listener (*listener, or -1
 * where the config's profile has a listener of its own: then EPERM). */
int oci_seccomp_load_notify(const struct oci_config *c, int *listener, cordon_error *err);
