# cordon-oci as a Kubernetes runtime handler (issue 32 item 2): containerd
# 1.6's CRI plugin, started here on private paths, with a `cordon` runtime
# (runtime_type io.containerd.runc.v2, BinaryName the runtime under test,
# SystemdCgroup false), driven by a small CRI v1 client (tests/oci/
# cri_client.py, Debian's python3-grpcio; stubs generated at test time from
# tests/oci/cri/api.proto). The runtime is $OCI_RUNTIME, else
# BUILD/cordon-oci (OCI_RUNTIME=/usr/bin/crun runs the same test on crun).
# No image is pulled: a busybox image and a "pause" image (busybox's sleep)
# are built here and imported with `ctr -n k8s.io image import`; the CRI
# plugin's sandbox_image names the local pause. The pod's network is a
# netns of its own made by containerd, given lo and an eth0 by a CNI plugin
# of the test's (tests/oci/cri/cni-plugin: a veth whose both ends stay in
# that netns), so nothing can leave it. Skips, counted, where root,
# containerd, python3-grpcio/grpc-tools, busybox or iproute2 are missing.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/oci/ctrd.sh"

RUNTIME=${OCI_RUNTIME:-${RUNTIME:-$BUILD/cordon-oci}}
CRI_CG="" # the test's pod cgroups (set by each test, removed by cri_cleanup)
PY=/usr/bin/python3

cri_skip_reason() {
	[ "$(id -u)" = 0 ] || { echo "not root (containerd and the OCI runtime need root)"; return; }
	[ -x "$RUNTIME" ] || { echo "no OCI runtime at $RUNTIME"; return; }
	local c
	c=$(ctrd_skip_reason)
	[ -z "$c" ] || { echo "$c"; return; }
	command -v busybox >/dev/null || { echo "no busybox for the images (Debian: busybox-static)"; return; }
	command -v nsenter >/dev/null && command -v ip >/dev/null || { echo "no nsenter or ip (Debian: util-linux, iproute2)"; return; }
	"$PY" -c 'import grpc, grpc_tools.protoc' 2>/dev/null || echo "no python3-grpcio and python3-grpc-tools (Debian)"
}

