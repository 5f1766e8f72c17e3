#!/usr/bin/env bash
# A rank that throws and stays alive: the other ranks' waits must time out with a
# kiln::Error naming the collective, and the job must end (PeerFailureMain.cpp). MODE is
# "eager", or "traced" (the all_reduce of a compiled program, whose error also names the
# op and its line).
#   peer_failure_test.sh BINARY MODE NP...
set -uo pipefail
binary="$1"
mode="$2"
shift 2
if ! command -v mpirun >/dev/null; then
  echo "built without MPI: DistributedTest checks that every call says so"
  exit 0
fi
export TMPDIR=/tmp KILN_DIST_TIMEOUT=2
for np in "$@"; do
  echo "=== mpirun -np $np $(basename "$binary")"
  # Where the ranks meet before the calls every rank takes part in (PeerFailureMain.cpp's
  # meet(), which has no deadline: the `timeout` below bounds it).
  KILN_PEER_FAILURE_MEET_DIR="$(mktemp -d)" || { echo "FAIL: mktemp -d"; exit 1; }
  export KILN_PEER_FAILURE_MEET_DIR
  # 60 s bounds the run if the timeout is broken (the stuck rank sleeps 60 s, then exits).
  out="$(timeout 90 mpirun -np "$np" --oversubscribe --allow-run-as-root --bind-to none \
           "$binary" "$mode" 2>&1)"
  status=$?
  rm -rf "$KILN_PEER_FAILURE_MEET_DIR"
  echo "$out"
  [[ $status -ne 0 && $status -ne 124 ]] ||
    { echo "FAIL: expected the job to fail (not hang), exit status $status"; exit 1; }
  grep -q "rank 1: the step failed on purpose" <<<"$out" ||
    { echo "FAIL: rank 1's failure is missing"; exit 1; }
  timedOut="distributed::all_reduce: timed out after 2 s waiting for the other ranks (float32 [4], sum; rank 0 of $np, started at "
  if [[ $mode == eager ]]; then
    expected="rank 0 caught: kiln::${timedOut}test/unit/frontend/distributed/PeerFailureMain.cpp:"
  else
    expected="rank 0 caught: kiln::run compiled: 'kiln.all_reduce' at test/unit/frontend/distributed/PeerFailureMain.cpp:"
    grep -qF "$timedOut" <<<"$out" ||
      { echo "FAIL: rank 0 did not report the timeout:"; echo "$timedOut"; exit 1; }
  fi
  grep -qF "$expected" <<<"$out" ||
    { echo "FAIL: rank 0 did not report the timeout as expected:"; echo "$expected"; exit 1; }
  if grep -q UNEXPECTED <<<"$out"; then echo "FAIL: a collective completed"; exit 1; fi
done
echo "PASS"
