# Issue 32 item 4 and 5: cordon serve as a cluster service. The harness
# example (examples/harness) against two local servers, one on a Unix
# socket and one on loopback TCP with TLS; the serve image
# (scripts/serve-image.sh) answering /v1/health in a podman container.
. "$(dirname "$0")/../lib.sh"
# The harness's tasks run for a TCP client too, in an overlay workspace: on a
# host whose /tmp has no idmapped mounts (Debian 12's tmpfs), on /var/tmp.
overlay_workspaces '^(test_harness_spreads_tasks_over_two_servers|test_tcp_client_check_is_the_clients)$' only

# started PID READY-COMMAND...: until READY-COMMAND succeeds (a hang guard
# of 20 s, not a measurement).
started() {
	local pid=$1 i
	shift
	T_SERVERS+=("$pid")
	trap stop_servers EXIT
	for i in $(seq 1 400); do
		"$@" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	fail "a server did not start: $(cat "$T_TMP"/serve-*.log)"
}
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# A certificate for 127.0.0.1 and its key: $T_TMP/tls.{crt,key}.
make_cert() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T_TMP/tls.key" \
		-out "$T_TMP/tls.crt" -days 2 -subj /CN=cordon-serve -addext subjectAltName=IP:127.0.0.1 \
		>/dev/null 2>&1 && chmod 600 "$T_TMP/tls.key"
}
static_busybox() {
	local b
	b=$(command -v busybox) && ldd "$b" 2>&1 | grep -q 'not a dynamic'
}

test_harness_spreads_tasks_over_two_servers() {
	command -v python3 >/dev/null || { t_skip "no python3"; return; }
	command -v openssl >/dev/null || { t_skip "no openssl to make a certificate"; return; }
	static_busybox || { t_skip "no static busybox for the tasks' image roots (busybox-static)"; return; }
	# The dataset below the workspace (755: a root's image root must be
	# searchable on the way, docs/images.md).
	"$TOP/examples/harness/make_dataset.sh" "$WS/ds" >"$T_TMP/ds.log" 2>&1 ||
		{ fail "make_dataset.sh: $(cat "$T_TMP/ds.log")"; t_assert; return; }
	make_cert || { fail "openssl req failed"; t_assert; return; }
	"$CORDON" serve --socket "$T_TMP/a.sock" --state-dir "$WS/sa" 2>"$T_TMP/serve-a.log" &
	started $! test -S "$T_TMP/a.sock" || { t_assert; return; }
	local port
	port=$(free_port)
	printf 'tok-0123456789abcdef-harness\n' >"$T_TMP/token"
	chmod 600 "$T_TMP/token"
	printf '{"limits": {"wall_time": "1h"}}\n' >"$T_TMP/ceiling.json"
	"$CORDON" serve --listen "127.0.0.1:$port" --token-file "$T_TMP/token" --ceiling "$T_TMP/ceiling.json" \
		--tls-cert "$T_TMP/tls.crt" --tls-key "$T_TMP/tls.key" --state-dir "$WS/sb" 2>"$T_TMP/serve-b.log" &
	started $! curl -sf --cacert "$T_TMP/tls.crt" "https://127.0.0.1:$port/v1/health" -o /dev/null ||
		{ t_assert; return; }
	local b="https://127.0.0.1:$port" out rc
	out=$(python3 "$TOP/examples/harness/harness.py" --dataset "$WS/ds" --server "$T_TMP/a.sock" --server "$b" \
		--token-file "$T_TMP/token" --ca "$T_TMP/tls.crt" --jobs 1 2>&1)
	rc=$?
	expect_eq "$rc" 0 "harness exit status ($out)"
	expect_match "$out" '^TASK +SERVER +BEFORE +AFTER +VERDICT' "the table's head"
	expect_eq "$(printf '%s\n' "$out" | grep -cE '^[a-z0-9-]+ +[^ ]+ +fail +pass +resolved$')" 4 "four tasks resolved ($out)"
	expect_match "$out" '^4 tasks: 4 resolved$' "the summary"
	expect_match "$out" "^tasks per server: $T_TMP/a.sock 2, $b 2\$" "the spread"
	# Both servers ran tasks (one at a time: the pool's servers in turn).
	expect_eq "$(printf '%s\n' "$out" | grep -cE "^[a-z0-9-]+ +$T_TMP/a.sock ")" 2 "two tasks on the socket server"
	expect_eq "$(printf '%s\n' "$out" | grep -cE "^[a-z0-9-]+ +$b ")" 2 "two tasks on the TLS server"
	# No patch: the same checks fail after as before.
	out=$(python3 "$TOP/examples/harness/harness.py" --dataset "$WS/ds" --server "$T_TMP/a.sock" --server "$b" \
		--token-file "$T_TMP/token" --ca "$T_TMP/tls.crt" --agent none -n 2 2>&1)
	expect_match "$out" '^2 tasks: 2 unresolved$' "without the fix ($out)"
	t_assert
}

