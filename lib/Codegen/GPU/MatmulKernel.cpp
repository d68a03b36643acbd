//===- MatmulKernel.cpp - the tensor-core projection kernel ---------------===//
//
// The body of the projection kernel (MatmulKernel.h): the copies or TMA
// loads into the stages, the producer's and the tile warpgroups' loops,
// the products and the stores.
//
//===----------------------------------------------------------------------===//

#include "MatmulKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::matmul;

void MatmulKernelBuilder::copyStep(Value stage, Value step) {
  Value k0 = mul(step, t.step);
  copyRows(as, p.a, firstRow, lastRow, t.blockRows, stage, k0);
  copyRows(bs, p.b, firstColumn, lastColumn, t.blockColumns, stage, k0);
}

void MatmulKernelBuilder::copyRows(Value tiles, Value source, Value first,
                                   Value last, int64_t count, Value stage,
                                   Value k0) {
  int64_t chunks = t.chunks();
  for (int64_t i = 0; i < count * chunks / t.threads(); ++i) {
    Value id = add(tid, i * t.threads());
    Value row = div(id, chunks), chunk = rem(id, chunks);
    Value column = mul(swizzle(chunk, row), 8);
    Value sourceColumn = add(k0, mul(chunk, 8));
    Value sourceElements;
    if (p.k % t.step != 0) {
      // The last step reads zeros past K (from column 0, which exists).
      Value inside = cmp(arith::CmpIPredicate::slt, sourceColumn, index(p.k));
      sourceElements =
          arith::SelectOp::create(b, loc, inside, index(8), index(0));
      sourceColumn =
          arith::SelectOp::create(b, loc, inside, sourceColumn, index(0));
    }
    copy16Bytes(tiles, {stage, row, column}, source,
                {min(add(first, row), last), sourceColumn}, sourceElements);
  }
}

void MatmulKernelBuilder::loadStep(Value stage, Value step) {
  Value barrier = barrierPointer(barriers, stage);
  arriveExpectingBytes(barrier, t.stageBytes());
  // Boxes at (K's column, the block's first row).
  Value k0 = mul(step, t.step);
  loadBox(aMap, {k0, firstRow}, as, mul(stage, t.blockRows * t.step * 2),
          barrier);
  loadBox(bMap, {k0, firstColumn}, bs, mul(stage, t.blockColumns * t.step * 2),
          barrier);
}

void MatmulKernelBuilder::waitForStep(Value stage, Value count) {
  // A stage's n-th use is the block's step n · stages + stage.
  waitForPhase(barrierPointer(barriers, stage), rem(div(count, t.stages), 2));
}

void MatmulKernelBuilder::produce(int64_t steps) {
  forEachTile(steps, [&](Value, Value first) {
    scf::ForOp::create(
        b, loc, index(0), index(steps), index(1), ValueRange{},
        [&](OpBuilder &, Location, Value step, ValueRange) {
          Value count = add(first, step);
          Value stage = rem(count, t.stages);
          // Its use before (count - stages) released: that use's parity.
          auto reused = scf::IfOp::create(
              b, loc, cmp(arith::CmpIPredicate::uge, count, index(t.stages)));
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(reused.thenBlock());
            waitForPhase(freedBarrier(stage),
                         rem(sub(div(count, t.stages), index(1)), 2));
          }
          loadStep(stage, step);
          scf::YieldOp::create(b, loc);
        });
  });
}

void MatmulKernelBuilder::placeTile(Value tile) {
  // Blocks run in groups of kGroupRowBlocks row blocks, column block by
  // column block, each column block's row blocks together, so that the
  // tiles running at once share their B tiles in L2 and a group's rows of
  // A stay there while the group walks the columns (rather than all the
  // weights streamed from memory once per row block).
  Value firstRowBlock =
      mul(div(tile, kGroupRowBlocks * columnBlocks), kGroupRowBlocks);
  Value groupRows = min(sub(rowBlocks, firstRowBlock), index(kGroupRowBlocks));
  Value within = rem(tile, kGroupRowBlocks * columnBlocks);
  firstRow =
      mul(add(firstRowBlock, arith::RemUIOp::create(b, loc, within, groupRows)),
          t.blockRows);
  firstColumn =
      mul(arith::DivUIOp::create(b, loc, within, groupRows), t.blockColumns);
}

