//===- ViewedBuffer.h - the buffer a memref value views ---------*- C++ -*-===//
//
// The GPU passes that reason about which kernels touch which buffers
// (tfm-gpu-map-to-kernels, tfm-gpu-merge-launches) compare memrefs as the
// buffers they are views of.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CODEGEN_GPU_VIEWEDBUFFER_H
#define TFM_LIB_CODEGEN_GPU_VIEWEDBUFFER_H

#include "mlir/IR/Value.h"

namespace mlir::tfm {

/// The memref that `value` is a view of (subviews, casts, reshapes, and
/// `memref.transpose`, which LLVM 22 does not make a ViewLikeOpInterface),
/// or `value` itself.
Value viewedBuffer(Value value);

} // namespace mlir::tfm

#endif // TFM_LIB_CODEGEN_GPU_VIEWEDBUFFER_H
