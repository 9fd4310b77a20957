// Segments given by head flags: segmented scans (a single-pass scan of (value, flag) pairs with
// the flag-carrying operator), reduction per segment, and head flags of a sequence.
#pragma once
#include "block/load.cuh"
#include "block/scan.cuh"

namespace ds {

// (a, fa) f (b, fb) = fb ? (b, fb) : (a op b, fa): associative, restarts at heads.
template <class Op, class C> struct SegCombine {
  typedef SegPair<C> V;
  DS_DEV V operator()(V a, V b) const {
    if (b.f) return b;
    V r;
    r.v = Op::template apply<C>(a.v, b.v);
    r.f = a.f;
    return r;
  }
  static DS_DEV V neutral() {
    V r;
    r.v = Op::template neutral<C>();
    r.f = 0;
    return r;
  }
  static DS_DEV V make(C v, bool head) {
    V r;
    r.v = v;
    r.f = head ? 1u : 0u;
    return r;
  }
};

// (value, head flag, heads so far): segmented_reduce's element.
template <class C, class K> struct SegCount {
  C v;
  u32 f;
  K c;
};
template <class C, class K> struct exact_fold<SegCount<C, K>> {
  static constexpr bool value = exact_fold<C>::value;
};
template <class Op, class C, class K> struct SegCountCombine {
  typedef SegCount<C, K> V;
  DS_DEV V operator()(V a, V b) const {
    V r;
    r.v = b.f ? b.v : Op::template apply<C>(a.v, b.v);
    r.f = a.f | b.f;
    r.c = a.c + b.c;
    return r;
  }
  static DS_DEV V neutral() {
    V r;
    r.v = Op::template neutral<C>();
    r.f = 0;
    r.c = 0;
    return r;
  }
};

}  // namespace ds

// Segmented inclusive (EXCL = false) or exclusive scan; element 0 always starts a segment.
// The exclusive form gives `init` at each head and init op (the segment's elements before
// this one) elsewhere.
template <class T, class Op, int BLOCK, int R, int MINB, bool ALIGNED, bool EXCL>
__global__ void __launch_bounds__(BLOCK, MINB)
    ds_segscan(const T* __restrict__ in, const u8* __restrict__ flags, T* __restrict__ out, u64 n,
               u64 init_bits, u32* counter, u32 base, u32 epoch, ds::Slot* status, u32 tiles) {
  using namespace ds;
  typedef compute_t<T> C;
  typedef SegCombine<Op, C> F;
  typedef typename F::V V;
  constexpr int VEC = 16 / sizeof(T);
  const F f{};
  const u32 tile = next_tile<BLOCK>(counter, base);
  const u64 tb = (u64)tile * (BLOCK * R * VEC);
  T raw[R][VEC];
  u8 fl[R][VEC];
  load_rounds<BLOCK, R, VEC, ALIGNED>(in, n, tb, raw, T{});
  load_rounds<BLOCK, R, VEC, ALIGNED>(flags, n, tb, fl, (u8)0);
  V x[R][VEC];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      const u64 i = item_index<BLOCK, VEC>(tb, r, j);
      if (i == 0) fl[r][j] = 1;
      if (i < n) {
        x[r][j].v = to_c<T>(raw[r][j]);
        x[r][j].f = fl[r][j] != 0;
      } else {
        x[r][j] = F::neutral();
      }
    }
  tile_scan<BLOCK, R, VEC, !EXCL>(x, f, F::neutral(), F::neutral(), status, tiles, tile, epoch);
  const C init = from_bits<C>(init_bits);
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      C v = x[r][j].v;
      if (EXCL) v = fl[r][j] ? init : Op::template apply<C>(init, v);
      raw[r][j] = from_c<T>(v);
    }
  store_rounds<BLOCK, R, VEC, ALIGNED>(out, n, tb, raw);
}

// One value per segment, in order: out[s] = op-combination of segment s. K counts heads.
template <class T, class Op, class K, int BLOCK, int R, int MINB, bool ALIGNED>
__global__ void __launch_bounds__(BLOCK, MINB)
    ds_segreduce(const T* __restrict__ in, const u8* __restrict__ flags, T* __restrict__ out, u64 n,
                 u32* counter, u32 base, u32 epoch, ds::Slot* status, u32 tiles) {
  using namespace ds;
  typedef compute_t<T> C;
  typedef SegCountCombine<Op, C, K> F;
  typedef typename F::V V;
  constexpr int VEC = 16 / sizeof(T);
  const F f{};
  const u32 tile = next_tile<BLOCK>(counter, base);
  const u64 tb = (u64)tile * (BLOCK * R * VEC);
  T raw[R][VEC];
  u8 fl[R][VEC];
  load_rounds<BLOCK, R, VEC, ALIGNED>(in, n, tb, raw, T{});
  load_rounds<BLOCK, R, VEC, ALIGNED>(flags, n, tb, fl, (u8)0);
  V x[R][VEC];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      const u64 i = item_index<BLOCK, VEC>(tb, r, j);
      if (i == 0) fl[r][j] = 1;
      if (i < n) {
        x[r][j].v = to_c<T>(raw[r][j]);
        x[r][j].f = fl[r][j] != 0;
        x[r][j].c = fl[r][j] != 0 ? 1 : 0;
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
      bool last = i + 1 == n;
      if (!last) last = (j + 1 < VEC) ? fl[r][j + 1] != 0 : flags[i + 1] != 0;
      if (last) out[x[r][j].c - 1] = from_c<T>(x[r][j].v);
    }
}

// out[i] = 1 where i == 0 or the bits of in[i] differ from those of in[i-1], else 0.
template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    ds_head_flags(const T* __restrict__ in, u8* __restrict__ out, u64 n) {
  using namespace ds;
  typedef typename word_of<sizeof(T)>::T W;
  const W* w = reinterpret_cast<const W*>(in);
  for (u64 i = (u64)blockIdx.x * BLOCK + threadIdx.x; i < n; i += (u64)gridDim.x * BLOCK) {
    out[i] = (i == 0 || w[i] != w[i - 1]) ? 1 : 0;
  }
}
