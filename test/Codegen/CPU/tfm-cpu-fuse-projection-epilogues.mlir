// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,func.func(tfm-cpu-fuse-projection-epilogues),canonicalize,cse)' | FileCheck %s
// Run twice, the second pass reads the regions of the first and forms them again.
// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tfm-to-linalg,canonicalize,func.func(tfm-cpu-fuse-projection-epilogues,tfm-cpu-fuse-projection-epilogues),canonicalize,cse)' | FileCheck %s

// A gated FFN: gate, up and silu(gate) * up in one region, which yields
// the product alone (no [M, d_ff] gate or up tensor leaves it); down_proj,
// which no elementwise op reads, stays outside.
// CHECK-LABEL: func.func @swiglu
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x?x64xf32>, %[[G:[^:]+]]: tensor<256x64xf32>, %[[U:[^:]+]]: tensor<256x64xf32>, %[[D:[^:]+]]: tensor<64x256xf32>
// CHECK: %[[H:.+]] = tfm.fused_projections -> tensor<?x256xf32> {
// CHECK-NEXT: %[[UP:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %[[U]] :
// CHECK: %[[GATE:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %[[G]] :
// CHECK: %[[ACT:.+]] = linalg.generic {{.+}} ins(%[[GATE]], %[[UP]] :
// CHECK: math.exp
// CHECK: tfm.yield %[[ACT]] : tensor<?x256xf32>
// CHECK-NEXT: }
// CHECK-NOT: tfm.fused_projections
// CHECK: linalg.generic {{.+}} ins(%[[H]], %[[D]] :
func.func @swiglu(%x: tensor<?x?x64xf32>, %g: tensor<256x64xf32>, %u: tensor<256x64xf32>, %d: tensor<64x256xf32>) -> tensor<?x?x64xf32> {
  %y = tfm.ffn swiglu %x gate(%g) up(%u) down(%d) : (tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// A plain FFN: up with its bias and GELU in one region, down with its bias
// in another.
// CHECK-LABEL: func.func @gelu_bias
// CHECK: %[[H:.+]] = tfm.fused_projections -> tensor<?x256xf32> {
// CHECK-NEXT: %[[UP:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: %[[ACT:.+]] = linalg.generic {{.+}} ins(%[[UP]], %{{.+}} : tensor<?x256xf32>, tensor<256xf32>)
// CHECK: math.erf
// CHECK: tfm.yield %[[ACT]]
// CHECK: tfm.fused_projections -> tensor<?x64xf32> {
// CHECK-NEXT: %[[DOWN:.+]] = linalg.generic {{.+}} ins(%[[H]], %{{.+}} : tensor<?x256xf32>, tensor<64x256xf32>)
// CHECK: %[[OUT:.+]] = linalg.generic {{.+}} ins(%[[DOWN]], %{{.+}} : tensor<?x64xf32>, tensor<64xf32>)
// CHECK: tfm.yield %[[OUT]]
func.func @gelu_bias(%x: tensor<?x?x64xf32>, %u: tensor<256x64xf32>, %bu: tensor<256xf32>, %d: tensor<64x256xf32>, %bd: tensor<64xf32>) -> tensor<?x?x64xf32> {
  %y = tfm.ffn gelu %x up(%u, %bu) down(%d, %bd) : (tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// A bias, then a residual: the two elementwise ops become one epilogue of
// the projection, in its region.
// CHECK-LABEL: func.func @bias_then_residual
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x64xf32>, %[[W:[^:]+]]: tensor<64x64xf32>, %[[B:[^:]+]]: tensor<64xf32>, %[[R:[^:]+]]: tensor<?x64xf32>
// CHECK: %[[Y:.+]] = tfm.fused_projections -> tensor<?x64xf32> {
// CHECK-NEXT: %[[P:.+]] = linalg.generic {{.+}} ins(%[[X]], %[[W]] :
// CHECK: %[[S:.+]] = linalg.generic {{.+}} ins(%[[P]], %[[B]], %[[R]] :
// CHECK: arith.addf
// CHECK: arith.addf
// CHECK: tfm.yield %[[S]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[Y]]
func.func @bias_then_residual(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>, %r: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %p = tfm.linear %x, %w, %b : (tensor<?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%p, %r : tensor<?x64xf32>, tensor<?x64xf32>) outs(%r : tensor<?x64xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %sum = arith.addf %a, %c : f32
    linalg.yield %sum : f32
  } -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// A projection whose result is read by more than the elementwise op is
// stored whole: no region.
// CHECK-LABEL: func.func @two_readers
// CHECK-NOT: tfm.fused_projections
// CHECK: return
func.func @two_readers(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>, %r: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %p = tfm.linear %x, %w : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%p, %r : tensor<?x64xf32>, tensor<?x64xf32>) outs(%r : tensor<?x64xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %sum = arith.addf %a, %c : f32
    linalg.yield %sum : f32
  } -> tensor<?x64xf32>
  return %y, %p : tensor<?x64xf32>, tensor<?x64xf32>
}
