/* What a client of `cordon serve` may ask for (docs/api.md, "Clients and the
 * host"): the host paths its policy names are checked as the client's uid,
 * and secrets from the server's environment need the ceiling's consent. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "policy.h"

/* 0: the policy text (JSON, relative paths against base_dir) may run for
 * uid; -1: refused, the reason (one line) in why. A policy that does not
 * parse passes (the run refuses it with its own message). ceiling may be
 * NULL. */
int peer_policy_check(const char *ptext, const char *base_dir, uid_t uid, const cordon_policy *ceiling,
		      char *why, size_t whysz);

/* A root server runs a client's boundary as the client (policy.h,
 * for_client): true, with the client's primary group in gid (from the user
 * database; 65534 when it has no entry), for any uid but root's and the
 * server's own. */
bool peer_run_as_client(uid_t uid, gid_t *gid);
/* Does the policy text grant writes to host paths (filesystem.write)? A
 * warm pool's sessions, started as the server, are given to another client
 * only when it does not. */
bool peer_policy_writes_host(const char *ptext);

/* Does the ceiling let a run write path (no filesystem section, or path at
 * or below one of its write prefixes, as the ceiling's own check decides)?
 * The server's state directory must be, or every workspace is refused. */
bool peer_ceiling_writes(const cordon_policy *ceiling, const char *path);
