#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cleanup.h"
#include "error.h"
#include "opts.h"
#include "cli-mcp.h"
#include "cli-serve.h"
#include "pol-parse.h"

enum opt_id {
	O_POLICY, O_REPORT, O_RO, O_RW, O_TMPFS, O_CWD, O_ENV, O_NET, O_SECRET, O_TIME, O_CPU,
	O_MEM, O_PIDS, O_OUTPUT, O_FSIZE, O_CEILING, O_CHECK, O_JSON, O_DEV, O_PROTECT, O_UNPROTECT,
	O_WSMODE, O_ONFAIL, O_TEST_CRASH, O_PTY, O_SERVE_CLIENT, O_ROOTFS, O_WORKSPACE, O_WEAKER,
};
static const struct {
	const char *name;
	enum opt_id id;
	bool arg;
} opts[] = {
	{"--policy", O_POLICY, true}, {"--report", O_REPORT, true}, {"--ro", O_RO, true},
	{"--rw", O_RW, true}, {"--tmpfs", O_TMPFS, true}, {"--cwd", O_CWD, true},
	{"--env", O_ENV, true}, {"--net", O_NET, true}, {"--secret", O_SECRET, true},
	{"--time-limit", O_TIME, true}, {"--cpu-limit", O_CPU, true},
	{"--memory-limit", O_MEM, true}, {"--pids-limit", O_PIDS, true},
	{"--output-limit", O_OUTPUT, true}, {"--file-size-limit", O_FSIZE, true},
	{"--ceiling", O_CEILING, true}, {"--check", O_CHECK, true}, {"--json", O_JSON, false},
	{"--dev", O_DEV, true}, {"--protect", O_PROTECT, true}, {"--unprotect", O_UNPROTECT, true},
	{"--workspace-mode", O_WSMODE, true}, {"--on-failure", O_ONFAIL, true}, {"--pty", O_PTY, false},
	{"--rootfs", O_ROOTFS, true}, {"--workspace", O_WORKSPACE, true}, {"--allow-weaker", O_WEAKER, true},
	/* Tests only, not in --help: the apply kills itself after N entries. */
	{"--test-apply-crash-after", O_TEST_CRASH, true},
	/* cordon serve's own, not in --help: a one-shot run of a client (policy.h). */
	{"--serve-client", O_SERVE_CLIENT, true},
};

static const char run_usage[] =
	"usage: cordon run [OPTIONS] [--] COMMAND [ARG...]\n"
	"Run COMMAND inside the boundary; exit status as the report's status says.\n"
	"  --policy FILE           task policy (JSON); flags add to it\n"
	"  --report FILE           write the JSON run report there (- = stderr)\n"
	"  --ro PATH, --rw PATH    make host PATH visible read-only / read-write\n"
	"  --ro HOST:PATH, --rw HOST:PATH  the same, seen at PATH in the run\n"
	"  --tmpfs PATH[:SIZE]     a fresh private tmpfs at PATH\n"
	"  --dev PATH              expose a host character device in /dev (e.g. /dev/fuse)\n"
	"  --protect NAME          keep NAME read-only in every writable path (e.g. Makefile)\n"
	"  --unprotect NAME        let the run write a protected path (e.g. .git/hooks)\n"
	"  --cwd PATH              working directory inside\n"
	"  --rootfs DIR            the system view from an unpacked image directory\n"
	"                          (read-only) instead of the host's /usr, /etc, /bin...\n"
	"  --workspace PATH        with --rootfs: the image's directory PATH as the\n"
	"                          workspace, its changes kept for review (never applied\n"
	"                          into the image)\n"
	"  --env NAME=VALUE        set a variable inside\n"
	"  --net HOST:PORT         allow egress to this endpoint through the proxy\n"
	"                          (*.domain:PORT, HOST:*, literals; localhost = host loopback)\n"
	"  --secret NAME[=file:PATH]  inject a credential as variable NAME\n"
	"  --time-limit DUR        wall-clock limit\n"
	"  --cpu-limit DUR         CPU time of all processes\n"
	"  --memory-limit SIZE     memory of all processes\n"
	"  --pids-limit N          processes/threads alive at once\n"
	"  --output-limit SIZE     bytes of stdout+stderr captured\n"
	"  --file-size-limit SIZE  largest file the run may write\n"
	"  --check CMD             a task check run after COMMAND, workspace read-only\n"
	"  --pty                   interactive: the command gets a pty of the run's own,\n"
	"                          relayed to cordon's terminal (raw mode, window size)\n"
	"  --ceiling FILE          the operator's ceiling\n"
	"  --workspace-mode MODE   overlay (default where the kernel allows it): into a\n"
	"                          change set, applied when the run ends; review: into a\n"
	"                          change set that is kept (cordon changes); direct:\n"
	"                          writes reach the host at once\n"
	"  --on-failure WHAT       overlay mode, a run not ok: apply (default), discard, keep\n"
	"  --allow-weaker LAYERS   accept a weaker boundary where the host lacks a layer\n"
	"                          (comma-separated: namespaces, network, landlock,\n"
	"                          cgroup, seccomp, workspace; docs/hosts.md)\n"
	"  -h, --help              this text\n"
	"see cordon(1) and README.md\n";
