// Element-wise kernels: map of one or two inputs through a functor F (the compiled `map`
// expression), generators from the index, and fills, over tiles of R rounds.
#pragma once
#include "block/load.cuh"

// The launch gives every tile its own block (as CUB's transform does): measured on an H200,
// that beat one wave of blocks striding over the tiles with the next tile's loads issued
// early, and bulk copies through shared memory (docs/performance.md, run 20). The loops
// below stride only where a grid cannot hold all tiles.

// out[i] = F(a[i])
template <class F, class Out, class A, int BLOCK, int VEC, int R, bool ALIGNED>
__global__ void __launch_bounds__(BLOCK)
    ds_map1(const A* __restrict__ a, Out* __restrict__ out, u64 n) {
  using namespace ds;
  const F f{};
  constexpr u64 TILE = (u64)BLOCK * VEC * R;
  for (u64 tb = (u64)blockIdx.x * TILE; tb < n; tb += (u64)gridDim.x * TILE) {
    A x[R][VEC];
    load_elementwise<BLOCK, R, VEC, ALIGNED>(a, n, tb, x, A{});
    Out y[R][VEC];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) y[r][j] = from_c<Out>(f(to_c<A>(x[r][j])));
    store_elementwise<BLOCK, R, VEC, ALIGNED>(out, n, tb, y);
  }
}

// out[i] = F(a[i], b[i])
template <class F, class Out, class A, class B, int BLOCK, int VEC, int R, bool ALIGNED>
__global__ void __launch_bounds__(BLOCK)
    ds_map2(const A* __restrict__ a, const B* __restrict__ b, Out* __restrict__ out, u64 n) {
  using namespace ds;
  const F f{};
  constexpr u64 TILE = (u64)BLOCK * VEC * R;
  for (u64 tb = (u64)blockIdx.x * TILE; tb < n; tb += (u64)gridDim.x * TILE) {
    A x[R][VEC];
    B z[R][VEC];
    load_elementwise<BLOCK, R, VEC, ALIGNED>(a, n, tb, x, A{});
    load_elementwise<BLOCK, R, VEC, ALIGNED>(b, n, tb, z, B{});
    Out y[R][VEC];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) y[r][j] = from_c<Out>(f(to_c<A>(x[r][j]), to_c<B>(z[r][j])));
    store_elementwise<BLOCK, R, VEC, ALIGNED>(out, n, tb, y);
  }
}

// out[i] = i as Out (wrapping for integers, rounded for floats).
template <class Out, int BLOCK, int VEC, int R>
__global__ void __launch_bounds__(BLOCK) ds_sequence(Out* __restrict__ out, u64 n) {
  using namespace ds;
  constexpr u64 TILE = (u64)BLOCK * VEC * R;
  for (u64 tb = (u64)blockIdx.x * TILE; tb < n; tb += (u64)gridDim.x * TILE) {
    Out y[R][VEC];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j)
        y[r][j] = from_c<Out>(cast<compute_t<Out>, u64>(item_index<BLOCK, VEC>(tb, r, j)));
    store_rounds<BLOCK, R, VEC, true>(out, n, tb, y);
  }
}

// out[i] = the value whose bits are `bits`.
template <class Out, int BLOCK, int VEC, int R>
__global__ void __launch_bounds__(BLOCK) ds_fill(Out* __restrict__ out, u64 n, u64 bits) {
  using namespace ds;
  constexpr u64 TILE = (u64)BLOCK * VEC * R;
  Out v;
  memcpy(&v, &bits, sizeof(Out));
  for (u64 tb = (u64)blockIdx.x * TILE; tb < n; tb += (u64)gridDim.x * TILE) {
    Out y[R][VEC];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) y[r][j] = v;
    store_rounds<BLOCK, R, VEC, true>(out, n, tb, y);
  }
}
