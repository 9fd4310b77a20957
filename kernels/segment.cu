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

// (value, heads so far): segmented_reduce's element. A range with heads (c > 0) restarts
// the value, so no separate flag is carried (one shuffle fewer a scan step).
template <class C, class K> struct SegCount {
  C v;
  K c;
};
template <class C, class K> struct exact_fold<SegCount<C, K>> {
  static constexpr bool value = exact_fold<C>::value;
};
template <class Op, class C, class K> struct SegCountCombine {
  typedef SegCount<C, K> V;
  DS_DEV V operator()(V a, V b) const {
    V r;
    r.v = b.c != 0 ? b.v : Op::template apply<C>(a.v, b.v);
    r.c = a.c + b.c;
    return r;
  }
  static DS_DEV V neutral() {
    V r;
    r.v = Op::template neutral<C>();
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

// ds_segreduce's per-thread steps, each compiled twice: W (a whole tile) tests no bounds.
// (Templates rather than generic lambdas: the NVRTC of CUDA 13.0 rejects a generic lambda in
// a kernel as a host function, where 13.5's accepts it.)
//
// The fold of each round's items as (value since the last head or the round's start, heads);
// a round whose first item lies past the end is neutral.
template <bool W, class Op, class T, class V, int R, int VEC>
DS_DEV void segreduce_fold(const T (&raw)[R][VEC], u32 heads, u32 valid, V (&a)[R]) {
  typedef compute_t<T> C;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    C v = to_c<T>(raw[r][0]);
#pragma unroll
    for (int j = 1; j < VEC; ++j) {
      const int b = r * VEC + j;
      if (!W && (valid >> b & 1) == 0) continue;
      const C x = to_c<T>(raw[r][j]);
      v = (heads >> b & 1) != 0 ? x : Op::template apply<C>(v, x);
    }
    const u32 hr = heads >> (r * VEC) & (FULL >> (32 - VEC));
    a[r].v = v;
    a[r].c = __popc(hr);
    if (!W && (valid >> (r * VEC) & 1) == 0) {
      a[r].v = Op::template neutral<C>();
      a[r].c = 0;
    }
  }
}

// The outputs of the thread's items, given each round's prefix a[r] (value and heads before
// it): at each segment end its value, at each head (KEYS) its key, at index heads - 1.
template <bool W, class Op, int BLOCK, bool KEYS, class T, class V, class KS, int R, int VEC>
DS_DEV void segreduce_emit(const T (&raw)[R][VEC], u32 heads, u32 valid, u32 ends,
                           const V (&a)[R], T* __restrict__ out,
                           typename KS::T* __restrict__ out_keys, const KS& keys, u64 tb) {
  typedef compute_t<T> C;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    C v = a[r].v;
    auto c = a[r].c;
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      const int b = r * VEC + j;
      if (!W && (valid >> b & 1) == 0) continue;
      const C x = to_c<T>(raw[r][j]);
      const bool h = (heads >> b & 1) != 0;
      v = h ? x : Op::template apply<C>(v, x);
      if (h) {
        ++c;
        if constexpr (KEYS) out_keys[c - 1] = keys.at(item_index<BLOCK, VEC>(tb, r, j));
      }
      if ((ends >> b & 1) != 0) out[c - 1] = from_c<T>(v);
    }
  }
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
//
// Each thread keeps its items' head and segment-end flags as bit masks (bit r * VEC + j for
// item j of round r), folds each round's items as (value, restarted) pairs, and scans the
// rounds' (value, heads) pairs over the tile and the look-back; a segment's
// output index is the heads before the thread's round plus those in the round up to the item.
// Every tile but the last is whole and has an element after it: it loads without bounds checks
// and finds the head after each thread's round from its neighbour (a shuffle, and for a warp's
// last lane the next warp's first lane by shared memory) instead of evaluating the flags again.
// (The per-item bounds checks and flag loads of the first form were half of its instructions:
// 99 a tile element at 2^28 f32 on an H100, 2026-11-24, where CUB's ReduceByKey runs 41.)
template <class S, class Fl, class KS, class Op, class K, int BLOCK, int R, int MINB, bool KEYS>
__global__ void __launch_bounds__(BLOCK, MINB)
    ds_segreduce(const S s, const Fl flags, const KS keys, const SegReduceParams p) {
  using namespace ds;
  typedef typename S::T T;
  typedef compute_t<T> C;
  typedef SegCountCombine<Op, C, K> F;
  typedef typename F::V V;
  constexpr int VEC = 16 / sizeof(T);
  constexpr int NW = BLOCK / WARP;
  constexpr u64 TILE = (u64)BLOCK * R * VEC;
  static_assert(R * VEC <= 32, "a thread's flags are one 32-bit mask");
  // The bits of each round's last item.
  constexpr u32 LASTS = (u32)((((1ull << (R * VEC)) - 1) / ((1ull << VEC) - 1)) << (VEC - 1));
  const F f{};
  const u64 n = p.n;
  const u32 tile = next_tile<BLOCK>((u32*)p.counter, p.base);
  const u64 tb = (u64)tile * TILE;
  const bool whole = tb + TILE < n;
  __shared__ u32 s_first[NW];
  T raw[R][VEC];
  u32 heads, valid;
  if (whole) {
#pragma unroll
    for (int r = 0; r < R; ++r) s.template vec<VEC>(item_index<BLOCK, VEC>(tb, r, 0), raw[r]);
    u8 fl[R][VEC];
#pragma unroll
    for (int r = 0; r < R; ++r) flags.template vec<VEC>(item_index<BLOCK, VEC>(tb, r, 0), fl[r]);
    heads = 0;
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j)
        if (fl[r][j] != 0) heads |= 1u << (r * VEC + j);
    if (tile == 0 && threadIdx.x == 0) heads |= 1u;
    valid = FULL >> (32 - R * VEC);
    if (lane_id() == 0) s_first[warp_id()] = heads;
  } else {
    src_rounds<BLOCK, R, VEC>(s, n, tb, raw, T{});
    heads = head_mask<BLOCK, R, VEC>(flags, n, tb);
    valid = valid_mask<BLOCK, R, VEC>(n, tb);
  }
  // Each round's fold (segreduce_fold), compiled once for whole tiles and once for the last.
  V a[R];
  if (whole) segreduce_fold<true, Op>(raw, heads, valid, a);
  else segreduce_fold<false, Op>(raw, heads, valid, a);
  tile_scan_rounds<BLOCK, R>(a, f, F::neutral(), F::neutral(), (Slot*)p.status, p.tiles, tile,
                             p.epoch);
  // Segment ends: an item whose next element is a head (or past the end).
  u32 ends;
  if (whole) {
    u32 next = shfl_down(heads, 1) << (VEC - 1);
    if (lane_id() == WARP - 1) {
      if (warp_id() + 1 < NW) {
        next = s_first[warp_id() + 1] << (VEC - 1);
      } else {
        // The next round's first element, warp 0's lane 0; after the last round, the tile's
        // successor.
        next = s_first[0] >> 1;
        if (flags.at(tb + TILE) != 0) next |= 1u << (R * VEC - 1);
      }
    }
    ends = (heads >> 1 & ~LASTS) | (next & LASTS);
  } else {
    ends = 0;
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const int b = r * VEC + j;
        if ((valid >> b & 1) == 0) continue;
        const u64 i = item_index<BLOCK, VEC>(tb, r, j);
        bool last;
        if (j + 1 < VEC) {
          last = (valid >> (b + 1) & 1) == 0 || (heads >> (b + 1) & 1) != 0;
        } else {
          last = i + 1 == n || flags.at(i + 1) != 0;
        }
        if (last) ends |= 1u << b;
        if (i + 1 == n && p.total)
          *(u64*)p.total = (u64)a[r].c + __popc(heads >> (r * VEC) & (FULL >> (31 - j)));
      }
  }
  T* __restrict__ out = (T*)p.out;
  typedef typename KS::T KT;
  KT* __restrict__ out_keys = (KT*)p.keys;
  if (whole)
    segreduce_emit<true, Op, BLOCK, KEYS>(raw, heads, valid, ends, a, out, out_keys, keys, tb);
  else
    segreduce_emit<false, Op, BLOCK, KEYS>(raw, heads, valid, ends, a, out, out_keys, keys, tb);
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
