//===- AttentionTilingOptions.h - how attention is tiled --------*- C++ -*-===//
//
// Target-independent: whether attention is tiled, and the tile sizes and key
// splits of tfm-tile-attention.
// The fields come from AttentionTilingOptions.def, as do the pass options,
// the pipeline options and tfm-compile's flags.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_DIALECT_TFM_TRANSFORMS_ATTENTIONTILINGOPTIONS_H
#define TFM_DIALECT_TFM_TRANSFORMS_ATTENTIONTILINGOPTIONS_H

#include <cstdint>
#include <string>

namespace mlir::tfm {

struct AttentionTilingOptions {
#define TFM_ATTENTION_LOWERING_FLAG(field, flag, description) bool field = false;
#define TFM_ATTENTION_TILING_OPTION(field, flag, value, description)          \
  int64_t field = value;
#include "tfm/Dialect/Tfm/Transforms/AttentionTilingOptions.def"

  /// What is wrong with these options ("tile-size-q must be positive, got
  /// 0"), or "" when they can be used.
  std::string validate() const;
};

} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_TRANSFORMS_ATTENTIONTILINGOPTIONS_H
