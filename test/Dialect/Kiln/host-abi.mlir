// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// Round trip of every host-ABI attribute (KilnDialect::get...AttrName()) in its place: a
// traced function's arguments and results, a kiln.fusion, a kernel function, a planned
// host schedule and its ops.

// CHECK-LABEL: func.func @traced(
// CHECK-SAME:    %{{.*}}: tensor<4xf32> {kiln.input = 0 : i64, kiln.name = "x"}
// CHECK-SAME:    %{{.*}}: tensor<4xf32> {kiln.input = 1 : i64}
// CHECK-SAME:    %{{.*}}: tensor<4xf32> {kiln.state = "w"}
// CHECK-SAME:    -> (tensor<4xf32> {kiln.name = "y", kiln.output = 0 : i64}, tensor<4xf32> {kiln.state_update = "w"}, tensor<4xf32> {kiln.grad_update = "w.grad"}, tensor<4xf32> {kiln.created = 0 : i64})
// CHECK:         kiln.fusion(%{{.*}}) {kiln.row_dims = 1 : i64}
func.func @traced(%x: tensor<4xf32> {kiln.input = 0 : i64, kiln.name = "x"},
                  %y: tensor<4xf32> {kiln.input = 1 : i64},
                  %w: tensor<4xf32> {kiln.state = "w"})
    -> (tensor<4xf32> {kiln.output = 0 : i64, kiln.name = "y"},
        tensor<4xf32> {kiln.state_update = "w"},
        tensor<4xf32> {kiln.grad_update = "w.grad"},
        tensor<4xf32> {kiln.created = 0 : i64}) {
  %s = kiln.add %x, %y : tensor<4xf32>
  %f = kiln.fusion(%s) {kiln.row_dims = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = kiln.exp %a : tensor<4xf32>
    kiln.yield %e : tensor<4xf32>
  }
  return %s, %f, %w, %y : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func private @planned_kernel_0(
// CHECK-SAME:    attributes {kiln.kernel = "fusion", kiln.row_dims = 2 : i64}
func.func private @planned_kernel_0(tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    attributes {kiln.kernel = "fusion", kiln.row_dims = 2 : i64}

// CHECK-LABEL: func.func private @planned_kernel_1(
// CHECK-SAME:    attributes {kiln.kernel = "library"}
func.func private @planned_kernel_1(tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    attributes {kiln.kernel = "library"}

// CHECK-LABEL: func.func @planned(
// CHECK-SAME:    attributes {kiln.arena_bytes = 128 : i64, kiln.naive_bytes = 192 : i64}
// CHECK:         call @planned_kernel_0(%{{.*}}) {kiln.offsets = array<i64: 0>}
// CHECK:         call @planned_kernel_1(%{{.*}}) {kiln.offsets = array<i64: -1>}
// CHECK:         call @planned_kernel_0(%{{.*}}) {kiln.offsets = array<i64: -2>}
func.func @planned(%x: tensor<2x3x4xf32> {kiln.input = 0 : i64},
                   %w: tensor<2x3x4xf32> {kiln.state = "w"})
    -> (tensor<2x3x4xf32> {kiln.output = 0 : i64}, tensor<2x3x4xf32> {kiln.state_update = "w"})
    attributes {kiln.arena_bytes = 128 : i64, kiln.naive_bytes = 192 : i64} {
  %a = call @planned_kernel_0(%x) {kiln.offsets = array<i64: 0>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %b = call @planned_kernel_1(%a) {kiln.offsets = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %c = call @planned_kernel_0(%w) {kiln.offsets = array<i64: -2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %b, %c : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// The lowered host function keeps its arena size.
// CHECK-LABEL: llvm.func @kiln_planned(
// CHECK-SAME:    attributes {kiln.arena_bytes = 128 : i64}
llvm.func @kiln_planned(%args: !llvm.ptr) attributes {kiln.arena_bytes = 128 : i64} {
  llvm.return
}
