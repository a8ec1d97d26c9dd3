# Issue 4: egress only to declared endpoints, through the supervisor's
# proxy; every attempt on record. Servers run on the host's 127.0.0.1 only.
. "$(dirname "$0")/../lib.sh"
# serve KIND ARGS... (netserver.py) and stop: tests/lib.sh.

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
	# A clone writes a config and hooks: .git unprotected (README, "Protected paths").
	cordon_run --net 127.0.0.1:$PORT --unprotect .git -- /bin/sh -c "git clone -q http://127.0.0.1:$PORT/srv.git cl && git -C cl log --format=%s"
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
	expect_eq "$(printf '%s\n' "$OUT" | grep -c 'resolves to a loopback')" 2 "evil.test and a.wild.test (wildcard matched) refused after resolution"
	expect_match "$OUT" "other.test:$PORT: not a declared endpoint" "an undeclared name"
	expect_eq "$(field '[.denials[] | select(.kind=="network") | .target] | sort | join(",")')" \
		"a.wild.test:$PORT,evil.test:$PORT,other.test:$PORT" "denials (the literal rule localhost is the host's loopback)"
	expect_eq "$(field '[.network.endpoints[] | .target] | join(",")')" "localhost:$PORT" "names refused after resolution are no endpoints (only the literal localhost rule connected)"
	expect_eq "$(field .network.connections)" 1 "one connection"
	t_assert
}

test_literal_loopback_rule_reaches_host() {
	serve echo
	cordon_run --net "127.0.0.1:$PORT" -- /bin/sh -c 'env | grep -c NO_PROXY'
	stop $SRV
	expect_eq "$OUT" 0 "loopback names left out of NO_PROXY for a host-loopback endpoint"
	t_assert
}

