#!/bin/sh
# F4 (LOW-MEDIUM, list gaps): host-executed files not on the protected list.
set -eu
C=${1:-build/cordon}; C=$(readlink -f "$C")
WS=$(mktemp -d); cd "$WS"; git init -q .
"$C" run --rw "$WS" --cwd "$WS" -- sh -c '
for p in .bash_aliases .vim/plugin/x.vim .local/share/nvim/site/plugin/x.lua \
  .hg/hgrc .gdbinit .config/gdb/gdbinit .cargo/bin/ls .xsession \
  .config/direnv/direnvrc .config/mise/config.toml .config/zsh/.zshrc \
  .bashrc.d/x d1/.envrc d1/.vscode/tasks.json sub/.gitattributes \
  .git/config.lock .git/HEAD.lock; do
 mkdir -p "$(dirname $p)" 2>/dev/null
 if printf x > "$p" 2>/dev/null; then echo "CREATED $p"; else echo "refused $p"; fi
done'
