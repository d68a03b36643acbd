//===- AttentionKernel.cpp - the attention kernel's block and softmax ----===//
//
// The block's setup (its rows, its key tiles, Q, the first tile), the masks
// and the online softmax of a tile's scores, the output, and the kernel that
// combines split-KV decode's key ranges (AttentionKernel.h).
//
//===----------------------------------------------------------------------===//

#include "AttentionKernel.h"

#include "tfm/Dialect/Tfm/Utils/AttentionDims.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "KernelLaunch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::attention;

bool attention::kernelTakes(ShapedType query, ShapedType value) {
  Type element = query.getElementType();
  int64_t dim = query.getDimSize(kHead);
  return (element.isBF16() || element.isF16()) &&
         value.getElementType() == element && (dim == 64 || dim == 128) &&
         value.getDimSize(kHead) == dim;
}

/// A memref type for reading `type` in place: any offset and outer strides,
/// unit innermost stride (what cp.async needs).
MemRefType attention::bufferType(RankedTensorType type) {
  int64_t rank = type.getRank();
  SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
  strides.back() = 1;
  return MemRefType::get(
      type.getShape(), type.getElementType(),
      StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic, strides));
}

KernelBuilder::KernelBuilder(OpBuilder &b, Location loc, BufferAttentionOp op,
                             RowSplit split)
    : TensorCoreBuilder(b, loc, op.getQuery().getType().getElementType()),
      op(op), split(split) {
  MemRefType query = op.getQuery().getType();
  headDim = query.getDimSize(kHead);
  chunks = headDim / 8;
  group = query.getDimSize(kHeads) / op.getKey().getType().getDimSize(kHeads);
  mask = op.getMaskOrNone();
  log2e = 1.0 / std::log(2.0);
  scale = op.getScaleOrDefault();
  if (FloatAttr cap = op.getSoftcapAttr())
    softcap = cap.getValueAsDouble();
}

void KernelBuilder::build(gpu::LaunchOp launchOp,
                          const KernelOperands &operands) {
  launch = launchOp;
  io = operands;
  locateBlock();
  if (split.specialized)
    splitRoles();
  placeRows();
  loadFirstTile();
  readQuery();
  negInf = f32(-INFINITY);
  zero = f32(0.0);
  int64_t rowTiles = split.rowTiles();
  init.assign(2 * rowTiles, negInf);
  init.append(2 * rowTiles + rowTiles * headDim / 8 * 4, zero);
  columnInTile = mul(quadColumn, 2);
  storeResults(split.overlap ? overlappedTiles() : sequentialTiles());
}

void KernelBuilder::locateBlock() {
  Value threadId = launch.getThreadIds().x;
  tid = split.specialized ? sub(threadId, index(128)) : threadId;
  warp = div(tid, 32);
  lane = rem(tid, 32);
  quadRow = div(lane, 4);
  quadColumn = rem(lane, 4);
  batch = launch.getBlockIds().z;
  queries = memref::DimOp::create(b, loc, io.q, kSeq);
  // Packed: the block's rows are every query of the group, and x is the
  // key range. Otherwise x is a tile of 128 rows of head y, the last tiles
  // first: under a causal mask they have the most keys, and the short ones
  // then fill the tail of the grid.
  if (split.packed) {
    kvHead = launch.getBlockIds().y;
    range = launch.getBlockIds().x;
    firstRow = index(0);
    rowEnd = queries;
  } else {
    head = launch.getBlockIds().y;
    kvHead = div(head, group);
    Value queryTile =
        sub(sub(launch.getGridSize().x, launch.getBlockIds().x), index(1));
    firstRow = mul(queryTile, kRows);
    rowEnd = min(add(firstRow, kRows), queries);
  }

  Value keys = memref::DimOp::create(b, loc, io.k, kSeq);
  keyEnd = keys;
  if (io.lengths) {
    Value length = memref::LoadOp::create(b, loc, io.lengths, batch);
    length = arith::IndexCastOp::create(b, loc, b.getIndexType(), length);
    keyEnd = max(index(0), min(length, keys));
  }
  // Query row i sits at position i + Skv - Sq (bottom-right alignment).
  offset = sub(keys, queries);
  firstPosition = add(firstRow, offset);
  lastPosition = add(sub(rowEnd, index(1)), offset);
  // The keys any row of the block sees: [keyBegin, keyLimit).
  Value keyBegin = index(0), keyLimit = keyEnd;
  if (leftBounded())
    keyBegin = max(index(0), sub(firstPosition, index(mask.getLeft())));
  if (rightBounded())
    keyLimit = min(keyEnd, add(lastPosition, mask.getRight() + 1));
  // The tiles walked: [tileBegin, tileLimit), within the block's key range
  // when packed (ranges of whole tiles, as many as the grid's x).
  tileBegin = mul(div(keyBegin, split.keys), split.keys);
  tileLimit = keyLimit;
  if (split.packed) {
    Value ranges = launch.getGridSize().x;
    Value rangeKeys =
        mul(div(add(arith::CeilDivUIOp::create(b, loc, keys, ranges),
                    split.keys - 1),
                split.keys),
            split.keys);
    Value rangeBegin = arith::MulIOp::create(b, loc, range, rangeKeys);
    tileBegin = max(tileBegin, rangeBegin);
    tileLimit = min(tileLimit, add(rangeBegin, rangeKeys));
  }
}

