//===- Transforms.h - tfm rewrite pattern entry points ----------*- C++ -*-===//

#ifndef TFM_DIALECT_TFM_TRANSFORMS_TRANSFORMS_H
#define TFM_DIALECT_TFM_TRANSFORMS_TRANSFORMS_H

#include "tfm/Dialect/Tfm/Transforms/AttentionTilingOptions.h"

namespace mlir {
class RewritePatternSet;

namespace tfm {

/// Patterns that expand tfm.decoder_block and tfm.self_attention into
/// primitive tfm ops.
void populateTfmDecompositionPatterns(RewritePatternSet &patterns);

/// Patterns that select rows before the row-wise ops that produce them
/// (tfm-fuse-row-selection).
void populateTfmRowSelectionPatterns(RewritePatternSet &patterns);

/// Patterns that tile tfm.attention into loops over (batch, key/value head,
/// query tile) and key tiles with online softmax (tfm-tile-attention).
void populateTfmTileAttentionPatterns(RewritePatternSet &patterns,
                                      const AttentionTilingOptions &options);

} // namespace tfm
} // namespace mlir

#endif // TFM_DIALECT_TFM_TRANSFORMS_TRANSFORMS_H
