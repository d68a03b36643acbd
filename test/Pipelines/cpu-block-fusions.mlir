// RUN: tfm-compile %s --emit=mlir --stage=linalg -o - | tfm-opt --pass-pipeline='builtin.module(func.func(tfm-fuse-norm-projection,tfm-cpu-fuse-projection-epilogues,tfm-cpu-fuse-viewed-epilogues,tfm-cpu-fuse-sibling-projections,tfm-cpu-tile-projections),canonicalize,cse)' | FileCheck %s
// RUN: tfm-compile %s --emit=mlir --stage=linalg -o - | tfm-opt --pass-pipeline='builtin.module(func.func(tfm-fuse-norm-projection,tfm-cpu-fuse-projection-epilogues,tfm-cpu-fuse-viewed-epilogues,tfm-cpu-fuse-sibling-projections))' | FileCheck %s --check-prefix=REGIONS

// The fusions of the CPU pipeline's vector stage (docs/Stages.md) on a whole
// tfm.decoder_block, as the compiler lowers it: its linalg stage, then
// tfm-fuse-norm-projection, the tfm-cpu-fuse-* passes and
// tfm-cpu-tile-projections. Each projection
// group has a streamed form for fewer than 40 rows and a packed form; the
// checks follow the packed one (two threads' worth of 128-column blocks or
// more). test/Codegen holds each fusion on separate tfm ops.

// What the fusion passes decide, before the tiler carries it out: four
// tfm.fused_projections. q, k and v (each with its RMSNorm row scale; q's
// and k's rotated) yield the rotated q and k and v; o_proj with the
// residual; gate and up with silu(gate) * up; down_proj with the residual.
// REGIONS-LABEL: func.func @block(
// REGIONS-SAME: %[[X:[^:]+]]: tensor<1x?x256xf32>
// REGIONS: %[[QKV:.+]]:3 = tfm.fused_projections -> tensor<?x4x2x32xf32>, tensor<?x2x2x32xf32>, tensor<?x128xf32> {
// REGIONS-COUNT-2: tensor.expand_shape
// REGIONS: tfm.yield
// REGIONS: %[[ATTN:.+]] = tfm.fused_projections -> tensor<?x256xf32> {
// REGIONS: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]
// REGIONS: arith.addf
// REGIONS: tfm.yield
// REGIONS: %[[H:.+]] = tfm.fused_projections -> tensor<?x512xf32> {
// REGIONS: math.exp
// REGIONS: tfm.yield
// REGIONS: tfm.fused_projections -> tensor<?x256xf32> {
// REGIONS-NEXT: linalg.generic {{.+}} ins(%[[H]],
// REGIONS: linalg.generic {{.+}} ins(%[[ATTN]],
// REGIONS: tfm.yield
// REGIONS-NOT: tfm.fused_projections

// The attention norm's statistics, once per row: a sum of squares and its
// reciprocal square root. The normalized rows are never stored: the norm's
// weight scales the packed weights and the row scale the products.
// CHECK-LABEL: func.func @block(
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<1x?x256xf32>)
// CHECK: math.rsqrt
// q, k and v in one loop over their 256 + 128 + 128 columns (no weights
// concatenated), the norm folded in, RoPE in the epilogue of q and k.
// CHECK: scf.forall (%{{.*}}) in (4) shared_outs(%{{.*}}) -> (tensor<?x512xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<4x32x256xf32>, tensor<256xf32>) outs(%{{.*}} : tensor<4x256x32xf32>)
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<?x128xf32>, tensor<?xf32>) outs(%{{.*}} : tensor<?x128xf32>)
// CHECK: ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x2x1x32xf32>, tensor<?x2x1x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) outs(%{{.*}} : tensor<?x2x2x32xf32>)
// CHECK: tensor.parallel_insert_slice {{.*}} into tensor<?x512xf32>
// The attention, then o_proj with the residual in its epilogue.
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (2, %{{.*}})
// CHECK: scf.forall (%{{.*}}) in (2) shared_outs(%{{.*}}) -> (tensor<?x256xf32>)
// CHECK: arith.addf %in, %in
// CHECK: tensor.parallel_insert_slice {{.*}} into tensor<?x256xf32>
// The FFN norm's statistics; gate and up in one loop, the FFN norm's weight
// folded in, silu(gate) * up in the epilogue: the loop's result is the
// [M, d_ff] product alone, no gate or up tensor.
// CHECK: ins(%{{.*}} : tensor<1x?x256xf32>) outs(%{{.*}} : tensor<1x?xf32>)
// CHECK: math.rsqrt
// CHECK: scf.forall (%{{.*}}) in (4) shared_outs(%{{.*}}) -> (tensor<?x512xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg6 : tensor<4x32x256xf32>, tensor<256xf32>) outs(%{{.*}} : tensor<4x256x32xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg6 : tensor<4x32x256xf32>, tensor<256xf32>) outs(%{{.*}} : tensor<4x256x32xf32>)
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK: tensor.parallel_insert_slice {{.*}} into tensor<?x512xf32>
// down_proj with the residual in its epilogue.
// CHECK: scf.forall (%{{.*}}) in (2) shared_outs(%{{.*}}) -> (tensor<?x256xf32>)
// CHECK: arith.addf %in, %in
// CHECK: tensor.parallel_insert_slice {{.*}} into tensor<?x256xf32>
// CHECK: return
func.func @block(%x: tensor<1x?x256xf32>, %g: tensor<256xf32>, %wq: tensor<256x256xf32>,
                 %wk: tensor<128x256xf32>, %wv: tensor<128x256xf32>, %wo: tensor<256x256xf32>,
                 %g2: tensor<256xf32>, %wg: tensor<512x256xf32>, %wu: tensor<512x256xf32>,
                 %wd: tensor<256x512xf32>, %pos: tensor<?xi32>) -> tensor<1x?x256xf32> {
  %y = tfm.decoder_block pre rms_norm %x heads(4, 2) eps(1.0e-05)
      attn_norm(%g) q(%wq) k(%wk) v(%wv) o(%wo) ffn_norm(%g2)
      swiglu gate(%wg) up(%wu) down(%wd) positions(%pos)
      {mask = #tfm.mask<causal>, rope = #tfm.rope<theta = 1.0e+04, style = half>}
      : (tensor<1x?x256xf32>, tensor<256xf32>, tensor<256x256xf32>, tensor<128x256xf32>,
         tensor<128x256xf32>, tensor<256x256xf32>, tensor<256xf32>, tensor<512x256xf32>,
         tensor<512x256xf32>, tensor<256x512xf32>, tensor<?xi32>) -> tensor<1x?x256xf32>
  return %y : tensor<1x?x256xf32>
}
