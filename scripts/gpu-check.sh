#!/usr/bin/env bash
# The GPU check, in one call of at most 8 minutes on a GPU machine (docs/GPU.md): the
# device tests, op-by-op parity of every op on CUDA against the CPU (forward and backward,
# f32/f64/f16/bf16 and the integer dtypes), the caching allocator under a training loop,
# nn modules and optimizers on CUDA, traced programs compiled for the GPU by MLIR and NVRTC
# against eager (CudaTraceTest), the eager MLP example on the GPU and on the CPU, and
# PyTorch's eager and torch.compile step times for the same MLP on the same card.
#
#   bash scripts/gpu-bundle.sh            (here: build the bundle into gpu-bundle/)
#   bash scripts/gpu-check.sh [DIR]       (there, from the repository root)
#
# The HALIDE bundle (bash scripts/gpu-bundle.sh --halide: gpu-bundle-halide/) holds
# CudaTraceTest and bench/cuda_step with HALIDE built in; steps whose binary a bundle does
# not hold report SKIPPED (not in this bundle). KILN_HALIDE_TRACE_CUDA=1 in the environment
# logs HALIDE's CUDA launches (docs/GPU.md).
#
# Everything it prints also goes to $OUT/gpu-check.log (or ./gpu-check.log). Each step has
# its own time limit and its verdict on a line "gpu-check: <step>: PASS|FAIL|SKIPPED ...";
# the last line counts them. Without a GPU every step reports SKIPPED and it exits 0.
# Newest work first; KILN_GPU_DEADLINE (seconds, default 470) caps the whole run: each
# step's limit is cut to what is left, and a step with under 20 s left is SKIPPED, said so.
set -uo pipefail
cd "$(dirname "$0")/.."
bundle="${1:-gpu-bundle}"
logs="${OUT:-/tmp/kiln-gpu-check}"
mkdir -p "$logs"
log="$logs/gpu-check.log"
exec > >(tee "$log") 2>&1

echo "gpu-check: $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname)"
if ! command -v nvidia-smi > /dev/null || ! nvidia-smi > /dev/null 2>&1; then
  echo "gpu-check: SKIPPED: no GPU here (nvidia-smi missing or failing)"
  exit 0
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
echo "gpu-check: $(ldd --version | head -1); CUDA libraries on the loader's path:"
ldconfig -p | grep -E 'libcuda.so.1|libnvrtc.so|libcublasLt.so|libcudnn.so' | sed 's/^/  /'
ls -d /usr/local/cuda*/lib64 2>/dev/null | sed 's/^/  toolkit: /'

work="$(mktemp -d /tmp/kiln-gpu.XXXX)"
tar -C "$work" -xJf "$bundle/kiln-gpu.tar.xz" || { echo "gpu-check: FAIL: cannot unpack $bundle"; exit 1; }
echo "gpu-check: bundle built from commit $(cat "$work/kiln-gpu/COMMIT")"
libs="$work/kiln-gpu/lib"
# The CUDA libraries Kiln opens at run time (NVRTC, cuBLASLt): the toolkit's, else the ones
# PyTorch's wheels bring.
if [[ -e /usr/local/cuda/lib64/libnvrtc.so.13 ]]; then
  export KILN_CUDA_HOME=/usr/local/cuda
else
  for dir in $(python3 -c 'import nvidia, os; [print(os.path.join(p, d, "lib")) for p in nvidia.__path__ for d in os.listdir(p)]' 2>/dev/null); do
    [[ -d $dir ]] && libs="$libs:$dir"
  done
fi
export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KILN_CACHE_DIR="$work/cache"
echo "gpu-check: KILN_CUDA_HOME=${KILN_CUDA_HOME:-} LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
bin="$work/kiln-gpu/bin"
pass=0 fail=0 skipped=0
deadline="${KILN_GPU_DEADLINE:-470}"

budget() {  # the step's own limit, cut to what is left of the deadline (0: too little left)
  local left=$((deadline - SECONDS - 5))
  if (( left < 20 )); then echo 0; elif (( left < $1 )); then echo "$left"; else echo "$1"; fi
}

verdict() {  # step, status, log file
  local step=$1 status=$2 file=$3
  if [[ $status -ne 0 ]]; then
    echo "gpu-check: $step: FAIL (exit $status)"; fail=$((fail + 1))
  elif grep -qE '^\[  PASSED  \] 0 tests' "$file"; then
    echo "gpu-check: $step: SKIPPED ($(grep -m1 'SKIPPED:' "$file" | sed 's/.*SKIPPED: //'))"; skipped=$((skipped + 1))
  else
    echo "gpu-check: $step: PASS"; pass=$((pass + 1))
  fi
}

