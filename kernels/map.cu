// Materializing a source: out[i] = the source's element i (a lazy sequence's expression
// evaluated, a constant filled, ...), over tiles of R rounds.
#pragma once
#include "block/source.cuh"

// The launch gives every tile its own block (as CUB's transform does): measured on an H200,
// that beat one wave of blocks striding over the tiles with the next tile's loads issued
// early, and bulk copies through shared memory (docs/performance.md, run 20). The loop
// strides only where a grid cannot hold all tiles.
template <class S, int BLOCK, int VEC, int R>
__global__ void __launch_bounds__(BLOCK) ds_map(const S s, const MapParams p) {
  using namespace ds;
  typedef typename S::T T;
  constexpr bool BLOCKED = src_blocked<S, VEC>::value;
  T* __restrict__ out = (T*)p.out;
  const u64 n = p.n;
  constexpr u64 TILE = (u64)BLOCK * VEC * R;
  for (u64 tb = (u64)blockIdx.x * TILE; tb < n; tb += (u64)gridDim.x * TILE) {
    T y[R][VEC];
    src_elementwise<BLOCK, R, VEC>(s, n, tb, y, T{});
    store_elementwise<BLOCK, R, VEC, BLOCKED>(out, n, tb, y);
  }
}
