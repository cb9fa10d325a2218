// Hopper (sm_90a) asynchronous-copy and synchronisation primitives of the warp-specialised path:
// TMA tensor loads that complete on an mbarrier, mbarrier waits and arrivals, register
// reallocation between warpgroups and named barriers over a subset of the CTA.
#pragma once
#include "flexjit_mma.cuh"

namespace flexjit {

// ---- mbarriers (64-bit, in shared memory) -----------------------------------------------------

__device__ __forceinline__ void mbarrier_init(u32 bar, u32 arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(arrivals) : "memory");
}
// Makes the initialised barriers visible to the async proxy (TMA) before anyone uses them.
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// One arrival that also announces `bytes` of asynchronous transactions the phase must wait for.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
// Announces `bytes` more asynchronous transactions for the current phase without arriving.
__device__ __forceinline__ void mbarrier_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
// One arrival, made when every cp.async this thread issued before it has landed (the barrier's
// expected count includes it: no pending-count increment).
__device__ __forceinline__ void cp_async_mbarrier_arrive_noinc(u32 bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}
// Orders this thread's earlier generic-proxy accesses of shared memory (ldmatrix reads, cp.async
// writes) before its later async-proxy (TMA) writes to the same bytes.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void mbarrier_arrive(u32 bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// Blocks until the phase of parity `parity` has completed. A fresh barrier is in phase 0, so a
// wait for parity 1 returns at once: producers start with free slots.
__device__ __forceinline__ void mbarrier_wait(u32 bar, u32 parity) {
  u32 done;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

// ---- TMA ------------------------------------------------------------------------------------------

// The host-encoded tensor map (CUtensorMap: 128 opaque bytes, 64-byte aligned) is a
// __grid_constant__ kernel parameter; TMA takes its generic address.
__device__ __forceinline__ void tma_prefetch_map(const void* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<u64>(map)) : "memory");
}
// Copies the map's box at coordinates (c0, c1, c2, c3), innermost first, into shared memory at
// `dst`, completing `bytes` of transactions on `bar`. Coordinates past the tensor's extent read
// zeros (and still count as transferred bytes).
__device__ __forceinline__ void tma_load_4d(u32 dst, const void* map, u32 bar, int c0, int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
      "[%6];" ::"r"(dst),
      "l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
}

// The same for a 5-D map, coordinates (c0, ..., c4) innermost first.
__device__ __forceinline__ void tma_load_5d(u32 dst, const void* map, u32 bar, int c0, int c1, int c2, int c3, int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, "
      "%6}], [%7];" ::"r"(dst),
      "l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(bar)
      : "memory");
}

// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from global `src` to shared
// `dst` as one bulk copy that completes on `bar` (counted in its transaction bytes).
__device__ __forceinline__ void bulk_load(u32 dst, const void* src, u32 bytes, u32 bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

// ---- bulk reductions (shared -> global, the async proxy) -----------------------------------------

// Adds `bytes` (a multiple of 16) of fp32 values at shared `src` element-wise into global `dst`
// (16-byte aligned), as one asynchronous bulk operation of this thread's current bulk group.
__device__ __forceinline__ void bulk_reduce_add_f32(float* dst, u32 src, u32 bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" ::"l"(dst), "r"(src),
               "r"(bytes)
               : "memory");
}
// Copies `bytes` (a multiple of 16) at shared `src` to global `dst` (16-byte aligned), as one
// asynchronous bulk operation of this thread's current bulk group.
__device__ __forceinline__ void bulk_store(void* dst, u32 src, u32 bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(bytes)
               : "memory");
}
// Adds the shared box at `src` (fp32, dense rows) element-wise into the map's box at coordinates
// (c0, c1, c2, c3), innermost first, as one asynchronous bulk operation of this thread's current
// bulk group; elements past the tensor's extent are dropped.
__device__ __forceinline__ void tma_reduce_add_4d(const void* map, u32 src, int c0, int c1, int c2, int c3) {
  asm volatile(
      "cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];" ::"l"(
          reinterpret_cast<u64>(map)),
      "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}
// Stores the shared box at `src` (laid out as the map's swizzle has it) to the map's box at
// coordinates (c0, c1, c2, c3), innermost first, as one asynchronous bulk operation of this
// thread's current bulk group; elements past the tensor's extent are not written.
__device__ __forceinline__ void tma_store_4d(const void* map, u32 src, int c0, int c1, int c2, int c3) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];" ::"l"(
                   reinterpret_cast<u64>(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
}
__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Waits until at most N of this thread's bulk groups still read their shared-memory sources.
template <int N>
__device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
// Waits until at most N of this thread's bulk groups are incomplete (their writes done).
template <int N>
__device__ __forceinline__ void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

// ---- ordered admission (the deterministic dQ sums) ---------------------------------------------------
// A counter in global memory admits the writers of one sum in a fixed order: each waits until the
// counter equals its rank, adds, waits for its add to complete and passes the counter on. The
// adds are async-proxy bulk reductions, so both sides fence between the proxies around the
// counter's acquire and release.
// (ld_acquire_gpu: flexjit_mma.cuh, beside the programmatic launch, for kernels without TMA.)
__device__ __forceinline__ void red_release_gpu_add(int* address, int value) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;" ::"l"(address), "r"(value) : "memory");
}
__device__ __forceinline__ void st_release_gpu(int* address, int value) {
  asm volatile("st.release.gpu.global.s32 [%0], %1;" ::"l"(address), "r"(value) : "memory");
}
__device__ __forceinline__ void fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;" ::: "memory");
}
// One look at a turn counter: whether *counter == rank (then what follows is ordered after the
// adds that passed the turn on). A writer looks once before its tile's dQ is staged, so that in
// the usual case, where its turn has come by then, no read of the counter follows the staging.
__device__ __forceinline__ bool turn_has_come(const int* counter, int rank) {
  if (ld_acquire_gpu(counter) != rank) return false;
  fence_proxy_async_global();  // the adds that follow (bulk copies) come after the acquire
  return true;
}
// Waits until *counter == rank. Gives up after about ten seconds (a counter that never reaches
// the rank is a bug, and a kernel that never returns would hang the caller's process): returns
// false, and the caller adds out of order and reports it.
__device__ __forceinline__ bool wait_for_turn(const int* counter, int rank) {
  for (long long polls = 0; polls < (1ll << 24); ++polls) {
    if (turn_has_come(counter, rank)) return true;
    if (polls >= 1024) __nanosleep(128);  // a turn usually comes within microseconds: spin until then
  }
  return false;
}

