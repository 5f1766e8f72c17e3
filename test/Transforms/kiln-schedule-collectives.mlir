// RUN: kiln-opt %s --kiln-schedule-collectives --split-input-file | FileCheck %s

// kiln-schedule-collectives: each all_reduce_start moves up to just after its operand is
// computed, with the reshapes that flatten it; the waits stay. A bucket's start runs while
// the next bucket's gradient (and whatever else follows) is computed.
// CHECK-LABEL: func.func @buckets(
// CHECK-NEXT:    %[[G0:.*]] = kiln.neg %{{.*}} : tensor<2x2xf32>
// CHECK-NEXT:    %[[F0:.*]] = kiln.reshape %[[G0]], shape = [4] : tensor<2x2xf32>
// CHECK-NEXT:    %[[S0:.*]] = kiln.all_reduce_start mean %[[F0]] : tensor<4xf32>
// CHECK-NEXT:    %[[G1:.*]] = kiln.exp %[[G0]] : tensor<2x2xf32>
// CHECK-NEXT:    %[[F1:.*]] = kiln.reshape %[[G1]], shape = [4] : tensor<2x2xf32>
// CHECK-NEXT:    %[[S1:.*]] = kiln.all_reduce_start mean %[[F1]] : tensor<4xf32>
// CHECK-NEXT:    %[[M:.*]] = kiln.mul %[[G1]], %[[G1]] : tensor<2x2xf32>
// CHECK-NEXT:    %[[W0:.*]] = kiln.wait %[[S0]] : tensor<4xf32>
// CHECK-NEXT:    %[[W1:.*]] = kiln.wait %[[S1]] : tensor<4xf32>
func.func @buckets(%x: tensor<2x2xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>) {
  %g0 = kiln.neg %x : tensor<2x2xf32>
  %g1 = kiln.exp %g0 : tensor<2x2xf32>
  %m = kiln.mul %g1, %g1 : tensor<2x2xf32>
  %f0 = kiln.reshape %g0, shape = [4] : tensor<2x2xf32>
  %s0 = kiln.all_reduce_start mean %f0 : tensor<4xf32>
  %f1 = kiln.reshape %g1, shape = [4] : tensor<2x2xf32>
  %s1 = kiln.all_reduce_start mean %f1 : tensor<4xf32>
  %w0 = kiln.wait %s0 : tensor<4xf32>
  %w1 = kiln.wait %s1 : tensor<4xf32>
  return %w0, %w1, %m : tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>
}

// -----

// A start never passes an op that is not pure: the second start, whose operand is an
// argument, stops after the first start; the one after the callback stays after it.
// CHECK-LABEL: func.func @keeps_order(
// CHECK-NEXT:    %[[S0:.*]] = kiln.all_reduce_start sum %{{.*}} : tensor<4xf32>
// CHECK-NEXT:    %[[S1:.*]] = kiln.all_reduce_start max %{{.*}} : tensor<4xf32>
// CHECK-NEXT:    %[[E:.*]] = kiln.exp
// CHECK-NEXT:    %[[CB:.*]] = kiln.callback
// CHECK-NEXT:    %[[S2:.*]] = kiln.all_reduce_start sum %{{.*}} : tensor<4xf32>
// CHECK-NEXT:    %[[N:.*]] = kiln.neg
func.func @keeps_order(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %s0 = kiln.all_reduce_start sum %x : tensor<4xf32>
  %e = kiln.exp %x : tensor<4xf32>
  %s1 = kiln.all_reduce_start max %x : tensor<4xf32>
  %cb = kiln.callback(%e) callee = 0 : (tensor<4xf32>) -> tensor<4xf32>
  %n = kiln.neg %x : tensor<4xf32>
  %s2 = kiln.all_reduce_start sum %x : tensor<4xf32>
  %w0 = kiln.wait %s0 : tensor<4xf32>
  %w1 = kiln.wait %s1 : tensor<4xf32>
  %w2 = kiln.wait %s2 : tensor<4xf32>
  return %w0, %w1, %w2, %cb, %n : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
