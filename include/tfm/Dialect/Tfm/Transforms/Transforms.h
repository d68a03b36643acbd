//===- Transforms.h - tfm rewrite pattern entry points ----------*- C++ -*-===//

#ifndef TFM_DIALECT_TFM_TRANSFORMS_TRANSFORMS_H
#define TFM_DIALECT_TFM_TRANSFORMS_TRANSFORMS_H

#include <cstdint>

namespace mlir {
class RewritePatternSet;

namespace tfm {

/// Patterns that expand tfm.decoder_block and tfm.self_attention into
/// primitive tfm ops.
void populateTfmDecompositionPatterns(RewritePatternSet &patterns);

/// Patterns that tile tfm.attention into loops over (batch, key/value head,
/// query tile) and key tiles with online softmax (tfm-tile-attention).
/// `kvSplits` splits the key range of a static query that fits one tile
/// (flash-decoding); 0 picks a count from the shapes, 1 disables it.
void populateTfmTileAttentionPatterns(RewritePatternSet &patterns,
                                      int64_t tileSizeQ, int64_t tileSizeKv,
                                      int64_t kvSplits);

} // namespace tfm
} // namespace mlir

#endif // TFM_DIALECT_TFM_TRANSFORMS_TRANSFORMS_H
