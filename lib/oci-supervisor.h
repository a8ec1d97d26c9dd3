/* The supervisor of one container (lib/oci-supervisor.c), in create's
 * grandchild, detached: it makes the container and serves it until init exits. */
#pragma once
#include <sys/types.h>
#include "oci-create.h"
#include "oci-config.h"

struct oci_sup {
	const struct oci_create_opts *o;
	struct oci_config *c;
	int dirfd, slot, ready;
	int slotfd;   /* the range's lock file (flock held), -1 without a range */
	const struct oci_nsjoin *join; /* the user and mount namespaces joined by path (fds, -1: none) */
	char cgpath[1024];
};
/* The supervisor, in create's grandchild: waits for its parent (xpid) to
 * exit, creates the container, writes "O" (or "E" and the error) to x->ready,
 * then serves it until init exits. */
void oci_supervisor(struct oci_sup *x, pid_t xpid) __attribute__((noreturn));
