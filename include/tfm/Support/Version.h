//===- Version.h - what --version prints ------------------------*- C++ -*-===//

#ifndef TFM_SUPPORT_VERSION_H
#define TFM_SUPPORT_VERSION_H

#include "llvm/ADT/StringRef.h"

namespace mlir::tfm {

/// tfm's version, "X.Y.Z" (defined once, in python/tfm/__init__.py).
llvm::StringRef tfmVersion();

/// Makes `--version` print "<tool> (tfm X.Y.Z, LLVM A.B.C)". Call before the
/// command line is parsed.
void setToolVersionPrinter(llvm::StringRef tool);

} // namespace mlir::tfm

#endif // TFM_SUPPORT_VERSION_H
