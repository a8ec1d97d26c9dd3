# cordon-oci: egress per the annotation run.cordon.policy (docs/oci.md,
# "Egress"): the container in a network namespace of its own, cordon's
# proxy on 127.0.0.1:3128 there, the proxy's variables in its env, every
# refusal in the report. Servers on the host's 127.0.0.1 only
# (tests/netserver.py).
#   BUILD=$PWD/build bash tests/oci/egress.sh
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"

# bundle DIR [ARGS...]: a busybox rootfs and a config.json with its own pid,
# mount, ipc and uts namespaces (no network namespace: the policy's gets
# one), /proc and a /dev tmpfs.
bundle() { oci_bundle "$1" oci-egress "sh echo cat wget env grep" "" "" "${@:2}"; }

# with_policy DIR JSON: the annotation run.cordon.policy
with_policy() {
	jq --arg p "$2" '.annotations["run.cordon.policy"] = $p' "$1/config.json" >"$1/c" && mv "$1/c" "$1/config.json"
}

setup_oci() { oci_setup t; }

# The pod tests' fixture (docs/kubernetes.md): a network namespace of the
# test's as the pod's (POD_NS, lo up), its sandbox (POD_SID) holding the
# pod's egress, the containers of the pod, and the end of it all.
# pod_net: 1 where the tools or the namespace are missing (skipped or
# failed, said): `pod_net || return`.
pod_net() {
	command -v ip >/dev/null && command -v nsenter >/dev/null && command -v unshare >/dev/null ||
		{ t_skip "no ip, nsenter or unshare (iproute2, util-linux)"; return; }
	POD_NS=$WS/podnet POD_SID=sb-$$-$RANDOM
	touch "$POD_NS"
	unshare --net="$POD_NS" true || { fail "unshare --net=$POD_NS"; t_assert; return; }
	nsenter --net="$POD_NS" ip link set lo up
}
# pod_cri DIR ANN-JSON: the CRI annotations and the pod's network namespace by path
pod_cri() {
	jq --argjson a "$2" --arg ns "$POD_NS" \
		'.annotations += $a | .linux.namespaces += [{type: "network", path: $ns}]' "$1/config.json" >"$1/c" &&
		mv "$1/c" "$1/config.json"
}
# pod_sandbox POLICY [ANN-JSON]: the pod's sandbox (sleep 600, in $WS/sb)
# with run.cordon.policy POLICY and ANN, created and started
pod_sandbox() {
	oci_bundle "$WS/sb" oci-egress "sh sleep" "" "" sleep 600
	pod_cri "$WS/sb" "$(jq -cn --arg p "$1" --argjson x "${2:-"{}"}" \
		'{"io.kubernetes.cri-o.ContainerType": "sandbox", "run.cordon.policy": $p} + $x')"
	# (init has create's stdio: not a pipe the test waits on)
	"$OCI" --root "$ROOT" create --bundle "$WS/sb" "$POD_SID" >/dev/null 2>"$T_TMP/err" </dev/null
	expect_eq "$?" 0 "the sandbox's create: $(cat "$T_TMP/err")"
	oci start "$POD_SID"
	expect_eq "$RC" 0 "the sandbox's start: $ERR"
}
# pod_member ANN-JSON TOOLS ARGS...: a container of the pod ($ID in $B,
# busybox's TOOLS) running ARGS, with ANN, created and started
pod_member() {
	local ann=$1 tools=$2
	shift 2
	oci_bundle "$B" oci-egress "$tools" "" "" "$@"
	pod_cri "$B" "$(jq -cn --arg s "$POD_SID" --argjson x "$ann" \
		'{"io.kubernetes.cri-o.ContainerType": "container", "io.kubernetes.cri-o.SandboxID": $s} + $x')"
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" >/dev/null 2>"$T_TMP/err" </dev/null
	expect_eq "$?" 0 "a container of the pod: $(cat "$T_TMP/err")"
	oci start "$ID"
}
# pod_relay: the pid of the inbound relay listening on the pod's 8080 (ss)
pod_relay() {
	nsenter --net="$POD_NS" ss -Hltnp 'sport = :8080' | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2
}
# pod_end: the container and the sandbox killed, the sandbox's report
# waited for, both deleted
pod_end() {
	oci kill "$ID" KILL
	oci kill "$POD_SID" KILL
	wait_for "$ROOT/reports/$POD_SID.json"
	oci delete --force "$ID"
	oci delete --force "$POD_SID"
}
# pod_net_end: the namespace let go; no container left
pod_net_end() {
	umount "$POD_NS"
	expect_eq "$(ls -A "$ROOT" | grep -vx reports | tr '\n' ' ')" "" "no container left"
}

