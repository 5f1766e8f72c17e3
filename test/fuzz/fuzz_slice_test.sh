#!/usr/bin/env bash
# A CI slice of kiln-fuzz: a fixed seed range over the given backends and trace modes,
# forward and backward. Fails when the fuzzer reports a mismatch or a crash (its exit
# status), when its summary line is missing, or, given a minimum, when fewer dynamic
# configs than that merged their recordings (so that the slice tests dynamic programs).
#   $1: the kiln-fuzz binary; $2: programs; $3: backends; $4: modes; $5: least merged
#   ("-": no dynamic configs); $6...: more kiln-fuzz arguments (--dynamic-dims=...)
set -euo pipefail
programs=$2
out="${TEST_TMPDIR:-/tmp}/kiln-fuzz.out"
status=0
KILN_CACHE_DIR=off "$1" --seed=1 --programs="$programs" --backends="$3" --modes="$4" \
  --max-ops=8 --jobs=2 --minimize-budget=20 "${@:6}" >"$out" 2>&1 || status=$?
cat "$out"
grep -q "^kiln-fuzz: $programs programs, 0 mismatches, 0 crashes (seeds 1..$programs)$" "$out" ||
  { echo "FAIL: kiln-fuzz found problems (exit status $status)"; exit 1; }
[[ $status -eq 0 ]] || { echo "FAIL: exit status $status"; exit 1; }
[[ $# -ge 5 && "$5" != "-" ]] || exit 0
merged=$(sed -n 's/^kiln-fuzz: dynamic configs: \([0-9]*\) merged.*/\1/p' "$out")
[[ -n "$merged" ]] || { echo "FAIL: no line of dynamic counts"; exit 1; }
(( merged >= $5 )) || { echo "FAIL: only $merged dynamic configs merged, fewer than $5"; exit 1; }
