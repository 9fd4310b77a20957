// Inclusive and exclusive scans: single pass, each element read and written once, with the
// deterministic look-back of block/lookback.cuh.
#pragma once
#include "block/load.cuh"
#include "block/scan.cuh"

// Persistent: each block takes tiles from the counter until there are none left, and loads
// its next tile before scanning the current one, so that the next tile's memory latency
// overlaps the current tile's look-back.
template <class T, class Op, int BLOCK, int R, bool ALIGNED, bool EXCL>
__global__ void __launch_bounds__(BLOCK, ds::SCAN_MIN_BLOCKS)
    ds_scan(const T* __restrict__ in, T* __restrict__ out, u64 n, u64 init_bits, u32* counter,
            u32 base, u32 epoch, ds::Slot* status, u32 tiles) {
  using namespace ds;
  typedef compute_t<T> C;
  typedef Combine<Op, C> F;
  constexpr int VEC = 16 / sizeof(T);
  constexpr u64 TILE = (u64)BLOCK * R * VEC;
  const F f{};
  const C first = EXCL ? from_bits<C>(init_bits) : F::neutral();
  u32 tile = next_tile<BLOCK>(counter, base);
  if (tile >= tiles) return;
  T raw[R][VEC];
  load_rounds<BLOCK, R, VEC, ALIGNED>(in, n, tile * TILE, raw, T{});
  for (;;) {
    const u32 next = next_tile<BLOCK>(counter, base);
    T ahead[R][VEC];
    if (next < tiles) load_rounds<BLOCK, R, VEC, ALIGNED>(in, n, next * TILE, ahead, T{});
    const u64 tb = tile * TILE;
    C x[R][VEC];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j)
        x[r][j] = item_index<BLOCK, VEC>(tb, r, j) < n ? to_c<T>(raw[r][j]) : F::neutral();
    tile_scan<BLOCK, R, VEC, !EXCL>(x, f, F::neutral(), first, status, tiles, tile, epoch);
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) raw[r][j] = from_c<T>(x[r][j]);
    store_rounds<BLOCK, R, VEC, ALIGNED>(out, n, tb, raw);
    if (next >= tiles) return;
    tile = next;
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) raw[r][j] = ahead[r][j];
  }
}
