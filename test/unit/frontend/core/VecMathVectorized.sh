#!/bin/bash
# Fails unless each probe function of the binary $1 (VecMathVectorProbe.cpp) uses zmm
# registers, i.e. its element loop was vectorized for AVX-512.
set -u
probe="$1"
status=0
for fn in kilnProbeExp kilnProbeLog; do
  body=$(objdump -d --no-show-raw-insn "$probe" | awk -v f="<$fn>:" '$2 == f {on = 1; next} on && /^$/ {exit} on')
  if [ -z "$body" ]; then
    echo "FAIL: $fn not found in $probe"
    status=1
  elif ! grep -q zmm <<<"$body"; then
    echo "FAIL: $fn is not vectorized (no zmm register in its $(wc -l <<<"$body") instructions):"
    head -40 <<<"$body"
    status=1
  else
    echo "ok: $fn uses zmm ($(grep -c zmm <<<"$body") of $(wc -l <<<"$body") instructions)"
  fi
done
exit $status