void MatmulKernelBuilder::forEachTile(int64_t steps,
                                      function_ref<void(Value, Value)> body) {
  if (!t.persistent) {
    body(blockId, index(0));
    return;
  }
  Value tiles = mul(rowBlocks, columnBlocks);
  scf::ForOp::create(b, loc, blockId, tiles, gridSize, ValueRange{},
                     [&](OpBuilder &, Location, Value tile, ValueRange) {
                       placeTile(tile);
                       // The block's tiles before this one, times their steps.
                       body(tile, mul(arith::DivUIOp::create(
                                          b, loc, sub(tile, blockId), gridSize),
                                      steps));
                       scf::YieldOp::create(b, loc);
                     });
}

void MatmulKernelBuilder::warpStep(Value stage, SmallVectorImpl<Value> &acc) {
  for (int64_t kk = 0; kk < t.step / 16; ++kk) {
    SmallVector<SmallVector<Value>> aRegs, bRegs;
    for (int64_t mt = 0; mt < mTiles; ++mt)
      aRegs.push_back(loadMatrices(
          as, {stage, add(aRow, mt * 16), mul(xorIndex(aXor, 2 * kk), 8)},
          /*transpose=*/false));
    for (int64_t pair = 0; pair < nTiles / 2; ++pair) {
      SmallVector<Value> regs = loadMatrices(
          bs, {stage, add(bRow, pair * 16), mul(xorIndex(bXor, 2 * kk), 8)},
          /*transpose=*/false);
      bRegs.push_back({regs[0], regs[1]});
      bRegs.push_back({regs[2], regs[3]});
    }
    for (int64_t mt = 0; mt < mTiles; ++mt)
      for (int64_t nt = 0; nt < nTiles; ++nt) {
        int64_t at = (mt * nTiles + nt) * 4;
        SmallVector<Value> c(acc.begin() + at, acc.begin() + at + 4);
        c = mma(aRegs[mt], bRegs[nt], c);
        std::copy(c.begin(), c.end(), acc.begin() + at);
      }
  }
}

Value MatmulKernelBuilder::descriptor(Value tiles, Value stage, Value row,
                                      int64_t kk) {
  int64_t rowsPerStage = cast<MemRefType>(tiles.getType()).getDimSize(1);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, tiles);
  Value address = add(
      add(base, mul(add(mul(stage, rowsPerStage), row), t.step * 2)), kk * 32);
  // The leading byte offset is unused by swizzled K-major operands.
  return sharedDescriptor(address, /*leadingBytes=*/16, /*strideBytes=*/1024);
}

void MatmulKernelBuilder::warpgroupStep(Value stage,
                                        SmallVectorImpl<Value> &acc) {
  MLIRContext *context = b.getContext();
  Type f32Type = b.getF32Type();
  auto structType = LLVM::LLVMStructType::getLiteral(
      context, SmallVector<Type>(acc.size(), f32Type));
  Value packed = LLVM::PoisonOp::create(b, loc, structType);
  for (auto [i, value] : llvm::enumerate(acc))
    packed = LLVM::InsertValueOp::create(b, loc, packed, value,
                                         ArrayRef<int64_t>{int64_t(i)});
  auto type = element.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  auto operandType = NVVM::WGMMATypesAttr::get(context, type);
  auto one = NVVM::WGMMAScaleInAttr::get(context, NVVM::WGMMAScaleIn::one);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t kk = 0; kk < t.step / 16; ++kk)
    packed = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, structType, packed, descriptor(as, stage, unitRow, kk),
        descriptor(bs, stage, unitColumn, kk),
        NVVM::MMAShapeAttr::get(context, 64, t.warpColumns, 16), operandType,
        operandType, NVVM::WGMMATypesAttr::get(context, NVVM::WGMMATypes::f32),
        NVVM::WGMMAScaleOutAttr::get(context, NVVM::WGMMAScaleOut::one), one,
        one, NVVM::MMALayoutAttr::get(context, NVVM::MMALayout::row),
        NVVM::MMALayoutAttr::get(context, NVVM::MMALayout::col),
        /*satfinite=*/nullptr);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  // The step before is done: after the next step's barrier, its stage may
  // be refilled.
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc,
                                     b.getI64IntegerAttr(kWgmmaInFlight));
  for (size_t i = 0; i < acc.size(); ++i)
    acc[i] = LLVM::ExtractValueOp::create(b, loc, packed,
                                          ArrayRef<int64_t>{int64_t(i)});
}

