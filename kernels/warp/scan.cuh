// Warp-level shuffles of any trivially copyable value, and the warp's inclusive scan.
#pragma once
#include "prelude.cuh"

namespace ds {

// __shfl_*_sync of a value of any size, one 32-bit word at a time.
#define DS_SHFL(NAME, INTRINSIC)                                  \
  template <class V> DS_DEV V NAME(V v, int arg) {                \
    constexpr int N = (sizeof(V) + 3) / 4;                        \
    u32 w[N];                                                     \
    _Pragma("unroll") for (int k = 0; k < N; ++k) w[k] = 0;       \
    memcpy(w, &v, sizeof(V));                           \
    _Pragma("unroll") for (int k = 0; k < N; ++k) w[k] = INTRINSIC(FULL, w[k], arg); \
    V r;                                                          \
    memcpy(&r, w, sizeof(V));                           \
    return r;                                                     \
  }
DS_SHFL(shfl_up, __shfl_up_sync)
DS_SHFL(shfl_down, __shfl_down_sync)
DS_SHFL(shfl_idx, __shfl_sync)
#undef DS_SHFL

// Inclusive scan across the 32 lanes, in lane order (F need not be commutative): lane l gets
// v_0 f v_1 f ... f v_l, combined by the fixed Kogge-Stone tree.
template <class V, class F> DS_DEV V warp_scan_incl(V v, const F& f) {
  const int lane = lane_id();
#pragma unroll
  for (int d = 1; d < WARP; d *= 2) {
    V o = shfl_up(v, d);
    if (lane >= d) v = f(o, v);
  }
  return v;
}

}  // namespace ds
