/* check.files against the host files a run reads by routes other than its
 * mounts (outside review, F3 of issue 27.6): a secret's file (the task
 * reads it as a variable or a mounted file; an injected one the proxy
 * sends to a host the task chooses among), network.upstream_ca (the
 * proxy's), the devices shown in its /dev. The mounts themselves, the
 * workspace and cordon's system view are compared where the plan and the
 * parser already compare them. Links are resolved on both sides. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pol-checkfiles.h"
#include "policy.h"

/* a and b (canonical where they exist) overlap: one at or below the other. */
static bool overlaps(const char *a, const char *b)
{
	char rb[PATH_MAX];
	const char *b2 = realpath(b, rb) ? rb : b;
	return path_has_prefix(a, b2) || path_has_prefix(b2, a) || path_has_prefix(a, b) || path_has_prefix(b, a);
}

const char *policy_check_files_reader(const cordon_policy *p, const char *files, char *what, size_t whatsz)
{
	char rf[PATH_MAX];
	const char *real = realpath(files, rf) ? rf : files;
	for (size_t i = 0; i < p->nsecrets; i++) {
		const struct cordon_secret *s = &p->secrets[i];
		if (!s->from_file || !overlaps(real, s->from_file))
			continue;
		if (s->mount)
			snprintf(what, whatsz, "the file of secret %s, mounted at %s", s->name, s->mount);
		else
			snprintf(what, whatsz, "the file of secret %s, %s", s->name,
				 s->inject ? "sent by the proxy" : "the variable of the run");
		return s->from_file;
	}
	if (p->upstream_ca && overlaps(real, p->upstream_ca)) {
		snprintf(what, whatsz, "network.upstream_ca");
		return p->upstream_ca;
	}
	for (size_t i = 0; i < p->devices.n; i++)
		if (overlaps(real, p->devices.v[i])) {
			snprintf(what, whatsz, "a device of filesystem.devices");
			return p->devices.v[i];
		}
	return NULL;
}