void MatmulKernelBuilder::build(gpu::LaunchOp launch, Value aTiles,
                                Value bTiles, ArrayRef<Value> operands,
                                Value stageBarriers, Value aTensorMap,
                                Value bTensorMap, Value stagingView) {
  as = aTiles;
  bs = bTiles;
  barriers = stageBarriers;
  aMap = aTensorMap;
  bMap = bTensorMap;
  staging = stagingView;
  // Specialized, threads 0-127 are the producer and the tile's warpgroups
  // follow: `tid` counts from their first.
  Value threadId = launch.getThreadIds().x;
  tid = t.specialized ? sub(threadId, index(128)) : threadId;
  Value warp = div(tid, 32), lane = rem(tid, 32);
  Value unit = t.warpgroups ? div(tid, 128) : warp;
  int64_t unitsPerRow = t.blockColumns / t.warpColumns;
  unitRow = mul(div(unit, unitsPerRow), t.warpRows);
  unitColumn = mul(rem(unit, unitsPerRow), t.warpColumns);
  // The rows of C this warp's accumulators hold: its unit's, or in a
  // warpgroup, the warp's 16 of its 64.
  warpRow = t.warpgroups ? add(unitRow, mul(rem(warp, 4), 16)) : unitRow;
  rows = memref::DimOp::create(b, loc, p.a, 0);
  columns = index(cast<MemRefType>(p.c.getType()).getDimSize(1));
  columnBlocks = llvm::divideCeil(cast<MemRefType>(p.c.getType()).getDimSize(1),
                                  t.blockColumns);
  rowBlocks = arith::CeilDivUIOp::create(b, loc, rows, index(t.blockRows));
  blockId = launch.getBlockIds().x;
  gridSize = launch.getGridSize().x;
  // A block's one tile; persistent blocks place each of theirs.
  if (!t.persistent)
    placeTile(blockId);
  lastRow = sub(rows, index(1));
  lastColumn = sub(columns, index(1));
  int64_t steps = llvm::divideCeil(p.k, t.step);

  // Copies run `lead` steps ahead: with mma.sync, stages - 1 (a stage is
  // refilled right after the products that read it); with wgmma, stages - 2,
  // as a step's products may still run while the next step is issued.
  int64_t lead = t.stages - 1 - (t.warpgroups ? kWgmmaInFlight : 0);
  // With TMA, thread 0 issues every load.
  if (t.tma) {
    // A stage's barrier object waits for one arrival (the issuing
    // thread's) and its loads' bytes, its second (specialized) for each
    // warpgroup of the tile; initialized before any thread uses them.
    SmallVector<int64_t> arrivals(t.stages, 1);
    if (t.specialized)
      arrivals.append(t.stages, t.units());
    onFirstThread(threadId, [&] { initBarriers(barriers, arrivals); });
    gpu::BarrierOp::create(b, loc);
    if (t.specialized) {
      // The producer warpgroup's thread 0 runs the loads; the rest of the
      // kernel is the tile's warpgroups'. Persistent, two of them hold the
      // tile loop's state beside their accumulators: the producer gives
      // them registers (168 a thread at entry, 384 threads).
      splitWarpgroups(
          threadId, [&] { onFirstThread(threadId, [&] { produce(steps); }); },
          t.movesRegisters() ? kProducerRegisters : 0,
          t.movesRegisters() ? kTileRegisters : 0);
    } else {
      onFirstThread(tid, [&] {
        for (int64_t s = 0; s < std::min(lead, steps); ++s)
          loadStep(index(s), index(s));
      });
    }
  } else {
    // Steps 0 .. lead - 1 in flight; one commit group per step, empty past
    // the last step, so that waits count uniformly.
    for (int64_t s = 0; s < lead; ++s) {
      if (s < steps)
        copyStep(index(s), index(s));
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
    }
  }

  // Lane addresses of the ldmatrix matrices: A tiles are rows +0/+8 then
  // chunks +0/+1, B tiles chunks +0/+1 then rows +0/+8; a row's swizzle
  // depends on the lane only (the other terms of its row are multiples of
  // 8).
  if (!t.warpgroups) {
    Value low3 = rem(lane, 8), matrix = div(lane, 8);
    Value laneSwizzle = rem(div(low3, t.rowsPerLine()), t.chunks());
    aRow = add(warpRow, add(low3, mul(rem(matrix, 2), 8)));
    aXor = xorIndex(div(matrix, 2), laneSwizzle);
    bRow = add(unitColumn, add(low3, mul(div(matrix, 2), 8)));
    bXor = xorIndex(rem(matrix, 2), laneSwizzle);
  }

  // A warpgroup's accumulators are, per warp, those of one 16-row tile by
  // N / 8 8-column tiles, in the layout of mma.sync's.
  mTiles = t.warpgroups ? 1 : t.warpRows / 16;
  nTiles = t.warpColumns / 8;
  quadRow = div(lane, 4);
  quadColumn = mul(rem(lane, 4), 2);
  auto pairType = VectorType::get({2}, b.getF32Type());
  Value zero = f32(0.0);
  forEachTile(steps, [&](Value, Value first) {
    SmallVector<Value> init(mTiles * nTiles * 4, zero);
    if (!p.fill) {
      // C's values (a bias, say) are the starting sums: read at clamped
      // indices, 0 outside C.
      for (int64_t mt = 0; mt < mTiles; ++mt)
        for (int64_t nt = 0; nt < nTiles; ++nt)
          for (int64_t half = 0; half < 2; ++half) {
            Value row = add(firstRow, accumulatorRow(mt, half));
            Value column = add(firstColumn, accumulatorColumn(nt));
            Value pair = vector::LoadOp::create(
                b, loc, pairType, p.c,
                ValueRange{min(row, lastRow), min(column, lastColumn)});
            Value in = insideC(row, column);
            for (int64_t e = 0; e < 2; ++e)
              init[(mt * nTiles + nt) * 4 + half * 2 + e] =
                  arith::SelectOp::create(
                      b, loc, in, vector::ExtractOp::create(b, loc, pair, e),
                      zero);
          }
    }
    auto loop = scf::ForOp::create(
        b, loc, index(0), index(steps), index(1), init,
        [&](OpBuilder &, Location, Value step, ValueRange state) {
          SmallVector<Value> acc(state.begin(), state.end());
          if (t.tma) {
            Value count = add(first, step);
            Value stage = rem(count, t.stages);
            if (!t.specialized) {
              Value next = add(step, lead);
              Value more = cmp(arith::CmpIPredicate::slt, next, index(steps));
              // Every warpgroup is past the products that read the stage
              // refilled next; then this step's tiles have landed.
              gpu::BarrierOp::create(b, loc);
              onFirstThread(tid, [&] {
                auto load = scf::IfOp::create(b, loc, more);
                OpBuilder::InsertionGuard guard(b);
                b.setInsertionPointToStart(load.thenBlock());
                loadStep(rem(next, t.stages), next);
              });
            }
            waitForStep(stage, count);
            warpgroupStep(stage, acc);
            if (t.specialized) {
              // The step before's products are done (the warpgroup waited
              // for all but this step's): its stage goes back to the
              // producer, one arrival per warpgroup.
              auto release = scf::IfOp::create(
                  b, loc,
                  both(cmp(arith::CmpIPredicate::ugt, step, index(0)),
                       cmp(arith::CmpIPredicate::eq, rem(tid, 128), index(0))));
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(release.thenBlock());
              arrive(freedBarrier(rem(sub(count, index(1)), t.stages)));
            }
            scf::YieldOp::create(b, loc, acc);
            return;
          }
          // This step has landed, and every warp is past the products that
          // read the stage refilled next.
          NVVM::CpAsyncWaitGroupOp::create(b, loc, lead - 1);
          if (t.warpgroups)
            fenceAsyncProxy();
          gpu::BarrierOp::create(b, loc);
          Value next = add(step, lead);
          auto more = scf::IfOp::create(
              b, loc, cmp(arith::CmpIPredicate::slt, next, index(steps)));
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(more.thenBlock());
            copyStep(rem(next, t.stages), next);
          }
          NVVM::CpAsyncCommitGroupOp::create(b, loc);

          Value stage = rem(step, t.stages);
          if (t.warpgroups)
            warpgroupStep(stage, acc);
          else
            warpStep(stage, acc);
          scf::YieldOp::create(b, loc, acc);
        });
    if (t.warpgroups)
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(0));
    if (t.persistent) {
      // The tile's last step is done too: its stage goes back to the
      // producer, which may be loading the next tile's steps already.
      onFirstThread(rem(tid, 128), [&] {
        arrive(freedBarrier(rem(add(first, steps - 1), t.stages)));
      });
    }

    SmallVector<Value> sums(loop.getResults());
    if (staging)
      storeStaged(sums, operands);
    else
      storeDirect(sums, operands);
  });
}

