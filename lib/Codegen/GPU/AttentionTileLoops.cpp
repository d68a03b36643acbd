//===- AttentionTileLoops.cpp - the attention kernel's key tiles ---------===//
//
// The loops of the attention kernel over its key tiles (AttentionKernel.h):
// a tile at a time, or FlashAttention-3's overlap of a tile's QKᵀ with the
// tile before's P·V; and, warp-specialized, the producer warpgroup's loop
// that loads them.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::attention;

SmallVector<Value> KernelBuilder::sequentialTiles() {
  int64_t rowTiles = split.rowTiles();
  auto loop = scf::ForOp::create(
      b, loc, tileBegin, tileLimit, index(split.keys), init,
      [&](OpBuilder &, Location, Value tileStart, ValueRange state) {
        // K of this tile has landed, and every warp is past the last
        // tile's P·V: V may be overwritten. With TMA each barrier object
        // completes a phase per tile: the tile's parity. Specialized,
        // tile n is buffer n mod 2's use n / 2, and only this
        // warpgroup waits.
        Value parity, buffer;
        if (split.specialized) {
          Value tileIndex = div(sub(tileStart, tileBegin), split.keys);
          buffer = rem(tileIndex, 2);
          parity = rem(div(tileIndex, 2), 2);
          waitForPhase(kBarrier(buffer), parity);
        } else if (split.tma) {
          parity = rem(div(sub(tileStart, tileBegin), split.keys), 2);
          gpu::BarrierOp::create(b, loc);
          onFirstThread(tid, [&] {
            loadTileBoxes(io.vMap, kvHead, tileStart, io.vs,
                          vBarrier(index(0)));
          });
          waitForPhase(kBarrier(index(0)), parity);
        } else {
          waitForTiles();
          copyTile(io.v, kvHead, tileStart, keyEnd, io.vs, split.keys);
        }

        // S = Q Kᵀ: per row tile, keys / 8 tiles of 8 keys; each K fragment
        // feeds every row tile.
        SmallVector<SmallVector<SmallVector<Value>>> scores(
            rowTiles, SmallVector<SmallVector<Value>>(
                          split.keys / 8, SmallVector<Value>(4, zero)));
        if (split.warpgroups) {
          // The warpgroup's 64 rows by the tile's keys, a wgmma m64nKk16 per
          // 16 columns of D: K-major (a key's D contiguous), step kk in
          // panel kk / 4 at byte 32·(kk mod 4) of each row.
          SmallVector<Value> acc = warpgroupProducts(
              queryRegs[0], bufferAddress(io.ks, buffer),
              [&](int64_t kk) {
                return (kk / 4) * split.panelBytes() + (kk % 4) * 32;
              },
              /*leadingBytes=*/16, /*transposeB=*/false,
              SmallVector<Value>(split.keys / 2, zero));
          // The products are done reading K.
          if (split.specialized)
            release(kFreed(buffer));
          for (int64_t n = 0; n < split.keys / 8; ++n)
            for (int64_t e = 0; e < 4; ++e)
              scores[0][n][e] = acc[n * 4 + e];
        } else {
          for (int64_t kk = 0; kk < headDim / 16; ++kk) {
            SmallVector<SmallVector<Value>> queryA;
            for (int64_t mt = 0; mt < rowTiles; ++mt)
              queryA.push_back(queryOperand(mt, kk));
            for (int64_t pair = 0; pair < split.keys / 16; ++pair) {
              SmallVector<Value> keyRegs =
                  loadSwizzled(io.ks, add(chunksThenRows, pair * 16), 2 * kk,
                               xorChunksThenRows, false);
              for (int64_t mt = 0; mt < rowTiles; ++mt) {
                auto &tiles = scores[mt];
                tiles[2 * pair] =
                    mma(queryA[mt], {keyRegs[0], keyRegs[1]}, tiles[2 * pair]);
                tiles[2 * pair + 1] = mma(queryA[mt], {keyRegs[2], keyRegs[3]},
                                          tiles[2 * pair + 1]);
              }
            }
          }
        }
        Value tileEnd = maskScores(scores, tileStart);
        SmallVector<Value> next(state.begin(), state.end());
        softmaxStep(scores, state, next, /*rescale=*/true);
        Tiles probabilities = probabilitiesOf(scores);

        // V has landed and every warp is done with K: fetch the next K.
        auto more = [&] {
          return cmp(arith::CmpIPredicate::slt, tileEnd, tileLimit);
        };
        if (split.specialized) {
          waitForPhase(vBarrier(buffer), parity);
          if (io.lengths) {
            auto cut = scf::IfOp::create(
                b, loc, cmp(arith::CmpIPredicate::sgt, tileEnd, keyEnd));
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(cut.thenBlock());
            zeroRowsForWgmma(io.vs, sub(keyEnd, tileStart), buffer);
          }
        } else if (split.tma) {
          gpu::BarrierOp::create(b, loc);
          onFirstThread(tid, [&] {
            auto next = scf::IfOp::create(b, loc, more());
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(next.thenBlock());
            loadTileBoxes(io.kMap, kvHead, tileEnd, io.ks, kBarrier(index(0)));
          });
          waitForPhase(vBarrier(index(0)), parity);
          // A cache's rows past the kv length may never have been
          // written; TMA brought them whole (only rows past the cache
          // come as zeros), and a NaN there would survive its
          // probability of 0 in P·V.
          if (io.lengths) {
            auto cut = scf::IfOp::create(
                b, loc, cmp(arith::CmpIPredicate::sgt, tileEnd, keyEnd));
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(cut.thenBlock());
            zeroRowsForWgmma(io.vs, sub(keyEnd, tileStart));
          }
        } else {
          waitForTiles();
          auto next = scf::IfOp::create(b, loc, more());
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(next.thenBlock());
          copyTile(io.k, kvHead, tileEnd, keyEnd, io.ks, split.keys);
        }

        if (split.warpgroups) {
          // O += P V, a wgmma m64nDk16 per 16 keys: V N-major (a key's D
          // contiguous), keys 16j.. from row 16j, the panels of D
          // a panel apart.
          int64_t at = accAt(0, 0);
          SmallVector<Value> acc = warpgroupProducts(
              probabilities[0], bufferAddress(io.vs, buffer),
              [](int64_t j) { return j * 16 * 128; },
              /*leadingBytes=*/split.panelBytes(), /*transposeB=*/true,
              SmallVector<Value>(next.begin() + at,
                                 next.begin() + at + headDim / 2));
          std::copy(acc.begin(), acc.end(), next.begin() + at);
          if (split.specialized)
            release(vFreed(buffer));
        } else {
          // O += P V; each V fragment feeds every row tile.
          for (int64_t j = 0; j < split.keys / 16; ++j)
            for (int64_t pair = 0; pair < headDim / 16; ++pair) {
              SmallVector<Value> valueRegs =
                  loadSwizzled(io.vs, add(rowsThenChunks, j * 16), 2 * pair,
                               xorRowsThenChunks, true);
              for (int64_t mt = 0; mt < rowTiles; ++mt)
                for (int64_t half = 0; half < 2; ++half) {
                  int64_t at = accAt(mt, 2 * pair + half);
                  SmallVector<Value> acc(next.begin() + at,
                                         next.begin() + at + 4);
                  acc =
                      mma(probabilities[mt][j],
                          {valueRegs[2 * half], valueRegs[2 * half + 1]}, acc);
                  std::copy(acc.begin(), acc.end(), next.begin() + at);
                }
            }
        }
        scf::YieldOp::create(b, loc, next);
      });
  return SmallVector<Value>(loop.getResults());
}

