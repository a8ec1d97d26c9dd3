# Issue 4: egress only to declared endpoints, through the supervisor's
# proxy; every attempt on record. Servers run on the host's 127.0.0.1 only.
. "$(dirname "$0")/../lib.sh"
NETSERVER="$TOP/tests/netserver.py"

serve() { # KIND ARGS... -> sets PORT, SRV
	local pf="$T_TMP/port.$RANDOM"
	/usr/bin/python3 "$NETSERVER" "$1" "$pf" "${@:2}" &
	SRV=$!
	for _ in $(seq 100); do [ -s "$pf" ] && break; sleep 0.05; done
	PORT=$(cat "$pf")
}
stop() { kill "$@" 2>/dev/null; wait "$@" 2>/dev/null; }

test_http_clients_through_proxy() {
	mkdir www && echo hello >www/f.txt
	serve http "$WS/www"
	cordon_run --net 127.0.0.1:$PORT -- /bin/sh -c "
		curl -sf http://127.0.0.1:$PORT/f.txt
		/usr/bin/python3 -c 'import urllib.request; print(urllib.request.urlopen(\"http://127.0.0.1:$PORT/f.txt\").read().decode(), end=\"\")'
		curl -sf -p http://127.0.0.1:$PORT/f.txt"
	stop $SRV
	expect_eq "$OUT" $'hello\nhello\nhello' "curl (forward), urllib, curl (CONNECT)"
	expect_eq "$(field .network.connections)" 3 "connections counted"
	expect_eq "$(field '.network.endpoints[0].target')" "127.0.0.1:$PORT" "endpoint"
	[ "$(field .network.bytes_down)" -gt 0 ] || fail "bytes down"
	[ "$(field .network.bytes_up)" -gt 0 ] || fail "bytes up"
	expect_eq "$(field .verdicts.containment)" clean "no denials"
	t_assert
}

test_package_managers_through_proxy() {
	python3 -c 'import pip' 2>/dev/null && command -v npm >/dev/null ||
		{ t_skip "needs pip and npm (python3-pip, npm)"; return; }
	# requests, pip and npm, unchanged: they find the proxy in the environment.
	mkdir -p www/simple/demo && echo hello >www/f.txt
	/usr/bin/python3 - <<'PY'
import base64, hashlib, zipfile
name = 'demo-1.0-py3-none-any.whl'
files = {'demo/__init__.py': b'',
         'demo-1.0.dist-info/METADATA': b'Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n',
         'demo-1.0.dist-info/WHEEL': b'Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n'}
def h(v):
    return base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b'=').decode()
record = ''.join('%s,sha256=%s,%d\n' % (k, h(v), len(v)) for k, v in files.items()) + 'demo-1.0.dist-info/RECORD,,\n'
with zipfile.ZipFile('www/simple/demo/' + name, 'w') as z:
    for k, v in files.items():
        z.writestr(k, v)
    z.writestr('demo-1.0.dist-info/RECORD', record)
open('www/simple/demo/index.html', 'w').write('<a href="%s">%s</a>\n' % (name, name))
PY
	serve http "$WS/www"
	printf '{"name":"demo-npm","dist-tags":{"latest":"1.4.2"},"versions":{"1.4.2":{"name":"demo-npm","version":"1.4.2","dist":{"tarball":"http://127.0.0.1:%s/demo-npm-1.4.2.tgz"}}}}' \
		"$PORT" >www/demo-npm
	cordon_run --net 127.0.0.1:$PORT -- /bin/sh -c "
		/usr/bin/python3 -c 'import requests; print(requests.get(\"http://127.0.0.1:$PORT/f.txt\").text, end=\"\")'
		/usr/bin/python3 -m pip download -q --no-deps --no-cache-dir --disable-pip-version-check \
			--index-url http://127.0.0.1:$PORT/simple/ -d dl demo && ls dl
		npm_config_cache=\$PWD/.npm npm_config_update_notifier=false \
			npm view demo-npm version --registry http://127.0.0.1:$PORT/"
	stop $SRV
	expect_eq "$OUT" $'hello\ndemo-1.0-py3-none-any.whl\n1.4.2' "requests, pip download, npm view: $ERR"
	[ "$(field .network.connections)" -ge 4 ] || fail "connections through the proxy: $(field .network.connections)"
	expect_eq "$(field .verdicts.containment)" clean "no denials: $(field -c .denials)"
	t_assert
}