# has_line TEXT LINE WHAT: LINE is one of TEXT's lines (expect_match's grep
# -E would take a newline in its pattern as a second, empty pattern)
has_line() {
	grep -Fxq -- "$2" <<<"$1" || fail "$3: no line '$2' in '$(printf '%s' "$1" | head -c 300)'"
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
		wget -q -Y off -O - http://192.0.2.1:8081/ 2>/dev/null || echo no-route-out
		echo \$http_proxy"
	with_policy "$B" "{\"network\": {\"allow\": [\"127.0.0.1:$port\"]}}"
	"$OCI" --root "$ROOT" run --bundle "$B" "$ID" </dev/null >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?" 0 "run: $(cat "$T_TMP/err")"
	stop "$srv" "$srv2"
	local out
	out=$(cat "$T_TMP/out")
	expect_eq "$(head -1 <<<"$out")" hello-from-host "the allowed host, through the proxy"
	expect_match "$out" '403' "the refused host: the proxy's 403"
	has_line "$out" refused "the refused fetch failed"
	has_line "$out" no-direct-way "no way around the proxy"
	has_line "$out" no-route-out "no route out of the container's network namespace"
	expect_eq "$(tail -1 <<<"$out")" http://127.0.0.1:3128 "the process's http_proxy"
	local rep=$ROOT/reports/$ID.json
	wait_for "$rep" || fail "no report at $rep"
	# the proxy's refusal, and the two connects that went around it (the
	# observer's, as cordon run records them: the host's loopback port no
	# listener of the container has, an address with no route)
	expect_eq "$(jq -c '[.denials[] | select(.kind == "network") | .target] | sort' "$rep")" \
		"$(jq -cn --arg a "127.0.0.1:$other" --arg b "127.0.0.1:$port" '[$a, $b, "192.0.2.1:8081"] | sort')" \
		"the report's network denials: $(jq -c .denials "$rep")"
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
# variables added, the network namespace it gets, the TLS the proxy opens,
# the injected secrets' names and sources), in text and JSON; a bad
# annotation is create's refusal.
test_egress_explain() {
	setup_oci || return
	bundle "$B" true
	with_policy "$B" '{"network": {"allow": ["127.0.0.1:8080",
	  {"host": "127.0.0.2:80", "methods": ["GET"], "paths": ["/pub/**"]}]},
	  "secrets": {"TOKEN": {"env": "HOST_TOKEN", "inject": {"hosts": ["127.0.0.1:8080"], "placeholder": "ghp_"}}}}'
	OUT=$("$CORDON" explain --bundle "$B" 2>"$T_TMP/err")
	expect_eq "$?" 0 "explain --bundle: $(cat "$T_TMP/err")"
	expect_match "$OUT" '^verdict: would run' "the verdict"
	expect_match "$OUT" 'network new' "the network namespace the policy gives it"
	expect_match "$OUT" "^egress: through cordon's proxy at 127.0.0.1:3128" "the proxy"
	expect_match "$OUT" 'allow +127.0.0.1:8080$' "an allowed host"
	expect_match "$OUT" 'allow +127.0.0.2:80 methods GET paths /pub/\*\* .*HTTPS too' "a rule"
	expect_match "$OUT" 'env +HTTP_PROXY HTTPS_PROXY http_proxy https_proxy ALL_PROXY all_proxy SSL_CERT_FILE .*AWS_CA_BUNDLE TOKEN$' \
		"the variables (the CA's, the placeholder's)"
	expect_match "$OUT" 'tls +the proxy opens HTTPS .*/run/cordon-ca/ca.pem .*upstreams verified against the host' "TLS"
	expect_match "$OUT" 'secret TOKEN: the process gets a placeholder \(ghp_ .*variable HOST_TOKEN, goes in the headers of requests to 127.0.0.1:8080 \(over TLS only\)' \
		"the credential broker"
	OUT=$("$CORDON" explain --bundle "$B" --json 2>"$T_TMP/err")
	expect_eq "$(jq -r '[.egress.proxy, (.egress.allow | map(.host) | join(",")), .namespaces.network] | join(" ")' <<<"$OUT")" \
		"127.0.0.1:3128 127.0.0.1:8080,127.0.0.2:80 new" "--json"
	expect_eq "$(jq -c '[.egress.tls, .egress.injected]' <<<"$OUT")" \
		'[{"ca_file":"/run/cordon-ca/ca.pem","upstream_ca":null},[{"secret":"TOKEN","hosts":["127.0.0.1:8080"],"in":["header"],"placeholder_prefix":"ghp_","allow_plaintext":false,"from":{"env":"HOST_TOKEN"}}]]' \
		"--json: TLS and the broker"
	printf '%s' "$OUT" >"$T_TMP/e.json"
	/usr/bin/python3 "$TOP/tests/validate.py" "$TOP/schemas/explain-bundle.schema.json" "$T_TMP/e.json" >"$T_TMP/v" ||
		fail "explain --bundle --json does not validate: $(cat "$T_TMP/v")"
	with_policy "$B" '{"network": 1}'
	OUT=$("$CORDON" explain --bundle "$B" 2>"$T_TMP/err")
	expect_eq "$?" 1 "a bad policy: create would refuse it"
	expect_match "$OUT" '^verdict: refused: annotation run.cordon.policy:1:[0-9]+: ' "the verdict says why"
	t_assert
}

# --- TLS interception and the credential broker (the policy's "secrets") ---
TLSSERVER="$TOP/tests/tlsserver.py"
VALUE=real-value-$RANDOM$RANDOM$RANDOM-x

# A CA and a certificate for localhost and 127.0.0.1 signed by it, in $T_TMP
# (tests/integration/tls.sh's); a TLS server of www/ whose pub/a.txt says
# "pub", every request logged in $T_TMP/log; in the network namespace
# TLS_NETNS (a path) where it is set.
serve_tls_pub() { # -> PORT, SRV
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T_TMP/ca.key" \
		-out "$T_TMP/ca.pem" -days 1 -subj /CN=cordon-test-ca 2>/dev/null &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T_TMP/srv.key" \
		-out "$T_TMP/srv.csr" -subj /CN=localhost 2>/dev/null &&
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$T_TMP/ext" &&
	openssl x509 -req -in "$T_TMP/srv.csr" -CA "$T_TMP/ca.pem" -CAkey "$T_TMP/ca.key" -CAcreateserial \
		-out "$T_TMP/srv.pem" -days 1 -extfile "$T_TMP/ext" 2>/dev/null || fail "make the test CA"
	mkdir -p "$WS/www/pub" "$WS/www/priv" && echo pub >"$WS/www/pub/a.txt" && echo priv >"$WS/www/priv/b.txt"
	local pf="$T_TMP/port.$RANDOM"
	${TLS_NETNS:+nsenter --net="$TLS_NETNS"} /usr/bin/python3 "$TLSSERVER" "$pf" "$T_TMP/log" "$T_TMP/srv.pem" "$T_TMP/srv.key" "$WS/www" &
	SRV=$!
	server_port "$pf"
}

# bundle_curl DIR SCRIPT: bundle's, with the host's /usr bound read-only
# (curl and its libraries) and /lib, /lib64 as the host's links.
bundle_curl() {
	bundle "$1" sh -c "$2"
	mkdir -p "$1/rootfs/usr"
	ln -sfn usr/lib "$1/rootfs/lib"
	ln -sfn usr/lib64 "$1/rootfs/lib64"
	jq '.mounts += [{destination: "/usr", type: "bind", source: "/usr", options: ["rbind", "ro"]}]' \
		"$1/config.json" >"$1/c" && mv "$1/c" "$1/config.json"
}

# A rule with methods and paths on an HTTPS host: the proxy opens the TLS
# with the run's CA, which the container trusts (the bundle at
# /run/cordon-ca/ca.pem, CURL_CA_BUNDLE and the others); the rule's path
# admits one request and refuses the other (403, a denial).
test_egress_tls_restricted_rule() {
	setup_oci || return
	command -v curl >/dev/null && command -v openssl >/dev/null || { t_skip "no curl or openssl"; return; }
	serve_tls_pub
	local port=$PORT srv=$SRV
	bundle_curl "$B" "/usr/bin/curl -sS https://127.0.0.1:$port/pub/a.txt
		/usr/bin/curl -s -o /dev/null -w 'priv %{http_code}\n' https://127.0.0.1:$port/priv/b.txt
		echo \"ca \$CURL_CA_BUNDLE \$SSL_CERT_FILE\"
		grep -c 'BEGIN CERTIFICATE' /run/cordon-ca/ca.pem >/dev/null && echo bundle-there
		echo x >/run/cordon-ca/ca.pem 2>/dev/null || echo read-only"
	with_policy "$B" "{\"network\": {\"allow\": [{\"host\": \"127.0.0.1:$port\", \"methods\": [\"GET\"],
	  \"paths\": [\"/pub/**\"]}], \"upstream_ca\": \"$T_TMP/ca.pem\"}}"
	"$OCI" --root "$ROOT" run --bundle "$B" "$ID" </dev/null >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?" 0 "run: $(cat "$T_TMP/err")"
	stop "$srv"
	local out
	out=$(cat "$T_TMP/out")
	expect_eq "$(head -1 <<<"$out")" pub "the allowed path, over TLS opened by the proxy: $out"
	has_line "$out" 'priv 403' "the path the rule refuses"
	has_line "$out" 'ca /run/cordon-ca/ca.pem /run/cordon-ca/ca.pem' "the CA variables"
	has_line "$out" bundle-there "the bundle"
	has_line "$out" read-only "the bundle, read-only"
	local rep=$ROOT/reports/$ID.json
	wait_for "$rep" || fail "no report at $rep"
	expect_eq "$(jq -c '[.network.requests[] | [.method, .path, .status]]' "$rep")" \
		'[["GET","/pub/a.txt",200],["GET","/priv/b.txt",403]]' "the report's requests"
	expect_match "$(jq -c '[.denials[] | select(.kind == "network") | .target]' "$rep")" "127.0.0.1:$port" \
		"the refusal in denials"
	t_assert
}

