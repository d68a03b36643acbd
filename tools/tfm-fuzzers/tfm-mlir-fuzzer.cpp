//===- tfm-mlir-fuzzer.cpp - fuzz parsing, verification and the passes -----===//
//
// What tfm-compile does with MLIR text up to the LLVM dialect: the nesting
// limit, parse + verify, the entry-point checks, and every stage of
// tfm-lower-to-llvm-pipeline.
//
//===----------------------------------------------------------------------===//

#include "FuzzerSupport.h"

#include "tfm/Compiler/Driver.h"
#include "tfm/Compiler/EntryPoints.h"
#include "tfm/Support/InputLimits.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // MLIR's lexer expects the NUL that files read by LLVM end with: a copy
  // provides it (libFuzzer's buffer ends at its last byte).
  std::string source(reinterpret_cast<const char *>(data), size);
  llvm::StringRef text = source;
  if (llvm::Error error = tfm::checkMLIRSource(text)) {
    llvm::consumeError(std::move(error));
    return 0;
  }
  MLIRContext context(tfm::fuzzerRegistry(), MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) { return success(); });
  ParserConfig config(&context);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, config);
  if (!module || failed(tfm::collectEntryPoints(*module)))
    return 0;
  (void)tfm::lowerModule(*module, tfm::fuzzerTarget(),
                         tfm::fuzzerTarget().stages().back().name);
  return 0;
}
