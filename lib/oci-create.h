/* create (lib/oci-create.c): the config's checks, the supervisor started
 * detached, the container made and left "created". */
#pragma once
#include <stdbool.h>
#include <sys/types.h>
#include "cordon.h"
#include "oci-config.h"
#include "oci-nsjoin.h"

struct oci_create_opts {
	const char *root, *id, *bundle, *pid_file, *console_socket;
	bool systemd_cgroup, no_pivot;
	bool detach_stdio;   /* run: keep the caller's stdio (false: it is create's) */
	int preserve_fds;    /* --preserve-fds N: descriptors 3..3+N-1 go to init as well */
};
/* What create refuses in a loaded config (lib/oci-create.c): a rootfs that
 * is a link or no directory, no process, a user or mount namespace joined
 * by path that oci-nsjoin.h refuses (the host's, one mapping the host's
 * root, a mount namespace the joined user namespace does not own), a map
 * to the host's root, a namespace path that cannot be opened. cordon
 * explain --bundle gives the same verdict. j (or NULL): on success, the
 * joined user and mount namespaces, open (the caller closes them). */
int oci_config_check(const struct oci_config *c, struct oci_nsjoin *j, cordon_error *err);
/* create: on return 0 the container is "created" and its supervisor runs
 * detached; *pid is the init. */
int oci_create(const struct oci_create_opts *o, pid_t *pid, cordon_error *err);
