#!/usr/bin/env bash
# Builds kiln-run-fuzz's libFuzzer targets (--config=fuzz: clang-22, ASan, UBSan) and runs
# them one after another (docs/FUZZING.md). Needs bash scripts/bootstrap.sh --with-fuzz.
#
#   bash scripts/fuzz-kiln-run.sh [--out DIR] [--max-total-time S] TARGET=RUNS... [-- FLAG...]
#   bash scripts/fuzz-kiln-run.sh dump=1000000 npy=1000000 run=2000
#   bash scripts/fuzz-kiln-run.sh dump=1000000 run=2000 -- -only_ascii=1   (text dumps only)
#
# TARGET is dump (jit::load's parse and checks, KILN_JIT_BACKEND=INTERP), npy
# (io::load_npy) or run (a whole kiln-run: compile, run, write the outputs). Each starts
# from its checked-in seeds (tools/kiln-run-fuzz/corpus) and grows DIR/TARGET/corpus
# (kept between runs); its log is DIR/TARGET.log, a crash's reproducer DIR/TARGET/crash-*.
# --max-total-time stops each target after S seconds even if RUNS are not done; FLAGs
# after -- go to every target (libFuzzer's -help=1 lists them). The last
# lines of each log (executions, exec/s, corpus) are gathered in DIR/summary.txt. Exit
# status 1 when a target found a crash, a leak or a timeout.
set -euo pipefail
cd "$(dirname "$0")/.."

out="${TMPDIR:-/tmp}/kiln-run-fuzz"
max_time=0
targets=()
extra=()
while (($#)); do
  case $1 in
    --) shift; extra=("$@"); break ;;
    --out) out=$2; shift 2 ;;
    --max-total-time) max_time=$2; shift 2 ;;
    dump=* | npy=* | run=*) targets+=("$1"); shift ;;
    *) echo "fuzz-kiln-run: unknown argument '$1' (see the comment at the top)" >&2; exit 2 ;;
  esac
done
((${#targets[@]})) || { echo "fuzz-kiln-run: name at least one TARGET=RUNS" >&2; exit 2; }

bazel build --config=fuzz //tools/kiln-run-fuzz:{dump,npy,run}-fuzzer
bin="$(bazel info --config=fuzz bazel-bin)/tools/kiln-run-fuzz"

# libMLIR.so is not instrumented; LLVM's allocators inlined into instrumented code poison
# memory the library then touches (see the asan config in .bazelrc).
export ASAN_OPTIONS="allow_user_poisoning=0:detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"

# Per target: the seed corpus and libFuzzer's limits. A dump is a few KB, an .npy less;
# a whole run compiles, which takes seconds under the sanitizers, and prints its outputs
# (stdout is closed).
declare -A seeds=([dump]=dump [npy]=npy [run]=dump)
declare -A flags=(
  [dump]="-max_len=65536 -timeout=30 -rss_limit_mb=4096"
  [npy]="-max_len=4096 -timeout=10 -rss_limit_mb=2048"
  [run]="-max_len=65536 -timeout=120 -rss_limit_mb=8192 -close_fd_mask=1"
)

status=0
mkdir -p "$out"
: >"$out/summary.txt"
for spec in "${targets[@]}"; do
  target=${spec%%=*}
  runs=${spec#*=}
  mkdir -p "$out/$target/corpus"
  log="$out/$target.log"
  echo "fuzz-kiln-run: $target, $runs runs, log $log"
  start=$SECONDS
  rc=0
  # shellcheck disable=SC2086  # the flags are words
  "$bin/$target-fuzzer" -runs="$runs" -max_total_time="$max_time" ${flags[$target]} \
    -print_final_stats=1 -artifact_prefix="$out/$target/" "${extra[@]}" \
    "$out/$target/corpus" "tools/kiln-run-fuzz/corpus/${seeds[$target]}" >"$log" 2>&1 || rc=$?
  ((rc == 0)) || status=1
  {
    echo "== $target: $runs runs asked, $((SECONDS - start)) s, exit status $rc ($(date -u +%FT%TZ))"
    grep -E '^(#[0-9]+[[:space:]]+DONE|Done [0-9]+ runs|stat::|kiln-run-fuzz: )' "$log" || true
    echo "working corpus: $(find "$out/$target/corpus" -type f | wc -l) files, $(du -sk "$out/$target/corpus" | cut -f1) KiB"
    ls "$out/$target" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' || echo "no crash, leak, timeout or oom files"
  } | tee -a "$out/summary.txt"
done
exit $status
