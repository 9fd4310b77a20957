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
  // A round of items whose fold is v and whose head bits are hr (seg_fold).
  static DS_DEV V round(C v, u32 hr) { return make(v, hr != 0); }
};

// The segment that runs into a tile from before it, found by reading back: warp 0 of a
// segmented-scan block copies the SEG_TAIL elements before its tile (all of them, for the
// first tiles) and their flags to shared memory when the block starts, by asynchronous copies
// that overlap with the tile's own loads, and folds them (pairs under SegCombine, in a fixed
// order). Where they hold a head, the fold is the tile's prefix, found without waiting for any
// other tile; else the tile looks back. (Where the fold finds a head, the look-back's answer
// would be the same segment's combination: bit for bit for integers, in another grouping for
// floats, each fixed by the data. Such a tile publishes its inclusive prefix, which absorbs,
// as its aggregate: a successor that looks back past it then finds that value whichever slot
// it reads first, so runs stay reproducible.) 1024 elements, measured on an
// H100 (2026-11-22; heads every 1000, docs/performance.md): 0.848 ms for 2^28 i32
// against 0.919 looking back only; 512 (half the tiles then look back) 0.863; 2048 1.11.
constexpr int SEG_TAIL = 1024;

//
// Each lane of warp 0 copies and folds its own CH = SEG_TAIL / 32 consecutive elements, so the
// fold is one sequential pass a lane and one warp tree (a first form folded the warp's rounds
// of vectors, a warp tree each: 16 of them for 8-byte values). The copies keep the lanes'
// vectors side by side in shared memory (vector k of lane l at slot k * 32 + l), so that the
// fold reads them without bank conflicts.
template <class T> struct SegTail {
  static constexpr int VEC = 16 / sizeof(T);
  static constexpr int CH = SEG_TAIL / WARP;  // elements a lane
  static constexpr int NV = CH / VEC;         // 16-byte vectors of values a lane
  static constexpr int NF = CH / 16;          // 16-byte vectors of flags a lane
  static_assert(CH % 16 == 0, "whole 16-byte vectors of flags a lane");
  u32x4 vals[NV * WARP];
  u32x4 heads[NF * WARP];

  // The first element read back for a tile starting at tb.
  static DS_DEV u64 start(u64 tb) { return tb > SEG_TAIL ? tb - SEG_TAIL : 0; }

  // One lane's W-element vectors k = 0 .. N-1 of the column p from `first` (elements from
  // `end` on get 0) to slots k * 32 + lane of t: by 16-byte asynchronous copies where whole
  // and aligned, else element by element; with ELEMS (a column of 4- or 8-byte elements that
  // is not aligned for vectors) each element asynchronously: through registers, all of a
  // lane's 8-byte elements at once spilled 36-44 bytes a thread in the segmented scans.
  template <int N, int W, bool ELEMS, class E>
  static DS_DEV void copy(const E* __restrict__ p, bool aligned, u64 first, u64 end, u32x4* t) {
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const u64 i = first + (u64)k * W;
      E* slot = (E*)(t + k * WARP + lane_id());
      if (aligned && i + W <= end) {
        cp_async<16>(slot, p + i);
      } else {
#pragma unroll
        for (int j = 0; j < W; ++j) {
          if constexpr (ELEMS) {
            if (i + j < end) cp_async<sizeof(E)>(slot + j, p + i + j);
            else slot[j] = E{};
          } else {
            slot[j] = i + j < end ? p[i + j] : E{};
          }
        }
      }
    }
  }

  // Warp 0: start copying the elements [start(tb), tb) of the values and flags (sources).
  template <class S, class Fl> DS_DEV void stage(const S& s, const Fl& fl, u64 tb) {
    const u64 first = start(tb) + (u64)lane_id() * CH;
    if constexpr (S::PLAIN) {
      constexpr bool ALIGNED = vec_ok<S, VEC>::value;
      copy<NV, VEC, !ALIGNED && cp_async_copies<sizeof(T)>::value>(s.p, ALIGNED, first, tb, vals);
    } else {
#pragma unroll
      for (int k = 0; k < NV; ++k) {
        T v[VEC];
        src_round_at<VEC>(s, first + (u64)k * VEC, tb, v, T{});
        store_vec<T, VEC>((T*)(vals + k * WARP + lane_id()), v);
      }
    }
    if constexpr (Fl::PLAIN) {
      copy<NF, 16, false>(fl.p, ((u64)fl.p & 15) == 0, first, tb, heads);
    } else {
#pragma unroll
      for (int k = 0; k < NF; ++k) {
        u8 v[16];
        src_round_at<16>(fl, first + (u64)k * 16, tb, v, (u8)0);
        store_vec<u8, 16>((u8*)(heads + k * WARP + lane_id()), v);
      }
    }
    stage_commit();
  }

  // Warp 0, after `stage`: the fold of the copied elements in order (pairs under F; element 0
  // of the sequence a head), the same in every lane.
  template <class F> DS_DEV typename F::V fold(u64 tb, const F& f) const {
    typedef typename F::V V;
    stage_wait();
    const u64 first = start(tb) + (u64)lane_id() * CH;
    const int live = tb > first ? (int)min(tb - first, (u64)CH) : 0;
    u32 m = 0;
#pragma unroll
    for (int k = 0; k < NF; ++k) {
      u8 b[16];
      load_vec<u8, 16>((const u8*)(heads + k * WARP + lane_id()), b);
#pragma unroll
      for (int j = 0; j < 16; ++j)
        if (b[j] != 0) m |= 1u << (k * 16 + j);
    }
    if (first == 0) m |= 1u;
    V acc = F::neutral();
#pragma unroll
    for (int k = 0; k < NV; ++k) {
      T w[VEC];
      load_vec<T, VEC>((const T*)(vals + k * WARP + lane_id()), w);
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const int e = k * VEC + j;
        if (e < live) acc = f(acc, F::make(to_c<T>(w[j]), (m >> e & 1) != 0));
      }
    }
    return shfl_idx(warp_reduce(acc, f), 0);
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
  static DS_DEV V round(C v, u32 hr) {
    V r;
    r.v = v;
    r.c = __popc(hr);
    return r;
  }
};

