module {
  func.func @main(%arg0: tensor<5xi64> {kiln.input = 0 : i64, kiln.name = "x0"}, %arg1: tensor<5xi32> {kiln.input = 1 : i64, kiln.name = "x1"}) -> (tensor<5xi64> {kiln.name = "y0", kiln.output = 0 : i64}, tensor<5xi1> {kiln.name = "y1", kiln.output = 1 : i64}) {
    %0 = kiln.convert %arg1 : tensor<5xi32> to i64
    %1 = kiln.compare lt, %arg0, %0 : tensor<5xi64>
    %2 = kiln.constant dense<2> : tensor<i64>
    %3 = kiln.broadcast_in_dim %2, dims = [], shape = [5] : tensor<i64>
    %4 = kiln.mul %0, %3 : tensor<5xi64>
    %5 =                                                                                                              kiln.compare gt, %arg0, %0 : tensor<5xi64>
    %6 = kiln.select %5, %arg0, %4 : tensor<5xi1>, tensor<5xi64>
    return %6, %1 : tensor<5xi64>, tensor<5xi1>
  }
}
