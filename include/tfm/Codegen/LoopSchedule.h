//===- LoopSchedule.h - parallel loops whose iterations cost the same -*- C++ -*-//
//
// tfm-cpu-dynamic-schedule hands a parallel loop's iterations out one at a
// time, for attention tiles of different costs. Loops whose iterations all
// cost the same (projection column blocks, row tiles) are better on
// OpenMP's static schedule: contiguous runs and no dispatch per iteration
// (Debian's libomp 22 formats trace strings in every dynamic dispatch).
// They say so in their location, which survives the conversion of
// scf.forall to omp.wsloop.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_CODEGEN_LOOPSCHEDULE_H
#define TFM_CODEGEN_LOOPSCHEDULE_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

namespace mlir::tfm {

inline constexpr llvm::StringLiteral kStaticScheduleTag = "tfm.static_schedule";

/// `loc`, marked as the location of a loop whose iterations cost the same.
inline Location withStaticSchedule(Location loc) {
  MLIRContext *context = loc.getContext();
  return FusedLoc::get(context, {loc},
                       StringAttr::get(context, kStaticScheduleTag));
}

/// Whether `loc` (or a location it fuses) carries withStaticSchedule's mark.
inline bool hasStaticSchedule(Location loc) {
  bool found = false;
  loc->walk([&](Location inner) {
    auto fused = dyn_cast<FusedLoc>(inner);
    auto tag = fused ? dyn_cast_or_null<StringAttr>(fused.getMetadata())
                     : StringAttr();
    found = found || (tag && tag.getValue() == kStaticScheduleTag);
    return WalkResult::advance();
  });
  return found;
}

} // namespace mlir::tfm

#endif // TFM_CODEGEN_LOOPSCHEDULE_H
