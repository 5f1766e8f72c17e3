module {
  func.func @main(%arg0: tensor<2x4xf64> {kiln.input = 0 : i64, kiln.name = "x0"}) -> (tensor<2x4xf64> {kiln.name = "y0", kiln.output = 0 : i64}) {
    %0 = kiln.mul %arg0, %arg0 : tensor<2x4xf64>
    %1 = kiln.constant dense<1.000000e+00> : tensor<f64>
    %2 = kiln.broadcast_in_dim %1, dims = [], shape = [2, 4] : tensor<f64>
    %3 = kiln.add %0, %2 : tensor<2x4xf64>
    %4 = kiln.reduce mean %3, dims = [1] keep_dims : tensor<2x4xf64>
    %5 = kiln.broadcast_in_dim %4, dims = [0, 1], shape = [2, 4] : tensor<2x1xf64>
    %6 = kiln.sub %3, %5 : tensor<2x4xf64>
    %7 = kiln.mul %6, %6 : tensor<2x4xf64>
    %8 = kiln.reduce mean %7, dims = [1] keep_dims : tensor<2x4xf64>
    %9 = kiln.constant dense<1.000000e-05> : tensor<f64>
    %10 = kiln.broadcast_in_dim %9, dims = [], shape = [2, 1] : tensor<f64>
    %11 = kiln.add %8, %10 : tensor<2x1xf64>
    %12 = kiln.rsqrt %11 : tensor<2x1xf64>
    %13 = kiln.broadcast_in_dim %12, dims = [0, 1], shape = [2, 4] : tensor<2x1xf64>
    %14 = kiln.mul %6, %13 : tensor<2x4xf64>
    return %14 : tensor<2x4xf64>
  }
}