static const char explain_usage[] =
	"usage: cordon explain [RUN OPTIONS] [--json] [-- COMMAND]\n"
	"       cordon explain --bundle DIR [--json]\n"
	"Print the effective boundary and the verdict a run would reach; run nothing.\n"
	"  RUN OPTIONS             as for cordon run (see cordon run --help)\n"
	"  --bundle DIR            an OCI bundle's boundary under cordon-oci (docs/oci.md)\n"
	"  --json                  output per schemas/explain.schema.json\n"
	"  -h, --help              this text\n";
static const char ledger_usage[] =
	"usage: cordon ledger FILE [--json]\n"
	"Peak live payload of an allocation ledger against its limit (exit 0 fits, 1 not, 2 bad input).\n"
	"  --json                  machine-readable output\n"
	"  -h, --help              this text\n";
static const char validate_usage[] =
	"usage: cordon validate POLICY\n"
	"Check a policy file without running anything (exit 0 valid, 2 not).\n"
	"  -h, --help              this text\n";
static const char changes_usage[] =
	"usage: cordon changes DIR [PATH|GLOB...] [--json] [--diff] [--all]\n"
	"       cordon apply DIR [PATH|GLOB...] [--force] [--include-protected] [--no-ignore] [--json] [-q]\n"
	"       cordon discard DIR\n"
	"A change set kept by a review-mode run (the report's changes.dir):\n"
	"  changes                 list what it creates, modifies and deletes, with sizes and hashes\n"
	"  --json                  as JSON\n"
	"  --diff                  a unified diff of the text files (created from /dev/null, deleted\n"
	"                          to it: git apply and patch -p1 take it)\n"
	"  --all                   list what the ignore list leaves out too\n"
	"  --snapshot-upper N DIR  list a session snapshot's (cordon serve): DIR, an upper layer,\n"
	"                          read for the change set's layer N, the others left out\n"
	"  --host-tree N FD        layer N's host directory read as the detached tree at fd FD\n"
	"                          (cordon serve: a stacked fork's lower tree; root only)\n"
	"  apply                   apply it to the host (completes an interrupted apply); refused\n"
	"                          when a host file changed since the run started; says each entry\n"
	"                          applied (created|modified|deleted PATH) and N applied, M held back,\n"
	"                          K ignored, L left\n"
	"  PATH|GLOB               only the entries at or below these, relative to the workspace\n"
	"                          (fnmatch: * ? [..] within one component, ** is *); the rest stays\n"
	"                          in the change set. A rename is a delete and a create\n"
	"  --force                 apply anyway\n"
	"  --include-protected     apply entries at protected paths too (.git/config, .envrc...;\n"
	"                          held back otherwise)\n"
	"  --no-ignore             apply what the ignore list leaves out too\n"
	"  --json                  what was applied, as JSON\n"
	"  -q, --quiet             say nothing but errors\n"
	"  discard                 remove it (rolls back an interrupted apply first)\n"
	"  -h, --help              this text\n"
	"Ignore list (at any depth, with all below): __pycache__ *.pyc .pytest_cache .mypy_cache\n"
	".ruff_cache node_modules/.cache: never applied (the end of an overlay run's apply too) nor\n"
	"checked for host changes, gone with the change set when nothing else is left in it; and\n"
	".git/index: applied only where the host's has not changed since the run started (a host\n"
	"git status after the run: the host's stays, no conflict).\n";