void KernelBuilder::splitRoles() {
  // The producer warpgroup (the first) runs its loop, and the rest of the
  // kernel is the tile warpgroups'.
  Value threadId = launch.getThreadIds().x;
  onFirstThread(threadId, [&] {
    // Loads land on one arrival (the producer's) and their bytes; a
    // buffer is freed by one arrival of each tile warpgroup.
    SmallVector<int64_t> arrivals(2 * split.buffers(), 1);
    arrivals.append(2 * split.buffers(), split.warps() / 4);
    initBarriers(io.barriers, arrivals);
  });
  gpu::BarrierOp::create(b, loc);
  Value warpgroup = splitWarpgroups(
      threadId, [&] { onFirstThread(threadId, [&] { produce(); }); },
      kProducerRegisters, kTileRegisters);
  tileGroup = arith::SubIOp::create(b, loc, warpgroup, i32(1));
}

void KernelBuilder::placeRows() {
  int64_t rowTiles = split.rowTiles();
  // The warp's rows in the block: row tiles of 16 from warpRow.
  warpRow = mul(warp, split.warpRows);
  Value lastRow = sub(queries, index(1));
  // A lane's rows: quadRow + 8·half of row tile mt.
  rows.resize(rowTiles);
  for (int64_t mt = 0; mt < rowTiles; ++mt)
    for (int64_t half = 0; half < 2; ++half) {
      Value row = add(add(warpRow, quadRow), mt * 16 + half * 8);
      QueryRow &at = rows[mt][half];
      if (split.packed) {
        // Row r: query r mod Sq of the group's head r / Sq.
        Value packedRows = mul(queries, group);
        at.exists = cmp(arith::CmpIPredicate::slt, row, packedRows);
        row = min(row, sub(packedRows, index(1)));
        at.head = add(mul(kvHead, group),
                      arith::DivUIOp::create(b, loc, row, queries));
        at.query = arith::RemUIOp::create(b, loc, row, queries);
      } else {
        row = add(firstRow, row);
        at.exists = cmp(arith::CmpIPredicate::slt, row, queries);
        at.head = head;
        at.query = min(row, lastRow);
      }
    }
  Value low3 = rem(lane, 8), matrix = div(lane, 8);
  rowsThenChunks = add(low3, mul(rem(matrix, 2), 8));
  chunksThenRows = add(low3, mul(div(matrix, 2), 8));
  xorRowsThenChunks = xorIndex(div(matrix, 2), low3);
  xorChunksThenRows = xorIndex(rem(matrix, 2), low3);

  queryRegs.resize(rowTiles);
  if (split.queryCopied()) {
    copyQuery();
    return;
  }
  // Q in registers for the whole key loop, read from global memory once.
  for (int64_t mt = 0; mt < rowTiles; ++mt)
    for (int64_t kk = 0; kk < headDim / 16; ++kk)
      queryRegs[mt].push_back(loadQuery(rows[mt][0], rows[mt][1],
                                        add(mul(quadColumn, 2), kk * 16)));
}

