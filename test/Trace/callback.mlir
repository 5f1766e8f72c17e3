// exclude_from_trace becomes a kiln.callback whose operands are the tensors passed in and
// whose results are the block's outputs; the host function runs on every call.

// RUN: trace-examples callback | FileCheck %s
// CHECK-LABEL: func.func @main(
// CHECK:         %[[X1:.*]] = kiln.add %arg0, %{{.*}} : tensor<2xf32>
// CHECK:         %[[Y:.*]] = kiln.callback(%[[X1]]) callee = 0 : (tensor<2xf32>) -> tensor<2xf32>
// CHECK:         return %[[Y]]

// RUN: not trace-examples no-such-example 2>&1 | FileCheck %s --check-prefix=USAGE
// USAGE: usage: trace-examples <name> [--locations]; names: affine callback captured
