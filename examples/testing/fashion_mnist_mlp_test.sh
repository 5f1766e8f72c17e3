#!/usr/bin/env bash
# fashion_mnist_mlp end to end on a fake dataset: it trains, logs progress, reports the
# accuracy of each epoch, saves the checkpoint where --checkpoint says (relative to
# BUILD_WORKING_DIRECTORY, as under `bazel run`) and reloads it to the same accuracy.
#   $1: the fashion_mnist_mlp binary   $2: make_fake_idx
set -euo pipefail
source examples/testing/example_test_lib.sh  # tests run in the runfiles root
fake_fashion_mnist 512 300

# 256 of the 512 training examples in batches of 32: 8 steps per epoch.
status=0
BUILD_WORKING_DIRECTORY="$work" "$program" --data "$data" --epochs 2 --limit 256 \
  --batch-size 32 --checkpoint model.safetensors >"$out" 2>&1 || status=$?
[[ $status -eq 0 ]] || fail "exit status $status, expected 0"

grep -qx "Fashion-MNIST from $data: 256 training, 256 test examples (loaded in [0-9.]* s)" "$out" ||
  fail "no line on the data loaded, with --limit 256 applied to both sets"
# Standard output is a file here, so the progress bar logs lines rather than redrawing.
grep -q $'\r' "$out" && fail "carriage returns in a log that is not a terminal"
for epoch in 1 2; do
  grep -qx "epoch $epoch/2  1/8 (12%)  loss [0-9.]*  [0-9]* samples/s  ETA [0-9:]*" "$out" ||
    fail "no progress line for the first step of epoch $epoch"
  grep -qx "epoch $epoch/2  8/8 (100%)  loss [0-9.]*  [0-9]* samples/s  in [0-9:]*" "$out" ||
    fail "no final progress line for epoch $epoch"
done

result="train loss [0-9.]*, [0-9]* samples/s, test accuracy [0-9.]*% ([0-9]*/256)"
grep -qx "epoch 1/2: $result" "$out" || fail "no accuracy line for epoch 1"
accuracy_line="$(grep -x "epoch 2/2: $result" "$out")" || fail "no accuracy line for epoch 2"
accuracy="$(sed 's/.*test accuracy \([0-9.]*\)%.*/\1/' <<<"$accuracy_line")"
# The fake classes are two bright rows at a class-dependent height: 16 steps learn them.
awk -v a="$accuracy" 'BEGIN { exit !(a >= 90) }' || fail "accuracy $accuracy% < 90% on fake data"

checkpoint="$work/model.safetensors"
[[ -f $checkpoint ]] || fail "no checkpoint at $checkpoint"
grep -qx "checkpoint saved to $checkpoint" "$out" || fail "the saved path is not reported"
grep -qx "checkpoint reloaded: accuracy $accuracy% (matches)" "$out" ||
  fail "the reloaded checkpoint does not report the accuracy $accuracy% as matching"
grep -qx "total wall time [0-9.]* s" "$out" || fail "no total wall time"

# The file holds the three Linear layers' weights and biases in float32: 8 bytes of header
# length, the JSON header, then 784*256 + 256 + 256*256 + 256 + 256*10 + 10 = 269322 floats.
header="$(head -c 4096 "$checkpoint" | tr -d '\0')"
for name in 0.weight 0.bias 2.weight 2.bias 4.weight 4.bias; do
  grep -q "\"$name\":{\"dtype\":\"F32\"" <<<"$header" || fail "$name is not in the header"
done
header_length=$(od -An -t u8 -N 8 "$checkpoint" | tr -d ' ')
size=$(stat -c %s "$checkpoint")
[[ $size -eq $((8 + header_length + 269322 * 4)) ]] ||
  fail "checkpoint is $size bytes, expected 8 + $header_length + 269322 * 4"
[[ -z $(find "$work" -name '*.tmp.*') ]] || fail "a temporary file was left in $work"

# The same seed gives the same run; the checkpoint can be overwritten.
BUILD_WORKING_DIRECTORY="$work" "$program" --data "$data" --epochs 2 --limit 256 \
  --batch-size 32 --checkpoint model.safetensors >"$out.again" 2>&1 ||
  fail "the second run failed"
diff <(grep ': train loss' "$out" | sed 's/, [0-9]* samples\/s//') \
     <(grep ': train loss' "$out.again" | sed 's/, [0-9]* samples\/s//') >/dev/null ||
  fail "two runs with seed 0 differ: $(grep ': train loss' "$out.again")"
echo PASS
