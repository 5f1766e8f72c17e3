// What a by-value trace of relu(x @ w + b) records: the tensor argument is an input, the
// captured w and b are state bound by reference, broadcasting is explicit, and each op
// carries the user's source line on demand.

// RUN: trace-examples affine | FileCheck %s
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:.*]]: tensor<2x4xf32> {kiln.input = 0 : i64}
// CHECK-SAME:    %[[W:.*]]: tensor<4x3xf32> {kiln.state = "state.0"}
// CHECK-SAME:    %[[B:.*]]: tensor<3xf32> {kiln.state = "state.1"}
// CHECK-SAME:    -> (tensor<2x3xf32> {kiln.output = 0 : i64})
// CHECK:         %[[MM:.*]] = kiln.matmul %[[X]], %[[W]]
// CHECK:         %[[BB:.*]] = kiln.broadcast_in_dim %[[B]], dims = [1], shape = [2, 3]
// CHECK:         %[[SUM:.*]] = kiln.add %[[MM]], %[[BB]]
// CHECK:         %[[Y:.*]] = kiln.relu %[[SUM]]
// CHECK:         return %[[Y]]
// CHECK-NOT:     TraceExamples.cpp

// RUN: trace-examples affine --locations | FileCheck %s --check-prefix=LOC
// LOC: kiln.matmul {{.*}} test/Trace/TraceExamples.cpp:[[LINE:[0-9]+]]:{{[0-9]+}}
// LOC: kiln.add {{.*}} test/Trace/TraceExamples.cpp:[[LINE]]:{{[0-9]+}}
// LOC: kiln.relu {{.*}} test/Trace/TraceExamples.cpp:[[LINE]]:{{[0-9]+}}

// capture_as_const: state becomes a constant of its value and no argument binds it.
// RUN: trace-examples captured | FileCheck %s --check-prefix=CONST
// CONST:     func.func @main(%[[X:.*]]: tensor<3x2xf32> {kiln.input = 0 : i64}) -> (tensor<3x2xf32> {kiln.output = 0 : i64})
// CONST-NOT: kiln.state
// CONST:     %[[W:.*]] = kiln.constant dense<5.000000e-01> : tensor<2x2xf32>
// CONST:     kiln.matmul %[[X]], %[[W]]
