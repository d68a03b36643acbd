//===- CPUTarget.h - the CPU target -----------------------------*- C++ -*-===//
//
// x86-64 CPUs: the target machine (host CPU by default), the register
// blocking it implies (AVX-512, AVX2), the vector stage, the OpenMP host
// code of tfm-lower-to-llvm-pipeline, and objects, assembly and shared
// libraries linked with clang and lld against libomp.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_TARGET_CPU_CPUTARGET_H
#define TFM_TARGET_CPU_CPUTARGET_H

#include "tfm/Target/TargetBackend.h"

namespace mlir::tfm {

llvm::Expected<std::unique_ptr<TargetBackend>>
createCPUTarget(const TargetOptions &options);

} // namespace mlir::tfm

#endif // TFM_TARGET_CPU_CPUTARGET_H