// A thread's head flags of a tile as a mask (bit r * VEC + j for item j of round r; element 0
// is a head), with `valid` the mask of items before the end. A whole tile (W: it ends at or
// before n) loads vectors without bounds tests; the last one round by round (src_round),
// items past the end neither heads nor valid. Compiled once for each: a runtime `whole` test picks.
// (The per-item 64-bit bounds tests and flag loads of a first form were half of
// segmented_reduce's instructions: 99 a tile element at 2^28 f32 on an H100, 2026-11-24, where
// CUB's ReduceByKey runs 41.)
template <bool W, int BLOCK, int R, int VEC, class Fl>
DS_DEV void seg_heads(const Fl& flags, u64 n, u64 tb, u32& heads, u32& valid) {
  static_assert(R * VEC <= 32, "a thread's flags are one 32-bit mask");
  heads = 0;
  if constexpr (W) {
    u8 fl[R][VEC];
#pragma unroll
    for (int r = 0; r < R; ++r) flags.template vec<VEC>(item_index<BLOCK, VEC>(tb, r, 0), fl[r]);
    valid = FULL >> (32 - R * VEC);
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j)
        if (fl[r][j] != 0) heads |= 1u << (r * VEC + j);
  } else {
    // Round by round into the masks (all rounds' bytes held at once spilled in the lazy
    // flags' instances of the segmented reduction).
    valid = 0;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      u8 fl[VEC];
      src_round<BLOCK, VEC>(flags, n, tb, r, fl, (u8)0);
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        if (fl[j] != 0) heads |= 1u << (r * VEC + j);
        if (item_index<BLOCK, VEC>(tb, r, j) < n) valid |= 1u << (r * VEC + j);
      }
    }
  }
  if (tb == 0 && threadIdx.x == 0) heads |= 1u;
  heads &= valid;
}

// The thread's items of a tile (whole: vectors without bounds tests; else src_rounds) and
// their head flags (seg_heads).
template <bool W, int BLOCK, int R, int VEC, class S, class Fl>
DS_DEV void seg_load(const S& s, const Fl& flags, u64 n, u64 tb, typename S::T (&raw)[R][VEC],
                     u32& heads, u32& valid) {
  if constexpr (W) {
#pragma unroll
    for (int r = 0; r < R; ++r) s.template vec<VEC>(item_index<BLOCK, VEC>(tb, r, 0), raw[r]);
  } else {
    src_rounds<BLOCK, R, VEC>(s, n, tb, raw, typename S::T{});
  }
  seg_heads<W, BLOCK, R, VEC>(flags, n, tb, heads, valid);
}

// The per-thread steps of ds_segscan and ds_segreduce, each compiled twice: W (a whole tile)
// tests no bounds. (Templates rather than generic lambdas: the NVRTC of CUDA 13.0 rejects a
// generic lambda in a kernel as a host function, where 13.5's accepts it.)
//
// The fold of each round's items as F's pair of (value since the last head or the round's
// start, the round's heads). Items past the end (the last tile's, filled) are no heads, so
// they enter only the folds and outputs of items after the end, which are not stored: the
// fold and the outputs test no bounds.
template <class Op, class F, class T, class V, int R, int VEC>
DS_DEV void seg_fold(const T (&raw)[R][VEC], u32 heads, V (&a)[R]) {
  typedef wide_t<T> C;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    C v = to_c<T>(raw[r][0]);
#pragma unroll
    for (int j = 1; j < VEC; ++j) {
      const int b = r * VEC + j;
      const C x = to_c<T>(raw[r][j]);
      v = (heads >> b & 1) != 0 ? x : Op::template apply<C>(v, x);
    }
    a[r] = F::round(v, heads >> (r * VEC) & (FULL >> (32 - VEC)));
  }
}

