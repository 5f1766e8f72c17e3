// The harness puts LLVM's testing tools on PATH, and a check that does not match makes
// the RUN line fail (`not` inverts it), so a broken FileCheck setup cannot pass silently.
// RUN: echo "kiln harness" | FileCheck %s
// RUN: echo "kiln harness" | not FileCheck %s --check-prefix=WRONG
// RUN: printf 'a\nb\n' | count 2
// CHECK: kiln harness
// WRONG: kiln compiler
