// The fake driver's kernels (fake-cuda-driver.c): with FAKE_CUDA_KERNELS
// naming a library of emulated kernels (tfm-compile --target=cuda
// --emit=emulated-kernels: docs/DESIGN.md, "The kernels on a CPU"), each
// launch runs its kernel on the CPU. Every thread of a block is a fiber
// with a stack of its own; the blocks run one after another. A fiber runs
// until it must wait for others (a barrier, named or not; a warp's
// shuffle, ldmatrix or mma, or a warpgroup's wgmma, each an exchange of
// operands; a barrier object's phase), then the next runs. A block whose
// threads all wait and none can go on is a
// deadlock: the launch fails with a message. Dynamic shared memory is the
// library's window `tfm_emu_shared`, filled with 0xff bytes (NaN in every
// float type) before each block, as a GPU's holds whatever was there. x86-64
// only (the fibers switch stacks in assembly).

#define _GNU_SOURCE // dladdr
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-cuda-kernels.h"

enum { kWarp = 32, kMaxThreads = 1024, kStackBytes = 128 * 1024 };
enum { kSharedWindow = 256 * 1024 };

// A cp.async copy not yet landed, and the commit group it joins (the
// thread's commits before it).
typedef struct {
  void *to;
  const void *from;
  int64_t toBytes, fromBytes;
  unsigned group;
} PendingCopy;
enum { kMaxPending = 64 };

typedef struct {
  void *sp; // where the fiber's registers are while it is switched out
  char *stack;
  unsigned tid;
  int done;
  PendingCopy pending[kMaxPending];
  unsigned pendingCount, commits;
} Fiber;

// What a warp-wide operation exchanges: each lane's operands.
typedef struct {
  uint32_t words[8];
  const void *address;
} Lane;

typedef struct {
  unsigned arrived;
  unsigned long generation;
  Lane lanes[kWarp];
} Warp;

// A warpgroup's wgmma: its A (from registers or shared memory) and B as
// floats, decoded once by its first thread.
enum { kWarpgroup = 128, kMaxColumns = 256 };
typedef struct {
  unsigned arrived;
  unsigned long generation;
  uint32_t registers[kWarpgroup][4];
  float a[64][16], b[16][kMaxColumns];
} Warpgroup;

// A named barrier (bar.sync id, count; bar.arrive).
typedef struct {
  unsigned arrived;
  unsigned long generation;
} NamedBarrier;

// An mbarrier's state, beside its 8 bytes of shared memory (by offset / 8).
typedef struct {
  int expected, pending;
  long long transactions;
  unsigned phase;
} MemoryBarrier;

static void *library;
static char *sharedWindow; // the library's tfm_emu_shared

static struct {
  EmulatedKernel kernel;
  void **params;
  unsigned grid[3], block[3], blockId[3];
  unsigned threads, live;
  Fiber fibers[kMaxThreads];
  Fiber *current;
  void *schedulerSp;
  unsigned arrived; // at the block's barrier
  unsigned long generation;
  unsigned long events; // arrivals, releases and finishes: progress
  Warp warps[kMaxThreads / kWarp];
  Warpgroup warpgroups[kMaxThreads / kWarpgroup];
  NamedBarrier named[16];
  MemoryBarrier barriers[kSharedWindow / 8];
} emu;

// Saves the callee-saved registers and the float control words on the
// current stack, stores its pointer in *from, and resumes the stack `to`.
void tfm_fiber_switch(void **from, void *to);
__asm__(".text\n"
        ".globl tfm_fiber_switch\n"
        ".hidden tfm_fiber_switch\n"
        "tfm_fiber_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n"
        "  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n"
        "  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        // A new fiber's first switch returns here, its Fiber in r12.
        "tfm_fiber_start:\n"
        "  movq %r12, %rdi\n  call tfm_fiber_main\n  ud2\n");

static void landBefore(Fiber *fiber, unsigned group);

__attribute__((used)) void tfm_fiber_main(Fiber *fiber) {
  emu.kernel(emu.params);
  landBefore(fiber, ~0u);
  fiber->done = 1;
  tfm_fiber_switch(&fiber->sp, emu.schedulerSp);
}

static void yield(void) { tfm_fiber_switch(&emu.current->sp, emu.schedulerSp); }

