/* The run report's state (report.h): status names and exit codes, init and
 * free, the denials (deduplicated, attributed to a process group, under
 * its lock), a check's denials added. JSON: report-json.c; the file:
 * report-file.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cleanup.h"
#include "compat.h"
#include "landlock.h"
#include "error.h"
#include "json.h"
#include "redact-stream.h"
#include "report.h"

static const char *const status_names[ST_COUNT] = {
	"ok", "exit-nonzero", "signaled", "timeout", "cpu-limit", "memory-limit",
	"output-limit", "file-size-limit", "denied", "unauthorized", "infeasible",
	"setup-error", "interrupted",
};

const char *status_name(enum run_status s) { return status_names[s]; }

int status_exit_code(enum run_status s, int exit_code, int sig)
{
	switch (s) {
	case ST_OK: return 0;
	case ST_EXIT_NONZERO: return exit_code > 0 ? exit_code : 1;
	case ST_SIGNALED: return 128 + sig;
	case ST_TIMEOUT: return 124;
	case ST_SETUP_ERROR: return 125;
	case ST_CPU_LIMIT: return 119;
	case ST_MEMORY_LIMIT: return 118;
	case ST_OUTPUT_LIMIT: return 120;
	case ST_FILE_SIZE_LIMIT: return 121;
	case ST_DENIED: return 122;
	case ST_UNAUTHORIZED: return 123;
	case ST_INFEASIBLE: return 117;
	case ST_INTERRUPTED: return 130;
	default: return 125;
	}
}

void report_init(struct run_report *r)
{
	memset(r, 0, sizeof(*r));
	r->exit_code = -1;
	r->enf.cgroup = "none";
	pthread_mutex_init(&r->denial_lock, NULL);
	for (int i = 0; i < 2; i++) /* SHA-256 of nothing, until output arrives */
		strcpy(r->out[i].sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

void report_free(struct run_report *r)
{
	redactor_free(r->redact);
	free(r->grants);
	strv_free(&r->unauthorized);
	strv_free(&r->writable);
	free(r->net.ep);
	free(r->net.req);
	free(r->net.inj);
	pthread_mutex_destroy(&r->denial_lock);
	free(r->denials);
	free(r->by_group);
	hindex_free(&r->denial_idx);
	strv_free(&r->command);
	strv_free(&r->secrets);
	strv_free(&r->changes.refused);
	strv_free(&r->changes.protected);
	strv_free(&r->changes.conflicts);
	exposure_list_free(&r->exposures);
	file_list_free(&r->inputs);
	file_list_free(&r->outputs);
	fix_list_free(&r->privilege_cleared);
	fix_list_free(&r->root_restored);
	memset(r, 0, sizeof(*r));
}

struct denial_probe {
	const struct run_report *r;
	const char *kind, *target;
};

static bool denial_eq(const void *ctx, uint32_t item)
{
	const struct denial_probe *k = ctx;
	const struct denial *d = &k->r->denials[item];
	return strcmp(d->kind, k->kind) == 0 && strcmp(d->target, k->target) == 0;
}

static uint64_t denial_hash(const char *kind, const char *target)
{
	return hash_str(kind) * 31 ^ hash_str(target);
}

/* Denial idx was made by group pgid: counted for it, or as unattributed. */
static void attribute_locked(struct run_report *r, size_t idx, int pgid)
{
	if (r->attribute && pgid > 0) {
		for (size_t j = 0; j < r->nby_group; j++)
			if (r->by_group[j].idx == idx && r->by_group[j].pgid == pgid) {
				r->by_group[j].count++;
				return;
			}
		if (!r->by_group)
			r->by_group = calloc(DENIAL_GROUPS_MAX, sizeof(*r->by_group));
		if (r->by_group && r->nby_group < DENIAL_GROUPS_MAX) {
			r->by_group[r->nby_group++] = (struct denial_group){(uint32_t)idx, pgid, 1};
			return;
		}
	}
	r->denials[idx].unattributed++;
}

static int add_denial_locked(struct run_report *r, const char *kind, const char *target, int pgid)
{
	/* The key as stored: the kind and target, redacted in full and only
	 * then cut to the record's size (a cut first would leave a prefix of
	 * a secret that the redactor no longer recognises). */
	char k[sizeof(r->denials->kind)], t[sizeof(r->denials->target)];
	char *red = r->redact ? redact_string(r->redact, target) : NULL;
	if (r->redact && !red)
		return -1;
	snprintf(k, sizeof(k), "%s", kind);
	snprintf(t, sizeof(t), "%s", red ? red : target);
	free(red);
	struct denial_probe probe = {r, k, t};
	uint64_t h = denial_hash(k, t);
	long i = hindex_find(&r->denial_idx, h, denial_eq, &probe);
	if (i >= 0) {
		r->denials[i].count++;
		attribute_locked(r, (size_t)i, pgid);
		return 0;
	}
	if (r->ndenials >= DENIALS_MAX_TARGETS) {
		r->denials_omitted++;
		return 0;
	}
	if (r->ndenials == r->denial_cap) {
		size_t cap = r->denial_cap ? 2 * r->denial_cap : 16;
		struct denial *d = realloc(r->denials, cap * sizeof(*d));
		if (!d)
			return -1;
		r->denials = d;
		r->denial_cap = cap;
	}
	if (hindex_add(&r->denial_idx, h, (uint32_t)r->ndenials) < 0)
		return -1;
	struct denial *d = &r->denials[r->ndenials++];
	memset(d, 0, sizeof(*d));
	memcpy(d->kind, k, sizeof(k));
	memcpy(d->target, t, sizeof(t));
	d->count = 1;
	attribute_locked(r, r->ndenials - 1, pgid);
	return 0;
}

int report_add_denial(struct run_report *r, const char *kind, const char *target)
{
	return report_add_denial_by(r, kind, target, 0);
}

int report_add_denial_by(struct run_report *r, const char *kind, const char *target, int pgid)
{
	pthread_mutex_lock(&r->denial_lock);
	int rc = add_denial_locked(r, kind, target, pgid);
	pthread_mutex_unlock(&r->denial_lock);
	return rc;
}

int report_add_check_denials(struct run_report *r, const struct run_report *check)
{
	if (!check->ndenials)
		return 0;
	pthread_mutex_lock(&r->denial_lock);
	struct denial *d = realloc(r->denials, (r->ndenials + check->ndenials) * sizeof(*d));
	if (!d) {
		pthread_mutex_unlock(&r->denial_lock);
		return -1;
	}
	r->denials = d;
	for (size_t i = 0; i < check->ndenials; i++) {
		d[r->ndenials] = check->denials[i];
		d[r->ndenials++].check = true;
	}
	pthread_mutex_unlock(&r->denial_lock);
	return 0;
}

size_t report_net_endpoint(struct run_report *r, const char *target)
{
	for (size_t i = 0; i < r->net.nep; i++)
		if (strcmp(r->net.ep[i].target, target) == 0)
			return i;
	struct net_endpoint *e = realloc(r->net.ep, (r->net.nep + 1) * sizeof(*e));
	if (!e)
		return SIZE_MAX;
	r->net.ep = e;
	memset(&e[r->net.nep], 0, sizeof(*e));
	snprintf(e[r->net.nep].target, sizeof(e[r->net.nep].target), "%s", target);
	return r->net.nep++;
}
