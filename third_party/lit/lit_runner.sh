#!/usr/bin/env bash
# Runs one lit test under Bazel: puts the directories of the tools under test (passed as
# --tool=<runfiles path>) and LLVM's FileCheck/not/count on PATH, then runs lit on the
# test file. lit finds test/lit.cfg.py by walking up from the test file.
set -euo pipefail

cd "${TEST_SRCDIR:-$PWD/..}/${TEST_WORKSPACE:-kiln}"
tool_path=""
tests=()
for arg in "$@"; do
  case "$arg" in
    --tool=*)
      tool="${arg#--tool=}"
      tool_path="$(cd "$(dirname "$tool")" && pwd):$tool_path"
      ;;
    *) tests+=("$arg") ;;
  esac
done
export PATH="${tool_path}/usr/lib/llvm-22/bin:$PATH"
exec /usr/bin/python3 /usr/lib/llvm-22/bin/lit -v --no-progress-bar "${tests[@]}"
