// Stream compaction in one pass: the flags are scanned (counts, with the deterministic
// look-back) and each kept element is written to its place in the same kernel.
#pragma once
#include "block/load.cuh"
#include "block/scan.cuh"

// out[k] = the k-th element whose flag is nonzero (INDICES: its index, as T); *total = count.
// K counts (u32 where n < 2^32).
template <class T, class K, int BLOCK, int R, int MINB, bool ALIGNED, bool INDICES>
__global__ void __launch_bounds__(BLOCK, MINB)
    ds_compact(const T* __restrict__ in, const u8* __restrict__ flags, T* __restrict__ out, u64 n,
               u64* total, u32* counter, u32 base, u32 epoch, ds::Slot* status, u32 tiles) {
  using namespace ds;
  typedef Combine<OpAdd, K> F;
  constexpr int VEC = 16 / sizeof(T);
  const F f{};
  const u32 tile = next_tile<BLOCK>(counter, base);
  const u64 tb = (u64)tile * (BLOCK * R * VEC);
  u8 fl[R][VEC];
  load_rounds<BLOCK, R, VEC, ALIGNED>(flags, n, tb, fl, (u8)0);
  T raw[R][VEC];
  if (!INDICES) load_rounds<BLOCK, R, VEC, ALIGNED>(in, n, tb, raw, T{});
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
}