# An injected secret: the container holds a placeholder, the server gets
# the value (read from cordon-oci's environment at create), a response that
# echoes it comes back as the placeholder; the value is nowhere in the
# report, the state directory (the kept config.json) or create's output.
test_egress_secret_injected_upstream_only() {
	setup_oci || return
	command -v curl >/dev/null && command -v openssl >/dev/null || { t_skip "no curl or openssl"; return; }
	serve_tls_pub
	local port=$PORT srv=$SRV
	bundle_curl "$B" "echo \"token \$TOKEN\"
		/usr/bin/curl -sS -D - -H \"Authorization: Bearer \$TOKEN\" https://127.0.0.1:$port/pub/a.txt
		/usr/bin/curl -s -o /dev/null -w 'plain %{http_code}\n' -x '' http://127.0.0.1:$port/ 2>&1"
	with_policy "$B" "{\"network\": {\"allow\": [\"127.0.0.1:$port\"], \"upstream_ca\": \"$T_TMP/ca.pem\"},
	  \"secrets\": {\"TOKEN\": {\"env\": \"HOST_TOKEN\", \"inject\": {\"hosts\": [\"127.0.0.1:$port\"], \"placeholder\": \"ghp_\"}}}}"
	jq '.process.env += ["TOKEN=the-config-s"]' "$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	HOST_TOKEN=$VALUE "$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?" 0 "create: $(cat "$T_TMP/err")"
	grep -rl -- "$VALUE" "$ROOT" "$T_TMP/err" && fail "the value in the state directory or create's output"
	"$OCI" --root "$ROOT" start "$ID" >>"$T_TMP/out" 2>>"$T_TMP/err"
	local rep=$ROOT/reports/$ID.json
	wait_for "$rep" || fail "no report at $rep"
	stop "$srv"
	local out
	out=$(cat "$T_TMP/out")
	expect_match "$(grep '^token ' <<<"$out")" '^token ghp_[0-9a-f]{32}$' "the container's TOKEN: the placeholder (not the config's): $out $(cat "$T_TMP/err")"
	local ph
	ph=$(sed -n 's/^token //p' <<<"$out")
	has_line "$out" pub "the request went through"
	expect_match "$out" "X-Echo: Bearer $ph" "an echoed value comes back as the placeholder"
	[[ "$out" != *"$VALUE"* ]] || fail "the value reached the container"
	expect_eq "$(grep -c -- "Bearer $VALUE" "$T_TMP/log")" 1 "the server got the value"
	grep -q -- "$ph" "$T_TMP/log" && fail "the server got the placeholder"
	grep -rl -- "$VALUE" "$ROOT" && fail "the value under --root (report, state)"
	expect_eq "$(jq -c '[.network.injected[] | [.secret, .host, .count]]' "$rep")" "[[\"TOKEN\",\"127.0.0.1:$port\",1]]" \
		"the report's injected counts"
	expect_eq "$(jq -c '.network.requests[0].injected' "$rep")" '["TOKEN"]' "the request's injected names"
	t_assert
}

# A bad secrets section refuses create with one line naming the annotation
# (LINE:COL where the text is at fault), nothing left behind: a missing
# host variable, a secret neither injected nor a file, a "mount" at the top
# or in a bind of the config's, secrets without network.
test_egress_bad_secrets_refused() {
	setup_oci || return
	bundle "$B" sh -c true
	cp "$B/config.json" "$B/good.json"
	local inj='"inject": {"hosts": ["127.0.0.1:443"]}'
	with_policy "$B" "{\"network\": {\"allow\": [\"127.0.0.1:443\"]}, \"secrets\": {\"TOKEN\": {\"env\": \"NO_SUCH_VAR_$$\", $inj}}}"
	oci create --bundle "$B" "$ID"
	expect_eq "$RC:$ERR" "1:cordon-oci: create: annotation run.cordon.policy: secret TOKEN: the host variable NO_SUCH_VAR_$$ is not set" \
		"a missing host variable"
	[ ! -e "$ROOT/$ID" ] || fail "a refused create left $ROOT/$ID"
	cp "$B/good.json" "$B/config.json"
	with_policy "$B" '{"network": {"allow": ["127.0.0.1:443"]},
	  "secrets": {"TOKEN": {"env": "HOME"}}}'
	oci create --bundle "$B" "$ID"
	expect_match "$RC:$ERR" '^1:cordon-oci: create: annotation run.cordon.policy:2:25: secret "TOKEN": only an injected secret \("inject"\) or a file' \
		"a secret the process would hold"
	expect_eq "$(wc -l <<<"$ERR")" 1 "one line"
	cp "$B/good.json" "$B/config.json"
	with_policy "$B" "{\"network\": {\"allow\": [\"127.0.0.1:443\"]}, \"secrets\": {\"T\": {\"env\": \"HOME\", \"mount\": \"/t\", $inj}}}"
	oci create --bundle "$B" "$ID"
	expect_eq "$RC:$ERR" '1:cordon-oci: create: annotation run.cordon.policy: secret T: mount /t must be in a directory (e.g. /run/secrets/T)' \
		"a mount at the top"
	cp "$B/good.json" "$B/config.json"
	jq '.mounts += [{destination: "/vol", type: "bind", source: "/tmp", options: ["rbind"]}]' "$B/config.json" >"$B/c" &&
		mv "$B/c" "$B/config.json"
	with_policy "$B" "{\"network\": {\"allow\": [\"127.0.0.1:443\"]}, \"secrets\": {\"T\": {\"env\": \"HOME\", \"mount\": \"/vol/s/t\"}}}"
	oci create --bundle "$B" "$ID"
	expect_match "$RC:$ERR" '^1:cordon-oci: create: annotation run.cordon.policy: secret T: mount /vol/s/t is inside /vol, a bind' \
		"a mount in a bind of the config's"
	[ ! -e "$ROOT/$ID" ] || fail "a refused create left $ROOT/$ID"
	cp "$B/good.json" "$B/config.json"
	with_policy "$B" "{\"network\": {\"allow\": [\"127.0.0.1:443\"]}, \"secrets\": {\"A\": {\"env\": \"PATH\", \"mount\": \"/run/s/sub/a\"}, \"B\": {\"env\": \"PATH\", \"mount\": \"/run/s/b\"}}}"
	oci create --bundle "$B" "$ID"
	expect_eq "$RC:$ERR" "1:cordon-oci: create: annotation run.cordon.policy: secret B: mount /run/s/b and secret A's are in nested directories (a tmpfs each); put secrets' files in one directory or in directories side by side" \
		"secrets in nested directories (the outer one's tmpfs would hide the inner one)"
	[ ! -e "$ROOT/$ID" ] || fail "a refused create left $ROOT/$ID"
	with_policy "$B" "{\"network\": {\"allow\": [\"127.0.0.1:443\"]}, \"secrets\": {\"A\": {\"env\": \"PATH\", \"mount\": \"/run/s/a\"}, \"B\": {\"env\": \"PATH\", \"mount\": \"/run/s/a\"}}}"
	oci create --bundle "$B" "$ID"
	expect_match "$RC:$ERR" "^1:cordon-oci: create: annotation run.cordon.policy: secret B: mount /run/s/a is also secret A's file" \
		"two secrets, one file"
	cp "$B/good.json" "$B/config.json"
	with_policy "$B" "{\"network\": {\"allow\": [\"127.0.0.1:443\"]}, \"secrets\": {\"T\": {\"file\": \"no-such-file\", $inj}}}"
	oci create --bundle "$B" "$ID"
	expect_match "$RC:$ERR" "^1:cordon-oci: create: annotation run.cordon.policy: secret T: $B/no-such-file: " \
		"a missing file (relative to the bundle)"
	expect_eq "$(wc -l <<<"$ERR")" 1 "one line"
	cp "$B/good.json" "$B/config.json"
	with_policy "$B" "{\"secrets\": {\"T\": {\"env\": \"HOME\", $inj}}}"
	oci create --bundle "$B" "$ID"
	expect_match "$RC:$ERR" '^1:cordon-oci: create: annotation run.cordon.policy: .*need a "network" section' "no network section"
	[ ! -e "$ROOT/$ID" ] || fail "a refused create left $ROOT/$ID"
	t_assert
}

