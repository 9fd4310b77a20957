// The last step of scatter_combine: the (index, value) pairs sorted stably by index form one
// run per slot; a single-pass segmented scan (deterministic look-back) combines each run in
// order and its last element writes out[slot] = run op base[slot] (out holds a copy of base).
#pragma once
#include "block/load.cuh"
#include "block/scan.cuh"
#include "segment.cu"

template <class T, class I, class Op, int BLOCK, int R, int MINB, bool ALIGNED>
__global__ void __launch_bounds__(BLOCK, MINB)
    ds_combine_runs(const I* __restrict__ keys, const T* __restrict__ vals, T* out, u64 n,
                    u32* counter, u32 base, u32 epoch, ds::Slot* status, u32 tiles) {
  using namespace ds;
  typedef compute_t<T> C;
  typedef SegCombine<Op, C> F;
  typedef typename F::V V;
  constexpr int VEC = 16 / sizeof(T);
  const F f{};
  const u32 tile = next_tile<BLOCK>(counter, base);
  const u64 tb = (u64)tile * (BLOCK * R * VEC);
  T raw[R][VEC];
  I key[R][VEC];
  load_rounds<BLOCK, R, VEC, ALIGNED>(vals, n, tb, raw, T{});
  load_rounds<BLOCK, R, VEC, ALIGNED>(keys, n, tb, key, (I)0);
  V x[R][VEC];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      const u64 i = item_index<BLOCK, VEC>(tb, r, j);
      if (i < n) {
        const I prev = j > 0 ? key[r][j - 1] : (i > 0 ? keys[i - 1] : key[r][j]);
        x[r][j].v = to_c<T>(raw[r][j]);
        x[r][j].f = (i == 0 || prev != key[r][j]) ? 1u : 0u;
      } else {
        x[r][j] = F::neutral();
      }
    }
  tile_scan<BLOCK, R, VEC, true>(x, f, F::neutral(), F::neutral(), status, tiles, tile, epoch);
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      const u64 i = item_index<BLOCK, VEC>(tb, r, j);
      if (i >= n) continue;
      const I k = key[r][j];
      const bool last = i + 1 == n || ((j + 1 < VEC) ? key[r][j + 1] : keys[i + 1]) != k;
      if (last) out[k] = from_c<T>(Op::template apply<C>(x[r][j].v, to_c<T>(out[k])));
    }
}
