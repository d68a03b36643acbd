//===- TensorCoreBuilder.h - warp-level tensor-core IR ----------*- C++ -*-===//
//
// The pieces the tensor-core kernels (AttentionKernel.h,
// TensorCoreMatmul.cpp) are built from: index arithmetic, 16-byte cp.async
// copies, ldmatrix.x4 and mma.sync m16n8k16 on 32-bit registers holding
// two bf16/f16 elements, f32 accumulators.
//
// Fragment layouts (PTX ISA, mma.m16n8k16): lane l is in quad row
// g = l / 4 and quad column t = l % 4. An A operand is 4 registers:
// (row g, k 2t..2t+1), (g + 8, 2t..), (g, 2t + 8..), (g + 8, 2t + 8..); a B
// operand 2: (k 2t..2t+1, column g), (k 2t + 8.., g); an accumulator 4
// values: (row g, columns 2t, 2t + 1), (g + 8, 2t, 2t + 1).
//
// Warpgroup MMA (wgmma m64nNk16, sm_90a): warp w of a warpgroup holds rows
// 16w..16w + 15 of A and of the accumulators, in the layouts above (an
// accumulator is N/8 tiles of 4 values, tile j at columns 8j..8j + 7).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CODEGEN_GPU_TENSORCOREBUILDER_H
#define TFM_LIB_CODEGEN_GPU_TENSORCOREBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace mlir::tfm {

