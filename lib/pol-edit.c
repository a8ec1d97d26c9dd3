/* The policy object and its edits (policy.h): made and freed, the names of
 * its enums, and every change a flag or a loader makes to it (a mount, a
 * protected name, a device, a variable, an endpoint, a secret, a limit, the
 * working directory, the check), each checked as it is made. */
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

static const char *const limit_names[LIM_COUNT] = {
	"wall_time", "cpu_time", "memory", "pids", "output", "file_size",
};
static const char *const limit_flags[LIM_COUNT] = {
	"--time-limit", "--cpu-limit", "--memory-limit", "--pids-limit",
	"--output-limit", "--file-size-limit",
};

const char *limit_name(enum limit_id id) { return limit_names[id]; }
const char *limit_flag(enum limit_id id) { return limit_flags[id]; }

const char *source_name(enum source s)
{
	static const char *n[] = {"default", "policy", "flag", "ceiling"};
	return n[s];
}

const char *mount_mode_name(enum mount_mode m)
{
	static const char *n[] = {"ro", "rw", "tmpfs"};
	return n[m];
}

cordon_policy *policy_new(void)
{
	cordon_policy *p = calloc(1, sizeof(cordon_policy));
	if (p)
		p->workspace_mode = WS_OVERLAY;
	return p;
}

void mounts_free(struct cordon_mount *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].path);
		free(m[i].at);
	}
	free(m);
}

static void secret_clear(struct cordon_secret *s)
{
	free(s->name);
	free(s->from_env);
	free(s->from_file);
	free(s->mount);
	strv_free(&s->inject_hosts);
	free(s->placeholder);
}

void policy_free(cordon_policy *p)
{
	if (!p)
		return;
	mounts_free(p->mounts, p->nmounts);
	strv_free(&p->env);
	strv_free(&p->net_allow);
	strv_free(&p->net_resolve);
	free(p->upstream_ca);
	pxrule_free(&p->net_rules);
	for (size_t i = 0; i < p->nsecrets; i++)
		secret_clear(&p->secrets[i]);
	free(p->secrets);
	strv_free(&p->sys_allow);
	strv_free(&p->sys_deny);
	strv_free(&p->inputs);
	strv_free(&p->devices);
	strv_free(&p->protect);
	strv_free(&p->unprotect);
	strv_free(&p->ws_layers);
	free(p->ws_layers_list);
	free(p->check);
	free(p->check_files);
	free(p->check_cwd);
	for (size_t i = 0; i < p->check_env.n; i++)
		explicit_bzero(p->check_env.v[i], strlen(p->check_env.v[i]));
	strv_free(&p->check_env);
	strv_free(&p->check_writable);
	for (size_t i = 0; i < p->ledger.n; i++)
		free(p->ledger.ev[i].name);
	free(p->ledger.ev);
	free(p->cwd);
	free(p->root);
	free(p->image_workspace);
	free(p->file);
	free(p->ceiling_file);
	free(p);
}

bool policy_intercepts(const cordon_policy *p)
{
	for (size_t i = 0; i < p->nsecrets; i++)
		if (p->secrets[i].inject)
			return p->net_allow.n > 0;
	for (size_t i = 0; i < p->net_rules.n; i++)
		if (pxrule_restricted(&p->net_rules.v[i]))
			return true;
	return false;
}

bool env_name_valid(const char *name)
{
	if (!name[0] || !(isalpha((unsigned char)name[0]) || name[0] == '_'))
		return false;
	for (const char *c = name; *c; c++)
		if (!(isalnum((unsigned char)*c) || *c == '_'))
			return false;
	return true;
}

