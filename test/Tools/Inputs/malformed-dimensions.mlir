func.func @bad_dimensions(%x: tensor<3xf32>, %init: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %b = linalg.broadcast ins(%x : tensor<3xf32>) outs(%init : tensor<2x3xf32>) dimensions = [0 1]
  return %b : tensor<2x3xf32>
}
