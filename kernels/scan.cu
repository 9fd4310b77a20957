// Inclusive and exclusive scans: single pass, each element read and written once, with the
// deterministic look-back of block/lookback.cuh.
#pragma once
#include "block/source.cuh"
#include "block/scan.cuh"

template <class L, class FL, class S>
__global__ void __launch_bounds__(L::block, L::minb) ds_scan(const S s, const ScanParams p) {
  typedef typename FL::op Op;
  constexpr int BLOCK = L::block, R = L::items;
  constexpr bool EXCL = FL::exclusive;
  using namespace ds;
  typedef typename S::T T;
  typedef wide_t<T> C;
  typedef Combine<Op, C> F;
  constexpr int VEC = 16 / sizeof(T);
  constexpr int TILE = BLOCK * R * VEC;
  extern __shared__ u32x4 ds_scan_tile[];  // TILE elements (the launch gives the bytes)
  T* s_tile = (T*)ds_scan_tile;
  const F f{};
  const u64 n = p.n;
  const u32 tile = next_tile<BLOCK>((u32*)p.counter, p.base);
  const u64 tb = (u64)tile * TILE;
  src_stage<BLOCK, R, VEC>(s, n, tb, s_tile, T{});
  src_stage_wait<BLOCK, R, VEC>(s, tb, s_tile);
  // The thread's items of round r; with `fill`, the operator's neutral past the end. The
  // outputs there are not stored, so the second reading of a lazy source's items leaves it out
  // (with the staging's 32-bit bounds, ptxas spilled in 5 of the compile check's 70 lazy scans
  // instead of 27); a stored column keeps it (left out, the f64 minima and maxima spilled).
  const u32 rem = n - tb < TILE ? (u32)(n - tb) : TILE;
  auto items = [&](int r, C (&x)[VEC], bool fill) {
    T v[VEC];
    staged_round<BLOCK, VEC>(s_tile, r, v);
    const u32 k = ((u32)r * BLOCK + threadIdx.x) * VEC;
#pragma unroll
    for (int j = 0; j < VEC; ++j) x[j] = !fill || k + j < rem ? to_c<T>(v[j]) : F::neutral();
  };
  C a[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    C x[VEC];
    items(r, x, true);
    a[r] = x[0];
#pragma unroll
    for (int j = 1; j < VEC; ++j) a[r] = f(a[r], x[j]);
  }
  const C first = EXCL ? (C)from_bits<compute_t<T>>(p.init) : F::neutral();
  tile_scan_rounds<BLOCK, R, false>(a, f, F::neutral(), first, (Slot*)p.status, p.tiles, tile,
                                    p.epoch);
  T* __restrict__ out = (T*)p.out;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    C x[VEC];
    items(r, x, S::PLAIN);
    T v[VEC];
    C q = a[r];
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      if (EXCL) {
        v[j] = from_c<T>(q);
        q = f(q, x[j]);
      } else {
        q = f(q, x[j]);
        v[j] = from_c<T>(q);
      }
    }
    store_round<BLOCK, VEC, true>(out, n, tb, r, v);
  }
}
