//===- TileProjections.cpp - projections as cache-blocked matmuls ---------===//
//
// A projection y[m, n] += a[m, k] * w[n, k] (nn.Linear weights, any number
// of rows m, usually only known at run time) becomes loops whose innermost
// step is a static MR x NR register block, which tfm-cpu-vectorize turns
// into broadcast + FMA code:
//
//   scf.forall (j) in (N / NB)                     // threads over N blocks
//     scf.for k0 = 0 to K step KC                  // a Kᵀ panel per step
//       wt = f32 w[j*NB : +NB, k0 : +KC]ᵀ          // [NB/NR, KC, NR]
//       scf.for c0 = 0 to M - M % MR step MC       // chunks of rows
//         scf.for m0 = c0 to c0 + MC step MR     // the chunk's rows, in L1
//           scf.for n1 = 0 to NB step NR           // a [KC, NR] panel, L2
//             y[m0 : +MR, n1 : +NR] += a[m0 : +MR, k0 : +KC] · wt[n1 / NR]
//       scf.for m0 = M - M % MR to M               // the remaining rows
//         scf.for n1 = 0 to NB step NR
//           y[m0, n1 : +NR] += a[m0, k0 : +KC] · wt[n1 / NR]
//
// Columns left over by whole NR-blocks (N % NR) get the same loops with
// one narrower block, NR = NB = N % NR. With AVX-512 BF16 (bf16-dot), bf16
// weights are packed as pairs of k for vdpbf16ps instead of widened, and
// the loops over n1 and m0 swap places: each [KC, NR] panel of pairs (or
// of AMX tiles) stays in L1 while a chunk of rows (in L2) passes it.
//
//===----------------------------------------------------------------------===//

#include "ColumnBlocks.h"
#include "FusionSets.h"
#include "PackedWeights.h"
#include "ProjectionBlocks.h"
#include "ProjectionGroups.h"

#include "tfm/Codegen/LoopSchedule.h"
#include "tfm/Codegen/Passes.h"
#include "tfm/Codegen/Projection.h"
#include "tfm/Dialect/Tfm/Utils/LinalgBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

#include <numeric>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUTILEPROJECTIONSPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::projection;

namespace {
using Iter = utils::IteratorType;

/// One [M, NB] column block of `projection`: `init` (its initial values)
/// plus a[:, :] · w[nBlock : +NB, :]ᵀ (with w's columns scaled by the
/// projection's column scale, if it has one).
using ColumnBlockFn =
    function_ref<Value(OpBuilder &, Location, Value a,
                       linalg::GenericOp projection, Value init, Value nBlock)>;

/// `projection` if it transforms its rows as it reads them, else null.
linalg::GenericOp transformOf(linalg::GenericOp projection) {
  return transformsRows(projection) ? projection : linalg::GenericOp();
}

/// The value a projection's accumulator starts from: its fill value, or
/// null when it adds to the values of its init.
Value fillValueOf(linalg::GenericOp projection) {
  if (auto fill = projection.getDpsInits()[0].getDefiningOp<linalg::FillOp>())
    return fill.getInputs()[0];
  return Value();
}

/// The epilogue of a viewed group on one column block: the same op on the
/// block's view [M, NB / unit, ...] (and its slices) of the projection's
/// block, writing the same view of `out`. Its other operands do not depend
/// on C (a table per row and pair), so they are read whole.
Value viewedEpilogueBlock(OpBuilder &b, Location loc, ProjectionGroup &group,
                          Value projected, Value out) {
  tensor::ExpandShapeOp view = group.view;
  linalg::GenericOp epilogue = group.viewedEpilogue;
  int64_t block = cast<RankedTensorType>(out.getType()).getDimSize(1);
  OpFoldResult rowCount = tensor::getMixedSize(b, loc, out, 0);
  auto viewOf = [&](Value columns) -> Value {
    auto type = cast<RankedTensorType>(columns.getType());
    SmallVector<int64_t> shape(view.getResultType().getShape());
    shape[0] = type.getDimSize(0);
    shape[1] = block / group.columnUnit();
    SmallVector<OpFoldResult> sizes{rowCount};
    for (int64_t size : ArrayRef<int64_t>(shape).drop_front())
      sizes.push_back(b.getIndexAttr(size));
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), columns,
        view.getReassociationIndices(), sizes);
  };
  Value blockView = viewOf(projected);
  SmallVector<Value> inputs;
  for (Value input : epilogue.getDpsInputs()) {
    auto slice = input.getDefiningOp<tensor::ExtractSliceOp>();
    if (input == view.getResult()) {
      inputs.push_back(blockView);
    } else if (slice && slice.getSource() == view.getResult()) {
      SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
      sizes[0] = rowCount;
      sizes[1] = b.getIndexAttr(block / group.columnUnit());
      inputs.push_back(tensor::ExtractSliceOp::create(
          b, loc, blockView, slice.getMixedOffsets(), sizes,
          slice.getMixedStrides()));
    } else {
      inputs.push_back(input);
    }
  }
  Value outView = viewOf(out);
  auto tiled = linalg::GenericOp::create(
      b, loc, TypeRange{outView.getType()}, inputs, ValueRange{outView},
      epilogue.getIndexingMapsArray(), epilogue.getIteratorTypesArray());
  IRMapping mapping;
  epilogue.getRegion().cloneInto(&tiled.getRegion(), mapping);
  return tensor::CollapseShapeOp::create(b, loc, out.getType(),
                                         tiled.getResult(0),
                                         view.getReassociationIndices());
}

