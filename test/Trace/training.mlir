// A symbolic SGD training step (forward, backward, step): the first call is a warm-up
// that creates the momentum buffers; the kept recording takes them as state, updates
// parameters and buffers in place, and leaves fresh gradients in .grad. State is named
// after the module and optimizer paths given with name_module / name_optimizer.

// RUN: trace-examples train-step | FileCheck %s
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    tensor<2x4xf32> {kiln.input = 0 : i64}
// CHECK-SAME:    tensor<2xi64> {kiln.input = 1 : i64}
// CHECK-SAME:    tensor<3x4xf32> {kiln.state = "model.0.weight"}
// CHECK-SAME:    tensor<3xf32> {kiln.state = "model.0.bias"}
// CHECK-SAME:    tensor<3x4xf32> {kiln.state = "opt.momentum_buffer.model.0.weight"}
// CHECK-SAME:    tensor<3xf32> {kiln.state = "opt.momentum_buffer.model.0.bias"}
// CHECK-SAME:    -> (tensor<f32> {kiln.output = 0 : i64},
// CHECK-SAME:    {kiln.state_update = "model.0.weight"}
// CHECK-SAME:    {kiln.state_update = "model.0.bias"}
// CHECK-SAME:    {kiln.state_update = "opt.momentum_buffer.model.0.weight"}
// CHECK-SAME:    {kiln.state_update = "opt.momentum_buffer.model.0.bias"}
// CHECK-SAME:    {kiln.grad_update = "model.0.weight.grad"}
// CHECK-SAME:    {kiln.grad_update = "model.0.bias.grad"}
// The backward pass is ordinary ops: cross_entropy's pick of the target logit goes back
// through take's adjoint (a scatter-add, no one-hot matrix), and the weight gradient is a
// transposed matmul.
// CHECK:         %[[PICK:.*]] = kiln.gather %{{.*}}[%[[IDS:.*]]], dim = 0 : tensor<6xf32>, tensor<2xi64>
// CHECK-NOT:     kiln.compare
// CHECK:         kiln.scatter_add %{{.*}}[%[[IDS]]], dim = 0, size = 6 : tensor<2xf32>, tensor<2xi64>
// CHECK:         kiln.matmul {{.*}} transpose_a
// CHECK-NOT:     kiln.created
// CHECK:         return
