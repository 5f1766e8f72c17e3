// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// One case per error of the host-ABI verifier (KilnHostAbi.cpp): a `kiln.` discardable
// attribute that is unknown, in the wrong place, of the wrong type or with a bad value.
// Attributes on a function, its arguments and results are reported on the function.

//===----------------------------------------------------------------------===//
// Unknown names
//===----------------------------------------------------------------------===//

// expected-error@+1 {{'func.func' op 'kiln.bogus' on argument #0 is not a kiln host-ABI attribute}}
func.func @unknown_argument(%x: tensor<4xf32> {kiln.bogus = 0 : i64}) {
  return
}

// -----

func.func @unknown_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.neg' op 'kiln.bogus' on this op is not a kiln host-ABI attribute}}
  %0 = kiln.neg %x {kiln.bogus} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// Arguments: kiln.input, kiln.state
//===----------------------------------------------------------------------===//

// -----

// expected-error@+1 {{'func.func' op 'kiln.input' on argument #0 must be an i64 index below 1, not "x"}}
func.func @input_type(%x: tensor<4xf32> {kiln.input = "x"}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.input' on argument #0 must be an i64 index below 1, not 0 : i32}}
func.func @input_i32(%x: tensor<4xf32> {kiln.input = 0 : i32}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.input' on argument #0 must be an i64 index below 1, not -1 : i64}}
func.func @input_negative(%x: tensor<4xf32> {kiln.input = -1 : i64}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.input' on argument #1 must be an i64 index below 2, not 2 : i64}}
func.func @input_too_large(%x: tensor<4xf32> {kiln.input = 0 : i64},
                           %y: tensor<4xf32> {kiln.input = 2 : i64}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.input' on argument #1 repeats the index of argument #0}}
func.func @input_twice(%x: tensor<4xf32> {kiln.input = 0 : i64},
                       %y: tensor<4xf32> {kiln.input = 0 : i64}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.input' goes on a function argument, not on result #0}}
func.func @input_on_result(%x: tensor<4xf32>) -> (tensor<4xf32> {kiln.input = 0 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.input' goes on a function argument, not on the function itself}}
func.func @input_on_function() attributes {kiln.input = 0 : i64} {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.state' on argument #0 must be a non-empty string, not 0 : i64}}
func.func @state_type(%w: tensor<4xf32> {kiln.state = 0 : i64}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.state' on argument #0 must be a non-empty string, not ""}}
func.func @state_empty(%w: tensor<4xf32> {kiln.state = ""}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.state' goes on a function argument, not on result #0}}
func.func @state_on_result(%x: tensor<4xf32>) -> (tensor<4xf32> {kiln.state = "w"}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op argument #0 is both 'kiln.input' and 'kiln.state'}}
func.func @input_and_state(%x: tensor<4xf32> {kiln.input = 0 : i64, kiln.state = "w"}) {
  return
}

//===----------------------------------------------------------------------===//
// Results: kiln.output, kiln.state_update, kiln.grad_update, kiln.created
//===----------------------------------------------------------------------===//

// -----

// expected-error@+1 {{'func.func' op 'kiln.output' on result #0 must be an i64 index below 1, not 1.000000e+00 : f32}}
func.func @output_type(%x: tensor<4xf32>) -> (tensor<4xf32> {kiln.output = 1.0 : f32}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.output' on result #0 must be an i64 index below 1, not -1 : i64}}
func.func @output_negative(%x: tensor<4xf32>) -> (tensor<4xf32> {kiln.output = -1 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.output' on result #1 repeats the index of result #0}}
func.func @output_twice(%x: tensor<4xf32>)
    -> (tensor<4xf32> {kiln.output = 0 : i64}, tensor<4xf32> {kiln.output = 0 : i64}) {
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.output' goes on a function result, not on argument #0}}
func.func @output_on_argument(%x: tensor<4xf32> {kiln.output = 0 : i64}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.state_update' on result #0 must be a non-empty string, not 0 : i64}}
func.func @state_update_type(%x: tensor<4xf32>) -> (tensor<4xf32> {kiln.state_update = 0 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.state_update' goes on a function result, not on argument #0}}
func.func @state_update_on_argument(%x: tensor<4xf32> {kiln.state_update = "w"}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.grad_update' on result #0 must be a non-empty string, not ""}}
func.func @grad_update_empty(%x: tensor<4xf32>) -> (tensor<4xf32> {kiln.grad_update = ""}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op result #0 is both 'kiln.grad_update' and 'kiln.output'}}
func.func @output_and_grad_update(%x: tensor<4xf32>)
    -> (tensor<4xf32> {kiln.output = 0 : i64, kiln.grad_update = "w.grad"}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.created' on result #0 must be an i64 index below 1, not "t"}}
func.func @created_type(%x: tensor<4xf32>) -> (tensor<4xf32> {kiln.created = "t"}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.created' goes on a function result, not on the function itself}}
func.func @created_on_function() attributes {kiln.created = 0 : i64} {
  return
}

//===----------------------------------------------------------------------===//
// Arguments and results: kiln.name
//===----------------------------------------------------------------------===//

// -----

// expected-error@+1 {{'func.func' op 'kiln.name' on argument #0 must be a string, not 0 : i64}}
func.func @name_type(%x: tensor<4xf32> {kiln.input = 0 : i64, kiln.name = 0 : i64}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.name' goes on a function argument or result, not on the function itself}}
func.func @name_on_function() attributes {kiln.name = "f"} {
  return
}

//===----------------------------------------------------------------------===//
// Functions: kiln.kernel, kiln.arena_bytes, kiln.naive_bytes; kiln.row_dims
//===----------------------------------------------------------------------===//

// -----

// expected-error@+1 {{'func.func' op 'kiln.kernel' on the function itself must be "fusion", "library" or "external", not "gpu"}}
func.func private @kernel_kind(tensor<4xf32>) -> tensor<4xf32> attributes {kiln.kernel = "gpu"}

// -----

// expected-error@+1 {{'func.func' op 'kiln.kernel' on the function itself must be "fusion", "library" or "external", not unit}}
func.func private @kernel_unit(tensor<4xf32>) -> tensor<4xf32> attributes {kiln.kernel}

// -----

func.func private @kernel(tensor<4xf32>) -> tensor<4xf32>

func.func @kernel_on_call(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'func.call' op 'kiln.kernel' goes on a function, not on this op}}
  %0 = call @kernel(%x) {kiln.kernel = "fusion"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.kernel' goes on a function, not on argument #0}}
func.func @kernel_on_argument(%x: tensor<4xf32> {kiln.kernel = "fusion"}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.arena_bytes' on the function itself must be a non-negative i64 byte count, not -64 : i64}}
func.func @arena_negative() attributes {kiln.arena_bytes = -64 : i64} {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.arena_bytes' on the function itself must be a non-negative i64 byte count, not "64"}}
func.func @arena_type() attributes {kiln.arena_bytes = "64"} {
  return
}

// -----

func.func @arena_on_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.neg' op 'kiln.arena_bytes' goes on a function, not on this op}}
  %0 = kiln.neg %x {kiln.arena_bytes = 0 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.naive_bytes' on the function itself must be a non-negative i64 byte count, not -1 : i64}}
func.func @naive_negative() attributes {kiln.naive_bytes = -1 : i64} {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.naive_bytes' goes on a function, not on result #0}}
func.func @naive_on_result(%x: tensor<4xf32>) -> (tensor<4xf32> {kiln.naive_bytes = 0 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.row_dims' on the function itself must be a positive i64 count of leading dims, not 0 : i64}}
func.func private @row_dims_zero(tensor<4x4xf32>) -> tensor<4x4xf32>
    attributes {kiln.kernel = "fusion", kiln.row_dims = 0 : i64}

// -----

func.func @row_dims_type(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{'kiln.fusion' op 'kiln.row_dims' on this op must be a positive i64 count of leading dims, not "1"}}
  %f = kiln.fusion(%x) {kiln.row_dims = "1"} : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    kiln.yield %a : tensor<4x4xf32>
  }
  return %f : tensor<4x4xf32>
}

// -----

func.func @row_dims_on_op(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{'kiln.exp' op 'kiln.row_dims' goes on a function or a kiln.fusion, not on this op}}
  %0 = kiln.exp %x {kiln.row_dims = 1 : i64} : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

//===----------------------------------------------------------------------===//
// Ops of a host schedule: kiln.offsets
//===----------------------------------------------------------------------===//

// -----

func.func @offsets_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.neg' op 'kiln.offsets' on this op must be an array<i64> of arena offsets, -1 or -2, not 0 : i64}}
  %0 = kiln.neg %x {kiln.offsets = 0 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @offsets_value(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.neg' op 'kiln.offsets' on this op must be an array<i64> of arena offsets, -1 or -2, not array<i64: -3>}}
  %0 = kiln.neg %x {kiln.offsets = array<i64: -3>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.offsets' goes on an op of a host schedule, not on the function itself}}
func.func @offsets_on_function() attributes {kiln.offsets = array<i64: 0>} {
  return
}

//===----------------------------------------------------------------------===//
// Results of a fusion kernel: kiln.overwrites
//===----------------------------------------------------------------------===//

// -----

// expected-error@+1 {{'func.func' op 'kiln.overwrites' on result #0 must be a non-empty array<i64> of argument indices below 1, not array<i64: 1>}}
func.func @overwrites_index(%x: tensor<4xf32>) -> (tensor<4xf32> {kiln.overwrites = array<i64: 1>}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op 'kiln.overwrites' goes on a function result, not on argument #0}}
func.func @overwrites_on_argument(%x: tensor<4xf32> {kiln.overwrites = array<i64: 0>}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