# network.loopback_ports, as cordon run's (docs/network.md): Landlock holds
# the container's TCP to the declared ports (bind and connect) and connect
# to the proxy's; a bind and a connect to another port are refused
# (EACCES) and are network denials in the report; the proxy still works.
test_egress_loopback_ports() {
	setup_oci || return
	bundle "$B" true
	with_policy "$B" '{"network": {"allow": ["127.0.0.1:9"], "loopback_ports": [8081]}}'
	local abi
	abi=$("$CORDON" explain --bundle "$B" --json 2>/dev/null | jq -r '.host.landlock_abi')
	[ "${abi:-0}" -ge 4 ] 2>/dev/null || { t_skip "Landlock ABI $abi: no TCP port rules (ABI 4)"; return; }
	mkdir -p "$WS/www"
	echo hello-from-host >"$WS/www/hello"
	serve http "$WS/www"
	local port=$PORT srv=$SRV
	bundle "$B" sh -c "mkdir -p /tmp/www && echo inside >/tmp/www/x
		busybox nc -l -p 8081 -e busybox httpd -i -h /tmp/www &
		busybox nc -l -p 8082 2>&1 || echo bind-refused
		for i in \$(busybox seq 100); do busybox netstat -ltn | grep -q ':8081 ' && break; busybox usleep 50000; done
		wget -q -Y off -O - http://127.0.0.1:8081/x
		wget -q -Y off -O - http://127.0.0.1:8083/x 2>&1 || echo connect-refused
		wget -q -O - http://127.0.0.1:$port/hello"
	with_policy "$B" "{\"network\": {\"allow\": [\"127.0.0.1:$port\"], \"loopback_ports\": [8081]}}"
	"$OCI" --root "$ROOT" run --bundle "$B" "$ID" </dev/null >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?" 0 "run: $(cat "$T_TMP/err")"
	stop "$srv"
	local out
	out=$(cat "$T_TMP/out")
	expect_match "$out" 'Permission denied' "refused by Landlock (EACCES): $out"
	expect_eq "$(grep -c -e '^bind-refused$' -e '^connect-refused$' <<<"$out")" 2 "the bind and the connect refused: $out"
	expect_eq "$(grep -c '^inside$' <<<"$out")" 1 "the declared port: a server of the container's reached"
	expect_eq "$(tail -1 <<<"$out")" hello-from-host "the proxy still works"
	local rep=$ROOT/reports/$ID.json
	wait_for "$rep" || fail "no report at $rep"
	expect_match "$(jq -c '[.denials[] | select(.kind == "network") | .target] | sort' "$rep")" \
		'^\["127\.0\.0\.1:8083","bind (\[::\]|0\.0\.0\.0):8082"\]$' "the report's network denials (nc binds any address)"
	OUT=$("$CORDON" explain --bundle "$B" 2>&1)
	expect_match "$OUT" 'ports +8081 \(network.loopback_ports\)' "explain shows the ports"
	expect_eq "$("$CORDON" explain --bundle "$B" --json 2>&1 | jq -c .egress.loopback_ports)" '[8081]' "explain --json"
	t_assert
}

# A process exec adds is held to the same ports, its refused bind a denial.
test_egress_loopback_ports_exec() {
	setup_oci || return
	bundle "$B" busybox sleep 1000
	with_policy "$B" '{"network": {"allow": [], "loopback_ports": [8081]}}'
	local abi
	abi=$("$CORDON" explain --bundle "$B" --json 2>/dev/null | jq -r '.host.landlock_abi')
	[ "${abi:-0}" -ge 4 ] 2>/dev/null || { t_skip "Landlock ABI $abi: no TCP port rules (ABI 4)"; return; }
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create: $(cat "$T_TMP/err")"
	oci start "$ID"
	expect_eq "$RC" 0 "start: $ERR"
	oci exec "$ID" sh -c 'busybox nc -l -p 8084 2>&1 || echo bind-refused'
	expect_match "$RC:$OUT" '^0:.*Permission denied' "exec: $ERR"
	expect_eq "$(tail -1 <<<"$OUT")" bind-refused "the exec's bind refused"
	oci kill "$ID" KILL
	oci delete --force "$ID"
	local rep=$ROOT/reports/$ID.json
	wait_for "$rep" || fail "no report at $rep"
	expect_match "$(jq -c '[.denials[] | select(.kind == "network") | .target]' "$rep")" \
		'^\["bind (\[::\]|0\.0\.0\.0):8084"\]$' "the exec's refused bind in the report"
	t_assert
}

# Secrets delivered as files ("mount"): each a 0400 file owned by the
# process's user (1000 here) on a read-only tmpfs of init's own at the
# policy's path; an injected one's file holds its placeholder, a plain
# one's the value (read at create from cordon-oci's environment). The value
# is nowhere under --root (the kept config, state, report), in the log (--log,
# --debug), in create's or start's output, nor in explain's.
# A link of the image on the way to a secret's directory is refused: the
# image could move it into a bind of the config's, a host directory, where
# it would be made as root (outside review 4, F3).
test_egress_secret_dir_through_link_refused() {
	setup_oci || return
	bundle "$B" sh -c true
	mkdir -p "$WS/host"
	rmdir "$B/rootfs/run" 2>/dev/null
	ln -s /data "$B/rootfs/run"
	mkdir -p "$B/rootfs/data"
	jq --arg h "$WS/host" '.mounts += [{destination: "/data", type: "bind", source: $h, options: ["rbind", "rw"]}]' \
		"$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	with_policy "$B" '{"network": {"allow": []}, "secrets": {"T": {"env": "HOST_T", "mount": "/run/secrets/T"}}}'
	HOST_T=secret-value-0123456789 "$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >/dev/null 2>"$T_TMP/err"
	local rc=$?
	[ $rc != 0 ] || { "$OCI" --root "$ROOT" delete --force "$ID" >/dev/null 2>&1; fail "create through the link succeeded"; }
	[ -e "$WS/host/secrets" ] && fail "a directory was made in the host's bind: $(ls -la "$WS/host")"
	expect_match "$(cat "$T_TMP/err")" 'secrets' "the error names the secret's path: $(cat "$T_TMP/err")"
	t_assert
}

