//===- Passes.h - entry-point ABI passes ------------------------*- C++ -*-===//

#ifndef TFM_ABI_PASSES_H
#define TFM_ABI_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::tfm {

#define GEN_PASS_DECL
#include "tfm/ABI/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/ABI/Passes.h.inc"

} // namespace mlir::tfm

#endif // TFM_ABI_PASSES_H
