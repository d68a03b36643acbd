// A function with intermediate buffers: the norm's row statistics and the
// first norm's output.
func.func @norm_twice(%x: tensor<?x300xf32>, %w: tensor<300xf32>) -> tensor<?x300xf32> {
  %y = tfm.rms_norm %x, %w eps(1.0e-06) : (tensor<?x300xf32>, tensor<300xf32>) -> tensor<?x300xf32>
  %z = tfm.rms_norm %y, %w eps(1.0e-06) : (tensor<?x300xf32>, tensor<300xf32>) -> tensor<?x300xf32>
  return %z : tensor<?x300xf32>
}