/// The [M, NB] block at column nBlock of `group`'s result, with `out` the
/// block of the buffer it is written to: each projection's block (in `out`
/// itself without an epilogue), then the epilogue tiled to it, writing
/// `out`.
Value plainColumnBlock(OpBuilder &b, Location loc, ProjectionGroup &group,
                       Value out, Value nBlock, ColumnBlockFn columnBlock) {
  Value a = group.rows();
  OpFoldResult rowCount = tensor::getMixedSize(b, loc, a, 0);
  int64_t block = cast<RankedTensorType>(out.getType()).getDimSize(1);
  auto initialBlock = [&](linalg::GenericOp projection, Value target) {
    if (Value fillValue = fillValueOf(projection))
      return linalg::FillOp::create(b, loc, fillValue, target).getResult(0);
    return target;
  };
  if (!group.epilogue) {
    linalg::GenericOp projection = group.projections.front();
    return columnBlock(b, loc, a, projection, initialBlock(projection, out),
                       nBlock);
  }

  IRMapping blocks;
  for (linalg::GenericOp projection : group.projections) {
    Value target;
    // Scratch of its own for each projection (CSE would merge two equal
    // tensor.empty + fill, and bufferization then copy one into the other).
    if (fillValueOf(projection)) {
      std::optional<int64_t> staticRows = getConstantIntValue(rowCount);
      SmallVector<Value> dynamicRows;
      if (!staticRows)
        dynamicRows.push_back(cast<Value>(rowCount));
      target = bufferization::AllocTensorOp::create(
          b, loc,
          RankedTensorType::get(
              {staticRows.value_or(ShapedType::kDynamic), block},
              b.getF32Type()),
          dynamicRows);
    } else
      target = slice2D(b, loc, projection.getDpsInits()[0], b.getIndexAttr(0),
                       nBlock, rowCount, b.getIndexAttr(block));
    blocks.map(projection->getResult(0),
               columnBlock(b, loc, a, projection,
                           initialBlock(projection, target), nBlock));
  }
  // The epilogue on this block: a copy, tiled, with its reads of the
  // projections' results replaced by their blocks and its output by `out`
  // (the same block of the loops' buffer, which starts as its init).
  Operation *whole = b.clone(*group.epilogue);
  FailureOr<TilingResult> tiled =
      cast<TilingInterface>(whole).getTiledImplementation(
          b, ArrayRef<OpFoldResult>{b.getIndexAttr(0), nBlock},
          ArrayRef<OpFoldResult>{rowCount, b.getIndexAttr(block)});
  whole->erase();
  assert(succeeded(tiled) && "an elementwise linalg op tiles");
  auto tiledEpilogue = cast<linalg::GenericOp>(tiled->tiledOps.front());
  OpOperand *init = tiledEpilogue.getDpsInitOperand(0);
  Operation *initSlice = init->get().getDefiningOp();
  init->set(out);
  if (initSlice && initSlice->use_empty())
    initSlice->erase();
  for (OpOperand &operand : tiledEpilogue->getOpOperands()) {
    auto slice = operand.get().getDefiningOp<tensor::ExtractSliceOp>();
    if (Value projected =
            slice ? blocks.lookupOrNull(slice.getSource()) : Value()) {
      operand.set(projected);
      slice->erase();
    }
  }
  return tiledEpilogue->getResult(0);
}

