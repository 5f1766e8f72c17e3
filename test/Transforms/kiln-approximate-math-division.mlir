// RUN: kiln-opt %s --kiln-approximate-math="approximate-division=true" | FileCheck %s
// RUN: kiln-opt %s --kiln-approximate-math | FileCheck %s --check-prefix=IEEE

// With approximate-division (the GPU pipeline's setting), the divisions tanh's and erf's
// rational approximations bring carry afn, which NVPTX selects as div.approx.f32; the
// user's own division keeps IEEE semantics. Without it (the CPU's), no division is marked.

// CHECK-LABEL: func.func @rational(
// CHECK-SAME:      %[[X:.*]]: f32, %[[Y:.*]]: f32
// CHECK:         %[[USERS:.*]] = arith.divf %[[X]], %[[Y]] : f32
// CHECK-NOT:     kiln.users_division
// CHECK:         arith.divf {{.*}} fastmath<afn> : f32
// CHECK-NOT:     math.tanh
// CHECK:         arith.divf {{.*}} fastmath<afn> : f32
// CHECK-NOT:     math.erf
// CHECK:         return %[[USERS]]
// IEEE-LABEL: func.func @rational(
// IEEE-NOT:      fastmath
// IEEE:          return
func.func @rational(%x: f32, %y: f32) -> (f32, f32, f32) {
  %q = arith.divf %x, %y : f32
  %t = math.tanh %q : f32
  %e = math.erf %q : f32
  return %q, %t, %e : f32, f32, f32
}

// f64 divisions are not marked (the approximations are f32 only, and a user's f64
// division in the same function stays IEEE).
// CHECK-LABEL: func.func @double(
// CHECK-NOT:     fastmath
// CHECK:         return
func.func @double(%x: f64, %y: f64) -> f64 {
  %q = arith.divf %x, %y : f64
  return %q : f64
}
