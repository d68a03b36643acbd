// RUN: tfm-opt %s --tfm-expose-entry-points --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[X:[^:]+]]: memref<?x64xf32>, %[[W:[^:]+]]: memref<64xf32>, %[[OUT:[^:]+]]: memref<?x64xf32>) -> i32
// CHECK-SAME: attributes {llvm.emit_c_interface, tfm.input_count = 2 : i64}
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

// -----

// A result that updates an input (a KV cache) is written back into that
// input's buffer, which is read writable; it gets no output buffer.
// CHECK-LABEL: func.func @append_row
// CHECK-SAME: (%[[CACHE:[^:]+]]: memref<?x4xf32> {tfm.name = "cache"}, %[[ROW:[^:]+]]: memref<1x4xf32> {tfm.name = "row"}, %[[OUT:[^:]+]]: memref<1x4xf32> {tfm.name = "doubled"}) -> i32
// CHECK: %[[C:.+]] = bufferization.to_tensor %[[CACHE]] restrict writable
// CHECK: %[[R:.+]] = bufferization.to_tensor %[[ROW]] restrict :
// CHECK: %[[NEW:.+]] = tensor.insert_slice %[[R]] into %[[C]]
// CHECK: bufferization.materialize_in_destination %[[NEW]] in restrict writable %[[CACHE]]
// CHECK: bufferization.materialize_in_destination %{{.+}} in restrict writable %[[OUT]]
func.func @append_row(%cache: tensor<?x4xf32> {tfm.name = "cache"},
                      %row: tensor<1x4xf32> {tfm.name = "row"})
    -> (tensor<?x4xf32> {tfm.name = "cache", tfm.updates = 0 : i64},
        tensor<1x4xf32> {tfm.name = "doubled"}) {
  %c0 = arith.constant 0 : index
  %new = tensor.insert_slice %row into %cache[%c0, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
  %d = arith.addf %row, %row : tensor<1x4xf32>
  return %new, %d : tensor<?x4xf32>, tensor<1x4xf32>
}

// -----

// expected-error @+1 {{result 0 updates input 1, which must exist, have the result's type and be updated by no other result}}
func.func @updates_other_type(%cache: tensor<?x4xf32>, %row: tensor<1x4xf32>)
    -> (tensor<?x4xf32> {tfm.updates = 1 : i64}) {
  return %cache : tensor<?x4xf32>
}