class TensorCoreBuilder {
public:
  /// `element`: the bf16 or f16 type of the multiplied operands.
  TensorCoreBuilder(OpBuilder &b, Location loc, Type element)
      : b(b), loc(loc), element(element) {}

protected:
  // Constants and index arithmetic.
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value f32(double value) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) { return y ? add(x, index(y)) : x; }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t y) {
    return arith::MulIOp::create(b, loc, x, index(y));
  }
  Value div(Value x, int64_t y) {
    return arith::DivUIOp::create(b, loc, x, index(y));
  }
  Value rem(Value x, int64_t y) {
    return arith::RemUIOp::create(b, loc, x, index(y));
  }
  Value xorIndex(Value x, Value y) {
    return arith::XOrIOp::create(b, loc, x, y);
  }
  Value xorIndex(Value x, int64_t y) {
    return y == 0 ? x : xorIndex(x, index(y));
  }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate predicate, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, predicate, x, y);
  }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }

  /// 16 bytes from `source[sourceIndices]` to shared `tile[tileIndices]`,
  /// through L2 only (tiles are streamed), not waited for; with
  /// `sourceElements`, only that many elements are read and the rest of the
  /// 16 bytes are zeros.
  void copy16Bytes(Value tile, ValueRange tileIndices, Value source,
                   ValueRange sourceIndices, Value sourceElements = nullptr);
  /// The four 32-bit registers of an ldmatrix.x4 of `tile`: the lane gives
  /// the address `tile[row, column]` of one row of one of the 4 matrices
  /// (lanes 8i..8i+7: matrix i).
  SmallVector<Value> loadMatrices(Value tile, ValueRange indices,
                                  bool transpose);
  /// d = a·b + c for one m16n8k16 tile: 4, 2 and 4 registers.
  SmallVector<Value> mma(ArrayRef<Value> a, ArrayRef<Value> bRegs,
                         ArrayRef<Value> c);
  /// Two f32 values as one register of two 16-bit elements.
  Value pack(Value low, Value high);
  /// Two 16-bit elements loaded from `memref[indices]` as one register.
  Value loadPair(Value memref, ValueRange indices);

  /// The shared address of byte `offset` of shared `memref`, as an LLVM
  /// pointer to shared memory (what NVVM's mbarrier and TMA ops take).
  Value sharedPointer(Value memref, Value offset);
  /// `body`'s ops, run by thread `tid` 0 alone.
  void onFirstThread(Value tid, function_ref<void()> body);
  /// TMA (sm_90): barrier objects (mbarrier, i64) in shared `barriers`,
  /// object i completing a phase on `arrivals[i]` arrivals and the bytes
  /// it was told to expect; fenced for the block's next barrier to publish.
  void initBarriers(Value barriers, ArrayRef<int64_t> arrivals);
  /// One arrival of this thread on `barrier`.
  void arrive(Value barrier);
  /// Barrier object `index` of `barriers`, as initBarriers's ops take it.
  Value barrierPointer(Value barriers, Value index) {
    return sharedPointer(barriers, mul(index, 8));
  }
  /// The thread's arrival on `barrier`, which then also waits for `bytes`.
  void arriveExpectingBytes(Value barrier, int64_t bytes);
  /// One TMA load through tensor map `map` (a pointer; createTensorMap) of
  /// the box at `coordinates` (elements, innermost dim first) into shared
  /// `tile` from byte `offset`, its bytes counted on `barrier`.
  void loadBox(Value map, ArrayRef<Value> coordinates, Value tile, Value offset,
               Value barrier);
  /// Waits until `barrier` has completed the phase of parity `parity` (an
  /// index, 0 or 1): its n-th use (from 0) completes a phase of parity
  /// n mod 2.
  void waitForPhase(Value barrier, Value parity);

  /// Warp specialization: `producer`'s ops run in warpgroup 0 (thread
  /// `threadId` / 128), and the insertion point is left in the other
  /// warpgroups' branch; with register counts, the producer shrinks to
  /// `producerRegisters` a thread and the others grow to `otherRegisters`
  /// (setmaxnreg). Returns the thread's warpgroup index (i32) as lane 0
  /// holds it: the branch tests that value, warp-uniform to ptxas, which
  /// otherwise serializes every wgmma in a branch it cannot prove a whole
  /// warpgroup takes (C7520).
  Value splitWarpgroups(Value threadId, function_ref<void()> producer,
                        int32_t producerRegisters = 0,
                        int32_t otherRegisters = 0);

  /// Whether `memref`'s start and every row (each outer stride) fall on 16
  /// bytes, asked at run time: where 16-byte vector accesses may go.
  Value rowsOn16Bytes(Value memref);

  /// Makes this thread's shared-memory writes through the generic proxy
  /// (cp.async, stores) visible to reads through the async proxy (wgmma);
  /// before the barrier that publishes them.
  void fenceAsyncProxy();

  /// The wgmma descriptor of a shared operand at `address` (a shared
  /// memory address as an index) stored with the 128-byte swizzle (16-byte
  /// chunk c of a 128-byte row r at c ^ (r mod 8), 8-row groups on
  /// 1024-byte boundaries): `leadingBytes` and `strideBytes` are the byte
  /// offsets the descriptor names so (PTX ISA, matrix descriptor).
  Value sharedDescriptor(Value address, int64_t leadingBytes,
                         int64_t strideBytes);
  /// d = a·b + d for one wgmma m64nNk16 of the warpgroup, with A in
  /// registers (`a`: the warp's 4 A operand registers), B through the
  /// descriptor `bDescriptor` (K-major, or N-major when `transposeB`), `d`
  /// the N/2 accumulators. MLIR's nvvm.wgmma.mma_async reads A only
  /// through a descriptor, so this is the instruction as inline PTX.
  SmallVector<Value> warpgroupMma(ArrayRef<Value> a, Value bDescriptor,
                                  ArrayRef<Value> d, bool transposeB);

  OpBuilder &b;
  Location loc;
  Type element;
};

/// On the host: a TMA tensor map of `source` (device memory, bf16/f16,
/// innermost stride 1) in boxes of `box` (source's rank, outermost first;
/// the innermost 128 bytes at most), stored in shared memory with the
/// 128-byte swizzle that wgmma's descriptors read, zeros outside the
/// source, as a pointer a kernel takes: `nvgpu.tma.create.descriptor`,
/// which `convert-nvgpu-to-nvvm` lowers with the host to a call of the
/// runtime's `mgpuTensorMapEncodeTiledMemref`.
Value createTensorMap(OpBuilder &b, Location loc, Value source,
                      ArrayRef<int64_t> box);

} // namespace mlir::tfm

#endif // TFM_LIB_CODEGEN_GPU_TENSORCOREBUILDER_H
