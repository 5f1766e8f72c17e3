// RUN: kiln-opt %s --kiln-lower-host -split-input-file -verify-diagnostics

// kiln-lower-host fails, naming the op, where a planned host schedule (one with
// kiln.arena_bytes) has an op it cannot place: no memory plan, or a result planned off the
// arena that the function does not hand back.

func.func @unplanned(%x: tensor<4x4xf32> {kiln.input = 0 : i64})
    -> (tensor<4x4xf32> {kiln.output = 0 : i64}) attributes {kiln.arena_bytes = 0 : i64} {
  // expected-error@+1 {{'kiln.transpose' op has no memory plan (run kiln-plan-memory first)}}
  %t = kiln.transpose %x, permutation = [1, 0] : tensor<4x4xf32>
  return %t : tensor<4x4xf32>
}

// -----

// One offset per result: a plan of the wrong length is no plan.
func.func private @split(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
    attributes {kiln.kernel = "fusion"}

func.func @short_plan(%x: tensor<4x4xf32> {kiln.input = 0 : i64})
    -> (tensor<4x4xf32> {kiln.output = 0 : i64}, tensor<4x4xf32> {kiln.output = 1 : i64})
    attributes {kiln.arena_bytes = 0 : i64} {
  // expected-error@+1 {{'func.call' op has no memory plan (run kiln-plan-memory first)}}
  %a:2 = call @split(%x) {kiln.offsets = array<i64: -1>}
      : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  return %a#0, %a#1 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// %e is planned into the caller's memory (-1) but is not returned.
func.func @stray_output(%x: tensor<4x4xf32> {kiln.input = 0 : i64})
    -> (tensor<4x4xf32> {kiln.output = 0 : i64}) attributes {kiln.arena_bytes = 0 : i64} {
  %t = kiln.transpose %x, permutation = [1, 0] {kiln.offsets = array<i64: -1>} : tensor<4x4xf32>
  // expected-error@+1 {{'kiln.exp' op result 0 is planned off the arena (-1) but is no result the function can write}}
  %e = kiln.exp %t {kiln.offsets = array<i64: -1>} : tensor<4x4xf32>
  return %t : tensor<4x4xf32>
}

// -----

// %t is planned in place (-2) but is returned as an output, not as a state update.
func.func @stray_update(%x: tensor<4x4xf32> {kiln.input = 0 : i64})
    -> (tensor<4x4xf32> {kiln.output = 0 : i64}) attributes {kiln.arena_bytes = 0 : i64} {
  // expected-error@+1 {{'kiln.transpose' op result 0 is planned off the arena (-2) but is no result the function can write}}
  %t = kiln.transpose %x, permutation = [1, 0] {kiln.offsets = array<i64: -2>} : tensor<4x4xf32>
  return %t : tensor<4x4xf32>
}

// -----

// A function kiln-plan-memory left unplanned (here: two blocks) is not dropped silently.
// expected-error@+1 {{'func.func' op is neither a kernel nor a planned host schedule}}
func.func @unplanned(%x: tensor<4xf32>) -> tensor<4xf32> {
  cf.br ^next
^next:
  return %x : tensor<4xf32>
}