# cri_setup [SYSTEMD]: the images, the CNI plugin, the stubs and containerd with its
# CRI plugin, all under T_TMP/ctrd (stopped by the test's EXIT trap).
cri_setup() {
	local d=$T_TMP/ctrd r=$T_TMP/rootfs c sd=${1:-false}
	mkdir -p "$d/cni-bin" "$d/cni-conf" "$d/stubs" "$d/pods" "$r/bin" "$r/etc" "$r/dev" "$r/proc" "$r/sys" "$r/tmp"
	cp "$(command -v busybox)" "$r/bin/busybox"
	ln -s usr/lib "$r/lib" # the host's /usr, where a test binds it (curl)
	ln -s usr/lib64 "$r/lib64"
	for c in $("$r/bin/busybox" --list); do [ "$c" = busybox ] || ln -s busybox "$r/bin/$c"; done
	printf 'root:x:0:0:root:/:/bin/sh\n' >"$r/etc/passwd"
	printf 'root:x:0:\n' >"$r/etc/group"
	tar --numeric-owner --owner=0 --group=0 -C "$r" -cf "$T_TMP/rootfs.tar" .
	"$PY" "$TOP/tests/oci/cri_client.py" image "$T_TMP/rootfs.tar" "$T_TMP/busybox.tar" localhost/cordon-busybox:1 /bin/sh &&
		"$PY" "$TOP/tests/oci/cri_client.py" image "$T_TMP/rootfs.tar" "$T_TMP/pause.tar" localhost/cordon-pause:1 /bin/sleep 2147483647 ||
		{ fail "the images"; return 1; }
	cp "$TOP/tests/oci/cri/cni-plugin" "$d/cni-bin/cordon-pod"
	cp "$TOP/tests/oci/cri/cni-plugin" "$d/cni-bin/loopback"
	printf '{"cniVersion": "0.4.0", "name": "cordon-pod", "plugins": [{"type": "cordon-pod"}]}\n' >"$d/cni-conf/10-cordon.conflist"
	"$PY" -m grpc_tools.protoc -I"$TOP/tests/oci/cri" --python_out="$d/stubs" --grpc_python_out="$d/stubs" \
		"$TOP/tests/oci/cri/api.proto" 2>"$T_TMP/err" || { fail "protoc: $(cat "$T_TMP/err")"; return 1; }
	local p='plugins."io.containerd.grpc.v1.cri"'
	trap 'cri_cleanup' EXIT # the test's own subshell (t_run)
	ctrd_start "$d" "$(cat <<-TOML
		[$p]
		  sandbox_image = "localhost/cordon-pause:1"
		  disable_tcp_service = true
		  stream_server_address = "127.0.0.1"
		  stream_server_port = "0"
		  disable_apparmor = true
		  restrict_oom_score_adj = true
		  enable_selinux = false
		[$p.containerd]
		  snapshotter = "native"
		  default_runtime_name = "cordon"
		[$p.containerd.runtimes.cordon]
		  runtime_type = "io.containerd.runc.v2"
		  pod_annotations = ["run.cordon.*"]
		  container_annotations = ["run.cordon.*"]
		[$p.containerd.runtimes.cordon.options]
		  BinaryName = "$RUNTIME"
		  Root = "$d/runtime-root"
		  SystemdCgroup = $sd
		[$p.cni]
		  bin_dir = "$d/cni-bin"
		  conf_dir = "$d/cni-conf"
		  max_conf_num = 1
	TOML
	)" || return 1
	local img
	for img in busybox pause; do
		timeout -k 5 120 ctr -a "$d/sock" -n k8s.io image import --snapshotter native "$T_TMP/$img.tar" >"$T_TMP/err" 2>&1 ||
			{ fail "ctr image import $img: $(cat "$T_TMP/err")"; return 1; }
	done
}

# What a failed run leaves (nothing after a passing one): the runtime's
# containers (deleted by the runtime, after unpinning the pod's netns that
# containerd bound under /run/netns: the one whose inode is the
# container's), containerd, its shims (by the pid of those whose -address is
# this test's socket), the mounts under the test's directory, the cgroups.
cri_cleanup() {
	local d=$T_TMP/ctrd r=$T_TMP/ctrd/runtime-root/k8s.io id pid ino f
	for id in $(ls -A "$r" 2>/dev/null | grep -vx reports); do
		pid=$("$RUNTIME" --root "$r" state "$id" 2>/dev/null | jq -r '.pid // 0')
		ino=$(stat -L -c %i "/proc/$pid/ns/net" 2>/dev/null)
		# a pod holding its egress: the pod's netns is its supervisor's
		pid=$(jq -r '.supervisor // 0' "$r/$id/state.json" 2>/dev/null)
		ino="$ino $(stat -L -c %i "/proc/${pid:-0}/ns/net" 2>/dev/null)"
		for f in /run/netns/cni-*; do
			[[ " $ino " == *" $(stat -c %i "$f" 2>/dev/null) "* ]] && umount "$f" && rm -f "$f"
		done
		"$RUNTIME" --root "$r" delete --force "$id" >/dev/null 2>&1
	done
	ctrd_stop
	for pid in $(pgrep -f -- "-address $d/sock\$"); do kill -9 "$pid"; done
	awk -v t="$T_TMP/" 'index($5, t) == 1 {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do umount -l "$m"; done
	cg_rm "$CRI_CG"
}

