// RUN: kiln-opt %s --kiln-approximate-math | FileCheck %s

// kiln-approximate-math: f32 exp, log, tanh, erf (and their relatives) become upstream's
// polynomial approximations, arith ops and math.fma only, so the loops around them
// vectorize. Other element types, powf, sin and cos (libm keeps them accurate on the
// whole range) stay.

// CHECK-LABEL: func.func @transcendentals(
// CHECK-NOT:     math.exp
// CHECK-NOT:     math.log
// CHECK-NOT:     math.tanh
// CHECK-NOT:     math.erf
// CHECK:         math.fma
// CHECK-NOT:     math.exp
// CHECK-NOT:     math.log
// CHECK-NOT:     math.tanh
// CHECK-NOT:     math.erf
// CHECK:         return
func.func @transcendentals(%x: f32) -> (f32, f32, f32, f32, f32, f32) {
  %exp = math.exp %x : f32
  %log = math.log %x : f32
  %tanh = math.tanh %x : f32
  %erf = math.erf %x : f32
  %log1p = math.log1p %x : f32
  %expm1 = math.expm1 %x : f32
  return %exp, %log, %tanh, %erf, %log1p, %expm1 : f32, f32, f32, f32, f32, f32
}

// log and log2 read the exponent from the bits, so subnormal inputs are first scaled by
// 2^24 into the normal range and 24 ln 2 (for log2: 24) is subtracted from the result.
// CHECK-LABEL: func.func @subnormal_log(
// CHECK-SAME:      %[[X:.*]]: f32
// CHECK-DAG:     %[[MIN:.*]] = arith.constant 1.17549435E-38 : f32
// CHECK-DAG:     %[[SCALE:.*]] = arith.constant 0x4B800000 : f32
// CHECK-DAG:     %[[SHIFT:.*]] = arith.constant 16.6355324 : f32
// CHECK:         %[[TINY:.*]] = arith.cmpf olt, %[[X]], %[[MIN]] : f32
// CHECK:         %[[SCALED:.*]] = arith.mulf %[[X]], %[[SCALE]] : f32
// CHECK:         %[[IN:.*]] = arith.select %[[TINY]], %[[SCALED]], %[[X]] : f32
// CHECK-NOT:     math.log
// CHECK:         %[[FIXED:.*]] = arith.subf %[[LOG:.*]], %[[SHIFT]] : f32
// CHECK:         %[[R:.*]] = arith.select %[[TINY]], %[[FIXED]], %[[LOG]] : f32
// CHECK:         return %[[R]]
func.func @subnormal_log(%x: f32) -> f32 {
  %log = math.log %x : f32
  return %log : f32
}

// Vectors of f32 are approximated lane by lane.
// CHECK-LABEL: func.func @vector(
// CHECK-NOT:     math.exp
// CHECK:         math.fma {{.*}} : vector<8xf32>
// CHECK-NOT:     math.exp
// CHECK:         return
func.func @vector(%x: vector<8xf32>) -> vector<8xf32> {
  %exp = math.exp %x : vector<8xf32>
  return %exp : vector<8xf32>
}

// The exp inside a scalar loop body (what convert-linalg-to-loops makes) is rewritten
// where it stands.
// CHECK-LABEL: func.func @in_loop(
// CHECK:         scf.for
// CHECK-NOT:       math.tanh
// CHECK:           memref.store
func.func @in_loop(%a: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  scf.for %i = %c0 to %c1024 step %c1 {
    %v = memref.load %a[%i] : memref<1024xf32>
    %t = math.tanh %v : f32
    memref.store %t, %a[%i] : memref<1024xf32>
  }
  return
}

// f64, powf, sin and cos are left to libm; sqrt and floor have LLVM intrinsics.
// CHECK-LABEL: func.func @kept(
// CHECK:         math.exp %{{.*}} : f64
// CHECK:         math.powf %{{.*}}, %{{.*}} : f32
// CHECK:         math.sin %{{.*}} : f32
// CHECK:         math.cos %{{.*}} : f32
// CHECK:         math.sqrt %{{.*}} : f32
// CHECK:         math.floor %{{.*}} : f32
func.func @kept(%d: f64, %x: f32, %y: f32) -> (f64, f32, f32, f32, f32, f32) {
  %exp = math.exp %d : f64
  %pow = math.powf %x, %y : f32
  %sin = math.sin %x : f32
  %cos = math.cos %x : f32
  %sqrt = math.sqrt %x : f32
  %floor = math.floor %x : f32
  return %exp, %pow, %sin, %cos, %sqrt, %floor : f64, f32, f32, f32, f32, f32
}
