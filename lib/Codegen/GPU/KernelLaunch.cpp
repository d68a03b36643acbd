//===- KernelLaunch.cpp - gpu.launch ops the GPU passes build -------------===//

#include "KernelLaunch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::tfm;

gpu::LaunchOp mlir::tfm::createLaunch(OpBuilder &b, Location loc,
                                      ValueRange grid, Value threads,
                                      Value sharedBytes) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto launch = gpu::LaunchOp::create(b, loc, grid[0], grid[1], grid[2],
                                      threads, one, one, sharedBytes);
  b.setInsertionPointToStart(&launch.getBody().front());
  b.setInsertionPoint(gpu::TerminatorOp::create(b, loc));
  return launch;
}

std::pair<gpu::LaunchOp, Value>
mlir::tfm::createSharedMemoryLaunch(OpBuilder &b, Location loc, ValueRange grid,
                                    int64_t threads, int64_t sharedBytes) {
  gpu::LaunchOp launch = createLaunch(
      b, loc, grid, arith::ConstantIndexOp::create(b, loc, threads),
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), sharedBytes));
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value shared = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface(), workgroup));
  return {launch, shared};
}

Value mlir::tfm::sharedView(OpBuilder &b, Location loc, Value shared,
                            ArrayRef<int64_t> shape, Type element,
                            int64_t offset) {
  auto type =
      MemRefType::get(shape, element, MemRefLayoutAttrInterface(),
                      cast<MemRefType>(shared.getType()).getMemorySpace());
  return memref::ViewOp::create(b, loc, type, shared,
                                arith::ConstantIndexOp::create(b, loc, offset),
                                ValueRange{});
}
