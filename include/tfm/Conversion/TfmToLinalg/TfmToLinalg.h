//===- TfmToLinalg.h - tfm to linalg conversion -----------------*- C++ -*-===//

#ifndef TFM_CONVERSION_TFMTOLINALG_TFMTOLINALG_H
#define TFM_CONVERSION_TFMTOLINALG_TFMTOLINALG_H

namespace mlir {
class RewritePatternSet;

namespace tfm {

/// Reference lowerings of tfm.attention and the mask ops.
void populateTfmAttentionToLinalgPatterns(RewritePatternSet &patterns);

/// Reference lowerings of norms, linear, FFN, RoPE, heads and embedding.
void populateTfmLayerToLinalgPatterns(RewritePatternSet &patterns);

/// Every tfm lowering plus the decompositions of composite ops.
void populateTfmToLinalgConversionPatterns(RewritePatternSet &patterns);

} // namespace tfm
} // namespace mlir

#endif // TFM_CONVERSION_TFMTOLINALG_TFMTOLINALG_H
