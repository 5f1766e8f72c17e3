// RUN: kiln-opt %s --kiln-outline-kernels | FileCheck %s
// RUN: kiln-opt %s --kiln-outline-kernels | kiln-opt --kiln-outline-kernels | FileCheck %s
// RUN: kiln-opt %s --kiln-outline-kernels --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=LOC
// RUN: kiln-opt %s --kiln-fuse --kiln-outline-kernels | FileCheck %s --check-prefix=FUSE

// kiln-outline-kernels: every kiln.fusion and library op (matmul, addmm, conv2d, pool2d) becomes a
// private kernel function called from its host, which keeps everything else (the host
// schedule). Kernels follow their host, numbered per host in block order. The second RUN
// line checks that outlining an outlined module changes nothing.

// A fusion's body becomes the kernel's body; host ops around it stay where they are.
// CHECK-LABEL: func.func @fusion(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32> {kiln.input = 0 : i64}
// CHECK:         %[[C:.*]] = kiln.constant dense<2.000000e+00> : tensor<4x3xf32>
// CHECK-NEXT:    %[[T:.*]] = kiln.transpose %[[X]], permutation = [1, 0]
// CHECK-NEXT:    %[[F:.*]] = call @fusion_kernel_0(%[[X]], %[[C]]) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    return %[[F]], %[[T]]
// CHECK-LABEL: func.func private @fusion_kernel_0(
// CHECK-SAME:    %[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-SAME:    attributes {kiln.kernel = "fusion", kiln_codegen.max_elements = 12 : i64}
// CHECK-NEXT:    %[[M:.*]] = kiln.mul %[[A]], %[[B]] : tensor<4x3xf32>
// CHECK-NEXT:    %[[E:.*]] = kiln.exp %[[M]] : tensor<4x3xf32>
// CHECK-NEXT:    return %[[E]] : tensor<4x3xf32>
// CHECK-NEXT:  }
func.func @fusion(%x: tensor<4x3xf32> {kiln.input = 0 : i64})
    -> (tensor<4x3xf32> {kiln.output = 0 : i64}, tensor<3x4xf32> {kiln.output = 1 : i64}) {
  %c = kiln.constant dense<2.0> : tensor<4x3xf32>
  %t = kiln.transpose %x, permutation = [1, 0] : tensor<4x3xf32>
  %f = kiln.fusion(%x, %c) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32> {
  ^bb0(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>):
    %0 = kiln.mul %a, %b : tensor<4x3xf32>
    %1 = kiln.exp %0 : tensor<4x3xf32>
    kiln.yield %1 : tensor<4x3xf32>
  }
  return %f, %t : tensor<4x3xf32>, tensor<3x4xf32>
}

