//===- CPUCodegenOptions.cpp - the CPU code generation options -------------===//

#include "tfm/Codegen/CPUCodegenOptions.h"

std::string mlir::tfm::CPUCodegenOptions::validate() const {
  if (vectorWidth < 1 || registerRows < 1)
    return "vector-width and register-rows must be positive, got "
           "vector-width=" +
           std::to_string(vectorWidth) +
           " register-rows=" + std::to_string(registerRows);
  if (bf16Dot != 0 && bf16Dot != 1)
    return "bf16-dot must be 0 or 1, got " + std::to_string(bf16Dot);
  if (amx != 0 && amx != 1)
    return "amx must be 0 or 1, got " + std::to_string(amx);
  if (prepackWeights != 0 && prepackWeights != 1)
    return "prepack-weights must be 0 or 1, got " +
           std::to_string(prepackWeights);
  if (amx && !bf16Dot)
    return "amx=1 needs bf16-dot=1 (the rows AMX blocks leave run through "
           "dot products)";
  return "";
}
