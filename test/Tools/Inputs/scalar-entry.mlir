func.func @scalar(%n: index) -> tensor<4xf32> {
  %t = tensor.empty() : tensor<4xf32>
  return %t : tensor<4xf32>
}
