// Segments given by head flags: segmented scans (a single-pass scan of (value, flag) pairs with
// the flag-carrying operator), reduction per segment, and head flags of a sequence.
#pragma once
#include "block/source.cuh"
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

// The segment that runs into a tile from before it, found by reading back: warp 0 of a
// segmented-scan block copies the SEG_TAIL elements before its tile (all of them, for the
// first tiles) and their flags to shared memory when the block starts, by asynchronous copies
// that overlap with the tile's own loads, and folds them (pairs under SegCombine, in a fixed
// order). Where they hold a head, the fold is the tile's prefix, found without waiting for any
// other tile; else the tile looks back. (Where the fold finds a head, the look-back's answer
// would be the same segment's combination: bit for bit for integers, in another grouping for
// floats, each fixed by the data, so runs stay reproducible.) 1024 elements, measured on an
// H100 (2026-11-22, run 50; heads every 1000, docs/performance.md): 0.848 ms for 2^28 i32
// against 0.919 looking back only; 512 (half the tiles then look back) 0.863; 2048 1.11.
constexpr int SEG_TAIL = 1024;

template <class T> struct SegTail {
  static constexpr int VEC = 16 / sizeof(T);
  static_assert(SEG_TAIL % (WARP * 16) == 0, "whole rounds of 16 bytes a lane");
  u32x4 vals[SEG_TAIL * sizeof(T) / 16];
  u32x4 heads[SEG_TAIL / 16];

  // The first element read back for a tile starting at tb.
  static DS_DEV u64 start(u64 tb) { return tb > SEG_TAIL ? tb - SEG_TAIL : 0; }

  // Warp 0: start copying the elements [start(tb), tb) of the values and flags (sources).
  template <class S, class Fl> DS_DEV void stage(const S& s, const Fl& fl, u64 tb) {
    const u64 ws = start(tb);
    src_stage<WARP, SEG_TAIL / (WARP * VEC), VEC>(s, tb, ws, (T*)vals, T{});
    u8* h = (u8*)heads;
    if constexpr (Fl::PLAIN) {
      if (((u64)fl.p & 15) == 0)
        stage_rounds<WARP, SEG_TAIL / (WARP * 16), 16, true>(fl.p, tb, ws, h, (u8)0);
      else
        stage_rounds<WARP, SEG_TAIL / (WARP * 16), 16, false>(fl.p, tb, ws, h, (u8)0);
    } else {
      // Computed one at a time: the flags' columns are aligned for the tile's vectors only.
      for (int e = lane_id(); e < SEG_TAIL; e += WARP) h[e] = ws + e < tb ? fl.at(ws + e) : (u8)0;
    }
  }

  // Warp 0, after `stage`: the fold of the copied elements in order, by rounds of the warp
  // (each a fold per lane, then a warp tree), element 0 of the sequence a head.
  template <class F> DS_DEV typename F::V fold(u64 tb, const F& f) const {
    typedef typename F::V V;
    stage_wait();
    __syncwarp();
    const u64 ws = start(tb);
    const u8* fl = (const u8*)heads;
    V acc = F::neutral();
#pragma unroll
    for (int k = 0; k < SEG_TAIL / (WARP * VEC); ++k) {
      const u32 e = ((u32)k * WARP + lane_id()) * VEC;
      T w[VEC];
      load_vec<T, VEC>((const T*)vals + e, w);
      V p = F::neutral();
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const u64 i = ws + e + j;
        if (i < tb) p = f(p, F::make(to_c<T>(w[j]), i == 0 || fl[e + j] != 0));
      }
      acc = f(acc, shfl_idx(warp_reduce(p, f), 0));
    }
    return acc;
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

// The thread's head flags as a mask, bit r * VEC + j for item j of round r: element 0 is a
// head, items past the end are not.
template <int BLOCK, int R, int VEC, class Fl> DS_DEV u32 head_mask(const Fl& flags, u64 n, u64 tb) {
  static_assert(R * VEC <= 32, "a thread's flags are one 32-bit mask");
  u8 fl[R][VEC];
  src_rounds<BLOCK, R, VEC>(flags, n, tb, fl, (u8)0);
  u32 m = 0;
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      if (fl[r][j] != 0 || item_index<BLOCK, VEC>(tb, r, j) == 0) m |= 1u << (r * VEC + j);
  return m;
}

// The thread's items that lie before the end, as a mask like head_mask's.
template <int BLOCK, int R, int VEC> DS_DEV u32 valid_mask(u64 n, u64 tb) {
  u32 m = 0;
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      if (item_index<BLOCK, VEC>(tb, r, j) < n) m |= 1u << (r * VEC + j);
  return m;
}

}  // namespace ds

