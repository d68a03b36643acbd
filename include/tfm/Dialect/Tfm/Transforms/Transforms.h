//===- Transforms.h - tfm rewrite pattern entry points ----------*- C++ -*-===//

#ifndef TFM_DIALECT_TFM_TRANSFORMS_TRANSFORMS_H
#define TFM_DIALECT_TFM_TRANSFORMS_TRANSFORMS_H

namespace mlir {
class RewritePatternSet;

namespace tfm {

/// Patterns that expand tfm.decoder_block and tfm.self_attention into
/// primitive tfm ops.
void populateTfmDecompositionPatterns(RewritePatternSet &patterns);

} // namespace tfm
} // namespace mlir

#endif // TFM_DIALECT_TFM_TRANSFORMS_TRANSFORMS_H