// ---- warpgroup roles --------------------------------------------------------------------------------

// Register reallocation between warpgroups (every warp of the warpgroup executes it): producers
// give registers back, consumers take them.
template <int REGS>
__device__ __forceinline__ void warpgroup_release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void warpgroup_claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(REGS));
}

// Zeroes rows first_row.. of a tile held as SLABS 64-column slabs of ROWS rows (slab_bytes apart),
// 128 bytes a row in each (the wgmma tiles: the swizzle permutes chunks within a row, so a row's
// bytes stay its own), 16 bytes a store, by `threads` threads of which this is `thread`. Per-sequence
// lengths clear rows that TMA read from the padding: whatever it holds (NaN too) would otherwise
// reach a product through an exact zero of the other operand. The caller orders the stores before
// the tensor cores read the tile (fence_proxy_async_shared, then a barrier).
template <int ROWS, int SLABS>
__device__ __forceinline__ void clear_tile_rows(u32 tile, u32 slab_bytes, int first_row, int thread, int threads) {
  const int chunks = (ROWS - first_row) * 8;
#pragma unroll
  for (int c = 0; c < SLABS; ++c) {
    const u32 slab = tile + c * slab_bytes + first_row * 128;
    for (int i = thread; i < chunks; i += threads)
      asm volatile("st.shared.v4.b32 [%0], {" "%1, %1, %1, %1};" ::"r"(slab + i * 16), "r"(0u) : "memory");
  }
}

// Barrier `id` (1..15; 0 is __syncthreads) over `threads` threads, a multiple of 32.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
// named_barrier_sync that also tells every thread whether `predicate` held in any of them.
__device__ __forceinline__ bool named_barrier_sync_or(int id, int threads, bool predicate) {
  u32 any;
  asm volatile(
      "{\n\t.reg .pred p, q;\n\tsetp.ne.u32 p, %1, 0;\n\tbar.red.or.pred q, %2, %3, p;\n\tselp.u32 %0, 1, 0, q;\n\t}"
      : "=r"(any)
      : "r"(static_cast<u32>(predicate)), "r"(id), "r"(threads)
      : "memory");
  return any != 0u;
}

// A position in a ring of STAGES slots: the slot and the parity of the round it is in. Advanced
// one fill at a time (no division by a STAGES that is not a power of two).
template <int STAGES>
struct RingSlot {
  int index = 0;
  u32 phase = 0;
  __device__ __forceinline__ void advance() {
    if (++index == STAGES) {
      index = 0;
      phase ^= 1u;
    }
  }
};

// A ring of STAGES slots, each with a "full" barrier (FILLERS arrivals, the producer's
// expect_tx among them, plus the TMA bytes) and an "empty" barrier (CONSUMERS arrivals). A slot's
// fill of round r is complete in phase r of its full barrier; the producer refills it after phase
// r of its empty barrier.
template <int STAGES, int CONSUMERS, int FILLERS = 1>
struct MbarrierRing {
  static constexpr int kBytes = 2 * STAGES * 8;
  using Slot = RingSlot<STAGES>;
  u32 base;  // shared address of 2 * STAGES barriers: full[0..STAGES), empty[0..STAGES)
  __device__ __forceinline__ explicit MbarrierRing(u32 address) : base(address) {}
  __device__ __forceinline__ u32 full(int slot) const { return base + 8u * slot; }
  __device__ __forceinline__ u32 empty(int slot) const { return base + 8u * (STAGES + slot); }
  __device__ __forceinline__ void init() const {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(full(s), FILLERS);
      mbarrier_init(empty(s), CONSUMERS);
    }
  }
  // Producer: wait for the slot to be free (a fresh ring's are), then announce the fill's bytes;
  // returns the barrier the copies complete on.
  __device__ __forceinline__ u32 acquire(const Slot& s, u32 bytes) const {
    mbarrier_wait(empty(s.index), s.phase ^ 1u);
    mbarrier_arrive_expect_tx(full(s.index), bytes);
    return full(s.index);
  }
  // Consumer: wait for the slot's fill to land.
  __device__ __forceinline__ void wait_full(const Slot& s) const { mbarrier_wait(full(s.index), s.phase); }
  // Consumer: one of the CONSUMERS arrivals that free the slot.
  __device__ __forceinline__ void release(const Slot& s) const { mbarrier_arrive(empty(s.index)); }
};

}  // namespace flexjit
