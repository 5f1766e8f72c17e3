#!/usr/bin/env bash
# graph_mobilenet end to end on tiny fake datasets: the eager vs graph throughput line,
# an epoch trained with the graph and its accuracy line, the checkpoint saved and reloaded
# to the same accuracy, the same on CIFAR-10 binary batches, and its flag and data errors.
#   $1: the graph_mobilenet binary   $2: make_fake_idx
set -euo pipefail
source examples/testing/example_test_lib.sh  # tests run in the runfiles root
fake_fashion_mnist 72 32

status=0
BUILD_WORKING_DIRECTORY="$work" KILN_CACHE_DIR="$TEST_TMPDIR/cache" "$program" --data "$data" \
  --limit 72 --batch-size 16 --width 0.25 --compare-steps 1 --checkpoint m.safetensors \
  >"$out" 2>&1 || status=$?
[[ $status -eq 0 ]] || fail "exit status $status, expected 0"

grep -qx "throughput over 1 steps of batch 16: eager [0-9]* samples/s, graph [0-9]* samples/s ([0-9.]*x)" \
  "$out" || fail "no eager vs graph throughput line"
line="$(grep -x "epoch 1/1: train loss [0-9.]*, [0-9]* samples/s, test accuracy [0-9.]*% ([0-9]*/32)" "$out")" ||
  fail "no accuracy line for epoch 1"
accuracy="$(sed 's/.*test accuracy \([0-9.]*\)%.*/\1/' <<<"$line")"
# The cosine schedule changes the rate after each of the 5 updates; the rate is state the
# step program reads, so it records nothing: the first call's recording is a warm-up,
# since SGD makes its momentum buffers on its first step, the second is kept, and the
# graph enables dynamic_batch, so that recording is generalized at once (a symbolic probe
# one size up; batch norm's counts are recorded as sums over the batch, not numbers) and
# compiled once for every size: the short last batch (72 = 4 x 16 + 8) runs the same
# program. (Before issue 19, once per rate; before issue 23, once per batch size.)
grep -qx "training step recorded 3 times, 1 programs compiled" "$out" ||
  fail "the schedule or the short batch made the step record or compile again"
[[ -f $work/m.safetensors ]] || fail "no checkpoint at $work/m.safetensors"
grep -qx "checkpoint reloaded: accuracy $accuracy% (matches)" "$out" ||
  fail "the reloaded checkpoint does not score $accuracy%"
[[ -z $(find "$work" -name '*.tmp.*') ]] || fail "a temporary file was left in $work"

# CIFAR-10's binary batches: records of a label byte and 3072 pixel bytes; here the label
# is i % 10 and every pixel of a record is 25 * label.
cifar="$TEST_TMPDIR/cifar"
mkdir -p "$cifar"
fake_batch() {  # fake_batch FILE RECORDS
  local i label
  : >"$1"
  for ((i = 0; i < $2; i++)); do
    label=$((i % 10))
    printf "\\$(printf %03o $label)" >>"$1"
    head -c 3072 /dev/zero | tr '\0' "\\$(printf %03o $((25 * label)))" >>"$1"
  done
}
for b in 1 2 3 4 5; do fake_batch "$cifar/data_batch_$b.bin" 8; done
fake_batch "$cifar/test_batch.bin" 10
status=0
BUILD_WORKING_DIRECTORY="$work" KILN_CACHE_DIR="$TEST_TMPDIR/cache" "$program" --cifar10 "$cifar" \
  --batch-size 16 --width 0.25 --compare-steps 1 --checkpoint c.safetensors >"$out" 2>&1 ||
  status=$?
[[ $status -eq 0 ]] || fail "--cifar10: exit status $status, expected 0"
grep -qx "CIFAR-10 from $cifar: 40 training, 10 test examples" "$out" ||
  fail "no line on the CIFAR-10 data loaded"
grep -qx "epoch 1/1: train loss [0-9.]*, [0-9]* samples/s, test accuracy [0-9.]*% ([0-9]*/10)" "$out" ||
  fail "no accuracy line for the CIFAR-10 epoch"
status=0
"$program" --cifar10 "$TEST_TMPDIR/nothing" >"$out" 2>&1 || status=$?
[[ $status -eq 2 ]] || fail "missing CIFAR-10: exit status $status, expected 2"
grep -q "no CIFAR-10 batch data_batch_1.bin in" "$out" || fail "no message for missing CIFAR-10"

status=0
"$program" --width 5 >"$out" 2>&1 || status=$?
[[ $status -eq 2 ]] || fail "--width 5: exit status $status, expected 2"
status=0
"$program" --data "$TEST_TMPDIR/nothing" >"$out" 2>&1 || status=$?
[[ $status -eq 2 ]] || fail "missing data: exit status $status, expected 2"
grep -q "no Fashion-MNIST in" "$out" || fail "no message for missing data"

# --device cuda without a CUDA device: one line with the reason, status 2 (where there is a
# device, the missing data is reported instead).
status=0
"$program" --device cuda --data "$TEST_TMPDIR/nothing" >"$out" 2>&1 || status=$?
[[ $status -eq 2 ]] || fail "--device cuda: exit status $status, expected 2"
grep -q "^graph_mobilenet: no CUDA device: \|no Fashion-MNIST in" "$out" ||
  fail "--device cuda: no message saying why"
status=0
"$program" --device tpu >"$out" 2>&1 || status=$?
[[ $status -eq 2 ]] || fail "--device tpu: exit status $status, expected 2"
grep -q "graph_mobilenet: --device: 'tpu' is not cpu or cuda" "$out" || fail "no message for --device tpu"
echo PASS