void KernelBuilder::copyQuery() {
  Value lastQuery = sub(queries, index(1));
  // A lane's chunk is the same in each row it copies (32 is a multiple of
  // the chunks a row has).
  Value chunk = rem(lane, chunks), laneRow = add(warpRow, div(lane, chunks));
  for (int64_t i = 0; i < split.warpRows * chunks / 32; ++i) {
    Value row = add(laneRow, i * 32 / chunks);
    copy16Bytes(
        io.qs, {row, mul(xorIndex(chunk, rem(row, 8)), 8)}, io.q,
        {batch, head, min(add(firstRow, row), lastQuery), mul(chunk, 8)});
  }
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

void KernelBuilder::readQuery() {
  if (!split.queryCopied())
    return;
  // Every lane's copies have landed (and K's first tile's, if cp.async
  // brought it, which the loop waits for first anyway); the barrier shows
  // each lane the chunks the warp's other lanes copied.
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  if (split.specialized)
    ownBarrier();
  else
    gpu::BarrierOp::create(b, loc);
  // Queries shared are read per key tile (queryOperand); otherwise once,
  // into registers for the whole key loop.
  if (split.queryShared())
    return;
  for (int64_t mt = 0; mt < split.rowTiles(); ++mt)
    for (int64_t kk = 0; kk < headDim / 16; ++kk)
      queryRegs[mt].push_back(
          loadSwizzled(io.qs, add(rowsThenChunks, add(warpRow, mt * 16)),
                       2 * kk, xorRowsThenChunks, /*transpose=*/false));
}

SmallVector<Value> KernelBuilder::queryOperand(int64_t mt, int64_t kk) {
  if (!split.queryShared())
    return queryRegs[mt][kk];
  return loadSwizzled(io.qs, add(rowsThenChunks, add(warpRow, mt * 16)), 2 * kk,
                      xorRowsThenChunks, /*transpose=*/false);
}

void KernelBuilder::loadFirstTile() {
  // With TMA, thread 0 readies the barrier objects before anyone waits
  // (specialized, before the roles, and the producer loads every tile).
  if (split.specialized)
    return;
  if (split.tma) {
    onFirstThread(tid, [&] {
      initBarriers(io.barriers, SmallVector<int64_t>(2 * split.buffers(), 1));
    });
    gpu::BarrierOp::create(b, loc);
  }
  auto anyTile = scf::IfOp::create(
      b, loc, cmp(arith::CmpIPredicate::slt, tileBegin, tileLimit));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(anyTile.thenBlock());
  if (split.overlap) {
    // V buffer 1 zeroed: the first tile's P·V of "the tile before" reads
    // it (with P zeros; 0·NaN would be NaN).
    zeroRowsFrom(io.vs, /*firstRow=*/nullptr, index(1));
    if (split.tma) {
      // For wgmma's reads once the loop's first barrier has published
      // them.
      fenceAsyncProxy();
      onFirstThread(tid, [&] {
        loadTileBoxes(io.kMap, kvHead, tileBegin, io.ks, kBarrier(index(0)),
                      index(0));
      });
    } else {
      copyTile(io.k, kvHead, tileBegin, keyEnd, io.ks, split.keys, index(0));
    }
  } else if (split.tma) {
    onFirstThread(tid, [&] {
      loadTileBoxes(io.kMap, kvHead, tileBegin, io.ks, kBarrier(index(0)));
    });
  } else {
    copyTile(io.k, kvHead, tileBegin, keyEnd, io.ks, split.keys);
  }
}

Value KernelBuilder::maskScores(Tiles &scores, Value tileStart) {
  int64_t rowTiles = split.rowTiles();
  for (auto &tiles : scores)
    for (auto &tile : tiles)
      for (Value &s : tile) {
        if (softcap) {
          Value capped = math::TanhOp::create(
              b, loc, arith::MulFOp::create(b, loc, s, f32(scale / *softcap)));
          s = arith::MulFOp::create(b, loc, capped, f32(*softcap * log2e));
        } else {
          s = arith::MulFOp::create(b, loc, s, f32(scale * log2e));
        }
      }

  // Masks, in the tiles they cut: key j of row p is visible iff
  // j < keyEnd and p - left <= j <= p + right.
  Value tileEnd = add(tileStart, split.keys);
  Value whole = cmp(arith::CmpIPredicate::sle, tileEnd, keyEnd);
  if (leftBounded())
    whole = both(whole, cmp(arith::CmpIPredicate::sge, tileStart,
                            sub(lastPosition, index(mask.getLeft()))));
  if (rightBounded())
    whole = both(whole, cmp(arith::CmpIPredicate::sle, sub(tileEnd, index(1)),
                            add(firstPosition, mask.getRight())));
  SmallVector<Value> flat;
  for (auto &tiles : scores)
    for (auto &tile : tiles)
      flat.append(tile);
  SmallVector<Type> types(flat.size(), b.getF32Type());
  auto masked = scf::IfOp::create(b, loc, types, whole,
                                  /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(masked.thenBlock());
    scf::YieldOp::create(b, loc, flat);
    b.setInsertionPointToStart(masked.elseBlock());
    SmallVector<Value> kept;
    for (int64_t mt = 0; mt < rowTiles; ++mt)
      for (int64_t n = 0; n < split.keys / 8; ++n)
        for (int64_t e = 0; e < 4; ++e) {
          Value key = add(add(tileStart, columnInTile), n * 8 + e % 2);
          Value position = add(rows[mt][e / 2].query, offset);
          Value visible = cmp(arith::CmpIPredicate::slt, key, keyEnd);
          if (leftBounded())
            visible = both(visible, cmp(arith::CmpIPredicate::sge, key,
                                        sub(position, index(mask.getLeft()))));
          if (rightBounded())
            visible = both(visible, cmp(arith::CmpIPredicate::sle, key,
                                        add(position, mask.getRight())));
          kept.push_back(arith::SelectOp::create(b, loc, visible,
                                                 scores[mt][n][e], negInf));
        }
    scf::YieldOp::create(b, loc, kept);
  }
  for (int64_t mt = 0; mt < rowTiles; ++mt)
    for (int64_t n = 0; n < split.keys / 8; ++n)
      for (int64_t e = 0; e < 4; ++e)
        scores[mt][n][e] = masked.getResult((mt * split.keys / 8 + n) * 4 + e);
  return tileEnd;
}

SmallVector<Value> KernelBuilder::softmaxStep(Tiles &scores, ValueRange state,
                                              SmallVector<Value> &next,
                                              bool rescale) {
  int64_t rowTiles = split.rowTiles();
  SmallVector<Value> corrections;
  // Online softmax of rows quadRow (half 0) and quadRow + 8 (half 1)
  // of each row tile.
  for (int64_t mt = 0; mt < rowTiles; ++mt)
    for (int64_t half = 0; half < 2; ++half) {
      Value rowMax = negInf;
      for (auto &tile : scores[mt])
        for (int64_t e = 2 * half; e < 2 * half + 2; ++e)
          rowMax = arith::MaximumFOp::create(b, loc, rowMax, tile[e]);
      rowMax = quadReduce(rowMax, /*sum=*/false);
      Value oldMax = state[maxAt(mt, half)];
      Value newMax = arith::MaximumFOp::create(b, loc, oldMax, rowMax);
      // A row that has seen no key yet subtracts 0, not -inf.
      Value seen = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                         newMax, negInf);
      Value base = arith::SelectOp::create(b, loc, seen, newMax, zero);
      Value correction = math::Exp2Op::create(
          b, loc, arith::SubFOp::create(b, loc, oldMax, base));
      Value sum =
          arith::MulFOp::create(b, loc, state[sumAt(mt, half)], correction);
      for (auto &tile : scores[mt])
        for (int64_t e = 2 * half; e < 2 * half + 2; ++e) {
          tile[e] = math::Exp2Op::create(
              b, loc, arith::SubFOp::create(b, loc, tile[e], base));
          sum = arith::AddFOp::create(b, loc, sum, tile[e]);
        }
      next[maxAt(mt, half)] = newMax;
      next[sumAt(mt, half)] = sum;
      corrections.push_back(correction);
      if (!rescale)
        continue;
      for (int64_t d = 0; d < headDim / 8; ++d)
        for (int64_t e = 2 * half; e < 2 * half + 2; ++e)
          next[accAt(mt, d) + e] = arith::MulFOp::create(
              b, loc, state[accAt(mt, d) + e], correction);
    }
  return corrections;
}

