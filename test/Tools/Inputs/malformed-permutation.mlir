// linalg.transpose and linalg.broadcast with a list LLVM 22's custom parser
// would dereference as a null attribute (found by tfm-mlir-fuzzer).
func.func @bad_permutation(%x: tensor<2x3xf32>, %init: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %t = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%init : tensor<3x2xf32>) permutation = [1, +]
  return %t : tensor<3x2xf32>
}
