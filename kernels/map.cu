// Materializing a source: out[i] = the source's element i (a lazy sequence's expression
// evaluated, a constant filled, ...), over tiles of R rounds.
#pragma once
#include "block/source.cuh"

namespace ds {

// out[i] = s's element i for i < n, over the grid's tiles of R rounds (ds_map; the copy of
// ds_scatter_base's base).
template <int BLOCK, int VEC, int R, class S>
DS_DEV void map_tiles(const S& s, typename S::T* __restrict__ out, u64 n) {
  typedef typename S::T T;
  constexpr bool BLOCKED = src_blocked<S, VEC>::value;
  constexpr u64 TILE = (u64)BLOCK * VEC * R;
  for (u64 tb = (u64)blockIdx.x * TILE; tb < n; tb += (u64)gridDim.x * TILE) {
    T y[R][VEC];
    src_elementwise<BLOCK, R, VEC>(s, n, tb, y, T{});
    store_elementwise<BLOCK, R, VEC, BLOCKED>(out, n, tb, y);
  }
}

}  // namespace ds

// The launch gives every tile its own block (as CUB's transform does): measured on an H200,
// that beat one wave of blocks striding over the tiles with the next tile's loads issued
// early, and bulk copies through shared memory (docs/tuning.md, Map). The loop
// strides only where a grid cannot hold all tiles.
template <class L, class S>
__global__ void __launch_bounds__(L::block) ds_map(const S s, const MapParams p) {
  constexpr int BLOCK = L::block, VEC = L::vec, R = L::items;
  ds::map_tiles<BLOCK, VEC, R>(s, (typename S::T*)p.out, p.n);
}
