/* The container's init (lib/oci-init.c): its namespaces, mounts and root,
 * Landlock, the process's identity and seccomp, then the exec. */
#pragma once
#include <stddef.h>
#include "cordon.h"
#include "oci-config.h"

void oci_init_main(const struct oci_config *c, int sock) __attribute__((noreturn));
int oci_find_exec(const struct oci_config *c, char *out, size_t outsz, cordon_error *err);
int oci_apply_process(const struct oci_config *c, cordon_error *err);
