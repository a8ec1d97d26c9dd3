/* The operator's ceiling: the most any task run through this cordon may be
 * granted, in the policy's own JSON vocabulary, checked before anything
 * starts.
 *
 * Semantics: a section the ceiling mentions lists everything allowed in it;
 * a section it omits is not limited by it.
 *  filesystem.read / write / tmpfs: path prefixes (canonical: symlinks and ..
 *      resolved on the host). Read grants may lie under read or write
 *      prefixes, write grants (the default workspace included) under write
 *      prefixes; policy inputs count as reads. Without a tmpfs list, tmpfs
 *      mounts are not limited (they expose nothing of the host).
 *  filesystem.devices: prefixes host character devices (--dev) must lie
 *      under; a ceiling with a filesystem section but no devices allows none.
 *  filesystem.unprotect: the protected names (protect.h) a task may grant
 *      writes to (--unprotect), each with everything below it; a ceiling
 *      with a filesystem section but no unprotect list allows none.
 *  network.allow: endpoint patterns that may be allowed (a request must be
 *      covered: "*.example.com:443" covers "api.example.com:443", "host:*"
 *      any port); network.loopback_ports: ports that may be opened.
 *  secrets: names that may be injected, each pinned to its source (a task
 *      cannot read another host variable or file under an allowed name).
 *  limits: maxima, and each is required: a task without it gets the maximum
 *      (source "ceiling").
 *  syscalls.allow: the calls a task may re-allow.
 *  enforcement.allow_weaker: the weaker layers a task may accept. */
#pragma once
#include <stdbool.h>
#include "model.h"
#include "policy.h"

struct ceiling {
	cordon_policy *p;
	char path[4096];
	char sha256[65];
};

struct ceiling_result {
	struct grant *g;
	size_t n;
	strv excess; /* one line per refused request */
};

/* Which ceiling applies: the flag, else the caller's option (the CLI's
 * $CORDON_CEILING), else /etc/cordon/ceiling.json when it exists.
 * *have = false: none. */
int ceiling_resolve(const char *flag, const char *opt, char *out, size_t outsz, bool *have,
		    cordon_error *err);
/* Parse (with the policy parser: line:column errors) and hash it. */
int ceiling_load(const char *path, struct ceiling *c, cordon_error *err);
void ceiling_free(struct ceiling *c);
/* Check the task's effective request against the ceiling and apply the
 * ceiling's limits where the task has none. Returns the number of excesses
 * (res->excess), or -1 on error. */
int ceiling_apply(const struct ceiling *c, cordon_policy *task, const struct run_plan *plan,
		  struct ceiling_result *res, cordon_error *err);