static const char all_usage[] =
	"usage: cordon run [OPTIONS] [--] COMMAND [ARG...]\n"
	"       cordon explain [OPTIONS] [--json] [-- COMMAND]\n"
	"       cordon ledger FILE [--json]\n"
	"       cordon validate POLICY\n"
	"       cordon changes DIR [PATH...] [--json] [--diff] [--all] | apply DIR [PATH...] [--force]\n"
	"         [--include-protected] [--no-ignore] [--json] [-q] | discard DIR\n"
	"       cordon serve (--socket PATH | --listen 127.0.0.1:PORT --token-file F) --state-dir DIR [...]\n"
	"       cordon mcp [--policy FILE] [--ceiling FILE] [--workspace DIR] [--server S [--token-file F]]\n"
	"       cordon VERB --help, cordon help VERB, cordon --version\n"
	"options: --policy FILE --report FILE --ro PATH --rw PATH --tmpfs PATH[:SIZE]\n"
	"         --dev PATH --protect NAME --unprotect NAME --cwd PATH --rootfs DIR --workspace PATH --env NAME=VALUE --net HOST:PORT --secret NAME[=file:PATH]\n"
	"         --time-limit DUR --cpu-limit DUR --memory-limit SIZE --pids-limit N\n"
	"         --output-limit SIZE --file-size-limit SIZE --ceiling FILE --check CMD --pty\n"
	"         --workspace-mode overlay|review|direct --on-failure apply|discard|keep\n"
	"see cordon(1) and README.md for the boundary, the statuses and the exit codes\n";

const char *cli_usage(const char *verb)
{
	if (!verb)
		return all_usage;
	if (strcmp(verb, "run") == 0)
		return run_usage;
	if (strcmp(verb, "explain") == 0)
		return explain_usage;
	if (strcmp(verb, "ledger") == 0)
		return ledger_usage;
	if (strcmp(verb, "validate") == 0)
		return validate_usage;
	if (strcmp(verb, "changes") == 0 || strcmp(verb, "apply") == 0 || strcmp(verb, "discard") == 0)
		return changes_usage;
	if (strcmp(verb, "serve") == 0)
		return SERVE_USAGE;
	if (strcmp(verb, "mcp") == 0)
		return cli_mcp_usage();
	return all_usage;
}

bool cli_wants_help(int argc, char **argv)
{
	for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return true;
	return false;
}

static int find_opt(const char *a, const char **val)
{
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		size_t n = strlen(opts[i].name);
		if (strncmp(a, opts[i].name, n) != 0)
			continue;
		if (a[n] == '\0') {
			*val = NULL;
			return (int)i;
		}
		if (a[n] == '=' && opts[i].arg) {
			*val = a + n + 1;
			return (int)i;
		}
	}
	return -1;
}

static int apply(struct cli_run *o, enum opt_id id, const char *v, cordon_error *err)
{
	char cwd[PATH_MAX];
	cordon_policy *p = o->pol;
	switch (id) {
	case O_POLICY:
	case O_REPORT:
	case O_CEILING:
	case O_JSON:
		return 0; /* handled in the first pass */
	case O_RO:
	case O_RW:
	case O_TMPFS:
		if (!getcwd(cwd, sizeof(cwd)))
			return cordon_err_errno(err, "getcwd");
		if (policy_add_mount(p, id == O_RO ? MOUNT_RO : id == O_RW ? MOUNT_RW : MOUNT_TMPFS, v,
				     SRC_FLAG, cwd, err) < 0)
			return cordon_err_wrap(err, "%s", id == O_RO ? "--ro" : id == O_RW ? "--rw" : "--tmpfs");
		return 0;
	case O_CWD:
		return policy_set_cwd(p, v, err);
	case O_ROOTFS:
		return policy_set_root(p, v, err);
	case O_WORKSPACE:
		return policy_set_image_workspace(p, v, err);
	case O_WSMODE:
		if (workspace_mode_parse(v, &p->workspace_mode) < 0)
			return cordon_err(err, 0, "--workspace-mode %s: not overlay, review or direct", v);
		p->workspace_mode_asked = true;
		return 0;
	case O_WEAKER: {
		static const char *const names[] = {"cgroup", "landlock", "seccomp", "workspace", "namespaces", "network"};
		if (!v)
			return cordon_err(err, 0, "--allow-weaker: which layers?");
		for (const char *s = v; *s;) {
			size_t n = strcspn(s, ",");
			size_t b = 0;
			while (b < ARRAY_SIZE(names) && (strlen(names[b]) != n || strncmp(names[b], s, n) != 0))
				b++;
			if (b == ARRAY_SIZE(names))
				return cordon_err(err, 0, "--allow-weaker %s: unknown layer \"%.*s\" (namespaces, network, landlock, cgroup, seccomp, workspace)",
						  v, (int)n, s);
			p->allow_weaker |= 1u << b;
			s += n + (s[n] == ',');
		}
		return 0;
	}
	case O_ONFAIL:
		if (on_failure_parse(v, &p->on_failure) < 0)
			return cordon_err(err, 0, "--on-failure %s: not apply, discard or keep", v);
		return 0;
	case O_TEST_CRASH:
		p->test_apply_crash_after = v ? strtol(v, NULL, 10) : 0;
		return 0;
	case O_SERVE_CLIENT: {
		unsigned u, g;
		char end;
		if (!v || sscanf(v, "%u:%u%c", &u, &g, &end) != 2 || geteuid() != 0)
			return cordon_err(err, 0, "--serve-client %s: UID:GID, for cordon serve as root only", v ? v : "");
		p->for_client = true;
		p->client_uid = (uid_t)u;
		p->client_gid = (gid_t)g;
		return 0;
	}
	case O_ENV:
		return policy_add_env(p, v, err);
	case O_NET:
		return policy_add_net(p, v, err) < 0 ? cordon_err_wrap(err, "--net") : 0;
	case O_SECRET:
		return policy_add_secret_spec(p, v, err);
	case O_CHECK:
		return policy_set_check(p, v, err);
	case O_PTY:
		o->pty = true; /* explain: the same boundary, nothing to show */
		return 0;
	case O_DEV:
		return policy_add_device(p, v, err) < 0 ? cordon_err_wrap(err, "--dev") : 0;
	case O_PROTECT:
	case O_UNPROTECT:
		return policy_add_protect(p, id == O_UNPROTECT, v, err) < 0
			       ? cordon_err_wrap(err, "%s", id == O_PROTECT ? "--protect" : "--unprotect")
			       : 0;
	default: {
		enum limit_id l = id == O_TIME ? LIM_WALL : id == O_CPU ? LIM_CPU : id == O_MEM ? LIM_MEMORY
				: id == O_PIDS ? LIM_PIDS : id == O_OUTPUT ? LIM_OUTPUT : LIM_FILE_SIZE;
		if (policy_set_limit(p, l, v, SRC_FLAG, err) < 0)
			return cordon_err_wrap(err, "%s", limit_flag(l));
		return 0;
	}
	}
}

