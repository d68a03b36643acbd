//===- InitTfm.h - registration shared by every tfm tool --------*- C++ -*-===//

#ifndef TFM_INITTFM_H
#define TFM_INITTFM_H

namespace mlir {
class DialectRegistry;

namespace tfm {

/// Registers the tfm dialect and the upstream dialects tfm IR is mixed with.
void registerTfmDialects(DialectRegistry &registry);

/// Registers the tfm passes with the global pass registry.
void registerTfmPasses();

} // namespace tfm
} // namespace mlir

#endif // TFM_INITTFM_H
