// RUN: kiln-opt %s --kiln-lower-host --split-input-file | FileCheck %s

// kiln-lower-host: a planned host schedule (the output of kiln-fuse, kiln-outline-kernels and
// kiln-plan-memory, checked in as input) becomes `llvm.func @kiln_<name>(%args, %results,
// %arena, %constants, %runtime)`. Values live where the plan put them: the arena at their
// offset, the caller's result buffer (-1) or the state argument they update (-2); a reshape
// is its operand's buffer. Fusion kernels are called directly and move into
// `module @kiln_kernels`; every other op calls kiln_rt_host_op with the next number.

// Arguments come from the args array; an arena value is a byte offset into the arena; a
// library kernel (matmul) and a host op (transpose) are host ops 0 and 1, each with an
// array of operand pointers and one of result pointers; a fusion kernel is called with its
// operand pointers, then its result pointers. %t and %y (-1) are written straight into
// results 1 and 0: nothing is copied at the end.
// CHECK-LABEL: llvm.func @kiln_rt_host_op(!llvm.ptr, i64, !llvm.ptr, !llvm.ptr)
// CHECK-LABEL: llvm.func @kiln_schedule(
// CHECK-SAME:    %[[ARGS:.*]]: !llvm.ptr, %[[RESULTS:.*]]: !llvm.ptr, %[[ARENA:.*]]: !llvm.ptr, %[[CONSTS:.*]]: !llvm.ptr, %[[RT:[^:]*]]: !llvm.ptr)
// CHECK-SAME:    attributes {kiln.arena_bytes = 128 : i64}
// CHECK:         %[[XS:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[X:.*]] = llvm.load %[[XS]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[WS:.*]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[W:.*]] = llvm.load %[[WS]] : !llvm.ptr -> !llvm.ptr
// Host op 0: the matmul, into the arena at 0.
// CHECK-NEXT:    %[[OFF0:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT:    %[[MM:.*]] = llvm.getelementptr %[[ARENA]][%[[OFF0]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    %[[ID0:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT:    %[[N2:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT:    %[[MM_IN:.*]] = llvm.alloca %[[N2]] x !llvm.ptr : (i64) -> !llvm.ptr
// CHECK-NEXT:    %[[S0:.*]] = llvm.getelementptr %[[MM_IN]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.store %[[X]], %[[S0]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[S1:.*]] = llvm.getelementptr %[[MM_IN]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.store %[[W]], %[[S1]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[N1:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT:    %[[MM_OUT:.*]] = llvm.alloca %[[N1]] x !llvm.ptr : (i64) -> !llvm.ptr
// CHECK-NEXT:    %[[S2:.*]] = llvm.getelementptr %[[MM_OUT]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.store %[[MM]], %[[S2]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.call @kiln_rt_host_op(%[[RT]], %[[ID0]], %[[MM_IN]], %[[MM_OUT]]) : (!llvm.ptr, i64, !llvm.ptr, !llvm.ptr) -> ()
// The fusion kernel: operand, then result (the arena at 64).
// CHECK-NEXT:    %[[OFF64:.*]] = llvm.mlir.constant(64 : i64) : i64
// CHECK-NEXT:    %[[E:.*]] = llvm.getelementptr %[[ARENA]][%[[OFF64]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    llvm.call @schedule_kernel_1(%[[MM]], %[[E]]) : (!llvm.ptr, !llvm.ptr) -> ()
// Host op 1: the transpose, written into result 1.
// CHECK-NEXT:    %[[R1S:.*]] = llvm.getelementptr %[[RESULTS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[T:.*]] = llvm.load %[[R1S]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[ID1:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK:         llvm.store %[[E]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK:         llvm.store %[[T]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.call @kiln_rt_host_op(%[[RT]], %[[ID1]], %{{.*}}, %{{.*}})
// CHECK-NEXT:    %[[R0S:.*]] = llvm.getelementptr %[[RESULTS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[Y:.*]] = llvm.load %[[R0S]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    llvm.call @schedule_kernel_2(%[[T]], %[[Y]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.return
// Fusion kernels move, public, into the kernels module and are declared outside it, one
// pointer per operand and per result; the library kernel and the host function are gone.
// CHECK:       module @kiln_kernels {
// CHECK-NEXT:    func.func @schedule_kernel_1(%{{.*}}: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {kiln.kernel = "fusion"}
// CHECK-NEXT:      kiln.exp
// CHECK:         func.func @schedule_kernel_2(%{{.*}}: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {kiln.kernel = "fusion"}
// CHECK-NEXT:      kiln.neg
// CHECK-NEXT:      return
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  llvm.func @schedule_kernel_1(!llvm.ptr, !llvm.ptr)
// CHECK-NEXT:  llvm.func @schedule_kernel_2(!llvm.ptr, !llvm.ptr)
// CHECK-NOT:   func.func
// CHECK-NOT:   schedule_kernel_0
func.func @schedule(%x: tensor<4x8xf32> {kiln.input = 0 : i64}, %w: tensor<8x4xf32> {kiln.state = "w"})
    -> (tensor<4x4xf32> {kiln.output = 0 : i64}, tensor<4x4xf32> {kiln.output = 1 : i64})
    attributes {kiln.arena_bytes = 128 : i64, kiln.naive_bytes = 128 : i64} {
  %mm = call @schedule_kernel_0(%x, %w) {kiln.offsets = array<i64: 0>}
      : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %e = call @schedule_kernel_1(%mm) {kiln.offsets = array<i64: 64>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = kiln.transpose %e, permutation = [1, 0] {kiln.offsets = array<i64: -1>} : tensor<4x4xf32>
  %y = call @schedule_kernel_2(%t) {kiln.offsets = array<i64: -1>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y, %t : tensor<4x4xf32>, tensor<4x4xf32>
}
func.func private @schedule_kernel_0(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32>
    attributes {kiln.kernel = "library"} {
  %0 = kiln.matmul %a, %b : tensor<4x8xf32>, tensor<8x4xf32>
  return %0 : tensor<4x4xf32>
}
func.func private @schedule_kernel_1(%a: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {kiln.kernel = "fusion"} {
  %0 = kiln.exp %a : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
func.func private @schedule_kernel_2(%a: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {kiln.kernel = "fusion"} {
  %0 = kiln.neg %a : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Constants are entries of the constants array, in block order. A returned constant is not
// written by any op, so it is copied into its result buffer before returning (2x4xf32: 32
// bytes).
// CHECK-LABEL: llvm.func @kiln_constants(
// CHECK-SAME:    %[[ARGS:[^:]*]]: !llvm.ptr, %[[RESULTS:[^:]*]]: !llvm.ptr, %[[ARENA:[^:]*]]: !llvm.ptr, %[[CONSTS:[^:]*]]: !llvm.ptr, %[[RT:[^:]*]]: !llvm.ptr)
// CHECK:         %[[AS:.*]] = llvm.getelementptr %[[CONSTS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[A:.*]] = llvm.load %[[AS]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[BS:.*]] = llvm.getelementptr %[[CONSTS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[B:.*]] = llvm.load %[[BS]] : !llvm.ptr -> !llvm.ptr
// The transpose (host op 0) reads %b; the concat (host op 1) reads %a and the transpose.
// CHECK:         %[[BT:.*]] = llvm.getelementptr %[[ARENA]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    %[[ID0:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK:         llvm.store %[[B]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK:         llvm.store %[[BT]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.call @kiln_rt_host_op(%[[RT]], %[[ID0]], %{{.*}}, %{{.*}})
// CHECK:         %[[CAT:.*]] = llvm.getelementptr %[[ARENA]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    %[[ID1:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT:    %[[N2:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT:    %[[CAT_IN:.*]] = llvm.alloca %[[N2]] x !llvm.ptr : (i64) -> !llvm.ptr
// CHECK-NEXT:    %[[S0:.*]] = llvm.getelementptr %[[CAT_IN]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.store %[[A]], %[[S0]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[S1:.*]] = llvm.getelementptr %[[CAT_IN]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.store %[[BT]], %[[S1]] : !llvm.ptr, !llvm.ptr
// CHECK:         llvm.store %[[CAT]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.call @kiln_rt_host_op(%[[RT]], %[[ID1]], %[[CAT_IN]], %{{.*}})
// CHECK:         llvm.call @constants_kernel_0(%{{.*}}, %[[CAT]], %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:    %[[BYTES:.*]] = llvm.mlir.constant(32 : i64) : i64
// CHECK-NEXT:    %[[R1S:.*]] = llvm.getelementptr %[[RESULTS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[R1:.*]] = llvm.load %[[R1S]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    "llvm.intr.memcpy"(%[[R1]], %[[A]], %[[BYTES]]) <{isVolatile = false}>
// CHECK-NEXT:    llvm.return
func.func @constants(%x: tensor<4x4xf32> {kiln.input = 0 : i64})
    -> (tensor<4x4xf32> {kiln.output = 0 : i64}, tensor<2x4xf32> {kiln.output = 1 : i64})
    attributes {kiln.arena_bytes = 128 : i64, kiln.naive_bytes = 128 : i64} {
  %a = kiln.constant dense<1.000000e+00> : tensor<2x4xf32>
  %b = kiln.constant dense<2.000000e+00> : tensor<4x2xf32>
  %bt = kiln.transpose %b, permutation = [1, 0] {kiln.offsets = array<i64: 0>} : tensor<4x2xf32>
  %cat = kiln.concat(%a, %bt) dim = 0 {kiln.offsets = array<i64: 64>} : tensor<2x4xf32>, tensor<2x4xf32>
  %y = call @constants_kernel_0(%x, %cat) {kiln.offsets = array<i64: -1>}
      : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y, %a : tensor<4x4xf32>, tensor<2x4xf32>
}
func.func private @constants_kernel_0(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32>
    attributes {kiln.kernel = "fusion"} {
  %0 = kiln.add %a, %b : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// A reshape is its operand's buffer: no op, no copy. %e (-1) is returned as result 0
// through a reshape, so the kernel writes it straight into result 0 and the transpose reads
// it there through two reshapes. %n is returned twice: written into result 1, copied into
// result 2; the argument returned as is is copied into result 3.
// CHECK-LABEL: llvm.func @kiln_outputs(
// CHECK-SAME:    %[[ARGS:[^:]*]]: !llvm.ptr, %[[RESULTS:[^:]*]]: !llvm.ptr, %[[ARENA:[^:]*]]: !llvm.ptr, %[[CONSTS:[^:]*]]: !llvm.ptr, %[[RT:[^:]*]]: !llvm.ptr)
// CHECK:         %[[X:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[R0S:.*]] = llvm.getelementptr %[[RESULTS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[E:.*]] = llvm.load %[[R0S]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    llvm.call @outputs_kernel_0(%[[X]], %[[E]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT:    %[[T:.*]] = llvm.getelementptr %[[ARENA]]
// CHECK:         llvm.store %[[E]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK:         llvm.store %[[T]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.call @kiln_rt_host_op(
// CHECK-NEXT:    %[[R1S:.*]] = llvm.getelementptr %[[RESULTS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[N:.*]] = llvm.load %[[R1S]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    llvm.call @outputs_kernel_1(%[[T]], %[[N]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:    %[[B2:.*]] = llvm.mlir.constant(64 : i64) : i64
// CHECK-NEXT:    %[[R2S:.*]] = llvm.getelementptr %[[RESULTS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[R2:.*]] = llvm.load %[[R2S]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    "llvm.intr.memcpy"(%[[R2]], %[[N]], %[[B2]]) <{isVolatile = false}>
// CHECK-NEXT:    %[[B3:.*]] = llvm.mlir.constant(64 : i64) : i64
// CHECK-NEXT:    %[[R3S:.*]] = llvm.getelementptr %[[RESULTS]][3] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[R3:.*]] = llvm.load %[[R3S]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    "llvm.intr.memcpy"(%[[R3]], %[[X]], %[[B3]]) <{isVolatile = false}>
// CHECK-NEXT:    llvm.return
func.func @outputs(%x: tensor<4x4xf32> {kiln.input = 0 : i64})
    -> (tensor<16xf32> {kiln.output = 0 : i64}, tensor<4x4xf32> {kiln.output = 1 : i64},
        tensor<4x4xf32> {kiln.output = 2 : i64}, tensor<4x4xf32> {kiln.output = 3 : i64})
    attributes {kiln.arena_bytes = 64 : i64, kiln.naive_bytes = 64 : i64} {
  %e = call @outputs_kernel_0(%x) {kiln.offsets = array<i64: -1>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %flat = kiln.reshape %e, shape = [16] : tensor<4x4xf32>
  %back = kiln.reshape %flat, shape = [4, 4] : tensor<16xf32>
  %t = kiln.transpose %back, permutation = [1, 0] {kiln.offsets = array<i64: 0>} : tensor<4x4xf32>
  %n = call @outputs_kernel_1(%t) {kiln.offsets = array<i64: -1>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %flat, %n, %n, %x : tensor<16xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
func.func private @outputs_kernel_0(%a: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {kiln.kernel = "fusion"} {
  %0 = kiln.exp %a : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
func.func private @outputs_kernel_1(%a: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {kiln.kernel = "fusion"} {
  %0 = kiln.neg %a : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// An in-place state update (-2): the SGD kernel writes the new weights into the state
// argument's own buffer, which it also reads; the update's result buffer is never touched.
// CHECK-LABEL: llvm.func @kiln_sgd(
// CHECK-SAME:    %[[ARGS:[^:]*]]: !llvm.ptr, %[[RESULTS:[^:]*]]: !llvm.ptr, %[[ARENA:[^:]*]]: !llvm.ptr, %[[CONSTS:[^:]*]]: !llvm.ptr, %[[RT:[^:]*]]: !llvm.ptr)
// CHECK-SAME:    attributes {kiln.arena_bytes = 0 : i64}
// CHECK:         %[[WS:.*]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[W:.*]] = llvm.load %[[WS]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[GS:.*]] = llvm.getelementptr %[[ARGS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[G:.*]] = llvm.load %[[GS]] : !llvm.ptr -> !llvm.ptr
// CHECK-NOT:     %[[RESULTS]][1]
// CHECK:         llvm.call @kiln_rt_host_op(
// CHECK-NEXT:    llvm.call @sgd_kernel_1(%[[G]], %[[W]], %[[W]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.return
// CHECK:       llvm.func @sgd_kernel_1(!llvm.ptr, !llvm.ptr, !llvm.ptr)
func.func @sgd(%x: tensor<4x4xf32> {kiln.input = 0 : i64}, %w: tensor<4x4xf32> {kiln.state = "w"},
               %g: tensor<4x4xf32> {kiln.input = 1 : i64})
    -> (tensor<4x4xf32> {kiln.output = 0 : i64}, tensor<4x4xf32> {kiln.state_update = "w"})
    attributes {kiln.arena_bytes = 0 : i64, kiln.naive_bytes = 0 : i64} {
  %y = call @sgd_kernel_0(%x, %w) {kiln.offsets = array<i64: -1>}
      : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %nw = call @sgd_kernel_1(%g, %w) {kiln.offsets = array<i64: -2>}
      : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y, %nw : tensor<4x4xf32>, tensor<4x4xf32>
}
func.func private @sgd_kernel_0(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32>
    attributes {kiln.kernel = "library"} {
  %0 = kiln.matmul %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
func.func private @sgd_kernel_1(%g: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32>
    attributes {kiln.kernel = "fusion"} {
  %lr = kiln.constant dense<1.000000e-01> : tensor<4x4xf32>
  %0 = kiln.mul %g, %lr : tensor<4x4xf32>
  %1 = kiln.sub %w, %0 : tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}

// -----

// A transpose only library kernels read is a view: no host op of its own, and the library
// call gets its operand's pointer (the runtime reads it permuted). The matmul is host op 0.
// CHECK-LABEL: llvm.func @kiln_view(
// CHECK-SAME:    %[[ARGS:[^:]*]]: !llvm.ptr, %[[RESULTS:[^:]*]]: !llvm.ptr, %[[ARENA:[^:]*]]: !llvm.ptr, %[[CONSTS:[^:]*]]: !llvm.ptr, %[[RT:[^:]*]]: !llvm.ptr)
// CHECK:         %[[WS:.*]] = llvm.getelementptr %[[ARGS]][1]
// CHECK-NEXT:    %[[W:.*]] = llvm.load %[[WS]]
// CHECK:         %[[ID0:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK:         llvm.store %[[W]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK:         llvm.call @kiln_rt_host_op(%[[RT]], %[[ID0]], %{{.*}}, %{{.*}})
// CHECK-NOT:     kiln_rt_host_op
// CHECK:         llvm.return
func.func @view(%x: tensor<4x8xf32> {kiln.input = 0 : i64}, %w: tensor<4x8xf32> {kiln.state = "w"})
    -> (tensor<4x4xf32> {kiln.output = 0 : i64})
    attributes {kiln.arena_bytes = 0 : i64, kiln.naive_bytes = 0 : i64} {
  %t = kiln.transpose %w, permutation = [1, 0] : tensor<4x8xf32>
  %mm = call @view_kernel_0(%x, %t) {kiln.offsets = array<i64: -1>}
      : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %mm : tensor<4x4xf32>
}
func.func private @view_kernel_0(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32>
    attributes {kiln.kernel = "library"} {
  %0 = kiln.matmul %a, %b : tensor<4x8xf32>, tensor<8x4xf32>
  return %0 : tensor<4x4xf32>
}
