module {
  func.func @main(%arg0: tensor<5x4xf32> {kiln.input = 0 : i64, kiln.name = "x"}, %arg1: tensor<3xf32> {kiln.input = 1 : i64, kiln.name = "shift"}) -> (tensor<5x3xf32> {kiln.name = "logits", kiln.output = 0 : i64}, tensor<5x3xf32> {kiln.name = "probs", kiln.output = 1 : i64}) {
    %0 = kiln.constant dense_resource<constant_0> : tensor<8x3xf32>
    %1 = kiln.constant dense<[-1.16273785, -1.19483912, 0.194187388, -0.290706128, 0.509986103, 0.892692267, 0.259649068, 0.202749819]> : tensor<8xf32>
    %2 = kiln.constant dense_resource<constant_1> : tensor<4x8xf32>
    %3 = kiln.matmul %arg0, %2 : tensor<5x4xf32>, tensor<4x8xf32>
    %4 = kiln.broadcast_in_dim %1, dims = [1], shape = [5, 8] : tensor<8xf32>
    %5 = kiln.add %3, %4 : tensor<5x8xf32>
    %6 = kiln.relu %5 : tensor<5x8xf32>
    %7 = kiln.matmul %6, %0 : tensor<5x8xf32>, tensor<8x3xf32>
    %8 = kiln.broadcast_in_dim %arg1, dims = [1], shape = [5, 3] : tensor<3xf32>
    %9 = kiln.add %7, %8 : tensor<5x3xf32>
    %10 = kiln.reduce max %9, dims = [1] keep_dims : tensor<5x3xf32>
    %11 = kiln.broadcast_in_dim %10, dims = [0, 1], shape = [5, 3] : tensor<5x1xf32>
    %12 = kiln.sub %9, %11 : tensor<5x3xf32>
    %13 = kiln.exp %12 : tensor<5x3xf32>
    %14 = kiln.reduce sum %13, dims = [1] keep_dims : tensor<5x3xf32>
    %15 = kiln.constant dense<1.000000e+00> : tensor<f32>
    %16 = kiln.broadcast_in_dim %15, dims = [], shape = [5, 1] : tensor<f32>
    %17 = kiln.div %16, %14 : tensor<5x1xf32>
    %18 = kiln.broadcast_in_dim %17, dims = [0, 1], shape = [5, 3] : tensor<5x1xf32>
    %19 = kiln.mul %13, %18 : tensor<5x3xf32>
    return %9, %19 : tensor<5x3xf32>, tensor<5x3xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      constant_0: "0x04000000DB49713EEEAB09BFF2B0D33E39A9EBBF54AC6F3F4E6E683EAF8F303E1A5BB5BE573415BCC1736F3F0948F33F065A12BFB5579CBF8CE342BF29A29DBE32C8A7BF2D6323401226143FDCAE853F72CDF13E951B393FC70B1EBFF2A1523F3444803D",
      constant_1: "0x0400000034BB7D3FADB66CBFA11B1EBFACD1F6BE4E531DBE6C2A393E98EC543F9A2D4A3E8DDA97BF7AD22240810F8ABE5C06FB3F966C18BF9D02B43E741966BF490CE43EE29C02BEC0B9B0BE7046993EFA3030BE983B9F3FDC61603E4EE10CBFCF86343FAF60943E44C744BF14CB183FBBBD063EE87F613F8E0B773EC45646BF457E733E"
    }
  }
#-}
