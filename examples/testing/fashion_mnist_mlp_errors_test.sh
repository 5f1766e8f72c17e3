#!/usr/bin/env bash
# fashion_mnist_mlp's error paths: each exits with its status and a message naming the
# problem, before any training.
#   $1: the fashion_mnist_mlp binary   $2: make_fake_idx
set -euo pipefail
program="$PWD/$1"
make_fake_idx="$PWD/$2"
out="$TEST_TMPDIR/out.txt"
failures=0

# expect STATUS PATTERN ARGS...: runs the program and checks its exit status and that its
# output contains the fixed string PATTERN.
expect() {
  local want=$1 pattern=$2 status=0
  shift 2
  "$program" "$@" >"$out" 2>&1 || status=$?
  if [[ $status -ne $want ]] || ! grep -qF -- "$pattern" "$out"; then
    echo "FAIL: $* exited $status (expected $want) with:" >&2
    cat "$out" >&2
    echo "--- expected to contain: $pattern" >&2
    failures=$((failures + 1))
  fi
}

# No data: one line saying where the program looked, the package and the flag.
missing="$TEST_TMPDIR/no-such-dir"
expect 2 "fashion_mnist_mlp: no Fashion-MNIST in $missing (train-images-idx3-ubyte[.gz] not\
 found); Debian's dataset-fashion-mnist package installs it in /usr/share/datasets/fashion-mnist,\
 or pass --data DIR" --data "$missing"
if [[ $(wc -l <"$out") -ne 1 ]]; then
  echo "FAIL: the missing-data message is not one line" >&2
  failures=$((failures + 1))
fi
# A relative --data is reported as the absolute path it resolved to.
cd "$TEST_TMPDIR"
expect 2 "no Fashion-MNIST in $TEST_TMPDIR/relative (" --data relative
cd - >/dev/null

# A directory with some of the files names the first one missing.
partial="$TEST_TMPDIR/partial"
"$make_fake_idx" "$partial" 20 20
rm "$partial/t10k-labels-idx1-ubyte"
expect 2 "no Fashion-MNIST in $partial (t10k-labels-idx1-ubyte[.gz] not found)" --data "$partial"

# Bad flags: the reason, then the usage.
expect 2 "fashion_mnist_mlp: unknown flag --epoch" --epoch 2
expect 2 "usage: fashion_mnist_mlp [--flag value]..." --epoch 2
expect 2 "fashion_mnist_mlp: --epochs: 'two' is not an integer" --epochs two
expect 2 "fashion_mnist_mlp: --batch-size: '0' is less than 1" --batch-size 0
expect 2 "fashion_mnist_mlp: --lr: '-1' is outside [0, 10]" --lr -1
expect 2 "fashion_mnist_mlp: --momentum: '1' is outside [0, 0.999]" --momentum 1
expect 2 "fashion_mnist_mlp: --limit needs a value (N)" --limit
expect 2 "fashion_mnist_mlp: unexpected argument 'stray'" stray
expect 0 "--checkpoint PATH" --help

# A corrupt file is a failure while running (status 1) with the reader's message.
corrupt="$TEST_TMPDIR/corrupt"
"$make_fake_idx" "$corrupt" 20 20
head -c 100 "$corrupt/t10k-images-idx3-ubyte" >"$corrupt/short"
mv "$corrupt/short" "$corrupt/t10k-images-idx3-ubyte"
expect 1 "$corrupt/t10k-images-idx3-ubyte: truncated" --data "$corrupt"

# A checkpoint that could not be saved is refused before training.
expect 2 "fashion_mnist_mlp: --checkpoint: /dev/null is not a directory" \
  --checkpoint /dev/null/model.safetensors
expect 2 "fashion_mnist_mlp: --checkpoint: $TEST_TMPDIR/none is not a directory" \
  --checkpoint "$TEST_TMPDIR/none/model.safetensors"
# --device: a name that is not a device is a bad flag; cuda without a CUDA device is one line
# with the reason, status 2, before the data is looked at (where there is a device, the
# missing data is reported instead).
expect 2 "fashion_mnist_mlp: --device: 'tpu' is not cpu or cuda" --device tpu
expect 2 "no Fashion-MNIST in $missing" --device cpu --data "$missing"
status=0
"$program" --device cuda --data "$missing" >"$out" 2>&1 || status=$?
if grep -qF "no CUDA device" "$out"; then
  expect 2 "fashion_mnist_mlp: no CUDA device: " --device cuda --data "$missing"
  if [[ $(wc -l <"$out") -ne 1 ]]; then
    echo "FAIL: the no-CUDA-device message is not one line" >&2
    failures=$((failures + 1))
  fi
else
  expect 2 "no Fashion-MNIST in $missing" --device cuda --data "$missing"
fi

if ((failures)); then
  echo "$failures checks failed" >&2
  exit 1
fi
echo PASS
