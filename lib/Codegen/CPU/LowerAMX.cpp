//===- LowerAMX.cpp - bf16 register blocks on AMX tiles -------------------===//
//
// tfm-cpu-lower-amx: the 32 x 32 blocks that
// tfm-cpu-tile-projections marks kAMXTilesAttr become AMX tile code,
// guarded by the CPU runtime's tfm_cpu_amx_ready() (asked once per
// function), with the generic itself as the fallback.
//
//===----------------------------------------------------------------------===//

#include "ProjectionBlocks.h"

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPULOWERAMXPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::projection;

namespace {

/// The CPU runtime's `bool tfm_cpu_amx_ready(void)`.
constexpr llvm::StringLiteral kReadyFunction = "tfm_cpu_amx_ready";
/// Pairs of bf16 in a tile row of 64 bytes.
constexpr int64_t kTilePairs = 16;

/// The rank-2 memref a marked block's [rows, pairs, 2] operand views (the
/// source of its expand_shape), if it has unit-stride rows of `shape`.
Value pairedSource(Value view, ArrayRef<int64_t> shape) {
  auto expand = view.getDefiningOp<memref::ExpandShapeOp>();
  if (!expand)
    return nullptr;
  Value source = expand.getSrc();
  auto type = cast<MemRefType>(source.getType());
  if (type.getShape() != shape || !type.getElementType().isBF16() ||
      !type.isLastDimUnitStride())
    return nullptr;
  return source;
}

/// The tile code of `block` (marked kAMXTilesAttr, on buffers) where
/// `granted` (tfm_cpu_amx_ready()'s answer) holds, or failure when its
/// operands are not the views amxRowBlocks forms.
LogicalResult lowerBlock(OpBuilder &b, linalg::GenericOp block,
                         function_ref<Value()> granted) {
  auto rowsType = dyn_cast<MemRefType>(block.getDpsInputs()[0].getType());
  auto sumsType = dyn_cast<MemRefType>(block.getDpsInits()[0].getType());
  if (!rowsType || !sumsType || rowsType.getRank() != 3 ||
      !rowsType.hasStaticShape())
    return failure();
  int64_t blockRows = rowsType.getDimSize(0);
  int64_t pairSteps = rowsType.getDimSize(1);
  Value rows =
      pairedSource(block.getDpsInputs()[0], {blockRows, 2 * pairSteps});
  Value pairs =
      pairedSource(block.getDpsInputs()[1], {pairSteps, 2 * kAMXBlockColumns});
  Value sums = block.getDpsInits()[0];
  if (!rows || !pairs || pairSteps % kTilePairs != 0 ||
      blockRows != kAMXBlockRows ||
      sumsType.getShape() != ArrayRef<int64_t>{blockRows, kAMXBlockColumns} ||
      !sumsType.getElementType().isF32() || !sumsType.isLastDimUnitStride())
    return failure();
  int64_t tileRowCount = blockRows / kAMXTileRows;

  Location loc = block.getLoc();
  Value ready = granted();
  b.setInsertionPoint(block);
  auto branch = scf::IfOp::create(b, loc, ready, /*withElseRegion=*/true);
  // Not granted: the generic, scalar but the same sums.
  b.setInsertionPointToStart(branch.elseBlock());
  Operation *fallback = b.clone(*block);
  fallback->removeAttr(kAMXTilesAttr);

  b.setInsertionPointToStart(branch.thenBlock());
  llvm::SmallDenseMap<int64_t, Value> constants;
  auto index = [&](int64_t value) -> Value {
    Value &constant = constants[value];
    if (!constant) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(branch.thenBlock());
      constant = arith::ConstantIndexOp::create(b, loc, value);
    }
    return constant;
  };
  auto sumTile =
      amx::TileType::get({kAMXTileRows, kAMXTileRows}, b.getF32Type());
  auto pairTile =
      amx::TileType::get({kAMXTileRows, 2 * kTilePairs}, b.getBF16Type());
  Value acc[2][2];
  for (int i = 0; i < tileRowCount; ++i)
    for (int j = 0; j < 2; ++j)
      acc[i][j] = amx::TileLoadOp::create(
          b, loc, sumTile, sums,
          ValueRange{index(i * kAMXTileRows), index(j * kAMXTileRows)});
  // Unrolled: a tile never crosses a block boundary, which the LLVM
  // conversion of control flow could not type.
  for (int64_t kp = 0; kp < pairSteps; kp += kTilePairs) {
    Value rowTiles[2], pairTiles[2];
    for (int i = 0; i < tileRowCount; ++i)
      rowTiles[i] = amx::TileLoadOp::create(
          b, loc, pairTile, rows,
          ValueRange{index(i * kAMXTileRows), index(2 * kp)});
    for (int j = 0; j < 2; ++j)
      pairTiles[j] = amx::TileLoadOp::create(
          b, loc, pairTile, pairs,
          ValueRange{index(kp), index(j * 2 * kAMXTileRows)});
    for (int i = 0; i < tileRowCount; ++i)
      for (int j = 0; j < 2; ++j)
        acc[i][j] = amx::TileMulFOp::create(b, loc, sumTile, rowTiles[i],
                                            pairTiles[j], acc[i][j]);
  }
  for (int i = 0; i < tileRowCount; ++i)
    for (int j = 0; j < 2; ++j)
      amx::TileStoreOp::create(
          b, loc, sums,
          ValueRange{index(i * kAMXTileRows), index(j * kAMXTileRows)},
          acc[i][j]);
  block.erase();
  return success();
}

struct TfmCPULowerAMXPass
    : tfm::impl::TfmCPULowerAMXPassBase<TfmCPULowerAMXPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::GenericOp> blocks;
    module.walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kAMXTilesAttr) && op.hasPureBufferSemantics())
        blocks.push_back(op);
    });
    OpBuilder b(module.getContext());
    // Declared with the first block that runs on tiles.
    auto ready = [&]() {
      auto function = module.lookupSymbol<func::FuncOp>(kReadyFunction);
      if (function)
        return function;
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(module.getBody());
      function = func::FuncOp::create(b, module.getLoc(), kReadyFunction,
                                      b.getFunctionType({}, {b.getI1Type()}));
      function.setPrivate();
      return function;
    };
    // Asked once per function, at its entry: LLVM loads the tile
    // configuration again after every call (the callee may change it), so
    // a call per block also ran an ldtilecfg per block.
    llvm::DenseMap<Operation *, Value> grantedIn;
    for (linalg::GenericOp block : blocks) {
      auto granted = [&]() {
        auto function = block->getParentOfType<func::FuncOp>();
        Value &answer = grantedIn[function];
        if (!answer) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&function.getBody().front());
          answer =
              func::CallOp::create(b, function.getLoc(), ready(), ValueRange{})
                  .getResult(0);
        }
        return answer;
      };
      if (failed(lowerBlock(b, block, granted)))
        block->removeAttr(kAMXTilesAttr); // stays the generic
    }
  }
};

} // namespace