// Per tile n, QKᵀ of tile n and P·V of tile n - 1 are issued as two wgmma
// groups, the softmax of tile n runs once the first is done, while the
// second runs, and O is rescaled after it. K and V are double-buffered (tile
// n in buffer n mod 2); P of the last tile joins the loop state, and its P·V
// follows the loop. Before the first tile, P is zeros against a zeroed V
// buffer (specialized, the zeroed tile, which each tile warpgroup zeroes for
// itself).
SmallVector<Value> KernelBuilder::overlappedTiles() {
  Value zerosBase;
  if (split.zeroTile()) {
    zeroRowsForWgmma(io.zeros, /*firstRow=*/nullptr);
    zerosBase = bufferAddress(io.zeros, nullptr);
  }
  // Ping-pong: tile warpgroup 0 has the first turn (its own arrival
  // stands in for the other's). Each then takes as many turns as there
  // are tiles, which leaves that one arrival unmatched at the end, as in
  // FlashAttention-3.
  if (split.pingpong) {
    auto first = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tileGroup,
                              i32(0)));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(first.thenBlock());
    turnBarrier(i32(0), /*wait=*/false);
  }
  int64_t pAt = init.size();
  SmallVector<Value> initial(init);
  initial.append(split.keys / 4,
                 arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0));
  Value kBase = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, io.ks);
  Value vBase = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, io.vs);
  int64_t bytes = split.tileBytes();
  auto kOffset = [&](int64_t kk) {
    return (kk / 4) * split.panelBytes() + (kk % 4) * 32;
  };
  auto vOffset = [](int64_t j) { return j * 16 * 128; };
  int64_t outputs = headDim / 2, outputAt = accAt(0, 0);
  auto tiles = scf::ForOp::create(
      b, loc, tileBegin, tileLimit, index(split.keys), initial,
      [&](OpBuilder &, Location, Value tileStart, ValueRange state) {
        Value tileIndex = div(sub(tileStart, tileBegin), split.keys);
        Value current = rem(tileIndex, 2);
        Value other = sub(index(1), current);
        Value tileEnd = add(tileStart, split.keys);
        // K of this tile and V of the last have landed, and every
        // warpgroup is done with the tile before the last: its buffers
        // take V of this tile and K of the next.
        auto more = [&] {
          return cmp(arith::CmpIPredicate::slt, tileEnd, tileLimit);
        };
        if (split.tma) {
          // Specialized, the producer's loads; only waits here.
          if (!split.specialized) {
            gpu::BarrierOp::create(b, loc);
            onFirstThread(tid, [&] {
              loadTileBoxes(io.vMap, kvHead, tileStart, io.vs,
                            vBarrier(current), current);
              auto next = scf::IfOp::create(b, loc, more());
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(next.thenBlock());
              loadTileBoxes(io.kMap, kvHead, tileEnd, io.ks, kBarrier(other),
                            other);
            });
          }
          // Buffer n mod 2 holds tiles n, n + 2, ...: tile n is its
          // use n / 2. Before the first tile, "the last V" is the zeroed
          // buffer, which no load fills.
          waitForPhase(kBarrier(current), rem(div(tileIndex, 2), 2));
          auto previous = scf::IfOp::create(
              b, loc, cmp(arith::CmpIPredicate::ugt, tileIndex, index(0)));
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(previous.thenBlock());
          waitForPhase(vBarrier(other),
                       rem(div(sub(tileIndex, index(1)), 2), 2));
        } else {
          waitForTiles();
          copyTile(io.v, kvHead, tileStart, keyEnd, io.vs, split.keys, current);
          auto next = scf::IfOp::create(b, loc, more());
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(next.thenBlock());
          copyTile(io.k, kvHead, tileEnd, keyEnd, io.ks, split.keys, other);
        }
        SmallVector<Value> keyDescriptors =
            descriptors(add(kBase, mul(current, bytes)), headDim / 16, kOffset,
                        /*leadingBytes=*/16);
        Value lastValues = add(vBase, mul(other, bytes));
        if (split.zeroTile())
          lastValues = arith::SelectOp::create(
              b, loc, cmp(arith::CmpIPredicate::eq, tileIndex, index(0)),
              zerosBase, lastValues);
        SmallVector<Value> valueDescriptors =
            descriptors(lastValues, split.keys / 16, vOffset,
                        /*leadingBytes=*/split.panelBytes());
        SmallVector<SmallVector<Value>> previous;
        for (int64_t j = 0; j < split.keys / 16; ++j)
          previous.emplace_back(state.begin() + pAt + 4 * j,
                                state.begin() + pAt + 4 * j + 4);
        if (split.pingpong)
          waitForTurn();
        NVVM::WgmmaFenceAlignedOp::create(b, loc);
        SmallVector<Value> acc =
            issueProducts(queryRegs[0], keyDescriptors, /*transposeB=*/false,
                          SmallVector<Value>(split.keys / 2, zero));
        NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
        SmallVector<Value> output = issueProducts(
            previous, valueDescriptors, /*transposeB=*/true,
            SmallVector<Value>(state.begin() + outputAt,
                               state.begin() + outputAt + outputs));
        NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
        if (split.pingpong)
          passTurn();
        // This tile's scores are done (specialized, its K buffer is
        // free); the last tile's P·V may run on.
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(1));
        if (split.specialized)
          release(kFreed(current));
        Tiles scores(1);
        for (int64_t n = 0; n < split.keys / 8; ++n)
          scores[0].emplace_back(acc.begin() + 4 * n, acc.begin() + 4 * n + 4);
        maskScores(scores, tileStart);
        SmallVector<Value> next(state.begin(), state.end());
        SmallVector<Value> corrections =
            softmaxStep(scores, state, next, /*rescale=*/false);
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(0));
        // Specialized, the last tile's V buffer is free (before the first
        // tile that was the zeroed tile).
        if (split.specialized) {
          auto loaded = scf::IfOp::create(
              b, loc, cmp(arith::CmpIPredicate::ugt, tileIndex, index(0)));
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(loaded.thenBlock());
          release(vFreed(other));
        }
        // Packed only now: the new P may take the registers of the last
        // P, which the P·V just waited for was reading.
        Tiles probabilities = probabilitiesOf(scores);
        for (int64_t i = 0; i < outputs; ++i)
          next[outputAt + i] = arith::MulFOp::create(b, loc, output[i],
                                                     corrections[(i % 4) / 2]);
        for (int64_t j = 0; j < split.keys / 16; ++j)
          std::copy(probabilities[0][j].begin(), probabilities[0][j].end(),
                    next.begin() + pAt + 4 * j);
        scf::YieldOp::create(b, loc, next);
      });
  // The last tile's P·V, from the buffer its V went to.
  SmallVector<Value> state(tiles.getResults());
  SmallVector<Type> types(outputs, b.getF32Type());
  auto last = scf::IfOp::create(
      b, loc, types, cmp(arith::CmpIPredicate::slt, tileBegin, tileLimit),
      /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    SmallVector<Value> output(state.begin() + outputAt,
                              state.begin() + outputAt + outputs);
    b.setInsertionPointToStart(last.elseBlock());
    scf::YieldOp::create(b, loc, output);
    b.setInsertionPointToStart(last.thenBlock());
    if (!split.tma)
      waitForTiles();
    Value count = arith::CeilDivUIOp::create(b, loc, sub(tileLimit, tileBegin),
                                             index(split.keys));
    Value lastIndex = sub(count, index(1));
    Value buffer = rem(lastIndex, 2);
    if (split.tma) {
      waitForPhase(vBarrier(buffer), rem(div(lastIndex, 2), 2));
      // The rows of the last tile past the kv length (see the other
      // loop).
      if (io.lengths) {
        Value lastStart = add(tileBegin, mul(lastIndex, split.keys));
        auto cut = scf::IfOp::create(
            b, loc,
            cmp(arith::CmpIPredicate::sgt, add(lastStart, split.keys), keyEnd));
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(cut.thenBlock());
        zeroRowsForWgmma(io.vs, sub(keyEnd, lastStart), buffer);
      }
    }
    SmallVector<SmallVector<Value>> finalP;
    for (int64_t j = 0; j < split.keys / 16; ++j)
      finalP.emplace_back(state.begin() + pAt + 4 * j,
                          state.begin() + pAt + 4 * j + 4);
    SmallVector<Value> valueDescriptors =
        descriptors(add(vBase, mul(buffer, bytes)), split.keys / 16, vOffset,
                    /*leadingBytes=*/split.panelBytes());
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    output =
        issueProducts(finalP, valueDescriptors, /*transposeB=*/true, output);
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(0));
    scf::YieldOp::create(b, loc, output);
  }
  state.resize(pAt);
  for (int64_t i = 0; i < outputs; ++i)
    state[outputAt + i] = last.getResult(i);
  return state;
}

void KernelBuilder::produce() {
  scf::ForOp::create(
      b, loc, tileBegin, tileLimit, index(split.keys), ValueRange{},
      [&](OpBuilder &, Location, Value tileStart, ValueRange) {
        // Tile n goes to buffer n mod 2 as its use u = n / 2, which waits
        // for the buffer's freed barrier object to complete phase u - 1.
        Value tileIndex = div(sub(tileStart, tileBegin), split.keys);
        Value buffer = rem(tileIndex, 2), use = div(tileIndex, 2);
        auto waitUntilFreed = [&](Value freed) {
          auto reused = scf::IfOp::create(
              b, loc, cmp(arith::CmpIPredicate::ugt, use, index(0)));
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(reused.thenBlock());
          waitForPhase(freed, rem(sub(use, index(1)), 2));
        };
        waitUntilFreed(kFreed(buffer));
        loadTileBoxes(io.kMap, kvHead, tileStart, io.ks, kBarrier(buffer),
                      buffer);
        waitUntilFreed(vFreed(buffer));
        loadTileBoxes(io.vMap, kvHead, tileStart, io.vs, vBarrier(buffer),
                      buffer);
        scf::YieldOp::create(b, loc);
      });
}
