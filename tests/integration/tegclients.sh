# Issue 33 (items 2 and 8): real clients through transparent egress
# (network.transparent): dig and host against the run's resolver, a full
# git clone over ssh from a loopback sshd, musl's resolver (a static client
# built with musl-gcc) and Go's own (CGO_ENABLED=0). Each skips where its
# tool is missing. Only servers the tests start on 127.0.0.1 are reached
# (network.resolve pins).
. "$(dirname "$0")/../lib.sh"

need_resolv_file() {
	[ -f /etc/resolv.conf ] && [ ! -L /etc/resolv.conf ] ||
		t_skip "the host's /etc/resolv.conf is not a plain file"
}

NOPROXY='unset HTTP_PROXY HTTPS_PROXY ALL_PROXY http_proxy https_proxy all_proxy NO_PROXY no_proxy'
CLIENTS="$TOP/tests/clients"

# The run's DNS denials alone (a client may also read a /sys file the
# run's policy does not grant: not this file's concern).
dns_denials() { field -r '[.denials[].target | select(startswith("dns "))] | sort | join(",")'; }

test_dig_and_host() {
	need_resolv_file || return
	command -v dig >/dev/null && command -v host >/dev/null || { t_skip "needs dig and host (bind9-dnsutils)"; return; }
	cat >p.json <<'JSON'
{"network": {"allow": ["db.internal:5432", "*.svc.test:443"], "transparent": true}}
JSON
	# A and AAAA over UDP and TCP, a wildcard's name, an undeclared name
	# (NXDOMAIN, both transports); host asks A, AAAA and MX (an empty
	# answer) of a declared name, and stops at the undeclared one's NXDOMAIN.
	cordon_run --policy p.json -- /bin/sh -c '
		for t in +notcp +tcp; do
			echo "$t $(dig $t +short db.internal A) $(dig $t +short db.internal AAAA) $(dig $t +short a.svc.test A)"
			dig $t evil.test A | grep -o "status: [A-Z]*"
		done
		host db.internal; host -T a.svc.test; host evil.test; echo "host $?"'
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$OUT" "+notcp 198.18.0.1 fd63:6f72:646e::1 198.18.0.2
status: NXDOMAIN
+tcp 198.18.0.1 fd63:6f72:646e::1 198.18.0.2
status: NXDOMAIN
db.internal has address 198.18.0.1
db.internal has IPv6 address fd63:6f72:646e::1
a.svc.test has address 198.18.0.2
a.svc.test has IPv6 address fd63:6f72:646e::2
Host evil.test not found: 3(NXDOMAIN)
host 1" "synthetic addresses for declared names, NXDOMAIN for the rest, over UDP and TCP"
	# dig: 2 x (3 + 1); host: 3 + 3 + 1
	expect_eq "$(field -c '.network.dns | [.queries, .answered, .refused, .names]')" "[15,12,3,2]" "network.dns counts"
	expect_eq "$(dns_denials)" "dns evil.test" "the undeclared name, one denial"
	t_assert
}

# A loopback sshd of the test's own (its host key, sshd_config,
# authorized key and PidFile in T_TMP; root's login with the test's key
# only): no host-wide change. sshd wants its privilege separation
# directory, /run/sshd; where the host has none, sshd runs in a mount
# namespace of its own with a tmpfs on /run holding one.
start_sshd() { # DIR -> PORT, SRV (or returns 1, the reason in $SSHD_WHY)
	local d=$1 i
	ssh-keygen -q -t ed25519 -N '' -C cordon-test-host -f "$d/hostkey" &&
		ssh-keygen -q -t ed25519 -N '' -C cordon-test -f "$d/id" && cp "$d/id.pub" "$d/authorized_keys" || {
		SSHD_WHY="ssh-keygen failed"
		return 1
	}
	for i in 1 2 3; do
		PORT=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		cat >"$d/sshd_config" <<EOF
Port $PORT
ListenAddress 127.0.0.1
HostKey $d/hostkey
PidFile $d/sshd.pid
AuthorizedKeysFile $d/authorized_keys
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
EOF
		: >"$d/sshd.log"
		if [ -d /run/sshd ]; then
			/usr/sbin/sshd -D -e -f "$d/sshd_config" 2>"$d/sshd.log" &
		else
			unshare -m /bin/sh -c 'mount -t tmpfs -o mode=755 cordon-test /run && mkdir -m 755 /run/sshd &&
				exec /usr/sbin/sshd -D -e -f "$1"' _ "$d/sshd_config" 2>"$d/sshd.log" &
		fi
		SRV=$!
		for _ in $(seq 1200); do
			grep -q "Server listening" "$d/sshd.log" && return 0
			kill -0 $SRV 2>/dev/null || break
			sleep 0.05
		done
		stop $SRV # the port taken meanwhile, say: another
	done
	SSHD_WHY="sshd did not start: $(tail -2 "$d/sshd.log")"
	return 1
}

