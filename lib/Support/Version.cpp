//===- Version.cpp - what --version prints ---------------------------------===//

#include "tfm/Support/Version.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

llvm::StringRef mlir::tfm::tfmVersion() { return TFM_VERSION_STRING; }

void mlir::tfm::setToolVersionPrinter(llvm::StringRef tool) {
  llvm::cl::SetVersionPrinter([name = tool.str()](llvm::raw_ostream &os) {
    os << name << " (tfm " << tfmVersion() << ", LLVM " LLVM_VERSION_STRING
       << ")\n";
  });
}
