#!/usr/bin/env bash
# Runs a test binary under mpirun once per world size given:
#   mpirun_test.sh BINARY NP...
# Each run is oversubscribed (3 ranks on a 2-core CI machine) and allowed as root (CI runs
# as root). Without mpirun (Kiln built without MPI) the binary runs once, alone, and
# checks that kiln::distributed reports so.
set -euo pipefail
binary="$1"
shift
if ! command -v mpirun >/dev/null; then
  exec "$binary"
fi
# Open MPI puts its session directory and sockets under TMPDIR; Bazel's is too long for a
# Unix socket path.
export TMPDIR=/tmp
for np in "$@"; do
  echo "=== mpirun -np $np $(basename "$binary")"
  mpirun -np "$np" --oversubscribe --allow-run-as-root --bind-to none "$binary"
done