test_git_clone_over_ssh_from_loopback_sshd() {
	need_resolv_file || return
	[ -x /usr/sbin/sshd ] || { t_skip "needs /usr/sbin/sshd (openssh-server)"; return; }
	command -v git >/dev/null && command -v ssh >/dev/null && command -v ssh-keygen >/dev/null ||
		{ t_skip "needs git, ssh and ssh-keygen"; return; }
	[ "$(id -u)" = 0 ] || { t_skip "sshd's login is root's: needs root"; return; }
	[ -d /run/sshd ] || unshare -m true 2>/dev/null || { t_skip "no /run/sshd and no mount namespace"; return; }
	# The served repository: one commit, its file's content checked.
	git init -q --bare "$T_TMP/repo.git" && git init -q src &&
		echo "cloned over ssh" >src/f.txt && git -C src add f.txt &&
		git -C src -c user.name=t -c user.email=t@t.test commit -qm first &&
		git -C src push -q "$T_TMP/repo.git" HEAD:refs/heads/main &&
		git -C "$T_TMP/repo.git" symbolic-ref HEAD refs/heads/main || { fail "the test's repository"; t_assert; return; }
	# The client's key and known_hosts, in the workspace the run sees.
	mkdir sshd
	start_sshd "$WS/sshd" || { fail "$SSHD_WHY"; t_assert; return; }
	T_SERVERS+=("$SRV")
	trap stop_servers EXIT
	cp sshd/id id && chmod 600 id
	echo "[git.internal]:$PORT $(cut -d' ' -f1,2 sshd/hostkey.pub)" >known_hosts
	cat >p.json <<JSON
{"network": {"allow": ["git.internal:$PORT"], "transparent": true, "resolve": {"git.internal": "127.0.0.1"}}}
JSON
	cordon_run --policy p.json -- /bin/sh -c "$NOPROXY; export HOME=/tmp
		GIT_SSH_COMMAND='ssh -i $WS/id -o IdentitiesOnly=yes -o BatchMode=yes -o UserKnownHostsFile=$WS/known_hosts -o StrictHostKeyChecking=yes -o ConnectTimeout=30' \
			git clone -q ssh://root@git.internal:$PORT$T_TMP/repo.git /tmp/c || exit
		cat /tmp/c/f.txt; git -C /tmp/c log --format=%s"
	stop $SRV
	# Without PAM, sshd refuses an account whose password is locked ("!"):
	# root's login is the only one the test may use (no host-wide change).
	grep -q "account is locked" sshd/sshd.log && { t_skip "root's account is locked: sshd refuses its login"; return; }
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$OUT" $'cloned over ssh\nfirst' "the clone has the served content"
	expect_match "$(cat sshd/sshd.log)" "Accepted publickey for root from 127\\.0\\.0\\.1" "sshd took the test's key"
	expect_eq "$(field '.denials | length')" 0 "no denial"
	expect_eq "$(field '.network.transparent.connections')" 1 "ssh's connection handed in"
	t_assert
}

# What the musl and Go clients print: each family's address (its first 6
# characters) and the echo server's line, then the undeclared name's error.
test_musl_resolver() {
	need_resolv_file || return
	command -v musl-gcc >/dev/null || { t_skip "needs musl-gcc (musl-tools)"; return; }
	musl-gcc -static -O2 -Wall -Werror -o client "$CLIENTS/resolve.c" || { fail "musl-gcc"; t_assert; return; }
	serve echo
	cat >p.json <<JSON
{"network": {"allow": ["db.internal:$PORT"], "transparent": true, "resolve": {"db.internal": "127.0.0.1"}}}
JSON
	cordon_run --policy p.json -- ./client db.internal "$PORT" evil.test
	stop $SRV
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$OUT" $'v4 198.18 ping\nv6 fd63:6 ping\nundeclared Name does not resolve' \
		"musl's getaddrinfo gets the synthetic addresses, the connects are handed in"
	# A, AAAA, then A and AAAA of the undeclared name
	expect_eq "$(field -c '.network.dns | [.queries, .answered, .refused]')" "[4,2,2]" "network.dns counts"
	expect_eq "$(dns_denials)" "dns evil.test" "the undeclared name"
	expect_eq "$(field '.network.transparent.connections')" 2 "both connects handed in"
	t_assert
}

# Go's own resolver: built offline (stdlib only, GOPROXY=off), its build
# cache outside the clone so CI compiles the standard library once.
test_go_resolver() {
	need_resolv_file || return
	command -v go >/dev/null || { t_skip "needs go (golang-go)"; return; }
	local cache=${CORDON_TEST_CACHE:-/var/cache/cordon-tests}/go-build
	mkdir -p "$cache" || { t_skip "no cache directory $cache"; return; }
	cp -r "$CLIENTS/goresolve" src
	(cd src && CGO_ENABLED=0 GOPROXY=off GOFLAGS= GOTOOLCHAIN=local GOCACHE="$cache" GOPATH="$T_TMP/gopath" \
		go build -o "$WS/client" .) || { fail "go build"; t_assert; return; }
	serve echo
	cat >p.json <<JSON
{"network": {"allow": ["db.internal:$PORT"], "transparent": true, "resolve": {"db.internal": "127.0.0.1"}}}
JSON
	cordon_run --policy p.json -- ./client db.internal "$PORT" evil.test
	stop $SRV
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$OUT" $'ip4 198.18 ping\nip6 fd63:6 ping\ndial ping\nundeclared not found' \
		"Go's resolver gets the synthetic addresses; a lookup, a dial by name, an undeclared name"
	# A, AAAA, the dial's A and AAAA, the undeclared name's A and AAAA
	expect_eq "$(field -c '.network.dns | [.queries, .answered, .refused]')" "[6,4,2]" "network.dns counts"
	expect_eq "$(dns_denials)" "dns evil.test" "the undeclared name"
	expect_eq "$(field '.network.transparent.connections')" 3 "every connect handed in"
	t_assert
}

for t in test_dig_and_host test_git_clone_over_ssh_from_loopback_sshd test_musl_resolver test_go_resolver; do
	t_run $t
done
