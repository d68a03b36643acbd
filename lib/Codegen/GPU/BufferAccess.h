//===- BufferAccess.h - the buffers a host op or kernel touches -*- C++ -*-===//
//
// The GPU passes that move or rewrite work between kernels and host ops
// (tfm-gpu-merge-launches, tfm-gpu-tensor-core-matmul's row prologues) ask
// which buffers an op reads and writes, seen as the allocations, arguments
// and globals they are views of, and whether two of those may be the same
// memory.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CODEGEN_GPU_BUFFERACCESS_H
#define TFM_LIB_CODEGEN_GPU_BUFFERACCESS_H

#include "mlir/IR/Operation.h"

namespace mlir::tfm {

/// The buffers an op (with what it holds) reads and writes, as the values
/// they are views of (viewedBuffer); a kernel's own shared and private memory
/// left out. `unknown` when some access could not be bounded.
struct BufferAccess {
  SmallVector<Value> reads, writes;
  bool unknown = false;
};

/// What `root` and the ops it holds read and write. On the host, an op
/// that does not say what it touches may touch anything; in a kernel, what
/// its operands point to.
BufferAccess accessOf(Operation *root);

/// Whether two of BufferAccess's buffers may be the same memory. An
/// allocation is none of the arguments, globals and other allocations; two
/// arguments of an entry point are different memory where one is written
/// (docs/DESIGN.md, entry-point ABI).
bool mayAlias(Value a, Value b);

/// Whether `buffer` is memory of a block's or a thread's own: workgroup
/// or private memory, or an alloca in a kernel.
bool isKernelMemory(Value buffer);

} // namespace mlir::tfm

#endif // TFM_LIB_CODEGEN_GPU_BUFFERACCESS_H
