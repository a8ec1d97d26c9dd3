/* The policy's effective views (pol-view.h): the mounts a run gets (the
 * policy's, the workspace's, the defaults), sorted, and the policy a task
 * check runs under. */
#include <ctype.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pol-view.h"
#include "cleanup.h"
#include "error.h"
#include "json.h"
#include "ledger.h"
#include "model.h"
#include "policy.h"
#include "protect.h"
#include "seccomp-policy.h"
#include "units.h"
#include "pol-edit.h"

static int mount_cmp(const void *a, const void *b)
{
	const struct cordon_mount *x = a, *y = b;
	/* Compare component-wise so "/a" < "/a/b" < "/a-b": '/' sorts first. */
	/* By where the run sees them: a mount comes after those it lies in. */
	const unsigned char *p = (const unsigned char *)mount_view_path(x), *q = (const unsigned char *)mount_view_path(y);
	while (*p && *p == *q) {
		p++;
		q++;
	}
	int cp = *p == '/' ? 1 : *p ? *p + 1 : 0;
	int cq = *q == '/' ? 1 : *q ? *q + 1 : 0;
	return cp - cq;
}

static int strv_copy(strv *dst, const strv *src)
{
	for (size_t i = 0; i < src->n; i++)
		if (strv_push(dst, src->v[i]) < 0)
			return -1;
	return 0;
}

cordon_policy *policy_for_check(const cordon_policy *p, const char *workspace)
{
	cordon_policy *c = policy_new();
	cordon_error e;
	if (!c)
		return NULL;
	c->opts = p->opts;
	/* The task's system view: the same image root (or the host's). */
	if (p->root && !(c->root = strdup(p->root)))
		goto fail;
	/* Everything the task could write becomes read-only; tmpfs stay fresh.
	 * An image's workspace is seen where the task saw it. */
	char wspec[PATH_MAX * 2 + 2];
	if (p->image_workspace)
		snprintf(wspec, sizeof(wspec), "%s:%s", workspace, p->image_workspace);
	else
		snprintf(wspec, sizeof(wspec), "%s", workspace);
	if (policy_add_mount(c, MOUNT_RO, wspec, SRC_DEFAULT, "/", &e) < 0 || !c->nmounts || !c->mounts)
		goto fail;
	c->mounts[0].scratch = true; /* its writes go to a throwaway layer */
	for (size_t i = 0; i < p->nmounts; i++) {
		const struct cordon_mount *m = &p->mounts[i];
		if (strcmp(m->path, workspace) == 0)
			continue;
		enum mount_mode mode = m->mode == MOUNT_TMPFS ? MOUNT_TMPFS : MOUNT_RO;
		char spec[4200];
		if (mode == MOUNT_TMPFS && m->size)
			snprintf(spec, sizeof(spec), "%s:%llu", m->path, (unsigned long long)m->size);
		else if (m->at)
			snprintf(spec, sizeof(spec), "%s:%s", m->path, m->at);
		else
			snprintf(spec, sizeof(spec), "%s", m->path);
		if (policy_add_mount(c, mode, spec, m->src, "/", &e) < 0)
			goto fail;
	}
	/* What the task could write stays its owner's, read-only now. */
	for (size_t i = 0; i < c->nmounts; i++) {
		struct cordon_mount *m = &c->mounts[i];
		if (strcmp(m->path, workspace) == 0)
			m->owned = true;
		for (size_t j = 0; j < p->nmounts; j++)
			if (p->mounts[j].mode == MOUNT_RW && strcmp(p->mounts[j].path, m->path) == 0)
				m->owned = true;
	}
	if (strv_copy(&c->env, &p->env) < 0 || strv_copy(&c->net_allow, &p->net_allow) < 0 ||
	    pxrule_copy(&c->net_rules, &p->net_rules) < 0 ||
	    strv_copy(&c->devices, &p->devices) < 0 ||
	    strv_copy(&c->sys_allow, &p->sys_allow) < 0 || strv_copy(&c->sys_deny, &p->sys_deny) < 0)
		goto fail;
	for (size_t i = 0; i < p->nsecrets; i++) {
		struct cordon_secret *s = policy_secret_slot(c, p->secrets[i].name, &e);
		if (!s)
			goto fail;
		if ((p->secrets[i].from_env && !(s->from_env = strdup(p->secrets[i].from_env))) ||
		    (p->secrets[i].from_file && !(s->from_file = strdup(p->secrets[i].from_file))) ||
		    (p->secrets[i].mount && !(s->mount = strdup(p->secrets[i].mount))))
			goto fail;
		s->allow_short = p->secrets[i].allow_short;
		s->inject = p->secrets[i].inject;
		s->in_header = p->secrets[i].in_header;
		s->in_query = p->secrets[i].in_query;
		s->allow_plaintext = p->secrets[i].allow_plaintext;
		if (strv_copy(&s->inject_hosts, &p->secrets[i].inject_hosts) < 0 ||
		    (p->secrets[i].placeholder && !(s->placeholder = strdup(p->secrets[i].placeholder))))
			goto fail;
	}
	if (p->upstream_ca && !(c->upstream_ca = strdup(p->upstream_ca)))
		goto fail;
	memcpy(c->limits, p->limits, sizeof(c->limits));
	memcpy(c->loopback_ports, p->loopback_ports, sizeof(c->loopback_ports));
	c->nloopback_ports = p->nloopback_ports;
	c->net_transparent = p->net_transparent;
	if (strv_copy(&c->net_resolve, &p->net_resolve) < 0)
		goto fail;
	c->kill_on_violation = p->kill_on_violation;
	c->allow_weaker = p->allow_weaker;
	/* A serve client's check is the client's, as its run is: never the
	 * server's identity over the task's results. */
	c->for_client = p->for_client;
	c->client_uid = p->client_uid;
	c->client_gid = p->client_gid;
	c->no_file_reports = p->no_file_reports;
	/* The check object: its own directory, working directory, variables. */
	c->is_check = true;
	if (strv_copy(&c->env, &p->check_env) < 0)
		goto fail;
	if (p->check_files && !(c->check_files = strdup(p->check_files)))
		goto fail;
	/* With files, the check starts in their directory by default. */
	const char *cwd = p->check_cwd ? p->check_cwd : p->check_files ? CHECK_FILES_DIR
						   : p->cwd ? p->cwd : p->image_workspace;
	if (cwd && !(c->cwd = strdup(cwd)))
		goto fail;
	return c;
fail:
	policy_free(c);
	return NULL;
}