// Segmented inclusive (EXCL = false) or exclusive scan; element 0 always starts a segment.
// The exclusive form gives `init` at each head and init op (the segment's elements before
// this one) elsewhere. `out` must not overlap the values (a block reads before its tile:
// SegTail).
template <class S, class Fl, class Op, int BLOCK, int R, int MINB, bool EXCL>
__global__ void __launch_bounds__(BLOCK, MINB)
    ds_segscan(const S s, const Fl flags, const SegScanParams p) {
  using namespace ds;
  typedef typename S::T T;
  typedef compute_t<T> C;
  typedef SegCombine<Op, C> F;
  typedef typename F::V V;
  constexpr int VEC = 16 / sizeof(T);
  const F f{};
  const u64 n = p.n;
  const u32 tile = next_tile<BLOCK>((u32*)p.counter, p.base);
  const u64 tb = (u64)tile * (BLOCK * R * VEC);
  Slot* status = (Slot*)p.status;
  __shared__ SegTail<T> s_tail;
  if (warp_id() == 0) s_tail.stage(s, flags, tb);
  T raw[R][VEC];
  u8 fl[R][VEC];
  src_rounds<BLOCK, R, VEC>(s, n, tb, raw, T{});
  src_rounds<BLOCK, R, VEC>(flags, n, tb, fl, (u8)0);
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
  tile_scan_by<BLOCK, R, VEC, !EXCL>(x, f, F::neutral(), [&](V total) {
    const V tail = s_tail.fold(tb, f);
    if (!tail.f)
      return tile_prefix(status, p.tiles, tile, p.epoch, total, F::neutral(), f, F::neutral());
    if (lane_id() == 0) {
      tile_publish(status, p.tiles, tile, p.epoch, total);
      tile_publish_inclusive(status, p.tiles, tile, p.epoch, total, tail, f);
    }
    return tail;
  });
  const C init = from_bits<C>(p.init);
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      C v = x[r][j].v;
      if (EXCL) v = fl[r][j] ? init : Op::template apply<C>(init, v);
      raw[r][j] = from_c<T>(v);
    }
  store_rounds<BLOCK, R, VEC, true>((T*)p.out, n, tb, raw);
}

// One value per segment, in order: out[s] = op-combination of segment s. K counts heads.
// With KEYS (reduce_by_key), also p.keys[s] = the key (source `keys`) at segment s's head.
// Where p.total is given, the thread of the last element writes the number of segments there.
template <class S, class Fl, class KS, class Op, class K, int BLOCK, int R, int MINB, bool KEYS>
__global__ void __launch_bounds__(BLOCK, MINB)
    ds_segreduce(const S s, const Fl flags, const KS keys, const SegReduceParams p) {
  using namespace ds;
  typedef typename S::T T;
  typedef compute_t<T> C;
  typedef SegCountCombine<Op, C, K> F;
  typedef typename F::V V;
  constexpr int VEC = 16 / sizeof(T);
  const F f{};
  const u64 n = p.n;
  const u32 tile = next_tile<BLOCK>((u32*)p.counter, p.base);
  const u64 tb = (u64)tile * (BLOCK * R * VEC);
  T raw[R][VEC];
  src_rounds<BLOCK, R, VEC>(s, n, tb, raw, T{});
  const u32 heads = head_mask<BLOCK, R, VEC>(flags, n, tb);
  // (value, head, heads so far) of an item, made where it is used (as in ds_segscan).
  const u32 valid = valid_mask<BLOCK, R, VEC>(n, tb);
  auto item = [&](int r, int j) {
    V x = F::neutral();
    if ((valid >> (r * VEC + j) & 1) != 0) {
      const bool h = (heads >> (r * VEC + j) & 1) != 0;
      x.v = to_c<T>(raw[r][j]);
      x.f = h ? 1u : 0u;
      x.c = h ? 1 : 0;
    }
    return x;
  };
  V a[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    a[r] = item(r, 0);
#pragma unroll
    for (int j = 1; j < VEC; ++j) a[r] = f(a[r], item(r, j));
  }
  tile_scan_rounds<BLOCK, R>(a, f, F::neutral(), F::neutral(), (Slot*)p.status, p.tiles, tile,
                             p.epoch);
  T* __restrict__ out = (T*)p.out;
  typedef typename KS::T KT;
  KT* __restrict__ out_keys = (KT*)p.keys;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    V q = a[r];
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      const int b = r * VEC + j;
      q = f(q, item(r, j));
      if ((valid >> b & 1) == 0) continue;
      const u64 i = item_index<BLOCK, VEC>(tb, r, j);
      if constexpr (KEYS) {
        if ((heads >> b & 1) != 0) out_keys[q.c - 1] = keys.at(i);
      }
      // The segment ends here where the next element is past the end or a head.
      bool last;
      if (j + 1 < VEC) {
        last = (valid >> (b + 1) & 1) == 0 || (heads >> (b + 1) & 1) != 0;
      } else {
        last = i + 1 == n || flags.at(i + 1) != 0;
      }
      if (last) out[q.c - 1] = from_c<T>(q.v);
      if (i + 1 == n && p.total) *(u64*)p.total = (u64)q.c;
    }
  }
}

// out[i] = 1 where i == 0 or the bits of element i differ from those of element i-1, else 0.
template <class S, int BLOCK>
__global__ void __launch_bounds__(BLOCK) ds_head_flags(const S s, const HeadFlagsParams p) {
  using namespace ds;
  typedef typename S::T T;
  typedef typename word_of<sizeof(T)>::T W;
  auto bits = [&](u64 i) {
    const T x = s.at(i);
    W w;
    memcpy(&w, &x, sizeof(T));
    return w;
  };
  u8* __restrict__ out = (u8*)p.out;
  for (u64 i = (u64)blockIdx.x * BLOCK + threadIdx.x; i < p.n; i += (u64)gridDim.x * BLOCK) {
    out[i] = (i == 0 || bits(i) != bits(i - 1)) ? 1 : 0;
  }
}
