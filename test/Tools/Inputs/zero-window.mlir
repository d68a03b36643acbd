func.func @zero_window(%q: tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32> {
  %o = tfm.attention %q, %q, %q {mask = #tfm.mask<sliding_window<0>>}
      : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  return %o : tensor<1x1x2x4xf32>
}