static int resolve_path(const char *path, const char *base_dir, char *out, size_t outsz, bool confine,
			cordon_error *err)
{
	char joined[PATH_MAX * 2];
	if (!path[0])
		return cordon_err(err, 0, "empty path");
	if (path[0] == '/') {
		if (path_normalize(path, out, outsz) < 0)
			return cordon_err(err, 0, "path \"%s\" is too long", path);
		return 0;
	}
	if (snprintf(joined, sizeof(joined), "%s/%s", base_dir, path) >= (int)sizeof(joined))
		return cordon_err(err, 0, "path \"%s\" is too long", path);
	if (path_normalize(joined, out, outsz) < 0)
		return cordon_err(err, 0, "path \"%s\" is too long", path);
	char base[PATH_MAX];
	if (path_normalize(base_dir, base, sizeof(base)) < 0)
		return cordon_err(err, 0, "path \"%s\" is too long", base_dir);
	if (confine && !path_has_prefix(out, base))
		return cordon_err(err, 0, "relative path \"%s\" escapes its base directory %s", path, base);
	return 0;
}

int resolve_user_path(const char *path, const char *base_dir, char *out, size_t outsz,
		      cordon_error *err)
{
	return resolve_path(path, base_dir, out, outsz, true, err);
}

int resolve_path_any(const char *path, const char *base_dir, char *out, size_t outsz, cordon_error *err)
{
	return resolve_path(path, base_dir, out, outsz, false, err);
}

int policy_mount_at_check(const char *what, const char *at, cordon_error *err)
{
	static const char *const own[] = {"/proc", "/dev", "/tmp"};
	char norm[PATH_MAX];
	if (at[0] != '/')
		return cordon_err(err, 0, "%s %s: the path in the run must be absolute", what, at);
	if (resolve_path(at, "/", norm, sizeof(norm), false, err) < 0)
		return cordon_err_wrap(err, "%s %s", what, at);
	if (strcmp(norm, at) != 0)
		return cordon_err(err, 0, "%s %s: the path in the run must be in its normal form (%s)", what, at, norm);
	if (strcmp(at, "/") == 0)
		return cordon_err(err, 0, "%s /: the run's root cannot be replaced; choose a directory", what);
	for (size_t i = 0; i < ARRAY_SIZE(own); i++)
		if (path_has_prefix(at, own[i]))
			return cordon_err(err, 0, "%s %s: cordon's own %s is there; choose another path", what, at, own[i]);
	return 0;
}

/* HOST:PATH (a read or write grant seen at PATH): split at the last ':'
 * followed by '/'; *at NULL when spec has none (a plain host path). */
static void split_at(char *spec, char **at)
{
	*at = NULL;
	for (char *c = spec; (c = strchr(c, ':')); c++)
		if (c[1] == '/')
			*at = c;
	if (*at) {
		**at = '\0';
		(*at)++;
	}
}

int policy_add_mount(cordon_policy *p, enum mount_mode mode, const char *spec,
		     enum source src, const char *base_dir, cordon_error *err)
{
	char pathbuf[PATH_MAX];
	char norm[PATH_MAX];
	uint64_t size = 0;
	char *at = NULL;
	if (strlen(spec) >= sizeof(pathbuf))
		return cordon_err(err, 0, "path \"%s\" is too long", spec);
	strcpy(pathbuf, spec);
	if (mode != MOUNT_TMPFS) {
		split_at(pathbuf, &at);
		if (at && policy_mount_at_check(mount_mode_name(mode), at, err) < 0)
			return -1;
	}
	if (mode == MOUNT_TMPFS) {
		char *colon = strrchr(pathbuf, ':');
		if (colon) {
			*colon = '\0';
			if (parse_size(colon + 1, &size, err) < 0)
				return cordon_err_wrap(err, "tmpfs %s", pathbuf);
		}
	}
	/* A policy file's relative paths stay below its directory; a flag's are
	 * the user's own spelling relative to the current directory. */
	if (resolve_path(pathbuf, base_dir, norm, sizeof(norm), src != SRC_FLAG, err) < 0)
		return -1;
	if (strcmp(norm, "/") == 0)
		return cordon_err(err, 0, "%s /: the root itself cannot be mounted; name the directories the task needs",
				  mount_mode_name(mode));
	struct cordon_mount *m = realloc(p->mounts, (p->nmounts + 1) * sizeof(*m));
	if (!m)
		return cordon_oom(err);
	p->mounts = m;
	char *dup = strdup(norm);
	char *dat = at ? strdup(at) : NULL;
	if (!dup || (at && !dat)) {
		free(dup);
		free(dat);
		return cordon_oom(err);
	}
	p->mounts[p->nmounts++] = (struct cordon_mount){.mode = mode, .path = dup, .at = dat, .size = size, .src = src};
	return 0;
}

