// Stream compaction in one pass: the flags are scanned (counts, with the deterministic
// look-back) and each kept element is written to its place in the same kernel.
#pragma once
#include "block/load.cuh"
#include "block/scan.cuh"

// out[k] = the k-th element whose flag is nonzero (INDICES: its index, as T); *total = count.
// K counts (u32 where n < 2^32). Persistent, loading the next tile ahead (as ds_scan).
template <class T, class K, int BLOCK, int R, bool ALIGNED, bool INDICES>
__global__ void __launch_bounds__(BLOCK, ds::SCAN_MIN_BLOCKS)
    ds_compact(const T* __restrict__ in, const u8* __restrict__ flags, T* __restrict__ out, u64 n,
               u64* total, u32* counter, u32 base, u32 epoch, ds::Slot* status, u32 tiles) {
  using namespace ds;
  typedef Combine<OpAdd, K> F;
  constexpr int VEC = 16 / sizeof(T);
  constexpr u64 TILE = (u64)BLOCK * R * VEC;
  const F f{};
  u32 tile = next_tile<BLOCK>(counter, base);
  if (tile >= tiles) return;
  u8 fl[R][VEC];
  T raw[R][VEC];
  load_rounds<BLOCK, R, VEC, ALIGNED>(flags, n, tile * TILE, fl, (u8)0);
  if (!INDICES) load_rounds<BLOCK, R, VEC, ALIGNED>(in, n, tile * TILE, raw, T{});
  for (;;) {
    const u32 next = next_tile<BLOCK>(counter, base);
    u8 fl_ahead[R][VEC];
    T raw_ahead[R][VEC];
    if (next < tiles) {
      load_rounds<BLOCK, R, VEC, ALIGNED>(flags, n, next * TILE, fl_ahead, (u8)0);
      if (!INDICES) load_rounds<BLOCK, R, VEC, ALIGNED>(in, n, next * TILE, raw_ahead, T{});
    }
    const u64 tb = tile * TILE;
    K x[R][VEC];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) x[r][j] = fl[r][j] != 0 ? 1 : 0;
    tile_scan<BLOCK, R, VEC, false>(x, f, (K)0, (K)0, status, tiles, tile, epoch);
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const u64 i = item_index<BLOCK, VEC>(tb, r, j);
        if (i < n && fl[r][j] != 0) {
          if constexpr (INDICES) out[x[r][j]] = (T)i;
          else out[x[r][j]] = raw[r][j];
        }
        if (i + 1 == n) *total = (u64)x[r][j] + (fl[r][j] != 0 ? 1 : 0);
      }
    if (next >= tiles) return;
    tile = next;
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        fl[r][j] = fl_ahead[r][j];
        if (!INDICES) raw[r][j] = raw_ahead[r][j];
      }
  }
}
