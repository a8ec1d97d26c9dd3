# Issue 33, connect interception (network.transparent): programs that ignore
# the proxy variables reach declared endpoints; the supervisor makes each
# connection from the host's network namespace and hands the socket in.
# Only servers the tests start on 127.0.0.1 (network.resolve pins), or on an
# address of a network namespace a test makes, are ever reached.
. "$(dirname "$0")/../lib.sh"

need_resolv_file() {
	[ -f /etc/resolv.conf ] && [ ! -L /etc/resolv.conf ] ||
		t_skip "the host's /etc/resolv.conf is not a plain file"
}

NOPROXY='unset HTTP_PROXY HTTPS_PROXY ALL_PROXY http_proxy https_proxy all_proxy NO_PROXY no_proxy'

# dnsq.py: a raw query to the run's resolver (what a name stands for when
# the run's /etc/hosts would answer first).
write_dnsq() {
	cat >dnsq.py <<'PY'
import socket, struct
def addr(name, qtype=1):
    b = struct.pack('>HHHHHH', 0x4242, 0x0100, 1, 0, 0, 0)
    for l in name.split('.'):
        b += bytes([len(l)]) + l.encode()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(10)
    s.sendto(b + b'\0' + struct.pack('>HH', qtype, 1), ('127.0.0.53', 53))
    r = s.recv(512)
    n = 4 if qtype == 1 else 16
    return socket.inet_ntop(socket.AF_INET if n == 4 else socket.AF_INET6, r[-n:])
PY
}