const char *policy_device_refused(const char *path)
{
	static const char *const raw[] = {"/dev/mem", "/dev/kmem", "/dev/port"};
	for (size_t i = 0; i < ARRAY_SIZE(raw); i++)
		if (strcmp(path, raw[i]) == 0)
			return "raw access to the host's memory or I/O ports is never exposed";
	if (path_has_prefix(path, "/dev/mapper"))
		return "device-mapper volumes and their control node are never exposed";
	return NULL;
}

int policy_add_protect(cordon_policy *p, bool unprotect, const char *name, cordon_error *err)
{
	char norm[PATH_MAX];
	if (protect_check_name(name, norm, sizeof(norm), err) < 0)
		return -1;
	strv *l = unprotect ? &p->unprotect : &p->protect;
	if (strv_contains(l, norm))
		return 0;
	return strv_push(l, norm) < 0 ? cordon_oom(err) : 0;
}

const char *policy_device_refused_number(unsigned major, unsigned minor)
{
	if (major == 1 && (minor == 1 || minor == 2 || minor == 4))
		return "raw access to the host's memory or I/O ports is never exposed";
	if (major == 10 && minor == 236)
		return "device-mapper volumes and their control node are never exposed";
	return NULL;
}

int policy_add_device(cordon_policy *p, const char *path, cordon_error *err)
{
	char norm[PATH_MAX];
	if (path[0] != '/' || path_normalize(path, norm, sizeof(norm)) < 0 || !path_has_prefix(norm, "/dev") ||
	    strcmp(norm, "/dev") == 0)
		return cordon_err(err, 0, "device \"%s\": expected an absolute path under /dev (e.g. /dev/fuse)", path);
	const char *why = policy_device_refused(norm);
	if (why)
		return cordon_err(err, 0, "device %s: refused: %s", norm, why);
	if (strv_contains(&p->devices, norm))
		return 0;
	return strv_push(&p->devices, norm) < 0 ? cordon_oom(err) : 0;
}

int policy_add_env(cordon_policy *p, const char *assign, cordon_error *err)
{
	const char *eq = strchr(assign, '=');
	if (!eq)
		return cordon_err(err, 0, "--env \"%s\": expected NAME=VALUE", assign);
	char name[256];
	size_t n = (size_t)(eq - assign);
	if (n == 0 || n >= sizeof(name))
		return cordon_err(err, 0, "--env \"%.*s\": bad variable name", (int)n, assign);
	memcpy(name, assign, n);
	name[n] = '\0';
	if (!env_name_valid(name))
		return cordon_err(err, 0, "--env: \"%s\" is not a valid variable name", name);
	return strv_push(&p->env, assign) < 0 ? cordon_oom(err) : 0;
}

