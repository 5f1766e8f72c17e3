// RUN: kiln-opt %s --kiln-plan-memory=report=true -verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s --kiln-plan-memory=alignment=16 | FileCheck %s --check-prefix=ALIGN16
// RUN: not kiln-opt %s --kiln-plan-memory=alignment=48 2>&1 | FileCheck %s --check-prefix=BAD-ALIGN
// RUN: kiln-opt %s --kiln-fuse --kiln-outline-kernels --kiln-plan-memory | FileCheck %s --check-prefix=MLP
// RUN: kiln-opt %s --kiln-plan-memory=several-results-in-place=false | FileCheck %s --check-prefix=APART

// kiln-plan-memory: one arena per host schedule. Every tensor a host op produces gets a
// byte offset (`kiln.offsets`, one per result), except constants, reshapes and transposes
// only library kernels read (views of their operand), outputs (-1: the caller's memory) and state updates written in place (-2).
// Buffers whose lifetimes (producer to last use, in block order) overlap never share bytes.
// The first RUN line also checks each function's report remark.

// BAD-ALIGN: error: kiln-plan-memory: alignment must be a power of two, not 48

// Hand-written kernels, as kiln-outline-kernels makes them. Kernels are not planned.
// CHECK-LABEL: func.func private @neg(
// CHECK-NOT:     kiln.offsets
// CHECK-NOT:     kiln.arena_bytes
// CHECK:         return
func.func private @neg(%a: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {kiln.kernel = "fusion"} {
  %0 = kiln.neg %a : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

func.func private @add(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32>
    attributes {kiln.kernel = "fusion"} {
  %0 = kiln.add %a, %b : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

func.func private @neg1(%a: tensor<1xf32>) -> tensor<1xf32> attributes {kiln.kernel = "fusion"} {
  %0 = kiln.neg %a : tensor<1xf32>
  return %0 : tensor<1xf32>
}

func.func private @add1(%a: tensor<1xf32>, %b: tensor<1xf32>) -> tensor<1xf32>
    attributes {kiln.kernel = "fusion"} {
  %0 = kiln.add %a, %b : tensor<1xf32>
  return %0 : tensor<1xf32>
}

func.func private @mm(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32>
    attributes {kiln.kernel = "library"} {
  %0 = kiln.matmul %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// w - lr * g: the state `w` is read at the index the update is written.
// A result some call writes in place (@sgd_step below) says which operands it overwrites,
// for the kernel lowering (kiln.overwrites); a kernel never written in place says nothing.
// CHECK-LABEL: func.func private @sgd(
// CHECK-SAME:    -> (tensor<4x4xf32> {kiln.overwrites = array<i64: 0>})
// CHECK-LABEL: func.func private @center(
// CHECK-NOT:     kiln.overwrites
// CHECK:         return
func.func private @sgd(%w: tensor<4x4xf32>, %g: tensor<4x4xf32>, %lr: tensor<f32>)
    -> tensor<4x4xf32> attributes {kiln.kernel = "fusion"} {
  %b = kiln.broadcast_in_dim %lr, dims = [], shape = [4, 4] : tensor<f32>
  %step = kiln.mul %g, %b : tensor<4x4xf32>
  %0 = kiln.sub %w, %step : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// s - max(s) per row: every element of `s` is read before any is written.
func.func private @center(%s: tensor<4x4xf32>) -> tensor<4x4xf32>
    attributes {kiln.kernel = "fusion"} {
  %m = kiln.reduce max %s, dims = [1] keep_dims : tensor<4x4xf32>
  %b = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [4, 4] : tensor<4x1xf32>
  %0 = kiln.sub %s, %b : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// v' = 0.9 v + g, w' = w - 0.1 v': two results of one shape, each state read at the
// index written.
func.func private @momentum(%w: tensor<4x4xf32>, %v: tensor<4x4xf32>, %g: tensor<4x4xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>) attributes {kiln.kernel = "fusion"} {
  %mu = kiln.constant dense<0.9> : tensor<4x4xf32>
  %lr = kiln.constant dense<0.1> : tensor<4x4xf32>
  %a = kiln.mul %v, %mu : tensor<4x4xf32>
  %nv = kiln.add %a, %g : tensor<4x4xf32>
  %s = kiln.mul %nv, %lr : tensor<4x4xf32>
  %nw = kiln.sub %w, %s : tensor<4x4xf32>
  return %nw, %nv : tensor<4x4xf32>, tensor<4x4xf32>
}

// sum over rows of v (broadcast) * g: element i of the result reads all of `v`.
func.func private @mix(%v: tensor<4xf32>, %g: tensor<4x4xf32>) -> tensor<4xf32>
    attributes {kiln.kernel = "fusion"} {
  %b = kiln.broadcast_in_dim %v, dims = [0], shape = [4, 4] : tensor<4xf32>
  %p = kiln.mul %b, %g : tensor<4x4xf32>
  %0 = kiln.reduce sum %p, dims = [0] : tensor<4x4xf32>
  return %0 : tensor<4xf32>
}

// s + transpose(s * 0.5): `s`'s only direct reader is elementwise, but the value it gives
// is read transposed, so element (i, j) of the result needs element (j, i) of `s`.
func.func private @add_own_transpose(%s: tensor<4x4xf32>) -> tensor<4x4xf32>
    attributes {kiln.kernel = "fusion"} {
  %c = kiln.constant dense<0.5> : tensor<4x4xf32>
  %h = kiln.mul %s, %c : tensor<4x4xf32>
  %t = kiln.transpose %h, permutation = [1, 0] : tensor<4x4xf32>
  %0 = kiln.add %s, %t : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// %a is dead once %b is computed, so %c takes its bytes; %d is an output.
// CHECK-LABEL: func.func @reuse(
// CHECK-SAME:    attributes {kiln.arena_bytes = 128 : i64, kiln.naive_bytes = 192 : i64}
// CHECK:         call @neg(%{{.*}}) {kiln.offsets = array<i64: 0>}
// CHECK-NEXT:    call @neg(%{{.*}}) {kiln.offsets = array<i64: 64>}
// CHECK-NEXT:    call @neg(%{{.*}}) {kiln.offsets = array<i64: 0>}
// CHECK-NEXT:    call @neg(%{{.*}}) {kiln.offsets = array<i64: -1>}
// expected-remark@+1 {{arena: 128 bytes for 3 buffers (192 without reuse), 0 state updates in place}}
func.func @reuse(%x: tensor<4x4xf32> {kiln.input = 0 : i64})
    -> (tensor<4x4xf32> {kiln.output = 0 : i64}) {
  %a = call @neg(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = call @neg(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = call @neg(%b) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %d = call @neg(%c) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %d : tensor<4x4xf32>
}

// A collective is a host step of its own between the kernels that produce and read its
// operand and result: the result gets an arena buffer of its own.
// CHECK-LABEL: func.func @all_reduce(
// CHECK-SAME:    attributes {kiln.arena_bytes = 128 : i64, kiln.naive_bytes = 128 : i64}
// CHECK:         call @neg(%{{.*}}) {kiln.offsets = array<i64: 0>}
// CHECK-NEXT:    kiln.all_reduce mean %{{.*}} {kiln.offsets = array<i64: 64>}
// CHECK-NEXT:    call @neg(%{{.*}}) {kiln.offsets = array<i64: -1>}
// expected-remark@+1 {{arena: 128 bytes for 2 buffers (128 without reuse), 0 state updates in place}}
func.func @all_reduce(%x: tensor<4x4xf32> {kiln.input = 0 : i64})
    -> (tensor<4x4xf32> {kiln.output = 0 : i64}) {
  %a = call @neg(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = kiln.all_reduce mean %a : tensor<4x4xf32>
  %c = call @neg(%b) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}

// A started all-reduce's buffer, which the other ranks write until the wait, lives until
// that wait: %c cannot take its bytes, though it takes %a's.
// CHECK-LABEL: func.func @all_reduce_start(
// CHECK-SAME:    attributes {kiln.arena_bytes = 192 : i64, kiln.naive_bytes = 320 : i64}
// CHECK:         call @neg(%{{.*}}) {kiln.offsets = array<i64: 0>}
// CHECK-NEXT:    kiln.all_reduce_start sum %{{.*}} {kiln.offsets = array<i64: 64>}
// CHECK-NEXT:    call @neg(%{{.*}}) {kiln.offsets = array<i64: 0>}
// CHECK-NEXT:    call @neg(%{{.*}}) {kiln.offsets = array<i64: 128>}
// CHECK-NEXT:    kiln.wait %{{.*}} {kiln.offsets = array<i64: 0>}
// CHECK-NEXT:    call @add(%{{.*}}, %{{.*}}) {kiln.offsets = array<i64: -1>}
// expected-remark@+1 {{arena: 192 bytes for 5 buffers (320 without reuse), 0 state updates in place}}
func.func @all_reduce_start(%x: tensor<4x4xf32> {kiln.input = 0 : i64})
    -> (tensor<4x4xf32> {kiln.output = 0 : i64}) {
  %a = call @neg(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = kiln.all_reduce_start sum %a : tensor<4x4xf32>
  %b = call @neg(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = call @neg(%b) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %w = kiln.wait %s : tensor<4x4xf32>
  %d = call @add(%w, %c) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %d : tensor<4x4xf32>
}

// Two 4-byte tensors live together: the second starts at the next aligned offset.
// CHECK-LABEL: func.func @alignment(
// CHECK-SAME:    attributes {kiln.arena_bytes = 128 : i64, kiln.naive_bytes = 128 : i64}
// CHECK:         call @neg1(%{{.*}}) {kiln.offsets = array<i64: 0>}
// CHECK-NEXT:    call @neg1(%{{.*}}) {kiln.offsets = array<i64: 64>}
// ALIGN16-LABEL: func.func @alignment(
// ALIGN16-SAME:    attributes {kiln.arena_bytes = 32 : i64, kiln.naive_bytes = 32 : i64}
// ALIGN16:         call @neg1(%{{.*}}) {kiln.offsets = array<i64: 0>}
// ALIGN16-NEXT:    call @neg1(%{{.*}}) {kiln.offsets = array<i64: 16>}
// expected-remark@+1 {{arena: 128 bytes for 2 buffers (128 without reuse), 0 state updates in place}}
func.func @alignment(%x: tensor<1xf32> {kiln.input = 0 : i64})
    -> (tensor<1xf32> {kiln.output = 0 : i64}) {
  %a = call @neg1(%x) : (tensor<1xf32>) -> tensor<1xf32>
  %b = call @neg1(%x) : (tensor<1xf32>) -> tensor<1xf32>
  %c = call @add1(%a, %b) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  return %c : tensor<1xf32>
}

// %r views %a, so %a lives until %r's last use and %b cannot take its bytes. The reshape
// has no buffer and no offsets.
// CHECK-LABEL: func.func @reshape_alias(
// CHECK-SAME:    attributes {kiln.arena_bytes = 192 : i64, kiln.naive_bytes = 192 : i64}
// CHECK:         call @neg(%{{.*}}) {kiln.offsets = array<i64: 0>}
// CHECK-NEXT:    kiln.reshape %{{.*}}, shape = [16] : tensor<4x4xf32>
// CHECK-NEXT:    kiln.reshape %{{.*}}, shape = [4, 4] : tensor<16xf32>
// CHECK-NEXT:    call @neg(%{{.*}}) {kiln.offsets = array<i64: 64>}
// CHECK-NEXT:    call @neg(%{{.*}}) {kiln.offsets = array<i64: 128>}
// CHECK-NEXT:    call @add(%{{.*}}, %{{.*}}) {kiln.offsets = array<i64: -1>}
// expected-remark@+1 {{arena: 192 bytes for 3 buffers (192 without reuse), 0 state updates in place}}
func.func @reshape_alias(%x: tensor<4x4xf32> {kiln.input = 0 : i64})
    -> (tensor<4x4xf32> {kiln.output = 0 : i64}) {
  %a = call @neg(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %flat = kiln.reshape %a, shape = [16] : tensor<4x4xf32>
  %r = kiln.reshape %flat, shape = [4, 4] : tensor<16xf32>
  %b = call @neg(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = call @neg(%b) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %d = call @add(%r, %c) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %d : tensor<4x4xf32>
}

// A transpose read only by library kernels is a view too (the runtime hands the library a
// strided view of its operand): no buffer, no offsets, and its operand lives until the
// last library call reads it, so %b cannot take %a's bytes (%u can, after). A transpose a
// fusion reads is computed into a buffer of its own.
// CHECK-LABEL: func.func @transpose_view(
// CHECK-SAME:    attributes {kiln.arena_bytes = 192 : i64, kiln.naive_bytes = 256 : i64}
// CHECK:         %[[A:.*]] = call @neg(%{{.*}}) {kiln.offsets = array<i64: 0>}
// CHECK-NEXT:    %[[T:.*]] = kiln.transpose %[[A]], permutation = [1, 0] : tensor<4x4xf32>
// CHECK-NEXT:    %[[B:.*]] = call @neg(%{{.*}}) {kiln.offsets = array<i64: 64>}
// CHECK-NEXT:    %[[M:.*]] = call @mm(%[[B]], %[[T]]) {kiln.offsets = array<i64: 128>}
// CHECK-NEXT:    %[[U:.*]] = kiln.transpose %[[M]], permutation = [1, 0] {kiln.offsets = array<i64: 0>}
// CHECK-NEXT:    call @add(%[[U]], %[[M]]) {kiln.offsets = array<i64: -1>}
// expected-remark@+1 {{arena: 192 bytes for 4 buffers (256 without reuse), 0 state updates in place}}
func.func @transpose_view(%x: tensor<4x4xf32> {kiln.input = 0 : i64})
    -> (tensor<4x4xf32> {kiln.output = 0 : i64}) {
  %a = call @neg(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = kiln.transpose %a, permutation = [1, 0] : tensor<4x4xf32>
  %b = call @neg(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = call @mm(%b, %t) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %u = kiln.transpose %m, permutation = [1, 0] : tensor<4x4xf32>
  %d = call @add(%u, %m) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %d : tensor<4x4xf32>
}

// What is handed to the caller is not in the arena, also when returned through a reshape
// or as a gradient; constants and arguments never are. Host ops get offsets like calls.
// CHECK-LABEL: func.func @outputs(
// CHECK-SAME:    attributes {kiln.arena_bytes = 64 : i64, kiln.naive_bytes = 64 : i64}
// CHECK:         kiln.constant dense<1.000000e+00> : tensor<4x4xf32>
// CHECK-NEXT:    kiln.transpose %{{.*}} {kiln.offsets = array<i64: 0>}
// CHECK-NEXT:    call @add(%{{.*}}, %{{.*}}) {kiln.offsets = array<i64: -1>}
// CHECK-NEXT:    call @neg(%{{.*}}) {kiln.offsets = array<i64: -1>}
// CHECK-NEXT:    kiln.reshape
// CHECK-NEXT:    kiln.exp %{{.*}} {kiln.offsets = array<i64: -1>}
// expected-remark@+1 {{arena: 64 bytes for 1 buffers (64 without reuse), 0 state updates in place}}
func.func @outputs(%x: tensor<4x4xf32> {kiln.input = 0 : i64})
    -> (tensor<4x4xf32> {kiln.output = 0 : i64}, tensor<16xf32> {kiln.output = 1 : i64},
        tensor<4x4xf32> {kiln.grad_update = "w.grad"}, tensor<4x4xf32> {kiln.output = 2 : i64},
        tensor<4x4xf32> {kiln.output = 3 : i64}) {
  %c = kiln.constant dense<1.0> : tensor<4x4xf32>
  %t = kiln.transpose %x, permutation = [1, 0] : tensor<4x4xf32>
  %a = call @add(%t, %c) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = call @neg(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %flat = kiln.reshape %b, shape = [16] : tensor<4x4xf32>
  %e = kiln.exp %x : tensor<4x4xf32>
  return %a, %flat, %e, %c, %x
      : tensor<4x4xf32>, tensor<16xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// An SGD step writes the new weights over the old ones: `w` is read earlier (forward) and
// by the step itself, at the index it writes. A loose elementwise update of `b` is in place
// too.
// CHECK-LABEL: func.func @sgd_step(
// CHECK-SAME:    attributes {kiln.arena_bytes = 0 : i64, kiln.naive_bytes = 0 : i64}
// CHECK:         call @mm(%{{.*}}, %{{.*}}) {kiln.offsets = array<i64: -1>}
// CHECK-NEXT:    call @sgd(%{{.*}}, %{{.*}}, %{{.*}}) {kiln.offsets = array<i64: -2>}
// CHECK-NEXT:    kiln.sub %{{.*}}, %{{.*}} {kiln.offsets = array<i64: -2>}
// expected-remark@+1 {{arena: 0 bytes for 0 buffers (0 without reuse), 2 state updates in place}}
func.func @sgd_step(%x: tensor<4x4xf32> {kiln.input = 0 : i64},
                    %g: tensor<4x4xf32> {kiln.input = 1 : i64},
                    %w: tensor<4x4xf32> {kiln.state = "w"},
                    %b: tensor<4x4xf32> {kiln.state = "b"})
    -> (tensor<4x4xf32> {kiln.output = 0 : i64}, tensor<4x4xf32> {kiln.state_update = "w"},
        tensor<4x4xf32> {kiln.state_update = "b"}) {
  %lr = kiln.constant dense<0.1> : tensor<f32>
  %y = call @mm(%x, %w) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %nw = call @sgd(%w, %g, %lr) : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %nb = kiln.sub %b, %g : tensor<4x4xf32>
  return %y, %nw, %nb : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// Updates that must not overwrite their state: `w` is read after its update is computed;
// @center reads `s` through a reduction and @mix reads `v` through a broadcast (each
// element of the result needs many elements of the state); a matmul reads every element
// of `m`. Each gets an arena buffer (the runtime copies it into the state after the call)
// that lives until the return.
// CHECK-LABEL: func.func @not_in_place(
// CHECK-SAME:    attributes {kiln.arena_bytes = 256 : i64, kiln.naive_bytes = 256 : i64}
// CHECK:         call @sgd(%{{.*}}, %{{.*}}, %{{.*}}) {kiln.offsets = array<i64: 0>}
// CHECK-NEXT:    call @mm(%{{.*}}, %{{.*}}) {kiln.offsets = array<i64: -1>}
// CHECK-NEXT:    call @center(%{{.*}}) {kiln.offsets = array<i64: 64>}
// CHECK-NEXT:    call @mix(%{{.*}}, %{{.*}}) {kiln.offsets = array<i64: 128>}
// CHECK-NEXT:    call @mm(%{{.*}}, %{{.*}}) {kiln.offsets = array<i64: 192>}
// expected-remark@+1 {{arena: 256 bytes for 4 buffers (256 without reuse), 0 state updates in place}}
func.func @not_in_place(%x: tensor<4x4xf32> {kiln.input = 0 : i64},
                        %g: tensor<4x4xf32> {kiln.input = 1 : i64},
                        %w: tensor<4x4xf32> {kiln.state = "w"},
                        %s: tensor<4x4xf32> {kiln.state = "s"},
                        %v: tensor<4xf32> {kiln.state = "v"},
                        %m: tensor<4x4xf32> {kiln.state = "m"})
    -> (tensor<4x4xf32> {kiln.output = 0 : i64}, tensor<4x4xf32> {kiln.state_update = "w"},
        tensor<4x4xf32> {kiln.state_update = "s"}, tensor<4xf32> {kiln.state_update = "v"},
        tensor<4x4xf32> {kiln.state_update = "m"}) {
  %lr = kiln.constant dense<0.1> : tensor<f32>
  %nw = call @sgd(%w, %g, %lr) : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %y = call @mm(%x, %w) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %ns = call @center(%s) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %nv = call @mix(%v, %g) : (tensor<4xf32>, tensor<4x4xf32>) -> tensor<4xf32>
  %nm = call @mm(%m, %g) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y, %nw, %ns, %nv, %nm
      : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>
}

// A kernel that reads its state only through elementwise ops, but then reads what they
// give at other elements (a transpose of it), does not write over the state.
// CHECK-LABEL: func.func @derived_read_elsewhere(
// CHECK:         call @add_own_transpose(%{{.*}}) {kiln.offsets = array<i64: 0>}
// expected-remark@+1 {{arena: 64 bytes for 1 buffers (64 without reuse), 0 state updates in place}}
func.func @derived_read_elsewhere(%s: tensor<4x4xf32> {kiln.state = "s"})
    -> (tensor<4x4xf32> {kiln.state_update = "s"}) {
  %ns = call @add_own_transpose(%s) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %ns : tensor<4x4xf32>
}

// SGD with momentum in one kernel of two results, each read only at the index it writes:
// both are written over their states, unless several-results-in-place=false (HALIDE, which
// takes buffers not to alias), when each gets an arena buffer the runtime copies into its
// state after the call. A kernel of one result is in place either way.
// CHECK-LABEL: func.func @momentum_step(
// CHECK:         call @momentum(%{{.*}}, %{{.*}}, %{{.*}}) {kiln.offsets = array<i64: -2, -2>}
// CHECK-NEXT:    call @sgd(%{{.*}}, %{{.*}}, %{{.*}}) {kiln.offsets = array<i64: -2>}
// APART-LABEL: func.func @momentum_step(
// APART-SAME:    kiln.arena_bytes = 128 : i64
// APART:         call @momentum(%{{.*}}, %{{.*}}, %{{.*}}) {kiln.offsets = array<i64: {{0, 64|64, 0}}>}
// APART-NEXT:    call @sgd(%{{.*}}, %{{.*}}, %{{.*}}) {kiln.offsets = array<i64: -2>}
// expected-remark@+1 {{arena: 0 bytes for 0 buffers (0 without reuse), 3 state updates in place}}
func.func @momentum_step(%g: tensor<4x4xf32> {kiln.input = 0 : i64},
                         %w: tensor<4x4xf32> {kiln.state = "w"},
                         %v: tensor<4x4xf32> {kiln.state = "v"},
                         %u: tensor<4x4xf32> {kiln.state = "u"})
    -> (tensor<4x4xf32> {kiln.state_update = "w"}, tensor<4x4xf32> {kiln.state_update = "v"},
        tensor<4x4xf32> {kiln.state_update = "u"}) {
  %lr = kiln.constant dense<0.1> : tensor<f32>
  %nw, %nv = call @momentum(%w, %v, %g)
      : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  %nu = call @sgd(%u, %g, %lr) : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  return %nw, %nv, %nu : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// A state read through a reshape after the update is computed is still a read of the state.
// CHECK-LABEL: func.func @state_view(
// CHECK:         call @sgd(%{{.*}}, %{{.*}}, %{{.*}}) {kiln.offsets = array<i64: 0>}
// expected-remark@+1 {{arena: 64 bytes for 1 buffers (64 without reuse), 0 state updates in place}}
func.func @state_view(%g: tensor<4x4xf32> {kiln.input = 0 : i64},
                      %w: tensor<4x4xf32> {kiln.state = "w"})
    -> (tensor<16xf32> {kiln.output = 0 : i64}, tensor<4x4xf32> {kiln.state_update = "w"}) {
  %lr = kiln.constant dense<0.1> : tensor<f32>
  %flat = kiln.reshape %w, shape = [16] : tensor<4x4xf32>
  %nw = call @sgd(%w, %g, %lr) : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %y = kiln.exp %flat : tensor<16xf32>
  return %y, %nw : tensor<16xf32>, tensor<4x4xf32>
}

// A function that still holds kernels to outline (as the MLP below, before the pipeline)
// is not planned; nor is one of several blocks.
// CHECK-LABEL: func.func @two_blocks(
// CHECK-NOT:     kiln.offsets
// CHECK:         return
// expected-remark@+1 {{not planned: a host schedule is one block}}
func.func @two_blocks(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = call @neg(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  cf.br ^next
^next:
  return %a : tensor<4x4xf32>
}

// A 2-layer MLP forward through the whole chain: the first layer's matmul result dies in
// the bias+relu kernel, so the second matmul's result takes its bytes.
// CHECK-LABEL: func.func @mlp(
// CHECK-NOT:     kiln.arena_bytes
// CHECK-NOT:     kiln.offsets
// CHECK:         return
// MLP-LABEL: func.func @mlp(
// MLP-SAME:    attributes {kiln.arena_bytes = 2048 : i64, kiln.naive_bytes = 2176 : i64}
// MLP:         call @mlp_kernel_0(%{{.*}}, %{{.*}}) {kiln.offsets = array<i64: 0>} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
// MLP-NEXT:    call @mlp_kernel_1(%{{.*}}, %{{.*}}) {kiln.offsets = array<i64: 1024>} : {{.*}} -> tensor<8x32xf32>
// MLP-NEXT:    call @mlp_kernel_2(%{{.*}}, %{{.*}}) {kiln.offsets = array<i64: 0>} : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
// MLP-NEXT:    call @mlp_kernel_3(%{{.*}}, %{{.*}}) {kiln.offsets = array<i64: -1>} : {{.*}} -> tensor<8x4xf32>
// MLP-NEXT:    return
// MLP:       func.func private @mlp_kernel_0({{.*}} attributes {kiln.kernel = "library"}
// MLP:       func.func private @mlp_kernel_1({{.*}} attributes {kiln.kernel = "fusion"
// MLP:       func.func private @mlp_kernel_2({{.*}} attributes {kiln.kernel = "library"}
// MLP:       func.func private @mlp_kernel_3({{.*}} attributes {kiln.kernel = "fusion"
// expected-remark@+1 {{not planned: 'kiln.matmul' is not outlined (run kiln-outline-kernels first)}}
func.func @mlp(%x: tensor<8x16xf32> {kiln.input = 0 : i64},
               %w1: tensor<16x32xf32> {kiln.state = "fc1.weight"},
               %b1: tensor<32xf32> {kiln.state = "fc1.bias"},
               %w2: tensor<32x4xf32> {kiln.state = "fc2.weight"},
               %b2: tensor<4xf32> {kiln.state = "fc2.bias"})
    -> (tensor<8x4xf32> {kiln.output = 0 : i64}) {
  %h = kiln.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x32xf32>
  %bb1 = kiln.broadcast_in_dim %b1, dims = [1], shape = [8, 32] : tensor<32xf32>
  %h1 = kiln.add %h, %bb1 : tensor<8x32xf32>
  %r = kiln.relu %h1 : tensor<8x32xf32>
  %o = kiln.matmul %r, %w2 : tensor<8x32xf32>, tensor<32x4xf32>
  %bb2 = kiln.broadcast_in_dim %b2, dims = [1], shape = [8, 4] : tensor<4xf32>
  %y = kiln.add %o, %bb2 : tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
