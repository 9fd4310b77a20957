// Inclusive and exclusive scans: single pass, each element read and written once, with the
// deterministic look-back of block/lookback.cuh.
#pragma once
#include "block/load.cuh"
#include "block/scan.cuh"

template <class T, class Op, int BLOCK, int R, int MINB, bool ALIGNED, bool EXCL>
__global__ void __launch_bounds__(BLOCK, MINB)
    ds_scan(const T* __restrict__ in, T* __restrict__ out, u64 n, u64 init_bits, u32* counter,
            u32 base, u32 epoch, ds::Slot* status, u32 tiles) {
  using namespace ds;
  typedef compute_t<T> C;
  typedef Combine<Op, C> F;
  constexpr int VEC = 16 / sizeof(T);
  const F f{};
  const u32 tile = next_tile<BLOCK>(counter, base);
  const u64 tb = (u64)tile * (BLOCK * R * VEC);
  T raw[R][VEC];
  load_rounds<BLOCK, R, VEC, ALIGNED>(in, n, tb, raw, T{});
  C x[R][VEC];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      x[r][j] = item_index<BLOCK, VEC>(tb, r, j) < n ? to_c<T>(raw[r][j]) : F::neutral();
  const C first = EXCL ? from_bits<C>(init_bits) : F::neutral();
  tile_scan<BLOCK, R, VEC, !EXCL>(x, f, F::neutral(), first, status, tiles, tile, epoch);
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < VEC; ++j) raw[r][j] = from_c<T>(x[r][j]);
  store_rounds<BLOCK, R, VEC, ALIGNED>(out, n, tb, raw);
}
