// RUN: kiln-opt %s --kiln-promote-accumulators -split-input-file | FileCheck %s

// kiln-promote-accumulators: a reduction loop that loads and stores its accumulator
// every iteration carries it as a value instead: one load before, one store after.

// CHECK-LABEL: func.func @row_sum(
// CHECK-SAME:      %[[X:.*]]: memref<4x8xf32>, %[[ACC:.*]]: memref<4xf64>
// CHECK:         scf.parallel (%[[I:.*]]) =
// CHECK:           %[[INIT:.*]] = memref.load %[[ACC]][%[[I]]] : memref<4xf64>
// CHECK:           %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[INIT]]) -> (f64) {
// CHECK-NOT:         memref.load %[[ACC]]
// CHECK:             %[[V:.*]] = memref.load %[[X]]
// CHECK:             %[[W:.*]] = arith.extf %[[V]] : f32 to f64
// CHECK:             %[[S:.*]] = arith.addf %[[A]], %[[W]] fastmath<reassoc> : f64
// CHECK-NOT:         memref.store
// CHECK:             scf.yield %[[S]] : f64
// CHECK:           memref.store %[[SUM]], %[[ACC]][%[[I]]] : memref<4xf64>
func.func @row_sum(%x: memref<4x8xf32>, %acc: memref<4xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      %w = arith.extf %v : f32 to f64
      %a = memref.load %acc[%i] : memref<4xf64>
      %s = arith.addf %a, %w fastmath<reassoc> : f64
      memref.store %s, %acc[%i] : memref<4xf64>
    }
    scf.reduce
  }
  return
}

// -----

// Nested reduction loops (two reduced dims): the accumulator leaves the inner loop,
// then the outer one.
// CHECK-LABEL: func.func @nested(
// CHECK-SAME:      %[[X:.*]]: memref<3x4x5xf32>, %[[ACC:.*]]: memref<4xf32>
// CHECK:         scf.parallel (%[[J:.*]]) =
// CHECK:           %[[INIT:.*]] = memref.load %[[ACC]][%[[J]]]
// CHECK:           %[[OUTER:.*]] = scf.for {{.*}} iter_args(%[[A:.*]] = %[[INIT]]) -> (f32) {
// CHECK:             %[[INNER:.*]] = scf.for {{.*}} iter_args(%[[B:.*]] = %[[A]]) -> (f32) {
// CHECK:               arith.maximumf %[[B]], %{{.*}} : f32
// CHECK:             scf.yield %[[INNER]] : f32
// CHECK:           memref.store %[[OUTER]], %[[ACC]][%[[J]]]
func.func @nested(%x: memref<3x4x5xf32>, %acc: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
    scf.for %i = %c0 to %c3 step %c1 {
      scf.for %k = %c0 to %c5 step %c1 {
        %v = memref.load %x[%i, %j, %k] : memref<3x4x5xf32>
        %a = memref.load %acc[%j] : memref<4xf32>
        %m = arith.maximumf %a, %v : f32
        memref.store %m, %acc[%j] : memref<4xf32>
      }
    }
    scf.reduce
  }
  return
}

// -----

// A local buffer is a buffer of its own, seen through views too.
// CHECK-LABEL: func.func @local_accumulator(
// CHECK:         %[[ALLOC:.*]] = memref.alloc() : memref<2x4xf64>
// CHECK:         %[[VIEW:.*]] = memref.subview %[[ALLOC]]
// CHECK:         memref.load %[[VIEW]]
// CHECK:         scf.for {{.*}} iter_args
// CHECK:         memref.store %{{.*}}, %[[VIEW]]
func.func @local_accumulator(%x: memref<8xf64>) -> memref<2x4xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %alloc = memref.alloc() : memref<2x4xf64>
  %view = memref.subview %alloc[0, 0] [1, 4] [1, 1] : memref<2x4xf64> to memref<4xf64, strided<[1]>>
  scf.for %j = %c0 to %c8 step %c1 {
    %v = memref.load %x[%j] : memref<8xf64>
    %a = memref.load %view[%c0] : memref<4xf64, strided<[1]>>
    %s = arith.addf %a, %v : f64
    memref.store %s, %view[%c0] : memref<4xf64, strided<[1]>>
  }
  return %alloc : memref<2x4xf64>
}

// -----

// Left alone: the loop also reads the accumulator's buffer at another index, the
// accumulator's index changes with the loop, or the loop calls a function.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     iter_args
// CHECK:         return
func.func private @opaque()
func.func @kept(%x: memref<8xf32>, %acc: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %j = %c0 to %c8 step %c1 {
    %v = memref.load %acc[%j] : memref<8xf32>
    %a = memref.load %acc[%c0] : memref<8xf32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %acc[%c0] : memref<8xf32>
  }
  scf.for %j = %c0 to %c8 step %c1 {
    %v = memref.load %x[%j] : memref<8xf32>
    %a = memref.load %acc[%j] : memref<8xf32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %acc[%j] : memref<8xf32>
  }
  scf.for %j = %c0 to %c8 step %c1 {
    %v = memref.load %x[%j] : memref<8xf32>
    %a = memref.load %acc[%c0] : memref<8xf32>
    %s = arith.addf %a, %v : f32
    func.call @opaque() : () -> ()
    memref.store %s, %acc[%c0] : memref<8xf32>
  }
  return
}
