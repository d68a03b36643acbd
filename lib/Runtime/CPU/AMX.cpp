//===- AMX.cpp - asking Linux for AMX state -------------------------------===//
//
// Linux gives a process AMX tile state only once it asked for it with
// arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); a tile instruction
// before that faults. The blocks tfm-cpu-lower-amx puts on AMX tiles ask
// here first and run their scalar form where the request was refused (an
// older kernel, a sandbox that filters the call). No C++ runtime, as the
// rest of the CPU runtime.
//
//===----------------------------------------------------------------------===//

#include <sys/syscall.h>
#include <unistd.h>

namespace {

constexpr long kRequestPermission = 0x1023; // ARCH_REQ_XCOMP_PERM
constexpr long kTileData = 18;              // XFEATURE_XTILEDATA

/// 0: not asked yet, 1: granted, 2: refused. Racing first calls both ask;
/// the answer is the same.
int state = 0;

} // namespace

extern "C" bool tfm_cpu_amx_ready() {
  int known = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
  if (known == 0) {
    known = syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0 ? 1 : 2;
    __atomic_store_n(&state, known, __ATOMIC_RELEASE);
  }
  return known == 1;
}
