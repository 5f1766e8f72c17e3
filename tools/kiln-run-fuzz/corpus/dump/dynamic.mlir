func.func @main(%x: tensor<?x2xf32> {kiln.input = 0 : i64}) -> (tensor<?x2xf32> {kiln.output = 0 : i64}) {
  %y = kiln.neg %x : tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}
