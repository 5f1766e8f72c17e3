# What the example programs' end-to-end tests share; sourced after `set -euo pipefail`
# with the program and make_fake_idx as $1 and $2:
#   program, make_fake_idx   absolute paths of the two binaries
#   data, work, out          a fake Fashion-MNIST's directory (made by fake_fashion_mnist),
#                            the working directory the program runs in, its output file
#   fail MESSAGE             prints MESSAGE and the output, and exits 1
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