int policy_validate_endpoint(const char *ep, cordon_error *err)
{
	const char *colon = strrchr(ep, ':');
	if (!colon || colon == ep)
		return cordon_err(err, 0, "endpoint \"%s\": expected HOST:PORT", ep);
	const char *port = colon + 1;
	if (strcmp(port, "*") != 0) {
		char *end;
		long v = strtol(port, &end, 10);
		if (!*port || *end || v < 1 || v > 65535)
			return cordon_err(err, 0, "endpoint \"%s\": port must be 1-65535 or *", ep);
	}
	size_t hl = (size_t)(colon - ep);
	if (ep[0] == '[') { /* [v6]:port */
		if (ep[hl - 1] != ']')
			return cordon_err(err, 0, "endpoint \"%s\": unterminated IPv6 literal", ep);
		return 0;
	}
	for (size_t i = 0; i < hl; i++) {
		char c = ep[i];
		if (!(isalnum((unsigned char)c) || c == '-' || c == '.' || c == '*' || c == '_'))
			return cordon_err(err, 0, "endpoint \"%s\": bad character in host", ep);
		if (c == '*' && !(i == 0 && hl > 2 && ep[1] == '.'))
			return cordon_err(err, 0, "endpoint \"%s\": '*' is allowed only as a leading \"*.\"", ep);
	}
	return 0;
}

int policy_add_net(cordon_policy *p, const char *endpoint, cordon_error *err)
{
	return policy_add_net_rule(p, endpoint, NULL, NULL, true, err);
}

int policy_add_net_rule(cordon_policy *p, const char *endpoint, const strv *methods, const strv *paths,
			bool upgrade, cordon_error *err)
{
	if (policy_validate_endpoint(endpoint, err) < 0 || pxrule_add(&p->net_rules, endpoint, methods, paths, upgrade, err) < 0)
		return -1;
	if (strv_contains(&p->net_allow, endpoint))
		return 0;
	return strv_push(&p->net_allow, endpoint) < 0 ? cordon_oom(err) : 0;
}

struct cordon_secret *policy_secret_slot(cordon_policy *p, const char *name, cordon_error *err)
{
	if (!env_name_valid(name)) {
		cordon_err(err, 0, "secret \"%s\": not a valid variable name", name);
		return NULL;
	}
	for (size_t i = 0; i < p->nsecrets; i++) {
		if (strcmp(p->secrets[i].name, name) == 0) {
			secret_clear(&p->secrets[i]);
			memset(&p->secrets[i], 0, sizeof(p->secrets[i]));
			p->secrets[i].name = strdup(name);
			return p->secrets[i].name ? &p->secrets[i] : NULL;
		}
	}
	struct cordon_secret *s = realloc(p->secrets, (p->nsecrets + 1) * sizeof(*s));
	if (!s) {
		cordon_oom(err);
		return NULL;
	}
	p->secrets = s;
	s = &p->secrets[p->nsecrets];
	memset(s, 0, sizeof(*s));
	s->name = strdup(name);
	if (!s->name) {
		cordon_oom(err);
		return NULL;
	}
	p->nsecrets++;
	return s;
}

int policy_add_secret_spec(cordon_policy *p, const char *spec, cordon_error *err)
{
	char name[256];
	const char *eq = strchr(spec, '=');
	size_t n = eq ? (size_t)(eq - spec) : strlen(spec);
	if (n == 0 || n >= sizeof(name))
		return cordon_err(err, 0, "--secret \"%s\": expected NAME or NAME=file:PATH", spec);
	memcpy(name, spec, n);
	name[n] = '\0';
	if (eq && strncmp(eq + 1, "file:", 5) != 0)
		return cordon_err(err, 0, "--secret %s: expected NAME=file:PATH (values are never given on the command line)", name);
	struct cordon_secret *s = policy_secret_slot(p, name, err);
	if (!s)
		return -1;
	if (eq) {
		char abs[PATH_MAX], cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)))
			return cordon_err_errno(err, "getcwd");
		if (resolve_path(eq + 6, cwd, abs, sizeof(abs), false, err) < 0)
			return cordon_err_wrap(err, "--secret %s", name);
		s->from_file = strdup(abs);
	} else {
		s->from_env = strdup(name);
	}
	if (!s->from_file && !s->from_env)
		return cordon_oom(err);
	return 0;
}

