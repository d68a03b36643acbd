//===- ProjectionFusions.h - which CPU projection fusions run ---*- C++ -*-===//
//
// The switches of ProjectionFusions.def as a struct, for the driver and the
// pipeline options.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_CODEGEN_PROJECTIONFUSIONS_H
#define TFM_CODEGEN_PROJECTIONFUSIONS_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::tfm {

struct ProjectionFusions {
#define TFM_PROJECTION_FUSION(field, name, description) bool field = true;
#include "tfm/Codegen/ProjectionFusions.def"

  /// Turns off the fusions that `list` names (comma-separated names of
  /// ProjectionFusions.def, or "all"); what is wrong with it, or "".
  std::string disable(llvm::StringRef list) {
    llvm::SmallVector<llvm::StringRef> names;
    list.split(names, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
    for (llvm::StringRef name : names) {
      name = name.trim();
      bool known = false;
#define TFM_PROJECTION_FUSION(field, fusionName, description)                  \
  if (name == fusionName || name == "all") {                                  \
    field = false;                                                            \
    known = true;                                                             \
  }
#include "tfm/Codegen/ProjectionFusions.def"
      if (!known)
        return "unknown fusion '" + name.str() +
               "': expected all, norm-projection, projection-epilogues, "
               "viewed-epilogues or sibling-projections";
    }
    return "";
  }
};

} // namespace mlir::tfm

#endif // TFM_CODEGEN_PROJECTIONFUSIONS_H
