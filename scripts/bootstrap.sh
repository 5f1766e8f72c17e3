#!/usr/bin/env bash
# Installs every system package Kiln's build, tests, examples and benchmarks use.
# Idempotent: packages already present are left alone. Fails loudly on a missing package.
# The CUDA toolkit is optional and never installed here; it is detected at /usr/local/cuda.
#
#   bash scripts/bootstrap.sh               what the build and tests need (CI)
#   bash scripts/bootstrap.sh --with-peers  also LibTorch 1.13 (C++ and python3-torch) on
#                                           OpenBLAS, the peer benchmarks compare against and
#                                           the source of the checked-in golden values
#   bash scripts/bootstrap.sh --with-fuzz   also clang-22 with libFuzzer and the sanitizer
#                                           runtimes (and LLVM's omp.h, which clang finds
#                                           beside its own headers), for --config=fuzz
#                                           (docs/FUZZING.md); CI needs none of them
# The options combine.
set -euo pipefail

PACKAGES=(
  # Build
  bazel-bootstrap bazel-platforms g++ python3
  # LLVM/MLIR 22: shared libLLVM/libMLIR, headers, mlir-tblgen, FileCheck/not/count, lit
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  # Kernels and backends
  libdnnl-dev libhalide14-0-dev zlib1g-dev
  # The profiler's Chrome traces (header-only JSON)
  nlohmann-json3-dev
  # Tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # kiln::distributed and its tests under mpirun (Open MPI; docs/DISTRIBUTED.md)
  libopenmpi-dev openmpi-bin
  # Data for examples
  dataset-fashion-mnist
)
for option in "$@"; do
  case $option in
    --with-peers) PACKAGES+=(python3-torch libtorch-dev libopenblas0-pthread) ;;
    --with-fuzz) PACKAGES+=(clang-22 libclang-rt-22-dev libomp-22-dev) ;;
    *) echo "bootstrap: unknown option '$option' (--with-peers, --with-fuzz)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  if ! $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
    echo "bootstrap: FAILED to install one of: ${missing[*]}" >&2
    exit 1
  fi
  for p in "${missing[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      { echo "bootstrap: package $p is still missing after install" >&2; exit 1; }
    echo "bootstrap: installed $p $(dpkg-query -W -f='${Version}' "$p")"
  done
else
  echo "bootstrap: all ${#PACKAGES[@]} packages already installed"
fi

for tool in /usr/lib/llvm-22/bin/mlir-tblgen /usr/lib/llvm-22/bin/FileCheck \
            /usr/lib/llvm-22/lib/libMLIR.so /usr/bin/bazel /usr/bin/mpicxx /usr/bin/mpirun; do
  [[ -e $tool ]] || { echo "bootstrap: expected $tool after install, not found" >&2; exit 1; }
done

if [[ -x /usr/local/cuda/bin/ptxas ]]; then
  echo "bootstrap: CUDA toolkit found at /usr/local/cuda ($(/usr/local/cuda/bin/ptxas --version | tail -1))"
else
  echo "bootstrap: no CUDA toolkit at /usr/local/cuda; GPU targets will report 'not available'"
fi
