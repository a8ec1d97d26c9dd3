/* start, kill, delete, pause/resume, wait and features (lib/oci-verbs.c). */
#pragma once
#include <stdbool.h>
#include <sys/types.h>
#include "cordon.h"
#include "json.h"

int oci_start(const char *root, const char *id, cordon_error *err);
int oci_kill(const char *root, const char *id, int sig, bool all, cordon_error *err);
int oci_delete(const char *root, const char *id, bool force, cordon_error *err);
int oci_pause(const char *root, const char *id, bool pause, cordon_error *err);
/* Wait for a container's init to exit (run): its wait status if it is our child. */
int oci_wait(const char *root, const char *id, int *status, cordon_error *err);
/* The features JSON. */
int oci_features_json(buf *out);