# The serve image (scripts/serve-image.sh) in a podman container: its
# Debian root is the cached one (made once per recipe from apt's mirror:
# the suite never reaches a mirror on its own, CORDON_TEST_DEBIAN_BUILD=1
# builds it); podman on private storage, host network, a loopback port.
# runc where there is one: crun refuses a host with hybrid cgroups (v1
# controllers and v2 at /sys/fs/cgroup/unified), which runc takes.
PM_DIR=""
PM_RT=()
command -v runc >/dev/null && PM_RT=(--runtime "$(command -v runc)")
pm() {
	timeout -k 5 120 podman --root "$PM_DIR/root" --runroot "$PM_DIR/runroot" --tmpdir "$PM_DIR/tmp" \
		--storage-driver vfs --cgroup-manager cgroupfs --events-backend file "${PM_RT[@]}" "$@"
}
pm_cleanup() {
	[ -n "$PM_DIR" ] && [ -d "$PM_DIR" ] || return 0
	pm rm --all --force --time 0 >/dev/null 2>&1
	pm rmi --all --force >/dev/null 2>&1
	awk -v w="$PM_DIR/" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do umount -l "$m"; done
	rm -rf "$PM_DIR"
}
test_serve_image_answers_health_in_podman() {
	[ "$(id -u)" = 0 ] || { t_skip "not root (the image's root and podman need root)"; return; }
	command -v podman >/dev/null || { t_skip "no podman"; return; }
	command -v openssl >/dev/null && command -v curl >/dev/null || { t_skip "no openssl or curl"; return; }
	if ! "$TOP/scripts/serve-image.sh" --root --cached >/dev/null 2>&1; then
		command -v debootstrap >/dev/null || { t_skip "no debootstrap"; return; }
		[ "${CORDON_TEST_DEBIAN_BUILD:-0}" = 1 ] ||
			{ t_skip "no Debian root cached (scripts/serve-image.sh --root; CORDON_TEST_DEBIAN_BUILD=1 builds it from apt's mirror)"; return; }
		"$TOP/scripts/serve-image.sh" --root >/dev/null 2>"$T_TMP/root.err" ||
			{ t_skip "no Debian root: $(tail -n1 "$T_TMP/root.err")"; return; }
	fi
	PM_DIR=$(mktemp -d /tmp/cordon-serve-pm.XXXXXX)
	trap pm_cleanup EXIT
	local args="--root $PM_DIR/root --runroot $PM_DIR/runroot --tmpdir $PM_DIR/tmp --storage-driver vfs --cgroup-manager cgroupfs --events-backend file"
	PODMAN_ARGS=$args "$TOP/scripts/serve-image.sh" --build "$BUILD" --tag localhost/cordon-serve:test \
		>"$T_TMP/image.log" 2>&1 || { fail "serve-image.sh: $(tail -3 "$T_TMP/image.log")"; t_assert; return; }
	make_cert || { fail "openssl req failed"; t_assert; return; }
	local conf=$T_TMP/conf port
	mkdir -p "$conf"
	cp "$T_TMP/tls.crt" "$T_TMP/tls.key" "$conf/"
	printf 'tok-0123456789abcdef-image\n' >"$conf/token"
	printf '{"limits": {"wall_time": "1h"}}\n' >"$conf/ceiling.json"
	chmod 600 "$conf/token" "$conf/tls.key"
	port=$(free_port)
	# The image's default command serves TLS on 0.0.0.0:8080 from
	# /etc/cordon; here the same files, on a loopback port of the host's
	# network (nothing but loopback is used).
	# podman's default nofile and nproc exceed this kind of host's hard
	# limits (tests/oci/engines.sh): the caller's own.
	local lim=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)
	pm run -d --name cordon-serve-test --network host --pull never "${lim[@]}" \
		-v "$conf:/etc/cordon:ro" localhost/cordon-serve:test \
		--listen "127.0.0.1:$port" --token-file /etc/cordon/token --tls-cert /etc/cordon/tls.crt \
		--tls-key /etc/cordon/tls.key --ceiling /etc/cordon/ceiling.json --state-dir /srv/cordon \
		>"$T_TMP/run.log" 2>&1 || { fail "podman run: $(tail -3 "$T_TMP/run.log")"; t_assert; return; }
	local i out=""
	for i in $(seq 1 400); do # a hang guard, not a measurement
		out=$(curl -s --cacert "$T_TMP/tls.crt" "https://127.0.0.1:$port/v1/health") && break
		[ "$(pm inspect -f '{{.State.Running}}' cordon-serve-test 2>/dev/null)" = true ] || break
		sleep 0.05
	done
	expect_eq "$out" '{"status": "ready"}' "GET /v1/health in the container ($(pm logs cordon-serve-test 2>&1 | tail -3))"
	expect_match "$(pm logs cordon-serve-test 2>&1)" "listening on 127.0.0.1:$port \(TLS\)" "the server's own line"
	# The image's default command: TLS on 0.0.0.0:8080, nothing served in
	# clear (no certificate mounted: it does not start).
	out=$(pm run --rm --network none --pull never "${lim[@]}" localhost/cordon-serve:test 2>&1)
	expect_match "$out" 'tls-cert /etc/cordon/tls/tls.crt' "the default command wants TLS"
	pm rm --force --time 0 cordon-serve-test >/dev/null 2>&1
	t_assert
}

