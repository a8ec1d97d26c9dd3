# Issue 34 (cost per run): what a run no longer does to start, each checked
# by what it would leave behind (no time is measured: bench/cost.py has the
# figures), and the boundary that stays the same.
. "$(dirname "$0")/../lib.sh"

# passwd's sources beside files (nsswitch.conf): an NSS enumeration would
# load their modules.
nss_passwd_modules() { sed -n 's/#.*//; s/^passwd:[[:space:]]*//p' /etc/nsswitch.conf 2>/dev/null | tr ' ' '\n' | grep -v -e '^files$' -e '^\[' -e '^$'; }

# A run's pre-flight looks for homes in /etc/passwd as a file: no NSS module
# is loaded for it (getpwent() loaded libnss_systemd and what it links, about
# 1.5 ms of CPU per run). The dynamic loader says what it loads (LD_DEBUG).
test_cost_no_nss_module_loaded() {
	[ -n "$(nss_passwd_modules)" ] || { t_skip "passwd has no NSS source but files here"; return; }
	LD_DEBUG=files "$CORDON" run --ro "$BUILD" --workspace-mode direct -- /bin/true 2>"$T_TMP/ld.txt" ||
		fail "the run failed: $(tail -3 "$T_TMP/ld.txt")"
	local loaded
	loaded=$(grep -o 'file=libnss_[^ ]*' "$T_TMP/ld.txt" | sort -u | tr '\n' ' ')
	expect_eq "$loaded" "" "NSS modules the supervisor loaded"
	t_assert
}

# The same homes as before: an account's home of /etc/passwd that is not
# $HOME, not the owner's and has no rc file is still a home (its new
# dot-entries refused in direct mode). /etc/passwd is a copy with one more
# account, bound over the host's in a mount namespace of the test's own.
test_cost_passwd_home_still_a_home() {
	[ "$(id -u)" = 0 ] && command -v unshare >/dev/null || { t_skip "needs root and unshare(1)"; return; }
	{ cat /etc/passwd; echo "cordonacct:x:4242:4242::$WS:/bin/sh"; } >"$T_TMP/passwd"
	R="$T_TMP/r.json"
	OUT=$(unshare -m --propagation private /bin/sh -c 'mount --bind "$1" /etc/passwd && shift && exec "$@"' _ \
		"$T_TMP/passwd" "$CORDON" run --report "$R" --ro "$BUILD" --workspace-mode direct -- /bin/sh -c '
			echo x >.newdot 2>/dev/null && echo newdot
			echo x >plain && echo plain' 2>"$T_TMP/err")
	keep_report "$R"
	expect_eq "$OUT" plain "only the plain file written ($(tail -2 "$T_TMP/err"))"
	[ -e .newdot ] && fail ".newdot reached the host"
	expect_eq "$(field '[.denials[] | select(.kind=="file")] | length')" 1 "one file denial ($(field -c .denials))"
	t_assert
}

for t in $(declare -F | awk '{print $3}' | grep '^test_cost_'); do t_run "$t"; done
t_exit_status
