// Stream compaction in one pass: the flags are scanned (counts, with the deterministic
// look-back) and each tile's kept elements are gathered in shared memory, in order, and
// written out as one contiguous run in the same kernel. The values
// are a source like any: `nonzero_indices` compacts the lazy sequence of positions.
#pragma once
#include "block/source.cuh"
#include "block/scan.cuh"

namespace ds {

// Round r's flags into the thread's mask (bit r * VEC + j for item j) and its kept count.
template <int VEC, class K>
DS_DEV void count_round(const u8 (&fl)[VEC], int r, u32& mask, K& kept) {
  u32 m = 0;
#pragma unroll
  for (int j = 0; j < VEC; ++j) m |= (fl[j] != 0 ? 1u : 0u) << j;
  mask |= m << (r * VEC);
  kept = (K)__popc(m);
}

}  // namespace ds

// out[k] = the k-th element whose flag is nonzero; *total = their count. K counts (u32 where
// n < 2^32). OWN: the flags are a lazy source whose one column is the values' own (the same
// elements from the same row: copy_if's `x < c`, dedup's head flags), so they are computed
// from the staged values (its `vec_from`) and the column is read once.
template <class L, class FL, class S, class Fl>
__global__ void __launch_bounds__(L::block, L::minb)
    ds_compact(const S s, const Fl flags, const CompactParams p) {
  typedef typename ds::if_type<FL::wide, u64, u32>::T K;
  constexpr int BLOCK = L::block, R = L::items;
  constexpr bool OWN = FL::own;
  using namespace ds;
  typedef typename S::T T;
  typedef Combine<OpAdd, K> F;
  constexpr int VEC = 16 / sizeof(T);
  static_assert(R * VEC <= 32, "a thread's flags are one 32-bit mask");
  const F f{};
  const u64 n = p.n;
  const u32 tile = next_tile<BLOCK>((u32*)p.counter, p.base);
  const u64 tb = (u64)tile * (BLOCK * R * VEC);
  // The values wait in shared memory (copied asynchronously where they are a stored column)
  // while the flags are counted and the look-back runs: holding them in registers through
  // the look-back limited the kernel to 2 blocks a multiprocessor.
  // The tile's BLOCK * R * VEC elements (the launch gives the bytes).
  extern __shared__ u32x4 ds_compact_stage[];
  T* stage = (T*)ds_compact_stage;
  // Values that read no memory (nonzero_indices' positions) are computed where they move.
  constexpr bool STAGED = S::READS;
  if constexpr (STAGED) src_stage<BLOCK, R, VEC>(s, n, tb, stage, T{});
  // The thread's flags as one mask (bit r * VEC + j for item j of round r) and its kept count
  // of each round: the scan runs over R counts a thread, not R x VEC items.
  u32 mask = 0;
  K a[R];
  {
    u8 fl[R][VEC];
    if constexpr (OWN) {
      // Flags that compare neighbours need the element before each thread's vector: the
      // previous lane's last, or for a warp's first lane its own load of it (issued while the
      // copies are in flight), so that no thread waits for copies but its own.
      constexpr bool PREV = Fl::PREV;
      const int lane = lane_id();
      T first[R];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        first[r] = T{};
        const u64 i = item_index<BLOCK, VEC>(tb, r, 0);
        if constexpr (PREV)
          if (lane == 0 && i < n) first[r] = flags.before(i);
      }
      stage_wait();
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const u64 i = item_index<BLOCK, VEC>(tb, r, 0);
        T v[VEC];
        staged_round<BLOCK, VEC>(stage, r, v);
        T prev = first[r];
        if constexpr (PREV) {
          const T up = shfl_up(v[VEC - 1], 1);
          if (lane != 0) prev = up;
        }
        flags.template vec_from<VEC>(i, v, prev, fl[r]);
        // Items past n have no flag.
        if (i + VEC > n) {
#pragma unroll
          for (int j = 0; j < VEC; ++j)
            if (i + j >= n) fl[r][j] = 0;
        }
        // Counted at once (after all rounds, unique_u32 ran 3% slower at 2^28).
        count_round<VEC>(fl[r], r, mask, a[r]);
      }
    } else {
      src_rounds<BLOCK, R, VEC>(flags, n, tb, fl, (u8)0);
      // Counted after all rounds are loaded (counted as each round's flags came, the
      // instances of stored flags spilled 16-40 bytes a thread).
#pragma unroll
      for (int r = 0; r < R; ++r) count_round<VEC>(fl[r], r, mask, a[r]);
    }
  }
  // Offsets within the tile: the tile's count is published for the tiles after it now, and its
  // prefix (the look-back) is resolved only after the moves, when a thread holds nothing but
  // the tile's count. Looked back here, with every thread's counts, flags and values held
  // through it, find_repeats' instance spilled 20 bytes a thread and copy_if_f32 ran 7% slower
  // at 2^28 (H100, 2026-11-27).
  Slot* status = (Slot*)p.status;
  tile_scan_with<BLOCK, R, false>(a, f, (K)0, [&](K total) {
    if (lane_id() == 0) tile_publish(status, p.tiles, tile, p.epoch, total);
    return (K)0;
  });
  stage_wait();
  // The kept elements move down in shared memory, in order, then go out in contiguous runs:
  // a warp's store covers 32 neighbouring outputs, where storing each thread's items straight
  // to their places scattered every store over several lines. They move in two halves of the
  // tile (rounds): an element of the first half moves within it, and one of the second half
  // lands past the first half's kept ones, so each half is read whole before any of its
  // elements is written, and a thread holds half its items at a time (all of them at once,
  // through the barrier, spilled at 64 registers).
  constexpr int H = R / 2 > 0 ? R / 2 : 1;
  // (Not taken from the scan's total above: set there, by warp 0, the positions compacted by
  // stored byte flags spilled 40 bytes a thread, against 4.)
  __shared__ K tile_kept;
  constexpr u32 ROUND = (1u << VEC) - 1;
  if (threadIdx.x == BLOCK - 1) tile_kept = a[R - 1] + (K)__popc(mask >> ((R - 1) * VEC) & ROUND);
  auto take = [&](int r, T (&v)[VEC]) {
    if constexpr (STAGED) src_staged_round<BLOCK, VEC>(s, tb, stage, r, v);
    else src_round<BLOCK, VEC>(s, n, tb, r, v, T{});
  };
  auto move = [&](int r, const T (&v)[VEC]) {
    const u32 m = mask >> (r * VEC) & ROUND;
    const u32 at = (u32)a[r];
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      const u32 before = (u32)__popc(m & ((1u << j) - 1));
      if ((m >> j & 1) != 0) stage[at + before] = v[j];
    }
  };
  if constexpr (!STAGED) {
    // Values that read no memory are computed and moved a round at a time (nothing they read
    // is overwritten by the moves): held a half at a time, nonzero_indices' instances spilled.
    // The barrier after the moves also publishes `tile_kept` to warp 0's look-back.
#pragma unroll
    for (int r = 0; r < R; ++r) {
      T v[VEC];
      take(r, v);
      move(r, v);
    }
    __syncthreads();  // the tile's count is known
  } else {
    {
      T raw[H][VEC];
#pragma unroll
      for (int r = 0; r < H; ++r) take(r, raw[r]);
      __syncthreads();  // the first half is read, and the tile's count is known
#pragma unroll
      for (int r = 0; r < H; ++r) move(r, raw[r]);
    }
    if constexpr (R > H) {
      T raw[R - H][VEC];
#pragma unroll
      for (int r = H; r < R; ++r) take(r, raw[r - H]);
      __syncthreads();  // the second half is read
#pragma unroll
      for (int r = H; r < R; ++r) move(r, raw[r - H]);
    }
  }
  // The tile's place in the output: warp 0 looks back (and publishes the inclusive count).
  __shared__ K tile_prefix_s;
  if (threadIdx.x < WARP) {
    // (The count copied: passed as a reference to shared memory, ptxas read it there after
    // the look-back, other code that ran 1% slower for copy_if_f32 at 2^28 on an H100.)
    const K pre = tile_lookback(status, p.tiles, tile, p.epoch, (K)tile_kept, (K)0, f, (K)0);
    if (threadIdx.x == 0) {
      tile_prefix_s = pre;
      // The last tile's count through its end is the total (items past n have no flag).
      if (tile + 1 == p.tiles) *(u64*)p.total = (u64)(pre + tile_kept);
    }
  }
  __syncthreads();
  const u32 kept = (u32)tile_kept;
  T* __restrict__ out = (T*)p.out + tile_prefix_s;
  for (u32 k = threadIdx.x; k < kept; k += BLOCK) out[k] = stage[k];
}