test_egress_secret_mounted() {
	setup_oci || return
	bundle "$B" sh -c 'cd /run/secrets && for f in *; do echo "$f $(busybox stat -c "%a %u:%g" "$f") $(cat "$f")"; done
		echo x >/run/secrets/TOKEN 2>/dev/null || echo read-only
		echo "env [$TOKEN] [$API]"'
	jq '.process.user = {uid: 1000, gid: 1000}' "$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	printf 'api-%s' "$VALUE" >"$WS/api"
	with_policy "$B" "{\"network\": {\"allow\": [\"127.0.0.1:9\"]},
	  \"secrets\": {\"TOKEN\": {\"env\": \"HOST_TOKEN\", \"mount\": \"/run/secrets/TOKEN\"},
	    \"API\": {\"file\": \"$WS/api\", \"mount\": \"/run/secrets/API\", \"inject\": {\"hosts\": [\"127.0.0.1:9\"], \"placeholder\": \"sk_\"}}}}"
	HOST_TOKEN=$VALUE "$OCI" --root "$ROOT" --log "$T_TMP/log" --debug create --bundle "$B" "$ID" </dev/null >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?" 0 "create: $(cat "$T_TMP/err")"
	grep -rl -- "$VALUE" "$ROOT" "$T_TMP/err" && fail "the value in the state directory or create's output"
	"$OCI" --root "$ROOT" --log "$T_TMP/log" --debug start "$ID" >>"$T_TMP/out" 2>>"$T_TMP/err"
	local rep=$ROOT/reports/$ID.json
	wait_for "$rep" || fail "no report at $rep: $(cat "$T_TMP/err")"
	local out
	out=$(cat "$T_TMP/out")
	# (grep -E takes a newline in a pattern as two patterns: one line each)
	expect_match "$(sed -n 1p <<<"$out")" '^API 400 1000:1000 sk_[0-9a-f]{32}$' \
		"the injected secret's file: its placeholder: $out $(cat "$T_TMP/err")"
	expect_eq "$(sed -n 2p <<<"$out")" "TOKEN 400 1000:1000 $VALUE" "the secret's file: its value, 0400, the process's"
	expect_eq "$(sed -n 3,4p <<<"$out")" $'read-only\nenv [] []' "the tmpfs is read-only; neither is a variable"
	grep -rl -- "$VALUE" "$ROOT" "$T_TMP/err" "$T_TMP/log" && fail "the value under --root (report, state), in the output or the log"
	OUT=$(HOST_TOKEN=$VALUE "$CORDON" explain --bundle "$B" 2>&1)
	expect_match "$OUT" 'secret TOKEN: a file at /run/secrets/TOKEN \(0400' "explain shows the file"
	expect_match "$OUT" 'secret API: the process gets a placeholder .* as the file /run/secrets/API' "explain: the injected one's file"
	OUT=$(HOST_TOKEN=$VALUE "$CORDON" explain --bundle "$B" --json 2>&1)
	expect_eq "$(jq -c '[.egress.files[] | [.secret, .path, .from]]' <<<"$OUT")" \
		"[[\"TOKEN\",\"/run/secrets/TOKEN\",{\"env\":\"HOST_TOKEN\"}],[\"API\",\"/run/secrets/API\",{\"file\":\"$WS/api\"}]]" \
		"explain --json: the files"
	printf '%s' "$OUT" >"$T_TMP/e.json"
	/usr/bin/python3 "$TOP/tests/validate.py" "$TOP/schemas/explain-bundle.schema.json" "$T_TMP/e.json" >"$T_TMP/v" ||
		fail "explain --bundle --json does not validate: $(cat "$T_TMP/v")"
	[[ "$(HOST_TOKEN=$VALUE "$CORDON" explain --bundle "$B" 2>&1; HOST_TOKEN=$VALUE "$CORDON" explain --bundle "$B" --json 2>&1)" != *"$VALUE"* ]] ||
		fail "the value in explain"
	t_assert
}

# A pod's egress without an engine (docs/kubernetes.md, "Egress in a
# pod"; tests/oci/cri.sh runs it under containerd): a network namespace of
# the test's (pinned on a file of its directory) is the pod's (CRI-O names it by path to each container), with
# a server on its 127.0.0.1:8080. The sandbox container (CRI annotations)
# with the policy gets a namespace of its own and the proxy, whose upstream
# is the pod's: its containers, joining the sandbox's (the one without the
# annotation gets the sandbox's policy), reach 8080 through it and not the
# host's loopback server; a container whose policy differs, or whose
# sandbox is not this runtime's, is refused.
test_egress_pod_sandbox() {
	setup_oci || return
	pod_net || return
	mkdir -p "$WS/pod" "$WS/host"
	echo served-in-the-pod >"$WS/pod/index.html"
	echo served-on-the-host >"$WS/host/index.html"
	nsenter --net="$POD_NS" "$BUSYBOX" httpd -f -p 127.0.0.1:8080 -h "$WS/pod" &
	local psrv=$!
	serve http "$WS/host"
	local hport=$PORT hsrv=$SRV
	local pol="{\"network\": {\"allow\": [\"127.0.0.1:8080\", \"127.0.0.1:$hport\"]}}"
	pod_sandbox "$pol"
	local member
	member=$(jq -cn --arg s "$POD_SID" '{"io.kubernetes.cri-o.ContainerType": "container", "io.kubernetes.cri-o.SandboxID": $s}')
	bundle "$B" sh -c 'wget -q -O - http://127.0.0.1:8080/ || echo allowed-failed
		wget -q -O - http://127.0.0.1:'"$hport"'/ 2>&1 || echo host-not-reached
		wget -q -Y off -O - http://127.0.0.1:8080/ 2>/dev/null || echo no-direct-way
		echo "$http_proxy"; readlink /proc/self/ns/net'
	pod_cri "$B" "$member"
	"$OCI" --root "$ROOT" run --bundle "$B" "$ID" </dev/null >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?" 0 "a container of the pod: $(cat "$T_TMP/err")"
	local out spid
	out=$(cat "$T_TMP/out")
	spid=$("$OCI" --root "$ROOT" state "$POD_SID" | jq -r .pid)
	expect_eq "$(head -1 <<<"$out")" served-in-the-pod "the pod's server, through the sandbox's proxy"
	has_line "$out" host-not-reached "the host's loopback is not the proxy's network"
	expect_match "$out" '502' "the proxy's 502 for the host's port"
	has_line "$out" no-direct-way "no way around the proxy"
	has_line "$out" http://127.0.0.1:3128 "the sandbox's policy's proxy variable"
	expect_eq "$(tail -1 <<<"$out")" "$(readlink "/proc/$spid/ns/net")" "in the sandbox's network namespace"
	[ "$(tail -1 <<<"$out")" != "$(readlink "/proc/$psrv/ns/net")" ] || fail "in the pod's network namespace"
	# refused: a policy of its own; a policy whose sandbox is not this root's
	bundle "$B" true
	pod_cri "$B" "$(jq -cn --argjson m "$member" '$m + {"run.cordon.policy": "{\"network\": {\"allow\": []}}"}')"
	oci create --bundle "$B" "$ID-2"
	expect_match "$RC:$ERR" "^1:cordon-oci: create: annotation run.cordon.policy: differs from its sandbox $POD_SID's" "a policy of its own"
	bundle "$B" true
	pod_cri "$B" "$(jq -cn --arg p "$pol" '{"io.kubernetes.cri-o.ContainerType": "container", "io.kubernetes.cri-o.SandboxID": "gone", "run.cordon.policy": $p}')"
	oci create --bundle "$B" "$ID-3"
	expect_match "$RC:$ERR" "^1:cordon-oci: create: annotation run.cordon.policy: this container joins the pod's network namespace $POD_NS, and its sandbox gone is not" "a sandbox not this runtime's"
	# refused: a container of the pod on the host's network (no network
	# namespace: a hostNetwork pod's) without the annotation, which would
	# bypass the sandbox's egress
	bundle "$B" true
	jq --argjson a "$member" '.annotations += $a | .linux.namespaces |= map(select(.type != "network"))' \
		"$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	oci create --bundle "$B" "$ID-5"
	expect_match "$RC:$ERR" "^1:cordon-oci: create: linux.namespaces: this container has the host's network, and its sandbox $POD_SID holds" \
		"the host's network in a pod with egress"
	oci kill "$POD_SID" KILL
	oci delete --force "$POD_SID"
	stop "$psrv" "$hsrv"
	pod_net_end
	t_assert
}

