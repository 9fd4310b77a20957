// Gather and scatter with bounds checks: an index outside the target records its position in
// `err` (the smallest such position wins, via atomicMin); the host checks `err` when the call
// completes and then discards the output.
#pragma once
#include "block/load.cuh"

// out[i] = src[idx[i]]
template <class T, class I, int BLOCK, int VEC, int R, bool ALIGNED>
__global__ void __launch_bounds__(BLOCK)
    ds_gather(const T* __restrict__ src, u64 len, const I* __restrict__ idx, T* __restrict__ out,
              u64 n, u64* err) {
  using namespace ds;
  constexpr u64 TILE = (u64)BLOCK * VEC * R;
  for (u64 tb = (u64)blockIdx.x * TILE; tb < n; tb += (u64)gridDim.x * TILE) {
    I ix[R][VEC];
    load_elementwise<BLOCK, R, VEC, ALIGNED>(idx, n, tb, ix, (I)0);
    T y[R][VEC];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const u64 k = (u64)ix[r][j];
        if (k < len) {
          y[r][j] = src[k];
        } else {
          y[r][j] = T{};
          const u64 i = elementwise_index<BLOCK, VEC, ALIGNED>(tb, r, j);
          if (i < n) atomicMin(err, i);
        }
      }
    store_elementwise<BLOCK, R, VEC, ALIGNED>(out, n, tb, y);
  }
}

// out[idx[i]] = vals[i] (out already holds the base)
template <class T, class I, int BLOCK, int VEC, int R, bool ALIGNED>
__global__ void __launch_bounds__(BLOCK)
    ds_scatter(const T* __restrict__ vals, const I* __restrict__ idx, T* __restrict__ out, u64 len,
               u64 n, u64* err) {
  using namespace ds;
  constexpr u64 TILE = (u64)BLOCK * VEC * R;
  for (u64 tb = (u64)blockIdx.x * TILE; tb < n; tb += (u64)gridDim.x * TILE) {
    I ix[R][VEC];
    T v[R][VEC];
    load_elementwise<BLOCK, R, VEC, ALIGNED>(idx, n, tb, ix, (I)0);
    load_elementwise<BLOCK, R, VEC, ALIGNED>(vals, n, tb, v, T{});
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const u64 i = elementwise_index<BLOCK, VEC, ALIGNED>(tb, r, j);
        if (i >= n) continue;
        const u64 k = (u64)ix[r][j];
        if (k < len) out[k] = v[r][j];
        else atomicMin(err, i);
      }
  }
}
