// The last step of scatter_combine: the (index, value) pairs sorted stably by index form one
// run per slot; a single-pass segmented scan (deterministic look-back) combines each run in
// order and its last element writes out[slot] = run op base[slot] (out holds a copy of base,
// for the slots no index names). Where the sort noted an index out of range (*err nonzero)
// nothing is written, and the first tile hands the position on to the call's mailbox (`mail`,
// and its host flag), which the first use of the result reads: the call does not wait. The
// sorted pairs are the sort's own buffers; the base is a source, read at the slots. Pairs of
// one tile take one launch instead (ds_combine_tile): the block sorts them itself, and copies
// a small base (`copy` nonzero) where the host would otherwise queue that copy.
#pragma once
#include "block/source.cuh"
#include "block/scan.cuh"
#include "segment.cu"
#include "sort.cu"

namespace ds {

// The tile is held as values v[r][j] (the operator's neutral past the end) and one bit an
// item, r * VEC + j, in `heads` where a run starts (and in `lasts` where one ends), rather
// than as (value, flag) pairs with the indices: so it stays in registers through the scan
// (measured faster here; the segmented scans, which hold nothing else, are faster with pairs,
// docs/history.md, "What was measured and learned").
template <int R, int VEC> DS_DEV u32 item_bit(int r, int j) {
  static_assert(R * VEC <= 32, "a tile's flags fit one word a thread");
  return 1u << (r * VEC + j);
}

// What comes before a tile of runs: the deterministic look-back over the tiles before it
// (`LookBack`, ds_combine_runs), or nothing where the tile is the only one (`OneTile`,
// ds_combine_tile, which so needs no status words). Either gives the tile's prefix from its
// total, F's neutral for the first tile: the same combinations, bit for bit.
struct LookBack {
  Slot* status;
  u32 tiles, tile, epoch;
  template <class V, class F> DS_DEV V operator()(const V& total, const F& f) const {
    return tile_prefix(status, tiles, tile, epoch, total, F::neutral(), f, F::neutral());
  }
};
struct OneTile {
  static constexpr u32 tile = 0;
  template <class V, class F> DS_DEV V operator()(const V&, const F&) const { return F::neutral(); }
};

// a[r] becomes the combination (by F, from F's neutral) of everything before the thread's
// first item of round r: the tile scan over the thread's folded rounds, `prev` the prefix of
// the tiles before.
template <int BLOCK, int R, int VEC, class F, class C, class Prev>
DS_DEV void seg_prefix(const C (&v)[R][VEC], u32 heads, typename F::V (&a)[R], const F& f,
                       const Prev& prev) {
  typedef typename F::V V;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    a[r] = F::make(v[r][0], heads & item_bit<R, VEC>(r, 0));
#pragma unroll
    for (int j = 1; j < VEC; ++j) a[r] = f(a[r], F::make(v[r][j], heads & item_bit<R, VEC>(r, j)));
  }
  tile_scan_with<BLOCK, R, true>(a, f, F::neutral(),
                                 [&](const V& total) { return prev(total, f); });
}

// The runs of one tile of sorted pairs (indices `keys`, values `vals`: device or shared
// memory), as ds_combine_runs describes; `err` the sort's error word, `prev` the tile's number
// and what comes before it. P: the kernel's parameters (out, n, mail, flag).
template <class B, class I, class Op, int BLOCK, int R, class P, class Prev>
DS_DEV void combine_tile(const B& bases, const P& p, const I* __restrict__ keys,
                         const typename B::T* __restrict__ vals, u64 err, const Prev& prev) {
  typedef typename B::T T;
  typedef wide_t<T> C;
  typedef SegCombine<Op, C> F;
  typedef typename F::V V;
  constexpr int VEC = 16 / sizeof(T);
  const F f{};
  const u64 n = p.n;
  const u32 tile = prev.tile;
  const u64 tb = (u64)tile * (BLOCK * R * VEC);
  const bool bad = err != 0;
  T raw[R][VEC];
  I key[R][VEC];
  load_rounds<BLOCK, R, VEC, true>(vals, n, tb, raw, T{});
  load_rounds<BLOCK, R, VEC, true>(keys, n, tb, key, (I)0);
  // A run starts where the index differs from the one before and ends where the next differs.
  C v[R][VEC];
  u32 heads = 0, lasts = 0;
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      const u64 i = item_index<BLOCK, VEC>(tb, r, j);
      v[r][j] = i < n ? to_c<T>(raw[r][j]) : Op::template neutral<C>();
      if (i >= n) continue;
      const I k = key[r][j];
      if (i == 0 || (j > 0 ? key[r][j - 1] : keys[i - 1]) != k) heads |= item_bit<R, VEC>(r, j);
      if (i + 1 == n || ((j + 1 < VEC) ? key[r][j + 1] : keys[i + 1]) != k)
        lasts |= item_bit<R, VEC>(r, j);
    }
  V a[R];
  seg_prefix<BLOCK, R, VEC>(v, heads, a, f, prev);
  // Each run's combination, in place; then the last element of each run writes
  // out[slot] = run op bases[slot]. Its slot is read again (keeping the tile's indices in
  // registers through the scan spilled), all of the thread's at once, then the base values,
  // all at once: reading base values from `out` (a write then a read, item after item) took
  // four times as long as the whole scan.