int cli_parse_run(int argc, char **argv, struct cli_run *out, bool explain, cordon_error *err)
{
	memset(out, 0, sizeof(*out));
	out->pol = policy_new();
	if (!out->pol)
		return cordon_oom(err);
	int cmd_start = argc;
	const char *policy_file = NULL;
	/* Pass 1: where the command starts, and the options that decide how the
	 * rest is read (policy first, so that flags add to it). */
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v;
		if (strcmp(a, "--") == 0) {
			cmd_start = i + 1;
			break;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			out->help = true;
			return 0;
		}
		if (a[0] != '-' || a[1] != '-') {
			if (a[0] == '-' && a[1])
				return cordon_err(err, 0, "unknown option \"%s\" (see cordon %s --help)", a, explain ? "explain" : "run");
			cmd_start = i;
			break;
		}
		int k = find_opt(a, &v);
		if (k < 0)
			return cordon_err(err, 0, "unknown option \"%s\" (see cordon %s --help)", a, explain ? "explain" : "run");
		if (opts[k].id == O_JSON && !explain)
			return cordon_err(err, 0, "--json is an option of cordon explain");
		if (opts[k].arg && !v) {
			if (i + 1 >= argc)
				return cordon_err(err, 0, "%s needs a value", opts[k].name);
			v = argv[++i];
		}
		if (opts[k].id == O_POLICY) {
			if (policy_file)
				return cordon_err(err, 0, "--policy given twice");
			policy_file = v;
		} else if (opts[k].id == O_REPORT) {
			out->report_path = v;
		} else if (opts[k].id == O_CEILING) {
			out->ceiling_path = v;
		} else if (opts[k].id == O_JSON) {
			out->json = true;
		}
	}
	if (policy_file && policy_load_file(out->pol, policy_file, err) < 0)
		return -1;
	if (out->ceiling_path && !(out->pol->ceiling_file = strdup(out->ceiling_path)))
		return cordon_oom(err);
	/* Pass 2: the flags, in order. */
	for (int i = 0; i < cmd_start; i++) {
		const char *v;
		if (!argv[i] || strcmp(argv[i], "--") == 0) /* (argv[argc] is NULL: the analyzer's case) */
			break;
		int k = find_opt(argv[i], &v);
		if (opts[k].arg && !v)
			v = argv[++i];
		if (apply(out, opts[k].id, v, err) < 0)
			return -1;
	}
	out->argv = argv + cmd_start;
	if (!explain && !out->argv[0])
		return cordon_err(err, 0, "no command given (usage: cordon run [OPTIONS] [--] COMMAND [ARG...])");
	return 0;
}
