# A private containerd for the OCI test files (sourced after tests/lib.sh;
# engines.sh: ctr through the runc shim v2; cri.sh: its CRI plugin). Its
# socket, root and state are under DIR (the test's T_TMP/ctrd by default);
# stopped by its pid (ctrd_stop, in the test's EXIT trap).
#   ctrd_start [DIR [TOML]]: TOML is appended to the config; without it the
#   CRI plugin is disabled. Returns 1 (after `fail`) if it did not come up.
CTRD_PID=""
CTRD_DIR=""
ctrd_start() {
	local d=${1:-$T_TMP/ctrd} extra=${2:-}
	CTRD_DIR=$d
	mkdir -p "$d"
	{
		printf 'version = 2\nroot = "%s/root"\nstate = "%s/state"\n' "$d" "$d"
		[ -n "$extra" ] || printf 'disabled_plugins = ["io.containerd.grpc.v1.cri"]\n'
		printf '[grpc]\n  address = "%s/sock"\n[ttrpc]\n  address = "%s/sock.ttrpc"\n' "$d" "$d"
		printf '[debug]\n  address = ""\n[metrics]\n  address = ""\n'
		printf '%s\n' "$extra"
	} >"$d/config.toml"
	containerd --config "$d/config.toml" >"$d/log" 2>&1 &
	CTRD_PID=$!
	local i
	for i in $(seq 600); do
		ctr -a "$d/sock" version >/dev/null 2>&1 && return 0
		kill -0 "$CTRD_PID" 2>/dev/null || break
		sleep 0.1
	done
	fail "containerd did not come up: $(tail -3 "$d/log")"
	return 1
}
ctrd_stop() {
	[ -n "$CTRD_PID" ] || return 0
	kill "$CTRD_PID" 2>/dev/null
	wait "$CTRD_PID" 2>/dev/null
	CTRD_PID=""
}
# ctrd_skip_reason: why containerd cannot be started here, or nothing.
ctrd_skip_reason() {
	command -v containerd >/dev/null && command -v ctr >/dev/null || { echo "no containerd (Debian: containerd)"; return; }
	command -v containerd-shim-runc-v2 >/dev/null || echo "no containerd-shim-runc-v2 (Debian: containerd)"
}
