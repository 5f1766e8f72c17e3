module {
  func.func @main(%arg0: tensor<3x4xf32> {kiln.input = 0 : i64, kiln.name = "x0"}, %arg1: tensor<4xf32> {kiln.input = 1 : i64, kiln.name = "x1"}) -> (tensor<3xf32> {kiln.name = "y0", kiln.output = 0 : i64}, tensor<1x4xf32> {kiln.name = "y1", kiln.output = 1 : i64}, tensor<f32> {kiln.name = "y2", kiln.output = 2 : i64}) {
    %0 = kiln.exp %arg0 : tensor<3x4xf32>
    %1 = kiln.broadcast_in_dim %arg1, dims = [1], shape = [3, 4] : tensor<4xf32>
    %2 = kiln.mul %0, %1 : tensor<3x4xf32>
    %3 = kiln.tanh %arg0 : tensor<3x4xf32>
    %4 = kiln.reduce mean %3, dims = [0, 1] : tensor<3x4xf32>
    %5 = kiln.reduce max %arg0, dims = [0] keep_dims : tensor<3x4xf32>
    %6 = kiln.reduce sum %2, dims = [1] : tensor<3x4xf32>
    return %6, %5, %4 : tensor<3xf32>, tensor<1x4xf32>, tensor<f32>
  }
}