/// The [M, NB] block at column nBlock of `group`'s result, written to `out`:
/// plainColumnBlock's, then, with a viewed epilogue, that op on it (the
/// block in scratch of its own: the op reads each pair's two members).
Value groupColumnBlock(OpBuilder &b, Location loc, ProjectionGroup &group,
                       Value out, Value nBlock, ColumnBlockFn columnBlock) {
  if (!group.viewedEpilogue)
    return plainColumnBlock(b, loc, group, out, nBlock, columnBlock);
  auto outType = cast<RankedTensorType>(out.getType());
  Type viewedType = getElementTypeOrSelf(group.viewed()->getResult(0));
  SmallVector<Value> dynamicRows;
  if (outType.isDynamicDim(0))
    dynamicRows.push_back(tensor::DimOp::create(b, loc, out, 0));
  Value scratch = bufferization::AllocTensorOp::create(
      b, loc, outType.clone(viewedType), dynamicRows);
  Value block = plainColumnBlock(b, loc, group, scratch, nBlock, columnBlock);
  return viewedEpilogueBlock(b, loc, group, block, out);
}

/// Columns [begin, begin + count) of the loops' buffer: the columns
/// [row0, row0 + count) of `group`'s result (its weight rows).
struct ColumnRange {
  ProjectionGroup *group;
  int64_t begin, count, row0;
};

/// The loops of the file comment over contiguous column ranges of the
/// loops' buffer `shared` (each count a multiple of `block`): threads over
/// column blocks, each computed by `columnBlock` for the group its range
/// names (an scf.index_switch where there are several) and written into
/// its part of `shared`. Returns the updated `shared`.
Value tileColumns(RewriterBase &rewriter, Location loc,
                  ArrayRef<ColumnRange> ranges, Value shared, int64_t block,
                  ColumnBlockFn columnBlock) {
  OpFoldResult rowCount =
      tensor::getMixedSize(rewriter, loc, ranges.front().group->rows(), 0);
  int64_t blocks = 0;
  SmallVector<int64_t> firstBlocks;
  for (const ColumnRange &range : ranges) {
    firstBlocks.push_back(blocks);
    blocks += range.count / block;
  }
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  auto forall = scf::ForallOp::create(
      rewriter, withStaticSchedule(loc),
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(blocks)}, ValueRange{shared},
      std::nullopt);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(forall.getBody()->getTerminator());
  Value j = forall.getInductionVar(0);
  Value nShared = arith::AddIOp::create(
      rewriter, loc, arith::MulIOp::create(rewriter, loc, j, index(block)),
      index(ranges.front().begin));
  Value sharedBlock = forall.getRegionIterArgs()[0];
  Value out = slice2D(rewriter, loc, sharedBlock, rewriter.getIndexAttr(0),
                      nShared, rowCount, rewriter.getIndexAttr(block));
  auto blockOf = [&](const ColumnRange &range) {
    Value nBlock = arith::AddIOp::create(rewriter, loc, nShared,
                                         index(range.row0 - range.begin));
    return groupColumnBlock(rewriter, loc, *range.group, out, nBlock,
                            columnBlock);
  };
  Value result;
  if (ranges.size() == 1) {
    result = blockOf(ranges.front());
  } else {
    // The range of block j: how many later ranges start at or before it.
    Value which = index(0);
    for (int64_t i = 1, e = ranges.size(); i < e; ++i) {
      Value reached = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::uge, j, index(firstBlocks[i]));
      which = arith::AddIOp::create(
          rewriter, loc, which,
          arith::SelectOp::create(rewriter, loc, reached, index(1), index(0)));
    }
    SmallVector<int64_t> cases =
        llvm::to_vector(llvm::seq<int64_t>(0, ranges.size() - 1));
    auto choice = scf::IndexSwitchOp::create(
        rewriter, loc, TypeRange{out.getType()}, which, cases, cases.size());
    for (auto [i, range] : llvm::enumerate(ranges)) {
      Region &region = i + 1 < ranges.size() ? choice.getCaseRegions()[i]
                                             : choice.getDefaultRegion();
      rewriter.setInsertionPointToStart(&region.emplaceBlock());
      scf::YieldOp::create(rewriter, loc, blockOf(range));
    }
    rewriter.setInsertionPointAfter(choice);
    result = choice.getResult(0);
  }
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  OpFoldResult one = rewriter.getIndexAttr(1);
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, result, sharedBlock,
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0), nShared},
      ArrayRef<OpFoldResult>{rowCount, rewriter.getIndexAttr(block)},
      ArrayRef<OpFoldResult>{one, one});
  return forall.getResult(0);
}

