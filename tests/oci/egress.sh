# cordon-oci: egress per the annotation run.cordon.policy (docs/oci.md,
# "Egress"): the container in a network namespace of its own, cordon's
# proxy on 127.0.0.1:3128 there, the proxy's variables in its env, every
# refusal in the report. Servers on the host's 127.0.0.1 only
# (tests/netserver.py).
#   BUILD=$PWD/build bash tests/oci/egress.sh
. "$(dirname "$0")/../lib.sh"
OCI="$BUILD/cordon-oci"

# bundle DIR [ARGS...]: a busybox rootfs and a config.json with its own pid,
# mount, ipc and uts namespaces (no network namespace: the policy's gets
# one), /proc and a /dev tmpfs.
bundle() {
	local dir=$1
	shift
	mkdir -p "$dir/rootfs/bin" "$dir/rootfs/proc" "$dir/rootfs/dev" "$dir/rootfs/tmp"
	cp "$BUSYBOX" "$dir/rootfs/bin/busybox"
	for a in sh echo cat wget env grep; do ln -sf busybox "$dir/rootfs/bin/$a"; done
	chown -R 0:0 "$dir/rootfs"
	local args
	args=$(jq -cn '$ARGS.positional' --args -- "$@")
	jq -n --argjson args "$args" '{
	  ociVersion: "1.0.2",
	  root: {path: "rootfs", readonly: false},
	  hostname: "oci-egress",
	  process: {args: $args, cwd: "/", env: ["PATH=/bin"], user: {uid: 0, gid: 0}},
	  mounts: [{destination: "/proc", type: "proc", source: "proc"},
	           {destination: "/dev", type: "tmpfs", source: "tmpfs", options: ["nosuid", "mode=755"]}],
	  linux: {namespaces: [{type: "pid"}, {type: "mount"}, {type: "ipc"}, {type: "uts"}]}
	}' >"$dir/config.json"
}

# with_policy DIR JSON: the annotation run.cordon.policy
with_policy() {
	jq --arg p "$2" '.annotations["run.cordon.policy"] = $p' "$1/config.json" >"$1/c" && mv "$1/c" "$1/config.json"
}

setup_oci() {
	[ -x "$OCI" ] || { t_skip "no cordon-oci at $OCI"; return; }
	BUSYBOX=$(command -v busybox 2>/dev/null || true)
	[ -n "$BUSYBOX" ] && ! ldd "$BUSYBOX" >/dev/null 2>&1 ||
		{ t_skip "no static busybox (apt-get install busybox-static)"; return; }
	[ -e /proc/self/ns/user ] || { t_skip "no user namespaces"; return; }
	ROOT=$T_TMP/root
	B=$WS/b
	ID=t-$$-$RANDOM
}

oci() {
	OUT=$("$OCI" --root "$ROOT" "$@" 2>"$T_TMP/err")
	RC=$?
	ERR=$(cat "$T_TMP/err")
}

wait_for() { # FILE: up to 30 s (a loaded 2-core machine)
	local _
	for _ in $(seq 600); do [ -e "$1" ] && return 0; sleep 0.05; done
	return 1
}

# The allowed host is reached through the proxy (the process's HTTP_PROXY);
# a host the policy does not allow gets the proxy's 403 and is in the
# report's denials; the host's loopback is not reachable around the proxy
# (the config had no network namespace: the policy gave it one).
test_egress_allowed_and_refused() {
	setup_oci || return
	mkdir -p "$WS/www"
	echo hello-from-host >"$WS/www/hello"
	serve http "$WS/www"
	local port=$PORT srv=$SRV
	serve http "$WS/www"
	local other=$PORT srv2=$SRV
	bundle "$B" sh -c "wget -q -O - http://127.0.0.1:$port/hello || echo allowed-failed
		wget -q -O - http://127.0.0.1:$other/hello 2>&1 || echo refused
		wget -q -Y off -O - http://127.0.0.1:$port/hello 2>/dev/null || echo no-direct-way
		echo \$http_proxy"
	with_policy "$B" "{\"network\": {\"allow\": [\"127.0.0.1:$port\"]}}"
	"$OCI" --root "$ROOT" run --bundle "$B" "$ID" </dev/null >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?" 0 "run: $(cat "$T_TMP/err")"
	stop "$srv" "$srv2"
	local out
	out=$(cat "$T_TMP/out")
	expect_eq "$(head -1 <<<"$out")" hello-from-host "the allowed host, through the proxy"
	expect_match "$out" '403' "the refused host: the proxy's 403"
	expect_match "$out" $'\nrefused\n' "the refused fetch failed"
	expect_match "$out" $'\nno-direct-way\n' "no way around the proxy"
	expect_eq "$(tail -1 <<<"$out")" http://127.0.0.1:3128 "the process's http_proxy"
	local rep=$ROOT/reports/$ID.json
	wait_for "$rep" || fail "no report at $rep"
	expect_eq "$(jq -c '[.denials[] | select(.kind == "network") | .target]' "$rep")" "[\"127.0.0.1:$other\"]" \
		"the report's network denials"
	expect_eq "$(jq -r '[.network.proxy, .network.denied, (.network.endpoints[] | .target)] | join(" ")' "$rep")" \
		"127.0.0.1:3128 1 127.0.0.1:$port" "the report's network section"
	t_assert
}

