/* A policy's canonical JSON (pol-canon.c). */
#pragma once
#include "policy.h"

/* The policy as canonical JSON (malloc'd), or NULL out of memory. */
char *policy_canonical_json(const cordon_policy *p);