// Live threads among `size` from `first`.
static unsigned liveIn(unsigned first, unsigned size) {
  unsigned count = 0;
  for (unsigned t = first; t < emu.threads && t < first + size; ++t)
    count += !emu.fibers[t].done;
  return count;
}

// Releases the block's barrier and warps' exchanges that every live thread
// has reached (after an arrival, or a thread's end).
static void release(void) {
  if (emu.arrived && emu.arrived == emu.live) {
    emu.arrived = 0;
    ++emu.generation;
  }
  for (unsigned w = 0; w * kWarp < emu.threads; ++w) {
    Warp *warp = &emu.warps[w];
    if (warp->arrived && warp->arrived == liveIn(w * kWarp, kWarp)) {
      warp->arrived = 0;
      ++warp->generation;
    }
  }
  for (unsigned w = 0; w * kWarpgroup < emu.threads; ++w) {
    Warpgroup *group = &emu.warpgroups[w];
    if (group->arrived &&
        group->arrived == liveIn(w * kWarpgroup, kWarpgroup)) {
      group->arrived = 0;
      ++group->generation;
    }
  }
}

void tfm_emu_barrier(void) {
  unsigned long generation = emu.generation;
  ++emu.arrived;
  ++emu.events;
  release();
  while (emu.generation == generation)
    yield();
}

static Warp *myWarp(void) { return &emu.warps[emu.current->tid / kWarp]; }
static unsigned myLane(void) { return emu.current->tid % kWarp; }
static Warpgroup *myWarpgroup(void) {
  return &emu.warpgroups[emu.current->tid / kWarpgroup];
}

// Waits until every live thread of the group has arrived.
static void groupSync(unsigned *arrived, unsigned long *generation) {
  unsigned long current = *generation;
  ++*arrived;
  ++emu.events;
  release();
  while (*generation == current)
    yield();
}

static void warpSync(void) {
  Warp *warp = myWarp();
  groupSync(&warp->arrived, &warp->generation);
}

static void warpgroupSync(void) {
  Warpgroup *group = myWarpgroup();
  groupSync(&group->arrived, &group->generation);
}

// bar.sync (wait) or bar.arrive: barrier `id` completes when `count`
// threads (0: every live thread of the block) have arrived.
void tfm_emu_named_barrier(int32_t id, int32_t count, int32_t wait) {
  NamedBarrier *barrier = &emu.named[id & 15];
  unsigned long generation = barrier->generation;
  ++emu.events;
  if (++barrier->arrived >= (count > 0 ? (unsigned)count : emu.live)) {
    barrier->arrived = 0;
    ++barrier->generation;
    return;
  }
  while (wait && barrier->generation == generation)
    yield();
}

int64_t tfm_emu_id(int32_t which) {
  unsigned tid = emu.current->tid;
  switch (which) {
  case 0:
    return tid % emu.block[0];
  case 1:
    return tid / emu.block[0] % emu.block[1];
  case 2:
    return tid / (emu.block[0] * emu.block[1]);
  case 3:
  case 4:
  case 5:
    return emu.blockId[which - 3];
  case 6:
  case 7:
  case 8:
    return emu.block[which - 6];
  case 9:
  case 10:
  case 11:
    return emu.grid[which - 9];
  case 12:
    return myLane();
  }
  fprintf(stderr, "fake driver: unknown id %d\n", which);
  abort();
}

// gpu.shuffle's modes: xor, down, up, idx.
int64_t tfm_emu_shuffle(int32_t value, int32_t offset, int32_t width,
                        int32_t mode) {
  Warp *warp = myWarp();
  unsigned lane = myLane();
  warp->lanes[lane].words[0] = (uint32_t)value;
  warpSync();
  unsigned first = lane & ~(unsigned)(width - 1);
  int source = mode == 0   ? (int)(lane ^ (unsigned)offset)
               : mode == 1 ? (int)lane + offset
               : mode == 2 ? (int)lane - offset
                           : (int)first + offset;
  int valid = source >= (int)first && source < (int)first + width;
  uint32_t result = valid ? warp->lanes[source].words[0] : (uint32_t)value;
  warpSync();
  return (int64_t)result | (int64_t)valid << 32;
}

