# What the cordon-oci test files share (sourced after ../lib.sh): the
# runtime under test, a busybox bundle, the set-up that skips where the host
# cannot run them, the runtime's call and a bounded wait.
OCI=${OCI_CORDON:-$BUILD/cordon-oci}

# oci_bundle DIR HOSTNAME APPLETS CAPS FLAGS [ARGS...]: a busybox rootfs
# (busybox-static, scripts/packages/test.txt) with APPLETS (space-separated)
# linked, and a config.json running ARGS as uid 0 with its own pid, mount,
# ipc and uts namespaces, /proc and a /dev tmpfs. CAPS: a jq array of
# capability names, or "" for the runtime's default. FLAGS: words, "net"
# (a network namespace of its own too) and "masked" (/proc/kcore masked,
# /proc/sys read-only).
oci_bundle() {
	local dir=$1 host=$2 applets=$3 caps=$4 flags=" $5 " a
	shift 5
	mkdir -p "$dir/rootfs/bin" "$dir/rootfs/proc" "$dir/rootfs/dev" "$dir/rootfs/sys" "$dir/rootfs/tmp" "$dir/rootfs/etc"
	cp "$BUSYBOX" "$dir/rootfs/bin/busybox"
	for a in $applets; do ln -sf busybox "$dir/rootfs/bin/$a"; done
	chown -R 0:0 "$dir/rootfs"
	local args
	# `--`: jq 1.6 takes options among --args' (sh's -c would become jq's)
	args=$(jq -cn '$ARGS.positional' --args -- "$@")
	jq -n --argjson args "$args" --arg host "$host" --argjson caps "${caps:-null}" \
		--argjson net "$([[ $flags == *" net "* ]] && echo true || echo false)" \
		--argjson masked "$([[ $flags == *" masked "* ]] && echo true || echo false)" '{
	  ociVersion: "1.0.2",
	  root: {path: "rootfs", readonly: false},
	  hostname: $host,
	  process: ({args: $args, cwd: "/", env: ["PATH=/bin"], user: {uid: 0, gid: 0}} +
	            (if $caps then {capabilities: {bounding: $caps, effective: $caps, permitted: $caps}} else {} end)),
	  mounts: [{destination: "/proc", type: "proc", source: "proc"},
	           {destination: "/dev", type: "tmpfs", source: "tmpfs", options: ["nosuid", "mode=755"]}],
	  linux: ({namespaces: ([{type: "pid"}, {type: "mount"}, {type: "ipc"}, {type: "uts"}] +
	                        (if $net then [{type: "network"}] else [] end))} +
	          (if $masked then {maskedPaths: ["/proc/kcore"], readonlyPaths: ["/proc/sys"]} else {} end))
	}' >"$dir/config.json"
}

# oci_setup [PREFIX]: skips (counted) without cordon-oci, a static busybox
# or user namespaces; sets ROOT (the runtime's state), B (the bundle) and ID.
oci_setup() {
	[ -x "$OCI" ] || { t_skip "no cordon-oci at $OCI"; return; }
	BUSYBOX=$(command -v busybox 2>/dev/null || true)
	[ -n "$BUSYBOX" ] && ! ldd "$BUSYBOX" >/dev/null 2>&1 ||
		{ t_skip "no static busybox (apt-get install busybox-static)"; return; }
	[ -e /proc/self/ns/user ] || { t_skip "no user namespaces"; return; }
	ROOT=$T_TMP/root
	B=$WS/b
	ID=${1:-t}-$$-$RANDOM
}

# oci ARGS...: the runtime with --root ROOT, stdin /dev/null; sets RC, OUT, ERR
oci() {
	OUT=$("$OCI" --root "$ROOT" "$@" 2>"$T_TMP/err" </dev/null)
	RC=$?
	ERR=$(cat "$T_TMP/err")
}

# wait_for FILE: until FILE exists, at most ~30 s (a bound for a loaded
# 2-core machine, not a timing); 1 if it never came
wait_for() {
	local _
	for _ in $(seq 600); do [ -e "$1" ] && return 0; sleep 0.05; done
	return 1
}