// ds_segscan's items of the thread (from the stage where STAGED, else loaded), their heads
// and each round's fold, for a whole tile (W) or the last.
template <bool W, bool STAGED, class Op, class F, int BLOCK, class S, class Fl, class T, class V,
          int R, int VEC>
DS_DEV void segscan_take(const S& s, const Fl& flags, u64 n, u64 tb, T* stage,
                         T (&raw)[R][VEC], u32& heads, u32& valid, V (&a)[R]) {
  if constexpr (STAGED) {
    seg_heads<W, BLOCK, R, VEC>(flags, n, tb, heads, valid);
    src_stage_wait<BLOCK, R, VEC>(s, tb, stage);
    staged_rounds<BLOCK, R, VEC>(stage, raw);
  } else {
    seg_load<W, BLOCK>(s, flags, n, tb, raw, heads, valid);
  }
  seg_fold<Op, F>(raw, heads, a);
}

// The segmented scan's outputs in place of the items, given each round's prefix a[r] (the
// value before it, of its segment where the round's first item is no head): inclusive, or
// with EXCL exclusive (`init` at heads, else init op the segment's items before). Items past
// the end get values that are not stored.
template <bool EXCL, class Op, class T, class V, int R, int VEC>
DS_DEV void segscan_emit(T (&raw)[R][VEC], u32 heads, const V (&a)[R],
                         wide_t<T> init) {
  typedef wide_t<T> C;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    C v = a[r].v;
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      const C x = to_c<T>(raw[r][j]);
      const bool h = (heads >> (r * VEC + j) & 1) != 0;
      if (EXCL) {
        raw[r][j] = from_c<T>(h ? init : Op::template apply<C>(init, v));
        v = h ? x : Op::template apply<C>(v, x);
      } else {
        v = h ? x : Op::template apply<C>(v, x);
        raw[r][j] = from_c<T>(v);
      }
    }
  }
}

// The outputs of the thread's items, given each round's prefix a[r] (value and heads before
// it): at each segment end its value, at each head (KEYS) its key, at index heads - 1; only
// the first `cap` segments' (the room of the output). Items past the end are neither heads
// nor ends.
template <class Op, int BLOCK, bool KEYS, class T, class V, class KS, int R, int VEC>
DS_DEV void segreduce_emit(const T (&raw)[R][VEC], u32 heads, u32 ends,
                           const V (&a)[R], T* __restrict__ out,
                           typename KS::T* __restrict__ out_keys, const KS& keys, u64 tb,
                           u64 cap) {
  typedef wide_t<T> C;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    C v = a[r].v;
    auto c = a[r].c;
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      const int b = r * VEC + j;
      const C x = to_c<T>(raw[r][j]);
      const bool h = (heads >> b & 1) != 0;
      v = h ? x : Op::template apply<C>(v, x);
      if (h) {
        ++c;
        if constexpr (KEYS)
          if ((u64)c <= cap) out_keys[c - 1] = keys.at(item_index<BLOCK, VEC>(tb, r, j));
      }
      if ((ends >> b & 1) != 0 && (u64)c <= cap) out[c - 1] = from_c<T>(v);
    }
  }
}

}  // namespace ds