void tfm_emu_ldmatrix(const void *row, int32_t tiles, int32_t transpose,
                      uint32_t *out) {
  Warp *warp = myWarp();
  unsigned lane = myLane();
  warp->lanes[lane].address = row;
  warpSync();
  for (int i = 0; i < tiles; ++i) {
    uint32_t halves[2];
    for (int j = 0; j < 2; ++j) {
      // Matrix i's rows are lanes 8i..8i+7's addresses.
      unsigned r = transpose ? (lane % 4) * 2 + j : lane / 4;
      unsigned c = transpose ? lane / 4 : (lane % 4) * 2 + j;
      halves[j] = ((const uint16_t *)warp->lanes[8 * i + r].address)[c];
    }
    out[i] = halves[0] | halves[1] << 16;
  }
  warpSync();
}

static float fromBits(uint32_t bits) {
  float value;
  memcpy(&value, &bits, 4);
  return value;
}

static float widen(uint32_t half, int f16) {
  if (!f16)
    return fromBits(half << 16); // bf16: the high half of an f32
  uint32_t sign = (half & 0x8000) << 16, exponent = half >> 10 & 0x1f,
           mantissa = half & 0x3ff;
  if (exponent == 0) // zero or subnormal: mantissa * 2^-24
    return (sign ? -1.0f : 1.0f) * (float)mantissa * fromBits(0x33800000);
  if (exponent == 0x1f) // infinity or NaN
    return fromBits(sign | 0x7f800000 | mantissa << 13);
  return fromBits(sign | (exponent + 112) << 23 | mantissa << 13);
}

// One element of a lane's fragment: word `word` of `lane`, half `half`.
static float fragment(const Warp *warp, unsigned lane, unsigned word,
                      unsigned half, int f16) {
  return widen(warp->lanes[lane].words[word] >> (16 * half) & 0xffff, f16);
}

// mma.sync.m16n8k16.row.col.f32 (PTX's fragment layouts): A's 16 x 16 in
// words 0-3 of each lane, B's 16 x 8 in words 4-5; a lane's four sums are
// rows g and g + 8, columns 2t and 2t + 1 (g = lane / 4, t = lane % 4).
void tfm_emu_mma(uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                 uint32_t b0, uint32_t b1, float c0, float c1, float c2,
                 float c3, int32_t f16, float *d) {
  Warp *warp = myWarp();
  unsigned lane = myLane();
  uint32_t words[6] = {a0, a1, a2, a3, b0, b1};
  memcpy(warp->lanes[lane].words, words, sizeof(words));
  warpSync();
  float c[4] = {c0, c1, c2, c3};
  unsigned g = lane / 4, t = lane % 4;
  for (unsigned i = 0; i < 4; ++i) {
    unsigned row = g + (i >= 2 ? 8 : 0), column = t * 2 + (i & 1);
    float sum = c[i];
    for (unsigned k = 0; k < 16; ++k) {
      float a = fragment(warp, (row % 8) * 4 + (k % 8) / 2,
                         (row >= 8) + 2 * (k >= 8), k & 1, f16);
      float b = fragment(warp, column * 4 + (k % 8) / 2, 4 + (k >= 8),
                         k & 1, f16);
      sum += a * b;
    }
    d[i] = sum;
  }
  warpSync();
}

static void fatal(const char *message) {
  fprintf(stderr, "fake driver: %s\n", message);
  abort();
}

// The byte of a 128-byte-swizzled tile at window offset `offset`: its
// 16-byte chunk (bits 4-6) XOR its row of the 1024-byte atom (bits 7-9).
static size_t swizzled(size_t offset) {
  return offset ^ ((offset >> 7 & 7) << 4);
}

// Element (row, k) of a wgmma operand in shared memory, from its matrix
// descriptor (PTX's canonical layouts, 128-byte swizzle): K-major rows of
// 128 bytes, 8-row groups `stride` bytes apart; MN-major rows along K,
// 64-element panels along MN `leading` bytes apart.
static float sharedOperand(uint64_t descriptor, unsigned row, unsigned k,
                           int mnMajor, int f16) {
  if ((descriptor >> 62) != 1)
    fatal("wgmma: only 128-byte swizzled operands are emulated");
  size_t start = (descriptor & 0x3fff) << 4;
  size_t leading = (descriptor >> 16 & 0x3fff) << 4;
  size_t stride = (descriptor >> 32 & 0x3fff) << 4;
  size_t offset =
      mnMajor ? start + (row % 64) * 2 + (row / 64) * leading +
                    (k % 8) * 128 + (k / 8) * stride
              : start + (row % 8) * 128 + (row / 8) * stride + k * 2;
  offset = swizzled(offset);
  if (offset + 2 > kSharedWindow)
    fatal("wgmma: an operand outside shared memory");
  uint16_t half;
  memcpy(&half, sharedWindow + offset, 2);
  return widen(half, f16);
}