# Issue 12.5: the literal name localhost in a rule is the host's loopback,
# like 127.0.0.1: it passes validate and explain, and connections reach it.
test_localhost_rule_reaches_host() {
	mkdir www && echo hello >www/f.txt
	serve http "$WS/www"
	echo "{\"network\": {\"allow\": [\"localhost:$PORT\"]}}" >p.json
	"$CORDON" validate p.json >/dev/null || fail "validate"
	expect_match "$("$CORDON" explain --policy p.json)" "localhost:$PORT" "explain lists it"
	cordon_run --policy p.json -- /bin/sh -c "
		curl -sf http://localhost:$PORT/f.txt
		curl -sf -p http://localhost:$PORT/f.txt
		curl -sf http://127.0.0.1:$PORT/f.txt
		curl -sf -m 5 http://localhost:$((PORT + 1))/f.txt || echo refused"
	stop $SRV
	expect_eq "$OUT" $'hello\nhello\nhello\nrefused' "forward and CONNECT to localhost, and 127.0.0.1, reach the host; another port does not"
	expect_eq "$(field '[.denials[] | .target] | join(",")')" "localhost:$((PORT + 1))" "only the other port refused"
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
	# Then, once those pipes have grown all they can, 100 more streams: each
	# starts at one page a pipe, and the budget still holds (it was passed
	# by 8 KiB a connection when growth had taken all of it).
	# The proxy's pipes are those of which the supervisor holds both ends;
	# the command's stdout and stderr (1 MiB each, sup-stream.c) are not in
	# the budget, and counting them left 1 MiB between pass and fail.
	serve big 32
	# Direct mode: the run and the test speak through files of the
	# workspace (go, grown, ready, measured) while the run is alive.
	"$BUILD/cordon" run --workspace-mode direct --report "$T_TMP/r.json" --net 127.0.0.1:$PORT -- /usr/bin/python3 -c "
import os, socket, time
open('waiting', 'w').close()
def wait_for(name):
    for i in range(3000):
        if os.path.exists(name):
            break
        time.sleep(0.1)
wait_for('go')
conns = []
def connect(n):
    for i in range(n):
        s = socket.create_connection(('127.0.0.1', 3128))
        s.sendall(b'CONNECT 127.0.0.1:$PORT HTTP/1.1\r\n\r\n')
        s.recv(39)
        conns.append(s)
connect(100)
open('first', 'w').close()
wait_for('grown')
connect(100)
open('ready', 'w').close()
# Held until the test has measured (a run that ended mid-measurement let
# other pipes grow into the budget its closed ones freed: counted twice).
wait_for('measured')" >/dev/null 2>&1 &
	local sup=$!
	# The supervisor's pipes before the run connects are not the proxy's
	# (the proxy makes its pipes per connection): left out of the sum.
	for _ in $(seq 3000); do [ -e waiting ] && break; sleep 0.1; done
	local before
	before=$(ls -l "/proc/$sup/fd" 2>/dev/null | grep -o 'pipe:\[[0-9]*\]' | sort -u | tr '\n' ' ')
	cat >"$T_TMP/pipes.py" <<'PY'
import fcntl, os, sys
d = '/proc/%s/fd' % sys.argv[1]
before = set(sys.argv[2].split())
ends = {}
for n in os.listdir(d):
    try:
        link = os.readlink(os.path.join(d, n))
    except OSError:
        continue
    if link.startswith('pipe:'):
        ends.setdefault(link, []).append(n)
total = big = old = 0
pairs = []
for link, fds in ends.items():
    if len(fds) < 2:  # the other end is the command's: an output pipe
        continue
    try:
        fd = os.open(os.path.join(d, fds[0]), os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        continue
    sz = fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
    os.close(fd)
    if link in before:
        old += sz
        continue
    total += sz
    big = max(big, sz)
    pairs.append('%s:%s=%d' % (link[6:-1], '/'.join(sorted(fds, key=int)), sz >> 10))
# What the first and last pairs were (by fd), for a failure's message: pipe:fds=KiB.
pairs.sort(key=lambda p: int(p.split(':')[1].split('/')[0]))
print(total, big >> 10, old, len(pairs), ' '.join(pairs[:6] + ['...'] + pairs[-6:]))
PY
	touch go
	for _ in $(seq 3000); do [ -e first ] && break; sleep 0.1; done
	# Grown all they can: the sum the same in two looks a second apart.
	local last="" now
	for _ in $(seq 120); do
		now=$(/usr/bin/python3 "$T_TMP/pipes.py" "$sup" "$before" | cut -d' ' -f1)
		[ -n "$now" ] && [ "$now" = "$last" ] && break
		last=$now
		sleep 1
	done
	touch grown
	for _ in $(seq 3000); do [ -e ready ] && break; sleep 0.1; done
	sleep 1.5
	local sizes
	sizes=$(/usr/bin/python3 "$T_TMP/pipes.py" "$sup" "$before")
	touch measured
	wait $sup
	stop $SRV
	local total big old npairs smallest
	read -r total big old npairs smallest <<<"$sizes"
	[ "${old:-0}" = 0 ] || echo "# pipe pairs the supervisor had before the run connected: $old bytes (left out)"
	expect_eq "$([ -e ready ] && echo yes)" yes "the run opened its 200 connections"
	expect_eq "$npairs" 400 "two pipes for each of the 200 connections"
	expect_eq "$big" 1024 "a stream that fills its pipe gets a 1 MiB pipe (largest: $big KiB)"
	expect_eq "$([ "$total" -le $((64 << 20)) ] && echo within)" within "the proxy's pipes: $total bytes (budget 64 MiB; the first and last pairs, pipe:fds=KiB: $smallest)"
	t_assert
}

# A connection the pipe budget cannot take is refused (503, or a SOCKS
# failure) before it is told its tunnel is open, and counted. On a host
# with 4 KiB pages the reserve (pxconn.h) is never used up; on one with
# 64 KiB pages (arm64, ppc64le) a pipe starts at 1 MiB and a one-page pipe
# is 64 KiB, and it is. Such a host's pipe sizes as the proxy sees them:
# a preloaded fcntl that shows every pipe 16 times its size (and asks for
# a 16th of what is asked). 30 connections take 60 MiB, 32 more a page a
# pipe (the reserve), the rest are refused. Before, the refused heard
# "200 Connection established" first, then the 503 inside the tunnel, and
# the report counted nothing.
test_proxy_pipe_budget_refusal_comes_first() {
	command -v cc >/dev/null || { t_skip "needs cc (the 64 KiB-page shim)"; return; }
	cat >"$T_TMP/pages64k.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
static int call(const char *name, int fd, int cmd, long arg)
{
	int (*real)(int, int, ...) = (int (*)(int, int, ...))dlsym(RTLD_NEXT, name);
	if (cmd == F_GETPIPE_SZ || cmd == F_SETPIPE_SZ) {
		int r = real(fd, cmd, cmd == F_SETPIPE_SZ ? (arg / 16 < 4096 ? 4096 : arg / 16) : 0);
		return r > 0 ? r * 16 : r;
	}
	return real(fd, cmd, arg);
}
/* glibc's fcntl and fcntl64: the same wrapper under each name. */
#define WRAP(name)                                  \
	int name(int fd, int cmd, ...)              \
	{                                           \
		va_list ap;                         \
		va_start(ap, cmd);                  \
		long arg = va_arg(ap, long);        \
		va_end(ap);                         \
		return call(#name, fd, cmd, arg);   \
	}
WRAP(fcntl)
WRAP(fcntl64)
C
	cc -shared -fPIC -o "$T_TMP/pages64k.so" "$T_TMP/pages64k.c" -ldl 2>"$T_TMP/cc" || { fail "build the shim: $(cat "$T_TMP/cc")"; t_assert; return; }
	serve hold
	R="$T_TMP/r.json"
	OUT=$(LD_PRELOAD="$T_TMP/pages64k.so" "$CORDON" run --report "$R" --net "127.0.0.1:$PORT" -- /usr/bin/python3 -c "
import socket
conns, first = [], {}
def ask(req, n):
    s = socket.create_connection(('127.0.0.1', 3128))
    s.settimeout(30)
    s.sendall(req)
    got = b''
    while len(got) < n:
        d = s.recv(n - len(got))
        if not d:
            break
        got += d
    conns.append(s)
    return got
for i in range(70):
    a = ask(b'CONNECT 127.0.0.1:$PORT HTTP/1.1\r\n\r\n', 12)
    first[a] = first.get(a, 0) + 1
print(sorted(first.items()))
s = socket.create_connection(('127.0.0.1', 3128))
s.settimeout(30)
s.sendall(b'\x05\x01\x00')
print(s.recv(2), end=' ')
s.sendall(b'\x05\x01\x00\x01\x7f\x00\x00\x01' + ($PORT).to_bytes(2, 'big'))
print(s.recv(2))" 2>"$T_TMP/err")
	RC=$?
	stop $SRV
	keep_report "$R"
	expect_eq "$RC" 0 "the run ended and cordon exited 0"
	expect_eq "$OUT" "[(b'HTTP/1.1 200', 62), (b'HTTP/1.1 503', 8)]"$'\n'"b'\\x05\\x00' b'\\x05\\x01'" \
		"62 relays fit (30 at 2 MiB, 32 at 128 KiB), the rest hear 503 (SOCKS: a failure) first: $(tail -3 "$T_TMP/err")"
	expect_eq "$(field .network.over_limit)" 9 "the refusals counted"
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

# Issue 12.4: test suites start servers on the run's own loopback. Binding any
# port there and connecting to its own listeners stays inside the run; a
# connect to a loopback port nobody in the run listens on (the host's
# service) fails and is recorded.
test_loopback_servers_inside_the_run() {
	serve echo
	cordon_run -- /usr/bin/python3 -c "
import http.server, threading, urllib.request, socket
srv = http.server.HTTPServer(('127.0.0.1', 0), http.server.SimpleHTTPRequestHandler)
threading.Thread(target=srv.handle_request).start()
print(urllib.request.urlopen('http://127.0.0.1:%d/' % srv.server_address[1]).status)
six = socket.socket(socket.AF_INET6); six.bind(('::1', 0)); six.listen()
socket.create_connection(('::1', six.getsockname()[1])); print('v6')
socket.socket().bind(('127.0.0.1', 80)); print('port 80')
try:
    socket.create_connection(('127.0.0.1', $PORT), timeout=2); print('reached the host')
except OSError as e:
    print('host', e.errno)"
	stop $SRV
	expect_eq "$OUT" $'200\nv6\nport 80\nhost 111' "own servers work, the host's stays out of reach"
	expect_eq "$(field '[.denials[] | select(.kind=="network") | .target] | join(",")')" "127.0.0.1:$PORT" \
		"only the host's port is a denial"
	expect_eq "$(field .status)" ok "status"
	if command -v node >/dev/null; then
		# node's listen(0): dual-stack [::], reached at 127.0.0.1.
		cordon_run -- node -e '
const http = require("http");
const s = http.createServer((q, r) => r.end("hi")).listen(0, () =>
  http.get("http://127.0.0.1:" + s.address().port, (r) => r.on("data", (d) => { console.log(String(d)); s.close(); })));'
		expect_eq "$OUT" hi "node listen(0)"
		expect_eq "$(field '.denials | length')" 0 "node: no denials"
	fi
	t_assert
}

# Issue 10 §4: a lookup still in flight when the run ends. Its completion was
# a signal (SIGRTMIN+1) that arrived after cordon had unblocked it: cordon
# died (exit 163, no report). The name goes to a resolver of the test's own
# on 127.0.0.77:53 that receives and never answers; the supervisor gives up
# on it 2 s later, after the run is over.
#
# silent_resolver QUERIES: that resolver, in the background (pid DNS) once it
# listens; a line in QUERIES per question it got. with_test_resolver CMD...:
# CMD with $T_TMP/resolv.conf and $T_TMP/hosts over the host's (in a mount
# namespace of its own). SLOW_CONNECT: the run's client, a CONNECT to
# slow.cordon.test:80 through the proxy, gone after 0.5 s ("left").
silent_resolver() { # QUERIES -> DNS
	local up="$T_TMP/dns.up.$RANDOM"
	/usr/bin/python3 -c "
import os, socket, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(('127.0.0.77', 53))
open(sys.argv[1] + '.tmp', 'w').close()
os.rename(sys.argv[1] + '.tmp', sys.argv[1])
u.settimeout(60)
try:
    while True:
        u.recvfrom(2048)
        open(sys.argv[2], 'a').write('q\n')
except OSError:
    pass" "$up" "$1" &
	DNS=$!
	for _ in $(seq 100); do [ -e "$up" ] && break; sleep 0.05; done
}
with_test_resolver() { # CMD...
	unshare -m /bin/sh -c 'mount --bind "$0" /etc/resolv.conf && mount --bind "$1" /etc/hosts && shift && exec "$@"' \
		"$T_TMP/resolv.conf" "$T_TMP/hosts" "$@"
}
SLOW_CONNECT="
import socket, time
s = socket.create_connection(('127.0.0.1', 3128))
s.sendall(b'CONNECT slow.cordon.test:80 HTTP/1.1\r\n\r\n')
time.sleep(0.5)
print('left')"
test_dns_lookup_in_flight_when_run_ends() {
	printf 'nameserver 127.0.0.77\noptions timeout:2 attempts:1\n' >"$T_TMP/resolv.conf"
	printf '127.0.0.1 localhost\n' >"$T_TMP/hosts"
	silent_resolver "$T_TMP/dns.queries"
	R="$T_TMP/r.json"
	with_test_resolver "$CORDON" run --report "$R" --net slow.cordon.test:80 -- /usr/bin/python3 -c "$SLOW_CONNECT" \
		>"$T_TMP/out" 2>&1
	local rc=$?
	# Outlive the lookup: a late signal would have come by now.
	stop $DNS
	keep_report "$R"
	expect_eq "$rc" 0 "cordon's exit status ($(cat "$T_TMP/out"))"
	expect_eq "$([ -s "$T_TMP/dns.queries" ] && echo asked)" asked "the lookup reached the test's resolver"
	expect_eq "$(field .status)" ok "report written"
	expect_eq "$(cat "$T_TMP/out")" left "the run's output"
	# The same as an ordinary user (it reproduced unprivileged too).
	if setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U true 2>/dev/null; then
		: >"$T_TMP/dns.queries"
		silent_resolver "$T_TMP/dns.queries"
		chmod 777 "$WS" "$T_TMP"
		echo '{"enforcement": {"allow_weaker": ["cgroup"]}}' >"$T_TMP/w.json"
		chmod 644 "$T_TMP/w.json"
		with_test_resolver setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON" run --policy "$T_TMP/w.json" \
			--report "$T_TMP/r2.json" --net slow.cordon.test:80 -- /usr/bin/python3 -c "$SLOW_CONNECT" >"$T_TMP/out2" 2>&1
		rc=$?
		stop $DNS
		R="$T_TMP/r2.json"
		keep_report "$R"
		expect_eq "$rc" 0 "unprivileged: cordon's exit status ($(cat "$T_TMP/out2"))"
		expect_eq "$([ -s "$T_TMP/dns.queries" ] && echo asked)" asked "unprivileged: the lookup reached the test's resolver"
		expect_eq "$(field .status)" ok "unprivileged: report written"
	fi
	t_assert
}

# Issue 10 §4: under a 1024-fd limit, a run with many proxy connections.
# The supervisor raises its soft limit to the hard one, caps connections so
# that its own fds fit, pauses accept() on EMFILE instead of spinning, and
# collects outputs below the top level after the proxy is closed.
test_many_connections_under_fd_limit() {
	serve echo
	timeout 300 prlimit --nofile=1024:1024 "$CORDON" run --workspace-mode direct --report "$T_TMP/r.json" --net 127.0.0.1:$PORT --pids-limit 512 -- \
		/usr/bin/python3 -c "
import os, socket, time
conns, ok, busy = [], 0, 0
for i in range(400):
    s = socket.create_connection(('127.0.0.1', 3128))
    s.settimeout(3)
    s.sendall(b'CONNECT 127.0.0.1:$PORT HTTP/1.1\r\n\r\n')
    try:
        r = s.recv(100)
    except OSError:
        r = b''
    if r.startswith(b'HTTP/1.1 200'):
        ok += 1
        conns.append(s)
    else:
        busy += 1
        s.close()
os.makedirs('deep/er', exist_ok=True)
for i in range(50):
    open('deep/er/f%d.txt' % i, 'w').write('x')
print(ok > 0, busy > 0)
# Then 1000 requests that never finish, from two processes (each has 1024
# fds): each holds one fd of the supervisor until it times out.
# Before the test measures, the supervisor has answered what it will (503
# at the cap; at its fd limit it leaves the rest in the backlog): on a slow
# host (an emulated guest) it was still answering a second later, which
# looked like a spin. Answered: readable; done: none for 3 s.
import select
pids = []
for k in range(2):
    pid = os.fork()
    if pid == 0:
        held = []
        for i in range(500):
            s = socket.create_connection(('127.0.0.1', 3128))
            s.sendall(b'CONN')
            held.append(s)
        left, quiet, end = set(held), 0, time.monotonic() + 60
        while left and quiet < 3 and time.monotonic() < end:
            r, _, _ = select.select(list(left), [], [], 1)
            left -= set(r)
            quiet = 0 if r else quiet + 1
        open('ready%d' % k, 'w').close()
        for i in range(600):  # held until the test has measured
            if os.path.exists('measured'):
                break
            time.sleep(0.1)
        os._exit(0)
    pids.append(pid)
while not all(os.path.exists('ready%d' % k) for k in range(2)):
    time.sleep(0.1)
open('held', 'w').close()
for p in pids:
    os.waitpid(p, 0)   # every connection still open: the supervisor must idle" >"$T_TMP/out" 2>"$T_TMP/err" &
	local sup=$! rc
	for _ in $(seq 1200); do [ -e held ] && break; sleep 0.1; done
	# The supervisor's CPU time (utime + stime, in ticks) over 2 s of a run
	# that holds its connections and does nothing: an accept loop spinning on
	# EMFILE would burn about all of it.
	local pid
	pid=$(pgrep -P "$sup" -x cordon || echo "$sup")
	# Measured by events, not time where strace is there: the calls of the
	# loop (epoll waits, accepts) over 2 s; a spinning loop makes tens of
	# thousands, an idle one a few per 1 s tick. Else CPU ticks against
	# half a core (an emulated or loaded host is slow, never spinning-busy).
	local calls="" limit
	if [ -e held ]; then
		if command -v strace >/dev/null; then
			timeout -s INT 2 strace -qq -f -p "$pid" -e trace=accept,accept4,epoll_wait,epoll_pwait \
				-o "$T_TMP/st" 2>/dev/null
			calls=$(wc -l <"$T_TMP/st")
			limit=200
			# What they were, for the failure's line: accepts that got an fd
			# (a backlog still being refused at the cap), EMFILE, waits.
			calls="$calls ($(grep -c 'accept.*= [0-9]' "$T_TMP/st") accepted, $(grep -c 'accept.*E[MN]FILE' "$T_TMP/st") E[MN]FILE, $(grep -c 'epoll' "$T_TMP/st") waits)"
		else
			local a b
			a=$(awk '{print $14 + $15}' "/proc/$pid/stat")
			sleep 2
			b=$(awk '{print $14 + $15}' "/proc/$pid/stat")
			calls=$((b - a))
			limit=$(getconf CLK_TCK)
		fi
		echo "supervisor $pid: $calls (limit $limit), $(ls /proc/$pid/fd | wc -l) fds" >&2
	fi
	touch measured
	wait $sup
	rc=$?
	stop $SRV
	R="$T_TMP/r.json"
	keep_report "$R"
	expect_eq "$rc" 0 "the run ended and cordon exited 0: $(tail -3 "$T_TMP/err")"
	expect_eq "$(cat "$T_TMP/out")" "True True" "some connections relayed, the rest refused at the cap"
	[ -n "$calls" ] && [ "${calls%% *}" -lt "$limit" ] || fail "the supervisor made $calls loop calls (or CPU ticks) in 2 s of an idle run (spinning on EMFILE?)"
	expect_eq "$(field '[.outputs[].path | select(startswith("deep/er/"))] | length')" 50 "outputs below the top level"
	local cap
	cap=$(field .network.max_connections)
	[ "$cap" -gt 0 ] && [ $((cap * 6 + 256)) -le 1024 ] || fail "cap $cap leaves the supervisor's fds"
	[ "$(field .network.over_limit)" -gt 0 ] || fail "refusals at the cap counted"
	t_assert
}

# Issue 10 §4: 450 downloads that the run never reads. The proxy's upstream
# sockets keep small fixed buffers (no autotuning to megabytes), and its
# sockets and pipes together stay within the 256 MiB budget: each relay
# reserves 1 MiB of it, so 256 fit and the rest are refused (503).
# Measured on the supervisor's own sockets (ss -m, by inode) and pipes.
test_proxy_socket_memory_is_bounded() {
	command -v ss >/dev/null || { echo "no ss"; return 0; }
	serve big 16
	# Direct mode: ready and measured pass through the workspace while the
	# run is alive.
	"$CORDON" run --workspace-mode direct --report "$T_TMP/r.json" --net 127.0.0.1:$PORT -- /usr/bin/python3 -c "
import os, socket, time
conns = []
for i in range(450):
    s = socket.create_connection(('127.0.0.1', 3128))
    s.sendall(b'CONNECT 127.0.0.1:$PORT HTTP/1.1\r\n\r\n')
    conns.append(s)
for s in conns:
    s.recv(39)
open('ready', 'w').close()
for i in range(300):   # held until the test has measured
    if os.path.exists('measured'):
        break
    time.sleep(0.1)" >/dev/null 2>&1 &
	local sup=$!
	for _ in $(seq 200); do [ -e ready ] && break; sleep 0.1; done
	sleep 2
	local m
	m=$(/usr/bin/python3 "$TOP/tests/sockmem.py" "$sup")
	touch measured
	wait $sup
	stop $SRV
	local n rbmax held pipes total
	read -r n rbmax _ held pipes <<<"$m"
	total=$(((held + pipes) >> 20))
	R="$T_TMP/r.json"
	keep_report "$R"
	expect_eq "$([ -e ready ] && echo yes)" yes "the run opened its 450 downloads"
	local conns
	conns=$(field .network.connections)
	[ "$conns" -ge 200 ] && [ "$conns" -le 256 ] || fail "$conns relayed (budget: 256)"
	expect_eq "$(field .network.over_limit)" $((450 - conns)) "the rest refused at the budget"
	[ "$n" -ge 200 ] || fail "upstream sockets of the supervisor found: $n"
	[ "$rbmax" -le 524288 ] || fail "largest upstream receive buffer $rbmax (fixed at 2 x 256 KiB)"
	[ "$total" -le 256 ] || fail "sockets and pipes hold $total MiB (budget 256 MiB)"
	t_assert
}

# Issue 10 §4: an unfinished request times out (408) and is on record; a
# SOCKS4 request and a malformed one are refused at once, on record too.
test_incomplete_and_malformed_requests_recorded() {
	serve echo
	cordon_run --net 127.0.0.1:$PORT -- /usr/bin/python3 -c "
import socket
def ask(data, wait=20):
    s = socket.create_connection(('127.0.0.1', 3128))
    s.settimeout(wait)
    s.sendall(data)
    try:
        return s.recv(100)
    except OSError as e:
        return b'no answer'
print(ask(b'\x04\x01' + ($PORT).to_bytes(2, 'big') + bytes([127, 0, 0, 1]) + b'u\x00')[:12])
print(ask(b'GET /relative HTTP/1.1\r\n\r\n').split(b'\r\n')[0])
print(ask(b'CONNECT 127.0.0.1:$PORT HTTP/1.1\r\nHost: x\r\n').split(b'\r\n')[0])"
	stop $SRV
	expect_eq "$OUT" "b'HTTP/1.1 400'"$'\n'"b'HTTP/1.1 400 Bad Request'"$'\n'"b'HTTP/1.1 408 Request Timeout'" "answers: $ERR"
	expect_eq "$(field '[.denials[] | select(.kind=="network") | .target] | sort | join(",")')" \
		"/relative,127.0.0.1:$PORT" "denials (SOCKS4 and the timed-out CONNECT share a target)"
	expect_eq "$(field '[.denials[] | select(.target=="127.0.0.1:'$PORT'") | .count] | add')" 2 "both counted"
	expect_eq "$(field .network.denied)" 3 "denied count"
	t_assert
}

# Issue 11: bytes up are counted for every form, the request and body of an
# absolute-form request included.
test_bytes_up_counted_for_absolute_form() {
	serve echo
	cordon_run --net 127.0.0.1:$PORT -- /usr/bin/python3 -c "
import socket
body = b'u' * 30000
s = socket.create_connection(('127.0.0.1', 3128))
s.sendall(b'POST http://127.0.0.1:$PORT/up HTTP/1.1\r\nContent-Length: 30000\r\n\r\n' + body)
got = b''
while len(got) < 30000:
    d = s.recv(65536)
    if not d:
        break
    got += d
print(got.count(b'u') >= 30000)"
	stop $SRV
	expect_eq "$OUT" True "the body came back: $ERR"
	[ "$(field .network.bytes_up)" -ge 30000 ] || fail "bytes_up $(field .network.bytes_up) for a 30000-byte body"
	[ "$(field '.network.endpoints[0].bytes_up')" -ge 30000 ] || fail "endpoint bytes_up"
	t_assert
}

# Issue 11: the upstream sees the request-target's authority as Host. Issue
# 27.2: a client's Host that is another is refused (no longer replaced);
# without one (HTTP/1.0), the proxy writes the checked one.
test_forward_host_header_rewritten() {
	serve echo
	cordon_run --net 127.0.0.1:$PORT -- /usr/bin/python3 -c "
import socket
def ask(req):
    s = socket.create_connection(('127.0.0.1', 3128))
    s.sendall(req)
    got = b''
    while b'\r\n\r\n' not in got:
        d = s.recv(4096)
        if not d:
            break
        got += d
    return got.decode()
print(ask(b'GET http://127.0.0.1:$PORT/ HTTP/1.1\r\nHost: undeclared.example\r\n\r\n').split('\r\n')[0])
got = ask(b'GET http://127.0.0.1:$PORT/ HTTP/1.0\r\n\r\n')
print([l for l in got.split('\r\n') if l.lower().startswith('host')])"
	stop $SRV
	expect_eq "$OUT" "HTTP/1.1 403 Forbidden
['Host: 127.0.0.1:$PORT']" "another Host refused; none: the upstream saw the authorized Host only: $ERR"
	expect_match "$(field -c '.denials[] | .target')" "GET 127.0.0.1:$PORT/ \\(a Host other than the connection's authority\\)" "on record"
	t_assert
}

# Issue 10 §4: the supervisor raises its soft RLIMIT_NOFILE to the hard limit
# (and sizes the proxy's cap from it); the run keeps the limit it was given.
test_fd_soft_limit_raised_for_supervisor_only() {
	serve echo
	R="$T_TMP/r.json"
	OUT=$(prlimit --nofile=1024:4096 "$CORDON" run --report "$R" --net 127.0.0.1:$PORT -- /bin/sh -c 'ulimit -Sn; ulimit -Hn')
	stop $SRV
	keep_report "$R"
	expect_eq "$OUT" $'1024\n4096' "the run's own limits"
	expect_eq "$(field .network.max_connections)" $(((4096 - 256) / 6)) "the proxy's cap, from the raised limit"
	t_assert
}

# Issue 10 §4: connections the proxy still holds when the run ends (their
# upstream never closes) must not starve the collection of outputs of fds:
# the proxy is closed first, and its cap leaves the supervisor its own fds.
test_outputs_collected_while_proxy_holds_connections() {
	serve hold
	R="$T_TMP/r.json"
	OUT=$(timeout 120 prlimit --nofile=1024:1024 "$CORDON" run --report "$R" --net 127.0.0.1:$PORT -- /usr/bin/python3 -c "
import os, socket
conns = []
for i in range(200):
    s = socket.create_connection(('127.0.0.1', 3128))
    s.settimeout(5)
    s.sendall(b'CONNECT 127.0.0.1:$PORT HTTP/1.1\r\n\r\n')
    try:
        s.recv(100)
    except OSError:
        pass
    conns.append(s)
for d in range(20):   # deep: collecting them takes several fds at once
    os.makedirs('a/b%d/c/d/e/f/g/h' % d)
    open('a/b%d/c/d/e/f/g/h/f.txt' % d, 'w').write('x')
print('done')" 2>&1)
	local rc=$?
	stop $SRV
	keep_report "$R"
	expect_eq "$rc/$OUT" 0/done "the run ended"
	expect_eq "$(field '[.outputs[].path | select(startswith("a/"))] | length')" 20 "outputs below the top level"
	t_assert
}

# A long target with a secret at its end is redacted before it is cut (no
# raw prefix of the value on record), in the proxy's malformed-request record
# and in a file denial; a SOCKS domain with spaces in the secret is redacted
# before the spaces become '?'. A bare LF inside a header is refused (400).
test_denial_targets_redacted_before_cut() {
	serve echo
	local s1=SuperSecretValue123 s2='Secret With Spaces 42'
	S1=$s1 S2=$s2 cordon_run --secret S1 --secret S2 --net 127.0.0.1:$PORT -- /usr/bin/python3 -c "
import socket, os
def ask(data):
    c = socket.create_connection(('127.0.0.1', 3128)); c.settimeout(20)
    c.sendall(data)
    try:
        return c.recv(100)
    except OSError:
        return b'no answer'
s1, s2 = os.environ['S1'].encode(), os.environ['S2'].encode()
ask(b'GET /' + b'A' * 187 + s1 + b' HTTP/1.1\r\n\r\n')
ask(b'\x05\x01\x00' + b'\x05\x01\x00\x03' + bytes([len(s2)]) + s2 + b'\\x01\\xbb')
print(ask(b'GET http://127.0.0.1:$PORT/ HTTP/1.1\r\nX-A: a\nHost: evil.test\r\n\r\n').split(b'\r\n')[0])
try:
    open('/root/' + 'B' * 235 + '/' + s1.decode())
except OSError:
    pass"
	stop $SRV
	expect_eq "$OUT" "b'HTTP/1.1 400 Bad Request'" "bare LF in a header refused: $ERR"
	local all
	all=$(jq -c . "$R")
	expect_nomatch "$all" 'SuperSec|Super"|Secret.With|Secret\?With' "no part of a secret in the report"
	expect_match "$(field '[.denials[].target] | join(" ")')" '/A{187}\[REDACTED:S1' "proxy target redacted"
	expect_match "$(field '[.denials[].target] | join(" ")')" 'REDACTED:S2' "socks domain redacted"
	t_assert
}

# Issue 16: network.allow rules on method and path, plain HTTP read request
# by request; refusals are 403s naming the rule, denials "METHOD host:port/path"
# (never the query), every request in network.requests.
test_method_path_rules_plain_http() {
	mkdir -p www/pub www/priv && echo pub >www/pub/a.txt && echo priv >www/priv/b.txt
	serve http "$WS/www"
	cat >p.json <<JSON
{"network": {"allow": [{"host": "127.0.0.1:$PORT", "methods": ["get", "HEAD"], "paths": ["/pub/**"]}]}}
JSON
	"$CORDON" validate p.json >/dev/null || fail "validate"
	expect_match "$("$CORDON" explain --policy p.json)" "only: 127.0.0.1:$PORT methods GET,HEAD paths /pub/\*\*" "explain shows the rule"
	expect_eq "$("$CORDON" explain --json --policy p.json | jq -c '.network_rules[0].methods')" '["GET","HEAD"]' "explain --json"
	cordon_run --policy p.json -- /bin/sh -c "
		curl -s http://127.0.0.1:$PORT/pub/a.txt?tok=QUERYSECRET
		curl -s http://127.0.0.1:$PORT/priv/b.txt
		curl -s -X POST -d x http://127.0.0.1:$PORT/pub/a.txt
		curl -s --path-as-is http://127.0.0.1:$PORT/pub/../priv/b.txt
		curl -s http://127.0.0.1:$PORT/pub/%2e%2e/priv/b.txt
		curl -s -p http://127.0.0.1:$PORT/pub/a.txt || echo tunnel refused"
	stop $SRV
	expect_eq "$(printf '%s\n' "$OUT" | head -1)" pub "an admitted GET (query ignored): $ERR"
	expect_match "$OUT" "cordon: GET 127.0.0.1:$PORT/priv/b.txt: no rule of network.allow admits it \(127.0.0.1:$PORT methods GET,HEAD paths /pub/\*\*\)" "403 body names the rule"
	expect_eq "$(printf '%s\n' "$OUT" | grep -c '^priv')" 0 "nothing of /priv came through"
	# The tunnel to a scoped host is opened (issue 16): this upstream speaks
	# no TLS and the client none either; both on record.
	expect_match "$(field '[.denials[] | select(.kind=="network") | .target] | sort | join(",")')" \
		"^127\\.0\\.0\\.1:$PORT,127\\.0\\.0\\.1:$PORT \\(upstream TLS: [^,]*\\),GET 127\\.0\\.0\\.1:$PORT/priv/b\\.txt,GET 127\\.0\\.0\\.1:$PORT/pub/%2e%2e/priv/b\\.txt,GET 127\\.0\\.0\\.1:$PORT/pub/\\.\\./priv/b\\.txt,POST 127\\.0\\.0\\.1:$PORT/pub/a\\.txt$" \
		"denials: method, host:port and path; the tunnel to a scoped host"
	expect_eq "$(field -c '[.network.requests[] | [.method, .path, .status]]')" \
		"[[\"GET\",\"/pub/a.txt\",200],[\"GET\",\"/priv/b.txt\",403],[\"POST\",\"/pub/a.txt\",403],[\"GET\",\"/pub/../priv/b.txt\",403],[\"GET\",\"/pub/%2e%2e/priv/b.txt\",403]]" \
		"the request log"
	[ "$(field '.network.requests[0].bytes_down')" -gt 0 ] || fail "bytes down of the admitted request"
	expect_eq "$(jq -c '.network, .denials' "$R" | grep -c QUERYSECRET)" 0 "the query is never on record (the command line aside)"
	expect_eq "$(field .verdicts.containment)" violations "refusals are violations"
	t_assert
}

# Each request on a connection is checked on its own: an allowed first and a
# refused second, pipelined on one connection.
test_second_request_on_a_connection_checked() {
	mkdir -p www/pub www/priv && echo pub >www/pub/a.txt && echo priv >www/priv/b.txt
	serve http "$WS/www"
	echo "{\"network\": {\"allow\": [{\"host\": \"127.0.0.1:$PORT\", \"paths\": [\"/pub/*\"]}]}}" >p.json
	cordon_run --policy p.json -- /usr/bin/python3 -c "
import socket
s = socket.create_connection(('127.0.0.1', 3128))
s.sendall(b'GET http://127.0.0.1:$PORT/pub/a.txt HTTP/1.1\r\nHost: 127.0.0.1:$PORT\r\n\r\nGET http://127.0.0.1:$PORT/priv/b.txt HTTP/1.1\r\nHost: 127.0.0.1:$PORT\r\n\r\n')
got = b''
while True:
    d = s.recv(65536)
    if not d:
        break
    got += d
print(got.count(b'HTTP/1.'), b'pub\n' in got, b'priv\n' in got, b'403 Forbidden' in got)"
	stop $SRV
	expect_eq "$OUT" "2 True False True" "the first answered, the second refused: $ERR"
	expect_eq "$(field -c '[.network.requests[] | [.path, .status]]')" '[["/pub/a.txt",200],["/priv/b.txt",403]]' "both on record"
	t_assert
}

test_ceiling_bounds_method_path_rules() {
	echo '{"network": {"allow": [{"host": "*.example.org:443", "methods": ["GET", "HEAD"], "paths": ["/repos/acme/**"]}]}}' >"$T_TMP/c.json"
	ok() { echo "{\"network\": {\"allow\": [$1]}}" >p.json; "$CORDON" explain --ceiling "$T_TMP/c.json" --policy p.json >/dev/null 2>&1 && echo in || echo out; }
	expect_eq "$(ok '{"host": "api.example.org:443", "methods": ["GET"], "paths": ["/repos/acme/x/**", "/repos/acme/*"]}')" in "a narrower rule"
	expect_eq "$(ok '{"host": "api.example.org:443", "methods": ["POST"], "paths": ["/repos/acme/**"]}')" out "another method"
	expect_eq "$(ok '{"host": "api.example.org:443", "methods": ["GET"], "paths": ["/repos/**"]}')" out "a wider path"
	expect_eq "$(ok '{"host": "api.example.org:443", "methods": ["GET"], "paths": ["/repos/*/x"]}')" out "a wildcard where the ceiling has a literal"
	expect_eq "$(ok '"api.example.org:443"')" out "a plain host the ceiling restricts"
	t_assert
}

test_bad_rule_objects_refused_with_location() {
	local e
	echo '{"network": {"allow": [{"host": "a.example:443", "paths": ["/a/**x"]}]}}' >p.json
	e=$("$CORDON" validate p.json 2>&1)
	expect_match "$e" "p.json:1:[0-9]+: .*path \"/a/\*\*x\": '\*' and '\*\*' stand for whole segments only" "pattern"
	expect_eq "$(printf '%s\n' "$e" | wc -l)" 1 "one line"
	echo '{"network": {"allow": [{"host": "a.example:443", "methods": ["G ET"]}]}}' >p.json
	expect_match "$("$CORDON" validate p.json 2>&1)" "p.json:1:[0-9]+: .*\"G ET\" is not an HTTP method" "method"
	echo '{"network": {"allow": [{"methods": ["GET"]}]}}' >p.json
	expect_match "$("$CORDON" validate p.json 2>&1)" "p.json:1:[0-9]+: \"network.allow\": a rule object needs \"host\"" "host"
	echo '{"network": {"allow": [{"host": "a.example:443", "paths": []}]}}' >p.json
	expect_match "$("$CORDON" validate p.json 2>&1)" "an empty list admits nothing" "empty list"
	echo '{"network": {"allow": [{"host": "a.example:443", "verbs": ["GET"]}]}}' >p.json
	expect_match "$("$CORDON" validate p.json 2>&1)" "p.json:1:[0-9]+: .*verbs" "unknown key"
	t_assert
}

# Issue 27.8: the supervisor's work per refused loopback connect is constant
# in the number of the run's sockets (it asked /proc/PID/net/tcp and tcp6,
# O(sockets), each time; now the kernel, NETLINK_SOCK_DIAG, for the one
# address and port). Counted as the supervisor's system calls (strace -c)
# during 300 distinct refused connects, with one socket in the run and with
# 4,000 more: the same count (a one-time setup aside), no wall clock.
sup_calls() { # SOCKETS -> the supervisor's system calls during 300 refused connects
	local d="$T_TMP/sc.$1"
	mkdir -p "$d" && cd "$d" || return
	"$CORDON" run --workspace-mode direct --report r.json -- /usr/bin/python3 -c "
import os, resource, socket, time
# 4001 sockets: the soft limit up to the hard one (a login's soft 1024, as in the VM guest)
resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
keep = []
srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(4096)
for i in range($1):
    c = socket.socket(); c.connect(srv.getsockname()); keep += [c, srv.accept()[0]]
open('ready', 'w').close()
while not os.path.exists('go'): time.sleep(0.01)
for p in range(300):
    s = socket.socket()
    try: s.connect(('127.0.0.1', 1024 + p))
    except OSError: pass
    s.close()
open('done', 'w').close()
while not os.path.exists('end'): time.sleep(0.01)" &
	local pid=$! sp n
	for _ in $(seq 600); do [ -e ready ] && break; sleep 0.05; done
	strace -f -c -p $pid -o st.txt 2>/dev/null &
	sp=$!
	for _ in $(seq 200); do # every thread of the supervisor traced
		n=$(grep -l '^TracerPid:[[:space:]]*0$' /proc/$pid/task/*/status 2>/dev/null | wc -l)
		[ "$n" = 0 ] && break
		sleep 0.05
	done
	touch go
	for _ in $(seq 1200); do [ -e done ] && break; sleep 0.05; done
	kill -INT $sp; wait $sp
	touch end; wait $pid
	echo "$(awk '$NF == "total" {print $4}' st.txt) $(jq '[.denials[] | select(.kind == "network")] | length' r.json)"
	cd "$WS" || return
}
test_refused_connect_costs_the_supervisor_o1() {
	command -v strace >/dev/null || { t_skip "no strace"; return; }
	local few many
	read -r few fd < <(sup_calls 0)
	read -r many md < <(sup_calls 2000)
	expect_eq "$fd $md" "300 300" "each refused connect reported"
	[ -n "$few" ] && [ -n "$many" ] || fail "counted: '$few' '$many'"
	[ "$few" -gt 300 ] || fail "the supervisor handled the connects: $few calls"
	# the same per connect: within 30 calls (0.1 per connect) over 300 connects
	[ $((many - few)) -le 30 ] && [ $((few - many)) -le 30 ] ||
		fail "the supervisor's calls for 300 refused connects: $few with 1 socket, $many with 4001"
	t_assert
}

# Issue 29 item 1: the supervisor out of fds. The proxy's connection cap
# keeps room for the supervisor's own fds, so test_many_connections_under_
# fd_limit never gets accept to fail (789 of 1024 fds in the guest; a relay
# that cannot get its pipes is refused, which frees its fds again). Here the
# supervisor inherits 950 fds, and requests that never finish (one fd each,
# replaced as they time out) take the rest: accept fails with EMFILE while
# connections wait in the backlog. The supervisor must stop watching the listener (no spin), and
# serve again once fds come free.
test_accept_paused_at_fd_limit() {
	command -v strace >/dev/null || { t_skip "no strace (the test counts the supervisor's accept calls)"; return; }
	serve echo
	(
		for _ in $(seq 950); do exec {f}</dev/null; done
		echo $BASHPID >"$T_TMP/sub"
		exec timeout 300 prlimit --nofile=1024:1024 "$CORDON" run --workspace-mode direct --report "$T_TMP/r.json" \
			--net 127.0.0.1:$PORT -- /usr/bin/python3 -c "
import os, socket, time
import select
held = set()
def top_up():  # 300 waiting, in the supervisor or its backlog
    while len(held) < 300:
        s = socket.create_connection(('127.0.0.1', 3128))
        s.sendall(b'CONN')
        held.add(s)
top_up()
open('held', 'w').close()
for i in range(600):  # until the test has measured
    if os.path.exists('measured'):
        break
    # Refused after 10 s (408): the table stays full with new ones.
    r, _, _ = select.select(list(held), [], [], 0.1)
    for s in r:
        held.discard(s)
        s.close()
    top_up()
for s in held:
    s.close()  # fds come free in the supervisor, as it sees the closes
for i in range(120):  # refused (502, no fds yet) until it has
    s = socket.create_connection(('127.0.0.1', 3128))
    s.settimeout(60)
    s.sendall(b'CONNECT 127.0.0.1:$PORT HTTP/1.1\r\n\r\n')
    r = s.recv(39)
    if r.startswith(b'HTTP/1.1 200'):
        break
    s.close()
    time.sleep(0.5)
s.sendall(b'ping')
print(r.startswith(b'HTTP/1.1 200'), r if not r.startswith(b'HTTP/1.1 200') else s.recv(4))"
	) >"$T_TMP/out" 2>"$T_TMP/err" &
	local sub=$! calls="" emfile="" pid
	for _ in $(seq 1200); do [ -e held ] && break; sleep 0.1; done
	sleep 1 # the supervisor takes what it can from the backlog
	pid=$(pgrep -P "$(cat "$T_TMP/sub")" -x cordon)
	if [ -e held ] && [ -n "$pid" ]; then
		timeout -s INT 2 strace -qq -f -p "$pid" -e trace=accept,accept4,epoll_wait,epoll_pwait -o "$T_TMP/st" 2>/dev/null
		calls=$(wc -l <"$T_TMP/st")
		emfile=$(grep -c 'accept.*EMFILE' "$T_TMP/st")
	fi
	touch measured
	wait $sub
	local rc=$?
	stop $SRV
	R="$T_TMP/r.json"
	keep_report "$R"
	expect_eq "$rc" 0 "the run ended and cordon exited 0: $(tail -3 "$T_TMP/err")"
	[ -n "$emfile" ] && [ "$emfile" -gt 0 ] || fail "accept failed with EMFILE while measured (${emfile:-no} EMFILE in $calls calls): the supervisor was not out of fds"
	[ -n "$calls" ] && [ "$calls" -lt 200 ] || fail "the supervisor made $calls loop calls in 2 s out of fds (spinning on EMFILE?)"
	expect_eq "$(cat "$T_TMP/out")" "True b'ping'" "served again once fds came free"
	t_assert
}

for t in test_loopback_servers_inside_the_run test_localhost_rule_reaches_host test_explain_endpoints_agree_with_run test_unprivileged_user_all_layers test_http_clients_through_proxy test_git_over_http test_raw_socks5_client \
	test_package_managers_through_proxy test_other_port_denied_at_once test_direct_connect_fails_and_is_reported test_no_net_means_nothing \
	test_name_to_loopback_refused_wildcards_match test_literal_loopback_rule_reaches_host \
	test_slow_and_stuck_clients_do_not_stall_others test_proxy_buffers_are_bounded test_proxy_pipe_budget_refusal_comes_first \
	test_200_concurrent_connections \
	test_explain_and_ceiling_for_endpoints test_dns_lookup_in_flight_when_run_ends test_many_connections_under_fd_limit \
	test_proxy_socket_memory_is_bounded test_incomplete_and_malformed_requests_recorded test_bytes_up_counted_for_absolute_form \
	test_forward_host_header_rewritten test_fd_soft_limit_raised_for_supervisor_only \
	test_outputs_collected_while_proxy_holds_connections test_denial_targets_redacted_before_cut \
	test_method_path_rules_plain_http test_second_request_on_a_connection_checked \
	test_ceiling_bounds_method_path_rules test_bad_rule_objects_refused_with_location \
	test_refused_connect_costs_the_supervisor_o1 test_accept_paused_at_fd_limit; do
	t_run $t
done

# Issue 27.8 review: what the run binds cannot switch the kernel's answer off
# (the check of sock_diag was a dump of the listeners on port 1, which 1,500
# of the run's listeners there made too long: then the port-only /proc
# fallback took 127.0.0.1:6000 for reached, a listener being on 127.0.0.2:6000).
test_sockdiag_not_switched_off_by_the_run() {
	cordon_run -- /usr/bin/python3 -c "
import resource, socket
# 1500 sockets: the soft limit up to the hard one (a login's soft 1024, as in the VM guest)
resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
keep = []
for i in range(1500):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('127.0.%d.%d' % (1 + i // 250, 1 + i % 250), 1)); s.listen(1); keep.append(s)
real = socket.socket(); real.bind(('127.0.0.1', 5000)); real.listen(64)
other = socket.socket(); other.bind(('127.0.0.2', 6000)); other.listen(16)
s = socket.socket()
try: s.connect(('127.0.0.1', 6000)); print('6000 reached')
except OSError as e: print('6000', e.errno)
for i in range(20):
    c = socket.socket(); c.connect(('127.0.0.1', 5000)); real.accept()[0].close(); c.close()
print('5000 reached')"
	expect_eq "$OUT" $'6000 111\n5000 reached' "the run's connects"
	expect_eq "$(field '[.denials[] | .target] | join(",")')" "127.0.0.1:6000" "the refused connect alone is a denial"
	t_assert
}

# A listener bound to the device lo (SO_BINDTODEVICE) takes a connect on
# loopback; the kernel's lookup for interface 0 skipped it.
test_listener_bound_to_lo_is_the_runs() {
	cordon_run -- /usr/bin/python3 -c "
import socket
for fam, host in ((socket.AF_INET, '127.0.0.1'), (socket.AF_INET6, '::1')):
    l = socket.socket(fam); l.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b'lo')
    l.bind((host, 0)); l.listen(8)
    c = socket.socket(fam); c.connect(l.getsockname()[:2]); l.accept(); print('reached', host)"
	expect_eq "$OUT" $'reached 127.0.0.1\nreached ::1' "both connects reach the run's listeners"
	expect_eq "$(field '.denials | length')" 0 "no denials"
	t_assert
}

# [::ffff:127.0.0.1]:P is loopback: reaching the run's own listener there is
# no denial; a closed port there is one.
test_v4_mapped_loopback_is_loopback() {
	cordon_run -- /usr/bin/python3 -c "
import socket
l = socket.socket(); l.bind(('127.0.0.1', 7100)); l.listen(8)
c = socket.socket(socket.AF_INET6); c.connect(('::ffff:127.0.0.1', 7100)); l.accept(); print('reached')
c = socket.socket(socket.AF_INET6)
try: c.connect(('::ffff:127.0.0.1', 7101))
except OSError as e: print('closed', e.errno)"
	expect_eq "$OUT" $'reached\nclosed 111' "the run's connects"
	expect_eq "$(field '[.denials[] | .target] | join(",")')" "[::ffff:127.0.0.1]:7101" "only the closed port is a denial"
	t_assert
}

for t in test_sockdiag_not_switched_off_by_the_run test_listener_bound_to_lo_is_the_runs test_v4_mapped_loopback_is_loopback; do
	t_run $t
done

# Issue 27.2 review, item 4: after a 101 the bytes go on unread, so only a
# websocket upgrade is let through (h2c would carry requests to any vhost
# or path unchecked); an upstream that switches to another protocol than
# websocket is not relayed, not even its 101.
test_only_websocket_upgrades() {
	local log="$T_TMP/up.log"
	serve upgrade "$log"
	cordon_run --net 127.0.0.1:$PORT -- /usr/bin/python3 -c "
import socket
def ask(path, proto, then=b''):
    s = socket.create_connection(('127.0.0.1', 3128))
    s.sendall(b'GET http://127.0.0.1:$PORT%s HTTP/1.1\r\nHost: 127.0.0.1:$PORT\r\nConnection: Upgrade\r\nUpgrade: %s\r\n\r\n' % (path, proto))
    r = b''
    while b'\r\n\r\n' not in r:
        d = s.recv(4096)
        if not d: break
        r += d
    print((r.split(b'\r\n')[0].decode() + ' ' + (r.split(b'\r\n\r\n', 1) + [b''])[1].decode()).strip() or 'closed')
    if r.startswith(b'HTTP/1.1 101'): s.sendall(then)
    s.close()
ask(b'/a', b'h2c', b'GET /admin HTTP/1.1\r\nHost: other.example\r\n\r\n')
ask(b'/ws', b'websocket', b'ws-bytes')
ask(b'/h2c', b'websocket', b'GET /admin HTTP/1.1\r\nHost: other.example\r\n\r\n')"
	for _ in $(seq 100); do [ "$(grep -c '^====' "$log" 2>/dev/null)" -ge 2 ] && break; sleep 0.05; done
	stop $SRV
	expect_eq "$(printf '%s\n' "$OUT" | cut -c1-40)" "$(printf '%s\n' "HTTP/1.1 403 Forbidden cordon: GET 127.0" "HTTP/1.1 101 Switching Protocols" closed)" "h2c refused, websocket switched, an upstream's h2c not relayed"
	expect_match "$OUT" "an Upgrade other than websocket" "the 403 says why"
	expect_match "$(field '[.denials[] | .target] | join(",")')" "^GET 127.0.0.1:$PORT/a \(an Upgrade other than websocket" "a denial"
	expect_match "$(cat "$log")" "ws-bytes" "websocket bytes relayed"
	expect_nomatch "$(cat "$log")" "admin|Upgrade: h2c" "nothing of the h2c requests went on but the refused switch's head"
	t_assert
}

for t in test_only_websocket_upgrades; do
	t_run $t
done

# Issue 27.2 review, item 5, on a plain connection: the fields the client's
# Connection names are dropped (the websocket's Upgrade kept), one Connection
# of the proxy's goes on.
test_hop_by_hop_fields_dropped_plain() {
	local log="$T_TMP/up.log"
	serve upgrade "$log"
	cordon_run --net 127.0.0.1:$PORT -- /usr/bin/python3 -c "
import socket
s = socket.create_connection(('127.0.0.1', 3128))
s.sendall(b'GET http://127.0.0.1:$PORT/ws HTTP/1.1\r\nHost: 127.0.0.1:$PORT\r\nConnection: Upgrade, X-Hop\r\nUpgrade: websocket\r\nX-Hop: 1\r\nX-Keep: 1\r\n\r\n')
r = b''
while b'\r\n\r\n' not in r: r += s.recv(4096)
print(r.split(b'\r\n')[0].decode()); s.close()"
	for _ in $(seq 100); do grep -q '^====' "$log" 2>/dev/null && break; sleep 0.05; done
	stop $SRV
	expect_eq "$OUT" "HTTP/1.1 101 Switching Protocols" "switched"
	expect_eq "$(grep -ci '^x-hop' "$log") $(grep -ci '^x-keep: 1' "$log") $(grep -ci '^connection:' "$log") $(grep -ci '^connection: upgrade' "$log") $(grep -ci '^upgrade: websocket' "$log")" \
		"0 1 1 1 1" "X-Hop dropped, X-Keep kept, the proxy's Connection: Upgrade, Upgrade kept"
	t_assert
}

# Outside review of cordon-oci, 2 (the proxy is shared): a client that
# resets its connection while the proxy is still connecting upstream (here
# to a listener whose backlog is full: the SYN waits) must not make the
# supervisor spin on the client's hang-up until the connect ends. Measured
# as the supervisor's own CPU (its /proc stat, ticks) over the two seconds
# the run then waits: a few ticks, where the spin took a core.
test_client_reset_while_connecting_costs_nothing() {
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	python3 -c "
import socket, time
s = socket.socket(); s.bind(('127.0.0.1', $port)); s.listen(0)
k = []
for i in range(3):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(('127.0.0.1', $port))
    except BlockingIOError: pass
    k.append(c)
time.sleep(60)" &
	local full=$!
	sleep 0.5
	"$CORDON" run --workspace-mode direct --net "127.0.0.1:$port" --report "$T_TMP/r.json" -- /usr/bin/python3 -c "
import os, socket, struct, time
for i in range(3):
    c = socket.create_connection(('127.0.0.1', 3128))
    c.sendall(b'CONNECT 127.0.0.1:$port HTTP/1.1\r\n\r\n')
    time.sleep(0.3)  # the proxy is connecting upstream by now
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
    c.close()        # a reset
open('reset', 'w').close()
while not os.path.exists('end'): time.sleep(0.02)" >/dev/null 2>&1 &
	local pid=$! t0 t1
	for _ in $(seq 600); do [ -e reset ] && break; sleep 0.05; done
	[ -e reset ] || fail "the run did not reset its connections"
	t0=$(awk '{print $14 + $15}' /proc/$pid/stat)
	sleep 2
	t1=$(awk '{print $14 + $15}' /proc/$pid/stat)
	touch end
	wait $pid
	kill $full 2>/dev/null
	wait $full 2>/dev/null
	[ $((t1 - t0)) -le 20 ] || fail "the supervisor used $((t1 - t0)) ticks of CPU in the 2 s after the resets"
	t_assert
}

for t in test_hop_by_hop_fields_dropped_plain test_client_reset_while_connecting_costs_nothing; do
	t_run $t
done
