//===- CUDATarget.h - the CUDA target ---------------------------*- C++ -*-===//
//
// NVIDIA GPUs: tfm-lower-to-nvvm-pipeline's stages, kernels assembled with
// ptxas into a fatbin (cubin and PTX) or kept as PTX when there is no
// ptxas, and shared libraries whose host code launches them through tfm's
// CUDA runtime (lib/Runtime/CUDA, linked in statically: a library needs
// the NVIDIA driver and nothing of LLVM, MLIR or the CUDA toolkit).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_TARGET_CUDA_CUDATARGET_H
#define TFM_TARGET_CUDA_CUDATARGET_H

#include "tfm/Target/TargetBackend.h"

namespace mlir::tfm {

llvm::Expected<std::unique_ptr<TargetBackend>>
createCUDATarget(const TargetOptions &options);

} // namespace mlir::tfm

#endif // TFM_TARGET_CUDA_CUDATARGET_H
