func.func @attention(%q: tensor<1x8x256x128xf32>, %k: tensor<1x2x256x128xf32>,
                     %v: tensor<1x2x256x128xf32>) -> tensor<1x8x256x128xf32> {
  %o = tfm.attention %q, %k, %v {mask = #tfm.mask<causal>}
      : (tensor<1x8x256x128xf32>, tensor<1x2x256x128xf32>, tensor<1x2x256x128xf32>)
      -> tensor<1x8x256x128xf32>
  return %o : tensor<1x8x256x128xf32>
}
