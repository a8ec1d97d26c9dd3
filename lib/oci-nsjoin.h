/* A user or mount namespace a config joins by path (docs/oci.md,
 * "Namespaces joined by path"): the rule is that a container is never the
 * host's root. A user namespace is joined only when it lies below the
 * caller's (never the caller's own nor an ancestor of it), was made by the
 * caller's euid (its owner holds every capability in it) and its maps,
 * read as host ids, give neither host uid 0 nor host gid 0 to anyone in
 * it; the config then has no mappings of its own (they are that
 * namespace's) and no host id range is taken. A mount namespace is joined
 * only when the user namespace joined owns it (a new user namespace cannot
 * own an existing one; one the host's user namespace owns stays refused).
 * The namespaces are opened once and checked by descriptor: create hands
 * these descriptors to the supervisor, which joins them, never the paths
 * again. */
#pragma once
#include <stddef.h>
#include "cordon.h"
#include "oci-config.h"

#define OCI_NSJOIN_MAPS 340 /* the kernel's limit of lines in a uid_map */

struct oci_nsjoin {
	int user, mnt; /* the joined namespaces' descriptors, -1 where none */
	/* the joined user namespace's maps, outside ids as the host's */
	struct oci_idmap uidm[OCI_NSJOIN_MAPS], gidm[OCI_NSJOIN_MAPS];
	size_t nuidm, ngidm;
};

/* Open and check c's user and mount namespace paths into *j (the
 * descriptors -1 where the config joins none); a refusal is one line naming
 * linux.namespaces and the path. Needs the privilege to join the user
 * namespace (its maps are read through a process in it). On error j holds
 * nothing open. */
int oci_nsjoin_open(const struct oci_config *c, struct oci_nsjoin *j, cordon_error *err);
void oci_nsjoin_close(struct oci_nsjoin *j);
/* c's uid and gid maps become the joined user namespace's (create: the
 * host ids linux.devices' owners map to; explain: what it prints). */
int oci_nsjoin_maps(const struct oci_nsjoin *j, struct oci_config *c, cordon_error *err);