// wgmma.mma_async m64nNk16 with f32 sums, done when issued: `acc` is this
// thread's N / 2 sums (PTX's accumulator layout: warp w of the warpgroup
// has rows 16w to 16w + 15, its lanes as mma.sync's for each 8 columns).
// A is each thread's 4 registers (`registers`, mma.sync's A layout per
// warp) or the descriptor `a`; flags: 1 f16, 2 A MN-major, 4 B MN-major,
// 8 the sums start from zero.
void tfm_emu_wgmma(float *acc, int32_t n, const uint32_t *registers,
                   uint64_t a, uint64_t b, int32_t flags) {
  Warpgroup *group = myWarpgroup();
  unsigned thread = emu.current->tid % kWarpgroup;
  int f16 = flags & 1;
  if (n > kMaxColumns || n % 8)
    fatal("wgmma: N must be a multiple of 8 up to 256");
  if (registers)
    memcpy(group->registers[thread], registers, 16);
  warpgroupSync();
  if (thread == 0) {
    for (unsigned row = 0; row < 64; ++row)
      for (unsigned k = 0; k < 16; ++k) {
        if (!registers) {
          group->a[row][k] = sharedOperand(a, row, k, flags & 2, f16);
          continue;
        }
        unsigned r = row % 16, holder = row / 16 * kWarp +
                                        (r % 8) * 4 + (k % 8) / 2;
        uint32_t word = group->registers[holder][(r >= 8) + 2 * (k >= 8)];
        group->a[row][k] = widen(word >> (16 * (k & 1)) & 0xffff, f16);
      }
    for (unsigned k = 0; k < 16; ++k)
      for (unsigned column = 0; column < (unsigned)n; ++column)
        group->b[k][column] = sharedOperand(b, column, k, flags & 4, f16);
  }
  warpgroupSync();
  unsigned warp = thread / kWarp, g = thread % kWarp / 4, t = thread % 4;
  for (int i = 0; i < n / 2; ++i) {
    unsigned row = 16 * warp + g + ((i & 3) >= 2 ? 8 : 0);
    unsigned column = 8 * (i / 4) + 2 * t + (i & 1);
    float sum = flags & 8 ? 0.0f : acc[i];
    for (unsigned k = 0; k < 16; ++k)
      sum += group->a[row][k] * group->b[k][column];
    acc[i] = sum;
  }
  warpgroupSync();
}

static MemoryBarrier *memoryBarrier(const void *address) {
  size_t offset = (size_t)((const char *)address - sharedWindow);
  if (!sharedWindow || offset >= kSharedWindow || offset % 8)
    fatal("an mbarrier outside shared memory");
  return &emu.barriers[offset / 8];
}

// Completes the barrier's phase when its arrivals and transactions are in.
static void completeIfDone(MemoryBarrier *barrier) {
  if (barrier->pending > 0 || barrier->transactions > 0)
    return;
  barrier->phase ^= 1;
  barrier->pending = barrier->expected;
  barrier->transactions = 0;
  ++emu.events;
}

void tfm_emu_mbarrier_init(void *address, int32_t count) {
  MemoryBarrier *barrier = memoryBarrier(address);
  barrier->expected = barrier->pending = count;
  barrier->transactions = 0;
  barrier->phase = 0;
}

// An arrival, expecting `bytes` more of transactions (TMA loads).
void tfm_emu_mbarrier_arrive(void *address, int32_t bytes) {
  MemoryBarrier *barrier = memoryBarrier(address);
  barrier->transactions += bytes;
  --barrier->pending;
  ++emu.events;
  completeIfDone(barrier);
}

