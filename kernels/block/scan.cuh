// Block-level scan of one tile held in rounds (see block/load.cuh), joined to the tiles
// before it through the deterministic look-back of block/lookback.cuh.
#pragma once
#include "block/lookback.cuh"
#include "warp/scan.cuh"

namespace ds {


// Each block takes the next tile number from a counter that only grows (`base` is its value
// when this launch started).
template <int BLOCK> DS_DEV u32 next_tile(u32* counter, u32 base) {
  __shared__ u32 s_tile;
  if (threadIdx.x == 0) s_tile = atomicAdd(counter, 1u) - base;
  __syncthreads();
  return s_tile;
}

// Replaces each x[r][j] of the tile by its prefix over the whole sequence: exclusive
// (`first` f x_0 f ... f x_(i-1)) or, with INCL, inclusive (... f x_i). Items past the end
// must hold `neutral`. The combination order is fixed: thread items in order, then a
// Kogge-Stone tree across the warp per round, then one warp scan over the R x warps chunk
// totals (one or two a lane, in order), then the tile prefix; so results are bitwise
// reproducible.
template <int BLOCK, int R, int VEC, bool INCL, class V, class F>
DS_DEV void tile_scan(V (&x)[R][VEC], const F& f, V neutral, V first, Slot* status, u32 tiles,
                      u32 tile, u32 epoch) {
  constexpr int NW = BLOCK / WARP;
  constexpr int CHUNKS = R * NW;
  constexpr int CPL = (CHUNKS + WARP - 1) / WARP;  // chunk totals a lane of warp 0 takes
  static_assert(CPL <= 2, "rounds x warps must fit in two per lane of one warp");
  __shared__ V s_chunk[CHUNKS];
  const int lane = lane_id();
  const int warp = warp_id();
  V wex[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    V a = x[r][0];
#pragma unroll
    for (int j = 1; j < VEC; ++j) a = f(a, x[r][j]);
    const V inc = warp_scan_incl(a, f);
    const V ex = shfl_up(inc, 1);
    wex[r] = lane == 0 ? neutral : ex;
    if (lane == WARP - 1) s_chunk[r * NW + warp] = inc;
  }
  __syncthreads();
  if (warp == 0) {
    V c[CPL];
#pragma unroll
    for (int q = 0; q < CPL; ++q) {
      const int k = lane * CPL + q;
      c[q] = k < CHUNKS ? s_chunk[k] : neutral;
    }
    V t = c[0];
#pragma unroll
    for (int q = 1; q < CPL; ++q) t = f(t, c[q]);
    const V inc = warp_scan_incl(t, f);
    V ex = shfl_up(inc, 1);
    if (lane == 0) ex = neutral;
    const V total = shfl_idx(inc, WARP - 1);
    const V prefix = tile_prefix(status, tiles, tile, epoch, total, first, f, neutral);
    V p = f(prefix, ex);
#pragma unroll
    for (int q = 0; q < CPL; ++q) {
      const int k = lane * CPL + q;
      if (k < CHUNKS) s_chunk[k] = p;
      p = f(p, c[q]);
    }
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < R; ++r) {
    V p = f(s_chunk[r * NW + warp], wex[r]);
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      const V xj = x[r][j];
      if (INCL) {
        p = f(p, xj);
        x[r][j] = p;
      } else {
        x[r][j] = p;
        p = f(p, xj);
      }
    }
  }
}

}  // namespace ds
