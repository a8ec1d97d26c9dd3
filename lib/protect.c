/* Protected paths (protect.h): the default list, the names of the policy,
 * and the look after the run. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cleanup.h"
#include "ident.h"
#include "model.h"
#include "plan.h"
#include "protect.h"
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
	/* lefthook (every name it reads, and its script directories),
	 * overcommit (its configuration and plugin directory), pre-commit's
	 * other spelling, husky 4's configuration (issue 27 item 3) */
	"lefthook.yml", "lefthook.yaml", "lefthook.toml", "lefthook.json",
	".lefthook.yml", ".lefthook.yaml", ".lefthook.toml", ".lefthook.json",
	"lefthook-local.yml", "lefthook-local.yaml", "lefthook-local.toml", "lefthook-local.json",
	".lefthook-local.yml", ".lefthook-local.yaml", ".lefthook-local.toml", ".lefthook-local.json",
	".lefthook", ".lefthook-local", ".overcommit.yml", ".git-hooks", ".pre-commit-config.yml",
	".huskyrc", ".huskyrc.json", ".huskyrc.js", ".huskyrc.yaml", ".huskyrc.yml", "husky.config.js",
	/* Mercurial (at any depth, as git's): the repository's config (hooks,
	 * extensions), a shared repository's pointer and unshared config;
	 * subrepositories. */
	".hg/hgrc", ".hg/hgrc-not-shared", ".hg/sharedpath", ".hgsub", ".hgrc",
	/* Jujutsu (at any depth, as hg's): the repository's config (ui.pager,
	 * diff and merge tools; outside review F6 of 27.3). */
	".jj/repo/config.toml",
	/* editors and environment loaders: tasks, launch configurations,
	 * direnv's .envrc (run at the next cd). */
	".vscode", ".idea", ".envrc", ".direnv", ".devcontainer",
	".vimrc", ".config/nvim", ".emacs", ".emacs.d", ".tmux.conf", ".Rprofile",
	".vim", ".gvimrc", ".exrc", ".local/share/nvim", ".gdbinit", ".config/direnv",
	".ipython", ".psqlrc", ".sqliterc", ".mavenrc", ".gradle/init.d", ".gradle/init.gradle",
	".cargo/bin",
	/* read from the current directory at start (outside review F6 of
	 * 27.3): pdb runs .pdbrc's lines, `!` shell escapes included; irb,
	 * pry; nvim's exrc (.nvim.lua, .nvimrc); Emacs's directory-local
	 * variables (eval forms). */
	".pdbrc", ".irbrc", ".pryrc", ".nvim.lua", ".nvimrc", ".dir-locals.el",
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

/* A name that applies in every directory: its first component is .git
 * (.hg, .jj), or
 * a change-set directory (.cordon-changes[-UID]: a kept change set deeper in
 * a later run's workspace is as much its owner's as one at the top). */
static bool name_deep(const char *name)
{
	const size_t lc = sizeof(CHANGESET_DIRNAME) - 1;
	return (strncmp(name, ".git", 4) == 0 && (name[4] == '\0' || name[4] == '/')) ||
	       (strncmp(name, ".hg", 3) == 0 && (name[3] == '\0' || name[3] == '/')) ||
	       (strncmp(name, ".jj", 3) == 0 && (name[3] == '\0' || name[3] == '/')) ||
	       (strncmp(name, CHANGESET_DIRNAME, lc) == 0 && (name[lc] == '\0' || name[lc] == '-'));
}

/* A repository's directory (.git, .hg, .jj): one made where there was none is
 * a repository the host's tool would enter. */
static bool repo_dir(const char *r)
{
	return strcmp(r, ".git") == 0 || strcmp(r, ".hg") == 0 || strcmp(r, ".jj") == 0;
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
	bool new_git = dir == PROTECT_DIR_NEW && repo_dir(r);
	if ((!dir || new_git) && ln > lr && strncmp(name, r, lr) == 0 && name[lr] == '/') {
		snprintf(why, whysz, "%s protected path %.*s%s (%s)", new_git ? "a new repository above" : "above",
			 (int)off, rel, name, new_git ? (r[1] == 'g' ? "git would take it for one" : r[1] == 'h' ? "hg would take it for one" : "jj would take it for one") : "only a directory may be made there");
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
		if (n[0] == '/')
			continue; /* a home's marker (protect_match_in) */
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

/* ---- the directories of change sets: their names ---- */

void changeset_dirname(char *out, size_t sz)
{
	uid_t u = ident_euid();
	if (u == 0)
		snprintf(out, sz, "%s", CHANGESET_DIRNAME);
	else
		snprintf(out, sz, "%s-%u", CHANGESET_DIRNAME, (unsigned)u);
}

bool changeset_is_dirname(const char *name)
{
	const size_t l = sizeof(CHANGESET_DIRNAME) - 1;
	if (strncmp(name, CHANGESET_DIRNAME, l) != 0)
		return false;
	if (name[l] == '\0')
		return true;
	if (name[l] != '-' || !name[l + 1])
		return false;
	for (const char *c = name + l + 1; *c; c++)
		if (*c < '0' || *c > '9')
			return false;
	return true;
}

size_t changeset_dirname_in(const char *path)
{
	for (const char *c = path; *c;) {
		while (*c == '/')
			c++;
		size_t l = strcspn(c, "/");
		char comp[256];
		if (l && l < sizeof(comp)) {
			memcpy(comp, c, l);
			comp[l] = '\0';
			if (changeset_is_dirname(comp))
				return (size_t)(c - path) + l;
		}
		c += l;
	}
	return 0;
}

/* ---- the effective list ---- */

int protect_effective(const cordon_policy *p, strv *out, enum source **src, cordon_error *err)
{
	memset(out, 0, sizeof(*out));
	const size_t ndef = ARRAY_SIZE(protect_defaults) - 1, cap = ndef + p->protect.n;
	enum source *s = src ? calloc(cap + 3, sizeof(*s)) : NULL;
	if (src && !s)
		return cordon_oom(err);
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
			return cordon_oom(err);
		}
		if (s)
			s[out->n - 1] = dflt ? SRC_DEFAULT : SRC_POLICY;
	}
	if (src)
		*src = s;
	return 0;
}