test_git_over_http() {
	git init -q --bare srv.git && git init -q src && (cd src && git -c user.email=a@b -c user.name=n commit -q --allow-empty -m first && git push -q ../srv.git HEAD:master) && (cd srv.git && git update-server-info)
	serve http "$WS"
	cordon_run --net 127.0.0.1:$PORT -- /bin/sh -c "git clone -q http://127.0.0.1:$PORT/srv.git cl && git -C cl log --format=%s"
	stop $SRV
	expect_eq "$OUT" first "cloned through the proxy: $ERR"
	t_assert
}

test_raw_socks5_client() {
	serve echo
	cordon_run --net 127.0.0.1:$PORT -- /usr/bin/python3 -c "
import socket, struct
s = socket.create_connection(('127.0.0.1', 3128))
s.sendall(b'\x05\x01\x00'); assert s.recv(2) == b'\x05\x00'
s.sendall(b'\x05\x01\x00\x01' + socket.inet_aton('127.0.0.1') + struct.pack('>H', $PORT))
r = s.recv(10); assert r[1] == 0, r
s.sendall(b'ping'); print(s.recv(4).decode())
s2 = socket.create_connection(('127.0.0.1', 3128))
s2.sendall(b'\x05\x01\x00'); s2.recv(2)
s2.sendall(b'\x05\x01\x00\x03\x0bexample.org\x00\x50')
print('refused', s2.recv(10)[1])"
	stop $SRV
	expect_eq "$OUT" $'ping\nrefused 2' "socks5 connect and refusal"
	expect_match "$(field '[.denials[].target] | join(",")')" "example.org:80" "refusal recorded"
	t_assert
}

test_other_port_denied_at_once() {
	serve echo
	cordon_run --net 127.0.0.1:$PORT -- /usr/bin/python3 -c "
import socket, time
t = time.time()
s = socket.create_connection(('127.0.0.1', 3128))
s.sendall(b'CONNECT 127.0.0.1:$((PORT + 1)) HTTP/1.1\r\nHost: x\r\n\r\n')
r = s.recv(200).decode()
print(r.split()[1], round(time.time() - t, 3) < 1.0)"
	stop $SRV
	expect_eq "$OUT" "403 True" "403 answered immediately"
	expect_eq "$(field '.denials[] | select(.kind=="network") | .target')" "127.0.0.1:$((PORT + 1))" "denial"
	t_assert
}

test_direct_connect_fails_and_is_reported() {
	serve echo
	cordon_run --net 127.0.0.1:$PORT -- /usr/bin/python3 -c "
import socket
for a in (('127.0.0.1', $PORT), ('10.1.2.3', 443)):
    try:
        socket.create_connection(a, timeout=2); print('reached', a)
    except OSError as e:
        print('failed', e.errno)
# A datagram to an address of its own choosing (DNS, say): no route, on record.
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.sendto(b'q', ('10.1.2.4', 53)); print('sent')
except OSError as e:
    print('udp failed', e.errno)
# On the run's own loopback a datagram stays inside: not a denial.
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.bind(('127.0.0.1', 0))
u.sendto(b'local', r.getsockname())
print('local', r.recv(10))
# Nor a connect()ed datagram socket there, from the main thread or another.
import threading
def udp_connect():
    c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    c.connect(r.getsockname())
    c.send(b'c')
udp_connect()
t = threading.Thread(target=udp_connect); t.start(); t.join()
print('connected', r.recv(10), r.recv(10))"
	stop $SRV
	expect_nomatch "$OUT" "reached|sent" "a direct connection or datagram got through"
	expect_match "$OUT" "udp failed 101" "the datagram found no route (ENETUNREACH)"
	expect_match "$OUT" "local b'local'" "datagrams on the run's own loopback work"
	expect_match "$OUT" "connected b'c' b'c'" "connected datagram sockets on the run's own loopback work"
	expect_eq "$(field '[.denials[] | select(.kind=="network") | .target] | sort | join(",")')" "10.1.2.3:443,10.1.2.4:53,127.0.0.1:$PORT" "all three recorded, the local datagram not"
	t_assert
}

test_no_net_means_nothing() {
	serve echo
	cordon_run -- /bin/sh -c "env | grep -ci proxy; curl -s -m 2 http://127.0.0.1:$PORT/ || echo unreachable; curl -s -m 2 http://93.184.216.34/ || echo unreachable"
	stop $SRV
	expect_eq "$OUT" $'0\nunreachable\nunreachable' "no proxy, no route"
	expect_eq "$(field .network)" null "no proxy ran"
	expect_match "$(field '[.denials[] | select(.kind=="network") | .target] | join(",")')" "127.0.0.1:$PORT" "attempt recorded"
	t_assert
}

# Name resolution under test control: cordon runs in a private mount
# namespace whose /etc/hosts maps test names to the host's loopback.
with_hosts() {
	printf '127.0.0.1 evil.test a.wild.test b.wild.test\n127.0.0.1 localhost\n' >"$T_TMP/hosts"
	unshare -m /bin/sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$T_TMP/hosts" "$@"
}