KernelBuilder::Tiles KernelBuilder::probabilitiesOf(Tiles &scores) {
  int64_t rowTiles = split.rowTiles();
  Tiles probabilities(rowTiles);
  for (int64_t mt = 0; mt < rowTiles; ++mt)
    for (int64_t j = 0; j < split.keys / 16; ++j) {
      auto &lo = scores[mt][2 * j], &hi = scores[mt][2 * j + 1];
      probabilities[mt].push_back({pack(lo[0], lo[1]), pack(lo[2], lo[3]),
                                   pack(hi[0], hi[1]), pack(hi[2], hi[3])});
    }
  return probabilities;
}

KernelBuilder::NormalizedRow
KernelBuilder::normalizeRow(ArrayRef<Value> results, int64_t mt, int64_t half) {
  NormalizedRow row;
  row.sum = quadReduce(results[sumAt(mt, half)], /*sum=*/true);
  row.positive =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, row.sum, zero);
  Value inverse = arith::SelectOp::create(
      b, loc, row.positive, arith::DivFOp::create(b, loc, f32(1.0), row.sum),
      zero);
  for (int64_t d = 0; d < headDim / 8; ++d) {
    SmallVector<Value> pair;
    for (int64_t e = 2 * half; e < 2 * half + 2; ++e)
      pair.push_back(
          arith::MulFOp::create(b, loc, results[accAt(mt, d) + e], inverse));
    row.pairs.push_back(vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, b.getF32Type()), pair));
  }
  return row;
}

