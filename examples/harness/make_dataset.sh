#!/bin/sh
# make_dataset.sh OUT: a small SWE-style dataset for harness.py. Each task
# is a tiny shell "package" with a bug, a test that fails on it (test.sh,
# the task check) and the fix as a patch (gold.patch), in an image root of
# its own: OUT/TASK/root, a busybox root with the buggy repository at
# /repo. The roots are self-contained (busybox is static; nothing of the
# host's /usr is needed inside), so the check runs the same on any host.
# OUT/TASK/task.json says where everything is. The check leaves a file
# beside the repository (as pytest's cache or a build would). Needs busybox (static) and
# diff on the host.
set -eu
OUT=${1:?usage: make_dataset.sh OUT}
BUSYBOX=${BUSYBOX:-$(command -v busybox || true)}
[ -n "$BUSYBOX" ] || { echo "make_dataset.sh: no busybox (Debian busybox-static)" >&2; exit 2; }
file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$BUSYBOX" 2>&1 | grep -q 'not a dynamic' ||
	{ echo "make_dataset.sh: $BUSYBOX is not static (Debian busybox-static)" >&2; exit 2; }
umask 022
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# root DIR: a busybox root. Its applets are links in /bin to the path
# busybox --install names (its own: /usr/bin/busybox on Debian), where the
# copy goes.
root() {
	mkdir -p "$1/bin" "$1/repo" "$1/etc"
	"$BUSYBOX" --install -s "$1/bin"
	bb=$(readlink "$1/bin/sh")
	case $bb in /*) ;; *) echo "make_dataset.sh: busybox --install made relative links ($bb)" >&2; exit 2 ;; esac
	mkdir -p "$1${bb%/*}"
	cp "$BUSYBOX" "$1$bb"
	echo "root:x:0:0::/:/bin/sh" >"$1/etc/passwd"
}

# task NAME: NAME's repository from the here-documents written to $W/bug
# and $W/fixed by the caller; the patch is their difference.
task() {
	t=$OUT/$1
	rm -rf "$t"
	mkdir -p "$t"
	root "$t/root"
	cp -R "$W/bug/." "$t/root/repo/"
	(cd "$W" && diff -ruN bug fixed | sed 's#^--- bug/#--- a/#; s#^+++ fixed/#+++ b/#' >"$t/gold.patch") || true
	cat >"$t/task.json" <<JSON
{"id": "$1", "root": "$t/root", "repo": "/repo", "check": "echo ran >.check-ran && sh test.sh", "patch": "$t/gold.patch"}
JSON
	rm -rf "$W/bug" "$W/fixed"
}

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# 1. add() subtracts.
mkdir -p "$W/bug" "$W/fixed"
cat >"$W/bug/calc.sh" <<'S'
add() { echo $(($1 - $2)); }
S
sed 's/\$1 - \$2/$1 + $2/' "$W/bug/calc.sh" >"$W/fixed/calc.sh"
cat >"$W/bug/test.sh" <<'S'
. ./calc.sh
[ "$(add 2 3)" = 5 ] || { echo "add 2 3: $(add 2 3), expected 5"; exit 1; }
echo ok
S
cp "$W/bug/test.sh" "$W/fixed/test.sh"
task calc-add

# 2. shout() does not upper-case.
mkdir -p "$W/bug" "$W/fixed"
cat >"$W/bug/str.sh" <<'S'
shout() { echo "$1!"; }
S
cat >"$W/fixed/str.sh" <<'S'
shout() { echo "$1!" | tr a-z A-Z; }
S
cat >"$W/bug/test.sh" <<'S'
. ./str.sh
[ "$(shout hey)" = "HEY!" ] || { echo "shout hey: $(shout hey)"; exit 1; }
echo ok
S
cp "$W/bug/test.sh" "$W/fixed/test.sh"
task str-shout

# 3. count_lines() is off by one.
mkdir -p "$W/bug" "$W/fixed"
cat >"$W/bug/wc.sh" <<'S'
count_lines() { n=$(wc -l < "$1"); echo $((n + 1)); }
S
cat >"$W/fixed/wc.sh" <<'S'
count_lines() { n=$(wc -l < "$1"); echo $((n)); }
S
cat >"$W/bug/test.sh" <<'S'
. ./wc.sh
printf 'a\nb\nc\n' > /tmp/three.txt
[ "$(count_lines /tmp/three.txt)" = 3 ] || { echo "count_lines: $(count_lines /tmp/three.txt)"; exit 1; }
echo ok
S
cp "$W/bug/test.sh" "$W/fixed/test.sh"
task wc-lines

# 4. fizz() forgets 15.
mkdir -p "$W/bug" "$W/fixed"
cat >"$W/bug/fizz.sh" <<'S'
fizz() {
	if [ $(($1 % 3)) = 0 ]; then echo Fizz
	elif [ $(($1 % 5)) = 0 ]; then echo Buzz
	else echo "$1"; fi
}
S
cat >"$W/fixed/fizz.sh" <<'S'
fizz() {
	if [ $(($1 % 15)) = 0 ]; then echo FizzBuzz
	elif [ $(($1 % 3)) = 0 ]; then echo Fizz
	elif [ $(($1 % 5)) = 0 ]; then echo Buzz
	else echo "$1"; fi
}
S
cat >"$W/bug/test.sh" <<'S'
. ./fizz.sh
got=$(for i in 3 5 7 15; do fizz $i; done | tr '\n' ' ')
[ "$got" = "Fizz Buzz 7 FizzBuzz " ] || { echo "fizz: $got"; exit 1; }
echo ok
S
cp "$W/bug/test.sh" "$W/fixed/test.sh"
task fizz-15

ls "$OUT"
