// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,tfm-expose-entry-points,func.func(tfm-fuse-norm-projection,tfm-cpu-tile-projections{prepack-weights=1}),tfm-cpu-prepare-weights)' -verify-diagnostics -o /dev/null

// What tfm-cpu-prepare-weights refuses (tfm-cpu-prepare-weights.mlir has
// what it builds).

// One name, two packings: v scaled by g in one entry point, plain in the
// other.
func.func @scaled(%x: tensor<?x64xf32> {tfm.name = "x"}, %g: tensor<64xf32> {tfm.name = "g"}, %v: tensor<64x64xf32> {tfm.name = "v"}) -> (tensor<?x64xf32> {tfm.name = "y"}) {
  %n = tfm.rms_norm %x, %g eps(1.0e-05) : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %y = tfm.linear %n, %v : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
// expected-error @below {{packed input 'v.packed' is made otherwise in an earlier entry point}}
func.func @plain(%x: tensor<?x64xf32> {tfm.name = "x"}, %v: tensor<64x64xf32> {tfm.name = "v"}) -> (tensor<?x64xf32> {tfm.name = "y"}) {
  %y = tfm.linear %x, %v : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// expected-error @below {{the module has a symbol 'prepare_weights' already, the name of the entry point that packs the weights}}
module {
  func.func @project(%x: tensor<?x64xf32> {tfm.name = "x"}, %v: tensor<64x64xf32> {tfm.name = "v"}) -> (tensor<?x64xf32> {tfm.name = "y"}) {
    %y = tfm.linear %x, %v : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
    return %y : tensor<?x64xf32>
  }
  func.func private @prepare_weights()
}