void MatmulKernelBuilder::storeDirect(ArrayRef<Value> sums,
                                      ArrayRef<Value> operands) {
  Value out = p.epilogue ? operands.back() : p.c;
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t nt = 0; nt < nTiles; ++nt)
      for (int64_t half = 0; half < 2; ++half) {
        Value row = add(firstRow, accumulatorRow(mt, half));
        Value column = add(firstColumn, accumulatorColumn(nt));
        auto store = scf::IfOp::create(b, loc, insideC(row, column));
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(store.thenBlock());
        int64_t at = (mt * nTiles + nt) * 4 + half * 2;
        ArrayRef<Value> pairSums = sums.slice(at, 2);
        Value pair =
            p.epilogue
                ? evaluateEpilogue(b, loc, p, operands, pairSums, row, column)
                : vector::FromElementsOp::create(
                      b, loc, VectorType::get({2}, b.getF32Type()), pairSums);
        vector::StoreOp::create(b, loc, pair, out, ValueRange{row, column});
      }
}

void MatmulKernelBuilder::tileBarrier() {
  if (!t.specialized) {
    gpu::BarrierOp::create(b, loc);
    return;
  }
  // Barrier 0 would wait for the producer's threads too.
  auto i32 = [&](int32_t value) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(value));
  };
  NVVM::BarrierOp::create(b, loc, TypeRange{}, i32(1),
                          i32(int32_t(t.tileThreads())),
                          NVVM::BarrierReductionAttr{}, Value{});
}

