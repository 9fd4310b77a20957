// Gather and scatter with bounds checks: an index outside the target records its position in
// `err` (note_bad_index: the smallest such position wins); the host checks `err` when the
// call completes and then discards the output.
#pragma once
#include "block/load.cuh"

// out[i] = src[idx[i]]
template <class T, class I, int BLOCK, int VEC, int R, bool ALIGNED>
__global__ void __launch_bounds__(BLOCK)
    ds_gather(const T* __restrict__ src, u64 len, const I* __restrict__ idx, T* __restrict__ out,
              u64 n, u64* err, u32* flag) {
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
          if (i < n) note_bad_index(err, flag, i);
        }
      }
    store_elementwise<BLOCK, R, VEC, ALIGNED>(out, n, tb, y);
  }
}

// out[idx[i]] = vals[i] (out already holds the base). With err null (after the partition of
// scatter, whose sort checked the indices) a bad index is only skipped.
template <class T, class I, int BLOCK, int VEC, int R, bool ALIGNED>
__global__ void __launch_bounds__(BLOCK)
    ds_scatter(const T* __restrict__ vals, const I* __restrict__ idx, T* __restrict__ out, u64 len,
               u64 n, u64* err, u32* flag) {
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
        else if (err) note_bad_index(err, flag, i);
      }
  }
}

// Whether a scatter's writes are near each other: at `windows` evenly spaced places, a warp
// reads 32 neighbouring indices and counts into *far whether they span more than `span`
// elements. Needs n >= 32; one warp a window.
template <class I, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    ds_index_spread(const I* __restrict__ idx, u64 n, u32 windows, u64 span, u64* far) {
  using namespace ds;
  const u32 w = (blockIdx.x * BLOCK + threadIdx.x) / WARP;
  if (w >= windows) return;  // whole warps leave together
  const u64 start = windows > 1 ? (n - WARP) * w / (windows - 1) : 0;
  const u64 k = (u64)idx[start + lane_id()];
  u64 lo = k, hi = k;
#pragma unroll
  for (int d = WARP / 2; d > 0; d /= 2) {
    const u64 a = __shfl_xor_sync(FULL, lo, d), b = __shfl_xor_sync(FULL, hi, d);
    lo = a < lo ? a : lo;
    hi = b > hi ? b : hi;
  }
  if (lane_id() == 0 && hi - lo > span) atomicAdd(far, 1ull);
}
