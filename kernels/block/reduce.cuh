// Block-level reduction in thread order.
#pragma once
#include "warp/reduce.cuh"

namespace ds {

// The combination of every thread's v in thread order (fixed tree: warps, then warp 0 over
// the warp results); valid in thread 0. Uses (and first waits for) its own shared memory.
template <int BLOCK, class V, class F> DS_DEV V block_reduce(V v, const F& f, V neutral) {
  constexpr int NW = BLOCK / WARP;
  __shared__ V s_warp[NW];
  v = warp_reduce(v, f);
  __syncthreads();
  if (lane_id() == 0) s_warp[warp_id()] = v;
  __syncthreads();
  if (warp_id() == 0) {
    V w = lane_id() < NW ? s_warp[lane_id()] : neutral;
    v = warp_reduce(w, f);
  }
  return v;
}

}  // namespace ds