/* ---- a home directory as a writable path: the allow-list stance ---- */

#define HOME_MARK "/+"    /* "/+ROOT": the writable path ROOT is a home */
#define UNPROTECT_MARK "/-" /* "/-NAME": NAME is unprotected there */

/* dir (canonical) is home: real, or what it names, is dir. */
static bool same_dir(const char *dir, const char *home)
{
	char real[PATH_MAX];
	if (!home || home[0] != '/' || strcmp(home, "/") == 0)
		return false;
	return strcmp(dir, home) == 0 || (realpath(home, real) && strcmp(real, "/") != 0 && strcmp(dir, real) == 0);
}

#define PASSWD_SCAN_MAX 100000
#define PASSWD_SEEN 32   /* distinct homes remembered, each looked at once */
#define PASSWD_SEEN_LEN 128

/* One account line of /etc/passwd (name:passwd:uid:gid:gecos:dir:shell, as
 * fgetpwent reads it: blank lines and comments skipped): its home, NUL-ended
 * in place, or NULL. */
static char *passwd_line_home(char *line)
{
	while (*line == ' ' || *line == '\t')
		line++;
	if (!*line || *line == '#')
		return NULL;
	char *c = line;
	for (int f = 0; f < 5; f++) {
		c = strchr(c, ':');
		if (!c)
			return NULL;
		c++;
	}
	c[strcspn(c, ":")] = '\0';
	return c;
}

/* home, one of /etc/passwd's, is dir: the same inode (one stat, not a
 * realpath per account), then the same name or what it names. A home
 * already looked at (accounts share /nonexistent, /bin, /) is not looked
 * at again; "/" and a relative home never are (same_dir). */
static bool passwd_entry_home(const char *dir, const struct stat *d, const char *home,
			      char seen[PASSWD_SEEN][PASSWD_SEEN_LEN], size_t *nseen)
{
	if (home[0] != '/' || strcmp(home, "/") == 0)
		return false;
	if (!d)
		return same_dir(dir, home);
	size_t l = strlen(home);
	for (size_t i = 0; l < PASSWD_SEEN_LEN && i < *nseen; i++)
		if (strcmp(seen[i], home) == 0)
			return false; /* looked at: it was not */
	if (l < PASSWD_SEEN_LEN && *nseen < PASSWD_SEEN)
		memcpy(seen[(*nseen)++], home, l + 1);
	struct stat st;
	return stat(home, &st) == 0 && st.st_dev == d->st_dev && st.st_ino == d->st_ino && same_dir(dir, home);
}

/* A home of the account database at dir: the owner's own home (one lookup,
 * whatever the source), then every account of /etc/passwd read as a file.
 * Not getpwent(): enumerating through NSS loads its other modules
 * (libnss_systemd and what it links: about 1.5 ms of CPU per run on a
 * virtual machine), and a directory service's accounts are rarely
 * enumerable anyway (sssd's default). Nor fgetpwent(): it seeks before each
 * account (a system call each); the file is read in blocks and its lines
 * taken apart here. A home is the same inode as dir before it is compared
 * by name; d NULL: dir could not be looked at, names only. */
