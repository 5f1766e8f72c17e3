// kiln-opt registers the kiln dialect beside the upstream dialects and passes the
// pipelines lower through, so every stage of a dumped graph can be replayed by hand.
// RUN: kiln-opt --show-dialects | FileCheck %s --check-prefix=DIALECTS
// RUN: kiln-opt --help | FileCheck %s --check-prefix=HELP
// RUN: kiln-opt %s | FileCheck %s
// RUN: not kiln-opt %s --kiln-no-such-pass 2>&1 | FileCheck %s --check-prefix=BADFLAG

// DIALECTS-DAG: bufferization
// DIALECTS-DAG: func
// DIALECTS-DAG: gpu
// DIALECTS-DAG: kiln
// DIALECTS-DAG: linalg
// DIALECTS-DAG: llvm
// DIALECTS-DAG: nvvm
// DIALECTS-DAG: vector

// HELP: Kiln optimizer driver
// HELP-DAG: --canonicalize
// HELP-DAG: --one-shot-bufferize
// HELP-DAG: --convert-linalg-to-loops

// BADFLAG: Unknown command line argument '--kiln-no-such-pass'

// CHECK-LABEL: func.func @mixed
// CHECK: kiln.add
// CHECK: arith.addf
func.func @mixed(%a: tensor<4xf32>, %s: f32) -> (tensor<4xf32>, f32) {
  %0 = kiln.add %a, %a : tensor<4xf32>
  %1 = arith.addf %s, %s : f32
  return %0, %1 : tensor<4xf32>, f32
}