/// The [M, N] view of the caller's buffer that `root`'s result is written
/// to (callerDestination), so that the loops write there directly; else
/// null (the result gets a buffer of its own, which would then be copied
/// out: 65 MB of logits at S = 512).
Value outputView(RewriterBase &rewriter, linalg::GenericOp root) {
  auto materialize = callerDestination(root);
  if (!materialize)
    return Value();
  auto expand = materialize.getSource().getDefiningOp<tensor::ExpandShapeOp>();
  Location loc = root.getLoc();
  Value caller = bufferization::ToTensorOp::create(
      rewriter, loc, expand.getResultType(), materialize.getDest(),
      /*restrict=*/true, /*writable=*/true);
  return tensor::CollapseShapeOp::create(rewriter, loc, caller,
                                         expand.getReassociationIndices());
}

/// Replaces `groups` by the loops of the file comment. One group: over the
/// columns that whole `main` blocks cover, then, where N has columns left
/// (a vocabulary of 1000 with 32-column blocks), over those with `tail`.
/// Several (siblings over the same rows, without tails): over all their
/// columns in one loop, side by side in one buffer, each group's result a
/// column view of it. For fewer rows than a register block, the streamed
/// form, unless every weight is packed once (`prepack`).
void tileProjectionGroups(RewriterBase &rewriter,
                          MutableArrayRef<ProjectionGroup> groups,
                          Blocking main, std::optional<Blocking> tail,
                          int64_t lanes, bool bf16Dot, bool amx, bool prepack) {
  ProjectionGroup &first = groups.front();
  linalg::GenericOp root = first.root();
  Location loc = root.getLoc();
  rewriter.setInsertionPoint(root);
  auto columnsOf = [](ProjectionGroup &group) {
    Value w = group.projections.front().getDpsInputs()[1];
    return cast<RankedTensorType>(w.getType()).getDimSize(0);
  };
  // The loops write into a buffer of their own: an alloc_tensor, which CSE
  // never merges with another projection's (a shared tensor.empty would
  // make bufferization copy one of them). A projection's filled init is
  // filled block by block, by the thread that owns the block.
  auto rootType = cast<RankedTensorType>(root->getResult(0).getType());
  auto allocate = [&](int64_t columns) -> Value {
    SmallVector<Value> rowCount;
    if (rootType.isDynamicDim(0))
      rowCount.push_back(tensor::DimOp::create(rewriter, loc, first.rows(), 0));
    return bufferization::AllocTensorOp::create(
        rewriter, loc, rootType.clone({rootType.getDimSize(0), columns}),
        rowCount);
  };
  Value shared;
  SmallVector<ColumnRange> mainRanges, tailRanges;
  int64_t columns = 0;
  if (groups.size() == 1) {
    columns = columnsOf(first);
    int64_t mainColumns = tail ? columns - tail->block : columns;
    if (mainColumns)
      mainRanges.push_back({&first, 0, mainColumns, 0});
    if (tail)
      tailRanges.push_back({&first, mainColumns, tail->block, mainColumns});
    shared = root.getDpsInits()[0];
    if (root == first.projections.front())
      if (auto fill = shared.getDefiningOp<linalg::FillOp>())
        shared = fill.getOutputs()[0];
    if (auto collapse = shared.getDefiningOp<tensor::CollapseShapeOp>())
      if (collapse.getSrc().getDefiningOp<tensor::EmptyOp>())
        shared = collapse.getSrc(); // the [M, N] view of a [B, S, N] epilogue
    if (Value output = outputView(rewriter, root))
      shared = output;
    else if (shared.getDefiningOp<tensor::EmptyOp>())
      shared = allocate(columns);
  } else {
    for (ProjectionGroup &group : groups) {
      mainRanges.push_back({&group, columns, columnsOf(group), 0});
      columns += mainRanges.back().count;
    }
    shared = allocate(columns);
  }

  auto loops = [&](OpBuilder &b, Location l, int64_t mainBlock,
                   int64_t tailBlock, ColumnBlockFn mainFn,
                   ColumnBlockFn tailFn) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
    Value result = shared;
    if (!mainRanges.empty())
      result = tileColumns(rewriter, l, mainRanges, result, mainBlock, mainFn);
    if (!tailRanges.empty())
      result = tileColumns(rewriter, l, tailRanges, result, tailBlock, tailFn);
    scf::YieldOp::create(rewriter, l, result);
  };
  // Packed and streamed bf16 pairs read the rows rounded to bf16 after the
  // projection's transform and column scale (preparedRows), and streamed
  // f32 blocks the rows so prepared in f32: made once, before the column
  // loop, rather
  // than in every column block (a 32000-column LM head rounded the same
  // rows 250 times, 27% of its time at 128 rows).
  auto pairsFor = [&](linalg::GenericOp projection) {
    Value w = projection.getDpsInputs()[1];
    return bf16Dot &&
           (canPackBF16Dot(w, main) || (tail && canPackBF16Dot(w, *tail)));
  };
  auto prepareOnce = [&](OpBuilder &b, Location l,
                         function_ref<bool(linalg::GenericOp)> reads,
                         Type element) {
    llvm::DenseMap<Operation *, Value> prepared;
    for (ProjectionGroup &group : groups) {
      Value rows = group.rows();
      Value shared; // rows times a column scale, shared by siblings
      Value sharedScale;
      for (linalg::GenericOp projection : group.projections) {
        Value scale = columnScaleOf(projection);
        linalg::GenericOp transform = transformOf(projection);
        if (!reads(projection) ||
            (!scale && !transform &&
             getElementTypeOrSelf(rows.getType()) == element))
          continue;
        if (!transform && shared && scale == sharedScale) {
          prepared[projection] = shared;
          continue;
        }
        int64_t depth =
            cast<RankedTensorType>(projection.getDpsInputs()[1].getType())
                .getDimSize(1);
        Value copy =
            preparedRows(b, l, rows, scale, transform, b.getIndexAttr(0),
                         tensor::getMixedSize(b, l, rows, 0), b.getIndexAttr(0),
                         depth, element);
        prepared[projection] = copy;
        if (!transform) {
          shared = copy;
          sharedScale = scale;
        }
      }
    }
    return prepared;
  };
  auto roundOnce = [&](OpBuilder &b, Location l) {
    return prepareOnce(b, l, pairsFor, b.getBF16Type());
  };
  // make(rows) once per call for each of the rows that projections' pairs
  // read (rounded, or their group's own), by those rows.
  auto perPairRows = [&](const llvm::DenseMap<Operation *, Value> &rounded,
                         function_ref<Value(Value rows)> make) {
    llvm::DenseMap<Value, Value> made;
    for (ProjectionGroup &group : groups)
      for (linalg::GenericOp projection : group.projections) {
        Value rows = rounded.lookup(projection);
        if (!rows)
          rows = group.rows();
        if (pairsFor(projection) && !made.count(rows))
          made[rows] = make(rows);
      }
    return made;
  };
  // On AMX tiles, the rows after the whole 32-row blocks are one more
  // block, padded with rows of zeros once per call.
  auto padOnce = [&](OpBuilder &b, Location l,
                     const llvm::DenseMap<Operation *, Value> &rounded) {
    if (!amx)
      return llvm::DenseMap<Value, Value>();
    return perPairRows(rounded,
                       [&](Value rows) { return paddedTailRows(b, l, rows); });
  };
  // The weights packed once (prepack-weights), by projection: f32 (never
  // bf16 pairs), all their columns, the tail's in a zero-padded panel.
  llvm::DenseMap<Operation *, Value> prepacked;
  auto packedWith = [bf16Dot,
                     amx](const Blocking &blocking,
                          const llvm::DenseMap<Operation *, Value> &rounded,
                          const llvm::DenseMap<Value, Value> &tails,
                          const llvm::DenseMap<Operation *, Value> &once) {
    return [blocking, bf16Dot, amx, &rounded, &tails,
            &once](OpBuilder &b, Location l, Value a,
                   linalg::GenericOp projection, Value init, Value nBlock) {
      Value w = projection.getDpsInputs()[1];
      bool pairs = bf16Dot && canPackBF16Dot(w, blocking);
      Value scale = columnScaleOf(projection);
      linalg::GenericOp transform = transformOf(projection);
      if (Value roundedRows = pairs ? rounded.lookup(projection) : Value()) {
        a = roundedRows;
        scale = Value();
        transform = linalg::GenericOp();
      }
      return packedColumnBlock(
          b, l, a, w, scale, transform, init, nBlock, blocking, pairs, amx,
          pairs ? tails.lookup(a) : Value(), once.lookup(projection));
    };
  };
  // The streamed forms read the rows prepared once per call: in bf16 for
  // dot products, in f32 for multiply-add blocks, where the map has them.
  // The streamed form of a column block of `block` weight rows of `w`:
  // bf16 dot products, f32 multiply-add blocks, or one row at a time.
  enum class Streamed { Dot, FMA, Rows };
  auto streamedForm = [lanes, bf16Dot](Value w, int64_t block) {
    if (bf16Dot && canStreamBF16Dot(w, block))
      return Streamed::Dot;
    return canStreamFMA(w, block, lanes) ? Streamed::FMA : Streamed::Rows;
  };
  auto streamedWith = [lanes, streamedForm](
                          const llvm::DenseMap<Operation *, Value> &asBF16,
                          const llvm::DenseMap<Operation *, Value> &asF32) {
    return [lanes, streamedForm, &asBF16,
            &asF32](OpBuilder &b, Location l, Value a,
                    linalg::GenericOp projection, Value init, Value nBlock) {
      Value w = projection.getDpsInputs()[1];
      int64_t block = cast<RankedTensorType>(init.getType()).getDimSize(1);
      Value scale = columnScaleOf(projection);
      linalg::GenericOp transform = transformOf(projection);
      // Rows with nothing to prepare are read as they are.
      auto preparedIn = [&](const llvm::DenseMap<Operation *, Value> &map,
                            Type element) {
        Value rows = map.lookup(projection);
        assert((rows || (!scale && !transform &&
                         getElementTypeOrSelf(a.getType()) == element)) &&
               "streamed blocks read rows prepared once per call");
        (void)element;
        return rows ? rows : a;
      };
      switch (streamedForm(w, block)) {
      case Streamed::Dot:
        return streamedDotColumnBlock(b, l, preparedIn(asBF16, b.getBF16Type()),
                                      w, init, nBlock);
      case Streamed::FMA:
        return streamedFMAColumnBlock(b, l, preparedIn(asF32, b.getF32Type()),
                                      w, init, nBlock, lanes);
      case Streamed::Rows:
        break;
      }
      return streamedColumnBlock(b, l, a, w, scale, transform, init, nBlock,
                                 lanes,
                                 arith::ConstantIndexOp::create(b, l, 0));
    };
  };
  ColumnBlocks blocks = columnBlocks(groups, main, tail.has_value());
  main.block = blocks.packed;
  if (prepack)
    for (ProjectionGroup &group : groups)
      for (linalg::GenericOp projection : group.projections)
        if (Value once = prepackedWeight(rewriter, projection, main.columns))
          prepacked[projection] = once;
  // Every weight packed once: the packed form for any number of rows, the
  // raw weights not read at all (tfm-cpu-prepare-weights then drops them
  // from the entry point). Streaming them would gain little: at one row,
  // the packed panels stream at the same rate.
  bool allPrepacked = llvm::all_of(groups, [&](ProjectionGroup &group) {
    return llvm::all_of(group.projections, [&](linalg::GenericOp p) {
      return prepacked.count(p);
    });
  });
  int64_t streamBlock = blocks.streamed;
  int64_t tailBlock = tail ? tail->block : 0;
  Value rows = tensor::DimOp::create(rewriter, loc, first.rows(), 0);
  auto allWeights = [&](function_ref<bool(Value w)> ok) {
    return llvm::all_of(groups, [&](ProjectionGroup &group) {
      return llvm::all_of(group.projections, [&](linalg::GenericOp p) {
        return ok(p.getDpsInputs()[1]);
      });
    });
  };
  // A few rows (a decode step, a short prompt) stream the weights in
  // place: packing them would cost more than the products. Through f32
  // multiply-adds, blocks of 4 rows pay up to kFMAStreamRows, else only
  // below a register block. bf16 weights through dot products stream for
  // more rows: reading them in place beats packing them into pairs up to
  // kDotStreamRows rows; on AMX tiles packing pays from 16 rows on, and
  // tiles that read the weights in place from kInPlaceAMXMinRows.
  auto allStream = [&](Streamed form) {
    return allWeights(
        [&](Value w) { return streamedForm(w, streamBlock) == form; });
  };
  int64_t streamRows = main.rows;
  if (allStream(Streamed::Dot))
    streamRows = std::max(streamRows, amx ? kAMXTileRows : kDotStreamRows);
  else if (allStream(Streamed::FMA))
    streamRows = std::max(streamRows, kFMAStreamRows);
  // bf16 weights on AMX tiles whose whole 32-column blocks cover N.
  bool inPlaceAMX =
      amx && bf16Dot && !tail && main.columns == kAMXBlockColumns &&
      main.block % kAMXBlockColumns == 0 && allWeights([&](Value w) {
        return canPackBF16Dot(w, main) && canStreamBF16Dot(w, main.block);
      });
  if (inPlaceAMX)
    streamRows = kInPlaceAMXMinRows;
  // The packed forms, for rows from a register block on.
  auto packedForms = [&](OpBuilder &b, Location l) {
    llvm::DenseMap<Operation *, Value> rounded = roundOnce(b, l);
    auto packed = [&](OpBuilder &pb, Location pl) {
      llvm::DenseMap<Value, Value> tails = padOnce(pb, pl, rounded);
      loops(pb, pl, main.block, tailBlock,
            packedWith(main, rounded, tails, prepacked),
            packedWith(tail ? *tail : main, rounded, tails, prepacked));
    };
    if (!inPlaceAMX) {
      packed(b, l);
      return;
    }
    // Up to kInPlaceAMXRows rows, AMX tiles read the weights in place.
    Value fits = arith::CmpIOp::create(
        b, l, arith::CmpIPredicate::ule, rows,
        arith::ConstantIndexOp::create(b, l, kInPlaceAMXRows));
    auto choice = scf::IfOp::create(
        b, l, fits,
        [&](OpBuilder &ib, Location il) {
          llvm::DenseMap<Value, Value> pairsOf =
              perPairRows(rounded, [&](Value rows) {
                return inPlaceRowPairs(ib, il, rows);
              });
          auto rowsOf = [&](linalg::GenericOp projection, Value a) {
            Value copy = rounded.lookup(projection);
            return copy ? copy : a;
          };
          auto inPlace = [&](OpBuilder &cb, Location cl, Value a,
                             linalg::GenericOp projection, Value init,
                             Value nBlock) {
            Value r = rowsOf(projection, a);
            return inPlaceAMXColumnBlock(cb, cl, r, pairsOf.lookup(r),
                                         projection.getDpsInputs()[1], init,
                                         nBlock);
          };
          loops(ib, il, main.block, tailBlock, inPlace, inPlace);
        },
        [&](OpBuilder &ib, Location il) { packed(ib, il); });
    scf::YieldOp::create(b, l, choice.getResults());
  };
  Operation *branch;
  if (allPrepacked) {
    auto region = scf::ExecuteRegionOp::create(rewriter, loc,
                                               TypeRange{shared.getType()});
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.createBlock(&region.getRegion());
    packedForms(rewriter, loc);
    branch = region;
  } else {
    Value fewRows = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ult, rows,
        arith::ConstantIndexOp::create(rewriter, loc, streamRows));
    branch = scf::IfOp::create(
        rewriter, loc, fewRows,
        [&](OpBuilder &b, Location l) {
          // Whether a column block of the projection streams as `form`.
          auto streamsAs = [&](Streamed form) {
            return [&, form](linalg::GenericOp projection) {
              Value w = projection.getDpsInputs()[1];
              return streamedForm(w, streamBlock) == form ||
                     (tail && streamedForm(w, tailBlock) == form);
            };
          };
          llvm::DenseMap<Operation *, Value> asBF16 =
              prepareOnce(b, l, streamsAs(Streamed::Dot), b.getBF16Type());
          llvm::DenseMap<Operation *, Value> asF32 =
              prepareOnce(b, l, streamsAs(Streamed::FMA), b.getF32Type());
          auto streamed = streamedWith(asBF16, asF32);
          loops(b, l, streamBlock, tailBlock, streamed, streamed);
        },
        packedForms);
  }
  // A viewed group's root is its epilogue, on the view's shape.
  auto replaceRoot = [&](ProjectionGroup &group, Value columns) {
    if (group.view) {
      auto viewType =
          cast<RankedTensorType>(group.root()->getResult(0).getType());
      SmallVector<OpFoldResult> sizes{
          tensor::getMixedSize(rewriter, loc, columns, 0)};
      for (int64_t size : viewType.getShape().drop_front())
        sizes.push_back(rewriter.getIndexAttr(size));
      columns = tensor::ExpandShapeOp::create(
          rewriter, loc, viewType, columns,
          group.view.getReassociationIndices(), sizes);
    }
    rewriter.replaceOp(group.root(), columns);
  };
  if (groups.size() == 1) {
    replaceRoot(first, branch->getResult(0));
  } else {
    for (const ColumnRange &range : mainRanges) {
      OpFoldResult rowCount =
          tensor::getMixedSize(rewriter, loc, branch->getResult(0), 0);
      replaceRoot(*range.group,
                  slice2D(rewriter, loc, branch->getResult(0),
                          rewriter.getIndexAttr(0),
                          rewriter.getIndexAttr(range.begin), rowCount,
                          rewriter.getIndexAttr(range.count)));
    }
  }
  // What the loops computed on the way to each root.
  for (ProjectionGroup &group : groups) {
    if (group.view) {
      for (Operation *user : llvm::make_early_inc_range(group.view->getUsers()))
        rewriter.eraseOp(user);
      rewriter.eraseOp(group.view);
      if (group.epilogue)
        rewriter.eraseOp(group.epilogue);
    }
    if (group.root() != group.projections.front())
      for (linalg::GenericOp projection : group.projections)
        rewriter.eraseOp(projection);
  }
}