void KernelBuilder::storeResults(ArrayRef<Value> results) {
  int64_t rowTiles = split.rowTiles();
  auto rounded = [&](Value pair) -> Value {
    return arith::TruncFOp::create(b, loc, VectorType::get({2}, element), pair);
  };
  if (!split.packed) {
    // Per row tile and half, the lane's pairs of O / l, rounded.
    SmallVector<SmallVector<Value>> pairs;
    for (int64_t mt = 0; mt < rowTiles; ++mt)
      for (int64_t half = 0; half < 2; ++half)
        pairs.push_back(llvm::map_to_vector(
            normalizeRow(results, mt, half).pairs, rounded));
    storeStaged(pairs);
    return;
  }
  for (int64_t mt = 0; mt < rowTiles; ++mt)
    for (int64_t half = 0; half < 2; ++half) {
      NormalizedRow normalized = normalizeRow(results, mt, half);
      const QueryRow &row = rows[mt][half];
      auto exists = scf::IfOp::create(b, loc, row.exists);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(exists.thenBlock());
      auto oneRange = scf::IfOp::create(
          b, loc,
          cmp(arith::CmpIPredicate::eq, launch.getGridSize().x, index(1)),
          /*withElseRegion=*/true);
      b.setInsertionPointToStart(oneRange.thenBlock());
      for (int64_t d = 0; d < headDim / 8; ++d)
        vector::StoreOp::create(
            b, loc, rounded(normalized.pairs[d]), io.out,
            ValueRange{batch, row.head, row.query, add(columnInTile, d * 8)});
      b.setInsertionPointToStart(oneRange.elseBlock());
      for (int64_t d = 0; d < headDim / 8; ++d)
        vector::StoreOp::create(b, loc, normalized.pairs[d], io.partial,
                                ValueRange{range, batch, row.head, row.query,
                                           add(columnInTile, d * 8)});
      auto firstLane = scf::IfOp::create(
          b, loc, cmp(arith::CmpIPredicate::eq, quadColumn, index(0)));
      b.setInsertionPointToStart(firstLane.thenBlock());
      Value logSum =
          arith::AddFOp::create(b, loc, results[maxAt(mt, half)],
                                math::Log2Op::create(b, loc, normalized.sum));
      memref::StoreOp::create(
          b, loc,
          arith::SelectOp::create(b, loc, normalized.positive, logSum, negInf),
          io.lse, ValueRange{range, batch, row.head, row.query});
    }
}