void mounts_sort(struct cordon_mount *m, size_t n)
{
	if (n)
		qsort(m, n, sizeof(*m), mount_cmp);
}

int policy_effective_mounts(const cordon_policy *p, const char *workspace,
			    struct cordon_mount **out, size_t *nout, cordon_error *err)
{
	size_t cap = p->nmounts + 1;
	struct cordon_mount *m = calloc(cap, sizeof(*m));
	size_t n = 0;
	if (!m)
		return cordon_oom(err);
	bool ws_explicit = false;
	for (size_t i = 0; i < p->nmounts; i++) {
		const struct cordon_mount *src = &p->mounts[i];
		bool dup = false;
		for (size_t j = 0; j < n; j++) {
			if (strcmp(mount_view_path(&m[j]), mount_view_path(src)) != 0)
				continue;
			if (strcmp(m[j].path, src->path) != 0) {
				cordon_err(err, 0, "%s is requested from both %s and %s", mount_view_path(src), m[j].path,
					   src->path);
				mounts_free(m, n);
				return -1;
			}
			if (m[j].mode != src->mode || m[j].size != src->size) {
				cordon_err(err, 0, "%s is requested both %s and %s", src->path,
					   mount_mode_name(m[j].mode), mount_mode_name(src->mode));
				mounts_free(m, n);
				return -1;
			}
			dup = true;
		}
		if (dup)
			continue;
		if (workspace && strcmp(src->path, workspace) == 0 && !src->at)
			ws_explicit = true;
		m[n] = *src;
		m[n].path = strdup(src->path);
		m[n].at = src->at ? strdup(src->at) : NULL;
		if (!m[n].path || (src->at && !m[n].at)) {
			n++;
			mounts_free(m, n);
			return cordon_oom(err);
		}
		n++;
	}
	if (workspace && !ws_explicit) {
		m[n] = (struct cordon_mount){.mode = MOUNT_RW, .path = strdup(workspace), .src = SRC_DEFAULT};
		if (!m[n].path) {
			mounts_free(m, n);
			return cordon_oom(err);
		}
		n++;
	}
	mounts_sort(m, n);
	*out = m;
	*nout = n;
	return 0;
}
