//===- CPUCodegenOptions.h - the CPU code generation options ----*- C++ -*-===//
//
// The vector width and register blocking of the CPU passes, from
// CPUCodegenOptions.def, as a struct and as pass options.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_CODEGEN_CPUCODEGENOPTIONS_H
#define TFM_CODEGEN_CPUCODEGENOPTIONS_H

#include "mlir/Pass/Pass.h"

#include <cstdint>
#include <string>

namespace mlir::tfm {

struct CPUCodegenOptions {
#define TFM_CPU_CODEGEN_OPTION(field, flag, value, description)               \
  int64_t field = value;
#include "tfm/Codegen/CPUCodegenOptions.def"

  /// What is wrong with these options, or "" when they can be used.
  std::string validate() const;
};

/// Sits between a CPU pass's generated base and the pass, and gives it the
/// options of CPUCodegenOptions.def as pass options.
template <typename Base>
class CPUCodegenPass : public Base {
public:
  CPUCodegenPass() = default;
  CPUCodegenPass(const CPUCodegenPass &other) : Base(other) {}
  /// From the pass's own options, if it has any.
  template <typename PassOptions>
  explicit CPUCodegenPass(const PassOptions &options) : Base(options) {}

  void setCodegenOptions(const CPUCodegenOptions &options) {
#define TFM_CPU_CODEGEN_OPTION(field, flag, value, description)               \
  field = options.field;
#include "tfm/Codegen/CPUCodegenOptions.def"
  }

  CPUCodegenOptions codegenOptions() const {
    CPUCodegenOptions options;
#define TFM_CPU_CODEGEN_OPTION(field, flag, value, description)               \
  options.field = field;
#include "tfm/Codegen/CPUCodegenOptions.def"
    return options;
  }

  /// Fails the pass with a message unless the options can be used.
  bool checkCodegenOptions() {
    std::string error = codegenOptions().validate();
    if (error.empty())
      return true;
    this->getOperation()->emitError(error);
    this->signalPassFailure();
    return false;
  }

protected:
#define TFM_CPU_CODEGEN_OPTION(field, flag, value, description)               \
  typename Base::template Option<int64_t> field{                               \
      *this, flag, llvm::cl::desc(description), llvm::cl::init(value)};
#include "tfm/Codegen/CPUCodegenOptions.def"
};

} // namespace mlir::tfm

#endif // TFM_CODEGEN_CPUCODEGENOPTIONS_H
