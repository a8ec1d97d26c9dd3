# Issue 16: TLS opened by the proxy where rules restrict requests or a secret
# is injected; credentials the run uses but never holds. Upstream servers on
# the host's 127.0.0.1 only, with a test CA made here.
. "$(dirname "$0")/../lib.sh"
TLSSERVER="$TOP/tests/tlsserver.py"
VALUE=real-value-$RANDOM$RANDOM$RANDOM-x

# A CA and a certificate for localhost and 127.0.0.1 signed by it, in $T_TMP.
make_ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T_TMP/ca.key" \
		-out "$T_TMP/ca.pem" -days 1 -subj /CN=cordon-test-ca 2>/dev/null &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T_TMP/srv.key" \
		-out "$T_TMP/srv.csr" -subj /CN=localhost 2>/dev/null &&
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$T_TMP/ext" &&
	openssl x509 -req -in "$T_TMP/srv.csr" -CA "$T_TMP/ca.pem" -CAkey "$T_TMP/ca.key" -CAcreateserial \
		-out "$T_TMP/srv.pem" -days 1 -extfile "$T_TMP/ext" 2>/dev/null || fail "make the test CA"
}
serve_tls() { # DIR [USER:PASS] -> PORT, SRV; requests logged in $T_TMP/log
	local pf="$T_TMP/port.$RANDOM"
	/usr/bin/python3 "$TLSSERVER" "$pf" "$T_TMP/log" "$T_TMP/srv.pem" "$T_TMP/srv.key" "$@" &
	SRV=$!
	server_port "$pf"
}
# The test CA, and a TLS server of www/ whose pub/a.txt says "pub".
serve_tls_pub() { # -> PORT, SRV
	make_ca
	mkdir -p www/pub && echo pub >www/pub/a.txt
	serve_tls "$WS/www"
}
# p.json: the items ALLOW of network.allow, upstreams trusted through the
# test CA, and the secret TOKEN (from HOST_TOKEN) injected to
# localhost:$PORT behind the placeholder ghp_.
inject_policy() { # ALLOW
	cat >p.json <<JSON
{"network": {"allow": [$1], "upstream_ca": "$T_TMP/ca.pem"},
 "secrets": {"TOKEN": {"env": "HOST_TOKEN", "inject": {"hosts": ["localhost:$PORT"], "placeholder": "ghp_"}}}}
JSON
}