test_clients_reach_pinned_names() {
	need_resolv_file || return
	command -v curl >/dev/null || { t_skip "needs curl"; return; }
	mkdir www && echo hello >www/f.txt
	serve http "$WS/www"
	cat >p.json <<JSON
{"on_violation": "kill",
 "network": {"allow": ["db.internal:$PORT"], "transparent": true, "resolve": {"db.internal": "127.0.0.1"}}}
JSON
	local node=: # Node's fetch ignores proxy variables (no NODE_USE_ENV_PROXY)
	command -v node >/dev/null && node="node -e 'fetch(\"http://db.internal:$PORT/f.txt\").then(r => r.text()).then(t => process.stdout.write(\"node \" + t))'"
	cordon_run --policy p.json -- /bin/sh -c "$NOPROXY
		curl -sf --noproxy '*' http://db.internal:$PORT/f.txt
		/usr/bin/python3 -c '
import socket, urllib.request
for fam in (socket.AF_INET, socket.AF_INET6):
    a = socket.getaddrinfo(\"db.internal\", $PORT, fam, socket.SOCK_STREAM)[0]
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(a[4])
    s.sendall(b\"GET /f.txt HTTP/1.0\\r\\n\\r\\n\")
    print(a[4][0].split(\":\")[0][:6], s.getpeername()[1] == $PORT, s.makefile(\"rb\").read().split(b\"\\r\\n\\r\\n\")[1].decode(), end=\"\")
o = urllib.request.build_opener(urllib.request.ProxyHandler({}))
print(\"urllib\", o.open(\"http://db.internal:$PORT/f.txt\", timeout=30).read().decode(), end=\"\")
'
		$node"
	stop $SRV
	expect_eq "$RC" 0 "run: $ERR"
	local want=$'hello\n198.18 True hello\nfd63 True hello\nurllib hello'
	command -v node >/dev/null && want+=$'\nnode hello'
	expect_eq "$OUT" "$want" "curl, Python (IPv4 and IPv6) and urllib reach the pinned name without a proxy"
	expect_eq "$(field '.denials | length')" 0 "no denial"
	expect_eq "$(field '.verdicts.containment')" clean "a connection handed in is no violation"
	[ "$(field '.network.transparent.connections')" -ge 5 ] || fail "connections handed in: $(field -c .network.transparent)"
	expect_eq "$(field '.network.transparent.pending_max')" 64 "the bound is in the report"
	t_assert
}

test_refused_at_once_and_named() {
	need_resolv_file || return
	serve echo
	cat >p.json <<JSON
{"network": {"allow": ["db.internal:$PORT", {"host": "db.internal:$((PORT + 2))", "methods": ["GET"]}],
             "transparent": true, "resolve": {"db.internal": "127.0.0.1"}}}
JSON
	# Undeclared: another port of a declared name, a port only method
	# rules admit, an address outside (TCP and UDP, connect and sendto:
	# never sent, the run's namespace has no route). Then a connect storm
	# to 2,000 undeclared ports, each refused at once; the declared one
	# still works.
	cordon_run --policy p.json -- /usr/bin/python3 -c "
import socket, errno
def tcp(host, port):
    try:
        socket.create_connection((host, port), timeout=30).close(); return 'connected'
    except OSError as e:
        return errno.errorcode.get(e.errno, e.errno)
print(tcp('db.internal', $PORT + 1), tcp('db.internal', $PORT + 2), tcp('192.0.2.1', 80))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for f in (lambda: u.sendto(b'x', ('192.0.2.1', 443)), lambda: u.connect(('192.0.2.1', 444))):
    try:
        f(); print('sent')
    except OSError as e:
        print(errno.errorcode.get(e.errno, e.errno))
a = socket.getaddrinfo('db.internal', 1, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
n = 0
for p in range(20000, 22000):
    s = socket.socket()
    try:
        s.connect((a, p))
    except ConnectionRefusedError:
        n += 1
    s.close()
print('storm', n)
s = socket.create_connection(('db.internal', $PORT), timeout=30)
s.sendall(b'ping'); print(s.recv(4).decode())"
	stop $SRV
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$OUT" $'ECONNREFUSED connected ECONNREFUSED\nECONNREFUSED\nECONNREFUSED\nstorm 2000\nping' \
		"every undeclared connect and datagram refused at once (the port method rules admit goes to the proxy)"
	local t
	t=$(field -c '[.denials[].target]')
	expect_match "$t" "\"db.internal:$((PORT + 1))\"" "the refused port named with the name"
	expect_match "$t" '"192.0.2.1:80"' "an address outside, with its port"
	expect_match "$t" '"192.0.2.1:443"' "a datagram outside"
	expect_match "$t" '"db.internal:20000"' "the storm's first"
	# create_connection tries both of a name's addresses (AAAA and A)
	expect_eq "$(field '.network.transparent.refused')" 2002 "refused by the rules"
	expect_eq "$(field '.network.transparent.connections')" 2 "the two declared"
	expect_eq "$(field '.network.transparent.proxied')" 1 "the one method rules admit, through the proxy"
	t_assert
}

# slow_listener: a port whose accept queue is full and never drained: a
# connect to it stays under way (its SYNs dropped) until the run ends.
slow_listener() { # -> SLOWPORT, SLOWSRV
	local pf="$T_TMP/slow.port"
	/usr/bin/python3 -c '
import socket, sys, time, os
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(0)
held = []
for _ in range(4):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(l.getsockname())
    except BlockingIOError: pass
    held.append(c)
time.sleep(0.5)
open(sys.argv[1] + ".tmp", "w").write(str(l.getsockname()[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(120)' "$pf" &
	SLOWSRV=$!
	for _ in $(seq 1200); do [ -s "$pf" ] && break; sleep 0.05; done
	SLOWPORT=$(cat "$pf")
}

test_pending_connects_never_hold_the_rest() {
	need_resolv_file || return
	serve echo
	slow_listener
	cat >p.json <<JSON
{"network": {"allow": ["db.internal:$PORT", "slow.test:$SLOWPORT"], "transparent": true,
             "resolve": {"db.internal": "127.0.0.1", "slow.test": "127.0.0.1"}}}
JSON
	# A blocking connect that cannot finish, in a thread; once it is in
	# connect(2), the declared echo port is reached, and a nonblocking
	# connect to the slow port is under way at once (EINPROGRESS). Then 70
	# more blocking connects to the slow port: 63 wait (64 at once, the
	# first included), the other 7 are refused at once.
	cordon_run --policy p.json -- /usr/bin/python3 -c "
import socket, threading, os, time, errno, ctypes
done = []
tids = []
a = socket.getaddrinfo('slow.test', $SLOWPORT, socket.AF_INET, socket.SOCK_STREAM)[0][4]
def slow():
    tids.append(ctypes.CDLL(None).gettid())
    try:
        socket.socket().connect(a); done.append('connected')
    except OSError as e:
        done.append(errno.errorcode.get(e.errno, e.errno))
threading.Thread(target=slow, daemon=True).start()
import platform
nr = {'x86_64': '42 ', 'aarch64': '203 '}.get(platform.machine(), '42 ')
end = time.monotonic() + 60
while (not tids or not open('/proc/self/task/%d/syscall' % tids[0]).read().startswith(nr)) and time.monotonic() < end:
    time.sleep(0.01)
s = socket.create_connection(('db.internal', $PORT))
s.sendall(b'ping'); print(s.recv(4).decode(), 'while the slow one waits:', not done, flush=True)
n = socket.socket(); n.setblocking(False)
print('nonblocking', errno.errorcode[n.connect_ex(a)], flush=True)
for _ in range(70):
    threading.Thread(target=slow, daemon=True).start()
end = time.monotonic() + 60
while len(done) < 7 and time.monotonic() < end:
    time.sleep(0.01)
time.sleep(0.2)
print(sorted(done), flush=True)
os._exit(0)"
	stop $SRV $SLOWSRV
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$OUT" $'ping while the slow one waits: True\nnonblocking EINPROGRESS\n[\'ECONNREFUSED\', \'ECONNREFUSED\', \'ECONNREFUSED\', \'ECONNREFUSED\', \'ECONNREFUSED\', \'ECONNREFUSED\', \'ECONNREFUSED\']' \
		"a connect under way holds neither the observer nor other connects; 64 wait at most"
	expect_eq "$(field '.network.transparent.over_limit')" 7 "past the bound, counted"
	expect_eq "$(field '.denials | length')" 0 "the bound is no denial"
	t_assert
}

# in_test_netns SCRIPT: runs sh SCRIPT in a network namespace of the test's
# own (lo up, 192.0.2.1 on it) with /etc/hosts and /etc/resolv.conf bound
# over (the files in T_TMP): the supervisor's "outside" is that namespace,
# so a name that resolves to 192.0.2.1 is reached without a packet leaving.
in_test_netns() {
	unshare -mn /bin/sh -c 'ip link set lo up && ip addr add 192.0.2.1/32 dev lo &&
		mount --bind "$1/hosts" /etc/hosts && mount --bind "$1/resolv.conf" /etc/resolv.conf && exec sh "$2"' \
		_ "$T_TMP" "$1"
}

test_names_looked_up_as_the_proxy_does() {
	need_resolv_file || return
	unshare -mn true 2>/dev/null || { t_skip "no network and mount namespaces"; return; }
	command -v ip >/dev/null || { t_skip "needs ip (iproute2)"; return; }
	printf '192.0.2.1 far.test\n127.0.0.1 near.test localhost\n' >"$T_TMP/hosts"
	printf 'nameserver 127.0.0.1\n' >"$T_TMP/resolv.conf" # refused at once: nothing listens
	write_dnsq
	cat >p.json <<'JSON'
{"network": {"allow": ["far.test:7", "near.test:7", "gone.test:7", "192.0.2.1:8"], "transparent": true}}
JSON
	R="$T_TMP/r.json"
	cat >inner.sh <<SH
/usr/bin/python3 -c '
import socket, threading, os, time
def echo(l):
    while True:
        c, _ = l.accept(); c.sendall(c.recv(16)); c.close()
for p in (7, 8):
    l = socket.socket(); l.bind(("192.0.2.1", p)); l.listen(8)
    threading.Thread(target=echo, args=(l,), daemon=True).start()
open("ready", "w").close()
time.sleep(60)' </dev/null >/dev/null 2>&1 &
srv=\$!
for i in \$(seq 1200); do [ -e ready ] && break; sleep 0.05; done
"$CORDON" run --report "$R" --ro "$BUILD" --policy p.json -- /usr/bin/python3 -c '
import socket, errno, dnsq
def tcp(addr, port):
    s = socket.socket()
    s.settimeout(30)
    try:
        s.connect((addr, port)); s.sendall(b"ping"); return s.recv(4).decode()
    except OSError as e:
        return errno.errorcode.get(e.errno, e.errno)
for n in ("far.test", "near.test", "gone.test"):
    print(n, tcp(dnsq.addr(n), 7))
print("literal", tcp("192.0.2.1", 8), tcp("192.0.2.1", 9))'
echo "rc=\$?"
kill \$srv
SH
	OUT=$(in_test_netns inner.sh 2>&1)
	keep_report "$R"
	expect_eq "$OUT" $'far.test ping\nnear.test ECONNREFUSED\ngone.test EHOSTUNREACH\nliteral ping ECONNREFUSED\nrc=0' \
		"a name is looked up outside and reached; loopback refused as by the proxy; no answer, unreachable"
	local t
	t=$(field -c '[.denials[].target]')
	expect_match "$t" '"near.test:7 \(it resolves to a loopback' "the address check's refusal, named"
	expect_match "$t" '"192.0.2.1:9"' "an undeclared port of the literal"
	expect_eq "$(field '.network.transparent.failed')" 1 "the name that did not resolve"
	expect_eq "$(field '.network.transparent.connections')" 2 "far.test and the literal"
	t_assert
}

test_host_loopback_endpoint_and_the_runs_own() {
	need_resolv_file || return
	serve echo
	cat >p.json <<JSON
{"network": {"allow": ["127.0.0.1:$PORT"], "transparent": true}}
JSON
	# A declared host-loopback endpoint is the host's, until the run
	# listens on that port itself: then its own server wins.
	cordon_run --policy p.json -- /usr/bin/python3 -c "
import socket, errno, threading
def ask(port):
    try:
        s = socket.create_connection(('127.0.0.1', port), timeout=30)
        s.sendall(b'ping'); return s.recv(4).decode()
    except OSError as e:
        return errno.errorcode.get(e.errno, e.errno)
print('host', ask($PORT), ask($PORT + 1))
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(('127.0.0.1', $PORT)); l.listen(4)
def own():
    c, _ = l.accept(); c.recv(4); c.sendall(b'own!'); c.close()
threading.Thread(target=own, daemon=True).start()
print('run', ask($PORT))"
	stop $SRV
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$OUT" $'host ping ECONNREFUSED\nrun own!' "the host's endpoint, then the run's own listener"
	expect_eq "$(field -c '[.denials[].target]')" "[\"127.0.0.1:$((PORT + 1))\"]" "the undeclared loopback port"
	t_assert
}

# A connection handed in has no relay: its bytes are the kernel's counts,
# read when the socket is freed (one closed by both sides) or, still open
# at the end (a peer that never closes), looked up then.
test_bytes_counted_on_the_direct_path() {
	need_resolv_file || return
	serve echo
	local echo=$PORT esrv=$SRV
	serve hold
	local hold=$PORT hsrv=$SRV
	cat >p.json <<JSON
{"network": {"allow": ["db.internal:$echo", "hold.internal:$hold"], "transparent": true,
             "resolve": {"db.internal": "127.0.0.1", "hold.internal": "127.0.0.1"}}}
JSON
	cordon_run --policy p.json -- /usr/bin/python3 -c "
import socket
for n in (100000, 5000):
    s = socket.create_connection(('db.internal', $echo), timeout=30)
    s.sendall(b'x' * n); s.shutdown(socket.SHUT_WR)
    got = 0
    while True:
        d = s.recv(65536)
        if not d:
            break
        got += len(d)
    s.close(); print(got)
h = socket.create_connection(('hold.internal', $hold), timeout=30)
h.sendall(b'y' * 777)
"
	stop $esrv $hsrv
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$OUT" $'100000\n5000' "echoed"
	expect_eq "$(field -c ".network.endpoints[] | select(.target == \"db.internal:$echo\") | [.connections, .bytes_up, .bytes_down]")" \
		'[2,105000,105000]' "the echo endpoint's counts: $(field -c .network)"
	expect_eq "$(field -c ".network.endpoints[] | select(.target == \"hold.internal:$hold\") | [.connections, .bytes_up, .bytes_down]")" \
		'[1,777,0]' "the held one's, still open at the end: $(field -c .network)"
	expect_eq "$(field -c '[.network.connections, .network.bytes_up, .network.transparent.uncounted]')" '[3,105777,0]' "the totals"
	t_assert
}

# A host-loopback endpoint with method/path rules: read by the proxy too.
test_host_loopback_endpoint_with_rules() {
	need_resolv_file || return
	command -v curl >/dev/null || { t_skip "needs curl"; return; }
	mkdir -p www/pub && echo pub >www/pub/a.txt && echo priv >www/priv.txt
	serve http "$WS/www"
	cat >p.json <<JSON
{"network": {"allow": [{"host": "127.0.0.1:$PORT", "methods": ["GET"], "paths": ["/pub/**"]}], "transparent": true}}
JSON
	cordon_run --policy p.json -- /bin/sh -c "$NOPROXY
		curl -sS --noproxy '*' http://127.0.0.1:$PORT/pub/a.txt
		curl -s --noproxy '*' -o /dev/null -w 'path %{http_code}\n' http://127.0.0.1:$PORT/priv.txt"
	stop $SRV
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$OUT" $'pub\npath 403' "the host's loopback, its requests read"
	expect_match "$(field -c '[.denials[].target]')" "\"GET 127.0.0.1:$PORT/priv.txt\"" "the refused path on record"
	expect_eq "$(field '.network.transparent.proxied')" 2 "both through the proxy"
	t_assert
}

# One decision: every kind of rule, through the proxy (curl with the proxy
# variables) and through the transparent path (curl --noproxy '*'), the
# same answer and the same denial, but for the one difference still left
# (a port that method/path rules scope: through the proxy only).
test_one_decision_through_both_paths() {
	need_resolv_file || return
	command -v curl >/dev/null || { t_skip "needs curl"; return; }
	mkdir www && echo hello >www/f.txt
	serve http "$WS/www"
	local p=$PORT
	cat >p.json <<JSON
{"network": {"allow": ["exact.test:$p", "*.wild.test:$p", "any.test:*", "127.0.0.1:$p",
                       {"host": "scoped.test:$p", "methods": ["GET"]}],
             "transparent": true,
             "resolve": {"exact.test": "127.0.0.1", "a.wild.test": "127.0.0.1", "wild.test": "127.0.0.1",
                         "any.test": "127.0.0.1", "scoped.test": "127.0.0.1", "other.test": "127.0.0.1"}}}
JSON
	local cases="exact.test:$p exact.test:$((p + 1)) a.wild.test:$p any.test:$p 127.0.0.1:$p scoped.test:$p other.test:$p"
	local script='for t in '"$cases"'; do
		c=$(curl -s -o /dev/null -w "%{http_code}" $CURLOPT "http://$t/f.txt")
		case $c in 200) echo "$t allowed";; *) echo "$t refused";; esac
	done'
	cordon_run --policy p.json -- /bin/sh -c "CURLOPT=; $script"
	local via_proxy=$OUT proxy_denials
	proxy_denials=$(field -r '[.denials[].target] | sort | join(" ")')
	cordon_run --policy p.json -- /bin/sh -c "set -f; $NOPROXY; CURLOPT='--noproxy *'; $script"
	local direct=$OUT direct_denials
	direct_denials=$(field -r '[.denials[].target | sub(" \\(.*"; "")] | sort | join(" ")')
	stop $SRV
	expect_eq "$via_proxy" "exact.test:$p allowed
exact.test:$((p + 1)) refused
a.wild.test:$p allowed
any.test:$p allowed
127.0.0.1:$p allowed
scoped.test:$p allowed
other.test:$p refused" "through the proxy"
	expect_eq "$direct" "$via_proxy" "the same through the transparent path"
	expect_eq "$proxy_denials" "exact.test:$((p + 1)) other.test:$p" "the proxy's denials"
	expect_eq "$direct_denials" "dns other.test exact.test:$((p + 1))" \
		"the same denials (an undeclared name refused by DNS first)"
	t_assert
}

# A port that method/path rules scope: its requests are read. On the
# transparent path the run's connection goes to the proxy (sup-handoff.h),
# which reads it as it reads a CONNECT to the name and port: plain HTTP in
# origin form, each request on a keep-alive connection checked on its own,
# the Host checked against the name, what is not HTTP refused; the bytes
# counted for the endpoint as through the proxy.
test_read_ports_go_through_the_proxy() {
	need_resolv_file || return
	command -v curl >/dev/null || { t_skip "needs curl"; return; }
	mkdir -p www/pub && echo pub >www/pub/a.txt && echo priv >www/priv.txt
	serve http "$WS/www"
	cat >p.json <<JSON
{"network": {"allow": [{"host": "scoped.test:$PORT", "methods": ["GET"], "paths": ["/pub/**"]}],
             "transparent": true, "resolve": {"scoped.test": "127.0.0.1"}}}
JSON
	cordon_run --policy p.json -- /bin/sh -c "$NOPROXY
		curl -sS --noproxy '*' http://scoped.test:$PORT/pub/a.txt
		curl -s --noproxy '*' -o /dev/null -w 'post %{http_code}\n' -X POST -d x http://scoped.test:$PORT/pub/a.txt
		curl -s --noproxy '*' -o /dev/null -w 'path %{http_code}\n' http://scoped.test:$PORT/priv.txt
		curl -s --noproxy '*' -o /dev/null -w 'host %{http_code}\n' -H 'Host: other.test:$PORT' http://scoped.test:$PORT/pub/a.txt
		/usr/bin/python3 -c '
import http.client, socket
c = http.client.HTTPConnection(\"scoped.test\", $PORT, timeout=30)
c.request(\"GET\", \"/pub/a.txt\"); r = c.getresponse(); print(\"first\", r.status, r.read().decode().strip())
c.request(\"GET\", \"/priv.txt\"); r = c.getresponse(); print(\"second\", r.status)
s = socket.create_connection((\"scoped.test\", $PORT), timeout=30)
s.sendall(b\"\\x00\\x01 not http\\r\\n\\r\\n\")
print(\"garbage\", s.recv(64).split(b\"\\r\\n\")[0].decode())
'"
	stop $SRV
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$OUT" $'pub\npost 403\npath 403\nhost 403\nfirst 200 pub\nsecond 403\ngarbage HTTP/1.1 400 Bad Request' \
		"read by the proxy: the rules apply to each request"
	local t
	t=$(field -c '[.denials[].target]')
	expect_match "$t" "\"POST scoped.test:$PORT/pub/a.txt\"" "the refused method on record"
	expect_match "$t" "\"GET scoped.test:$PORT/priv.txt\"" "the refused path on record"
	expect_match "$t" "\"GET scoped.test:$PORT/pub/a.txt \\(a Host other than the connection's authority\\)\"" \
		"the Host not the name looked up, on record"
	expect_eq "$(field '.network.transparent.proxied')" 7 "each connection went to the proxy"
	expect_eq "$(field -c '[.network.requests[] | select(.status == 200) | .path]')" '["/pub/a.txt","/pub/a.txt"]' "the request log"
	[ "$(field ".network.endpoints[] | select(.target == \"scoped.test:$PORT\") | .bytes_down")" -gt 0 ] ||
		fail "bytes counted for the endpoint: $(field -c .network.endpoints)"
	t_assert
}

# A test CA and a certificate for secure.test signed by it, in $T_TMP.
make_secure_ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T_TMP/ca.key" \
		-out "$T_TMP/ca.pem" -days 1 -subj /CN=cordon-test-ca 2>/dev/null &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T_TMP/srv.key" \
		-out "$T_TMP/srv.csr" -subj /CN=secure.test 2>/dev/null &&
	printf 'subjectAltName=DNS:secure.test\n' >"$T_TMP/ext" &&
	openssl x509 -req -in "$T_TMP/srv.csr" -CA "$T_TMP/ca.pem" -CAkey "$T_TMP/ca.key" -CAcreateserial \
		-out "$T_TMP/srv.pem" -days 1 -extfile "$T_TMP/ext" 2>/dev/null || fail "make the test CA"
}

# A port a secret is injected to, over HTTPS, without proxy variables: the
# proxy opens the TLS (the first byte a handshake), checks the requests,
# puts the value in place of its placeholder; the run never holds it.
test_injected_secret_on_the_transparent_path() {
	need_resolv_file || return
	command -v curl >/dev/null || { t_skip "needs curl"; return; }
	command -v openssl >/dev/null || { t_skip "needs openssl"; return; }
	make_secure_ca
	mkdir -p www/pub && echo pub >www/pub/a.txt
	local pf="$T_TMP/port.tls"
	/usr/bin/python3 "$TOP/tests/tlsserver.py" "$pf" "$T_TMP/log" "$T_TMP/srv.pem" "$T_TMP/srv.key" "$WS/www" &
	SRV=$!
	server_port "$pf"
	local value=real-value-$RANDOM$RANDOM-x
	cat >p.json <<JSON
{"network": {"allow": [{"host": "secure.test:$PORT", "methods": ["GET"], "paths": ["/pub/**"]}],
             "upstream_ca": "$T_TMP/ca.pem", "transparent": true, "resolve": {"secure.test": "127.0.0.1"}},
 "secrets": {"TOKEN": {"env": "HOST_TOKEN", "inject": {"hosts": ["secure.test:$PORT"], "placeholder": "ghp_"}}}}
JSON
	HOST_TOKEN=$value cordon_run --policy p.json -- /bin/sh -c "$NOPROXY
		curl -sS --noproxy '*' -H \"Authorization: Bearer \$TOKEN\" https://secure.test:$PORT/pub/a.txt
		curl -s --noproxy '*' -o /dev/null -w 'post %{http_code}\n' -X POST https://secure.test:$PORT/pub/a.txt
		/usr/bin/python3 -c '
import urllib.request
o = urllib.request.build_opener(urllib.request.ProxyHandler({}))
print(\"urllib\", o.open(\"https://secure.test:$PORT/pub/a.txt\", timeout=30).read().decode().strip())'"
	stop $SRV
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$OUT" $'pub\npost 403\nurllib pub' "HTTPS opened by the proxy, the rules applied"
	expect_eq "$(grep -c "Bearer $value" "$T_TMP/log")" 1 "the upstream saw the value"
	expect_eq "$(grep -c ghp_ "$T_TMP/log")" 0 "no placeholder reached the upstream"
	expect_eq "$(jq -r .sni "$T_TMP/log" | sort -u)" secure.test "the upstream was asked for the name (SNI)"
	expect_eq "$(grep -caF "$value" "$R")" 0 "the value is not in the report"
	expect_match "$(field -c '[.denials[].target]')" "\"POST secure.test:$PORT/pub/a.txt\"" "the refused method on record"
	expect_eq "$(field -c '.network.injected')" "[{\"secret\":\"TOKEN\",\"host\":\"secure.test:$PORT\",\"count\":1}]" "the injection counted"
	expect_eq "$(field '.network.transparent.proxied')" 3 "each connection went to the proxy"
	t_assert
}

# git over ssh: ssh ignores the proxy variables. No sshd is needed to see
# that the run's git and ssh reach the declared endpoint: the test's server
# speaks the first line of SSH (the version exchange) and records the
# client's; the rest of the handshake fails, as it would against any
# server the client does not know.
test_git_over_ssh_reaches_the_endpoint() {
	need_resolv_file || return
	command -v git >/dev/null && command -v ssh >/dev/null || { t_skip "needs git and ssh"; return; }
	local pf="$T_TMP/ssh.port"
	/usr/bin/python3 -c '
import socket, sys, os
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(4)
open(sys.argv[1] + ".tmp", "w").write(str(l.getsockname()[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
l.settimeout(60)
c, _ = l.accept()
c.sendall(b"SSH-2.0-cordon_test\r\n")
c.settimeout(30)
line = b""
while not line.endswith(b"\n"):
    d = c.recv(1)
    if not d:
        break
    line += d
open(sys.argv[1] + ".client", "wb").write(line)' "$pf" &
	SRV=$!
	server_port "$pf"
	cat >p.json <<JSON
{"network": {"allow": ["git.internal:$PORT"], "transparent": true, "resolve": {"git.internal": "127.0.0.1"}}}
JSON
	cordon_run --policy p.json -- /bin/sh -c "$NOPROXY; HOME=/tmp GIT_SSH_COMMAND='ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=30' \
		git ls-remote ssh://git@git.internal:$PORT/repo.git >/dev/null 2>&1; echo git \$?"
	wait $SRV
	expect_eq "$OUT" "git 128" "git over ssh ran (and failed past the version exchange)"
	expect_match "$(cat "$pf.client" 2>/dev/null)" '^SSH-2\.0-OpenSSH' "the run's ssh reached the endpoint"
	expect_eq "$(field '.denials | length')" 0 "no denial"
	t_assert
}

# Outside review (attack8): a socket handed in lives in the host's network
# namespace. Disconnected (connect AF_UNSPEC) or failed, it must never be
# given back to the kernel's connect, to TCP Fast Open's (sendto/sendmsg
# with MSG_FASTOPEN and an address, which Landlock does not see) or to
# listen: each would reach, or open, the host's network undecided. The
# secret server on an undeclared host-loopback port is never reached.
test_handed_in_socket_is_never_reused() {
	need_resolv_file || return
	serve echo
	local echo=$PORT esrv=$SRV
	mkdir www && echo secret >www/s.txt
	serve http "$WS/www"
	local web=$PORT wsrv=$SRV
	cat >p.json <<JSON
{"network": {"allow": ["db.internal:$echo"], "transparent": true, "resolve": {"db.internal": "127.0.0.1"}}}
JSON
	cordon_run --policy p.json -- /usr/bin/python3 -c "
import ctypes, errno, socket
libc = ctypes.CDLL(None, use_errno=True)
def unspec(s):
    a = ctypes.create_string_buffer(16)  # sa_family 0: AF_UNSPEC
    r = libc.connect(s.fileno(), a, 16)
    return 'ok' if r == 0 else errno.errorcode.get(ctypes.get_errno(), '?')
def handed():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(30); s.connect(('db.internal', $echo))
    s.sendall(b'ping'); assert s.recv(4) == b'ping'
    s.settimeout(None)  # blocking: Fast Open's connect is over before it returns
    return s
def get(f):
    try:
        f()
        s.shutdown(socket.SHUT_WR)  # the echo server, if that is where it went, ends too
        return 'reached' if b'secret' in s.makefile('rb').read() else 'nothing'
    except OSError as e:
        return errno.errorcode.get(e.errno, repr(e))
req = b'GET /s.txt HTTP/1.0\r\n\r\n'
# The run listens on the secret's port in its own namespace (its own
# loopback server would win over the host's).
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    l.bind(('127.0.0.1', $web)); l.listen(4)
except OSError:
    pass
s = handed(); u = unspec(s)
print('connect', u, get(lambda: (s.connect(('127.0.0.1', $web)), s.sendall(req))))
s = handed(); u = unspec(s)
print('sendto', u, get(lambda: s.sendto(req, socket.MSG_FASTOPEN, ('127.0.0.1', $web))))
s = handed(); u = unspec(s)
print('sendmsg', u, get(lambda: s.sendmsg([req], [], socket.MSG_FASTOPEN, ('127.0.0.1', $web))))
s = handed(); u = unspec(s)
try:
    s.listen(1); print('listen', u, 'listening', s.getsockname()[1])
except OSError as e:
    print('listen', u, errno.errorcode.get(e.errno, e.errno))
# Closed by both sides (or a connect that failed): the socket is back to
# CLOSE, of the host's namespace, its port given back.
def closed():
    s = handed(); s.shutdown(socket.SHUT_WR)
    while s.recv(64):
        pass
    return s
s = closed()
print('closed sendmsg', get(lambda: s.sendmsg([req], [], socket.MSG_FASTOPEN, ('127.0.0.1', $web))))
s = closed()
print('closed sendto', get(lambda: s.sendto(req, socket.MSG_FASTOPEN, ('127.0.0.1', $web))))
for what, f in (('listen', lambda s: s.listen(1)), ('bind', lambda s: s.bind(('0.0.0.0', 0)))):
    s = closed()
    try:
        f(s); print('closed', what, 'listening' if what == 'listen' else 'bound', s.getsockname())
    except OSError as e:
        print('closed', what, errno.errorcode.get(e.errno, e.errno))
"
	stop $esrv $wsrv
	expect_eq "$RC" 0 "run: $ERR $(field -c '[.denials[].target]') $(field -c .network.transparent)"
	expect_nomatch "$OUT" 'reached|listening|bound' "a handed-in socket reused: $OUT"
	expect_match "$OUT" $'closed listen (EOPNOTSUPP|ENOTSUP)\nclosed bind (EOPNOTSUPP|ENOTSUP)' "listen and bind refused on it: $OUT"
	expect_match "$OUT" 'closed sendmsg (EOPNOTSUPP|ENOTSUP)' "Fast Open's connect refused: $OUT"
	expect_match "$OUT" '^connect (EOPNOTSUPP|ENOTSUP)' "the disconnect refused: $OUT"
	t_assert
}

# A blocking connect (no timeout: the socket is blocking) to a port whose
# requests the proxy reads is over when it returns, never EINPROGRESS
# (outside review, attack9: the supervisor's nonblocking connect to the
# hand-off listener was answered as it was).
test_blocking_connect_to_a_read_port() {
	need_resolv_file || return
	mkdir -p www/pub && echo pub >www/pub/a.txt
	serve http "$WS/www"
	cat >p.json <<JSON
{"network": {"allow": [{"host": "scoped.test:$PORT", "methods": ["GET"], "paths": ["/pub/**"]}],
             "transparent": true, "resolve": {"scoped.test": "127.0.0.1"}}}
JSON
	cordon_run --policy p.json -- /usr/bin/python3 -c "
import errno, socket
for fam in (socket.AF_INET, socket.AF_INET6):
    s = socket.socket(fam, socket.SOCK_STREAM)
    try:
        s.connect(socket.getaddrinfo('scoped.test', $PORT, fam, socket.SOCK_STREAM)[0][4])
    except OSError as e:
        print('connect', errno.errorcode.get(e.errno, e.errno)); continue
    s.sendall(b'GET /pub/a.txt HTTP/1.1\\r\\nHost: scoped.test:$PORT\\r\\nConnection: close\\r\\n\\r\\n')
    print('got', s.makefile('rb').read().split(b'\\r\\n\\r\\n', 1)[-1].decode().strip())
"
	stop $SRV
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$OUT" $'got pub\ngot pub' "a blocking connect to a read port is connected when it returns"
	expect_eq "$(field '.network.transparent.proxied')" 2 "through the proxy: $(field -c .network.transparent)"
	t_assert
}

# A connection still there at the run's end is looked up: its bytes
# received are exactly those, not one less (outside review, attack9: the
# run's own close sets the socket's RCV_SHUTDOWN, which was read as the
# peer's FIN and taken off). The peer reads nothing, so what the run sent
# last stays queued and its FIN unsent: the socket outlives the run.
test_bytes_of_connections_the_run_left_open() {
	need_resolv_file || return
	serve hold 55
	cat >p.json <<JSON
{"network": {"allow": ["hold.internal:$PORT"], "transparent": true, "resolve": {"hold.internal": "127.0.0.1"}}}
JSON
	cordon_run --policy p.json -- /usr/bin/python3 -c "
import socket
keep = []
for i in range(3):
    h = socket.create_connection(('hold.internal', $PORT), timeout=30)
    got = b''
    while len(got) < 55:
        got += h.recv(55 - len(got))
    print(len(got), end=' ')
    h.setblocking(False)
    try:
        while True:
            h.send(b'y' * 65536)  # until the peer's window and ours are full
    except BlockingIOError:
        pass
    keep.append(h)
"
	stop $SRV
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$OUT" '55 55 55 ' "read what the server sent"
	expect_eq "$(field -c ".network.endpoints[] | select(.target == \"hold.internal:$PORT\") | [.connections, .bytes_down]")" \
		'[3,165]' "the counts of connections the peer never closed: $(field -c .network)"
	expect_eq "$(field '.network.transparent.uncounted')" 0 "all counted"
	t_assert
}

# The hand-off table (lib/sup-handoff.c: 64 connections to a read port
# announced and not yet taken by the proxy) full: a connect past it is
# refused at once and counted in network.transparent.over_limit. The proxy
# is the supervisor's main thread: the test stops that thread alone
# (PTRACE_SEIZE + PTRACE_INTERRUPT; the observer thread keeps answering
# connects) while the run makes 100 nonblocking connects, then lets it go.
# The run's refusals are the report's count (an announcement older than
# 10 s may be taken over on a very slow host: hence no fixed number).
test_hand_off_table_full_counted() {
	need_resolv_file || return
	serve http "$WS"
	local sync="$T_TMP/sync"
	mkdir "$sync"
	cat >p.json <<JSON
{"network": {"allow": [{"host": "scoped.test:$PORT", "methods": ["GET"], "paths": ["/pub/**"]}],
             "transparent": true, "resolve": {"scoped.test": "127.0.0.1"}}}
JSON
	R="$T_TMP/r.json"
	# direct: the run's writes to $sync are seen at once (overlay mode keeps them to the end)
	"$CORDON" run --workspace-mode direct --report "$R" --ro "$BUILD" --rw "$sync" --policy p.json -- /usr/bin/python3 -c "
import errno, os, socket, time
a = socket.getaddrinfo('scoped.test', $PORT, socket.AF_INET, socket.SOCK_STREAM)[0][4]  # the resolver is the main thread's
open('$sync/ready', 'w').close()
end = time.monotonic() + 120
while not os.path.exists('$sync/stopped') and not os.path.exists('$sync/skip') and time.monotonic() < end:
    time.sleep(0.02)
if os.path.exists('$sync/stopped'):
    socks, refused = [], 0
    for _ in range(100):
        s = socket.socket(); s.setblocking(False)
        r = s.connect_ex(a)
        refused += r == errno.ECONNREFUSED
        socks.append(s)
    print('refused', refused)
open('$sync/done', 'w').close()" >"$T_TMP/out" 2>"$T_TMP/err" &
	local cpid=$!
	local i
	for i in $(seq 1200); do [ -e "$sync/ready" ] && break; sleep 0.05; done
	# (a run that never got ready is waited for, and fails below)
	[ -e "$sync/ready" ] && /usr/bin/python3 - "$cpid" "$sync" <<'PY' 2>"$T_TMP/tracer.err"
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
pid = int(sys.argv[1])
os.chdir(sys.argv[2])
SEIZE, INTERRUPT, DETACH = 0x4206, 0x4207, 17
if libc.ptrace(SEIZE, pid, None, None) != 0 or libc.ptrace(INTERRUPT, pid, None, None) != 0:
    open('skip', 'w').close()
    sys.exit('ptrace: ' + os.strerror(ctypes.get_errno()))
os.waitpid(pid, 0x40000000)  # __WALL: the main thread alone is stopped
open('stopped', 'w').close()
end = time.monotonic() + 120
while not os.path.exists('done') and time.monotonic() < end:
    time.sleep(0.02)
libc.ptrace(DETACH, pid, None, 0)
PY
	wait $cpid
	RC=$?
	stop $SRV
	OUT=$(cat "$T_TMP/out")
	keep_report "$R"
	[ -e "$sync/skip" ] && { t_skip "cannot stop the supervisor's thread: $(cat "$T_TMP/tracer.err")"; return; }
	expect_eq "$RC" 0 "run: $(cat "$T_TMP/err")"
	expect_match "$OUT" '^refused [1-9][0-9]*$' "connects past the table refused at once: $(cat "$T_TMP/err" "$T_TMP/tracer.err")"
	expect_eq "$(field '.network.transparent.over_limit')" "${OUT#refused }" \
		"each refusal counted: $(field -c .network.transparent)"
	expect_eq "$(field '.denials | length')" 0 "the bound is no denial"
	t_assert
}

for t in test_clients_reach_pinned_names test_refused_at_once_and_named test_pending_connects_never_hold_the_rest \
	test_read_ports_go_through_the_proxy test_injected_secret_on_the_transparent_path \
	test_names_looked_up_as_the_proxy_does test_host_loopback_endpoint_and_the_runs_own \
	test_host_loopback_endpoint_with_rules test_bytes_counted_on_the_direct_path \
	test_one_decision_through_both_paths test_git_over_ssh_reaches_the_endpoint \
	test_handed_in_socket_is_never_reused test_blocking_connect_to_a_read_port \
	test_bytes_of_connections_the_run_left_open test_hand_off_table_full_counted; do
	t_run $t
done