// try_wait.parity: whether the phase of parity `phase` has completed (the
// barrier is in the other one); yields to the other threads if not.
int32_t tfm_emu_mbarrier_try_wait(void *address, int32_t phase) {
  MemoryBarrier *barrier = memoryBarrier(address);
  if (barrier->phase != ((unsigned)phase & 1))
    return 1;
  yield();
  return 0;
}

// A TMA load of the box at `coordinates` (innermost first) into `to`,
// done when issued: elements outside the tensor are zeros (or NaNs), the
// box stored densely, 128-byte swizzled if the map says so; then the
// barrier's transactions are complete by the box's bytes.
void tfm_emu_tma_load(void *to, const void *map, void *barrier, int32_t c0,
                      int32_t c1, int32_t c2, int32_t c3, int32_t c4) {
  const FakeTensorMap *tensor = map;
  int32_t coordinates[5] = {c0, c1, c2, c3, c4};
  unsigned rank = tensor->rank, bytes = tensor->elementBytes;
  size_t elements = 1;
  for (unsigned d = 0; d < rank; ++d)
    elements *= tensor->box[d];
  size_t base = (size_t)((char *)to - sharedWindow);
  if (!sharedWindow || base + elements * bytes > kSharedWindow)
    fatal("a TMA load outside shared memory");
  for (size_t e = 0; e < elements; ++e) {
    size_t rest = e, source = 0;
    int inside = 1;
    for (unsigned d = 0; d < rank; ++d) {
      int64_t at = (int64_t)coordinates[d] + (int64_t)(rest % tensor->box[d]);
      rest /= tensor->box[d];
      inside &= at >= 0 && (uint64_t)at < tensor->sizes[d];
      source += d ? (size_t)at * tensor->strides[d - 1] : (size_t)at * bytes;
    }
    size_t offset = base + e * bytes;
    if (tensor->swizzle == 3)
      offset = swizzled(offset);
    else if (tensor->swizzle != 0)
      fatal("TMA: only unswizzled and 128-byte swizzled boxes are emulated");
    if (inside)
      memcpy(sharedWindow + offset, tensor->address + source, bytes);
    else
      memset(sharedWindow + offset, tensor->nanFill ? 0xff : 0, bytes);
  }
  MemoryBarrier *state = memoryBarrier(barrier);
  state->transactions -= (long long)(elements * bytes);
  ++emu.events;
  completeIfDone(state);
}

static void land(const PendingCopy *copy) {
  memcpy(copy->to, copy->from, (size_t)copy->fromBytes);
  memset((char *)copy->to + copy->fromBytes, 0,
         (size_t)(copy->toBytes - copy->fromBytes));
}

// Lands the thread's copies of the groups before `group`.
static void landBefore(Fiber *fiber, unsigned group) {
  unsigned kept = 0;
  for (unsigned i = 0; i < fiber->pendingCount; ++i) {
    if (fiber->pending[i].group < group)
      land(&fiber->pending[i]);
    else
      fiber->pending[kept++] = fiber->pending[i];
  }
  fiber->pendingCount = kept;
}

// cp.async: the copy lands at the latest moment PTX allows, the wait on
// its group (or the thread's end), so that a kernel reading its tile
// before waiting reads what was there (NaN bytes, or the last tile).
void tfm_emu_cp_async(void *to, const void *from, int64_t toBytes,
                      int64_t fromBytes) {
  Fiber *fiber = emu.current;
  if (fiber->pendingCount == kMaxPending) { // the oldest lands early
    land(&fiber->pending[0]);
    memmove(fiber->pending, fiber->pending + 1,
            (kMaxPending - 1) * sizeof(PendingCopy));
    --fiber->pendingCount;
  }
  PendingCopy copy = {to, from, toBytes, fromBytes, fiber->commits};
  fiber->pending[fiber->pendingCount++] = copy;
}

void tfm_emu_cp_async_commit(void) { ++emu.current->commits; }

// cp.async.wait_group n: every committed group but the newest n.
void tfm_emu_cp_async_wait(int32_t newest) {
  Fiber *fiber = emu.current;
  if (fiber->commits > (unsigned)newest)
    landBefore(fiber, fiber->commits - (unsigned)newest);
}


