module {
  func.func @main(%arg0: tensor<3xi64> {kiln.input = 0 : i64, kiln.name = "x0"}, %arg1: tensor<4x2xf32> {kiln.input = 1 : i64, kiln.name = "x1"}) -> (tensor<5x4xf32> {kiln.name = "y0", kiln.output = 0 : i64}) {
    %0 = kiln.constant dense_resource<constant_0> : tensor<6x4xf32>
    %1 = kiln.gather %0[%arg0], dim = 0 : tensor<6x4xf32>, tensor<3xi64>
    %2 = kiln.transpose %arg1, permutation = [1, 0] : tensor<4x2xf32>
    %3 = kiln.concat(%1, %2) dim = 0 : tensor<3x4xf32>, tensor<2x4xf32>
    return %3 : tensor<5x4xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      constant_0: "0x040000005E5730BF7BA614BF32C9E53D7707843FDE50593E2D032EBE226B61BEFC8F0F3DE836803F06FA39BF4CB4513F96329A3F58DA37BD36371ABE53780DBF4EB9033F923978BF949A8EBED7A2753F04237CBFEB9231C01F95CFBBA21A4A3FD6E2313F"
    }
  }
#-}
