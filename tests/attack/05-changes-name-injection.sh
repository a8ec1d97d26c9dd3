#!/bin/sh
# F5: `cordon changes DIR` prints run-chosen names raw: a newline forges
# lines, escape sequences rewrite the reviewer's terminal.
C=${CORDON:-/work/wt/attack/build/cordon}
T=$(mktemp -d /tmp/atk-names.XXXXXX); chmod 755 "$T"; mkdir "$T/ws"; cd "$T/ws"
cat > zz.py <<'P'
import os
open('.git-commondir-stand-in', 'w').write('x')
open('z\x1b[1A\x1b[2K\rdeleted            0 - nothing-to-see\x1b]0;owned\x07', 'w').write('y')
P
"$C" run --workspace-mode review --report ../r.json -- python3 zz.py
D=$(jq -r .changes.dir ../r.json)
"$C" changes "$D" | cat -v
echo "(above, raw: a terminal would show the line of .git-commondir-stand-in erased)"