# The config's own proxy variables win; those it does not set are added.
test_egress_config_env_wins() {
	setup_oci || return
	bundle "$B" sh -c 'echo "$HTTP_PROXY $https_proxy"'
	with_policy "$B" '{"network": {"allow": ["127.0.0.1:9"]}}'
	jq '.process.env += ["HTTP_PROXY=http://mine:1"]' "$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	"$OCI" --root "$ROOT" run --bundle "$B" "$ID" </dev/null >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?:$(cat "$T_TMP/out")" "0:http://mine:1 http://127.0.0.1:3128" "run: $(cat "$T_TMP/err")"
	t_assert
}

# A bad annotation refuses create with one line naming it (LINE:COL where
# the text is at fault), and leaves no state behind; so does a config that
# joins a network namespace by path (the proxy must be the only way out).
test_egress_bad_policy_refused() {
	setup_oci || return
	bundle "$B" sh -c true
	cp "$B/config.json" "$B/good.json"
	with_policy "$B" '{"network": {"allow": ["127.0.0.1:80",]}}'
	oci create --bundle "$B" "$ID"
	expect_eq "$RC" 1 "a malformed policy"
	expect_match "$ERR" '^cordon-oci: create: annotation run.cordon.policy:1:[0-9]+: ' "names the annotation and position"
	expect_eq "$(wc -l <<<"$ERR")" 1 "one line"
	[ ! -e "$ROOT/$ID" ] || fail "a refused create left $ROOT/$ID"
	cp "$B/good.json" "$B/config.json"
	with_policy "$B" '{"network": {"allow": ["127.0.0.1:80"]},
	  "filesystem": {"write": ["/tmp"]}}'
	oci create --bundle "$B" "$ID"
	expect_match "$RC:$ERR" '^1:cordon-oci: create: annotation run.cordon.policy:2:4: "filesystem" does not apply in OCI mode' \
		"a section OCI mode does not apply"
	cp "$B/good.json" "$B/config.json"
	with_policy "$B" '{"network": {"allow": ["no port here"]}}'
	oci create --bundle "$B" "$ID"
	expect_match "$RC:$ERR" '^1:cordon-oci: create: annotation run.cordon.policy:1:[0-9]+: ' "a bad host, from cordon's parser"
	cp "$B/good.json" "$B/config.json"
	with_policy "$B" '{"network": {"allow": ["127.0.0.1:80"]}}'
	jq '.linux.namespaces += [{type: "network", path: "/proc/self/ns/net"}]' "$B/config.json" >"$B/c" &&
		mv "$B/c" "$B/config.json"
	oci create --bundle "$B" "$ID"
	expect_match "$RC:$ERR" '^1:cordon-oci: create: annotation run.cordon.policy: .*joins /proc/self/ns/net' \
		"a network namespace joined by path"
	[ ! -e "$ROOT/$ID" ] || fail "a refused create left $ROOT/$ID"
	t_assert
}

# cordon explain --bundle shows the egress policy (hosts, rules, the
# variables added, the network namespace it gets), in text and JSON; a bad
# annotation is create's refusal.
test_egress_explain() {
	setup_oci || return
	bundle "$B" true
	with_policy "$B" '{"network": {"allow": ["127.0.0.1:8080",
	  {"host": "127.0.0.2:80", "methods": ["GET"], "paths": ["/pub/**"]}]}}'
	OUT=$("$CORDON" explain --bundle "$B" 2>"$T_TMP/err")
	expect_eq "$?" 0 "explain --bundle: $(cat "$T_TMP/err")"
	expect_match "$OUT" '^verdict: would run' "the verdict"
	expect_match "$OUT" 'network new' "the network namespace the policy gives it"
	expect_match "$OUT" "^egress: through cordon's proxy at 127.0.0.1:3128" "the proxy"
	expect_match "$OUT" 'allow +127.0.0.1:8080$' "an allowed host"
	expect_match "$OUT" 'allow +127.0.0.2:80 methods GET paths /pub/\*\* .*plain HTTP' "a rule"
	expect_match "$OUT" 'env +HTTP_PROXY HTTPS_PROXY http_proxy https_proxy ALL_PROXY all_proxy$' "the variables"
	OUT=$("$CORDON" explain --bundle "$B" --json 2>"$T_TMP/err")
	expect_eq "$(jq -r '[.egress.proxy, (.egress.allow | map(.host) | join(",")), .namespaces.network] | join(" ")' <<<"$OUT")" \
		"127.0.0.1:3128 127.0.0.1:8080,127.0.0.2:80 new" "--json"
	printf '%s' "$OUT" >"$T_TMP/e.json"
	/usr/bin/python3 "$TOP/tests/validate.py" "$TOP/schemas/explain-bundle.schema.json" "$T_TMP/e.json" >"$T_TMP/v" ||
		fail "explain --bundle --json does not validate: $(cat "$T_TMP/v")"
	with_policy "$B" '{"network": 1}'
	OUT=$("$CORDON" explain --bundle "$B" 2>"$T_TMP/err")
	expect_eq "$?" 1 "a bad policy: create would refuse it"
	expect_match "$OUT" '^verdict: refused: annotation run.cordon.policy:1:[0-9]+: ' "the verdict says why"
	t_assert
}

for t in $(declare -F | awk '{print $3}' | grep '^test_'); do t_run "$t"; done
echo "$T_PASS passed, $T_FAIL failed, $T_SKIP skipped"
