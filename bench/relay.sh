#!/bin/bash
# The output relay (issue 11): bytes the command writes are read by the
# supervisor, redacted, counted, hashed (the first 64 MiB of each stream,
# CORDON_OUTPUT_HASH; a row with the earlier 256 MiB beside it) and
# forwarded; past the hash budget, without secrets, spliced. Beside `cat`
# through a bare pipe, in alternating rounds (drift of the VM falls on every row
# alike); figures are medians of the rounds, GB/s = 1e9 bytes/s. Beside
# them, the floor: minimal relays without a sandbox (bench-relay-floor: one
# that only splices, one that tees and hashes as cordon does), SHA-256 alone,
# and the CPU seconds each row costs per GB (all its processes, user + sys):
# on a busy machine the wall figures drift, the CPU ones much less.
#   bash bench/relay.sh [BUILD]   (also the last part of `make bench`)
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
C="$BUILD/cordon"
F="$BUILD/bench-relay-floor"
ROUNDS=${BENCH_RELAY_ROUNDS:-5}
SIZE=${BENCH_RELAY_BYTES:-1073741824}
TEXT=${BENCH_RELAY_TEXT_BYTES:-268435456}
ws=$(mktemp -d /tmp/cordon-relay.XXXXXX)
trap 'rm -rf "$ws"' EXIT
cd "$ws"
# Each row runs in a bash of its own (timed): the secrets go as a string of
# words, exported (an array is not, and the rows would run with none).
SEC10=
for i in $(seq 10); do
	head -c 24 /dev/urandom | base64 >"tok$i"
	SEC10+=" --secret TOK$i=file:./tok$i"
done
export SEC10
# The rows with secrets must redact: a run that prints them says so.
# shellcheck disable=SC2086
got=$("$C" run $SEC10 -- cat tok1 tok10 2>/dev/null)
if [ "$(printf '%s\n' "$got" | grep -c REDACTED)" != 2 ]; then
	echo "relay.sh: the secrets of the rows with secrets are not redacted: $got" >&2
	exit 1
fi
# Printable text, every byte a possible start of some secret's form: the
# prefilter skips nothing (worst case for the automaton, not for a pipe).
head -c $((TEXT * 3 / 4)) /dev/urandom | base64 -w 76 >text.txt
timed() { # ROW: append wall microseconds to ROW, CPU ones to ROW.cpu
	local f=$1
	export -f "$f"
	export C F SIZE ws
	/usr/bin/time -f "%e %U %S" -o "$ws/.t" bash -c "$f" 2>/dev/null
	awk '{printf "%d\n", $1 * 1e6}' "$ws/.t" >>"$ws/$f"
	awk '{printf "%d\n", ($2 + $3) * 1e6}' "$ws/.t" >>"$ws/$f.cpu"
}
bare_zero() { head -c "$SIZE" /dev/zero | cat >/dev/null; }
floor_splice() { head -c "$SIZE" /dev/zero | "$F" splice | cat >/dev/null; }
floor_copy() { head -c "$SIZE" /dev/zero | "$F" copy | cat >/dev/null; }
floor_teesha() { head -c "$SIZE" /dev/zero | "$F" tee-sha 2>/dev/null | cat >/dev/null; }
sha_only() { head -c "$SIZE" /dev/zero | "$F" sha 2>/dev/null >>"$ws/sha.self"; }
cordon_zero() { "$C" run -- head -c "$SIZE" /dev/zero | cat >/dev/null; }
cordon_zero_h256() { CORDON_OUTPUT_HASH=256M "$C" run -- head -c "$SIZE" /dev/zero | cat >/dev/null; }
cordon_zero_nohash() { CORDON_OUTPUT_HASH=0 "$C" run -- head -c "$SIZE" /dev/zero | cat >/dev/null; }
cordon_zero1() { "$C" run --secret "TOK1=file:./tok1" -- head -c "$SIZE" /dev/zero | cat >/dev/null; }
# shellcheck disable=SC2086
cordon_zero10() { "$C" run $SEC10 -- head -c "$SIZE" /dev/zero | cat >/dev/null; }
bare_text() { cat text.txt | cat >/dev/null; }
cordon_text() { "$C" run -- cat text.txt | cat >/dev/null; }
# shellcheck disable=SC2086
cordon_text10() { "$C" run $SEC10 -- cat text.txt | cat >/dev/null; }
rows=(bare_zero floor_splice floor_copy floor_teesha sha_only cordon_zero cordon_zero_h256 cordon_zero_nohash cordon_zero1 cordon_zero10 bare_text cordon_text cordon_text10)
for _ in $(seq "$ROUNDS"); do
	for r in "${rows[@]}"; do
		timed "$r" "$r"
	done
