// In-place writes to state become kiln.state_update results, written back after each call;
// randomness threads the generator's key through state, so the mask advances every call.

// RUN: trace-examples state-update | FileCheck %s
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:.*]]: tensor<1xf32> {kiln.input = 0 : i64}
// CHECK-SAME:    %[[COUNT:.*]]: tensor<1xf32> {kiln.state = "state.0"}
// CHECK-SAME:    -> (tensor<1xf32> {kiln.output = 0 : i64}, tensor<1xf32> {kiln.state_update = "state.0"})
// CHECK:         %[[NEW:.*]] = kiln.add %[[COUNT]], %{{.*}}
// CHECK:         %[[Y:.*]] = kiln.add %[[X]], %[[NEW]]
// CHECK:         return %[[Y]], %[[NEW]]

// RUN: trace-examples dropout | FileCheck %s --check-prefix=RNG
// RNG:       func.func @main(%[[X:.*]]: tensor<4xf32> {kiln.input = 0 : i64}, %[[KEY:.*]]: tensor<2xi64> {kiln.state = "state.0"})
// RNG-SAME:    -> (tensor<4xf32> {kiln.output = 0 : i64}, tensor<2xi64> {kiln.state_update = "state.0"})
// RNG:       %[[MASK:.*]], %[[NEXT:.*]] = kiln.rng bernoulli %[[KEY]], shape = [4], dtype = f32, params = [5.000000e-01]
// RNG:       return %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<2xi64>
