#!/bin/bash
# Build the libFuzzer targets with clang (ASan + UBSan) and run each for
# FUZZ_SECONDS (default 20). A crash fails the run and leaves the input in
# build-fuzz/.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build-fuzz
secs=${FUZZ_SECONDS:-20}
mkdir -p "$out"
# The whole library: a target links what it needs (a list of files here
# fell behind every time a layer gained a dependency).
# Compiled once, linked into each target.
CFLAGS_FUZZ=(-g -O1 -std=gnu17 -D_GNU_SOURCE -fsanitize=fuzzer-no-link,address,undefined -I"$top/include" -I"$top/lib")
mkdir -p "$out/obj"
export out top
# lib/tls-load.c is the cordon program's loader of the TLS module; the
# library (and so the fuzzers) link TLS in through lib/tls-static.c.
rm -f "$out/obj/tls-load.o"
# and no object of a file that is gone (renamed: two definitions)
for o in "$out"/obj/*.o; do
	[ ! -e "$o" ] || [ -f "$top/lib/$(basename "$o" .o).c" ] || rm -f "$o"
done
printf '%s\n' "$top"/lib/*.c | grep -v '/tls-load\.c$' | xargs -P "$(nproc)" -I{} sh -c \
	'f=$1; shift; o="$out/obj/$(basename "$f" .c).o"; [ "$o" -nt "$f" ] || exec clang "$@" -c "$f" -o "$o"' _ {} "${CFLAGS_FUZZ[@]}"
for t in ${FUZZ_TARGETS:-policy ledger redact proxy http route journal sdpath dns jsonrpc}; do
	clang "${CFLAGS_FUZZ[@]}" -fsanitize=fuzzer "$top/tests/fuzz/fuzz_$t.c" "$out"/obj/*.o \
		-lseccomp -lssl -lcrypto -lpthread -o "$out/fuzz_$t"
	mkdir -p "$out/corpus_$t"
	[ -d "$top/tests/fuzz/corpus/$t" ] && cp -n "$top/tests/fuzz/corpus/$t"/* "$out/corpus_$t/" 2>/dev/null || true
	echo "fuzz_$t: ${secs}s"
	(cd "$out" && "./fuzz_$t" -max_total_time="$secs" -max_len=4096 "corpus_$t" 2>&1 | tail -3)
done