// A library op is a kernel of its own, with its attributes; an elementwise op left unfused
// stays in the host.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:    %[[A:.*]]: tensor<4x3xf32> {kiln.input = 0 : i64}, %[[W:.*]]: tensor<5x3xf32> {kiln.state = "w"}
// CHECK:         %[[MM:.*]] = call @matmul_kernel_0(%[[A]], %[[W]]) : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x5xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.relu %[[MM]] : tensor<4x5xf32>
// CHECK-NEXT:    return %[[R]]
// CHECK-LABEL: func.func private @matmul_kernel_0(
// CHECK-SAME:    %[[KA:.*]]: tensor<4x3xf32>, %[[KW:.*]]: tensor<5x3xf32>) -> tensor<4x5xf32>
// CHECK-SAME:    attributes {kiln.kernel = "library"}
// CHECK-NEXT:    %[[P:.*]] = kiln.matmul %[[KA]], %[[KW]] transpose_b : tensor<4x3xf32>, tensor<5x3xf32>
// CHECK-NEXT:    return %[[P]] : tensor<4x5xf32>
// CHECK-NEXT:  }
func.func @matmul(%a: tensor<4x3xf32> {kiln.input = 0 : i64}, %w: tensor<5x3xf32> {kiln.state = "w"})
    -> (tensor<4x5xf32> {kiln.output = 0 : i64}) {
  %mm = kiln.matmul %a, %w transpose_b : tensor<4x3xf32>, tensor<5x3xf32>
  %r = kiln.relu %mm : tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// kiln.addmm (a product with its bias and relu epilogues) is a library kernel too.
// CHECK-LABEL: func.func @addmm(
// CHECK:         %[[Y:.*]] = call @addmm_kernel_0(
// CHECK-NEXT:    return %[[Y]]
// CHECK-LABEL: func.func private @addmm_kernel_0(
// CHECK-SAME:    attributes {kiln.kernel = "library"}
// CHECK-NEXT:    kiln.addmm %{{.*}}, %{{.*}}, %{{.*}} transpose_b relu : tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>
// CHECK-NEXT:    return
func.func @addmm(%a: tensor<4x3xf32> {kiln.input = 0 : i64}, %w: tensor<5x3xf32> {kiln.state = "w"},
                 %b: tensor<5xf32> {kiln.state = "b"}) -> (tensor<4x5xf32> {kiln.output = 0 : i64}) {
  %y = kiln.addmm %a, %w, %b transpose_b relu : tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>
  return %y : tensor<4x5xf32>
}

// Every result of a multi-result fusion is a result of the call.
// CHECK-LABEL: func.func @multi_result(
// CHECK:         %[[F:.*]]:2 = call @multi_result_kernel_0(%{{.*}}) : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4xf32>)
// CHECK-NEXT:    %[[RS:.*]] = kiln.reshape %[[F]]#1, shape = [2, 2]
// CHECK-NEXT:    return %[[F]]#0, %[[RS]]
// CHECK-LABEL: func.func private @multi_result_kernel_0(
// CHECK-SAME:    -> (tensor<4x3xf32>, tensor<4xf32>) attributes {kiln.kernel = "fusion", kiln_codegen.max_elements = 12 : i64}
// CHECK:         %[[E:.*]] = kiln.exp
// CHECK-NEXT:    %[[S:.*]] = kiln.reduce sum %[[E]], dims = [1]
// CHECK-NEXT:    return %[[E]], %[[S]] : tensor<4x3xf32>, tensor<4xf32>
func.func @multi_result(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<2x2xf32>) {
  %f:2 = kiln.fusion(%x) : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4x3xf32>):
    %0 = kiln.exp %a : tensor<4x3xf32>
    %1 = kiln.reduce sum %0, dims = [1] : tensor<4x3xf32>
    kiln.yield %0, %1 : tensor<4x3xf32>, tensor<4xf32>
  }
  %rs = kiln.reshape %f#1, shape = [2, 2] : tensor<4xf32>
  return %f#0, %rs : tensor<4x3xf32>, tensor<2x2xf32>
}

// A fusion kernel records the most elements any of its tensors holds, values inside it
// included (the JIT compiles small kernels without optimization); one with a dim known
// only at run time records nothing.
// CHECK-LABEL: func.func private @sizes_kernel_0(
// CHECK-SAME:    attributes {kiln.kernel = "fusion", kiln_codegen.max_elements = 24 : i64}
// CHECK-LABEL: func.func private @sizes_kernel_1(
// CHECK-SAME:    attributes {kiln.kernel = "fusion"} {
func.func @sizes(%x: tensor<4xf32>, %y: tensor<?x4xf32>) -> (tensor<4xf32>, tensor<?x4xf32>) {
  %0 = kiln.fusion(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %b = kiln.broadcast_in_dim %a, dims = [0], shape = [4, 6] : tensor<4xf32>
    %s = kiln.reduce sum %b, dims = [1] : tensor<4x6xf32>
    kiln.yield %s : tensor<4xf32>
  }
  %1 = kiln.fusion(%y) : (tensor<?x4xf32>) -> tensor<?x4xf32> {
  ^bb0(%a: tensor<?x4xf32>):
    %n = kiln.neg %a : tensor<?x4xf32>
    kiln.yield %n : tensor<?x4xf32>
  }
  return %0, %1 : tensor<4xf32>, tensor<?x4xf32>
}

