//===- Passes.td - tfm conversion passes -------------------*- tablegen -*-===//

#ifndef TFM_CONVERSION_PASSES_TD
#define TFM_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTfmToLinalgPass : Pass<"convert-tfm-to-linalg"> {
  let summary = "lower every tfm op to linalg, tensor, arith and math";
  let description = [{
    The reference lowering: composite ops are decomposed first
    (`tfm-decompose`), then every primitive op becomes linalg on tensors.
    Arithmetic is f32 whatever the element type; results are rounded once.

    `tfm.attention` materializes its `[B, Hkv, G, Sq, Skv]` scores (query
    heads grouped by the key/value head they read), applies scale, softcap,
    bias and every mask, and normalizes with a max-subtracted softmax; a row
    that sees no key produces zeros. This path is the unfused baseline that
    the tiled attention is tested and benchmarked against.

    ```mlir
    %y = tfm.rms_norm %x, %w eps(1.0e-06)
        : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```

    becomes a sum-of-squares reduction over the last dim and an elementwise
    `linalg.generic` computing `x * rsqrt(sum / 64 + eps) * w`.

    Tile-level ops (`tfm.online_attention`) are left for the targets, which
    decompose them their own way (`tfm-cpu-decompose-online-attention`,
    `tfm-decompose-online-attention`).

    Fails with "failed to legalize operation" if an op cannot be lowered.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // TFM_CONVERSION_PASSES_TD
