//===- Transforms.h - entry-point ABI rewrite patterns ----------*- C++ -*-===//

#ifndef TFM_ABI_TRANSFORMS_H
#define TFM_ABI_TRANSFORMS_H

namespace mlir {
class RewritePatternSet;

namespace tfm {

/// Patterns that express `tensor.dim` / `memref.dim` of computed values
/// through the dims of function arguments (upstream's result-dim
/// resolution, plus scf.forall results).
void populateTfmDimResolutionPatterns(RewritePatternSet &patterns);

} // namespace tfm
} // namespace mlir

#endif // TFM_ABI_TRANSFORMS_H