struct TfmCPUTileProjectionsPass
    : CPUCodegenPass<
          tfm::impl::TfmCPUTileProjectionsPassBase<TfmCPUTileProjectionsPass>> {

  void runOnOperation() override {
    if (!checkCodegenOptions())
      return;
    CPUCodegenOptions options = codegenOptions();
    FusionSets sets;
    IRRewriter rewriter(&getContext(), &sets);
    sets.dissolve(getOperation(), rewriter);
    SmallVector<ProjectionGroup> groups =
        fusedGroups(getOperation(), sets, options);
    auto sameSet = [&](ProjectionGroup &a, ProjectionGroup &b) {
      return sets.together(a.root(), b.root());
    };
    for (SmallVector<ProjectionGroup> &together :
         siblingLoops(rewriter, groups, sameSet, options)) {
      auto [main, tail] =
          *blockingOf(together.front().projections.front(), options);
      tileProjectionGroups(rewriter, together, main, tail, vectorWidth,
                           bf16Dot != 0 && vectorWidth == 16,
                           amx != 0 && bf16Dot != 0 && vectorWidth == 16,
                           prepackWeights != 0);
    }
  }
};

} // namespace

std::unique_ptr<Pass>
mlir::tfm::createTfmCPUTileProjectionsPass(const CPUCodegenOptions &options) {
  auto pass = std::make_unique<TfmCPUTileProjectionsPass>();
  pass->setCodegenOptions(options);
  return pass;
}
