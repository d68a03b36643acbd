// One projection with named inputs: tfm-run.test compiles it with
// --prepack-weights.
func.func @project(%x: tensor<?x64xf32> {tfm.name = "x"}, %w: tensor<96x64xf32> {tfm.name = "w"}) -> (tensor<?x96xf32> {tfm.name = "y"}) {
  %y = tfm.linear %x, %w : (tensor<?x64xf32>, tensor<96x64xf32>) -> tensor<?x96xf32>
  return %y : tensor<?x96xf32>
}