void KernelBuilder::rowsBarrier() {
  if (!split.specialized) {
    gpu::BarrierOp::create(b, loc);
    return;
  }
  NVVM::BarrierOp::create(b, loc, TypeRange{}, i32(kTilesBarrier),
                          i32(int32_t(32 * split.warps())),
                          NVVM::BarrierReductionAttr{}, Value{});
}

void KernelBuilder::storeStaged(ArrayRef<SmallVector<Value>> pairs) {
  // Every warp is done with K and V, and no copy into them is in flight.
  if (!split.tma)
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  rowsBarrier();
  int64_t chunksPerRow = headDim / 8;
  for (int64_t mt = 0; mt < split.rowTiles(); ++mt)
    for (int64_t half = 0; half < 2; ++half) {
      // The row's swizzle is quadRow (its other terms are multiples of 8).
      Value row = add(add(warpRow, quadRow), mt * 16 + half * 8);
      for (int64_t d = 0; d < chunksPerRow; ++d)
        vector::StoreOp::create(
            b, loc, pairs[mt * 2 + half][d], io.staging,
            ValueRange{row, add(mul(xorIndex(quadRow, d), 8), columnInTile)},
            /*nontemporal=*/false, llvm::Align(4));
    }
  rowsBarrier();

  // The output's rows on 16 bytes: one uniform branch.
  Value aligned = rowsOn16Bytes(io.out);
  auto chunkType = VectorType::get({8}, element);
  for (int64_t i = 0; i < split.warpRows * chunksPerRow / 32; ++i) {
    Value id = add(lane, i * 32);
    Value rowInWarp = div(id, chunksPerRow), chunk = rem(id, chunksPerRow);
    Value row = add(warpRow, rowInWarp);
    Value query = add(firstRow, row);
    auto exists = scf::IfOp::create(
        b, loc, cmp(arith::CmpIPredicate::slt, query, queries));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(exists.thenBlock());
    Value values = vector::LoadOp::create(
        b, loc, chunkType, io.staging,
        ValueRange{row, mul(xorIndex(chunk, rem(rowInWarp, 8)), 8)},
        /*nontemporal=*/false, llvm::Align(16));
    SmallVector<Value> at = {batch, head, query, mul(chunk, 8)};
    auto ifAligned = scf::IfOp::create(b, loc, aligned, /*withElse=*/true);
    b.setInsertionPointToStart(ifAligned.thenBlock());
    vector::StoreOp::create(b, loc, values, io.out, at, /*nontemporal=*/false,
                            llvm::Align(16));
    b.setInsertionPointToStart(ifAligned.elseBlock());
    vector::StoreOp::create(b, loc, values, io.out, at);
  }
}

void KernelBuilder::loadTileBoxes(Value map, Value head, Value first,
                                  Value tile, Value barrier, Value buffer) {
  arriveExpectingBytes(barrier, split.tileBytes());
  Value start = buffer ? mul(buffer, split.tileBytes()) : index(0);
  // Boxes at (the panel's first column, the row, the head, the batch).
  for (int64_t panel = 0; panel < headDim / 64; ++panel)
    loadBox(map, {index(panel * 64), first, head, batch}, tile,
            add(start, panel * split.panelBytes()), barrier);
}

void KernelBuilder::release(Value freedBarrier) {
  onFirstThread(rem(tid, 128), [&] { arrive(freedBarrier); });
}

