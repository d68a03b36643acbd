// The fake driver's kernels (fake-cuda-driver.c): with FAKE_CUDA_KERNELS
// naming a library of emulated kernels (the kernels stage of a --target=cuda
// compile through tfm-opt --tfm-gpu-emulation-pipeline; scripts/
// emulate-gpu.sh builds one), each launch runs its kernel on the CPU. Every
// thread of a block is a fiber with a stack of its own; the blocks run one
// after another. A fiber runs until it must wait for others (a barrier, or
// a warp's shuffle, ldmatrix or mma, each a warp-wide exchange), then the
// next runs. A block whose threads all wait and none can go on is a
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

typedef struct {
  void *sp; // where the fiber's registers are while it is switched out
  char *stack;
  unsigned tid;
  int done;
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

__attribute__((used)) void tfm_fiber_main(Fiber *fiber) {
  emu.kernel(emu.params);
  fiber->done = 1;
  tfm_fiber_switch(&fiber->sp, emu.schedulerSp);
}

static void yield(void) { tfm_fiber_switch(&emu.current->sp, emu.schedulerSp); }

static unsigned liveLanes(unsigned warp) {
  unsigned count = 0;
  for (unsigned t = warp * kWarp; t < emu.threads && t < (warp + 1) * kWarp;
       ++t)
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
    if (warp->arrived && warp->arrived == liveLanes(w)) {
      warp->arrived = 0;
      ++warp->generation;
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

static void warpSync(void) {
  Warp *warp = myWarp();
  unsigned long generation = warp->generation;
  ++warp->arrived;
  ++emu.events;
  release();
  while (warp->generation == generation)
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

void tfm_emu_copy(void *to, const void *from, int64_t toBytes,
                  int64_t fromBytes) {
  memcpy(to, from, (size_t)fromBytes);
  memset((char *)to + fromBytes, 0, (size_t)(toBytes - fromBytes));
}

static void *library;
static char *sharedWindow;

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
  for (unsigned t = 0; t < emu.threads; ++t) {
    Fiber *fiber = &emu.fibers[t];
    fiber->stack = stacks + (size_t)t * kStackBytes;
    fiber->tid = t;
    fiber->done = 0;
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