done
median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
gbs() { # ROW BYTES
	awk -v us="$(median <"$ws/$1")" -v b="$2" 'BEGIN{printf "%.2f", b / (us / 1e6) / 1e9}'
}
cpu() { # ROW BYTES: CPU seconds per GB
	awk -v us="$(median <"$ws/$1.cpu")" -v b="$2" 'BEGIN{printf "%.2f", us / 1e6 / (b / 1e9)}'
}
text_bytes=$(stat -c %s text.txt)
echo
echo "output relay, $ROUNDS alternating rounds (GB/s: median; ratio: median over the rounds of the"
echo "row's speed over that of the bare pipe of the same data in the same round, so that a slow"
echo "stretch of the VM falls on both sides of a ratio)"
printf '%-70s %7s %7s %9s\n' "" "GB/s" "ratio" "CPU s/GB"
line() { # LABEL ROW BYTES BARE_ROW
	local g r
	g=$(gbs "$2" "$3")
	r=$(paste "$ws/$4" "$ws/$2" | awk '{print $1 / $2}' | median)
	printf '%-70s %7s %7.2f %9s\n' "$1" "$g" "$r" "$(cpu "$2" "$3")"
}
z=$((SIZE >> 20))
t=$((text_bytes >> 20))
line "head -c ${z}M /dev/zero | cat (bare pipe)" bare_zero "$SIZE" bare_zero
line "  floor: a relay that only splices, coalescing (no hash, no sandbox)" floor_splice "$SIZE" bare_zero
line "  floor: a relay that reads and writes every byte (no sandbox)" floor_copy "$SIZE" bare_zero
line "  floor: tee + read + SHA-256 relay (no sandbox)" floor_teesha "$SIZE" bare_zero
sha_s=$(median <"$ws/sha.self")
printf '%-70s %7s %7s %9s\n' "  SHA-256 alone (OpenSSL, one core; its CPU time only)" \
	"$(awk -v s="$sha_s" -v b="$SIZE" 'BEGIN{printf "%.2f", b / s / 1e9}')" "" \
	"$(awk -v s="$sha_s" -v b="$SIZE" 'BEGIN{printf "%.2f", s / (b / 1e9)}')"
line "cordon run -- head ... | cat (no secrets; goal >= 0.80)" cordon_zero "$SIZE" bare_zero
line "  the same, CORDON_OUTPUT_HASH=256M (the earlier default)" cordon_zero_h256 "$SIZE" bare_zero
line "  the same, CORDON_OUTPUT_HASH=0 (splice from the start)" cordon_zero_nohash "$SIZE" bare_zero
line "cordon run, 1 secret" cordon_zero1 "$SIZE" bare_zero
line "cordon run, 10 secrets, all forms (goal >= 1 GB/s)" cordon_zero10 "$SIZE" bare_zero
line "cat ${t}M base64 text | cat (bare pipe)" bare_text "$text_bytes" bare_text
line "cordon run -- cat text (no secrets)" cordon_text "$text_bytes" bare_text
line "cordon run -- cat text, 10 secrets (every byte a candidate)" cordon_text10 "$text_bytes" bare_text
# The bound: the first 64 MiB (or all, if less) are hashed, on top of what
# the bare pipe's two processes spend. With both cores busy, no relay can
# beat 2 / (CPU s/GB of the bare pipe + CPU s/GB of SHA-256 x the hashed
# share) GB/s. An estimate: a busy machine inflates the bare pipe's CPU (its
# 64 KiB ping-pong).
awk -v bc="$(cpu bare_zero "$SIZE")" -v s="$sha_s" -v z="$SIZE" -v bg="$(gbs bare_zero "$SIZE")" -v n="$(nproc)" \
	'BEGIN{h = z < 67108864 ? z : 67108864; sc = s / (z / 1e9) * h / z; b = n / (bc + sc); printf "estimated bound, SHA-256 of the first %d MiB on top of the bare pipe'"'"'s CPU, %d cores: %.2f GB/s = %.2f of the bare pipe\n", h / 1048576, n, b, b / bg}'