# The task check of a TCP client's run is the client's, as the run is
# (docs/api.md "Clients and the host"): its user namespace maps to the
# client's uid (--tcp-uid, 65534), never to the server's root, and it may
# write beside what the run left (its scratch layer).
test_tcp_client_check_is_the_clients() {
	[ "$(id -u)" = 0 ] || { t_skip "needs a root server"; return; }
	local port
	port=$(free_port)
	printf 'tok-0123456789abcdef-check\n' >"$T_TMP/token"
	chmod 600 "$T_TMP/token"
	printf '{"limits": {"wall_time": "1h"}}\n' >"$T_TMP/ceiling.json"
	"$CORDON" serve --listen "127.0.0.1:$port" --token-file "$T_TMP/token" --ceiling "$T_TMP/ceiling.json" \
		--state-dir "$WS/sc" 2>"$T_TMP/serve-c.log" &
	started $! curl -sf "http://127.0.0.1:$port/v1/health" -o /dev/null || { t_assert; return; }
	local check='[ "$(awk "{print \$2}" /proc/self/uid_map)" = 65534 ] && echo x >three.txt && [ "$(cat one.txt three.txt)" = "one
x" ]'
	jq -n --arg c "$check" '{policy: {check: $c}, argv: ["/bin/sh", "-c", "echo one >one.txt"]}' >"$T_TMP/req.json"
	curl -s -H "Authorization: Bearer $(cat "$T_TMP/token")" -X POST "http://127.0.0.1:$port/v1/runs" \
		--data-binary @"$T_TMP/req.json" >"$T_TMP/run.json"
	R="$T_TMP/run.json"
	expect_eq "$(field '.status + " " + .verdicts.task + " " + .check.workspace')" "ok pass scratch" \
		"the check as the client, writing beside the run's file: $(head -c 600 "$R")"
	t_assert
}

t_run test_tcp_client_check_is_the_clients
t_run test_harness_spreads_tasks_over_two_servers
t_run test_serve_image_answers_health_in_podman