void MatmulKernelBuilder::storeStaged(ArrayRef<Value> sums,
                                      ArrayRef<Value> operands) {
  // Every unit's products are done reading the stages, and no copy into
  // them is in flight.
  if (!t.tma)
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  tileBarrier();
  auto pairType = VectorType::get({2}, b.getF32Type());
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t nt = 0; nt < nTiles; ++nt)
      for (int64_t half = 0; half < 2; ++half) {
        int64_t at = (mt * nTiles + nt) * 4 + half * 2;
        Value pair =
            vector::FromElementsOp::create(b, loc, pairType, sums.slice(at, 2));
        vector::StoreOp::create(
            b, loc, pair, staging,
            ValueRange{accumulatorRow(mt, half), accumulatorColumn(nt)},
            /*nontemporal=*/false, llvm::Align(8));
      }
  tileBarrier();

  // 16-byte accesses where the output's and every operand's rows start on
  // 16 bytes: one uniform branch.
  Value out = p.epilogue ? operands.back() : p.c;
  Value aligned = rowsOn16Bytes(out);
  for (Value operand : operands)
    if (operand && operand != out)
      aligned = both(aligned, rowsOn16Bytes(operand));

  int64_t chunksPerRow = t.blockColumns / kChunkColumns;
  auto chunkType = VectorType::get({kChunkColumns}, b.getF32Type());
  for (int64_t i = 0; i < t.blockRows * chunksPerRow / t.tileThreads(); ++i) {
    // A warp's chunks are consecutive along a row.
    Value id = add(tid, i * t.tileThreads());
    Value tileRow = div(id, chunksPerRow);
    Value tileColumn = mul(rem(id, chunksPerRow), kChunkColumns);
    Value row = add(firstRow, tileRow), column = add(firstColumn, tileColumn);
    auto store = scf::IfOp::create(b, loc, insideC(row, column));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(store.thenBlock());
    Value chunk = vector::LoadOp::create(
        b, loc, chunkType, staging, ValueRange{tileRow, tileColumn},
        /*nontemporal=*/false, llvm::Align(32));
    SmallVector<Value> chunkSums;
    for (int64_t e = 0; e < kChunkColumns; ++e)
      chunkSums.push_back(vector::ExtractOp::create(b, loc, chunk, e));
    auto storeChunk = [&](llvm::MaybeAlign alignment) {
      Value values =
          p.epilogue
              ? evaluateEpilogue(b, loc, p, operands, chunkSums, row, column,
                                 {}, alignment)
              : vector::FromElementsOp::create(b, loc, chunkType, chunkSums);
      vector::StoreOp::create(b, loc, values, out, ValueRange{row, column},
                              /*nontemporal=*/false, alignment);
    };
    auto ifAligned = scf::IfOp::create(b, loc, aligned, /*withElse=*/true);
    b.setInsertionPointToStart(ifAligned.thenBlock());
    storeChunk(llvm::Align(16));
    b.setInsertionPointToStart(ifAligned.elseBlock());
    storeChunk(std::nullopt);
  }
}
