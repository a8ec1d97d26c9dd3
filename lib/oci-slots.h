/* The containers' host uid/gid ranges (lib/oci-slots.c), host-wide: one
 * lock file a range under OCI_SLOTS_DIR, whatever --root each cordon-oci
 * is given, so that no two containers ever share host ids. */
#pragma once
#include <sys/types.h>
#include "cordon.h"
#include "oci-config.h"

#define OCI_SLOTS_DIR "/run/cordon-oci-slots"
#define OCI_SLOT_BASE 0x40000000u
#define OCI_SLOT_SIZE 65536u
#define OCI_SLOTS 1024

/* Take the lowest free range for the container whose state directory is
 * state_dfd (state_path, ROOT/ID): *slot, and *lockfd, its file under an
 * exclusive flock that the container's supervisor keeps open until it
 * exits (O_CLOEXEC; no other process may hold it). A taken range is free
 * again when delete releases it, or stale (reclaimed here) when nothing
 * holds its lock and its container's state directory is gone, replaced or
 * never got its state.json. */
int oci_slot_take(int state_dfd, const char *state_path, int *slot, int *lockfd, cordon_error *err);
/* Free slot if it is still the range of the state directory state_dfd and
 * no container holds it any more (one that joined its user namespace). */
void oci_slot_release(int state_dfd, int slot);
/* A container that joins a user namespace by path, whose maps (host ids)
 * are u and g: where they are one of cordon-oci's ranges, that range must
 * be held by a live container, and *lockfd gets it held shared (kept by
 * the joining container's supervisor: the range is not freed or given
 * again while it lives). Ids outside cordon-oci's ranges: *lockfd -1. */
int oci_slot_pin(const struct oci_idmap *u, size_t nu, const struct oci_idmap *g, size_t ng, int *lockfd,
		 cordon_error *err);
