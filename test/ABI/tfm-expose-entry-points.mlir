// RUN: tfm-opt %s --tfm-expose-entry-points --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[X:[^:]+]]: memref<?x64xf32>, %[[W:[^:]+]]: memref<64xf32>, %[[OUT:[^:]+]]: memref<?x64xf32>) -> i32
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK-DAG: %[[XT:.+]] = bufferization.to_tensor %[[X]] restrict : memref<?x64xf32> to tensor<?x64xf32>
// CHECK-DAG: %[[WT:.+]] = bufferization.to_tensor %[[W]] restrict : memref<64xf32> to tensor<64xf32>
// CHECK: %[[Y:.+]] = tfm.rms_norm %[[XT]], %[[WT]]
// CHECK: bufferization.materialize_in_destination %[[Y]] in restrict writable %[[OUT]] : (tensor<?x64xf32>, memref<?x64xf32>) -> ()
// CHECK-NEXT: %[[OK:.+]] = arith.constant 0 : i32
// CHECK-NEXT: return %[[OK]] : i32
func.func @block(%x: tensor<?x64xf32>, %w: tensor<64xf32>) -> tensor<?x64xf32> {
  %y = tfm.rms_norm %x, %w eps(1.0e-06) : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// Private helpers keep their tensor signature.
// CHECK-LABEL: func.func private @helper
// CHECK-SAME: (%{{.+}}: tensor<4xf32>) -> tensor<4xf32>
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Two results: two output buffers, in order, keeping the results' names.
// CHECK-LABEL: func.func @two_results
// CHECK-SAME: (%[[A:[^:]+]]: memref<4xf32>, %[[OUT0:[^:]+]]: memref<4xf32> {tfm.name = "first"}, %[[OUT1:[^:]+]]: memref<4xf32> {tfm.name = "second"}) -> i32
// CHECK: %[[AT:.+]] = bufferization.to_tensor %[[A]]
// CHECK: bufferization.materialize_in_destination %[[AT]] in restrict writable %[[OUT0]]
// CHECK: bufferization.materialize_in_destination %[[AT]] in restrict writable %[[OUT1]]
func.func @two_results(%a: tensor<4xf32>)
    -> (tensor<4xf32> {tfm.name = "first"}, tensor<4xf32> {tfm.name = "second"}) {
  return %a, %a : tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{entry point argument of type 'index' is not a ranked tensor}}
func.func @scalar_argument(%n: index) -> tensor<4xf32> {
  %t = tensor.empty() : tensor<4xf32>
  return %t : tensor<4xf32>
}
