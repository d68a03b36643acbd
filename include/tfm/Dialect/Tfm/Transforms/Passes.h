//===- Passes.h - tfm transformation passes ---------------------*- C++ -*-===//

#ifndef TFM_DIALECT_TFM_TRANSFORMS_PASSES_H
#define TFM_DIALECT_TFM_TRANSFORMS_PASSES_H

#include "tfm/Dialect/Tfm/Transforms/AttentionTilingOptions.h"

#include "mlir/Pass/Pass.h"

namespace mlir::tfm {

#define GEN_PASS_DECL
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"

/// tfm-tile-attention with `options` (tfm-opt sets them from the pass
/// options of the same names).
std::unique_ptr<Pass>
createTfmTileAttentionPass(const AttentionTilingOptions &options);

#define GEN_PASS_REGISTRATION
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"

} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_TRANSFORMS_PASSES_H
