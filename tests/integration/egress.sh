# Issue 33, step 1: transparent egress's own resolver (network.transparent).
# The supervisor answers DNS for the run at 127.0.0.53:53: declared names get
# synthetic addresses, every other name NXDOMAIN and a network denial.
. "$(dirname "$0")/../lib.sh"

# The run's /etc/resolv.conf is bound over the host's: a plain file needed.
need_resolv_file() {
	[ -f /etc/resolv.conf ] && [ ! -L /etc/resolv.conf ] ||
		t_skip "the host's /etc/resolv.conf is not a plain file"
}

transparent_policy() { # [EXTRA NETWORK KEYS]
	cat >p.json <<JSON
{"network": {"allow": ["db.internal:8080", "*.example.com:443", "svc.test:*"],
             "transparent": true, "resolve": {"db.internal": "127.0.0.1"}${1:-}}}
JSON
}

# dnsq.py: raw DNS queries to the run's resolver, over UDP or TCP.
write_dnsq() {
	cat >dnsq.py <<'PY'
import socket, struct, sys
def q(name, qtype=1, qid=0x4242):
    b = struct.pack('>HHHHHH', qid, 0x0100, 1, 0, 0, 0)
    for l in name.split('.'):
        b += bytes([len(l)]) + l.encode()
    return b + b'\0' + struct.pack('>HH', qtype, 1)
def udp(msg, wait=True):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(10)
    s.sendto(msg, ('127.0.0.53', 53))
    r = s.recv(4096) if wait else b''
    s.close()
    return r
def tcp_conn():
    s = socket.create_connection(('127.0.0.53', 53), timeout=10)
    return s
def tcp(s, msg):
    s.sendall(struct.pack('>H', len(msg)) + msg)
    n = struct.unpack('>H', s.recv(2, socket.MSG_WAITALL))[0]
    return s.recv(n, socket.MSG_WAITALL)
def rcode(r):
    return r[3] & 15
def addr(r):
    return socket.inet_ntop(socket.AF_INET if len(r) - r.rfind(b'\xc0\x0c') == 16 else socket.AF_INET6,
                            r[r.rfind(b'\xc0\x0c') + 12:]) if struct.unpack('>H', r[6:8])[0] else None
PY
}

