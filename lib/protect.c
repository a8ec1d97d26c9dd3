/* Protected paths (protect.h): the default list, the names of the policy,
 * and the look after the run. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "changeset.h"
#include "cleanup.h"
#include "protect.h"
#include "run.h"
#include "snapshot.h"

/* What the host runs or trusts later, by name inside a writable path
 * (README, "Protected paths"; a directory protects everything below it). */
const char *const protect_defaults[] = {
	/* git: hooks run at the next commit, checkout, merge; config can name
	 * core.hooksPath, core.fsmonitor, core.sshCommand, aliases, filters;
	 * attributes select filters and diff drivers; info/ holds attributes. */
	".git/hooks", ".git/config", ".git/info", ".gitmodules", ".gitattributes",
	".gitconfig", ".config/git",
	/* git's redirections: commondir names the directory whose config and
	 * hooks git uses; a worktree's config; linked worktrees' and
	 * submodules' own git directories (config, hooks, commondir each);
	 * object stores borrowed from elsewhere. */
	".git/commondir", ".git/config.worktree", ".git/worktrees", ".git/modules",
	".git/objects/info/alternates", ".git/objects/info/http-alternates",
	/* hook managers: directories core.hooksPath points at, and the
	 * configuration pre-commit and pnpm run */
	".husky", ".githooks", ".pre-commit-config.yaml", ".pnpmfile.cjs",
	/* editors and environment loaders: tasks, launch configurations,
	 * direnv's .envrc (run at the next cd). */
	".vscode", ".idea", ".envrc", ".direnv", ".devcontainer",
	".vimrc", ".config/nvim", ".emacs", ".emacs.d", ".tmux.conf", ".Rprofile",
	/* shells: rc, profile, login and logout files (a home as workspace). */
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout",
	".cshrc", ".tcshrc", ".login", ".logout", ".kshrc", ".mkshrc",
	".config/fish", ".xprofile", ".xsessionrc", ".xinitrc",
	".bash_aliases", ".bashrc.d", ".config/zsh", ".xsession",
	/* what runs at login or on connection */
	".ssh", ".config/autostart", ".config/systemd", ".config/environment.d",
	".pam_environment", ".local/bin",
	/* credentials helpers and the commands they name */
	".aws/config", ".kube/config", ".docker/config.json",
	/* package managers: registries, tokens, scripts, build commands */
	".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc", ".cargo/config", ".cargo/config.toml",
	".yarn/releases",
	/* coding agents' own configuration (commands, hooks, MCP servers) */
	".claude", ".codex", ".cursor", ".mcp.json",
	NULL,
};