# The cgroup directories below PARENT in every hierarchy (v1 and v2).
cg_below() {
	awk '$9 == "cgroup" || $9 == "cgroup2" {print $5}' /proc/self/mountinfo | while read -r m; do
		[ -d "$m$1" ] && find "$m$1" -mindepth 1 -type d
	done
}
cg_rm() { # PARENT: remove what the test's pods left (the parents the runtime made, once empty)
	case $1 in /?*) ;; *) return 0 ;; esac
	local up
	up=$(dirname "$1")
	awk '$9 == "cgroup" || $9 == "cgroup2" {print $5}' /proc/self/mountinfo | while read -r m; do
		[ -d "$m$1" ] && find "$m$1" -depth -type d -exec rmdir {} + 2>/dev/null
		[ "$up" = / ] || rmdir "$m$up" 2>/dev/null
	done
	return 0
}

# cri_pod SYSTEMD PARENT CGDIR: the pod's run and checks; PARENT is the
# pod's cgroup parent as the CRI gets it, CGDIR where its cgroups are.
cri_pod() {
	local why
	why=$(cri_skip_reason)
	[ -z "$why" ] || { t_skip "$why"; return; }
	cri_setup "$1" || return 1
	local d=$T_TMP/ctrd cg=$3 out
	out=$(timeout -k 5 300 "$PY" "$TOP/tests/oci/cri_client.py" pod "$d/stubs" "$d/sock" cordon \
		localhost/cordon-busybox:1 "$2" "$d/pods" "$3" 2>"$T_TMP/err")
	local rc=$?
	if [ $rc != 0 ]; then
		fail "the CRI client: $(cat "$T_TMP/err"); containerd: $(grep -i -E 'error|fail' "$d/log" | tail -4 | cut -c1-600)"
		t_assert
		return
	fi
	j() { jq -r "$1" <<<"$out"; }
	expect_eq "$(j .sandbox_state) $(j .sandbox_runtime_handler)" "SANDBOX_READY cordon" "RunPodSandbox with the cordon handler"
	expect_eq "$(j '.states | join(" ")')" "CONTAINER_RUNNING CONTAINER_RUNNING" "both containers run"
	local k m
	for k in a b; do
		m=$(j ".uid_map_$k.out")
		expect_match "$m" '^ *0 +[0-9]+ +[0-9]+' "container $k's uid_map ($(j ".uid_map_$k.err"))"
		[ "$(awk 'NR == 1 {print $2}' <<<"$m")" != 0 ] || fail "container $k's root is the host's root: $m"
	done
	# one pod, one trust domain: b runs in a's user namespace (the sandbox's)
	expect_eq "$(j .uid_map_a.out)" "$(j .uid_map_b.out)" "both containers with the sandbox's id map"
	expect_eq "$(j .netns_a.out)" "$(j .netns_b.out)" "both containers in the pod's network namespace"
	[ "$(j .netns_a.out | tr -d '\n')" != "$(readlink /proc/self/ns/net)" ] || fail "the pod's netns is the host's"
	expect_eq "$(j .fetch.rc) $(j .fetch.out)" "0 served-by-a" "b reaches a's server on 127.0.0.1 ($(j .fetch.err))"
	expect_eq "$(j .exec_status)" 3 "ExecSync's exit status"
	# the pod's cgroups where the driver puts them: the sandbox's and each
	# container's (cgroupfs: PARENT/ID; systemd: cri-containerd-ID.scope
	# below the expanded slice)
	local id want got
	got=" $(j '.cgdir | join(" ")') "
	for id in $(j .sandbox) $(j '.containers | join(" ")'); do
		if [ "$1" = true ]; then want=cri-containerd-$id.scope; else want=$id; fi
		[[ $got == *" $want "* ]] || fail "no cgroup $cg/$want while the pod runs (there: $got)"
	done
	expect_eq "$(j '.stopped | join(" ")')" "CONTAINER_EXITED CONTAINER_EXITED" "StopContainer"
	expect_eq "$(j .left.sandboxes) $(j .left.containers)" "0 0" "CRI lists nothing after the removals"
	# What the runtime made is gone: its state, its cgroups, its mounts.
	# (ROOT/reports is cordon-oci's directory of run reports, kept)
	expect_eq "$(ls -A "$d/runtime-root/k8s.io" 2>/dev/null | grep -vx reports | tr '\n' ' ')" "" "no runtime state left"
	expect_eq "$(cg_below "$cg" | tr '\n' ' ')" "" "no container cgroup left below $cg"
	expect_eq "$(awk -v t="$T_TMP/" 'index($5, t) == 1 {print $5}' /proc/self/mountinfo | tr '\n' ' ')" "" "no mount left under the test's directory"
	if [ -d /run/cordon-oci-slots ]; then
		expect_eq "$(grep -l -s -F "$d/" /run/cordon-oci-slots/* | tr '\n' ' ')" "" "no host id range left taken"
	fi
	t_assert
}

