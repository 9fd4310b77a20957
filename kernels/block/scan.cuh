// Block-level scan of one tile held in rounds (see block/load.cuh), joined to the tiles
// before it through the deterministic look-back of block/lookback.cuh.
#pragma once
#include "block/lookback.cuh"
#include "warp/scan.cuh"

namespace ds {

// The tile scan over per-round thread aggregates (`tile_scan_rounds`), for kernels that fold
// their own items: on entry a[r] is the combination of the thread's items of round r (in
// order), on return the combination of everything before the thread's first item of round r,
// `first` included. The combination order is fixed: a Kogge-Stone tree across the warp per
// round, then one warp scan over the R x warps chunk totals (one or two a lane, in order), then
// the tile prefix of the deterministic look-back; so results are bitwise reproducible.
// `tile_scan_with` is the same with the tile prefix given by `prefix(total)`, called by all
// lanes of warp 0 with the tile's aggregate (tile_scan_rounds passes the look-back).
template <int BLOCK, int R, bool WEX_SMEM, class V, class F, class P>
DS_DEV void tile_scan_with(V (&a)[R], const F& f, V neutral, const P& prefix) {
  constexpr int NW = BLOCK / WARP;
  constexpr int CHUNKS = R * NW;
  constexpr int CPL = (CHUNKS + WARP - 1) / WARP;  // chunk totals a lane of warp 0 takes
  static_assert(CPL <= 4, "rounds x warps must fit in four per lane of one warp");
  // Each thread's exclusive prefix within its warp, per round, waits in registers for values
  // of up to 4 bytes and in shared memory (up to 24 KB of it) for wider ones, the pairs of
  // the segmented kernels, where holding them through the look-back spilled registers.
  // (Kernels whose tiles wait in shared memory already, WEX_SMEM false, keep them in registers.)
  constexpr bool WEX_SHARED = WEX_SMEM && sizeof(V) > 4 && sizeof(V) * R * BLOCK <= 24 * 1024;
  __shared__ V s_chunk[CHUNKS];
  // Values wider than 8 bytes (the pairs of 8-byte values) do not wait in registers through the
  // look-back (`prefix`): the tile's total, each lane's prefix and the chunk totals wait in
  // shared memory. Held in registers, the 8-byte segmented scans at 64 registers spilled 80-88
  // bytes a thread (ptxas), and segmented_scan_add_i64 at 2^28 took 2.09 ms against 1.80 (H100,
  // 2026-11-27, run 237); parked for every value, the 4-byte segmented scans ran 2% slower. The
  // combination order is the same either way.
  constexpr bool PARK = sizeof(V) > 8;
  __shared__ V s_wex[WEX_SHARED ? R : 1][WEX_SHARED ? BLOCK : 1];
  const int lane = lane_id();
  const int warp = warp_id();
  V wex[WEX_SHARED ? 1 : R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const V inc = warp_scan_incl(a[r], f);
    const V ex = shfl_up(inc, 1);
    if constexpr (WEX_SHARED) s_wex[r][threadIdx.x] = lane == 0 ? neutral : ex;
    else wex[r] = lane == 0 ? neutral : ex;
    if (lane == WARP - 1) s_chunk[r * NW + warp] = inc;
  }
  __syncthreads();
  if (warp == 0) {
    // The lane's chunk totals (neutral past the last).
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
    V p;
    if constexpr (PARK) {
      __shared__ V s_lex[WARP];
      __shared__ V s_total;
      if (lane == WARP - 1) s_total = inc;
      s_lex[lane] = ex;
      __syncwarp();
      const V pre = prefix(s_total);
      p = f(pre, s_lex[lane]);
#pragma unroll
      for (int q = 0; q < CPL; ++q) {
        const int k = lane * CPL + q;
        c[q] = k < CHUNKS ? s_chunk[k] : neutral;
      }
    } else {
      p = f(prefix(shfl_idx(inc, WARP - 1)), ex);
    }
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
    if constexpr (WEX_SHARED) a[r] = f(s_chunk[r * NW + warp], s_wex[r][threadIdx.x]);
    else a[r] = f(s_chunk[r * NW + warp], wex[r]);
  }
}

template <int BLOCK, int R, bool WEX_SMEM = true, class V, class F>
DS_DEV void tile_scan_rounds(V (&a)[R], const F& f, V neutral, V first, Slot* status, u32 tiles,
                             u32 tile, u32 epoch) {
  tile_scan_with<BLOCK, R, WEX_SMEM>(a, f, neutral, [&](const V& total) {
    return tile_prefix(status, tiles, tile, epoch, total, first, f, neutral);
  });
}

}  // namespace ds