test_name_to_loopback_refused_wildcards_match() {
	serve echo
	R="$T_TMP/r.json"
	OUT=$(with_hosts "$CORDON" run --report "$R" --net evil.test:$PORT --net "*.wild.test:$PORT" --net localhost:$PORT -- /usr/bin/python3 -c "
import socket
for h in ('evil.test', 'a.wild.test', 'localhost', 'other.test'):
    s = socket.create_connection(('127.0.0.1', 3128))
    s.sendall(b'CONNECT %s:$PORT HTTP/1.1\r\n\r\n' % h.encode())
    print(s.recv(1000).decode().split('\r\n\r\n', 1)[1].strip())" 2>&1)
	keep_report "$R"
	stop $SRV
	expect_eq "$(printf '%s\n' "$OUT" | grep -c 'resolves to a loopback')" 3 "evil.test, a.wild.test (wildcard matched) and localhost refused after resolution"
	expect_match "$OUT" "other.test:$PORT: not a declared endpoint" "an undeclared name"
	expect_eq "$(field '[.denials[] | select(.kind=="network") | .target] | sort | join(",")')" \
		"a.wild.test:$PORT,evil.test:$PORT,localhost:$PORT,other.test:$PORT" "denials"
	t_assert
}

test_literal_loopback_rule_reaches_host() {
	serve echo
	cordon_run --net "127.0.0.1:$PORT" -- /bin/sh -c 'env | grep -c NO_PROXY'
	stop $SRV
	expect_eq "$OUT" 0 "loopback names left out of NO_PROXY for a host-loopback endpoint"
	t_assert
}

test_slow_and_stuck_clients_do_not_stall_others() {
	serve big 64
	local big=$PORT bsrv=$SRV
	mkdir www && echo small >www/s.txt
	serve http "$WS/www"
	cordon_run --net 127.0.0.1:$big --net 127.0.0.1:$PORT -- /usr/bin/python3 -c "
import socket, time, urllib.request
stuck = socket.create_connection(('127.0.0.1', 3128))
stuck.sendall(b'CONNECT 127.0.0.1:$big HTTP/1.1\r\n\r\n')
stuck.recv(100)            # and never read again: 64 MiB waiting
slow = socket.create_connection(('127.0.0.1', 3128))
slow.sendall(b'CONNECT 127.0.0.1:$PORT HTTP/1.1\r\n')   # a slow client, header unfinished
t = time.time()
for i in range(5):
    assert urllib.request.urlopen('http://127.0.0.1:$PORT/s.txt').read() == b'small\n'
print('ok', round(time.time() - t, 2) < 3)"
	stop $SRV $bsrv
	expect_eq "$OUT" "ok True" "other connections went on: $ERR"
	t_assert
}

test_proxy_buffers_are_bounded() {
	# 100 streams that the run never reads: each would grow its pipe to
	# 1 MiB (100 MiB pinned in the supervisor); the budget holds them to 64 MiB.
	serve big 32
	"$BUILD/cordon" run --report "$T_TMP/r.json" --net 127.0.0.1:$PORT -- /usr/bin/python3 -c "
import socket, time
conns = []
for i in range(100):
    s = socket.create_connection(('127.0.0.1', 3128))
    s.sendall(b'CONNECT 127.0.0.1:$PORT HTTP/1.1\r\n\r\n')
    s.recv(39)
    conns.append(s)
open('ready', 'w').close()
time.sleep(4)" >/dev/null 2>&1 &
	local sup=$!
	for _ in $(seq 100); do [ -e ready ] && break; sleep 0.1; done
	sleep 1.5
	local sizes
	sizes=$(/usr/bin/python3 -c "
import fcntl, os, sys
d = '/proc/%s/fd' % sys.argv[1]
total = big = 0
seen = set()  # both ends of a pipe are one pipe
for n in os.listdir(d):
    try:
        link = os.readlink(os.path.join(d, n))
        if not link.startswith('pipe:') or link in seen:
            continue
        seen.add(link)
        fd = os.open(os.path.join(d, n), os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        continue
    sz = fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
    os.close(fd)
    total += sz
    big = max(big, sz)
print(total >> 20, big >> 10)" "$sup")
	wait $sup
	stop $SRV
	local total=${sizes% *} big=${sizes#* }
	expect_eq "$([ -e ready ] && echo yes)" yes "the run opened its 100 connections"
	expect_eq "$big" 1024 "a stream that fills its pipe gets a 1 MiB pipe (largest: $big KiB)"
	expect_eq "$([ "$total" -le 65 ] && echo within)" within "all pipes of the supervisor: $total MiB (budget 64 MiB)"
	t_assert
}

test_200_concurrent_connections() {
	serve echo
	cordon_run --net 127.0.0.1:$PORT --pids-limit 512 -- /usr/bin/python3 -c "
import socket, threading
ok = []
def one(i):
    s = socket.create_connection(('127.0.0.1', 3128), timeout=20)
    s.sendall(b'CONNECT 127.0.0.1:$PORT HTTP/1.1\r\n\r\n')
    assert s.recv(100).startswith(b'HTTP/1.1 200')
    msg = b'conn %d ' % i * 100
    s.sendall(msg)
    got = b''
    while len(got) < len(msg):
        got += s.recv(65536)
    assert got == msg
    ok.append(i)
ts = [threading.Thread(target=one, args=(i,)) for i in range(200)]
[t.start() for t in ts]; [t.join() for t in ts]
print(len(ok))"
	stop $SRV
	expect_eq "$OUT" 200 "all 200 echoed: $ERR"
	expect_eq "$(field .network.connections)" 200 "counted"
	t_assert
}

test_explain_and_ceiling_for_endpoints() {
	echo '{"network": {"allow": ["*.pypi.org:443"]}}' >"$T_TMP/c.json"
	cordon_run --ceiling "$T_TMP/c.json" --net files.pythonhosted.org:443 -- /bin/true
	expect_eq "$(field .status)" unauthorized "endpoint beyond the ceiling"
	local e
	e=$("$CORDON" explain --json --net "x.example:443")
	expect_eq "$(printf '%s' "$e" | jq -r '.network[0]')" "x.example:443" "explain lists endpoints"
	t_assert
}

test_unprivileged_user_all_layers() {
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U true 2>/dev/null; then
		t_skip "unprivileged user namespaces are disabled on this host"; return
	fi
	serve echo
	chmod 777 "$WS"
	echo '{"enforcement": {"allow_weaker": ["cgroup"]}}' >w.json
	local r=$WS/r.json
	OUT=$(U_TOKEN=unprivileged-secret-1 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$CORDON" run --policy w.json --report "$r" --ro "$BUILD" --secret U_TOKEN --net 127.0.0.1:$PORT --memory-limit 64M -- \
		/bin/sh -c 'echo "$U_TOKEN"; unshare -U true 2>/dev/null; '"$BUILD/bench-net latency $PORT 3 3128 >/dev/null && echo proxied" 2>&1)
	stop $SRV
	R=$r
	keep_report "$R"
	expect_eq "$OUT" $'[REDACTED:U_TOKEN]\nproxied' "secret redacted, proxy reached"
	expect_eq "$(field .status)" ok "status"
	expect_eq "$(field '.denials[0].target')" "unshare(CLONE_NEWUSER)" "seccomp denial reported"
	[ "$(field .enforcement.landlock_abi)" -gt 0 ] || fail "landlock not applied"
	expect_eq "$(field .enforcement.cgroup)" none "no cgroup for an ordinary user on v1"
	expect_eq "$(field .enforcement.sandbox_host_uid)" 65534 "runs as the invoking user"
	t_assert
}

test_explain_endpoints_agree_with_run() {
	# explain lists the endpoints; the run reaches exactly those.
	serve echo
	local a=$PORT asrv=$SRV
	serve echo
	local b=$PORT bsrv=$SRV
	local listed
	listed=$("$CORDON" explain --json --net "127.0.0.1:$a" | jq -r '.network | join(" ")')
	expect_eq "$listed" "127.0.0.1:$a" "explain's endpoints"
	cordon_run --net "127.0.0.1:$a" -- /usr/bin/python3 -c "
import socket
for port in ($a, $b):
    s = socket.create_connection(('127.0.0.1', 3128))
    s.sendall(b'CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n' % port)
    print(port, s.recv(12).decode().split()[1])"
	stop $asrv $bsrv
	expect_eq "$OUT" "$a 200"$'\n'"$b 403" "reachable exactly as explained"
	t_assert
}

for t in test_explain_endpoints_agree_with_run test_unprivileged_user_all_layers test_http_clients_through_proxy test_git_over_http test_raw_socks5_client \
	test_package_managers_through_proxy test_other_port_denied_at_once test_direct_connect_fails_and_is_reported test_no_net_means_nothing \
	test_name_to_loopback_refused_wildcards_match test_literal_loopback_rule_reaches_host \
	test_slow_and_stuck_clients_do_not_stall_others test_proxy_buffers_are_bounded test_200_concurrent_connections \
	test_explain_and_ceiling_for_endpoints; do
	t_run $t
done