void KernelBuilder::zeroRowsFrom(Value tile, Value firstRow, Value buffer) {
  auto zeros = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(VectorType::get({8}, element),
                             b.getZeroAttr(element)));
  int64_t threads = split.zeroingThreads();
  Value first = split.specialized ? rem(tid, 128) : tid;
  for (int64_t i = 0; i < split.keys * chunks / threads; ++i) {
    Value id = add(first, i * threads);
    Value row = div(id, chunks), chunk = rem(id, chunks);
    OpBuilder::InsertionGuard guard(b);
    if (firstRow) {
      auto past = scf::IfOp::create(
          b, loc, cmp(arith::CmpIPredicate::sge, row, firstRow));
      b.setInsertionPointToStart(past.thenBlock());
    }
    // Every chunk of the row, in whatever order the swizzle keeps them.
    SmallVector<Value> at = {div(chunk, 8), row, mul(rem(chunk, 8), 8)};
    if (buffer)
      at.insert(at.begin(), buffer);
    vector::StoreOp::create(b, loc, zeros, tile, at);
  }
}

void KernelBuilder::copyTile(Value source, Value head, Value first, Value limit,
                             Value tile, int64_t count, Value buffer) {
  Value lastRow = sub(limit, index(1));
  for (int64_t i = 0; i < count * chunks / split.threads(); ++i) {
    Value id = add(tid, i * split.threads());
    Value row = div(id, chunks), chunk = rem(id, chunks);
    Value sourceRow = min(add(first, row), lastRow);
    SmallVector<Value> at = {row, mul(xorIndex(chunk, rem(row, 8)), 8)};
    if (split.warpgroups)
      at = {div(chunk, 8), row, mul(xorIndex(rem(chunk, 8), rem(row, 8)), 8)};
    if (buffer)
      at.insert(at.begin(), buffer);
    copy16Bytes(tile, at, source, {batch, head, sourceRow, mul(chunk, 8)});
  }
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

SmallVector<Value> KernelBuilder::loadQuery(QueryRow low, QueryRow high,
                                            Value column) {
  // a0: (low, column), a1: (high, column), a2: (low, column + 8),
  // a3: (high, column + 8).
  SmallVector<Value> registers;
  for (int64_t i = 0; i < 4; ++i) {
    const QueryRow &row = i % 2 ? high : low;
    registers.push_back(
        loadPair(io.q, {batch, row.head, row.query, add(column, (i / 2) * 8)}));
  }
  return registers;
}

Value KernelBuilder::shuffleXor(Value value, int32_t offset) {
  return gpu::ShuffleOp::create(b, loc, value, offset, /*width=*/32,
                                gpu::ShuffleMode::XOR)
      .getShuffleResult();
}

Value KernelBuilder::quadReduce(Value value, bool sum) {
  for (int32_t offset : {1, 2}) {
    Value other = shuffleXor(value, offset);
    value = sum ? arith::AddFOp::create(b, loc, value, other).getResult()
                : arith::MaximumFOp::create(b, loc, value, other).getResult();
  }
  return value;
}

void KernelBuilder::waitForTiles() {
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  if (split.warpgroups)
    fenceAsyncProxy();
  gpu::BarrierOp::create(b, loc);
}

SmallVector<Value>
KernelBuilder::descriptors(Value base, int64_t count,
                           function_ref<int64_t(int64_t)> offset,
                           int64_t leadingBytes) {
  SmallVector<Value> result;
  for (int64_t i = 0; i < count; ++i)
    result.push_back(sharedDescriptor(add(base, offset(i)), leadingBytes,
                                      /*strideBytes=*/1024));
  return result;
}

SmallVector<Value> KernelBuilder::issueProducts(ArrayRef<SmallVector<Value>> a,
                                                ArrayRef<Value> bDescriptors,
                                                bool transposeB,
                                                SmallVector<Value> acc) {
  for (auto [registers, descriptor] : llvm::zip_equal(a, bDescriptors))
    acc = warpgroupMma(registers, descriptor, acc, transposeB);
  return acc;
}

SmallVector<Value>
KernelBuilder::warpgroupProducts(ArrayRef<SmallVector<Value>> a, Value base,
                                 function_ref<int64_t(int64_t)> offset,
                                 int64_t leadingBytes, bool transposeB,
                                 SmallVector<Value> acc) {
  SmallVector<Value> bDescriptors =
      descriptors(base, a.size(), offset, leadingBytes);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  acc = issueProducts(a, bDescriptors, transposeB, acc);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(0));
  return acc;
}

