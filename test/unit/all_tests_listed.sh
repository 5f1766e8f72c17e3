#!/usr/bin/env bash
# Fails when a *Test.cpp of package $1 is not named in its BUILD.bazel, so
# a suite dropped from a target list cannot silently stop running.
set -euo pipefail
cd "${TEST_SRCDIR}/${TEST_WORKSPACE}/$1"
missing=0
count=0
while IFS= read -r file; do
  count=$((count + 1))
  name="$(basename "$file" .cpp)"
  build="$(dirname "$file")/BUILD.bazel"
  if ! grep -q "\"${name}\"\|\"${name}.cpp\"" "$build" 2>/dev/null; then
    echo "not listed in $build: $file"
    missing=$((missing + 1))
  fi
done < <(find -L . -name '*Test.cpp' | sort)
echo "$count test files, $missing not listed"
[[ $count -gt 0 && $missing -eq 0 ]]