void *fakeCudaEmulatedKernel(const char *name) {
  const char *path = getenv("FAKE_CUDA_KERNELS");
  if (!path)
    return NULL;
  if (!library) {
    // The kernels call this library's tfm_emu_* functions: its symbols
    // join the global scope (the runtime loaded it as its own).
    Dl_info self;
    if (dladdr((void *)fakeCudaEmulatedKernel, &self) && self.dli_fname)
      dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
    library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      fprintf(stderr, "fake driver: cannot load %s: %s\n", path, dlerror());
      return NULL;
    }
    sharedWindow = dlsym(library, "tfm_emu_shared");
  }
  char symbol[512];
  snprintf(symbol, sizeof(symbol), "%s_emulated", name);
  void *kernel = dlsym(library, symbol);
  if (!kernel)
    fprintf(stderr, "fake driver: %s has no kernel %s\n", path, symbol);
  return kernel;
}

static int runBlock(void) {
  static char *stacks;
  if (!stacks) {
    stacks = malloc((size_t)kMaxThreads * kStackBytes);
    if (!stacks) {
      fprintf(stderr, "fake driver: no memory for the fibers' stacks\n");
      return 1;
    }
  }
  uint32_t controlWords = 0;
  __asm__ volatile("stmxcsr %0" : "=m"(controlWords));
  uint16_t x87;
  __asm__ volatile("fnstcw %0" : "=m"(x87));
  emu.live = emu.threads;
  emu.arrived = 0;
  memset(emu.warps, 0, sizeof(emu.warps));
  memset(emu.named, 0, sizeof(emu.named));
  for (unsigned t = 0; t < emu.threads; ++t) {
    Fiber *fiber = &emu.fibers[t];
    fiber->stack = stacks + (size_t)t * kStackBytes;
    fiber->tid = t;
    fiber->done = 0;
    fiber->pendingCount = fiber->commits = 0;
    // The frame tfm_fiber_switch pops: control words, r15-r12 (r12: the
    // fiber), rbx, rbp, then the return address, tfm_fiber_start.
    char *top = fiber->stack + kStackBytes;
    uint64_t *frame = (uint64_t *)(top - 80);
    extern char tfm_fiber_start[];
    memset(frame, 0, 80);
    memcpy(frame, &controlWords, 4);
    memcpy((char *)frame + 4, &x87, 2);
    frame[4] = (uint64_t)(uintptr_t)fiber;
    frame[7] = (uint64_t)(uintptr_t)tfm_fiber_start;
    fiber->sp = frame;
  }
  while (emu.live) {
    unsigned long events = emu.events;
    for (unsigned t = 0; t < emu.threads; ++t) {
      Fiber *fiber = &emu.fibers[t];
      if (fiber->done)
        continue;
      emu.current = fiber;
      tfm_fiber_switch(&emu.schedulerSp, fiber->sp);
      if (fiber->done) {
        --emu.live;
        ++emu.events;
        release();
      }
    }
    if (emu.live && events == emu.events) {
      fprintf(stderr,
              "fake driver: block (%u, %u, %u) deadlocked: its %u live "
              "threads all wait (a barrier some threads do not reach?)\n",
              emu.blockId[0], emu.blockId[1], emu.blockId[2], emu.live);
      return 1;
    }
  }
  return 0;
}

int fakeCudaRunKernel(void *kernel, const unsigned grid[3],
                      const unsigned block[3], unsigned shared,
                      void **params) {
  unsigned threads = block[0] * block[1] * block[2];
  if (threads == 0 || threads > kMaxThreads || shared > kSharedWindow ||
      (shared && !sharedWindow)) {
    fprintf(stderr,
            "fake driver: cannot emulate a block of %u threads with %u "
            "bytes of shared memory\n",
            threads, shared);
    return 1;
  }
  emu.kernel = (EmulatedKernel)kernel;
  emu.params = params;
  emu.threads = threads;
  memcpy(emu.grid, grid, sizeof(emu.grid));
  memcpy(emu.block, block, sizeof(emu.block));
  for (unsigned z = 0; z < grid[2]; ++z)
    for (unsigned y = 0; y < grid[1]; ++y)
      for (unsigned x = 0; x < grid[0]; ++x) {
        emu.blockId[0] = x, emu.blockId[1] = y, emu.blockId[2] = z;
        if (sharedWindow)
          memset(sharedWindow, 0xff, shared);
        if (runBlock())
          return 1;
      }
  return 0;
}
