// Warp-level reduction in lane order.
#pragma once
#include "warp/scan.cuh"

namespace ds {

// v_0 f v_1 f ... f v_31 by a fixed tree that keeps lane order (F need not be commutative);
// the result is valid in lane 0.
template <class V, class F> DS_DEV V warp_reduce(V v, const F& f) {
  const int lane = lane_id();
#pragma unroll
  for (int d = 1; d < WARP; d *= 2) {
    V o = shfl_down(v, d);
    if (lane + d < WARP) v = f(v, o);
  }
  return v;
}

}  // namespace ds