// Segmented inclusive (EXCL = false) or exclusive scan; element 0 always starts a segment.
// The exclusive form gives `init` at each head and init op (the segment's elements before
// this one) elsewhere. `out` must not overlap the values (a block reads before its tile:
// SegTail).
//
// Each thread's items (8-byte ones; smaller ones stay in registers) wait in shared memory
// (copied asynchronously where they are a stored column, as the plain scan's) while it takes
// its head flags as a mask (seg_heads), folds each
// round's items (seg_fold) and scans the rounds' (value, head) pairs over the tile and the
// tiles before it; then it reads its items again and each one's output follows from its
// round's prefix. (A first form held a (value, flag) pair an item, 16 bytes for 8-byte values,
// which spilled; a second held the values in registers through the look-back.)
template <class L, class FL, class S, class Fl>
__global__ void __launch_bounds__(L::block, L::minb)
    ds_segscan(const S s, const Fl flags, const SegScanParams p) {
  typedef typename FL::op Op;
  constexpr int BLOCK = L::block, R = L::items, MINB = L::minb;
  constexpr bool EXCL = FL::exclusive;
  using namespace ds;
  typedef typename S::T T;
  typedef wide_t<T> C;
  typedef SegCombine<Op, C> F;
  typedef typename F::V V;
  constexpr int VEC = 16 / sizeof(T);
  constexpr u64 TILE = (u64)BLOCK * R * VEC;
  // 8-byte items wait in shared memory; smaller ones stay in registers (their tile with the
  // read-back and the scan's scratch would pass the 48 KB of static shared memory).
  constexpr bool STAGED = sizeof(T) == 8;
  const F f{};
  const u64 n = p.n;
  const u32 tile = next_tile<BLOCK>((u32*)p.counter, p.base);
  const u64 tb = (u64)tile * TILE;
  const bool whole = tb + TILE <= n;
  Slot* status = (Slot*)p.status;
  // The quick form compiles one path (every tile loaded as the last, with bounds tests) and,
  // for exact operators, no read-back (the look-back finds the same bits): 25% less compile time.
  constexpr bool TAIL = !QUICK || !exact_fold<V>::value;
  __shared__ SegTail<T> s_tail;
  __shared__ __align__(16) T stage[STAGED ? TILE : 1];
  if (TAIL && warp_id() == 0) s_tail.stage(s, flags, tb);
  if constexpr (STAGED) src_stage<BLOCK, R, VEC>(s, n, tb, stage, T{});
  u32 heads, valid;
  V a[R];
  T raw[R][VEC];
  if (whole && !QUICK)
    segscan_take<true, STAGED, Op, F, BLOCK>(s, flags, n, tb, stage, raw, heads, valid, a);
  else
    segscan_take<false, STAGED, Op, F, BLOCK>(s, flags, n, tb, stage, raw, heads, valid, a);
  // At 64 registers (4 blocks) the prefixes wait packed (PackedPrefixes).
  tile_scan_with<BLOCK, R, true, (MINB >= 4)>(a, f, F::neutral(), [&](const V& total) {
    const V tail = TAIL ? s_tail.fold(tb, f) : F::neutral();
    if (!tail.f)
      return tile_prefix(status, p.tiles, tile, p.epoch, total, F::neutral(), f, F::neutral());
    // The tile's inclusive prefix, published as its aggregate: it absorbs (the tail holds a
    // head), so successors take it as the prefix, and none combines the aggregate of the tile
    // before with this tile's instead (for floats another grouping than the tail's fold, so
    // bits that depended on which slot a successor found first).
    if (lane_id() == 0) tile_publish(status, p.tiles, tile, p.epoch, f(tail, total));
    return tail;
  });
  if constexpr (STAGED) staged_rounds<BLOCK, R, VEC>(stage, raw);
  segscan_emit<EXCL, Op>(raw, heads, a, (C)from_bits<compute_t<T>>(p.init));
  store_rounds<BLOCK, R, VEC, true>((T*)p.out, n, tb, raw);
}

// One value per segment, in order: out[s] = op-combination of segment s, for s < p.cap (the
// output's room; the segments are counted all the same). K counts heads. With KEYS
// (reduce_by_key), also p.keys[s] = the key (source `keys`) at segment s's head. Where p.total
// is given, the thread of the last element writes the number of segments there.
//
// Each thread keeps its items' head and segment-end flags as bit masks (bit r * VEC + j for
// item j of round r), folds each round's items as (value, restarted) pairs, and scans the
// rounds' (value, heads) pairs over the tile and the look-back; a segment's
// output index is the heads before the thread's round plus those in the round up to the item.
// Every tile but the last is whole (seg_load) and has an element after it: it finds the head
// after each thread's round from its neighbour (a shuffle, and for a warp's last lane the next
// warp's first lane by shared memory) instead of evaluating the flags again.
template <class L, class FL, class S, class Fl, class KS>
__global__ void __launch_bounds__(L::block, L::minb)
    ds_segreduce(const S s, const Fl flags, const KS keys, const SegReduceParams p) {
  typedef typename FL::op Op;
  typedef typename ds::if_type<FL::wide, u64, u32>::T K;
  constexpr int BLOCK = L::block, R = L::items;
  constexpr bool KEYS = FL::keys;
  using namespace ds;
  typedef typename S::T T;
  typedef wide_t<T> C;
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
  V a[R];
  if (whole) {
    seg_load<true, BLOCK>(s, flags, n, tb, raw, heads, valid);
    if (lane_id() == 0) s_first[warp_id()] = heads;
  } else {
    seg_load<false, BLOCK>(s, flags, n, tb, raw, heads, valid);
  }
  seg_fold<Op, F>(raw, heads, a);
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
  segreduce_emit<Op, BLOCK, KEYS>(raw, heads, ends, a, out, out_keys, keys, tb, p.cap);
}

// out[i] = 1 where i == 0 or the bits of element i differ from those of element i-1, else 0.
template <class L, class S>
__global__ void __launch_bounds__(L::block) ds_head_flags(const S s, const HeadFlagsParams p) {
  constexpr int BLOCK = L::block;
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
