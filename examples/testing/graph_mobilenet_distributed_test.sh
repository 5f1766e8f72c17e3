#!/usr/bin/env bash
# graph_mobilenet --distributed under mpirun -np 2 on a tiny fake dataset: the nn::Graph's
# step averages the gradients over the ranks (config().enable_data_parallel()), the ranks
# average BatchNorm's running statistics after each epoch, and every parameter and buffer
# ends the same on both ranks (the program checks it bit for bit and prints the result; a
# step that did not average the gradients leaves the replicas apart). Rank 0 alone prints,
# writes --metrics and the checkpoint, and reloads it to the accuracy the ranks' shares of
# the test set scored together. BatchNorm normalizes by each rank's share of a batch, so
# unlike trace_mlp's the steps are not one process's, and no one-process run is compared.
#   $1: the graph_mobilenet binary   $2: make_fake_idx
set -euo pipefail
source examples/testing/example_test_lib.sh  # tests run in the runfiles root
fake_fashion_mnist 72 32

# Built without MPI, --distributed says so (exit status 1), and that is all there is to check.
if ! kiln_has_mpi; then
  echo PASS
  exit 0
fi

mpirun_program 2 --distributed --data "$data" --limit 72 --batch-size 16 --width 0.25 \
  --compare-steps 1 --checkpoint m.safetensors --metrics metrics.csv ||
  fail "mpirun -np 2: exit status $?, expected 0"
grep -qx "data parallel over 2 ranks: batch 8 per rank, 16 in all" "$out" ||
  fail "no line saying the job is data parallel over 2 ranks"
grep -qx "replicas: [0-9]* parameters and [0-9]* buffers the same on all 2 ranks" "$out" ||
  fail "the ranks' parameters or buffers differ after training"
# Rank 0 alone prints. As in one process (graph_mobilenet_test), the step records 3 times
# (a warm-up, the kept recording, its dynamic generalization) and compiles once.
line="$(grep -x "epoch 1/1: train loss [0-9.]*, [0-9]* samples/s, test accuracy [0-9.]*% ([0-9]*/32)" "$out")" ||
  fail "not one accuracy line for epoch 1 over the 32 test examples"
accuracy="$(sed 's/.*test accuracy \([0-9.]*\)%.*/\1/' <<<"$line")"
for line in "throughput over 1 steps of batch 16: eager" "MobileNetV2 width" "replicas:" \
  "training step recorded 3 times, 1 programs compiled" "checkpoint saved to $work/m.safetensors" \
  "checkpoint reloaded: accuracy $accuracy% (matches)" "total wall time"; do
  [[ $(grep -c "^$line" "$out") -eq 1 ]] || fail "not one line '$line' (rank 0 alone prints it)"
done
[[ -f $work/m.safetensors ]] || fail "rank 0 saved no checkpoint at $work/m.safetensors"
# --metrics: the header, a row per step of the job (72 = 4 x 16 + 8: 5 steps), the test row.
metrics="$work/metrics.csv"
[[ $(head -1 "$metrics") == "run,epoch,step,loss,accuracy,samples_per_second" ]] ||
  fail "no CSV header in $metrics"
[[ $(grep -c '^nn::Graph MobileNetV2,1,[1-5],[0-9.e+-]*,,[0-9.e+]*$' "$metrics") -eq 5 ]] ||
  fail "not 5 step rows in $metrics"
test_row="$(grep -x 'nn::Graph MobileNetV2,1,5,,[0-9.]*,' "$metrics")" || fail "no test row in $metrics"
awk -F, -v a="$accuracy" '{ exit !($5 == a + 0) }' <<<"$test_row" ||
  fail "the test row '$test_row' is not the accuracy printed, $accuracy%"
echo PASS
