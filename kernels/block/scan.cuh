// Block-level scan of one tile held in rounds (see block/load.cuh), joined to the tiles
// before it through the deterministic look-back of block/lookback.cuh.
#pragma once
#include "block/lookback.cuh"
#include "warp/scan.cuh"

namespace ds {

// A thread's R exclusive prefixes within its warp, waiting in registers through the look-back
// (`tile_scan_with`) with PACK: the segmented pairs as R values and one mask of their head
// flags (SegCombine's flags are 0 or 1, and only whether one is set matters), 7 registers
// fewer for 8 rounds. At 64 registers (4 blocks a multiprocessor) the f64 segmented scans
// spilled their eight flags without it (20-32 bytes a thread, ptxas sm_90); at 80 the packed
// form made ptxas spill in three lazy 8-byte instances that spill none unpacked, so 3 blocks
// keep the plain array. (Only SegPair values pack. Tried and dropped: warp 0 also parking the
// values in shared memory through its look-back, which took the i64 sums' last 8 bytes of
// spills away, but both the f64 and i64 segmented sums of 2^28 ran 4-5% slower, as slow as at
// 3 blocks: H200, 2026-11-28.)
template <class V, int R> struct PackedPrefixes {};
template <class C, bool W, int R> struct PackedPrefixes<SegPair<C, W>, R> {
  C v[R];
  u32 heads = 0;
  DS_DEV void put(int r, const SegPair<C, W>& x) {
    v[r] = x.v;
    heads |= (x.f != 0 ? 1u : 0u) << r;
  }
  // After the last `put`: the mask becomes opaque to the compiler, which would otherwise keep
  // the flags it was built from (a register each) and test those instead.
  DS_DEV void hold() { asm("" : "+r"(heads)); }
  DS_DEV SegPair<C, W> get(int r) const {
    SegPair<C, W> x{};
    x.v = v[r];
    x.f = heads >> r & 1u;
    return x;
  }
};

// The tile scan over per-round thread aggregates (`tile_scan_rounds`), for kernels that fold
// their own items: on entry a[r] is the combination of the thread's items of round r (in
// order), on return the combination of everything before the thread's first item of round r,
// `first` included. The combination order is fixed: a Kogge-Stone tree across the warp per
// round, then one warp scan over the R x warps chunk totals (one or two a lane, in order), then
// the tile prefix of the deterministic look-back; so results are bitwise reproducible.
// `tile_scan_with` is the same with the tile prefix given by `prefix(total)`, called by all
// lanes of warp 0 with the tile's aggregate (tile_scan_rounds passes the look-back). PACK:
// see PackedPrefixes.
template <int BLOCK, int R, bool WEX_SMEM, bool PACK = false, class V, class F, class P>
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
  // 2026-11-27); parked for every value, the 4-byte segmented scans ran 2% slower. The
  // combination order is the same either way.
  constexpr bool PARK = sizeof(V) > 8;
  __shared__ V s_wex[WEX_SHARED ? R : 1][WEX_SHARED ? BLOCK : 1];
  const int lane = lane_id();
  const int warp = warp_id();
  constexpr bool PACKED = PACK && !WEX_SHARED;
  V wex[WEX_SHARED || PACKED ? 1 : R];
  PackedPrefixes<V, PACKED ? R : 1> packed;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const V inc = warp_scan_incl(a[r], f);
    const V ex = shfl_up(inc, 1);
    if constexpr (WEX_SHARED) s_wex[r][threadIdx.x] = lane == 0 ? neutral : ex;
    else if constexpr (PACKED) packed.put(r, lane == 0 ? neutral : ex);
    else wex[r] = lane == 0 ? neutral : ex;
    if (lane == WARP - 1) s_chunk[r * NW + warp] = inc;
  }
  if constexpr (PACKED) packed.hold();
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
    else if constexpr (PACKED) a[r] = f(s_chunk[r * NW + warp], packed.get(r));
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
