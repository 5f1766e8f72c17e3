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

// -----

// Each wait, with the slices and reshapes that scatter its bucket back into gradients,
// sinks to just before the first op that reads them: bucket 0's update runs while bucket 1
// is still in flight. The later wait moves first, so the earlier one need not pass it.
// CHECK-LABEL: func.func @waits_sink(
// CHECK-NEXT:    %[[S0:.*]] = kiln.all_reduce_start mean %{{.*}} : tensor<8xf32>
// CHECK-NEXT:    %[[S1:.*]] = kiln.all_reduce_start mean %{{.*}} : tensor<4xf32>
// CHECK-NEXT:    %[[W0:.*]] = kiln.wait %[[S0]] : tensor<8xf32>
// CHECK-NEXT:    %[[A:.*]] = kiln.slice %[[W0]], start = [0], limit = [4], stride = [1] : tensor<8xf32>
// CHECK-NEXT:    %[[RA:.*]] = kiln.reshape %[[A]], shape = [2, 2] : tensor<4xf32>
// CHECK-NEXT:    %[[UA:.*]] = kiln.sub %{{.*}}, %[[RA]] : tensor<2x2xf32>
// CHECK-NEXT:    %[[B:.*]] = kiln.slice %[[W0]], start = [4], limit = [8], stride = [1] : tensor<8xf32>
// CHECK-NEXT:    %[[UB:.*]] = kiln.sub %{{.*}}, %[[B]] : tensor<4xf32>
// CHECK-NEXT:    %[[W1:.*]] = kiln.wait %[[S1]] : tensor<4xf32>
// CHECK-NEXT:    %[[RC:.*]] = kiln.reshape %[[W1]], shape = [2, 2] : tensor<4xf32>
// CHECK-NEXT:    %[[UC:.*]] = kiln.sub %{{.*}}, %[[RC]] : tensor<2x2xf32>
// CHECK-NEXT:    return %[[UA]], %[[UB]], %[[UC]]
func.func @waits_sink(%g0: tensor<8xf32>, %g1: tensor<4xf32>, %pa: tensor<2x2xf32>, %pb: tensor<4xf32>, %pc: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<4xf32>, tensor<2x2xf32>) {
  %s0 = kiln.all_reduce_start mean %g0 : tensor<8xf32>
  %s1 = kiln.all_reduce_start mean %g1 : tensor<4xf32>
  %w0 = kiln.wait %s0 : tensor<8xf32>
  %a = kiln.slice %w0, start = [0], limit = [4], stride = [1] : tensor<8xf32>
  %ra = kiln.reshape %a, shape = [2, 2] : tensor<4xf32>
  %b = kiln.slice %w0, start = [4], limit = [8], stride = [1] : tensor<8xf32>
  %w1 = kiln.wait %s1 : tensor<4xf32>
  %rc = kiln.reshape %w1, shape = [2, 2] : tensor<4xf32>
  %ua = kiln.sub %pa, %ra : tensor<2x2xf32>
  %ub = kiln.sub %pb, %b : tensor<4xf32>
  %uc = kiln.sub %pc, %rc : tensor<2x2xf32>
  return %ua, %ub, %uc : tensor<2x2xf32>, tensor<4xf32>, tensor<2x2xf32>
}

// -----

// A wait never passes a blocking all_reduce or a callback: the program's order of effects
// stays. The scattering reshape still sinks to its reader.
// CHECK-LABEL: func.func @wait_keeps_effects(
// CHECK-NEXT:    %[[S0:.*]] = kiln.all_reduce_start sum %{{.*}} : tensor<4xf32>
// CHECK-NEXT:    %[[S1:.*]] = kiln.all_reduce_start sum %{{.*}} : tensor<4xf32>
// CHECK-NEXT:    %[[W0:.*]] = kiln.wait %[[S0]] : tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = kiln.all_reduce max %{{.*}} : tensor<4xf32>
// CHECK-NEXT:    %[[W1:.*]] = kiln.wait %[[S1]] : tensor<4xf32>
// CHECK-NEXT:    %[[CB:.*]] = kiln.callback
// CHECK-NEXT:    %[[R:.*]] = kiln.reshape %[[W0]], shape = [2, 2] : tensor<4xf32>
// CHECK-NEXT:    %[[N0:.*]] = kiln.neg %[[R]] : tensor<2x2xf32>
// CHECK-NEXT:    %[[N1:.*]] = kiln.neg %[[W1]] : tensor<4xf32>
func.func @wait_keeps_effects(%x: tensor<4xf32>) -> (tensor<2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %s0 = kiln.all_reduce_start sum %x : tensor<4xf32>
  %s1 = kiln.all_reduce_start sum %x : tensor<4xf32>
  %w0 = kiln.wait %s0 : tensor<4xf32>
  %r = kiln.reshape %w0, shape = [2, 2] : tensor<4xf32>
  %b = kiln.all_reduce max %x : tensor<4xf32>
  %w1 = kiln.wait %s1 : tensor<4xf32>
  %cb = kiln.callback(%x) callee = 0 : (tensor<4xf32>) -> tensor<4xf32>
  %n0 = kiln.neg %r : tensor<2x2xf32>
  %n1 = kiln.neg %w1 : tensor<4xf32>
  return %n0, %n1, %b, %cb : tensor<2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// The optimizer reads the buckets in the reverse of their start order: the first wait
// passes the start and the second wait (read by another op) down to its own reader.
// CHECK-LABEL: func.func @waits_in_reading_order(
// CHECK-NEXT:    %[[S0:.*]] = kiln.all_reduce_start sum %{{.*}} : tensor<4xf32>
// CHECK-NEXT:    %[[N:.*]] = kiln.neg
// CHECK-NEXT:    %[[S1:.*]] = kiln.all_reduce_start sum %[[N]] : tensor<4xf32>
// CHECK-NEXT:    %[[W1:.*]] = kiln.wait %[[S1]] : tensor<4xf32>
// CHECK-NEXT:    %[[E1:.*]] = kiln.exp %[[W1]] : tensor<4xf32>
// CHECK-NEXT:    %[[W0:.*]] = kiln.wait %[[S0]] : tensor<4xf32>
// CHECK-NEXT:    %[[E0:.*]] = kiln.exp %[[W0]] : tensor<4xf32>
func.func @waits_in_reading_order(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s0 = kiln.all_reduce_start sum %x : tensor<4xf32>
  %w0 = kiln.wait %s0 : tensor<4xf32>
  %n = kiln.neg %x : tensor<4xf32>
  %s1 = kiln.all_reduce_start sum %n : tensor<4xf32>
  %w1 = kiln.wait %s1 : tensor<4xf32>
  %e1 = kiln.exp %w1 : tensor<4xf32>
  %e0 = kiln.exp %w0 : tensor<4xf32>
  return %e0, %e1 : tensor<4xf32>, tensor<4xf32>
}
