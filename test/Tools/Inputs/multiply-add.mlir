func.func @multiply_add(%a: tensor<64xf32>, %b: tensor<64xf32>,
                        %c: tensor<64xf32>) -> tensor<64xf32> {
  %init = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>,
                       affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
      iterator_types = ["parallel"]}
      ins(%a, %b, %c : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
      outs(%init : tensor<64xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %out: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %z : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