out_of_time() {  # step: true (and SKIPPED counted) when under 20 s are left
  (( $(budget 20) > 0 )) && return 1
  echo "gpu-check: $1: SKIPPED (out of time: KILN_GPU_DEADLINE=$deadline s)"; skipped=$((skipped + 1))
}

not_in_bundle() {  # step, binary: true (and SKIPPED counted) when the bundle lacks it
  [[ -x $bin/$2 ]] && return 1
  echo "gpu-check: $1: SKIPPED (not in this bundle)"; skipped=$((skipped + 1))
}

run_test() {  # name, seconds
  local name=$1 limit out="$logs/$1.log" start=$SECONDS
  not_in_bundle "$name" "$name" && return
  out_of_time "$name" && return
  limit=$(budget "$2")
  echo "=== $name (whole log: $(basename "$out"), limit $limit s)"
  timeout "$limit" "$bin/$name" --gtest_color=no 2>&1 | tee "$out" |
    grep -E '^(parity:|device|kiln: compiled|\[  (FAILED|SKIPPED|PASSED) +\]|\[==========\]|[0-9]+ ops)' | tail -n 150
  local status=${PIPESTATUS[0]}
  echo "($name: $((SECONDS - start)) s)"
  verdict "$name" "$status" "$out"
}

# Newest work first, so that a run cut short by its deadline still checks it.
# Traced programs on the GPU under INTERP, MLIR, NVRTC and (the HALIDE bundle) HALIDE
# (issue 22); KILN_LOG=compile in its own test shows the MLP step's kernels and launches.
run_test CudaTraceTest 150

echo "=== Training steps and bandwidth: Kiln, then PyTorch $(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null), on the same card"
if ! not_in_bundle "kiln steps" cuda_step && ! out_of_time "kiln steps"; then
  start=$SECONDS
  timeout "$(budget 180)" "$bin/cuda_step" 2>&1 | tee "$logs/step.log"
  status=${PIPESTATUS[0]}
  echo "(kiln steps: $((SECONDS - start)) s)"
  verdict "kiln steps" "$status" "$logs/step.log"
fi
if [[ -x $bin/cuda_step ]] && ! out_of_time "torch steps"; then
  start=$SECONDS
  timeout "$(budget 150)" python3 scripts/gpu/torch_mlp_step.py 2>&1 | tail -n 30 | tee -a "$logs/step.log"
  status=${PIPESTATUS[0]}
  echo "(torch steps: $((SECONDS - start)) s)"
  [[ $status -eq 0 ]] && pass=$((pass + 1)) && echo "gpu-check: torch steps: PASS" ||
    { fail=$((fail + 1)); echo "gpu-check: torch steps: FAIL (exit $status)"; }
fi

run_test CudaOpsTest 150
run_test CudaDeviceTest 60
run_test CudaModuleTest 90

data="$work/fashion-mnist"
if [[ -f $bundle/fashion-mnist.tar.xz ]]; then
  mkdir -p "$data" && tar -C "$data" -xJf "$bundle/fashion-mnist.tar.xz" || rm -rf "$data"
fi
epochs="${KILN_GPU_EPOCHS:-2}"
for device in cuda cpu; do
  not_in_bundle "mlp $device" fashion_mnist_mlp && continue
  if [[ ! -d $data ]]; then echo "gpu-check: mlp $device: SKIPPED (no $data)"; skipped=$((skipped + 1)); continue; fi
  out_of_time "mlp $device" && continue
  echo "=== fashion_mnist_mlp --device $device --epochs $epochs"
  start=$SECONDS
  timeout "$(budget 100)" "$bin/fashion_mnist_mlp" --device "$device" --epochs "$epochs" --data "$data" 2>&1 |
    tr '\r' '\n' | grep -v '([0-9]*%)' | tail -n 25 | tee "$logs/mlp-$device.log"
  status=${PIPESTATUS[0]}
  echo "(mlp $device: $((SECONDS - start)) s)"
  verdict "mlp $device" "$status" "$logs/mlp-$device.log"
done

echo "gpu-check: $pass passed, $fail failed, $skipped skipped ($SECONDS s)"
[[ $fail -eq 0 ]]