# A pod's TLS interception and secrets (docs/kubernetes.md, "Egress in a
# pod"): the sandbox's policy restricts methods on an HTTPS host of the
# pod's network and injects TOKEN (a variable) and API (a file). Its
# create publishes its CA bundle and placeholders in its state directory;
# a container of the pod, created without the values in its environment
# (it never reads an injected secret), gets that bundle at
# /run/cordon-ca/ca.pem and the sandbox's placeholders: its HTTPS request
# through the sandbox's proxy verifies against the bundle and reaches the
# server with the value, the response echoes the placeholder, a POST gets
# the proxy's 403 (in the sandbox's report), and the value is nowhere under
# the runtime's root.
test_egress_pod_secrets() {
	setup_oci || return
	command -v curl >/dev/null && command -v openssl >/dev/null || { t_skip "no curl or openssl"; return; }
	pod_net || return
	TLS_NETNS=$POD_NS serve_tls_pub
	local port=$PORT srv=$SRV
	local pol="{\"network\": {\"allow\": [{\"host\": \"127.0.0.1:$port\", \"methods\": [\"GET\"]}], \"upstream_ca\": \"$T_TMP/ca.pem\"},
	  \"secrets\": {\"TOKEN\": {\"env\": \"HOST_TOKEN\", \"inject\": {\"hosts\": [\"127.0.0.1:$port\"], \"placeholder\": \"ghp_\"}},
	    \"API\": {\"env\": \"HOST_API\", \"mount\": \"/run/secrets/API\", \"inject\": {\"hosts\": [\"127.0.0.1:$port\"], \"placeholder\": \"api_\"}}}}"
	HOST_TOKEN=$VALUE HOST_API=$VALUE-api pod_sandbox "$pol"
	bundle_curl "$B" "echo \"token \$TOKEN\"; echo \"api \$(cat /run/secrets/API)\"; echo \"ca \$CURL_CA_BUNDLE\"
		/usr/bin/curl -sS -D - -H \"Authorization: Bearer \$TOKEN\" https://127.0.0.1:$port/pub/a.txt
		/usr/bin/curl -s -o /dev/null -w 'post %{http_code}\n' -X POST -d x https://127.0.0.1:$port/pub/a.txt"
	pod_cri "$B" "$(jq -cn --arg s "$POD_SID" '{"io.kubernetes.cri-o.ContainerType": "container", "io.kubernetes.cri-o.SandboxID": $s}')"
	env -u HOST_TOKEN -u HOST_API "$OCI" --root "$ROOT" run --bundle "$B" "$ID" </dev/null >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?" 0 "a container of the pod: $(cat "$T_TMP/err")"
	local out ph
	out=$(cat "$T_TMP/out")
	ph=$(sed -n 's/^token //p' <<<"$out")
	expect_eq "$ph" "$(awk '$1 == "TOKEN" {print $2}' "$ROOT/$POD_SID/pod-secrets")" "the container's TOKEN: the sandbox's placeholder: $out $(cat "$T_TMP/err")"
	expect_match "$ph" '^ghp_[0-9a-f]{32}$' "a placeholder"
	expect_eq "$(sed -n 's/^api //p' <<<"$out")" "$(awk '$1 == "API" {print $2}' "$ROOT/$POD_SID/pod-secrets")" "the file API: the sandbox's placeholder"
	has_line "$out" "ca /run/cordon-ca/ca.pem" "the CA variable"
	has_line "$out" pub "the request, over TLS the sandbox's proxy opened, verified with the bundle"
	expect_match "$out" "X-Echo: Bearer $ph" "an echoed value comes back as the placeholder"
	has_line "$out" "post 403" "the method the rule refuses: the proxy's 403"
	[[ "$out" != *"$VALUE"* ]] || fail "the value reached the container"
	expect_eq "$(grep -c -- "Bearer $VALUE" "$T_TMP/log")" 1 "the server got the value"
	expect_eq "$(stat -c %a "$ROOT/$POD_SID/pod-secrets" "$ROOT/$POD_SID/pod-ca.pem" | tr '\n' ' ')" "600 600 " "the published files, root's alone"
	oci kill "$POD_SID" KILL
	local rep=$ROOT/reports/$POD_SID.json
	wait_for "$rep" || fail "no report at $rep"
	expect_eq "$(jq -c '[.network.requests[] | [.method, .path, .status]]' "$rep")" \
		'[["GET","/pub/a.txt",200],["POST","/pub/a.txt",403]]' "the sandbox's report: its proxy's requests"
	expect_eq "$(jq -c '[.network.injected[] | [.secret, .count]]' "$rep")" '[["TOKEN",1]]' "the sandbox's report: the injection"
	expect_match "$(jq -c '[.denials[] | select(.kind == "network") | .target]' "$rep")" "127.0.0.1:$port" "the refusal in the sandbox's denials"
	oci delete --force "$POD_SID"
	stop "$srv"
	grep -rl -- "$VALUE" "$ROOT" "$T_TMP/err" && fail "the value under --root (reports, state) or create's output"
	pod_net_end
	t_assert
}

