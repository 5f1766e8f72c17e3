#!/usr/bin/env bash
# trace_mlp end to end on a fake dataset: the throughput comparison, training with the
# traced step (recorded once: the halved learning rate is state, not a retrace, and the short last batch
# merges into a dynamic recording), the accuracy of each epoch, and the
# dumped inference graph reloaded to the same accuracy.
#   $1: the trace_mlp binary   $2: make_fake_idx
set -euo pipefail
source examples/testing/example_test_lib.sh  # tests run in the runfiles root
fake_fashion_mnist 512 300

status=0
BUILD_WORKING_DIRECTORY="$work" KILN_CACHE_DIR="$TEST_TMPDIR/cache" KILN_PROFILE="$work/trace.json" \
  "$program" --data "$data" --epochs 2 --limit 240 --batch-size 32 --compare-steps 5 \
  --graph mlp.mlirbc --metrics metrics.csv >"$out" 2>&1 || status=$?
[[ $status -eq 0 ]] || fail "exit status $status, expected 0"

grep -qx "throughput over 5 steps of batch 32: eager [0-9]* samples/s, traced [0-9]* samples/s ([0-9.]*x)" \
  "$out" || fail "no eager vs traced throughput line"
result="train loss [0-9.]*, [0-9]* samples/s, test accuracy [0-9.]*% ([0-9]*/240)"
grep -qx "epoch 1/2: $result" "$out" || fail "no accuracy line for epoch 1"
accuracy_line="$(grep -x "epoch 2/2: $result" "$out")" || fail "no accuracy line for epoch 2"
accuracy="$(sed 's/.*test accuracy \([0-9.]*\)%.*/\1/' <<<"$accuracy_line")"
awk -v a="$accuracy" 'BEGIN { exit !(a >= 90) }' || fail "accuracy $accuracy% < 90% on fake data"
# The rate halves after epoch 1; it is state the program reads, so the step records once.
# Each epoch ends with a short batch (240 = 7 x 32 + 16); the batch dim is named dynamic,
# so the first recording is generalized at once and compiled once for every size.
grep -qx "training step recorded 1 times, 1 programs compiled" "$out" ||
  fail "the scheduler's step or the short batch made the step record or compile again"
grep -qx "inference graph dumped to $work/mlp.mlirbc: accuracy traced $accuracy%, reloaded $accuracy% (matches)" \
  "$out" || fail "the dumped graph does not reload to the accuracy $accuracy%"
[[ -f $work/mlp.mlirbc ]] || fail "no graph at $work/mlp.mlirbc"
[[ -z $(find "$work" -name '*.tmp.*') ]] || fail "a temporary file was left in $work"
# --metrics: the header, 8 steps per epoch (the last of 16), and each epoch's test accuracy.
metrics="$work/metrics.csv"
[[ $(head -1 "$metrics") == "run,epoch,step,loss,accuracy,samples_per_second" ]] || fail "no CSV header in $metrics"
[[ $(grep -c '^traced MLP,[12],[0-9]*,[0-9.e+-]*,,[0-9.e+]*$' "$metrics") -eq 16 ]] || fail "not 16 step rows in $metrics"
[[ $(grep -c '^traced MLP,[12],\(8\|16\),,[0-9.]*,$' "$metrics") -eq 2 ]] || fail "not 2 test rows in $metrics"
# KILN_PROFILE: the run's Chrome trace, with the compiled step's fused kernels by name.
grep -q '"traceEvents"' "$work/trace.json" || fail "KILN_PROFILE wrote no trace"
grep -q '"cat":"kernel","dur":[0-9.e+-]*,"name":"[a-z_]*_kernel_[0-9]*"' "$work/trace.json" ||
  fail "no compiled kernel in the KILN_PROFILE trace"

# Bad flags and missing data: exit status 2 with a message naming the problem.
status=0
"$program" --graph /nonexistent/dir/g.mlirbc >"$out" 2>&1 || status=$?
[[ $status -eq 2 ]] || fail "--graph in a missing directory: exit status $status, expected 2"
grep -q -- "--graph: /nonexistent/dir is not a directory" "$out" || fail "no message for --graph"
status=0
"$program" --data "$TEST_TMPDIR/nothing" >"$out" 2>&1 || status=$?
[[ $status -eq 2 ]] || fail "missing data: exit status $status, expected 2"
grep -q "no Fashion-MNIST in" "$out" || fail "no message for missing data"
echo PASS
