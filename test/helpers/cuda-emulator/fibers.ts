/**
 * The emulator's block-level synchronization, in C++ for the kernel executables: every thread
 * of a block is a ucontext fiber with its own stack, and a round-robin scheduler runs each
 * runnable fiber until it finishes or waits at a barrier. `__syncthreads()` waits until every
 * live thread of the block waits there too; a warp shuffle (`__shfl_*_sync`, full mask only)
 * publishes the value in a per-thread slot and waits until every live lane of its warp has
 * published, then reads its source lane's slot. Slots alternate between two banks, so a fast
 * lane's next shuffle never overwrites a value a slow lane has yet to read. Threads waiting at
 * different kinds of barrier, or a shuffle reading a lane that did not take part, end the
 * launch with exit status 3 and a message naming the block: that is a kernel bug a GPU would
 * hang on or answer garbage for.
 *
 * AddressSanitizer follows the switches through __sanitizer_start_switch_fiber and
 * __sanitizer_finish_switch_fiber (so its stack bookkeeping, fake stacks included, stays
 * right), and each fiber stack is unpoisoned before it is reused for the next block.
 */

/** Whether `source` synchronizes within a block, so its threads must run as fibers. */
export const isCooperative = (source: string): boolean => /__syncthreads|__shfl_/.test(source);