#pragma unroll
  for (int r = 0; r < R; ++r) {
    V p = a[r];
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      p = f(p, F::make(v[r][j], heads & item_bit<R, VEC>(r, j)));
      v[r][j] = p.v;
    }
  }
  I slot[R][VEC];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      slot[r][j] = (lasts & item_bit<R, VEC>(r, j)) ? keys[item_index<BLOCK, VEC>(tb, r, j)] : (I)0;
  if (bad) {
    if (tile == 0 && threadIdx.x == 0)
      note_bad_index((u64*)p.mail, (u32*)p.flag, ~err);
    return;
  }
  auto writes = [&](int r, int j) { return (lasts & item_bit<R, VEC>(r, j)) != 0; };
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      if (writes(r, j)) v[r][j] = Op::template apply<C>(v[r][j], to_c<T>(bases.at(slot[r][j])));
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      if (writes(r, j)) ((T*)p.out)[slot[r][j]] = from_c<T>(v[r][j]);
}

}  // namespace ds

template <class L, class FL, class B>
__global__ void __launch_bounds__(L::block, L::minb)
    ds_combine_runs(const B bases, const CombineParams p) {
  typedef typename FL::idx I;
  typedef typename FL::op Op;
  constexpr int BLOCK = L::block, R = L::items;
  using namespace ds;
  typedef typename B::T T;
  const u64 err = *(const u64*)p.err;
  const LookBack prev{(Slot*)p.status, p.tiles, next_tile<BLOCK>((u32*)p.counter, p.base),
                      p.epoch};
  combine_tile<B, I, Op, BLOCK, R>(bases, p, (const I*)p.keys, (const T*)p.vals, err, prev);
}

// scatter_combine of one tile (n <= BLOCK * R * VEC pairs) in one launch: the block sorts the
// (index, value) pairs (sources `is`, `vs`) stably by index in shared memory (sort_tile_block,
// on the index bits below p.len's bit length: the digits p.lo.., p.passes of them, the
// indices checked against p.len), then combines the runs from there as ds_combine_runs does
// from the sort's buffers (the same tile, so the same combinations, bit for bit; being the only
// tile, it has no look-back), copying the base first where p.copy is nonzero. Dynamic shared
// memory: sort_tile_block's.
template <class L, class FL, class IS, class VS, class B>
__global__ void __launch_bounds__(L::block, L::minb)
    ds_combine_tile(const IS is, const VS vs, const B bases, const CombineTileParams p) {
  typedef typename FL::op Op;
  constexpr int BLOCK = L::block, R = L::items;
  using namespace ds;
  typedef typename B::T T;
  typedef typename IS::T I;
  typedef key_bits<I> KB;
  typedef typename KB::U U;
  constexpr int VEC = 16 / sizeof(T);
  constexpr int ITEMS = R * VEC;
  static_assert(sizeof(typename VS::T) == sizeof(T), "values of the base's type");
  extern __shared__ __align__(16) u8 ds_dyn[];
  if (p.copy) {
    // The base's copy, at most COMBINE_COPY rounds a thread; the sort's barriers order these
    // writes before the runs'.
#pragma unroll 8
    for (u64 s = threadIdx.x; s < p.copy; s += BLOCK) ((T*)p.out)[s] = bases.at(s);
  }
  U key[ITEMS];
  T val[ITEMS];
  const u64 err = sort_tile_block<IS, VS, 1, false, BLOCK, ITEMS, true>(
      is, vs, (u32)p.n, p.lo, p.passes, p.len, ds_dyn, key, val);
  // The sorted tile to shared memory in order, for combine_tile's loads (the sort's last
  // barrier ended every read of its own copy there).
  I* s_keys = reinterpret_cast<I*>(tile_keys_smem<BLOCK>(ds_dyn));
  T* s_vals = reinterpret_cast<T*>(tile_values_smem<BLOCK, ITEMS, U>(ds_dyn));
  store_sorted_tile<I, 1>(key, val, (u32)p.n, s_keys, s_vals);
  __syncthreads();
  combine_tile<B, I, Op, BLOCK, R>(bases, p, s_keys, s_vals, err, OneTile{});
}