# Inbound to a pod under egress (docs/kubernetes.md, "Inbound"): the
# sandbox's run.cordon.inbound names 8080; a container of the pod serves
# HTTP on 127.0.0.1:8080 in cordon's namespace. A client in the pod's
# network namespace (as the kubelet's probe or a Service would come) reaches
# it on the pod's loopback and on the pod's address (a veth of the test's); 8082, served too but not declared, is not reached. The
# container cannot reach the relay's listener (the pod's address) nor the
# pod's own server around the proxy: the relay is no way out. The relay
# ends with the sandbox. Refused: the proxy's port 3128, the annotation on a
# container that is not a pod's sandbox holding its egress.
test_egress_pod_inbound() {
	setup_oci || return
	pod_net || return
	local addr=10.99.0.2
	# the pod's address: one end of a veth pair whose other end stays
	# there, down (tests/oci/cri/cni-plugin's eth0): no packet leaves
	nsenter --net="$POD_NS" ip link add p0 type veth peer name p1 && nsenter --net="$POD_NS" ip addr add "$addr/32" dev p0 &&
		nsenter --net="$POD_NS" ip link set p0 up || fail "the pod's address (a veth pair)"
	mkdir -p "$WS/pod"
	echo served-in-the-pod >"$WS/pod/index.html"
	nsenter --net="$POD_NS" "$BUSYBOX" httpd -f -p 127.0.0.1:8081 -h "$WS/pod" &
	local psrv=$!
	local pol='{"network": {"allow": ["127.0.0.1:8081"]}}'
	pod_sandbox "$pol" '{"run.cordon.inbound": "8080"}'
	pod_member '{"run.cordon.inbound": "8080"}' "sh mkdir echo httpd wget sleep" sh -c \
		'mkdir -p /tmp/a /tmp/b && echo served-by-the-container >/tmp/a/index.html && echo not-declared >/tmp/b/index.html &&
		httpd -p 127.0.0.1:8082 -h /tmp/b && exec httpd -f -p 127.0.0.1:8080 -h /tmp/a'
	local out="" i
	for i in $(seq 100); do # the container's server starting
		out=$(nsenter --net="$POD_NS" "$BUSYBOX" wget -q -O - http://127.0.0.1:8080/ 2>&1) && break
		sleep 0.1
	done
	expect_eq "$out" served-by-the-container "the pod's loopback :8080, relayed to the container's server"
	out=$(nsenter --net="$POD_NS" "$BUSYBOX" wget -q -O - "http://$addr:8080/" 2>&1)
	expect_eq "$out" served-by-the-container "the pod's address :8080 (a Service's, a probe's)"
	nsenter --net="$POD_NS" "$BUSYBOX" wget -q -O - http://127.0.0.1:8082/ >/dev/null 2>&1 &&
		fail "a port not declared reached the container"
	# from inside: its own server, but neither the relay's listener nor the pod's server
	oci exec "$ID" wget -q -Y off -O - http://127.0.0.1:8080/
	expect_eq "$RC $OUT" "0 served-by-the-container" "exec in the container: its own server ($ERR)"
	oci exec "$ID" wget -q -Y off -O - "http://$addr:8080/"
	[ "$RC" != 0 ] || fail "the container reached the pod's address (the relay's listener): $OUT"
	oci exec "$ID" wget -q -Y off -O - http://127.0.0.1:8081/
	[ "$RC" != 0 ] && [[ "$OUT" != *served-in-the-pod* ]] || fail "the container reached the pod's server around the proxy: $OUT"
	# the relay is not host root (outside review attack11c): nobody, no
	# capability, no new privileges, and outside the pod's namespace
	if command -v ss >/dev/null; then
		local relay
		relay=$(pod_relay)
		expect_eq "$(awk '/^Uid:/ {print $2":"$3":"$4} /^CapEff:|^CapPrm:/ {print $2} /^NoNewPrivs:/ {print $2}' "/proc/$relay/status" | tr '\n' ' ')" \
			"65534:65534:65534 0000000000000000 0000000000000000 1 " "the relay's identity (pid $relay)"
		[ "$(readlink "/proc/$relay/ns/net")" != "$(readlink "$POD_NS")" ] || fail "the relay stayed in the pod's namespace"
	fi
	pod_end
	nsenter --net="$POD_NS" "$BUSYBOX" wget -q -O - http://127.0.0.1:8080/ >/dev/null 2>&1 &&
		fail "the relay outlived its sandbox"
	# refused: the proxy's port; the annotation off a pod's sandbox with egress
	oci_bundle "$WS/sb" oci-egress "sh sleep" "" "" sleep 600
	pod_cri "$WS/sb" "$(jq -cn --arg p "$pol" '{"io.kubernetes.cri-o.ContainerType": "sandbox", "run.cordon.policy": $p, "run.cordon.inbound": "8080,3128"}')"
	oci create --bundle "$WS/sb" "$POD_SID-2"
	expect_eq "$RC:$ERR" "1:cordon-oci: create: annotation run.cordon.inbound: 3128 is the egress proxy's port in the pod's containers' network namespace (the pod's address would reach the proxy)" "the proxy's port"
	bundle "$B" true
	jq '.annotations["run.cordon.inbound"] = "8080"' "$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	with_policy "$B" "$pol"
	oci create --bundle "$B" "$ID-2"
	expect_match "$RC:$ERR" "^1:cordon-oci: create: annotation run.cordon.inbound: applies to a pod's sandbox container" "not a pod's sandbox"
	stop "$psrv"
	pod_net_end
	t_assert
}

# The inbound relay does not spin (outside review attack11c): a client of
# the pod's fills the relay's buffer toward a container's server that
# never reads, then resets its connection. The relay's buffer waits for the
# server; the reset client's socket reports POLLERR|POLLHUP whatever events
# are asked, and a relay that still polled it woke at once for ever (a
# host root process at 100% of a core, as long as the container wants).
# The relay sleeps: sampled, it is not running most of the time.
test_egress_pod_inbound_no_spin() {
	setup_oci || return
	command -v ss >/dev/null || { t_skip "no ss (iproute2)"; return; }
	pod_net || return
	local pol='{"network": {"allow": ["127.0.0.1:8081"]}}'
	pod_sandbox "$pol" '{"run.cordon.inbound": "8080"}'
	# the container's server accepts and never reads
	pod_member '{}' "sh nc sleep" nc -l -p 8080 -e sleep 600
	local relay
	relay=$(pod_relay)
	[ -n "$relay" ] || fail "no relay listening on the pod's 8080"
	nsenter --net="$POD_NS" /usr/bin/python3 - >"$T_TMP/client" 2>&1 <<'PY'
import select, socket, struct, time
s = None
for _ in range(100):  # the container's server starting: the relay closes what it could not connect
    c = socket.create_connection(("127.0.0.1", 8080))
    c.setblocking(False)
    time.sleep(0.1)
    try:
        if c.recv(1) == b"":
            c.close(); continue
    except BlockingIOError:
        s = c; break
    c.close()
assert s, "the relay never held a connection"
sent, chunk = 0, b"x" * 65536
while select.select([], [s], [], 1)[1]:  # until a second without progress
    try:
        sent += s.send(chunk)
    except BlockingIOError:
        pass
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()  # a reset
print("sent", sent)
PY
	expect_match "$(cat "$T_TMP/client")" "^sent [0-9]+" "the client filled the relay's buffer"
	local i running=0 st
	for i in $(seq 20); do
		st=$(awk '{print $3}' "/proc/$relay/stat" 2>/dev/null)
		[ "$st" = R ] && running=$((running + 1))
		sleep 0.1
	done
	[ "$running" -lt 10 ] || fail "the relay runs $running of 20 samples: it spins"
	pod_end
	[ -n "$relay" ] && [ -e "/proc/$relay" ] && fail "the relay outlived its sandbox"
	pod_net_end
	t_assert
}

# The inbound relay's connections a client holds after the container's
# server ended them (outside review attack11c): the container's server
# closes each connection at once (a server's idle timeout, sooner); a
# client of the pod's keeps the 256 the relay carries open, reading nothing
# more and never closing. A relay that kept them (its way to the client
# half-closed, waiting for the client's end) for ever stopped accepting:
# no client came in again while that one held them, whatever the server's
# timeouts. Full, it drops one whose server has ended: the next client is
# served (here: its connection ends, as the server ends it), and the
# sandbox's report counts it (network.inbound.dropped).
test_egress_pod_inbound_full_of_ended() {
	setup_oci || return
	pod_net || return
	local pol='{"network": {"allow": ["127.0.0.1:8081"]}}'
	pod_sandbox "$pol" '{"run.cordon.inbound": "8080"}'
	# the container's server closes every connection at once
	pod_member '{}' "sh nc true" nc -ll -p 8080 -e true
	nsenter --net="$POD_NS" /usr/bin/python3 - >"$T_TMP/client" 2>&1 <<'PY'
import socket, time
def ended(s, t):  # the relay passed the server's end (b"") within t seconds
    s.settimeout(t)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
for _ in range(300):  # the container's server starting
    c = socket.create_connection(("127.0.0.1", 8080))
    ok = ended(c, 1)
    c.close()
    if ok:
        break
    time.sleep(0.1)
held = []
for i in range(256):  # the relay's 256, each ended by the server, kept open
    c = socket.create_connection(("127.0.0.1", 8080))
    assert ended(c, 60), "connection %d not ended" % i
    held.append(c)
c = socket.create_connection(("127.0.0.1", 8080))
print("next", "served" if ended(c, 60) else "never served")
PY
	expect_eq "$(tail -1 "$T_TMP/client")" "next served" "a client past 256 held ones the server ended: $(head -c 300 "$T_TMP/client")"
	pod_end
	# the report says what the relay let go at its bound
	local in
	in=$(jq -c '.network.inbound' "$ROOT/reports/$POD_SID.json")
	expect_eq "$(jq -c '[.ports, .max_connections, .full]' <<<"$in")" '[[8080],256,0]' "the relay's bound in the report: $in"
	[ "$(jq .dropped <<<"$in")" -ge 1 ] && [ "$(jq .connections <<<"$in")" -ge 257 ] ||
		fail "the connection let go at the bound, counted: $in"
	pod_net_end
	t_assert
}

# The inbound relay full of live connections: the container's server holds
# each of the 256 it carries (writes one byte, never ends); a client past
# them waits in the listener's backlog, and the sandbox's report counts the
# times the bound held new ones back (network.inbound.full).
test_egress_pod_inbound_full_counted() {
	setup_oci || return
	pod_net || return
	local pol='{"network": {"allow": ["127.0.0.1:8081"]}}'
	pod_sandbox "$pol" '{"run.cordon.inbound": "8080"}'
	pod_member '{}' "sh nc echo sleep" nc -ll -p 8080 -e sh -c 'echo x; exec sleep 600'
	nsenter --net="$POD_NS" /usr/bin/python3 - >"$T_TMP/client" 2>&1 <<'PY'
import socket, time
def relayed(s, t):  # the server's byte came through the relay within t seconds
    s.settimeout(t)
    try:
        return s.recv(1) == b"x"
    except OSError:
        return False
for _ in range(300):  # the container's server starting
    c = socket.create_connection(("127.0.0.1", 8080))
    ok = relayed(c, 1)
    c.close()
    if ok:
        break
    time.sleep(0.1)
held = []
for i in range(256):  # the relay's 256 (the first one's place freed), each held open by the server
    c = socket.create_connection(("127.0.0.1", 8080))
    assert relayed(c, 60), "connection %d not relayed" % i
    held.append(c)
c = socket.create_connection(("127.0.0.1", 8080))
print("next", "served" if relayed(c, 1) else "waits")
PY
	expect_eq "$(tail -1 "$T_TMP/client")" "next waits" "a client past 256 live ones: $(head -c 300 "$T_TMP/client")"
	pod_end
	local in
	in=$(jq -c '.network.inbound' "$ROOT/reports/$POD_SID.json")
	expect_eq "$(jq -c '[.max_connections, .full >= 1, .connections >= 257]' <<<"$in")" '[256,true,true]' \
		"the bound held a client back, in the report: $in"
	pod_net_end
	t_assert
}

# The inbound relay out of descriptors (outside review attack11c): its
# accept fails (EMFILE here, its limit lowered; ENFILE where the
# host's table is full) and the connection stays in the listener's
# backlog, which poll reports ready at once: a relay that polled it still
# woke for ever (a host root process at 100% of a core). It waits a while
# before it tries again: sampled, it is not running most of the time.
test_egress_pod_inbound_no_fds_no_spin() {
	setup_oci || return
	command -v ss >/dev/null && command -v prlimit >/dev/null || { t_skip "no ss or prlimit (iproute2, util-linux)"; return; }
	pod_net || return
	local pol='{"network": {"allow": ["127.0.0.1:8081"]}}'
	pod_sandbox "$pol" '{"run.cordon.inbound": "8080"}'
	pod_member '{}' "sh nc sleep" nc -ll -p 8080 -e sleep 600
	local relay
	relay=$(pod_relay)
	[ -n "$relay" ] || fail "no relay listening on the pod's 8080"
	# room for one connection's two descriptors: the limit past the second free one
	local fd free=()
	for fd in $(seq 0 64); do [ -e "/proc/$relay/fd/$fd" ] || free+=("$fd"); done
	# the relay runs as nobody: so does prlimit (a root without
	# CAP_SYS_RESOURCE, as on some hosts, may not set another uid's limits)
	setpriv --reuid 65534 --regid 65534 --clear-groups prlimit --pid "$relay" --nofile=$((free[1] + 1)): ||
		fail "prlimit on the relay"
	nsenter --net="$POD_NS" /usr/bin/python3 - >"$T_TMP/client" 2>&1 <<'PY' &
import socket, time
s = None
for _ in range(300):  # the container's server starting: the relay closes what it could not connect
    c = socket.create_connection(("127.0.0.1", 8080))
    c.settimeout(0.2)
    try:
        c.recv(1)
        c.close(); time.sleep(0.1); continue
    except socket.timeout:
        s = c; break
print("held" if s else "never held", flush=True)
more = [socket.create_connection(("127.0.0.1", 8080)) for _ in range(3)]  # in the backlog
time.sleep(600)
PY
	local cl=$! i
	for i in $(seq 300); do grep -q held "$T_TMP/client" && break; sleep 0.1; done
	expect_eq "$(head -1 "$T_TMP/client")" held "the relay's one connection"
	sleep 1
	local running=0 st
	for i in $(seq 20); do
		st=$(awk '{print $3}' "/proc/$relay/stat" 2>/dev/null)
		[ "$st" = R ] && running=$((running + 1))
		sleep 0.1
	done
	[ "$running" -lt 10 ] || fail "the relay runs $running of 20 samples: it spins"
	kill "$cl" 2>/dev/null
	wait "$cl" 2>/dev/null
	pod_end
	pod_net_end
	t_assert
}

for t in $(declare -F | awk '{print $3}' | grep '^test_'); do t_run "$t"; done
echo "$T_PASS passed, $T_FAIL failed, $T_SKIP skipped"
