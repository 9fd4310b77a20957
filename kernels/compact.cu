// Stream compaction in one pass: the flags are scanned (counts, with the deterministic
// look-back) and each tile's kept elements are gathered in shared memory, in order, and
// written out as one contiguous run in the same kernel. The values
// are a source like any: `nonzero_indices` compacts the lazy sequence of positions.
#pragma once
#include "block/source.cuh"
#include "block/scan.cuh"

// out[k] = the k-th element whose flag is nonzero; *total = their count. K counts (u32 where
// n < 2^32).
template <class S, class Fl, class K, int BLOCK, int R, int MINB>
__global__ void __launch_bounds__(BLOCK, MINB)
    ds_compact(const S s, const Fl flags, const CompactParams p) {
  using namespace ds;
  typedef typename S::T T;
  typedef Combine<OpAdd, K> F;
  constexpr int VEC = 16 / sizeof(T);
  const F f{};
  const u64 n = p.n;
  const u32 tile = next_tile<BLOCK>((u32*)p.counter, p.base);
  const u64 tb = (u64)tile * (BLOCK * R * VEC);
  u8 fl[R][VEC];
  src_rounds<BLOCK, R, VEC>(flags, n, tb, fl, (u8)0);
  T raw[R][VEC];
  src_rounds<BLOCK, R, VEC>(s, n, tb, raw, T{});
  K x[R][VEC];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < VEC; ++j) x[r][j] = fl[r][j] != 0 ? 1 : 0;
  tile_scan<BLOCK, R, VEC, false>(x, f, (K)0, (K)0, (Slot*)p.status, p.tiles, tile, p.epoch);
  // The kept elements go to shared memory in order first, then out in contiguous runs: a
  // warp's store covers 32 neighbouring outputs, where storing each thread's items straight
  // to their places scattered every store over several lines.
  __shared__ T stage[BLOCK * R * VEC];
  __shared__ K tile_base, tile_kept;
  if (threadIdx.x == 0) tile_base = x[0][0];
  if (threadIdx.x == BLOCK - 1) tile_kept = x[R - 1][VEC - 1] + (fl[R - 1][VEC - 1] != 0 ? 1 : 0);
  __syncthreads();
  const K base = tile_base;
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      const u64 i = item_index<BLOCK, VEC>(tb, r, j);
      if (fl[r][j] != 0) stage[(u32)(x[r][j] - base)] = raw[r][j];
      if (i + 1 == n) *(u64*)p.total = (u64)x[r][j] + (fl[r][j] != 0 ? 1 : 0);
    }
  __syncthreads();
  const u32 kept = (u32)(tile_kept - base);
  T* __restrict__ out = (T*)p.out + base;
  for (u32 k = threadIdx.x; k < kept; k += BLOCK) out[k] = stage[k];
}