// Kernels are numbered in block order: conv2d, the fusion, pool2d. Rng, gather, slice,
// concat and callbacks are host ops.
// CHECK-LABEL: func.func @cnn(
// CHECK-SAME:    %[[IMG:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[KEY:.*]]: tensor<2xi64>, %[[IDS:.*]]: tensor<2xi64>)
// CHECK:         %[[SAMPLE:.*]], %[[NEXT:.*]] = kiln.rng normal %[[KEY]]
// CHECK-NEXT:    %[[CV:.*]] = call @cnn_kernel_0(%[[IMG]], %[[W]])
// CHECK-NEXT:    %[[ACT:.*]] = call @cnn_kernel_1(%[[CV]], %[[SAMPLE]])
// CHECK-NEXT:    %[[PL:.*]] = call @cnn_kernel_2(%[[ACT]])
// CHECK-NEXT:    %[[CB:.*]] = kiln.callback(%[[PL]]) callee = 0
// CHECK-NEXT:    %[[G:.*]] = kiln.gather %[[CB]][%[[IDS]]], dim = 0
// CHECK-NEXT:    %[[SL:.*]] = kiln.slice %[[G]]
// CHECK-NEXT:    %[[CC:.*]] = kiln.concat(%[[SL]], %[[SL]]) dim = 0
// CHECK-NEXT:    return %[[CC]], %[[NEXT]]
// CHECK-LABEL: func.func private @cnn_kernel_0(
// CHECK-SAME:    attributes {kiln.kernel = "library"}
// CHECK-NEXT:    kiln.conv2d
// CHECK-LABEL: func.func private @cnn_kernel_1(
// CHECK-SAME:    attributes {kiln.kernel = "fusion", kiln_codegen.max_elements = 256 : i64}
// CHECK-NEXT:    kiln.add
// CHECK-NEXT:    kiln.relu
// CHECK-LABEL: func.func private @cnn_kernel_2(
// CHECK-SAME:    attributes {kiln.kernel = "library"}
// CHECK-NEXT:    kiln.pool2d max
func.func @cnn(%img: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %key: tensor<2xi64>,
               %ids: tensor<2xi64>) -> (tensor<2x4x4x4xf32>, tensor<2xi64>) {
  %sample, %next = kiln.rng normal %key, shape = [1, 4, 8, 8], dtype = f32,
      params = [0.0, 1.0] : tensor<2xi64>
  %cv = kiln.conv2d %img, %w, stride = [1, 1], padding = [1, 1, 1, 1], dilation = [1, 1],
      groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  %act = kiln.fusion(%cv, %sample)
      : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  ^bb0(%a: tensor<1x4x8x8xf32>, %n: tensor<1x4x8x8xf32>):
    %0 = kiln.add %a, %n : tensor<1x4x8x8xf32>
    %1 = kiln.relu %0 : tensor<1x4x8x8xf32>
    kiln.yield %1 : tensor<1x4x8x8xf32>
  }
  %pl = kiln.pool2d max %act, window = [2, 2], stride = [2, 2], padding = [0, 0, 0, 0]
      : tensor<1x4x8x8xf32>
  %cb = kiln.callback(%pl) callee = 0 : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %g = kiln.gather %cb[%ids], dim = 0 : tensor<1x4x4x4xf32>, tensor<2xi64>
  %sl = kiln.slice %g, start = [0, 0, 0, 0], limit = [1, 4, 4, 4], stride = [1, 1, 1, 1]
      : tensor<2x4x4x4xf32>
  %cc = kiln.concat(%sl, %sl) dim = 0 : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
  return %cc, %next : tensor<2x4x4x4xf32>, tensor<2xi64>
}

// Each function counts its own kernels, and its kernels follow it.
// CHECK-LABEL: func.func @first(
// CHECK:         call @first_kernel_0(
// CHECK-NEXT:    call @first_kernel_1(
// CHECK-LABEL: func.func private @first_kernel_0(
// CHECK-LABEL: func.func private @first_kernel_1(
// CHECK-LABEL: func.func @second(
// CHECK:         call @second_kernel_0(
// CHECK-LABEL: func.func private @second_kernel_0(
func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.fusion(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %n = kiln.neg %a : tensor<4xf32>
    kiln.yield %n : tensor<4xf32>
  }
  %1 = kiln.fusion(%0) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %s = kiln.sqrt %a : tensor<4xf32>
    kiln.yield %s : tensor<4xf32>
  }
  return %1 : tensor<4xf32>
}