# curl, Python requests and urllib, node https and git clone (Basic auth)
# with an injected credential; a second request on a keep-alive connection
# that breaks the path rule; the value nowhere in the run.
test_injected_credential_reaches_upstream_only() {
	make_ca
	mkdir -p www/pub www/git && echo pub >www/pub/a.txt
	git init -q "$T_TMP/src" && git -C "$T_TMP/src" -c user.name=a -c user.email=a@b commit -q --allow-empty -m one &&
		git clone -q --bare "$T_TMP/src" www/git/repo.git && git -C www/git/repo.git update-server-info || fail "test repository"
	serve_tls "$WS/www" "x:$VALUE"
	inject_policy "{\"host\": \"localhost:$PORT\", \"methods\": [\"GET\", \"HEAD\"], \"paths\": [\"/pub/**\", \"/git/**\"]}"
	HOST_TOKEN=$VALUE cordon_run --policy p.json --unprotect .git -- /bin/sh -c "
		curl -sS -D hdr.txt -H \"Authorization: Bearer \$TOKEN\" https://localhost:$PORT/pub/a.txt
		curl -sS -X POST https://localhost:$PORT/pub/a.txt
		python3 -c 'import os, requests; print(requests.get(\"https://localhost:$PORT/pub/a.txt\", headers={\"X-Api-Key\": os.environ[\"TOKEN\"]}).text.strip())'
		python3 -c 'import urllib.request; print(urllib.request.urlopen(\"https://localhost:$PORT/pub/a.txt\").read().decode().strip())'
		node -e '
const http = require(\"http\"), https = require(\"https\");
http.request({host: \"127.0.0.1\", port: 3128, method: \"CONNECT\", path: \"localhost:$PORT\"}).on(\"connect\", (res, socket) => {
  https.get({host: \"localhost\", port: $PORT, path: \"/pub/a.txt\", socket, agent: false, headers: {authorization: \"token \" + process.env.TOKEN}}, r => {
    let d = \"\"; r.on(\"data\", c => d += c); r.on(\"end\", () => { console.log(\"node \" + d.trim()); process.exit(0); });
  }).on(\"error\", e => { console.log(\"node error \" + e.message); process.exit(1); });
}).on(\"error\", e => { console.log(\"node error (CONNECT) \" + e.message); process.exit(1); }).end();'
		git clone -q https://x:\$TOKEN@localhost:$PORT/git/repo.git clone && git -C clone log --format=%s
		python3 -c '
import http.client, ssl
c = http.client.HTTPSConnection(\"127.0.0.1\", 3128, context=ssl.create_default_context())
c.set_tunnel(\"localhost\", $PORT)
c.request(\"GET\", \"/pub/a.txt\"); r = c.getresponse(); print(\"first\", r.status, r.read().decode().strip())
c.request(\"GET\", \"/priv/b.txt\"); r = c.getresponse(); print(\"second\", r.status)'
		env >env.txt
		python3 -c '
import re
with open(\"/proc/self/maps\") as m, open(\"/proc/self/mem\", \"rb\", 0) as mem, open(\"mem.dump\", \"wb\") as out:
    for l in m:
        a, perms = l.split()[:2]
        if \"r\" not in perms or \"[vvar\" in l or \"[vsyscall\" in l: continue
        lo, hi = (int(x, 16) for x in a.split(\"-\"))
        try: mem.seek(lo); out.write(mem.read(hi - lo))
        except OSError: pass'"
	stop $SRV
	expect_eq "$(printf '%s\n' "$OUT" | grep -c '^pub$')" 3 "curl, requests and urllib got the file: $OUT $ERR"
	expect_match "$OUT" "node pub" "node https ($(printf '%s' "$ERR" | tail -3))"
	expect_match "$OUT" "^one$" "git clone over HTTPS with Basic auth"
	expect_match "$OUT" "cordon: POST localhost:$PORT/pub/a.txt: no rule of network.allow admits it" "a refused method"
	expect_match "$OUT" "first 200 pub" "http.client, first request"
	expect_match "$OUT" "second 403" "the second request on a keep-alive connection is checked on its own"
	expect_eq "$(grep -c "Bearer $VALUE" "$T_TMP/log")" 1 "the upstream saw the value (curl)"
	expect_eq "$(grep -c "\"X-Api-Key\": \"$VALUE\"" "$T_TMP/log")" 1 "the upstream saw the value (requests)"
	expect_eq "$(grep -c "token $VALUE" "$T_TMP/log")" 1 "the upstream saw the value (node)"
	expect_eq "$(grep -c "Basic $(printf 'x:%s' "$VALUE" | base64 -w0)" "$T_TMP/log")" "$(grep -c '"/git/repo.git/' "$T_TMP/log" | xargs -I{} expr {} - 1)" \
		"git's Basic credentials carried the value (after the first 401)"
	expect_eq "$(grep -c ghp_ "$T_TMP/log")" 0 "no placeholder reached the upstream"
	expect_match "$(cat env.txt)" "^TOKEN=ghp_[0-9a-f]{32}$" "the run holds a placeholder"
	expect_match "$(cat hdr.txt)" "X-Echo: Bearer ghp_[0-9a-f]{32}" "an echoed value comes back as the placeholder"
	expect_match "$(cat env.txt)" "SSL_CERT_FILE=/run/cordon-ca/ca.pem" "the run's CA is announced"
	[ -s mem.dump ] || fail "memory dumped"
	expect_eq "$(grep -rlaF "$VALUE" . | wc -l)" 0 "the value is nowhere in the run's files or memory"
	expect_eq "$(grep -caF "$VALUE" "$R")" 0 "nor in the report"
	expect_eq "$(field -c '.network.injected')" "[{\"secret\":\"TOKEN\",\"host\":\"localhost:$PORT\",\"count\":$(grep -c "$VALUE\|$(printf 'x:%s' "$VALUE" | base64 -w0)" "$T_TMP/log")}]" "injections counted"
	expect_eq "$(field -c '[.network.requests[] | select(.method == "POST") | [.status, .injected]]')" '[[403,[]]]' "the refused request on record"
	expect_eq "$(field -c '.network.requests[0].injected')" '["TOKEN"]' "the first request carried it"
	t_assert
}

# An upstream that echoes the value in response bodies (Content-Length,
# chunked with the value split across chunks and in a trailer, to EOF; raw,
# hex and base64): the run gets the placeholder, never the value, and the
# re-framed bodies stay well framed (keep-alive, HTTP/1.0).
test_echoed_value_in_bodies_becomes_placeholder() {
	make_ca
	mkdir -p www
	serve_tls "$WS/www"
	inject_policy "{\"host\": \"localhost:$PORT\", \"methods\": [\"GET\"], \"paths\": [\"/echo/*\"]}"
	HOST_TOKEN=$VALUE cordon_run --policy p.json -- /bin/sh -c "
		for how in cl chunked eof; do
			curl -sS --raw -H \"Authorization: Bearer \$TOKEN\" https://localhost:$PORT/echo/\$how >\$how.raw
			curl -sS -H \"Authorization: Bearer \$TOKEN\" https://localhost:$PORT/echo/\$how >\$how.txt
		done
		curl -sS --http1.0 -H \"Authorization: Bearer \$TOKEN\" https://localhost:$PORT/echo/cl >h10.txt
		python3 -c '
import http.client, os, ssl
c = http.client.HTTPSConnection(\"127.0.0.1\", 3128, context=ssl.create_default_context())
c.set_tunnel(\"localhost\", $PORT)
for p in (\"cl\", \"chunked\", \"cl\"):
    c.request(\"GET\", \"/echo/\" + p, headers={\"Authorization\": \"Bearer \" + os.environ[\"TOKEN\"]})
    r = c.getresponse(); print(\"ka\", p, r.status, r.read().decode().split()[0])'
		echo \"TOKEN=\$TOKEN\" >env.txt"
	stop $SRV
	local ph
	ph=$(sed -n 's/^TOKEN=//p' env.txt)
	expect_match "$ph" "^ghp_[0-9a-f]{32}$" "the run holds a placeholder: $ERR"
	for how in cl chunked eof h10; do
		expect_eq "$(head -1 $how.txt)" "auth=Bearer $ph" "$how: the echoed value came back as the placeholder"
		expect_eq "$(sed -n 2p $how.txt)" "hex=$(printf "Bearer " | od -An -tx1 | tr -d " \n")$ph" "$how: its hex form too"
		expect_eq "$(tail -1 $how.txt)" end "$how: the whole body"
	done
	expect_match "$(cat chunked.raw)" "X-Trailer: Bearer $ph" "a trailer is filtered too"
	expect_eq "$(printf '%s\n' "$OUT" | grep -c "^ka .* 200 auth=Bearer$")" 3 "keep-alive across re-framed bodies: $OUT"
	expect_eq "$(grep -c "Bearer $VALUE" "$T_TMP/log")" 10 "the upstream saw the value each time"
	expect_eq "$(grep -rlaF "$VALUE" . | wc -l)" 0 "the value is nowhere in the run's files"
	expect_eq "$(grep -rlaF "$(printf 'Bearer %s' "$VALUE" | base64 -w0 | cut -c5-30)" . | wc -l)" 0 "nor its base64"
	t_assert
}

# Clients that ignore SSL_CERT_FILE and its kin trust the run's CA too: the
# bundle (host CAs + run CA) is bound read-only over the host's standard
# bundle file; explain lists it.
test_bundle_over_standard_path() {
	serve_tls_pub
	echo "{\"network\": {\"allow\": [{\"host\": \"localhost:$PORT\", \"paths\": [\"/pub/**\"]}], \"upstream_ca\": \"$T_TMP/ca.pem\"}}" >p.json
	cordon_run --policy p.json -- env -u SSL_CERT_FILE -u CURL_CA_BUNDLE -u REQUESTS_CA_BUNDLE -u NODE_EXTRA_CA_CERTS \
		-u GIT_SSL_CAINFO -u PIP_CERT -u AWS_CA_BUNDLE /bin/sh -c "
		env | grep -c '^[A-Z_]*=/run/cordon-ca' || true
		curl -sS https://localhost:$PORT/pub/a.txt
		python3 -c 'import urllib.request; print(\"py\", urllib.request.urlopen(\"https://localhost:$PORT/pub/a.txt\").read().decode().strip())'
		cmp /etc/ssl/certs/ca-certificates.crt /run/cordon-ca/ca.pem && echo same
		echo x 2>/dev/null >>/etc/ssl/certs/ca-certificates.crt || echo read-only"
	stop $SRV
	expect_eq "$(printf '%s\n' "$OUT" | head -1)" 0 "no CA variable left: $ERR"
	expect_match "$OUT" "^pub$" "curl without CURL_CA_BUNDLE or SSL_CERT_FILE"
	expect_match "$OUT" "^py pub$" "python's default context without SSL_CERT_FILE"
	expect_match "$OUT" "^same$" "the bundle over the standard path"
	expect_match "$OUT" "^read-only$" "read-only"
	expect_match "$("$CORDON" explain --policy p.json)" "ro \(host CAs \+ run CA\) /etc/ssl/certs/ca-certificates.crt" "explain lists it"
	t_assert
}

# A placeholder sent to a host the secret is not for: refused, a denial of
# kind secret. Plain HTTP to the secret's own host: refused too (TLS only).
test_placeholder_elsewhere_refused() {
	make_ca
	mkdir -p www && echo hi >www/a.txt
	serve_tls "$WS/www"
	local TLSPORT=$PORT TLSSRV=$SRV
	serve http "$WS/www"
	cat >p.json <<JSON
{"network": {"allow": ["localhost:$TLSPORT", "127.0.0.1:$PORT"], "upstream_ca": "$T_TMP/ca.pem"},
 "secrets": {"TOKEN": {"env": "HOST_TOKEN", "inject": {"hosts": ["localhost:$TLSPORT"]}}}}
JSON
	HOST_TOKEN=$VALUE cordon_run --policy p.json -- /bin/sh -c "
		curl -sS http://127.0.0.1:$PORT/a.txt
		curl -sS -H \"X-Leak: \$TOKEN\" http://127.0.0.1:$PORT/a.txt
		curl -sS \"http://127.0.0.1:$PORT/a.txt?k=\$TOKEN\"
		curl -sS -d \"x=\$TOKEN\" http://127.0.0.1:$PORT/a.txt"
	stop $SRV $TLSSRV
	expect_eq "$(printf '%s\n' "$OUT" | head -1)" hi "no placeholder, no refusal: $ERR"
	expect_eq "$(printf '%s\n' "$OUT" | grep -c 'the placeholder of secret TOKEN goes only to its hosts')" 2 "refused with 403 (header, query)"
	expect_match "$OUT" "placeholder in a request body" "refused in a body"
	expect_eq "$(field -c '[.denials[] | select(.kind == "secret") | [.target, .count]]')" "[[\"TOKEN -> 127.0.0.1:$PORT\",3]]" "denial of kind secret"
	expect_eq "$(field .verdicts.containment)" violations "a violation"
	t_assert
}

# An upstream whose certificate is not trusted fails closed (502, on
# record); a CONNECT to a host without rules or secrets stays an opaque
# tunnel (the client sees the server's own certificate).
test_bad_upstream_refused_opaque_tunnel_untouched() {
	serve_tls_pub
	cp "$T_TMP/ca.pem" test-ca.pem
	echo "{\"network\": {\"allow\": [{\"host\": \"localhost:$PORT\", \"paths\": [\"/pub/**\"]}, \"127.0.0.1:$PORT\"]}}" >p.json
	cordon_run --policy p.json -- /bin/sh -c "
		curl -sS https://localhost:$PORT/pub/a.txt; echo \"rc \$?\"
		curl -s --cacert test-ca.pem https://localhost:$PORT/pub/a.txt; echo \"distrust \$?\"
		curl -sS --cacert test-ca.pem https://127.0.0.1:$PORT/pub/a.txt"
	stop $SRV
	expect_match "$OUT" "cordon: localhost:$PORT: the upstream's TLS was not accepted: certificate not verified" "502 names why"
	expect_match "$OUT" "rc 0" "the client got an answer (502), not a broken connection"
	expect_eq "$(printf '%s\n' "$OUT" | grep -c '^pub$')" 1 "the opaque tunnel verified the server's own certificate: $OUT $ERR"
	expect_match "$OUT" "distrust 60" "a client that does not trust the run's CA fails its handshake"
	expect_match "$(field -c '.denials[] | [.target, .count]')" "^\\[\"localhost:$PORT \\(upstream TLS: certificate not verified.*\",2\\]" \
		"on record, also when the client's handshake never completed"
	expect_eq "$(field '.network.requests | length')" 0 "no request read (none passed; the tunnel is not opened)"
	expect_eq "$(field .verdicts.containment)" violations "a violation"
	t_assert
}

# The ceiling pins where a secret may be injected; explain shows the hosts
# (text and --json).
test_ceiling_pins_injection_hosts() {
	echo '{"secrets": {"T": {"env": "X", "inject": {"hosts": ["*.example.org:443"]}}}, "network": {"allow": ["*.example.org:443", "b.example.com:443"]}}' >"$T_TMP/c.json"
	ok() { echo "{\"secrets\": {\"T\": {\"env\": \"X\"$1}}, \"network\": {\"allow\": [\"api.example.org:443\"]}}" >p.json
		"$CORDON" explain --ceiling "$T_TMP/c.json" --policy p.json 2>&1; }
	expect_match "$(ok ', "inject": {"hosts": ["api.example.org:443"], "placeholder": "sk-"}')" \
		"T: the run holds a placeholder starting sk-; the proxy injects the value \(headers\) to api.example.org:443 \(over TLS only\)" "within, and explained"
	expect_match "$(ok ', "inject": {"hosts": ["b.example.com:443"]}')" "REFUSED secret +T: the ceiling does not inject it to b.example.com:443" "another host"
	expect_match "$(ok ', "inject": {"hosts": ["api.example.org:443"], "allow_plaintext": true}')" "REFUSED secret +T: the ceiling injects it over TLS only" "plaintext"
	# --json: the same hosts, never the value; without injection no key
	ok ', "inject": {"hosts": ["api.example.org:443"], "in": ["header", "query"], "placeholder": "sk-"}' >/dev/null
	X=secret-value-$RANDOM$RANDOM "$CORDON" explain --json --policy p.json >e.json 2>&1
	expect_eq "$(jq -c .injected e.json)" \
		'[{"secret":"T","hosts":["api.example.org:443"],"in":["header","query"],"placeholder_prefix":"sk-","allow_plaintext":false}]' \
		"explain --json lists the injected secret's hosts"
	expect_eq "$(grep -c secret-value e.json)" 0 "never the value"
	/usr/bin/python3 "$TOP/tests/validate.py" "$TOP/schemas/explain.schema.json" e.json >/dev/null || fail "explain --json validates"
	ok '' >/dev/null
	expect_eq "$(X=v "$CORDON" explain --json --policy p.json | jq 'has("injected")')" false "no key without injection"
	echo '{"secrets": {"T": {"env": "X", "inject": {"hosts": ["a:443"], "in": ["body"]}}}}' >p.json
	expect_match "$("$CORDON" validate p.json 2>&1)" "p.json:1:[0-9]+: secret \"T\": \"in\" takes \"header\" and \"query\"" "a bad inject"
	t_assert
}

# Review 4 F1: a response head the proxy cannot read (the upstream echoes a
# padded Authorization: over 16 KiB, though the request's head was not):
# with a secret injected, none of it reaches the run, which gets a 502, and
# the connection ends; the request pipelined behind it (whose answer echoes
# the value) is never answered on it. On record as a denial.
test_unreadable_response_ends_connection() {
	serve_tls_pub
	inject_policy "\"localhost:$PORT\""
	HOST_TOKEN=$VALUE cordon_run --policy p.json -- python3 -c '
import os, socket, ssl
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT localhost:'"$PORT"' HTTP/1.1\r\n\r\n")
r = b""
while b"\r\n\r\n" not in r: r += s.recv(1)
t = ssl.create_default_context().wrap_socket(s, server_hostname="localhost")
a = "Authorization: Bearer " + os.environ["TOKEN"]
t.sendall(("GET /pub/a.txt HTTP/1.1\r\nHost: localhost:'"$PORT"'\r\n%s%s\r\n\r\nGET /echo/cl HTTP/1.1\r\nHost: localhost:'"$PORT"'\r\n%s\r\n\r\n" % (a, "p" * 16200, a)).encode())
out = b""
while True:
    x = t.recv(65536)
    if not x: break
    out += x
open("out", "wb").write(out)'
	stop $SRV
	expect_match "$(head -c 300 out)" "^HTTP/1.1 502 Bad Gateway" "a 502 for the unreadable response: $ERR"
	expect_match "$(cat out)" "the upstream's response cannot be read" "it says why"
	expect_eq "$(grep -ca 'auth=' out)" 0 "nothing of the next response"
	expect_eq "$(grep -caF "$VALUE" out)" 0 "the value did not reach the run"
	expect_match "$(field -c '.denials[] | [.kind, .target]')" "\\[\"network\",\"localhost:$PORT \\(a response the proxy cannot read" "on record"
	# The pipelined request waited for that answer, which ended the
	# connection: it never went upstream (the server logs what it got).
	expect_eq "$(field -c '[.network.requests[] | .status]')" '[502]' "the request's status, and no other read"
	expect_eq "$(grep -c '"/pub/a.txt"' "$T_TMP/log") $(grep -c '"/echo/cl"' "$T_TMP/log")" "1 0" "upstream got the first request only"
	t_assert
}

# TLS is a module (lib/tls-load.c): cordon itself links no libssl, whose
# 19,000 relocations every start paid; cordon-tls.so, beside it, exports its
# table alone. The tests above run through it.
test_tls_is_a_module() {
	expect_eq "$(nm "$CORDON" | grep -cE ' [TtDd] (SSL_new|SSL_CTX_new|OSSL_provider_init|tls_ca_new)$')" 0 "no libssl, no tls.c in cordon"
	expect_eq "$(nm -D --defined-only "$(dirname "$CORDON")/cordon-tls.so" | awk '{print $3}')" tls_module_ops "the module's one export"
	expect_eq "$(ldd "$CORDON" | grep -c libssl)" 0 "nor the shared libssl"
	# The module runs as the supervisor (root here): one that someone other
	# than cordon's owner could have written is refused, never loaded.
	mkdir bin && cp "$CORDON" "$(dirname "$CORDON")/cordon-tls.so" bin/ || fail "copy"
	echo '{"network": {"allow": [{"host": "localhost:9", "methods": ["GET"]}]}}' >p.json
	for bad in "chmod g+w bin/cordon-tls.so" "chown 1234 bin/cordon-tls.so" "chmod o+w bin"; do
		chmod 0755 bin && chmod 0755 bin/cordon-tls.so && chown 0 bin/cordon-tls.so && $bad
		bin/cordon run --policy p.json -- /bin/true 2>err
		expect_eq "$?" 125 "$bad: refused"
		expect_match "$(cat err)" "cordon-tls.so is not trusted as cordon is" "$bad: said"
	done
	chmod 0755 bin && chmod 0755 bin/cordon-tls.so && chown 0 bin/cordon-tls.so
	bin/cordon run --policy p.json -- /bin/true 2>err
	expect_eq "$?" 0 "the module as cordon's: loaded"
	t_assert
}

# Issue 27.2: on an opened connection the upstream gets exactly one Host, the
# authority the CONNECT was decided on. The run's own Host (another name,
# the port left out, a trailing dot, two Host lines, another on the second
# request of a keep-alive connection) is refused with 403, a denial, and
# nothing of that request (least of all the injected value) goes upstream;
# none (HTTP/1.0): the proxy writes the authority. The upstream's SNI is the
# authority too, whatever name the client's TLS asked for.
test_run_host_never_goes_upstream() {
	serve_tls_pub
	inject_policy "\"localhost:$PORT\""
	HOST_TOKEN=$VALUE cordon_run --policy p.json -- /bin/sh -c "
		for h in attacker-tenant.example localhost localhost.:$PORT; do
			curl -sS -H \"Host: \$h\" -H \"Authorization: Bearer \$TOKEN\" https://localhost:$PORT/pub/a.txt
		done
		curl -sS -H \"Authorization: Bearer \$TOKEN\" https://localhost:$PORT/pub/a.txt
		python3 -c '
import os, socket, ssl
def tunnel(sni=\"localhost\"):
    s = socket.create_connection((\"127.0.0.1\", 3128))
    s.sendall(b\"CONNECT localhost:$PORT HTTP/1.1\r\n\r\n\")
    r = b\"\"
    while b\"\r\n\r\n\" not in r: r += s.recv(1)
    c = ssl.create_default_context()
    c.check_hostname = sni == \"localhost\"
    return c.wrap_socket(s, server_hostname=sni)
def ask(t, req):
    t.sendall(req.encode())
    out = b\"\"
    try:
        while True:
            x = t.recv(65536)
            if not x: break
            out += x
    except OSError:
        pass
    return out
a = \"Authorization: Bearer \" + os.environ[\"TOKEN\"]
o = ask(tunnel(), \"GET /pub/a.txt?dup HTTP/1.1\r\nHost: localhost:$PORT\r\nhost: attacker-tenant.example\r\n%s\r\n\r\n\" % a)
print(\"dup\", o.split(b\"\r\n\")[0].decode())
o = ask(tunnel(), \"GET /pub/a.txt?ka HTTP/1.1\r\nHost: localhost:$PORT\r\n%s\r\n\r\nGET /pub/a.txt?ka2 HTTP/1.1\r\nHost: attacker-tenant.example\r\n%s\r\n\r\n\" % (a, a))
print(\"ka\", o.count(b\"HTTP/1.1 200\"), o.count(b\"HTTP/1.1 403\"))
o = ask(tunnel(\"attacker-tenant.example\"), \"GET /pub/a.txt?sni HTTP/1.1\r\nHost: localhost:$PORT\r\nConnection: close\r\n%s\r\n\r\n\" % a)
print(\"sni\", o.split(b\"\r\n\")[0].decode())
o = ask(tunnel(), \"GET /pub/a.txt?h10 HTTP/1.0\r\n\r\n\")
print(\"h10\", o.split(b\"\r\n\")[0].decode())'"
	stop $SRV
	expect_eq "$(printf '%s\n' "$OUT" | grep -c "cordon: GET localhost:$PORT/pub/a.txt: a Host other than the connection's authority")" 3 \
		"curl's Host refused three times: $OUT $ERR"
	expect_eq "$(printf '%s\n' "$OUT" | grep -c '^pub$')" 1 "curl without -H Host got the file"
	expect_match "$OUT" "dup HTTP/1.1 403 Forbidden" "two Host lines refused"
	expect_match "$OUT" "ka 1 1" "keep-alive: the first answered, the second (another Host) refused"
	expect_match "$OUT" "sni HTTP/1.1 200 OK" "the client's SNI is not the upstream's"
	expect_match "$OUT" "h10 HTTP/1.1 200 OK" "HTTP/1.0 without Host"
	expect_eq "$(jq -c .hosts "$T_TMP/log" | sort -u)" "[\"localhost:$PORT\"]" "every request upstream had one Host, the authority"
	expect_eq "$(jq -r .p "$T_TMP/log" | sort | tr '\n' ' ')" "/pub/a.txt /pub/a.txt?h10 /pub/a.txt?ka /pub/a.txt?sni " "only the admitted requests went upstream"
	expect_eq "$(jq -r .sni "$T_TMP/log" | sort -u)" localhost "the upstream's SNI is the authority"
	expect_eq "$(grep -c attacker-tenant "$T_TMP/log")" 0 "the run's name never went upstream"
	expect_eq "$(grep -c "Bearer $VALUE" "$T_TMP/log")" 3 "the value went with the admitted requests only"
	expect_eq "$(field -c '[.denials[] | select(.target | test("Host")) | .count] | add')" 5 "each refusal a denial"
	expect_match "$(field -c '.denials[] | .target')" "GET localhost:$PORT/pub/a.txt \\(more than one Host header\\)" "named"
	expect_eq "$(field -c '[.network.requests[] | select(.status == 403)] | length')" 5 "logged with 403"
	expect_eq "$(field .verdicts.containment)" violations "a violation"
	t_assert
}

for t in test_tls_is_a_module test_injected_credential_reaches_upstream_only test_echoed_value_in_bodies_becomes_placeholder test_bundle_over_standard_path \
	test_placeholder_elsewhere_refused test_bad_upstream_refused_opaque_tunnel_untouched test_ceiling_pins_injection_hosts \
	test_unreadable_response_ends_connection test_run_host_never_goes_upstream; do
	t_run $t
done

# Issue 27.2 review, item 5: hop-by-hop fields. The client's Connection and
# every field it names stay here (an intermediary upstream would strip what
# it names, Host included, and route by its default host with the injected
# credential); the proxy writes its own Connection. A Connection naming Host,
# the body's framing or a header carrying a placeholder is refused. A chunked
# body's trailers are dropped (a Host there).
test_hop_by_hop_fields_and_trailers_stay_here() {
	serve_tls_pub
	inject_policy "{\"host\": \"localhost:$PORT\", \"paths\": [\"/pub/**\"]}"
	HOST_TOKEN=$VALUE cordon_run --policy p.json -- /usr/bin/python3 -c "
import os, socket, ssl
def ask(name, req):
    s = socket.create_connection(('127.0.0.1', 3128))
    s.sendall(b'CONNECT localhost:$PORT HTTP/1.1\r\n\r\n')
    r = b''
    while b'\r\n\r\n' not in r: r += s.recv(1)
    c = ssl.create_default_context(); c.check_hostname = False; c.verify_mode = ssl.CERT_NONE
    t = c.wrap_socket(s, server_hostname='localhost'); t.settimeout(10)
    t.sendall(req.encode())
    out = b''
    try:
        while b'\r\n\r\n' not in out or not out.endswith(b'\n'):
            x = t.recv(65536)
            if not x: break
            out += x
    except OSError: pass
    print(name, out.split(b'\r\n')[0].decode(), out.split(b'\r\n')[-1].decode().strip())
H = 'Host: localhost:$PORT\r\nAuthorization: Bearer ' + os.environ['TOKEN'] + '\r\n'
ask('hop', 'GET /pub/a.txt?hop HTTP/1.1\r\n' + H + 'Connection: keep-alive, X-Hop\r\nX-Hop: 1\r\nX-Keep: 1\r\n\r\n')
ask('host', 'GET /pub/a.txt?host HTTP/1.1\r\n' + H + 'Connection: keep-alive, Host\r\n\r\n')
ask('auth', 'GET /pub/a.txt?auth HTTP/1.1\r\n' + H + 'Connection: Authorization\r\n\r\n')
ask('cl', 'POST /pub/a.txt?cl HTTP/1.1\r\n' + H + 'Content-Length: 3\r\nConnection: content-length\r\n\r\nabc')
ask('trailer', 'POST /pub/a.txt?trailer HTTP/1.1\r\n' + H + 'Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nHost: attacker-tenant.example\r\nX-T: 1\r\n\r\n')"
	stop $SRV
	expect_match "$OUT" "hop HTTP/1.1 200 OK" "a named field: the request goes on"
	expect_eq "$(jq -c 'select(.p == "/pub/a.txt?hop") | [.h["X-Hop"], .h["X-Keep"], .conn]' "$T_TMP/log")" '[null,"1",["keep-alive"]]' \
		"the named field dropped, the others kept, the proxy's own Connection"
	expect_match "$OUT" "host HTTP/1.1 403 Forbidden cordon: GET localhost:$PORT/pub/a.txt: Connection names Host" "Connection: Host refused"
	expect_match "$OUT" "auth HTTP/1.1 403 Forbidden .*a header a secret is injected into" "Connection naming the credential's header refused"
	expect_match "$OUT" "cl HTTP/1.1 403 Forbidden .*the body's framing" "Connection naming Content-Length refused"
	expect_eq "$(jq -r .p "$T_TMP/log" | sort | tr '\n' ' ')" "/pub/a.txt?hop /pub/a.txt?trailer " "the refused went nowhere"
	expect_match "$OUT" "trailer HTTP/1.1 200 OK" "a request with trailers goes on"
	expect_eq "$(jq -c 'select(.p == "/pub/a.txt?trailer") | .body' "$T_TMP/log")" '"3\r\nabc\r\n0\r\n\r\n"' "without its trailers"
	expect_eq "$(grep -c attacker-tenant "$T_TMP/log")" 0 "the trailer's Host never went upstream"
	expect_eq "$(field -c '[.denials[] | select(.target | test("Connection names"))] | length')" 3 "each refusal a denial"
	t_assert
}

for t in test_hop_by_hop_fields_and_trailers_stay_here; do
	t_run $t
done

# Issue 35: the degraded boundary (no namespaces) keeps the proxy where
# Landlock refuses the run's own TCP (ABI 4) and seccomp can notify: TLS is
# opened there as in a full run, the secret injected upstream only, a
# method refused, the value nowhere in the run.
test_degraded_boundary_injects_and_refuses() {
	[ "$(uname -m)" = x86_64 ] && [ -x "$BUILD/probe-restrict" ] || { t_skip "probe-restrict filters x86_64 system calls only"; return; }
	[ "$(landlock_abi)" -ge 4 ] || { t_skip "the degraded boundary keeps its proxy where Landlock has ABI 4"; return; }
	[ "$(id -u)" = 0 ] || [ "$(landlock_abi)" -ge 6 ] || { t_skip "an ordinary user's degraded run needs Landlock ABI 6"; return; }
	serve_tls_pub
	inject_policy "{\"host\": \"localhost:$PORT\", \"methods\": [\"GET\"], \"paths\": [\"/pub/**\"]}"
	chmod 755 "$T_TMP"
	R=$T_TMP/degraded-tls.json
	OUT=$(HOST_TOKEN=$VALUE "$BUILD/probe-restrict" nouserns "$CORDON" run --report "$R" --allow-weaker namespaces \
		--policy p.json --ro "$BUILD" -- /bin/sh -c "
		curl -sS -H \"Authorization: Bearer \$TOKEN\" https://localhost:$PORT/pub/a.txt
		curl -sS -X POST https://localhost:$PORT/pub/a.txt
		env | grep -c '$VALUE'" 2>"$T_TMP/degraded-tls.err")
	stop $SRV
	keep_report "$R"
	expect_match "$OUT" '^pub$' "curl through the proxy, TLS opened there ($(tail -3 "$T_TMP/degraded-tls.err"))"
	expect_eq "$(grep -c "Bearer $VALUE" "$T_TMP/log")" 1 "the upstream saw the value"
	expect_match "$OUT" "POST localhost:$PORT/pub/a.txt: no rule of network.allow admits it" "a refused method"
	expect_match "$OUT" '^0$' "the value nowhere in the run's environment"
	# (violations, not weaker: the refused POST is a denial)
	expect_eq "$(field .verdicts.containment):$(field .enforcement.user_ns)" "violations:false" "the report: degraded, the POST a violation"
	expect_match "$(field '.enforcement.degraded | join("\n")')" 'network: the host.s, bounded by the proxy' "its network bounded by the proxy"
	t_assert
}
t_run test_degraded_boundary_injects_and_refuses
