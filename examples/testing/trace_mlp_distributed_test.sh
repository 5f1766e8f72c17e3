#!/usr/bin/env bash
# trace_mlp --distributed under mpirun -np 2 and -np 3 (oversubscribed) on a fake dataset,
# against one process with the same global batch: each rank takes its share of every batch
# (DistributedSampler), the traced step averages the gradients over the ranks, and rank 0
# alone prints the job's losses and accuracies and writes the files. Both runs must take
# the same steps: every step's loss in the --metrics curves within 1e-4 relative, the same
# test accuracies. A step that did not average the gradients, ranks that trained on the
# same share, or a loss that was rank 0's alone would each change the curve.
#   $1: the trace_mlp binary   $2: make_fake_idx
set -euo pipefail
source examples/testing/example_test_lib.sh  # tests run in the runfiles root
fake_fashion_mnist 512 300
flags=(--data "$data" --epochs 2 --limit 240 --compare-steps 2)

# Built without MPI, --distributed says so (exit status 1), and that is all there is to check.
if ! kiln_has_mpi; then
  echo PASS
  exit 0
fi

# expect_one_process_steps NP BATCH: the job of NP ranks against one process, both with the
# global batch BATCH (240 = 7 x 32 + 16: a short last batch, 8 per rank; 240 = 8 x 30).
expect_one_process_steps() {
  local np="$1" batch="$2" status=0 one two line
  (cd "$work" && KILN_CACHE_DIR="$TEST_TMPDIR/cache" "$program" "${flags[@]}" --batch-size "$batch" \
    --graph one.mlirbc --metrics one.csv) >"$out" 2>&1 || status=$?
  [[ $status -eq 0 ]] || fail "one process: exit status $status, expected 0"
  one="$(grep -x "epoch 2/2: train loss [0-9.]*, [0-9]* samples/s, test accuracy .*" "$out")" ||
    fail "one process: no accuracy line for epoch 2"

  : >"$out"
  mpirun_program "$np" --distributed "${flags[@]}" --batch-size "$batch" --graph job.mlirbc \
    --metrics job.csv || fail "mpirun -np $np: exit status $?, expected 0"
  grep -qx "data parallel over $np ranks: batch $((batch / np)) per rank, $batch in all" "$out" ||
    fail "no line saying the job is data parallel over $np ranks"
  grep -qx "replicas: 6 parameters and 0 buffers the same on all $np ranks" "$out" ||
    fail "the ranks' parameters differ after training"
  # Rank 0 alone prints (and writes the metrics and the graph).
  for line in "throughput over 2 steps of batch $batch: eager" "SGD lr" "epoch 1/2: train loss" \
    "replicas:" "epoch 2/2: train loss" "training step recorded 1 times, 1 programs compiled" \
    "inference graph dumped to $work/job.mlirbc: accuracy .* (matches)" "total wall time"; do
    [[ $(grep -c "^$line" "$out") -eq 1 ]] || fail "not one line '$line' (rank 0 alone prints it)"
  done
  two="$(grep -x "epoch 2/2: train loss [0-9.]*, [0-9]* samples/s, test accuracy .*" "$out")"
  # The summary's loss and accuracy as one process's (the rates differ).
  [[ ${two/, [0-9]* samples\/s/} == "${one/, [0-9]* samples\/s/}" ]] ||
    fail "epoch 2 of the job of $np ('$two') is not one process's ('$one')"
  same_curves "$work/one.csv" "$work/job.csv"
  [[ -f $work/job.mlirbc ]] || fail "rank 0 dumped no graph at $work/job.mlirbc"
  rm "$work/job.mlirbc"
}
expect_one_process_steps 2 32
expect_one_process_steps 3 30

# A global batch that 2 ranks cannot share equally: exit status 2 and a message.
: >"$out"
status=0
mpirun_program 2 --distributed "${flags[@]}" --batch-size 33 || status=$?
[[ $status -eq 2 ]] || fail "--batch-size 33 on 2 ranks: exit status $status, expected 2"
grep -q "^trace_mlp: --batch-size 33 is not a multiple of the 2 ranks" "$out" ||
  fail "--batch-size 33 on 2 ranks: no message saying why"
echo PASS