func.func @second(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.fusion(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %t = kiln.tanh %a : tensor<4xf32>
    kiln.yield %t : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// Locations: the call and the kernel function take the fusion's (or library op's), the
// kernel's ops keep theirs.
// LOC-LABEL: func.func @locations(
// LOC:         call @locations_kernel_0({{.*}} loc("fusion")
// LOC-NEXT:    call @locations_kernel_1({{.*}} loc("matmul")
// LOC-LABEL: func.func private @locations_kernel_0(
// LOC-NEXT:    kiln.neg {{.*}} loc("neg")
// LOC-NEXT:    return {{.*}} loc("yield")
// LOC-NEXT:  } loc("fusion")
// LOC-LABEL: func.func private @locations_kernel_1(
// LOC-SAME:    loc("matmul")
// LOC-NEXT:    kiln.matmul {{.*}} loc("matmul")
// LOC-NEXT:    return {{.*}} loc("matmul")
// LOC-NEXT:  } loc("matmul")
func.func @locations(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = kiln.fusion(%x) : (tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%a: tensor<2x2xf32>):
    %n = kiln.neg %a : tensor<2x2xf32> loc("neg")
    kiln.yield %n : tensor<2x2xf32> loc("yield")
  } loc("fusion")
  %1 = kiln.matmul %0, %x : tensor<2x2xf32>, tensor<2x2xf32> loc("matmul")
  return %1 : tensor<2x2xf32>
}

// After kiln-fuse, a softmax followed by a matmul is a host schedule of calls only: one
// row-fusion kernel for the softmax (its kiln.row_dims goes with it), a library kernel
// for the matmul.
// FUSE-LABEL: func.func @softmax_matmul(
// FUSE-SAME:    %[[X:.*]]: tensor<4x8xf32> {kiln.input = 0 : i64}, %[[W:.*]]: tensor<8x3xf32> {kiln.input = 1 : i64}
// FUSE-SAME:    -> (tensor<4x3xf32> {kiln.output = 0 : i64})
// FUSE-NOT:     kiln.
// FUSE:         %[[P:.*]] = call @softmax_matmul_kernel_[[SOFTMAX:[0-9]+]](%[[X]]) : (tensor<4x8xf32>) -> tensor<4x8xf32>{{$}}
// FUSE-NEXT:    %[[Y:.*]] = call @softmax_matmul_kernel_[[MATMUL:[0-9]+]](%[[P]], %[[W]])
// FUSE-NOT:     kiln.
// FUSE:         return %[[Y]]
// FUSE:       func.func private @softmax_matmul_kernel_[[SOFTMAX]](
// FUSE-SAME:    attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64, kiln_codegen.max_elements = 32 : i64}
// FUSE:         kiln.reduce max
// FUSE:         kiln.exp
// FUSE:         kiln.reduce sum
// FUSE:         kiln.div
// FUSE:       func.func private @softmax_matmul_kernel_[[MATMUL]](
// FUSE-SAME:    attributes {kiln.kernel = "library"}
// FUSE-NEXT:    kiln.matmul
// FUSE-NEXT:    return
func.func @softmax_matmul(%x: tensor<4x8xf32> {kiln.input = 0 : i64},
                          %w: tensor<8x3xf32> {kiln.input = 1 : i64})
    -> (tensor<4x3xf32> {kiln.output = 0 : i64}) {
  %max = kiln.reduce max %x, dims = [1] : tensor<4x8xf32>
  %maxb = kiln.broadcast_in_dim %max, dims = [0], shape = [4, 8] : tensor<4xf32>
  %shifted = kiln.sub %x, %maxb : tensor<4x8xf32>
  %e = kiln.exp %shifted : tensor<4x8xf32>
  %sum = kiln.reduce sum %e, dims = [1] : tensor<4x8xf32>
  %sumb = kiln.broadcast_in_dim %sum, dims = [0], shape = [4, 8] : tensor<4xf32>
  %p = kiln.div %e, %sumb : tensor<4x8xf32>
  %y = kiln.matmul %p, %w : tensor<4x8xf32>, tensor<8x3xf32>
  return %y : tensor<4x3xf32>
}

// Fusion kernels of the same type and body are one kernel; a different constant or type
// keeps its own.
// CHECK-LABEL: func.func @repeated(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>
// CHECK-NEXT:    %[[A:.*]] = call @repeated_kernel_0(%[[X]])
// CHECK-NEXT:    %[[B:.*]] = call @repeated_kernel_0(%[[A]])
// CHECK-NEXT:    %[[C:.*]] = call @repeated_kernel_2(%[[B]])
// CHECK-NEXT:    return %[[C]]
// CHECK:       func.func private @repeated_kernel_0(
// CHECK-NOT:   func.func private @repeated_kernel_1(
// CHECK:       func.func private @repeated_kernel_2(
func.func @repeated(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = kiln.fusion(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%arg: tensor<4xf32>):
    %c = kiln.constant dense<2.0> : tensor<4xf32>
    %m = kiln.mul %arg, %c : tensor<4xf32>
    kiln.yield %m : tensor<4xf32>
  }
  %b = kiln.fusion(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%arg: tensor<4xf32>):
    %c = kiln.constant dense<2.0> : tensor<4xf32>
    %m = kiln.mul %arg, %c : tensor<4xf32>
    kiln.yield %m : tensor<4xf32>
  }
  %d = kiln.fusion(%b) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%arg: tensor<4xf32>):
    %c = kiln.constant dense<3.0> : tensor<4xf32>
    %m = kiln.mul %arg, %c : tensor<4xf32>
    kiln.yield %m : tensor<4xf32>
  }
  return %d : tensor<4xf32>
}
