//===- Passes.h - tfm target code generation passes -------------*- C++ -*-===//

#ifndef TFM_CODEGEN_PASSES_H
#define TFM_CODEGEN_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tfm {

#define GEN_PASS_DECL
#include "tfm/Codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/Codegen/Passes.h.inc"

} // namespace mlir::tfm

#endif // TFM_CODEGEN_PASSES_H