int protect_check_name(const char *name, char *out, size_t outsz, cordon_error *err)
{
	char tmp[PATH_MAX + 2], norm[PATH_MAX];
	const char *why = NULL;
	if (!*name)
		why = "empty";
	else if (name[0] == '/')
		why = "absolute";
	for (const char *c = name; !why && *c;) {
		size_t l = strcspn(c, "/");
		if ((l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
			why = "a \".\" or \"..\" component";
		c += l;
		while (*c == '/')
			c++;
	}
	if (!why && snprintf(tmp, sizeof(tmp), "/%s", name) >= (int)sizeof(tmp))
		why = "too long";
	if (!why && (path_normalize(tmp, norm, sizeof(norm)) < 0 || strcmp(norm, "/") == 0))
		why = "not a path";
	if (why)
		return cordon_err(err, 0, "protected path \"%s\": %s; expected a path relative to each writable path, such as .git/hooks or .envrc",
				  name, why);
	snprintf(out, outsz, "%s", norm + 1);
	return 0;
}

/* a == b, or a lies below b (relative names). */
static bool name_under(const char *a, const char *b)
{
	size_t l = strlen(b);
	return strncmp(a, b, l) == 0 && (a[l] == '\0' || a[l] == '/');
}

/* A name that applies in every directory: its first component is .git, or
 * a change-set directory (.cordon-changes[-UID]: a kept change set deeper in
 * a later run's workspace is as much its owner's as one at the top). */
static bool name_deep(const char *name)
{
	const size_t lc = sizeof(CHANGESET_DIRNAME) - 1;
	return (strncmp(name, ".git", 4) == 0 && (name[4] == '\0' || name[4] == '/')) ||
	       (strncmp(name, CHANGESET_DIRNAME, lc) == 0 && (name[lc] == '\0' || name[lc] == '-'));
}

/* rel (at off, the rest of it) is at or below name, or above it and not a
 * plain directory (protect_match). */
static bool match_at(const char *rel, size_t off, const char *name, int dir, char *why, size_t whysz)
{
	const char *r = rel + off;
	size_t lr = strlen(r), ln = strlen(name);
	if (name_under(r, name)) {
		snprintf(why, whysz, "protected path %.*s%s", (int)off, rel, name);
		return true;
	}
	bool new_git = dir == PROTECT_DIR_NEW && strcmp(r, ".git") == 0;
	if ((!dir || new_git) && ln > lr && strncmp(name, r, lr) == 0 && name[lr] == '/') {
		snprintf(why, whysz, "%s protected path %.*s%s (%s)", new_git ? "a new repository above" : "above",
			 (int)off, rel, name, new_git ? "git would take it for one" : "only a directory may be made there");
		return true;
	}
	return false;
}

bool protect_match(const strv *names, const char *rel, int dir, char *why, size_t whysz)
{
	char dummy[1];
	if (!why || !whysz) {
		why = dummy;
		whysz = sizeof(dummy);
	}
	for (size_t i = 0; i < names->n; i++) {
		const char *n = names->v[i];
		if (match_at(rel, 0, n, dir, why, whysz))
			return true;
		if (!name_deep(n))
			continue;
		for (const char *c = strchr(rel, '/'); c; c = strchr(c + 1, '/'))
			if (match_at(rel, (size_t)(c + 1 - rel), n, dir, why, whysz))
				return true;
	}
	return false;
}

static bool unprotected(const cordon_policy *p, const char *name)
{
	for (size_t i = 0; i < p->unprotect.n; i++)
		if (name_under(name, p->unprotect.v[i]))
			return true;
	return false;
}

int protect_effective(const cordon_policy *p, strv *out, enum source **src, cordon_error *err)
{
	memset(out, 0, sizeof(*out));
	const size_t ndef = ARRAY_SIZE(protect_defaults) - 1, cap = ndef + p->protect.n;
	enum source *s = src ? calloc(cap + 3, sizeof(*s)) : NULL;
	if (src && !s)
		return cordon_err(err, 12, "out of memory");
	/* Change sets kept for review (changeset.h): root's, and this user's.
	 * A run that could write one would choose what its owner's `cordon
	 * apply` writes, and where. Always protected: no --unprotect lifts it. */
	char mine[64];
	changeset_dirname(mine, sizeof(mine));
	const char *always[] = {CHANGESET_DIRNAME, mine};
	for (size_t i = 0; i < cap + 2; i++) {
		bool dflt = i < ndef || i >= cap;
		const char *n = i >= cap ? always[i - cap] : i < ndef ? protect_defaults[i] : p->protect.v[i - ndef];
		if ((i < cap && unprotected(p, n)) || strv_contains(out, n))
			continue;
		if (strv_push(out, n) < 0) {
			free(s);
			strv_free(out);
			return cordon_err(err, 12, "out of memory");
		}
		if (s)
			s[out->n - 1] = dflt ? SRC_DEFAULT : SRC_POLICY;
	}
	if (src)
		*src = s;
	return 0;
}

int protect_check_after(const struct run_plan *plan, struct run_report *rep)
{
	int found = 0;
	const struct boundary_model *m = &plan->model;
	/* The first component below the writable path that was found absent
	 * (the names share them: .git/config, .git/hooks, ...): nothing below it
	 * is there either, and each look is a syscall. */
	char absent[4096] = "";
	for (size_t i = 0; i < m->n; i++) {
		const struct model_entry *e = &m->e[i];
		if (e->kind != MK_PROTECT || !(e->flags & MODEL_NOT_YET))
			continue;
		size_t plen = strlen(e->path), tlen = e->target ? strlen(e->target) : 0;
		size_t first = tlen && tlen < plen ? plen - tlen + strcspn(e->target, "/") : plen;
		if (absent[0] && strlen(absent) == first && strncmp(absent, e->path, first) == 0)
			continue;
		/* No link is followed anywhere: ELOOP means a link is on the way
		 * now, which the run may have made (it was not there before). */
		if (first < plen && first < sizeof(absent)) { /* a deeper name: its top first */
			memcpy(absent, e->path, first);
			absent[first] = '\0';
			_cleanup_close_ int top = open_root(absent, O_PATH);
			if (top < 0 && errno == ENOENT)
				continue;
			absent[0] = '\0';
		}
		_cleanup_close_ int fd = open_root(e->path, O_PATH);
		if (fd < 0 && errno != ELOOP)
			continue;
		report_add_denial(rep, "file", e->path);
		found++;
	}
	return found;
}
