/* cordon as an OCI runtime (docs/oci.md): the bundle's config.json, the state
 * directory, the lifecycle (create, start, kill, delete) and the container's
 * init. The CLI is cli/oci-main.c; everything here returns errors in a
 * cordon_error and prints nothing. This header gathers the pieces' own
 * headers for the CLI; each lib/oci-X.c has lib/oci-X.h. */
#pragma once

#include "oci-config.h"
#include "oci-state.h"
#include "oci-cgroup.h"
#include "oci-seccomp.h"
#include "oci-create.h"
#include "oci-verbs.h"
#include "oci-exec.h"
#include "oci-common.h"
#include "oci-safedir.h"
#include "oci-slots.h"