void KernelBuilder::zeroRowsForWgmma(Value tile, Value firstRow, Value buffer) {
  zeroRowsFrom(tile, firstRow, buffer);
  fenceAsyncProxy();
  if (!split.specialized) {
    gpu::BarrierOp::create(b, loc);
    return;
  }
  ownBarrier();
}

void KernelBuilder::ownBarrier() {
  NVVM::BarrierOp::create(
      b, loc, TypeRange{},
      arith::AddIOp::create(b, loc, tileGroup, i32(kOwnBarrier)), i32(128),
      NVVM::BarrierReductionAttr{}, Value{});
}

Value KernelBuilder::bufferAddress(Value tile, Value buffer) {
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, tile);
  return buffer ? add(base, mul(buffer, split.tileBytes())) : base;
}

void KernelBuilder::turnBarrier(Value group, bool wait) {
  Value id = arith::AddIOp::create(b, loc, group, i32(kTurnBarrier));
  if (wait)
    NVVM::BarrierOp::create(b, loc, TypeRange{}, id, i32(256),
                            NVVM::BarrierReductionAttr{}, Value{});
  else
    NVVM::BarrierArriveOp::create(b, loc, id, i32(256));
}

void attention::combineRanges(OpBuilder &b, Location loc, Value ranges,
                              Value partial, Value lse, Value out) {
  auto type = cast<MemRefType>(partial.getType());
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value zeroIndex = constant(0), one = constant(1);
  Value several =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, ranges, one);
  Value queries = arith::SelectOp::create(
      b, loc, several, constant(type.getDimSize(3)), zeroIndex);
  Value batches = memref::DimOp::create(b, loc, partial, 1);
  OpBuilder::InsertionGuard guard(b);
  gpu::LaunchOp launch =
      createLaunch(b, loc, {queries, constant(type.getDimSize(2)), batches},
                   constant(type.getDimSize(4)));
  Value column = launch.getThreadIds().x, query = launch.getBlockIds().x,
        head = launch.getBlockIds().y, batch = launch.getBlockIds().z;
  auto f32 = [&](double value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  };
  Value negInf = f32(-INFINITY), zero = f32(0.0);
  auto logSum = [&](Value r) -> Value {
    return memref::LoadOp::create(b, loc, lse,
                                  ValueRange{r, batch, head, query});
  };
  auto largest = scf::ForOp::create(
      b, loc, zeroIndex, ranges, one, ValueRange{negInf},
      [&](OpBuilder &, Location, Value r, ValueRange state) {
        scf::YieldOp::create(
            b, loc,
            ValueRange{arith::MaximumFOp::create(b, loc, state[0], logSum(r))});
      });
  // With no key anywhere every weight is 2^-inf = 0.
  Value seen = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                     largest.getResult(0), negInf);
  Value base =
      arith::SelectOp::create(b, loc, seen, largest.getResult(0), zero);
  auto sums = scf::ForOp::create(
      b, loc, zeroIndex, ranges, one, ValueRange{zero, zero},
      [&](OpBuilder &, Location, Value r, ValueRange state) {
        Value weight = math::Exp2Op::create(
            b, loc, arith::SubFOp::create(b, loc, logSum(r), base));
        Value value = memref::LoadOp::create(
            b, loc, partial, ValueRange{r, batch, head, query, column});
        scf::YieldOp::create(
            b, loc,
            ValueRange{arith::AddFOp::create(
                           b, loc, state[0],
                           arith::MulFOp::create(b, loc, weight, value)),
                       arith::AddFOp::create(b, loc, state[1], weight)});
      });
  Value total = sums.getResult(1);
  Value positive =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, total, zero);
  Value result = arith::SelectOp::create(
      b, loc, positive, arith::DivFOp::create(b, loc, sums.getResult(0), total),
      zero);
  memref::StoreOp::create(
      b, loc,
      arith::TruncFOp::create(
          b, loc, cast<MemRefType>(out.getType()).getElementType(), result),
      out, ValueRange{batch, head, query, column});
}