test_cri_pod_two_containers() {
	CRI_CG=/cordon-cri-test.$$
	cri_pod false "$CRI_CG" "$CRI_CG"
}

# The systemd cgroup driver where systemd is not PID 1 (SystemdCgroup true:
# the shim passes --systemd-cgroup, cgroupsPath is slice:cri-containerd:ID):
# the nested slice expanded on cgroupfs as systemd would place it.
test_cri_systemd_cgroup_driver() {
	CRI_CG=/cordoncri.slice/cordoncri-t$$.slice
	cri_pod true "cordoncri-t$$.slice" "$CRI_CG"
}

# A pod's egress (docs/kubernetes.md, "Egress in a pod"): the sandbox
# carries run.cordon.policy (a pod annotation, passed on by the runtime's
# pod_annotations), allowing 127.0.0.1:8080 and a port served on the host's
# 127.0.0.1. The pod gets a network namespace of cordon's (lo, the proxy)
# that both containers join, while the proxy's upstream connections leave
# from the pod's network namespace: the server the test starts there on
# 8080 is reached through the proxy, 8081 (not allowed) gets its 403, the
# host's loopback server is not reached (the proxy is not on the host's
# network), and nothing is reached around the proxy. The containers share
# the namespace (b fetches a's server on 127.0.0.1:7777, a loopback port
# of the policy's); the pod's address on 7777 (run.cordon.inbound), from
# the pod's network namespace as the kubelet's probes come, reaches a's
# server through the sandbox's relay, which the containers cannot reach; a
# container with a policy of its own is refused.
test_cri_pod_egress() {
	local why
	why=$(cri_skip_reason)
	[ -z "$why" ] || { t_skip "$why"; return; }
	CRI_CG=/cordon-cri-egress.$$
	cri_setup false || return 1
	local d=$T_TMP/ctrd out
	mkdir -p "$T_TMP/www/8080" "$T_TMP/www/8081" "$T_TMP/hostwww"
	echo served-in-the-pod >"$T_TMP/www/8080/index.html"
	echo not-allowed >"$T_TMP/www/8081/index.html"
	echo served-on-the-host >"$T_TMP/hostwww/index.html"
	serve http "$T_TMP/hostwww"
	local hport=$PORT srv=$SRV
	out=$(timeout -k 5 300 "$PY" "$TOP/tests/oci/cri_client.py" egress "$d/stubs" "$d/sock" cordon \
		localhost/cordon-busybox:1 "$CRI_CG" "$d/pods" "$T_TMP/www" "$hport" 2>"$T_TMP/err")
	local rc=$?
	stop "$srv"
	if [ $rc != 0 ]; then
		fail "the CRI client: $(cat "$T_TMP/err"); containerd: $(grep -i -E 'error|fail' "$d/log" | tail -4 | cut -c1-600)"
		t_assert
		return
	fi
	j() { jq -r "$1" <<<"$out"; }
	expect_eq "$(j .sandbox_state)" SANDBOX_READY "RunPodSandbox with the policy annotation"
	expect_eq "$(j .netns_a.out)" "$(j .netns_b.out)" "both containers in one network namespace"
	[ "$(j .netns_a.out | tr -d '\n')" != "$(j .pod_netns)" ] || fail "the containers are in the pod's network namespace, not cordon's"
	[ "$(j .netns_a.out | tr -d '\n')" != "$(readlink /proc/self/ns/net)" ] || fail "the containers are in the host's netns"
	local k
	for k in a b; do
		expect_eq "$(j ".env_$k.out")" "http_proxy=http://127.0.0.1:3128" "container $k's proxy variable ($(j ".env_$k.err"))"
		expect_eq "$(j ".allowed_$k.rc") $(j ".allowed_$k.out")" "0 served-in-the-pod" \
			"container $k reaches the pod's allowed server through the proxy ($(j ".allowed_$k.err"))"
		expect_match "$(j ".refused_$k.rc") $(j ".refused_$k.err")" '^[1-9][0-9]* .*403' "container $k: the endpoint not allowed, the proxy's 403"
		expect_match "$(j ".host_$k.rc") $(j ".host_$k.err")" '^[1-9][0-9]* .*502' "container $k: the host's loopback is not the proxy's network ($(j ".host_$k.out"))"
		expect_match "$(j ".direct_$k.rc")" '^[1-9]' "container $k: no way around the proxy ($(j ".direct_$k.out"))"
	done
	expect_eq "$(j .fetch.rc) $(j .fetch.out)" "0 served-by-a" "b reaches a's server on 127.0.0.1:7777 ($(j .fetch.err))"
	expect_eq "$(j .inbound.rc) $(j .inbound.out)" "0 served-by-a" \
		"the pod's address $(j .pod_ip):7777 (run.cordon.inbound), from the pod's network namespace, reaches a's server ($(j .inbound.err))"
	expect_match "$(j .inbound_inside.rc)" '^[1-9]' "from inside, the relay's listener is not reached ($(j .inbound_inside.out))"
	expect_match "$(j .differs)" 'differs from its sandbox' "a container with a policy of its own is refused"
	expect_eq "$(j .left.sandboxes) $(j .left.containers)" "0 0" "CRI lists nothing after the removals"
	expect_eq "$(ls -A "$d/runtime-root/k8s.io" 2>/dev/null | grep -vx reports | tr '\n' ' ')" "" "no runtime state left"
	expect_eq "$(awk -v t="$T_TMP/" 'index($5, t) == 1 {print $5}' /proc/self/mountinfo | tr '\n' ' ')" "" "no mount left under the test's directory"
	t_assert
}