test_declared_names_get_synthetic_addresses() {
	need_resolv_file || return
	transparent_policy
	write_dnsq
	cordon_run --policy p.json -- /bin/sh -c '
		grep -c "^nameserver 127.0.0.53$" /etc/resolv.conf
		getent ahostsv4 db.internal | head -1 | cut -d" " -f1
		/usr/bin/python3 -c "
import socket, dnsq
print(socket.getaddrinfo(\"API.example.com\", 443, socket.AF_INET)[0][4][0])
print(socket.getaddrinfo(\"api.example.com\", 443, socket.AF_INET6)[0][4][0])
print(socket.getaddrinfo(\"svc.test\", 9, socket.AF_INET)[0][4][0])
s = dnsq.tcp_conn()
print(dnsq.addr(dnsq.tcp(s, dnsq.q(\"db.internal\"))), dnsq.addr(dnsq.tcp(s, dnsq.q(\"db.internal\", 28))))
r = dnsq.udp(dnsq.q(\"db.internal\", 15))
print(\"MX\", dnsq.rcode(r), dnsq.addr(r))
for n in (\"evil.test\", \"example.com\", \"db.internal.evil.test\"):
    try:
        socket.getaddrinfo(n, 443, socket.AF_INET)
        print(n, \"resolved\")
    except socket.gaierror as e:
        print(n, e.errno == socket.EAI_NONAME)
print(dnsq.rcode(dnsq.udp(dnsq.q(\"evil.test\"))))
"'
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$OUT" $'1\n198.18.0.1\n198.18.0.2\nfd63:6f72:646e::2\n198.18.0.3\n198.18.0.1 fd63:6f72:646e::1\nMX 0 None\nevil.test True\nexample.com True\ndb.internal.evil.test True\n3' \
		"synthetic addresses, one per name, the same over UDP and TCP; NXDOMAIN for the rest"
	expect_eq "$(field '.network.dns.names')" 3 "names in the table"
	expect_eq "$(field '[.denials[] | select(.kind == "network" and (.target | startswith("dns "))) | .target] | sort | join(",")')" \
		"dns db.internal.evil.test,dns evil.test,dns example.com" "each undeclared name a network denial"
	expect_eq "$(field '.verdicts.containment')" violations "denials make the containment verdict"
	t_assert
}

test_undeclared_names_bounded() {
	need_resolv_file || return
	transparent_policy
	write_dnsq
	# 100,000 distinct undeclared names (the issue's count: far past the
	# report's 1,024 distinct denials; 64 in flight at once on one socket;
	# 5,000 in the emulated test guest), then 5,000 distinct subdomains of
	# a declared wildcard (past the table's 4,096 names); the resolver
	# answers every one.
	local n=100000
	[ -n "${CORDON_TEST_SLOW:-}" ] && n=5000
	cordon_run --policy p.json -- /usr/bin/python3 -c '
import dnsq, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(30)
s.connect(("127.0.0.53", 53))
bad = 0
for b in range(0, '$n', 64):
    k = min(64, '$n' - b)
    for i in range(b, b + k):
        s.send(dnsq.q("n%d.undeclared.test" % i, 1, i & 0xffff))
    for i in range(k):
        bad += dnsq.rcode(s.recv(512)) == 3
ok = full = 0
for i in range(5000):
    r = dnsq.udp(dnsq.q("h%d.example.com" % i, 1, i))
    ok += dnsq.rcode(r) == 0 and dnsq.addr(r) is not None
    full += dnsq.rcode(r) == 2
print(bad, ok, full)
print(dnsq.addr(dnsq.udp(dnsq.q("h7.example.com"))))'
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$OUT" "$n"$' 4096 904\n198.18.0.8' "every query answered; the table stops at 4096 names, and keeps them"
	expect_eq "$(field '.network.dns.names')" 4096 "names"
	expect_eq "$(field '.network.dns.over_limit')" 904 "over the table's bound"
	expect_eq "$(field '.network.dns.refused')" "$n" "refused"
	# the report keeps 1,024 distinct denials and counts the rest
	expect_eq "$(field '[.denials[] | select(.target | startswith("dns n"))] | length')" 1024 "denials kept"
	expect_eq "$(field '.truncated.denials.count_omitted')" $((n - 1024)) "denials counted past the cap"
	t_assert
}

test_hostile_messages_and_slow_tcp_clients() {
	need_resolv_file || return
	transparent_policy
	write_dnsq
	# Garbage, a response, a compression pointer, two questions, an
	# oversized datagram; 40 TCP clients that send half a message and
	# stall, one that sends a length of 0: then a query over each path is
	# still answered.
	cordon_run --policy p.json -- /usr/bin/python3 -c '
import dnsq, socket, struct
for m in (b"\0", b"\xff" * 11, b"\x12\x34\x81\x00" + b"\0" * 8,
          dnsq.q("x")[:12] + b"\xc0\x0c\0\0\1\0\1", b"\x12\x34\x01\x00\x00\x02" + b"\0" * 6 + dnsq.q("a")[12:] * 2,
          dnsq.q("db.internal") + b"\0" * 600):
    dnsq.udp(m, wait=False)
r = dnsq.udp(dnsq.q("x")[:12] + b"\xc0\x0c\0\0\1\0\1")
print("pointer", dnsq.rcode(r))
stalled = []
for i in range(40):
    s = dnsq.tcp_conn()
    s.sendall(b"\0\x30\x12")
    stalled.append(s)
z = dnsq.tcp_conn()
z.sendall(b"\0\0")
print("zero-length closed", z.recv(1) == b"")
s = dnsq.tcp_conn()
print(dnsq.addr(dnsq.tcp(s, dnsq.q("db.internal"))))
print(dnsq.addr(dnsq.udp(dnsq.q("db.internal"))))'
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$OUT" $'pointer 1\nzero-length closed True\n198.18.0.1\n198.18.0.1' "malformed input answered FORMERR or dropped; the resolver still answers"
	t_assert
}

test_without_opt_in_nothing_changes() {
	need_resolv_file || return
	cat >p.json <<'JSON'
{"network": {"allow": ["db.internal:8080"], "resolve": {"db.internal": "127.0.0.1"}}}
JSON
	cordon_run --policy p.json -- /bin/sh -c 'cat /etc/resolv.conf; /usr/bin/python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.bind((\"127.0.0.53\", 53)); print(\"free\")
except OSError as e:
    print(e.errno)"'
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$OUT" "$(cat /etc/resolv.conf; echo free)" "the host's resolv.conf, no resolver in the run"
	expect_eq "$(field '.network.dns')" null "no dns section"
	# transparent: false is the same
	transparent_policy ', "transparent": false'
	sed -i 's/"transparent": true, //' p.json
	cordon_run --policy p.json -- /bin/cat /etc/resolv.conf
	expect_eq "$OUT" "$(cat /etc/resolv.conf)" "transparent false"
	t_assert
}

test_policy_errors() {
	printf '{"network": {"allow": ["a.test:1"], "transparent": "yes"}}' >p1.json
	printf '{"network": {"allow": ["a.test:1"], "resolve": {"bad name": "127.0.0.1"}}}' >p2.json
	printf '{"network": {"allow": ["a.test:1"], "resolve": {"a.test": "localhost"}}}' >p3.json
	cordon_run --policy p1.json -- /bin/true
	expect_eq "$RC" 125 "p1 refused"
	expect_match "$ERR" 'p1.json:1:.*network.transparent' "p1: where and what"
	cordon_run --policy p2.json -- /bin/true
	expect_match "$ERR" 'p2.json:1:[0-9]+: "network.resolve": "bad name" is not a host name' "p2"
	cordon_run --policy p3.json -- /bin/true
	expect_match "$ERR" 'p3.json:1:[0-9]+: "network.resolve": "localhost" is not an IPv4 or IPv6 address' "p3"
	t_assert
}

for t in test_declared_names_get_synthetic_addresses test_undeclared_names_bounded \
	test_hostile_messages_and_slow_tcp_clients test_without_opt_in_nothing_changes test_policy_errors; do
	t_run $t
done
