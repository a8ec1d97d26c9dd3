# Issue 15: control files in a writable workspace (git hooks and config,
# editor tasks, shell rc files...) stay untouchable unless granted, and every
# attempt is reported.
. "$(dirname "$0")/../lib.sh"

# Overlay and review runs as root need a workspace with idmapped mounts
# (tests/lib.sh): /var/tmp where /tmp is a tmpfs of Linux < 6.3.
overlay_workspaces '^test_(overlay_holds_protected_back|overlay_holds_back_above_protected|review_apply_uses_the_runs_list|git_workflow_works_in_overlay|git_redirections_held_back_in_overlay|nested_git_held_back_in_overlay|tmpfile_where_names_are_protected)$'

# git on the host and in the run, without the invoker's configuration.
GITENV=(--env HOME=/nonexistent --env GIT_CONFIG_NOSYSTEM=1 --env GIT_CONFIG_GLOBAL=/dev/null
	--env GIT_AUTHOR_NAME=t --env GIT_AUTHOR_EMAIL=t@t --env GIT_COMMITTER_NAME=t --env GIT_COMMITTER_EMAIL=t@t)
hgit() { HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t git "$@"; }

# The tests that expect a refusal at the call (a denial, EACCES/EROFS/EBUSY)
# run in direct mode, where the observer and the read-only mounts are the
# layers; in overlay and review mode absent names are held back from the
# apply instead (test_overlay_*).
mk_repo() {
	command -v git >/dev/null || { t_skip "git is not installed"; return 1; }
	hgit init -q . && echo one >f && hgit add f && hgit commit -qm one || { fail "git init on the host"; return 1; }
	mkdir -p .git/hooks
	sha_before=$(cat .git/config .git/hooks/* 2>/dev/null | sha256sum)
}

# A repository in the workspace's vendor/lib, made on the host.
mk_nested_repo() { mkdir -p vendor/lib && (cd vendor/lib && hgit init -q . && hgit commit -q --allow-empty -m v); }

# The day-to-day git work, as a run's script: three commits, a branch, a
# stash; it prints how many commits it sees at the end (3).
GIT_WORKFLOW='
	set -e
	echo two >>f; git add f; git commit -qm two
	git checkout -qb topic; echo three >g; git add g; git commit -qm three; git checkout -q -
	echo wip >>f; git stash -q; git stash pop -q; git checkout -q f
	git log --oneline --all | wc -l'

# git's redirections (review F1a), as a run's script: commondir names the
# directory whose config and hooks git uses (c/, with a hook and an
# fsmonitor that touch hooked and fsmon), config.worktree is read as config,
# worktrees/* and modules/* are git directories of their own, alternates
# borrow objects. Each one written prints its name.
GIT_REDIRECTIONS='
		mkdir -p c/hooks && printf "[core]\n\tfsmonitor = \"touch fsmon; false\"\n" >c/config
		printf "#!/bin/sh\ntouch hooked\n" >c/hooks/pre-commit; chmod 755 c/hooks/pre-commit
		echo ../c >.git/commondir && echo commondir
		echo "[core] fsmonitor = x" >.git/config.worktree && echo config.worktree
		mkdir -p .git/worktrees/w && echo x >.git/worktrees/w/config.worktree && echo worktrees
		mkdir -p .git/modules/m/hooks && echo x >.git/modules/m/hooks/post-checkout && echo modules
		echo /tmp >.git/objects/info/alternates && echo alternates'

# None of those redirections is on the host, and the host's git status and
# commit run nothing of the run's.
no_git_redirection_on_host() {
	[ ! -e .git/commondir ] && [ ! -e .git/config.worktree ] && [ ! -e .git/worktrees ] && [ ! -e .git/modules ] &&
		[ ! -e .git/objects/info/alternates ] || fail "on the host: $(ls -A .git)"
	hgit status >/dev/null 2>&1
	hgit commit -q --allow-empty -m x >/dev/null 2>&1
	[ ! -e fsmon ] && [ ! -e hooked ] || fail "the host's git ran the run's commands"
}

denied() { # PATH...: each is a file denial of the last report
	for p in "$@"; do
		expect_eq "$(field --arg p "$p" '[.denials[] | select(.kind=="file" and .target==$p)] | length')" 1 "denial of $p"
	done
}

# A workspace that is a home directory and a git repository: a hook, the
# hooks path, fsmonitor, editor tasks, .envrc, .bashrc: each refused, each
# reported, nothing of it on the host.
test_control_files_refused_and_reported() {
	mk_repo || return
	echo '# the user' >.bashrc
	cordon_run --workspace-mode direct --rw "$WS" --env HOME="$WS" "${GITENV[@]}" -- /bin/sh -c '
		echo "echo owned" >.git/hooks/pre-commit && echo hook-written
		git config core.hooksPath /tmp && echo hookspath-set
		git config core.fsmonitor "touch /tmp/owned" && echo fsmonitor-set
		mkdir -p .vscode && echo "{}" >.vscode/tasks.json && echo tasks-written
		echo "touch /tmp/owned" >.envrc && echo envrc-written
		echo "touch /tmp/owned" >>.bashrc && echo bashrc-appended
		true'
	expect_eq "$OUT" "" "every write failed: $OUT"
	# A home (issue 27 item 3): all of .git is protected, its lock file too.
	denied "$WS/.git/hooks/pre-commit" "$WS/.git/config.lock" "$WS/.vscode" "$WS/.envrc" "$WS/.bashrc"
	expect_eq "$(field .verdicts.containment)" violations "containment"
	expect_eq "$(cat .git/config .git/hooks/* 2>/dev/null | sha256sum)" "$sha_before" "git config and hooks unchanged"
	expect_eq "$(cat .bashrc)" "# the user" ".bashrc unchanged"
	[ ! -e .vscode ] && [ ! -e .envrc ] || fail "created on the host: $(ls -A)"
	hgit config core.fsmonitor >/dev/null && fail "fsmonitor set on the host"
	t_assert
}

# Around the names: rename the directory away and make a new one, rename
# over, unlink, write through a link, create through a link, move a
# prepared directory into place. Refused (EBUSY, EROFS or EACCES), reported.
test_rename_unlink_and_links_refused() {
	mk_repo || return
	cordon_run --workspace-mode direct "${GITENV[@]}" -- /bin/sh -c '
		mv .git .git-old && mkdir -p .git && echo "[core] fsmonitor = x" >.git/config && echo renamed-away
		rm -f .git/config; [ -e .git/config ] || echo unlinked
		echo "[core]" >new; mv new .git/config && echo renamed-over
		ln -s .git/config lnk; echo "[core] fsmonitor = x" >>lnk && echo written-through-link
		ln -s .envrc l2; echo "touch /tmp/owned" >l2 && echo created-through-link
		ln -s . x; mkdir x/.vscode && echo via-dir-link
		mkdir -p prep/hooks; echo x >prep/hooks/pre-push; mv prep .claude && echo moved-into-place
		echo x >/proc/self/cwd/.npmrc && echo via-proc-cwd
		exec 3<.; echo x >/proc/self/fd/3/.pypirc && echo via-proc-fd
		echo x >/proc/1/root$PWD/.mcp.json && echo via-proc-root
		chmod 0777 .git/hooks 2>/dev/null && echo chmod-hooks
		touch -d 2001-01-01 .git/config 2>/dev/null && echo utime-config
		true'
	expect_eq "$OUT" "" "every trick failed: $OUT"
	denied "$WS/.git" "$WS/.envrc" "$WS/.claude" "$WS/.vscode" "$WS/.npmrc" "$WS/.pypirc" "$WS/.mcp.json"
	# What the observer does not see (chmod, utimensat) meets the mounts:
	# the protected paths read-only, the directory above them a mount point
	# of its own (no rename: EBUSY, whatever the observer saw).
	cordon_run --workspace-mode direct -- /bin/sh -c 'awk '"'"'{print $5, $6}'"'"' /proc/self/mountinfo'
	expect_match "$OUT" "$WS/.git rw" "the pin of .git"
	expect_match "$OUT" "$WS/.git/config ro" ".git/config read-only"
	expect_match "$OUT" "$WS/.git/hooks ro" ".git/hooks read-only"
	expect_eq "$(stat -c %a .git/hooks)" 755 "hooks' mode"
	expect_eq "$(cat .git/config .git/hooks/* 2>/dev/null | sha256sum)" "$sha_before" "git config and hooks unchanged"
	[ ! -e .envrc ] && [ ! -e .claude ] && [ ! -e .git-old ] && [ ! -e .npmrc ] && [ ! -e .pypirc ] &&
		[ ! -e .mcp.json ] || fail "on the host: $(ls -A)"
	t_assert
}

# A file .git is git's pointer to the repository ("gitdir: DIR"): one the
# run writes where there is no repository, or rewrites where the workspace is
# a worktree, would point the host's next git status at a config of the
# run's choosing. Above a protected path only directories may be made.
test_gitfile_refused() {
	command -v git >/dev/null || { t_skip "git is not installed"; return; }
	cordon_run --workspace-mode direct -- /bin/sh -c '
		mkdir -p evil && printf "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch owned\n" >evil/config
		mkdir -p evil/objects evil/refs && echo "ref: refs/heads/m" >evil/HEAD
		echo "gitdir: evil" >.git && echo gitfile-written
		ln -s evil .git && echo gitlink-made
		true'
	expect_eq "$OUT" "" "no .git made: $OUT"
	[ ! -e .git ] && [ ! -L .git ] || fail ".git on the host"
	denied "$WS/.git"
	# A worktree's .git file stays as it is.
	echo "gitdir: /nonexistent" >.git
	cordon_run --workspace-mode direct -- /bin/sh -c 'echo "gitdir: evil" >.git && echo rewritten; rm -f .git && echo removed; true'
	expect_eq "$OUT" "" "the gitfile unchanged: $OUT"
	expect_eq "$(cat .git)" "gitdir: /nonexistent" "gitfile"
	t_assert
}

# The day-to-day git work writes objects, refs, the index and logs: it works.
test_git_workflow_works() {
	mk_repo || return
	cordon_run --workspace-mode direct "${GITENV[@]}" -- /bin/sh -c "$GIT_WORKFLOW"
	expect_eq "$(field .status) $RC" "ok 0" "status: $ERR"
	expect_eq "$OUT" 3 "commits seen in the run"
	expect_eq "$(hgit log --oneline --all | wc -l)" 3 "commits on the host"
	expect_eq "$(field '[.denials[]] | length')" 0 "no denial: $(field -c .denials)"
	expect_eq "$(cat .git/config .git/hooks/* 2>/dev/null | sha256sum)" "$sha_before" "git config and hooks unchanged"
	# git init where there is no repository yet would write a config and
	# hooks the host runs: refused like any other (unprotect .git to allow).
	mkdir sub && cd sub || return
	cordon_run --workspace-mode direct "${GITENV[@]}" -- /bin/sh -c 'git init -q . && echo initialised; true'
	expect_eq "$OUT" "" "git init refused"
	[ ! -e .git/config ] || fail "a .git/config on the host"
	cordon_run --workspace-mode direct "${GITENV[@]}" --unprotect .git -- /bin/sh -c 'git init -q . && echo initialised'
	expect_eq "$OUT" initialised "git init with .git unprotected: $ERR"
	t_assert
}

# --unprotect and filesystem.unprotect grant writes; --protect adds a name.
test_unprotect_and_protect() {
	mk_repo || return
	cat >"$T_TMP/p.json" <<J
{"filesystem": {"unprotect": [".envrc"], "protect": ["Makefile"]}}
J
	echo 'all:' >Makefile
	cordon_run --policy "$T_TMP/p.json" --unprotect .git/hooks/ -- /bin/sh -c '
		echo "use nix" >.envrc && echo envrc
		echo "exit 0" >.git/hooks/pre-commit && echo hook
		echo "x:" >>Makefile && echo makefile
		echo "[x]" >>.git/config && echo config
		true'
	expect_eq "$(echo $OUT)" "envrc hook" "granted writes only: $ERR"
	expect_eq "$(cat .envrc)" "use nix" ".envrc written"
	expect_eq "$(cat Makefile)" "all:" "Makefile protected"
	denied "$WS/Makefile" "$WS/.git/config"
	"$CORDON" explain --unprotect .envrc --protect Makefile >"$T_TMP/e" 2>&1
	expect_match "$(cat "$T_TMP/e")" "protected +$WS/Makefile \\(policy\\)" "explain lists the added name"
	expect_match "$(cat "$T_TMP/e")" "protected +$WS/.git/config \\(default\\)" "explain lists a default"
	expect_nomatch "$(cat "$T_TMP/e")" "\\.envrc" "explain: .envrc unprotected"
	"$CORDON" run --protect ../x -- true 2>"$T_TMP/e"
	expect_eq "$?" 125 "a bad name is refused as any bad flag"
	expect_match "$(cat "$T_TMP/e")" 'protected path "../x"' "named"
	t_assert
}

# A ceiling that does not list a name in filesystem.unprotect keeps it
# protected: the run is unauthorized, and explain says so with the same code.
test_ceiling_forbids_unprotect() {
	mk_repo || return
	cat >"$T_TMP/c.json" <<J
{"filesystem": {"read": ["$BUILD"], "write": ["$WS"], "unprotect": [".envrc"]}}
J
	cordon_run --ceiling "$T_TMP/c.json" --unprotect .git/hooks -- /bin/sh -c 'touch started'
	expect_eq "$(field .status) $RC" "unauthorized 123" "status: $ERR"
	expect_match "$ERR" "unprotect .git/hooks: not under any filesystem.unprotect of the ceiling \\(.envrc\\)" "reason"
	[ ! -e started ] || fail "started"
	"$CORDON" explain --ceiling "$T_TMP/c.json" --unprotect .git/hooks >"$T_TMP/e" 2>&1
	expect_eq "$?" 1 "explain's exit code (1: would not run, README)"
	expect_match "$(cat "$T_TMP/e")" "verdict: unauthorized: unprotect .git/hooks" "explain's verdict"
	cordon_run --ceiling "$T_TMP/c.json" --unprotect .envrc -- /bin/sh -c 'echo x >.envrc'
	expect_eq "$(field .status) $(cat .envrc)" "ok x" "a name the ceiling allows: $ERR"
	t_assert
}

# A protected path that is a symlink (planted by an earlier run): cordon
# binds nothing through it and touches nothing outside; the run is refused
# with the reason, before anything starts.
test_planted_symlink_refused() {
	mk_repo || return
	mkdir -p "$T_TMP/outside/.git"
	echo secret >"$T_TMP/outside/keep"
	ln -s "$T_TMP/outside" .vscode
	cordon_run -- /bin/sh -c 'touch started'
	expect_eq "$(field .status) $RC" "setup-error 125" "status"
	expect_match "$ERR" "protected path $WS/.vscode is a symbolic link" "named"
	[ ! -e started ] || fail "started"
	rm .vscode
	mv .git "$T_TMP/realgit" && ln -s "$T_TMP/realgit" .git
	cordon_run -- /bin/sh -c 'touch started'
	expect_eq "$(field .status)" setup-error "a link on the way"
	expect_match "$ERR" "protected path $WS/.git is a symbolic link" "named"
	expect_eq "$(echo $(ls -A "$T_TMP/outside")) $(cat "$T_TMP/outside/keep")" ".git keep secret" "outside untouched"
	expect_eq "$(awk -v p="$T_TMP" 'index($5, p) == 1' /proc/self/mountinfo)" "" "nothing mounted"
	# A second name for a protected file (a hard link an earlier run made
	# before it was protected) would let the run change it: refused too.
	rm .git && mv "$T_TMP/realgit" .git && ln .git/config cfg
	cordon_run -- /bin/sh -c 'touch started'
	expect_eq "$(field .status)" setup-error "a hard link"
	expect_match "$ERR" "protected path $WS/.git/config has another hard link" "named"
	t_assert
}

# report_file_denials: false does not switch the refusal off.
test_protect_without_file_reports() {
	mk_repo || return
	echo '{"report_file_denials": false}' >"$T_TMP/p.json"
	cordon_run --workspace-mode direct --policy "$T_TMP/p.json" -- /bin/sh -c 'echo x >.envrc && echo written; cat /etc/shadow >/dev/null 2>&1; true'
	expect_eq "$OUT" "" ".envrc refused"
	[ ! -e .envrc ] || fail ".envrc on the host"
	denied "$WS/.envrc"
	t_assert
}

# Overlay and review modes (README, "Workspace modes"): a protected path
# absent at the start may be made in the run's own view, and the apply holds
# it back: the report names it (changes.protected, containment
# "violations"), `cordon changes` shows it, `cordon apply --include-protected`
# applies it. Present ones stay read-only. Each test works in $WS/w: the
# change set goes next to it.

test_overlay_holds_protected_back() {
	command -v git >/dev/null || { t_skip "git is not installed"; return; }
	overlay_ws || return
	echo '# the user' >.bashrc
	cordon_run --workspace-mode overlay "${GITENV[@]}" -- /bin/sh -c '
		git init -q . && echo init
		echo "echo owned" >.git/hooks/pre-commit && echo hook
		git config core.hooksPath /tmp && git config core.fsmonitor "touch /tmp/owned" && echo config
		mkdir -p .vscode && echo "{}" >.vscode/tasks.json && echo tasks
		echo "touch /tmp/owned" >.envrc && echo envrc
		echo "touch /tmp/owned" >>.bashrc 2>/dev/null || echo bashrc-refused
		echo plain >plain'
	expect_eq "$(echo $OUT)" "init hook config tasks envrc bashrc-refused" "the run works in its own view: $ERR"
	expect_eq "$(field .status) $(field .changes.state)" "ok applied" "status"
	# A .git made where there was none is held back whole (a repository
	# git on the host would use, review F1c).
	expect_eq "$(protected_of)" ".envrc .git .vscode" "held back and reported"
	expect_eq "$(field .verdicts.containment)" violations "containment"
	denied "$WS/w/.bashrc"
	expect_eq "$(cat plain) $(cat .bashrc)" "plain # the user" "the rest applied, .bashrc unchanged"
	[ ! -e .git ] && [ ! -e .vscode ] && [ ! -e .envrc ] || fail "on the host: $(ls -A .)"
	local d
	d=$(changes_dir)
	expect_match "$("$CORDON" changes "$d")" "protected +$WS/w/\\.git \\(held back" "cordon changes shows them"
	expect_eq "$("$CORDON" changes --json "$d" | jq -r '.protected | length')" 3 "cordon changes --json"
	"$CORDON" apply "$d" 2>"$T_TMP/e" || fail "apply: $(cat "$T_TMP/e")"
	expect_match "$(cat "$T_TMP/e")" "not applied: $WS/w/.envrc: a protected path" "apply says what it holds back"
	[ ! -e .envrc ] && [ -d "$d" ] || fail "applied without --include-protected"
	"$CORDON" apply --include-protected "$d" || fail "apply --include-protected"
	expect_eq "$(cat .envrc .vscode/tasks.json .git/hooks/pre-commit)" "touch /tmp/owned
{}
echo owned" "applied on request"
	expect_eq "$(hgit config core.hooksPath)" /tmp "the config too"
	[ -e "$d" ] && fail "the change set is gone"
	expect_match "$("$CORDON" explain --workspace-mode review)" "protected \\(absent: held back from the apply\\) $WS/w:.* \\.npmrc" \
		"explain says what becomes of absent names"
	t_assert
}

# Above a protected path only a plain directory is applied: a file .git
# ("gitdir: evil"), a link, or .git deleted or replaced would take
# .git/config along. A whiteout planted in a kept change set is held back too.
test_overlay_holds_back_above_protected() {
	overlay_ws || return
	cordon_run --workspace-mode overlay -- /bin/sh -c 'echo "gitdir: evil" >.git; ln -s /elsewhere .config; mkdir -p .cargo && echo x >.cargo/ok'
	expect_eq "$RC $(protected_of)" "0 .config .git" "held back: $ERR"
	[ ! -e .git ] && [ ! -L .config ] && [ "$(cat .cargo/ok)" = x ] || fail "on the host: $(ls -A)"
	"$CORDON" discard "$(field -r .changes.dir)" || fail "discard"
	[ "$(id -u)" = 0 ] || { t_assert; return; }
	mkdir -p .git/hooks && echo '[core]' >.git/config
	cordon_run --workspace-mode review -- /bin/sh -c 'echo x >x'
	local d
	d=$(changes_dir)
	mknod "$d/0/upper/.git" c 0 0
	expect_match "$("$CORDON" changes "$d")" "protected +$WS/w/.git" "a planted whiteout of .git"
	"$CORDON" apply "$d" 2>/dev/null || fail "apply"
	expect_eq "$(cat .git/config) $(cat x)" "[core] x" ".git kept, the rest applied"
	t_assert
}

# The change set records the run's own list: a later `cordon apply` holds
# back what the run's apply would, not cordon's defaults.
test_review_apply_uses_the_runs_list() {
	overlay_ws || return
	cordon_run --workspace-mode review --unprotect .envrc --protect notes.txt -- /bin/sh -c 'echo e >.envrc; echo n >notes.txt'
	expect_eq "$RC $(protected_of)" "0 notes.txt" "the run's list: $ERR"
	"$CORDON" apply "$(field -r .changes.dir)" 2>/dev/null || fail "apply"
	expect_eq "$(cat .envrc)$([ -e notes.txt ] && echo notes)" e "unprotected applied, protected held back"
	t_assert
}

# The day-to-day git work in overlay mode: applied, nothing held back.
test_git_workflow_works_in_overlay() {
	overlay_ws || return
	mk_repo || return
	cordon_run --workspace-mode overlay "${GITENV[@]}" -- /bin/sh -c "$GIT_WORKFLOW"
	expect_eq "$(field .status) $RC $OUT" "ok 0 3" "status: $ERR"
	expect_eq "$(field .changes.state) $(field '.changes.protected | length')" "applied 0" "nothing held back"
	expect_eq "$(field '[.denials[]] | length') $(field .verdicts.containment)" "0 clean" "no denial: $(field -c .denials)"
	expect_eq "$(hgit log --oneline --all | wc -l)" 3 "commits on the host"
	expect_eq "$(hgit status --porcelain)" "" "a clean tree on the host"
	expect_eq "$(cat .git/config .git/hooks/* 2>/dev/null | sha256sum)" "$sha_before" "git config and hooks unchanged"
	t_assert
}

# git's redirections (review F1a): commondir names the directory whose
# config and hooks git uses, config.worktree is read as config, worktrees/*
# and modules/* are git directories of their own, alternates borrow objects.
# Each is refused; the host's git status and commit run nothing of the run's.
test_git_redirections_refused() {
	mk_repo || return
	cordon_run --workspace-mode direct "${GITENV[@]}" -- /bin/sh -c "$GIT_REDIRECTIONS
		true"
	expect_eq "$OUT" "" "every redirection refused: $OUT"
	denied "$WS/.git/commondir" "$WS/.git/config.worktree" "$WS/.git/worktrees" "$WS/.git/modules" \
		"$WS/.git/objects/info/alternates"
	no_git_redirection_on_host
	t_assert
}

# The .git names hold at any depth (review F1b, F1c): a nested repository's
# config and hooks (present or made by the run), a gitfile or a new .git
# directory anywhere (a repository git on the host would find and use, as
# a gitlink in the top index makes git status enter it), a second name for a
# nested config. Refused and reported; the host's git status runs nothing.
test_nested_git_refused() {
	mk_repo || return
	mk_nested_repo || return
	local before; before=$(cat vendor/lib/.git/config | sha256sum)
	cordon_run --workspace-mode direct "${GITENV[@]}" -- /bin/sh -c '
		mkdir -p vendor/lib/.git/refs/tmp || echo mkdir-p-failed
		git -C vendor/lib config core.fsmonitor "touch fsmon; false" && echo nested-config
		echo x >vendor/lib/.git/hooks/pre-commit && echo nested-hook
		ln vendor/lib/.git/config cfg && echo nested-hardlink
		mkdir -p sub && git -C sub init -q . && echo git-init
		mkdir -p src/.git && echo new-dotgit-dir
		mkdir -p g && echo "gitdir: ../c" >g/.git && echo gitfile
		mkdir -p d/e && ln -s ../../vendor/lib/.git/objects d/e/o && echo x >d/e/o/../config && echo via-dotdot
		true'
	expect_eq "$OUT" "" "every nested write refused: $OUT"
	denied "$WS/vendor/lib/.git/config" "$WS/vendor/lib/.git/hooks/pre-commit" "$WS/src/.git" "$WS/g/.git"
	expect_eq "$(field --arg p "$WS/vendor/lib/.git" '[.denials[] | select(.target==$p)] | length')" 0 "mkdir -p over a .git"
	expect_eq "$(cat vendor/lib/.git/config | sha256sum)" "$before" "the nested config unchanged"
	[ ! -e cfg ] && [ ! -e src/.git ] && [ ! -e g/.git ] && [ ! -e sub/.git ] || fail "on the host: $(find . -name .git)"
	hgit -C vendor/lib status >/dev/null 2>&1; hgit status >/dev/null 2>&1
	[ ! -e fsmon ] && [ ! -e vendor/lib/fsmon ] || fail "the host's git ran the run's fsmonitor"
	t_assert
}

# The same redirections in overlay mode: the run writes them in its own
# view; each is held back from the apply (changes.protected), the rest is
# applied, and the host's git runs nothing of the run's.
test_git_redirections_held_back_in_overlay() {
	overlay_ws || return
	mk_repo || return
	cordon_run --workspace-mode overlay "${GITENV[@]}" -- /bin/sh -c "$GIT_REDIRECTIONS
		echo x >.git/config 2>/dev/null || echo config-refused
		true"
	expect_eq "$(echo $OUT)" "commondir config.worktree worktrees modules alternates config-refused" \
		"absent names written in the run's view, the present config refused: $ERR"
	expect_eq "$(field .changes.state) $(protected_of)" \
		"applied .git/commondir .git/config.worktree .git/modules .git/objects/info/alternates .git/worktrees" \
		"each held back: $ERR"
	denied "$WS/w/.git/config"
	[ -d c/hooks ] || fail "the rest applied"
	no_git_redirection_on_host
	t_assert
}

# Nested repositories in overlay mode: the run changes a nested .git's
# config and hooks in its own view (only the top's names are read-only
# there); they, and a new .git directory or gitfile anywhere, are held back
# from the apply; the nested config stays the host's.
test_nested_git_held_back_in_overlay() {
	overlay_ws || return
	mk_repo || return
	mk_nested_repo || return
	local before; before=$(cat vendor/lib/.git/config | sha256sum)
	cordon_run --workspace-mode overlay "${GITENV[@]}" -- /bin/sh -c '
		git -C vendor/lib config core.fsmonitor "touch fsmon; false" 2>/dev/null && echo nested-config
		echo x >vendor/lib/.git/hooks/pre-commit && echo nested-hook
		mkdir -p sub && git -C sub init -q . && echo git-init
		mkdir -p src/.git && echo new-dotgit-dir
		mkdir -p g && echo "gitdir: ../c" >g/.git && echo gitfile
		echo plain >plain
		true'
	expect_eq "$(echo $OUT)" "nested-config nested-hook git-init new-dotgit-dir gitfile" \
		"the run works in its own view: $ERR"
	expect_eq "$(field .changes.state) $(protected_of)" \
		"applied g/.git src/.git sub/.git vendor/lib/.git/config vendor/lib/.git/hooks" "each held back: $ERR"
	expect_eq "$(cat vendor/lib/.git/config | sha256sum) $(cat plain)" "$before plain" \
		"the nested config unchanged, the rest applied"
	[ ! -e src/.git ] && [ ! -e g/.git ] && [ ! -e sub/.git ] && [ ! -e vendor/lib/.git/hooks/pre-commit ] ||
		fail "on the host: $(find . -name .git)"
	hgit -C vendor/lib status >/dev/null 2>&1; hgit status >/dev/null 2>&1
	[ ! -e fsmon ] && [ ! -e vendor/lib/fsmon ] || fail "the host's git ran the run's fsmonitor"
	t_assert
}

# A link whose target goes through /proc's magic links or /dev/fd (review
# F2a): the observer follows them as the kernel does for the caller
# (/proc/self, /proc/thread-self, /proc/N/root, /dev/fd/N), so creating an
# absent protected name through one is refused like any other.
# A cwd deeper than PATH_MAX cannot be named: a write that climbs out of it
# with ".." fails closed (review 2, F1: it reached .envrc and .git/commondir),
# while files made below it still work.
test_deep_cwd_cannot_reach_protected() {
	mk_repo || return
	cordon_run -- python3 -c '
import os
n = "0" * 200
for i in range(22):
    os.mkdir(n); os.chdir(n)
open("deep.txt", "w").write("ok")
print("deep-ok")
up = "../" * 22
for p in (".envrc", ".bashrc", ".git/commondir"):
    try:
        open(up + p, "w").write("x"); print("CREATED", p)
    except OSError as e:
        print("refused", e.errno)'
	expect_eq "$(echo $OUT)" "deep-ok refused 13 refused 13 refused 13" "climbing out refused: $ERR"
	[ ! -e .envrc ] && [ ! -e .bashrc ] && [ ! -e .git/commondir ] || fail "created on the host: $(ls -A . .git)"
	expect_eq "$(field '[.denials[] | select(.kind=="file")] | length')" 3 "each a file denial"
	t_assert
}

test_proc_symlink_creation_refused() {
	mk_repo || return
	rm -rf .git/hooks
	cordon_run --workspace-mode direct "${GITENV[@]}" -- /bin/sh -c '
		ln -s /proc/self/cwd/.envrc a; echo x >a && echo self-cwd
		ln -s /proc/thread-self/cwd/.npmrc b; echo x >b && echo thread-self-cwd
		exec 3<.; ln -s /dev/fd/3/.pypirc c; echo x >c && echo dev-fd
		ln -s /proc/1/root$PWD/.mcp.json d; echo x >d && echo pid-root
		ln -s /proc/self/root$PWD/.yarnrc e; echo x >e && echo self-root
		ln -s /proc/self/cwd/.git g; mkdir g/hooks && echo hooks-dir
		ln -s /proc/self/fd/3 v; mkdir v/.vscode && echo dir-through-fd
		true'
	expect_eq "$OUT" "" "every creation refused: $OUT"
	denied "$WS/.envrc" "$WS/.npmrc" "$WS/.pypirc" "$WS/.mcp.json" "$WS/.yarnrc" "$WS/.git/hooks" "$WS/.vscode"
	[ ! -e .envrc ] && [ ! -e .npmrc ] && [ ! -e .pypirc ] && [ ! -e .mcp.json ] && [ ! -e .yarnrc ] &&
		[ ! -e .git/hooks ] && [ ! -e .vscode ] || fail "on the host: $(ls -A . .git)"
	t_assert
}

# The names added after the review (F2c), a few of each kind: refused; and
# docs/protected-paths.md's table lists exactly the default names explain shows.
test_more_defaults() {
	mk_repo || return
	cordon_run --workspace-mode direct -- /bin/sh -c '
		mkdir -p .local/bin && echo x >.local/bin/git && echo local-bin
		mkdir -p .husky && echo x >.husky/pre-commit && echo husky
		echo "repos: []" >.pre-commit-config.yaml && echo pre-commit
		mkdir -p .devcontainer && echo "{}" >.devcontainer/devcontainer.json && echo devcontainer
		mkdir -p .aws && echo "[default]" >.aws/config && echo aws
		mkdir -p .config/environment.d && echo x >.config/environment.d/a.conf && echo environment.d
		true'
	expect_eq "$OUT" "" "every write refused: $OUT"
	denied "$WS/.local/bin" "$WS/.husky" "$WS/.pre-commit-config.yaml" "$WS/.devcontainer" "$WS/.aws/config" \
		"$WS/.config/environment.d"
	"$CORDON" explain --workspace-mode direct --rw "$T_TMP" 2>&1 | sed -n "s|^ *protected (absent: creation refused) $T_TMP: ||p" |
		tr ' ' '\n' | sort >"$T_TMP/shown"
	[ -s "$T_TMP/shown" ] || fail "explain lists no absent name"
	sed -n '/^# Protected paths/,/^`--protect NAME`/p' "$TOP/docs/protected-paths.md" | grep '^| [a-z]' | grep -v '^| what' |
		cut -d'|' -f3 | grep -o '`[^`]*`' | tr -d '`' | sed 's|/$||' | sort >"$T_TMP/readme"
	expect_eq "$(diff "$T_TMP/shown" "$T_TMP/readme")" "" "docs/protected-paths.md's table and the defaults"
	t_assert
}

# Outside review 11 F2: linkat(fd, "", ..., AT_EMPTY_PATH) links an open
# file without naming a path, which the observer had nothing to check of:
# a nested repository's .git/config, opened read-only, linked into the
# workspace and rewritten. The filter refuses that form of linkat.
test_link_of_an_open_file_refused() {
	mkdir -p sub/.git && printf '[core]\n' >sub/.git/config
	cordon_run --workspace-mode direct -- python3 -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("sub/.git/config", os.O_RDONLY)
r = libc.linkat(fd, b"", -100, b"x", 0x1000)
print(r, ctypes.get_errno() != 0, os.path.exists("x"))'
	expect_eq "$OUT" "-1 True False" "refused: $ERR"
	expect_eq "$(cat sub/.git/config)" "[core]" "untouched"
	expect_eq "$(field '[.denials[] | select(.kind=="syscall" and .target=="linkat") | .count] | add')" 1 "reported"
	t_assert
}

# Outside review 12: below a nested repository the observer guards names,
# not modes: a direct run's chmod 0777 of vendor/lib/.git/hooks and 0666 of
# its config reached the host (any local user could then put a hook or an
# fsmonitor command in). What the run changed there loses the write it
# gained, and said.
test_nested_git_modes_put_back() {
	mkdir -p vendor/lib/.git/hooks && printf '[core]\n' >vendor/lib/.git/config
	chmod 755 vendor/lib/.git vendor/lib/.git/hooks && chmod 644 vendor/lib/.git/config
	cordon_run --workspace-mode direct -- /bin/sh -c 'chmod 0777 vendor/lib/.git vendor/lib/.git/hooks; chmod 0666 vendor/lib/.git/config'
	expect_eq "$RC $(stat -c %a vendor/lib/.git vendor/lib/.git/hooks vendor/lib/.git/config | tr '\n' ' ')" "0 755 755 644 " \
		"put back: $ERR"
	expect_match "$(jq -c '.root_restored' "$R")" '"path":"vendor/lib/.git/hooks","what":"mode 0777 -> 0755"' "said"
	expect_eq "$(field .verdicts.containment 2>/dev/null || field .containment)" violations "not clean"
	expect_eq "$(jq -c '[.root_restored[] | select(.what | test("ACL"))] | length' "$R")" 0 "no ACL said removed that was not there"
	# Renamed into place (a new path to the snapshot): tightened all the
	# same (outside review 13).
	cordon_run --workspace-mode direct -- /bin/sh -c 'mv vendor/lib vendor/lib2; chmod 0777 vendor/lib2/.git/hooks; chmod 0666 vendor/lib2/.git/config'
	expect_eq "$RC $(stat -c %a vendor/lib2/.git/hooks vendor/lib2/.git/config | tr '\n' ' ')" "0 755 644 " "renamed: $ERR"
	t_assert
}

for t in test_git_redirections_held_back_in_overlay test_nested_git_held_back_in_overlay test_control_files_refused_and_reported test_rename_unlink_and_links_refused test_gitfile_refused test_git_workflow_works \
	test_unprotect_and_protect test_ceiling_forbids_unprotect test_planted_symlink_refused \
	test_protect_without_file_reports test_overlay_holds_protected_back test_overlay_holds_back_above_protected \
	test_review_apply_uses_the_runs_list test_git_workflow_works_in_overlay \
	test_git_redirections_refused test_nested_git_refused test_proc_symlink_creation_refused test_more_defaults \
	test_deep_cwd_cannot_reach_protected test_link_of_an_open_file_refused test_nested_git_modes_put_back; do
	t_run $t
done

# --- issue 28.2: an unnamed temporary file (O_TMPFILE) where protected names are

# The workspace is below /tmp (as the README's `ws=$(mktemp -d)` puts it)
# and holds a repository: O_TMPFILE in /tmp, in the workspace, in .git is
# allowed, never a denial (pytest's capture, tempfile.TemporaryFile); in a
# protected directory (a read-only mount) the kernel refuses it, not a
# denial either. Giving such a file a protected name stays refused and
# reported: linkat AT_EMPTY_PATH, and linkat of /proc/self/fd/N.
test_tmpfile_where_names_are_protected() {
	git init -q . || { t_skip "git is not installed"; return; }
	case $WS in /tmp/*) ;; *) t_skip "the workspace is not below /tmp (here overlay_workspaces chose $T_WS_BASE: /tmp has no idmapped mounts)"; return ;; esac
	local m
	for m in direct overlay; do
		cordon_run --workspace-mode $m -- python3 -c 'import os, tempfile
for d in ["/tmp", ".", ".git", ".git/hooks"]:
    try:
        fd = os.open(d, os.O_TMPFILE | os.O_RDWR, 0o600); os.write(fd, b"x"); os.close(fd); print(d, "ok")
    except OSError as e: print(d, e.errno)
f = tempfile.TemporaryFile(); f.write(b"captured"); f.seek(0); print(f.read().decode())'
		expect_eq "$OUT" "$(printf '/tmp ok\n. ok\n.git ok\n.git/hooks 30\ncaptured')" "$m: O_TMPFILE ($ERR)"
		expect_eq "$(field .verdicts.containment)" clean "$m: containment ($(field -c .denials))"
		cordon_run --workspace-mode $m -- python3 -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(".", os.O_TMPFILE | os.O_RDWR, 0o600)
os.write(fd, b"#!/bin/sh\n")
r1 = libc.linkat(fd, b"", -100, b".git/hooks/pre-commit", 0x1000)
r2 = libc.linkat(-100, ("/proc/self/fd/%d" % fd).encode(), -100, b".git/hooks/pre-commit", 0x400)
print(r1, r2, os.path.exists(".git/hooks/pre-commit"))'
		expect_eq "$OUT" "-1 -1 False" "$m: linked to a protected name ($ERR)"
		expect_eq "$(field .verdicts.containment)" violations "$m: reported"
		expect_eq "$(field '[.denials[] | select(.kind=="syscall" and .target=="linkat") | .count] | add')" 1 \
			"$m: linkat AT_EMPTY_PATH reported"
		expect_match "$(field -c '[.denials[] | select(.kind=="file") | .target]')" "\\.git/hooks/pre-commit" \
			"$m: linkat of /proc/self/fd/N reported"
		[ -e .git/hooks/pre-commit ] && fail "$m: a hook was made"
	done
	t_assert
}

for t in test_tmpfile_where_names_are_protected; do
	t_run $t
done

# --- issue 27 item 3: other tools' control files; a home's dot-entries -------

# What the run plants for gdb, vim, hg (at the top and deeper), direnv,
# lefthook and IPython, in a workspace that looks like a home (.profile).
plant_tools='
	printf "[hooks]\nupdate = touch /tmp/cordon-hg-owned\n" >.hg/hgrc
	printf "[hooks]\nupdate = touch /tmp/cordon-hg-owned\n" >sub/.hg/hgrc
	mkdir -p .vim/plugin && printf "call writefile([\"ran\"], \"%s/vim-ran\")\n" "$MARK" >.vim/plugin/x.vim
	printf "shell touch %s/gdb-ran\n" "$MARK" >.gdbinit
	mkdir -p .config/direnv && echo "touch /tmp/cordon-direnv-owned" >.config/direnv/direnvrc
	echo "pre-commit: {commands: {x: {run: touch /tmp/cordon-lefthook-owned}}}" >lefthook.yml
	mkdir -p .ipython/profile_default/startup && echo "pass" >.ipython/profile_default/startup/x.py
	echo x >.newdot
	echo ok >notes.txt'

# gdb and vim on the host with HOME at the workspace: did they run what the
# run planted? (Markers in $T_TMP, from outside the workspace.)
host_tools_ran() {
	rm -f "$T_TMP/gdb-ran" "$T_TMP/vim-ran"
	(cd "$T_TMP" && HOME="$WS" timeout 60 gdb -batch -ex quit </dev/null >/dev/null 2>&1)
	(cd "$T_TMP" && HOME="$WS" timeout 60 vim -es -N -i NONE -c 'qa!' </dev/null >/dev/null 2>&1)
	echo "gdb:$([ -e "$T_TMP/gdb-ran" ] && echo ran || echo no) vim:$([ -e "$T_TMP/vim-ran" ] && echo ran || echo no)"
}

test_other_tools_control_files_held_back() {
	command -v gdb >/dev/null && command -v vim >/dev/null || { t_skip "gdb or vim is not installed"; return; }
	mk_repo || return
	mkdir -p .hg sub/.hg
	echo '# the user' >.profile
	cordon_run --workspace-mode overlay --env HOME="$WS" --env MARK="$T_TMP" -- /bin/sh -c "$plant_tools"
	expect_eq "$(field .verdicts.containment)" violations "containment"
	# .hg, present at the top of a home, is read-only: refused in the run.
	denied "$WS/.hg/hgrc"
	[ -e .hg/hgrc ] && fail ".hg/hgrc reached the host"
	local p
	for p in sub/.hg/hgrc .vim .gdbinit .config .ipython lefthook.yml .newdot; do
		expect_eq "$(field --arg p "$WS/$p" '[.changes.protected[] | select(. == $p)] | length')" 1 "changes.protected has $p ($(field -c .changes.protected))"
		[ -e "$p" ] && fail "$p reached the host"
	done
	expect_eq "$(cat notes.txt 2>/dev/null)" ok "the rest was applied"
	expect_eq "$(host_tools_ran)" "gdb:no vim:no" "nothing planted runs on the host"
	# The control: the same run with .gdbinit and .vim unprotected by name
	# (README, "Protected paths"): they reach the host, and gdb and vim run
	# them there.
	cordon_run --workspace-mode overlay --unprotect .gdbinit --unprotect .vim --env HOME="$WS" --env MARK="$T_TMP" \
		-- /bin/sh -c "$plant_tools"
	[ -e .gdbinit ] && [ -e .vim/plugin/x.vim ] || fail "unprotected: not applied ($(field -c .changes.protected))"
	[ -e .hg/hgrc ] && fail ".hg/hgrc applied with other names unprotected"
	expect_eq "$(host_tools_ran)" "gdb:ran vim:ran" "planted files, once applied, run on the host"
	t_assert
}

# Direct mode in a home: a new dot-entry is refused by the observer (and
# reported), one unprotected by name is written; present ones are
# read-only. An ordinary workspace keeps its .gitignore and .github/
# writable.
test_home_dot_entries_allow_list() {
	echo '# the user' >.bashrc
	mkdir -p .cache .local/share
	cordon_run --workspace-mode direct --unprotect .cache -- /bin/sh -c '
		echo x >.newdot 2>/dev/null && echo newdot
		echo x >.cache/x && echo cache
		echo x >.local/share/x 2>/dev/null && echo local-share
		mkdir .ipython 2>/dev/null && echo ipython
		echo x >.gitignore 2>/dev/null && echo gitignore
		echo x >plain && echo plain'
	expect_eq "$OUT" "$(printf 'cache\nplain')" "only the unprotected and the plain written ($ERR)"
	denied "$WS/.newdot" "$WS/.ipython" "$WS/.gitignore"
	[ -e .newdot ] || [ -e .ipython ] || [ -e .local/share/x ] && fail "reached the host: $(ls -A)"
	mkdir -p "$T_TMP/plain" && cd "$T_TMP/plain"
	cordon_run --workspace-mode direct -- /bin/sh -c 'echo x >.gitignore && mkdir -p .github/workflows && echo ok'
	expect_eq "$OUT" ok "an ordinary workspace: .gitignore, .github writable ($ERR)"
	t_assert
}

t_run test_other_tools_control_files_held_back
t_run test_home_dot_entries_allow_list

# --- outside review F6 (issue 27.3): control files read from the current
# directory; Jujutsu's config ----------------------------------------------

# What the run plants for pdb, irb, pry, nvim, Emacs and jj in a repository;
# .jj and sub/.jj/repo exist on the host (a jj repository), so the names
# below them are held back one by one.
plant_cwd_rc='
	printf "!import os; os.system(\"touch %s/pdb-ran\")\n" "$MARK" >.pdbrc
	for f in .irbrc .pryrc .nvim.lua .nvimrc .dir-locals.el; do echo x >$f; done
	printf "[ui]\npager = \"touch /tmp/cordon-jj-owned\"\n" >.jj/repo/config.toml
	printf "[ui]\npager = \"touch /tmp/cordon-jj-owned\"\n" >sub/.jj/repo/config.toml
	echo store >.jj/repo/store.txt
	mkdir -p new && mkdir new/.jj && echo x >new/.jj/x
	echo ok >notes.txt'

# pdb on the host, in the workspace: did it run the planted .pdbrc?
host_pdb_ran() {
	rm -f "$T_TMP/pdb-ran"
	HOME=/nonexistent timeout 60 python3 -m pdb t.py </dev/null >/dev/null 2>&1
	[ -e "$T_TMP/pdb-ran" ] && echo ran || echo no
}

test_cwd_control_files_held_back() {
	command -v python3 >/dev/null || { t_skip "python3 is not installed"; return; }
	mk_repo || return
	mkdir -p .jj/repo sub/.jj/repo && echo 'print(1)' >t.py
	cordon_run --env MARK="$T_TMP" -- /bin/sh -c "$plant_cwd_rc"
	expect_eq "$(field .enforcement.workspace_mode)" overlay "mode"
	expect_eq "$(field .changes.state)" applied "state"
	local p
	for p in .pdbrc .irbrc .pryrc .nvim.lua .nvimrc .dir-locals.el .jj/repo/config.toml sub/.jj/repo/config.toml new/.jj; do
		expect_eq "$(field --arg p "$WS/$p" '[.changes.protected[] | select(. == $p)] | length')" 1 "changes.protected has $p ($(field -c .changes.protected))"
		[ -e "$p" ] && fail "$p reached the host"
	done
	expect_eq "$(cat notes.txt .jj/repo/store.txt 2>/dev/null)" "$(printf 'ok\nstore')" "the rest was applied"
	expect_eq "$(host_pdb_ran)" no "pdb on the host did not run a planted .pdbrc"
	# Direct mode: refused at the call, reported.
	cordon_run --workspace-mode direct -- /bin/sh -c '
		echo x >.pdbrc 2>/dev/null && echo pdbrc
		echo x >.jj/repo/config.toml 2>/dev/null && echo jj
		echo x >.dir-locals.el 2>/dev/null && echo dir-locals
		true'
	expect_eq "$OUT" "" "every write refused ($ERR)"
	denied "$WS/.pdbrc" "$WS/.jj/repo/config.toml" "$WS/.dir-locals.el"
	# The control: .pdbrc unprotected by name reaches the host, and pdb
	# runs it there.
	cordon_run --unprotect .pdbrc --env MARK="$T_TMP" -- /bin/sh -c "$plant_cwd_rc"
	[ -e .pdbrc ] || fail "unprotected: not applied ($(field -c .changes.protected))"
	[ -e .irbrc ] && fail ".irbrc applied with .pdbrc unprotected"
	expect_eq "$(host_pdb_ran)" ran "a planted .pdbrc, once applied, runs in pdb on the host"
	t_assert
}

t_run test_cwd_control_files_held_back

# --- outside review F5 (issue 27.3): a home's bin ---------------------------

# A home's bin: Debian's /etc/skel/.profile puts $HOME/bin first on PATH
# when it exists, so a bin/ls planted there ran at the next login shell.
# In a home it is protected as the dot-entries are: held back (overlay),
# refused (direct), read-only when present; --unprotect bin lifts it. In an
# ordinary workspace bin stays writable.
SKEL_PROFILE='if [ -d "$HOME/bin" ] ; then PATH="$HOME/bin:$PATH"; fi'
login_ls_ran() {
	rm -f "$T_TMP/ls-ran"
	(cd "$T_TMP" && HOME="$WS" timeout 60 sh -lc ls </dev/null >/dev/null 2>&1)
	[ -e "$T_TMP/ls-ran" ] && echo ran || echo no
}
plant_bin='mkdir -p bin && printf "#!/bin/sh\ntouch %s/ls-ran\n" "$MARK" >bin/ls && chmod +x bin/ls && echo ok >notes.txt'

test_home_bin_protected() {
	echo "$SKEL_PROFILE" >.profile
	cordon_run --env MARK="$T_TMP" -- /bin/sh -c "$plant_bin"
	expect_eq "$(field .enforcement.workspace_mode)" overlay "mode"
	expect_eq "$(field --arg p "$WS/bin" '[.changes.protected[] | select(. == $p)] | length')" 1 "changes.protected has bin ($(field -c .changes.protected))"
	[ -e bin ] && fail "bin reached the host"
	expect_eq "$(cat notes.txt 2>/dev/null)" ok "the rest was applied"
	expect_eq "$(login_ls_ran)" no "the login shell ran no planted ls"
	# Direct mode: a new bin refused; a present one read-only.
	cordon_run --workspace-mode direct -- /bin/sh -c 'mkdir bin 2>/dev/null && echo made; true'
	expect_eq "$OUT" "" "mkdir bin refused ($ERR)"
	denied "$WS/bin"
	mkdir bin
	cordon_run --workspace-mode direct -- /bin/sh -c 'echo x >bin/ls 2>/dev/null && echo written; true'
	expect_eq "$OUT" "" "a present bin is read-only ($ERR)"
	denied "$WS/bin/ls"
	rmdir bin
	# The control: --unprotect bin, applied, and the login shell runs it.
	cordon_run --unprotect bin --env MARK="$T_TMP" -- /bin/sh -c "$plant_bin"
	[ -x bin/ls ] || fail "unprotected: not applied ($(field -c .changes.protected))"
	expect_eq "$(login_ls_ran)" ran "a planted bin/ls, once applied, runs at login"
	# An ordinary workspace: bin is the run's.
	mkdir -p "$T_TMP/plain" && cd "$T_TMP/plain"
	cordon_run -- /bin/sh -c 'mkdir bin && echo x >bin/tool'
	expect_eq "$(cat bin/tool 2>/dev/null)" x "an ordinary workspace's bin is applied ($(field -c .changes.protected))"
	t_assert
}

t_run test_home_bin_protected

# --rw HOST:PATH: a repository below HOST is protected where the run sees
# it (below PATH), as it is at its own path (the observer's names are
# matched in the run's view: outside review, attack).
test_nested_repo_at_path_refused() {
	local up=$T_TMP/up
	mkdir -p "$up/proj/.git"
	printf '[core]\n' >"$up/proj/.git/config"
	cordon_run --workspace-mode direct --rw "$up:/srv/up" -- /bin/sh -c '
		echo "[core] fsmonitor = x" >>/srv/up/proj/.git/config 2>/dev/null && echo config-written || echo config-refused
		echo made >/srv/up/proj/f && echo other-written'
	expect_eq "$RC" 0 "exit (stderr: $ERR)"
	expect_match "$OUT" '^config-refused$' "a nested .git/config below --rw HOST:PATH"
	expect_match "$OUT" '^other-written$' "the rest of it is writable"
	expect_eq "$(cat "$up/proj/.git/config")" "[core]" "the host's .git/config unchanged"
	denied /srv/up/proj/.git/config
	t_assert
}

t_run test_nested_repo_at_path_refused
