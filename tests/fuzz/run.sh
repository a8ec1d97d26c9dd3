#!/bin/bash
# Build the libFuzzer targets with clang (ASan + UBSan) and run each for
# FUZZ_SECONDS (default 20). A crash fails the run and leaves the input in
# build-fuzz/.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build-fuzz
secs=${FUZZ_SECONDS:-20}
mkdir -p "$out"
lib_src=(error json units strv pol-parse ledger report snapshot hash redact secmem exposure sup-proxy pxrule http1 pxhttp tls landlock mounts model sweep serve-route serve-ipc overlay protect sync changeset)
srcs=()
for f in "${lib_src[@]}"; do srcs+=("$top/lib/$f.c"); done
for t in ${FUZZ_TARGETS:-policy ledger redact proxy http route}; do
	clang -g -O1 -std=gnu17 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
		-I"$top/include" -I"$top/lib" "$top/tests/fuzz/fuzz_$t.c" "${srcs[@]}" \
		-lseccomp -lssl -lcrypto -o "$out/fuzz_$t"
	mkdir -p "$out/corpus_$t"
	[ -d "$top/tests/fuzz/corpus/$t" ] && cp -n "$top/tests/fuzz/corpus/$t"/* "$out/corpus_$t/" 2>/dev/null || true
	echo "fuzz_$t: ${secs}s"
	(cd "$out" && "./fuzz_$t" -max_total_time="$secs" -max_len=4096 "corpus_$t" 2>&1 | tail -3)
done