export const FIBERS = String.raw`
#include <ucontext.h>
#include <sys/mman.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define EMU_START_SWITCH(save, bottom, size) __sanitizer_start_switch_fiber(save, bottom, size)
#define EMU_FINISH_SWITCH(save, bottom, size) __sanitizer_finish_switch_fiber(save, bottom, size)
#define EMU_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define EMU_START_SWITCH(save, bottom, size) ((void)(save), (void)(bottom), (void)(size))
#define EMU_FINISH_SWITCH(save, bottom, size) ((void)(save), (void)(bottom), (void)(size))
#define EMU_UNPOISON(p, n) ((void)(p), (void)(n))
#endif
#define __shared__ static
enum { EMU_RUN, EMU_BLOCK, EMU_WARP, EMU_DONE };
struct EmuFiber { ucontext_t ctx; uint3 idx; int state; unsigned shuffles; };
static const size_t EMU_STACK = 128 * 1024;
static const unsigned EMU_MAX_THREADS = 1024;
static EmuFiber emu_fibers[EMU_MAX_THREADS];
static unsigned emu_count, emu_current;
static char* emu_stacks;
static ucontext_t emu_scheduler;
static const void* emu_main_bottom;
static size_t emu_main_size;
static void (*emu_body)();
static unsigned long long emu_slots[2][EMU_MAX_THREADS];

static void emu_fail(const char* why) {
  fprintf(stderr, "cuda emulator: block (%u,%u,%u) thread %u: %s\n", blockIdx.x, blockIdx.y, blockIdx.z, emu_current, why);
  exit(3);
}
/* Back to the scheduler; returns when the scheduler resumes this fiber. */
static void emu_yield(int state) {
  EmuFiber& f = emu_fibers[emu_current];
  f.state = state;
  void* fake = nullptr;
  EMU_START_SWITCH(&fake, emu_main_bottom, emu_main_size);
  swapcontext(&f.ctx, &emu_scheduler);
  EMU_FINISH_SWITCH(fake, nullptr, nullptr);
}
static void emu_entry() {
  EMU_FINISH_SWITCH(nullptr, &emu_main_bottom, &emu_main_size);
  emu_body();
  EmuFiber& f = emu_fibers[emu_current];
  f.state = EMU_DONE;
  /* A null save tells ASan this fiber's fake stack dies with it. */
  EMU_START_SWITCH(nullptr, emu_main_bottom, emu_main_size);
  swapcontext(&f.ctx, &emu_scheduler);
}
static void __syncthreads() { emu_yield(EMU_BLOCK); }
static unsigned emu_linear(const uint3& t) { return t.x + blockDim.x * (t.y + blockDim.y * t.z); }
template <class T>
static T emu_shuffle(unsigned mask, T v, unsigned srcLane, bool keep) {
  static_assert(sizeof(T) <= 8, "shuffled values are at most 8 bytes");
  if (mask != 0xffffffffu) emu_fail("warp shuffle with a partial mask (not emulated)");
  unsigned me = emu_current, bank = emu_fibers[me].shuffles++ & 1u;
  unsigned long long bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  emu_slots[bank][me] = bits;
  emu_yield(EMU_WARP);
  if (keep) return v;
  unsigned src = (me & ~31u) | (srcLane & 31u);
  /* A lane that took part has made this shuffle, or already the next one (it cannot pass that one before this lane does). */
  if (src >= emu_count || emu_fibers[src].shuffles - emu_fibers[me].shuffles > 1u) emu_fail("warp shuffle reads a lane that did not take part");
  T out;
  std::memcpy(&out, &emu_slots[bank][src], sizeof(T));
  return out;
}
static void emu_full_width(int width) { if (width != 32) emu_fail("warp shuffle over a sub-warp width (not emulated)"); }
template <class T> static T __shfl_sync(unsigned mask, T v, int lane, int width = 32) { emu_full_width(width); return emu_shuffle(mask, v, (unsigned)lane, false); }
template <class T> static T __shfl_xor_sync(unsigned mask, T v, int laneMask, int width = 32) {
  emu_full_width(width);
  return emu_shuffle(mask, v, (emu_current & 31u) ^ (unsigned)laneMask, false);
}
template <class T> static T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  emu_full_width(width);
  unsigned lane = emu_current & 31u;
  return emu_shuffle(mask, v, lane + delta, lane + delta >= 32u);
}

/* Runs one block of blockDim threads as fibers, each calling body(). */
static void emu_run_block(void (*body)()) {
  emu_count = blockDim.x * blockDim.y * blockDim.z;
  if (emu_count > EMU_MAX_THREADS) { fprintf(stderr, "cuda emulator: %u threads per block exceed %u\n", emu_count, EMU_MAX_THREADS); exit(2); }
  if (!emu_stacks) {
    emu_stacks = (char*)mmap(nullptr, EMU_STACK * EMU_MAX_THREADS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (emu_stacks == (char*)MAP_FAILED) { fprintf(stderr, "cuda emulator: no memory for fiber stacks\n"); exit(2); }
  }
  emu_body = body;
  for (unsigned z = 0; z < blockDim.z; ++z)
    for (unsigned y = 0; y < blockDim.y; ++y)
      for (unsigned x = 0; x < blockDim.x; ++x) {
        uint3 idx = {x, y, z};
        EmuFiber& f = emu_fibers[emu_linear(idx)];
        char* stack = emu_stacks + EMU_STACK * emu_linear(idx);
        EMU_UNPOISON(stack, EMU_STACK);
        f.idx = idx;
        f.state = EMU_RUN;
        f.shuffles = 0;
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = stack;
        f.ctx.uc_stack.ss_size = EMU_STACK;
        f.ctx.uc_link = nullptr;
        makecontext(&f.ctx, emu_entry, 0);
      }
  for (;;) {
    for (unsigned i = 0; i < emu_count; ++i) {
      if (emu_fibers[i].state != EMU_RUN) continue;
      emu_current = i;
      threadIdx = emu_fibers[i].idx;
      void* fake = nullptr;
      EMU_START_SWITCH(&fake, emu_stacks + EMU_STACK * i, EMU_STACK);
      swapcontext(&emu_scheduler, &emu_fibers[i].ctx);
      EMU_FINISH_SWITCH(fake, nullptr, nullptr);
    }
    /* Nothing is runnable: release the warps whose live lanes all wait at a shuffle, else the block at __syncthreads. */
    unsigned live = 0, atBlock = 0;
    bool released = false;
    for (unsigned w = 0; w < emu_count; w += 32) {
      unsigned lanes = 0, shuffling = 0;
      for (unsigned i = w; i < w + 32 && i < emu_count; ++i) {
        if (emu_fibers[i].state == EMU_DONE) continue;
        ++lanes;
        if (emu_fibers[i].state == EMU_WARP) ++shuffling;
        if (emu_fibers[i].state == EMU_BLOCK) ++atBlock;
      }
      live += lanes;
      if (lanes > 0 && shuffling == lanes) {
        for (unsigned i = w; i < w + 32 && i < emu_count; ++i)
          if (emu_fibers[i].state == EMU_WARP) emu_fibers[i].state = EMU_RUN;
        released = true;
      }
    }
    if (live == 0) return;
    if (released) continue;
    if (atBlock != live) { emu_current = 0; emu_fail("threads wait at different barriers (__syncthreads and a warp shuffle): divergent synchronization"); }
    for (unsigned i = 0; i < emu_count; ++i)
      if (emu_fibers[i].state == EMU_BLOCK) emu_fibers[i].state = EMU_RUN;
  }
}
`;
