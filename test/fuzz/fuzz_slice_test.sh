#!/usr/bin/env bash
# The CI slice of kiln-fuzz: a fixed seed range over both backends and both trace modes,
# forward and backward. Fails when the fuzzer reports a mismatch or a crash (its exit
# status), or when its summary line is missing.
#   $1: the kiln-fuzz binary
set -euo pipefail
out="${TEST_TMPDIR:-/tmp}/kiln-fuzz.out"
status=0
KILN_CACHE_DIR=off "$1" --seed=1 --programs=150 --backends=INTERP,MLIR,HALIDE --modes=value,symbolic \
  --max-ops=8 --jobs=2 --minimize-budget=20 >"$out" 2>&1 || status=$?
cat "$out"
grep -q "^kiln-fuzz: 150 programs, 0 mismatches, 0 crashes (seeds 1..150)$" "$out" ||
  { echo "FAIL: kiln-fuzz found problems (exit status $status)"; exit 1; }
[[ $status -eq 0 ]] || { echo "FAIL: exit status $status"; exit 1; }