static bool passwd_home(const char *dir, const struct stat *d)
{
	struct passwd pwb, *pw = NULL;
	char blk[8192];
	char seen[PASSWD_SEEN][PASSWD_SEEN_LEN];
	size_t nseen = 0, have = 0, n = 0;
	if (d && getpwuid_r(d->st_uid, &pwb, blk, sizeof(blk), &pw) == 0 && pw) {
		if (same_dir(dir, pw->pw_dir))
			return true;
		/* Not dir by name nor by what it names: not by inode either. */
		if (strlen(pw->pw_dir) < PASSWD_SEEN_LEN)
			snprintf(seen[nseen++], PASSWD_SEEN_LEN, "%s", pw->pw_dir);
	}
	_cleanup_close_ int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return false;
	bool skip = false; /* the rest of a line longer than blk */
	for (;;) {
		ssize_t r = read(fd, blk + have, sizeof(blk) - 1 - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return false;
		have += (size_t)r;
		blk[have] = '\0';
		char *line = blk, *nl;
		while ((nl = memchr(line, '\n', have - (size_t)(line - blk))) || (r == 0 && line < blk + have)) {
			if (nl)
				*nl = '\0';
			char *home = skip ? NULL : passwd_line_home(line);
			skip = false;
			if (home && (++n > PASSWD_SCAN_MAX || passwd_entry_home(dir, d, home, seen, &nseen)))
				return n <= PASSWD_SCAN_MAX;
			line = nl ? nl + 1 : blk + have;
		}
		if (r == 0)
			return false;
		have -= (size_t)(line - blk);
		if (have == sizeof(blk) - 1) { /* one line fills blk: not an account's */
			have = 0;
			skip = true;
		} else
			memmove(blk, line, have);
	}
}

bool protect_is_home(const char *dir)
{
	if (same_dir(dir, getenv("HOME")))
		return true;
	/* One that looks like one: a shell's rc or profile, or .config. */
	static const char *const looks[] = {".bashrc", ".profile", ".config"};
	_cleanup_close_ int fd = open_root(dir, O_PATH | O_DIRECTORY);
	struct stat st;
	for (size_t i = 0; fd >= 0 && i < ARRAY_SIZE(looks); i++)
		if (fstatat(fd, looks[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
			return true;
	return passwd_home(dir, fd >= 0 && fstat(fd, &st) == 0 ? &st : NULL);
}

int protect_add_home(const struct run_plan *plan, const cordon_policy *p, strv *names, cordon_error *err)
{
	bool any = false;
	for (size_t i = 0; i < plan->nmounts; i++) {
		if (plan->mounts[i].mode != MOUNT_RW || !plan->mounts[i].home)
			continue;
		char m[PATH_MAX + 4];
		snprintf(m, sizeof(m), HOME_MARK "%s", plan->mounts[i].path);
		if (!strv_contains(names, m) && strv_push(names, m) < 0)
			return cordon_oom(err);
		any = true;
	}
	for (size_t i = 0; any && i < p->unprotect.n; i++) {
		char m[PATH_MAX + 4];
		snprintf(m, sizeof(m), UNPROTECT_MARK "%s", p->unprotect.v[i]);
		if (!strv_contains(names, m) && strv_push(names, m) < 0)
			return cordon_oom(err);
	}
	return 0;
}

bool protect_marker_valid(const char *entry)
{
	char norm[PATH_MAX];
	cordon_error e = {0};
	if (strncmp(entry, HOME_MARK, 2) == 0)
		return entry[2] == '/' && path_normalize(entry + 2, norm, sizeof(norm)) == 0 &&
		       strcmp(norm, entry + 2) == 0;
	if (strncmp(entry, UNPROTECT_MARK, 2) == 0)
		return protect_check_name(entry + 2, norm, sizeof(norm), &e) == 0 && strcmp(norm, entry + 2) == 0;
	return false;
}

bool protect_home_top(const char *name, size_t len)
{
	return (len > 0 && name[0] == '.') || (len == 3 && strncmp(name, "bin", 3) == 0);
}

/* rel (relative to the writable path root, normalised) is protected by a
 * home's stance: its first component is a dot-entry or bin, root is a home in
 * names' markers, and no unprotected name lifts it. */
static bool protect_home_dotentry(const strv *names, const char *root, const char *rel, int dir, char *why, size_t whysz)
{
	char dummy[1];
	if (!why || !whysz) {
		why = dummy;
		whysz = sizeof(dummy);
	}
	size_t top = strcspn(rel, "/");
	if (!root || !protect_home_top(rel, top))
		return false; /* rel is normalised: no "." or ".." component */
	bool home = false;
	for (size_t i = 0; !home && i < names->n; i++)
		home = strncmp(names->v[i], HOME_MARK, 2) == 0 && strcmp(names->v[i] + 2, root) == 0;
	if (!home)
		return false;
	for (size_t i = 0; i < names->n; i++) {
		const char *u = names->v[i];
		if (strncmp(u, UNPROTECT_MARK, 2) != 0)
			continue;
		u += 2;
		/* At or below a name unprotected; above one, a directory only. */
		if (name_under(rel, u) || (dir && name_under(u, rel)))
			return false;
	}
	snprintf(why, whysz, "protected path %.*s (%s at the top of a home directory)", (int)top, rel,
		 rel[0] == '.' ? "a dot-entry" : "bin, first on a login shell's PATH,");
	return true;
}

bool protect_match_in(const strv *names, const char *root, const char *rel, int dir, char *why, size_t whysz)
{
	return protect_match(names, rel, dir, why, whysz) || protect_home_dotentry(names, root, rel, dir, why, whysz);
}
