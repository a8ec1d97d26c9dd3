/* exec, ps and update of a running container (lib/oci-exec.c). */
#pragma once
#include <stdbool.h>
#include <sys/types.h>
#include "cordon.h"
#include "strv.h"

struct oci_exec_opts {
	const char *process_file, *pid_file, *console_socket, *cwd, *user;
	strv env, args;
	bool detach, tty;
};
/* exec: *status is the process's wait status (not detached). */
int oci_exec(const char *root, const char *id, const struct oci_exec_opts *o, int *status, cordon_error *err);
int oci_ps(const char *root, const char *id, pid_t **pids, size_t *n, cordon_error *err);
int oci_update(const char *root, const char *id, const char *file, cordon_error *err);
