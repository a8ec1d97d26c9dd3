/* check.files against the host files a run reads by routes other than its
 * mounts (pol-checkfiles.c): a secret's file, network.upstream_ca, the
 * devices shown in its /dev. */
#pragma once
#include <stddef.h>
#include "cordon.h"

/* The host file, other than a mount, that the run reads and that lies at
 * or below check.files (files) or holds it, links resolved: a secret's
 * file, network.upstream_ca, a device. NULL if none; else what names it
 * ("the file of secret E, mounted at /run/e"). */
const char *policy_check_files_reader(const cordon_policy *p, const char *files, char *what, size_t whatsz);
