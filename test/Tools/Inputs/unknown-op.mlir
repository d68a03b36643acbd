func.func @unknown_op(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = tfm.softmax %x : tensor<2xf32>
  return %y : tensor<2xf32>
}
