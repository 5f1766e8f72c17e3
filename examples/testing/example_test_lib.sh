# What the example programs' end-to-end tests share; sourced after `set -euo pipefail`
# with the program and make_fake_idx as $1 and $2:
#   program, make_fake_idx   absolute paths of the two binaries
#   data, work, out          a fake Fashion-MNIST's directory (made by fake_fashion_mnist),
#                            the working directory the program runs in, its output file
#   fail MESSAGE             prints MESSAGE and the output, and exits 1
#   kiln_has_mpi, mpirun_program, same_curves   for the --distributed tests (below)
program="$PWD/$1"
make_fake_idx="$PWD/$2"
data="$TEST_TMPDIR/fake-fashion-mnist"
work="$TEST_TMPDIR/work"
out="$TEST_TMPDIR/out.txt"
mkdir -p "$work"
: >"$out"

fail() { echo "FAIL: $*" >&2; echo "--- output:" >&2; cat "$out" >&2; exit 1; }

# fake_fashion_mnist TRAIN TEST: a learnable fake dataset of that many examples in $data.
fake_fashion_mnist() { "$make_fake_idx" "$data" "$1" "$2" || fail "make_fake_idx failed"; }

# kiln_has_mpi: whether the program was built with MPI (links libmpi: @mpi is empty when
# Kiln is built without it). When not, checks that --distributed says so, with exit
# status 1, before returning false.
kiln_has_mpi() {
  [[ $(ldd "$program") =~ libmpi[._] ]] && return 0  # (grep -q would end ldd with SIGPIPE)
  local status=0
  "$program" --distributed --data "$data" >"$out" 2>&1 || status=$?
  [[ $status -eq 1 ]] || fail "--distributed without MPI: exit status $status, expected 1"
  grep -q "Kiln was built without MPI" "$out" || fail "--distributed without MPI: no message saying so"
  return 1
}

# mpirun_program NP ARGS...: the program as NP ranks of an MPI job, in $work, output
# appended to $out with the pseudo-terminal's carriage returns removed (Open MPI gives the
# ranks a terminal, so progress bars draw in place). Allowed as root and oversubscribed
# (CI runs as root on 2 cores); TMPDIR=/tmp because Bazel's is too long for Open MPI's
# Unix socket paths. Returns mpirun's exit status.
mpirun_program() {
  local np="$1" status=0
  shift
  (cd "$work" && TMPDIR=/tmp KILN_DIST_TIMEOUT=60 KILN_CACHE_DIR="$TEST_TMPDIR/cache" \
    mpirun -np "$np" --oversubscribe --allow-run-as-root --bind-to none "$program" "$@") \
    >"$out.raw" 2>&1 || status=$?
  tr -d '\r' <"$out.raw" >>"$out"
  return "$status"
}

# same_curves A.csv B.csv: two --metrics files with the same rows, losses within 1e-4
# relative and accuracies equal (a data-parallel run against one process on the same
# global batch: only the order of float sums differs).
same_curves() {
  [[ $(wc -l <"$1") -eq $(wc -l <"$2") && $(wc -l <"$1") -gt 2 ]] ||
    fail "$1 and $2 do not have the same rows"
  paste -d, "$1" "$2" | awk -F, 'NR > 1 {
      if ($2 != $8 || $3 != $9 || $5 != $11) { print "row " NR ": " $0; bad = 1 }
      d = $4 - $10; if (d < 0) d = -d
      m = $4 < 0 ? -$4 : $4
      if (d > 1e-4 * m + 1e-6) { print "row " NR " loss: " $4 " vs " $10; bad = 1 }
    } END { exit bad }' >"$TEST_TMPDIR/curves.txt" ||
    fail "$1 and $2 differ: $(cat "$TEST_TMPDIR/curves.txt")"
}
