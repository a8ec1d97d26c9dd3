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