static int parse_limit_value(enum limit_id id, const char *v, uint64_t *out, cordon_error *err)
{
	switch (id) {
	case LIM_WALL:
	case LIM_CPU:
		return parse_duration(v, out, err);
	case LIM_PIDS: {
		char *end;
		errno = 0;
		unsigned long long n = strtoull(v, &end, 10);
		if (!isdigit((unsigned char)v[0]) || *end || errno || n == 0 || n > 4194304)
			return cordon_err(err, 0, "malformed process count \"%s\" (1-4194304)", v);
		*out = n;
		return 0;
	}
	default:
		if (parse_size(v, out, err) < 0)
			return -1;
		if (*out == 0)
			return cordon_err(err, 0, "size \"%s\" must be positive", v);
		return 0;
	}
}

int policy_set_limit(cordon_policy *p, enum limit_id id, const char *value,
		     enum source src, cordon_error *err)
{
	uint64_t v;
	if (parse_limit_value(id, value, &v, err) < 0)
		return -1;
	if (id == LIM_MEMORY && v < (1 << 20))
		return cordon_err(err, 0, "memory limit %s is below the 1 MiB minimum", value);
	p->limits[id] = (struct cordon_limit){true, v, src};
	return 0;
}

int policy_set_cwd(cordon_policy *p, const char *path, cordon_error *err)
{
	char abs[PATH_MAX], cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return cordon_err_errno(err, "getcwd");
	if (resolve_path(path, cwd, abs, sizeof(abs), false, err) < 0)
		return cordon_err_wrap(err, "--cwd");
	free(p->cwd);
	p->cwd = strdup(abs);
	return p->cwd ? 0 : cordon_oom(err);
}

int policy_set_root(cordon_policy *p, const char *path, cordon_error *err)
{
	char abs[PATH_MAX], cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return cordon_err_errno(err, "getcwd");
	if (resolve_path(path, cwd, abs, sizeof(abs), false, err) < 0)
		return cordon_err_wrap(err, "--rootfs");
	free(p->root);
	p->root = strdup(abs);
	return p->root ? 0 : cordon_oom(err);
}

int policy_set_image_workspace(cordon_policy *p, const char *path, cordon_error *err)
{
	if (policy_mount_at_check("workspace", path, err) < 0)
		return -1;
	free(p->image_workspace);
	p->image_workspace = strdup(path);
	return p->image_workspace ? 0 : cordon_oom(err);
}

enum workspace_mode policy_workspace_mode(const cordon_policy *p)
{
	return p->image_workspace && !p->workspace_mode_asked ? WS_REVIEW : p->workspace_mode;
}

int policy_set_check(cordon_policy *p, const char *cmd, cordon_error *err)
{
	free(p->check);
	p->check = strdup(cmd);
	return p->check ? 0 : cordon_oom(err);
}

const char *workspace_mode_name(enum workspace_mode m)
{
	return m == WS_OVERLAY ? "overlay" : m == WS_REVIEW ? "review" : "direct";
}

int workspace_mode_parse(const char *s, enum workspace_mode *out)
{
	static const enum workspace_mode all[] = {WS_DIRECT, WS_OVERLAY, WS_REVIEW};
	for (size_t i = 0; i < ARRAY_SIZE(all); i++)
		if (strcmp(s, workspace_mode_name(all[i])) == 0)
			return (*out = all[i]), 0;
	return -1;
}

const char *on_failure_name(enum on_failure f)
{
	return f == ONF_DISCARD ? "discard" : f == ONF_KEEP ? "keep" : "apply";
}

int on_failure_parse(const char *s, enum on_failure *out)
{
	static const enum on_failure all[] = {ONF_APPLY, ONF_DISCARD, ONF_KEEP};
	for (size_t i = 0; i < ARRAY_SIZE(all); i++)
		if (strcmp(s, on_failure_name(all[i])) == 0)
			return (*out = all[i]), 0;
	return -1;
}