# A pod's TLS interception and secrets (docs/kubernetes.md, "Egress in a
# pod"): the pod's policy allows GET only to an HTTPS server the test
# starts in the pod's network namespace, and injects TOKEN (a variable)
# and API (a file), whose values are in containerd's environment (the
# shim's, cordon-oci's). Both containers hold the sandbox's placeholders
# (the same in each) and its CA bundle; a GET with the token through the
# sandbox's proxy verifies against the bundle and reaches the server with
# the value, the echo comes back as the placeholder; a POST gets the
# proxy's 403, in the sandbox's report; the value is in no file of
# containerd's or the runtime's.
test_cri_pod_secrets() {
	local why
	why=$(cri_skip_reason)
	[ -z "$why" ] || { t_skip "$why"; return; }
	command -v curl >/dev/null && command -v openssl >/dev/null || { t_skip "no curl or openssl"; return; }
	CRI_CG=/cordon-cri-secrets.$$
	local tls=$T_TMP/tls value=real-value-$RANDOM$RANDOM$RANDOM-x
	mkdir -p "$tls/www/pub"
	echo pub >"$tls/www/pub/a.txt"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tls/ca.key" \
		-out "$tls/ca.pem" -days 1 -subj /CN=cordon-test-ca 2>/dev/null &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tls/srv.key" \
		-out "$tls/srv.csr" -subj /CN=localhost 2>/dev/null &&
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$tls/ext" &&
	openssl x509 -req -in "$tls/srv.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial \
		-out "$tls/srv.pem" -days 1 -extfile "$tls/ext" 2>/dev/null || { fail "the test CA"; t_assert; return; }
	# the values: containerd's environment, the shim's, cordon-oci's
	export HOST_TOKEN=$value HOST_API=$value-api
	cri_setup false || return 1
	unset HOST_TOKEN HOST_API
	local d=$T_TMP/ctrd out
	out=$(timeout -k 5 300 "$PY" "$TOP/tests/oci/cri_client.py" secrets "$d/stubs" "$d/sock" cordon \
		localhost/cordon-busybox:1 "$CRI_CG" "$d/pods" "$tls" 8443 2>"$T_TMP/err")
	local rc=$?
	if [ $rc != 0 ]; then
		fail "the CRI client: $(cat "$T_TMP/err"); containerd: $(grep -i -E 'error|fail' "$d/log" | tail -4 | cut -c1-600)"
		t_assert
		return
	fi
	j() { jq -r "$1" <<<"$out"; }
	expect_eq "$(j .sandbox_state)" SANDBOX_READY "RunPodSandbox with the policy annotation"
	local ph k
	ph=$(j .token_a.out)
	expect_match "$ph" '^ghp_[0-9a-f]{32}$' "container a's TOKEN: a placeholder ($(j .token_a.err))"
	expect_eq "$(j .token_b.out)" "$ph" "both containers hold the sandbox's placeholder"
	expect_match "$(j .api_a.out)" '^api_[0-9a-f]{32}$' "the file API: a placeholder ($(j .api_a.err))"
	expect_eq "$(j .api_b.out)" "$(j .api_a.out)" "both containers' file API: the sandbox's placeholder"
	for k in a b; do
		expect_match "$(j ".ca_$k.out" | tr '\n' ' ')" '^/run/cordon-ca/ca.pem [1-9]' "container $k: the sandbox's CA bundle ($(j ".ca_$k.err"))"
	done
	expect_eq "$(j .get.rc)" 0 "the GET through the sandbox's proxy, verified against the bundle ($(j .get.err))"
	expect_match "$(j .get.out)" "X-Echo: Bearer $ph" "an echoed value comes back as the placeholder"
	expect_match "$(j .get.out)" '(^|[[:space:]])pub([[:space:]]|$)' "the file served"
	expect_eq "$(j .post.out)" 403 "the method the rule refuses: the proxy's 403 ($(j .post.err))"
	[[ "$out" != *"$value"* ]] || fail "the value reached a container"
	expect_eq "$(grep -c -- "Bearer $value" "$tls/log")" 1 "the server got the value"
	local rep=$d/runtime-root/k8s.io/reports/$(j .sandbox).json
	[ -s "$rep" ] || fail "no sandbox report at $rep"
	expect_eq "$(jq -c '[.network.requests[] | [.method, .path, .status]]' "$rep")" \
		'[["GET","/pub/a.txt",200],["POST","/pub/a.txt",403]]' "the sandbox's report: its proxy's requests"
	expect_eq "$(jq -c '[.network.injected[] | [.secret, .count]]' "$rep")" '[["TOKEN",1]]' "the sandbox's report: the injection"
	expect_match "$(jq -c '[.denials[] | select(.kind == "network") | .target]' "$rep")" '127.0.0.1:8443' "the refusal in the sandbox's denials"
	grep -rl -- "$value" "$d" && fail "the value in a file of containerd's or the runtime's"
	expect_eq "$(j .left.sandboxes) $(j .left.containers)" "0 0" "CRI lists nothing after the removals"
	expect_eq "$(ls -A "$d/runtime-root/k8s.io" 2>/dev/null | grep -vx reports | tr '\n' ' ')" "" "no runtime state left"
	t_assert
}

t_run test_cri_pod_two_containers
t_run test_cri_pod_egress
t_run test_cri_pod_secrets
t_run test_cri_systemd_cgroup_driver
