// Reductions and scans by a custom associative operator (a traced closure, printed as the
// functor `F`): items of up to five components, any of them lazy, combined in order (the
// operator need not be commutative) and without a neutral element (Opt marks "nothing yet").
//
// Both kernels split the sequence into the same fixed chunks, one a block, contiguous:
// ds_assoc_reduce folds each chunk, tile by tile, in order, and the last block to finish folds
// the chunk totals (MODE 0: the result) or turns them into each chunk's exclusive prefix
// (MODE 1, for the scan); ds_assoc_scan then scans each chunk from its prefix. The grouping
// depends only on n and the launch shape, so float results are the same on every run. This
// is the reduce-then-scan of Merrill and Grimshaw: two reads instead of the single pass's one,
// but no look-back slots, whose values are limited to 24 bytes. Items of up to 16 bytes scan
// in one pass instead (ds_assoc_scan_lookback, at the end).
//
// F provides: V (the item in compute types), K (components), NP (constants, p[]), the
// combination operator() (a computed float NaN made canonical), raw(a, b) and canon(v) (where
// every float component of a combination is computed, the combination without and the making
// canonical alone: canon(raw(raw(a, b), c)) has the bits of (a f b) f c, since a NaN's bits
// change no result but NaN ones; else operator() and nothing), head(x) (a segmented
// combiner's head flag), at/vec (an item from the component sources), stage, stage_wait and
// staged (a tile's stored components in shared memory: src_stage and src_stage_wait of each),
// store_round (the stored components of VEC items; WHOLE: all before n), from_words and
// to_words (an item as compute bits, one word a component).
#pragma once
#include "block/source.cuh"
#include "block/scan.cuh"
#include "block/reduce.cuh"

namespace ds {

// An item, or nothing (the combination of no items).
template <class V> struct Opt {
  V v;
  u32 has;
};

template <class F> struct OptF {
  typedef typename F::V V;
  typedef Opt<V> O;
  F f;
  DS_DEV O operator()(const O& a, const O& b) const {
    if (!a.has) return b;
    if (!b.has) return a;
    O r;
    r.v = f(a.v, b.v);
    r.has = 1;
    return r;
  }
  static DS_DEV O none() {
    O r{};
    return r;
  }
  static DS_DEV O some(const V& v) {
    O r;
    r.v = v;
    r.has = 1;
    return r;
  }
};

// A value another block of this launch wrote (after its fence): read past L1, word by word.
template <class O> DS_DEV O load_cg(const O* p) {
  constexpr int N = sizeof(O) / 4;
  static_assert(sizeof(O) % 4 == 0, "Opt values are whole words");
  u32 w[N];
#pragma unroll
  for (int k = 0; k < N; ++k) w[k] = __ldcg((const unsigned int*)p + k);
  O v;
  memcpy(&v, w, sizeof(O));
  return v;
}

// The combiner's constants, then the initial item's words: in the parameters where they fit
// (p.words), else in device memory (p.consts); the host chooses by the same test.
template <class F> DS_DEV const u64* assoc_words(const AssocParams& p) {
  if constexpr (F::NP + F::K <= WORDS) return p.words.w;
  else return (const u64*)p.consts;
}

template <class F> DS_DEV F assoc_functor(const AssocParams& p) {
  F f;
  const u64* w = assoc_words<F>(p);
#pragma unroll
  for (int i = 0; i < F::NP; ++i) f.p[i] = w[i];
  return f;
}

// The initial item (exclusive scans).
template <class F> DS_DEV typename F::V assoc_init(const AssocParams& p) {
  return F::from_words(assoc_words<F>(p) + F::NP);
}

// The thread's items of round r of the tile at tb (VEC from tb + (r * BLOCK + thread) * VEC),
// those at or past `hi` absent; returns how many are present.
template <class F, int BLOCK, int VEC, u32 OWN = 0, class... S>
DS_DEV int assoc_round(u64 tb, u64 hi, int r, typename F::V (&x)[VEC], const S&... s) {
  const u64 i = tb + ((u64)r * BLOCK + threadIdx.x) * VEC;
  if (i + VEC <= hi) {
    F::template vec<VEC, OWN>(i, x, s...);
    return VEC;
  }
  int m = 0;
#pragma unroll
  for (int j = 0; j < VEC; ++j)
    if (i + j < hi) {
      x[j] = F::at(i + j, s...);
      m = j + 1;
    }
  return m;
}

// The thread's items of the whole tile at tb, every round (x[r] as assoc_round's x).
template <class F, int BLOCK, int R, int VEC, u32 OWN, class... S>
DS_DEV void assoc_tile(u64 tb, typename F::V (&x)[R][VEC], const S&... s) {
#pragma unroll
  for (int r = 0; r < R; ++r)
    F::template vec<VEC, OWN>(tb + ((u64)r * BLOCK + threadIdx.x) * VEC, x[r], s...);
}

// The combination, in order, of one value a thread per round (round-major, then thread),
// valid in thread 0.
template <int BLOCK, int R, class O, class G> DS_DEV O tile_fold(const O (&a)[R], const G& g) {
  constexpr int NW = BLOCK / WARP;
  constexpr int CHUNKS = R * NW;
  constexpr int CPL = (CHUNKS + WARP - 1) / WARP;
  __shared__ O s_part[CHUNKS];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const O w = warp_reduce(a[r], g);
    if (lane_id() == 0) s_part[r * NW + warp_id()] = w;
  }
  __syncthreads();
  O t = G::none();
  if (warp_id() == 0) {
#pragma unroll
    for (int q = 0; q < CPL; ++q) {
      const int k = lane_id() * CPL + q;
      if (k < CHUNKS) t = g(t, s_part[k]);
    }
    t = warp_reduce(t, g);
  }
  __syncthreads();
  return t;
}

}  // namespace ds

// MODE 0: the result's words (K compute bits, then whether there was an item) to p.result.
// MODE 1: each chunk's exclusive prefix (from the initial item where p.excl) back to p.partial.
// MODE 2: as MODE 0, for a commutative combiner (Combiner::commutative): items folded in
// any order within a block.
// L::minb: the blocks a multiprocessor it is compiled for (0: no bound), as many as the grid has.
// OWN: bit k set where component k is a lazy source over component 0's stored column alone,
// computed from the elements component 0 loaded (its `vec_from`), so the column is read once.
template <class F, class L, class FL, class... S>
__global__ void __launch_bounds__(L::block, L::minb)
    ds_assoc_reduce(const AssocParams p, const S... s) {
  constexpr int BLOCK = L::block, R = L::items, VEC = L::vec, MODE = FL::mode;
  constexpr u32 OWN = FL::own;
  using namespace ds;
  typedef typename F::V V;
  typedef OptF<F> G;
  typedef typename G::O O;
  constexpr u64 TILE = (u64)BLOCK * R * VEC;
  const G g{assoc_functor<F>(p)};
  const u64 lo = (u64)blockIdx.x * p.chunk;
  const u64 hi = lo + p.chunk < p.n ? lo + p.chunk : p.n;
  O acc = G::none();  // (thread 0)
  if constexpr (MODE == 2) {
    // A commutative combiner: each thread folds its items of every tile as they come, VEC
    // chains a thread (as ds_reduce does), and the block folds the threads' values once.
    // Whole tiles load all their rounds before folding them (R vectors in flight a source,
    // as ds_reduce); the first starts the chains. The tail folds round by round.
    O part[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) part[j] = G::none();
    u64 tb = lo;
    if (tb + TILE <= hi) {
      V chain[VEC];
      {
        V x[R][VEC];
        assoc_tile<F, BLOCK, R, VEC, OWN>(tb, x, s...);
#pragma unroll
        for (int j = 0; j < VEC; ++j) chain[j] = x[0][j];
#pragma unroll
        for (int r = 1; r < R; ++r)
#pragma unroll
          for (int j = 0; j < VEC; ++j) chain[j] = g.f.raw(chain[j], x[r][j]);
      }
      for (tb += TILE; tb + TILE <= hi; tb += TILE) {
        V x[R][VEC];
        assoc_tile<F, BLOCK, R, VEC, OWN>(tb, x, s...);
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
          for (int j = 0; j < VEC; ++j) chain[j] = g.f.raw(chain[j], x[r][j]);
      }
      // Whether the chains hold combinations, not elements alone.
      const bool combined = R > 1 || tb - lo > TILE;
#pragma unroll
      for (int j = 0; j < VEC; ++j) part[j] = G::some(combined ? F::canon(chain[j]) : chain[j]);
    }
    for (; tb < hi; tb += TILE) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        V x[VEC];
        const int m = assoc_round<F, BLOCK, VEC, OWN>(tb, hi, r, x, s...);
#pragma unroll
        for (int j = 0; j < VEC; ++j)
          if (j < m) part[j] = part[j].has ? G::some(g.f(part[j].v, x[j])) : G::some(x[j]);
      }
    }
    O a[1];
    a[0] = part[0];
#pragma unroll
    for (int j = 1; j < VEC; ++j) a[0] = g(a[0], part[j]);
    acc = tile_fold<BLOCK, 1>(a, g);
  } else {
    for (u64 tb = lo; tb < hi; tb += TILE) {
      O a[R];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        V x[VEC];
        const int m = assoc_round<F, BLOCK, VEC>(tb, hi, r, x, s...);
        a[r] = m > 0 ? G::some(x[0]) : G::none();
#pragma unroll
        for (int j = 1; j < VEC; ++j)
          if (j < m) a[r].v = g.f(a[r].v, x[j]);
      }
      const O t = tile_fold<BLOCK, R>(a, g);
      if (threadIdx.x == 0) acc = g(acc, t);
    }
  }
  // The result's words: K compute bits, then whether there was an item (thread 0).
  auto put_result = [&](const O& all) {
    u64* w = (u64*)p.result;
    F::to_words(all.v, w);
    w[F::K] = all.has;
  };
  if constexpr (MODE != 1) {
    if (gridDim.x == 1) {  // the block's combination is the result
      if (threadIdx.x == 0) put_result(acc);
      return;
    }
  }
  O* partial = (O*)p.partial;
  __shared__ bool s_last;
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = acc;
    __threadfence();
    s_last = atomicAdd((u32*)p.done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!s_last) return;
  __threadfence();
  if constexpr (MODE != 1) {
    // Each thread folds a run of consecutive chunk totals, the block the threads' values, both
    // in order: one fold over the block, however many chunks.
    const u32 per = (gridDim.x + BLOCK - 1) / BLOCK;
    const u32 b0 = threadIdx.x * per;
    O a[1];
    a[0] = G::none();
    for (u32 k = 0; k < per && b0 + k < gridDim.x; ++k) a[0] = g(a[0], load_cg(partial + b0 + k));
    const O all = tile_fold<BLOCK, 1>(a, g);  // (thread 0)
    if (threadIdx.x == 0) {
      put_result(all);
      *(u32*)p.done = 0;
    }
  } else {
    // The carry lives in the lanes of warp 0, which call the prefix functor.
    O carry = p.excl ? G::some(assoc_init<F>(p)) : G::none();
    for (u32 b = 0; b < gridDim.x; b += BLOCK) {
      O a[1];
      a[0] = G::none();
      if (b + threadIdx.x < gridDim.x) a[0] = load_cg(partial + b + threadIdx.x);
      tile_scan_with<BLOCK, 1, false>(a, g, G::none(), [&](const O& total) {
        const O c = carry;
        carry = g(carry, total);
        return c;
      });
      if (b + threadIdx.x < gridDim.x) partial[b + threadIdx.x] = a[0];
      __syncthreads();
    }
    if (threadIdx.x == 0) *(u32*)p.done = 0;
  }
}

// The scan of each chunk from its prefix (p.partial, from ds_assoc_reduce's MODE 1). MODE 0:
// inclusive; 1: exclusive (the prefix holds the initial item); 2: segmented exclusive, the
// initial item at heads.
// Compiled for one block a multiprocessor (the launch's L::minb, 1): without a bound, ptxas
// took 58-114 registers and gave the (f64, u64) scan 64 with 4 bytes spilled; with it, that
// scan takes 79 and the items of over 16 bytes (this kernel's usual users) compile to the same
// code as without.
template <class F, class L, class FL, class... S>
__global__ void __launch_bounds__(L::block, L::minb)
    ds_assoc_scan(const AssocParams p, const S... s) {
  constexpr int BLOCK = L::block, R = L::items, VEC = L::vec, MODE = FL::mode;
  using namespace ds;
  typedef typename F::V V;
  typedef OptF<F> G;
  typedef typename G::O O;
  constexpr u64 TILE = (u64)BLOCK * R * VEC;
  const G g{assoc_functor<F>(p)};
  const u64 lo = (u64)blockIdx.x * p.chunk;
  const u64 hi = lo + p.chunk < p.n ? lo + p.chunk : p.n;
  O carry = ((const O*)p.partial)[blockIdx.x];  // (the lanes of warp 0)
  V init;
  if constexpr (MODE != 0) init = assoc_init<F>(p);
  for (u64 tb = lo; tb < hi; tb += TILE) {
    V x[R][VEC];
    int m[R];
    O a[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      m[r] = assoc_round<F, BLOCK, VEC>(tb, hi, r, x[r], s...);
      a[r] = m[r] > 0 ? G::some(x[r][0]) : G::none();
#pragma unroll
      for (int j = 1; j < VEC; ++j)
        if (j < m[r]) a[r].v = g.f(a[r].v, x[r][j]);
    }
    // (The total by value: taken by reference to its shared-memory copy, the f64 x u64 tuple
    // instance spilled 12 bytes a thread.)
    tile_scan_with<BLOCK, R, true>(a, g, G::none(), [&](O total) {
      const O c = carry;
      carry = g(carry, total);
      return c;
    });
#pragma unroll
    for (int r = 0; r < R; ++r) {
      O q = a[r];
      V out[VEC];
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        if (j < m[r]) {
          const O xj = G::some(x[r][j]);
          if constexpr (MODE == 0) {
            q = g(q, xj);
            out[j] = q.v;
          } else if constexpr (MODE == 1) {
            out[j] = q.v;
            q = g(q, xj);
          } else {
            out[j] = (F::head(x[r][j]) || !q.has) ? init : q.v;
            q = g(q, xj);
          }
        }
      }
      F::template store_round<BLOCK, VEC>(p, hi, tb, r, out);
    }
  }
}


namespace ds {
// Opt items hold any components, floats among them: the look-back keeps its one left fold.
template <class V> struct exact_fold<Opt<V>> { static constexpr bool value = false; };
// The slots of the single-pass scan hold tile aggregates and inclusive prefixes, never
// nothing: the item alone (an item of two 4-byte components fits two tagged words).
template <class V> struct SlotIO<Opt<V>> : SlotIO<V> {
  typedef SlotIO<V> IO;
  static DS_DEV void put(Slot* s, const Opt<V>& v, u32 epoch) { IO::put(s, v.v, epoch); }
  static DS_DEV Opt<V> value(const Slot* s, const typename IO::P& w) {
    Opt<V> o;
    o.v = IO::value(s, w);
    o.has = 1;
    return o;
  }
};

// The combination of a thread's m items x of one round (WHOLE: all VEC of them), or nothing:
// combined raw, made canonical once (an item alone keeps its bits).
template <class F, bool WHOLE, class G, int VEC>
DS_DEV typename G::O round_total(const G& g, const typename F::V (&x)[VEC], int m) {
  const int k = WHOLE ? VEC : m;
  typename G::O a = k > 0 ? G::some(x[0]) : G::none();
#pragma unroll
  for (int j = 1; j < VEC; ++j)
    if (j < k) a.v = g.f.raw(a.v, x[j]);
  if (k > 1) a.v = F::canon(a.v);
  return a;
}

// The scan outputs of a thread's m items x of one round (WHOLE: all VEC, and q present) from
// the round's exclusive prefix q (MODE as ds_assoc_scan's). q combines raw and is made
// canonical where it is stored, unless it has not combined yet (a prefix or an item alone).
template <class F, int MODE, bool WHOLE, class G, int VEC>
DS_DEV void round_scan(const G& g, typename G::O q, const typename F::V (&x)[VEC], int m,
                       const typename F::V& init, typename F::V (&out)[VEC]) {
  typedef typename F::V V;
  const int k = WHOLE ? VEC : m;
  if constexpr (WHOLE) q.has = 1;
  const bool had = q.has;
  bool combined = false;
#pragma unroll
  for (int j = 0; j < VEC; ++j) {
    if (j < k) {
      const V before = combined ? F::canon(q.v) : q.v;
      if (q.has) {
        q.v = g.f.raw(q.v, x[j]);
        combined = true;
      } else {
        q = G::some(x[j]);
      }
      if constexpr (MODE == 0) {
        out[j] = combined ? F::canon(q.v) : q.v;
      } else if constexpr (MODE == 1) {
        out[j] = before;
      } else {
        out[j] = (F::head(x[j]) || !(j > 0 || had)) ? init : before;
      }
    }
  }
}

// The round totals of a thread's items of a tile staged at m (tile_items a column; present(r)
// of round r before the end; WHOLE: all of them).
template <class F, int BLOCK, int R, int VEC, bool WHOLE, class G, class Present>
DS_DEV void tile_totals(const G& g, const unsigned char* m, u32 tile_items, const Present& present,
                        typename G::O (&a)[R]) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    typename F::V x[VEC];
    F::template staged<BLOCK, VEC>(m, tile_items, r, x);
    a[r] = round_total<F, WHOLE>(g, x, present(r));
  }
}

// The scan outputs of a thread's items of that tile, from its rounds' exclusive prefixes a,
// stored.
template <class F, int BLOCK, int R, int VEC, int MODE, bool WHOLE, class G, class Present>
DS_DEV void tile_outputs(const G& g, const AssocParams& p, u64 n, u64 tb, const unsigned char* m,
                         u32 tile_items, const Present& present, const typename G::O (&a)[R],
                         const typename F::V& init) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    typename F::V x[VEC], out[VEC];
    F::template staged<BLOCK, VEC>(m, tile_items, r, x);
    round_scan<F, MODE, WHOLE>(g, a[r], x, present(r), init, out);
    F::template store_round<BLOCK, VEC, WHOLE>(p, n, tb, r, out);
  }
}
}  // namespace ds

// The single-pass scan (the decoupled look-back of block/lookback.cuh) for items of up to 16
// bytes: each element read once, where ds_assoc_reduce + ds_assoc_scan read it twice. A block
// a tile of BLOCK x R x VEC items, whose columns are copied to shared memory (dynamic, the
// launch gives TILE x the bytes of a stored item; asynchronously where a column is stored, as
// the scans' tiles) and wait there while the block looks back. The combination order is fixed by
// the tile shape (each thread's items in order, the block scan of tile_scan_with, the look-back's
// fixed trees and left folds), so float results are the same on every run. GROUPED: the
// look-back over groups of 32 tiles (tile_lookback_grouped), whose prefixes resolve in parallel;
// else the tile-by-tile left fold of tile_lookback, which resolves about 32 tiles a round trip
// (the linear recurrence of 2^28 pairs of f32 on an H100: 1.68 ms against 2.59). MODE as for
// ds_assoc_scan; p.excl: the exclusive scan starts from the initial item.
template <class F, class L, class FL, class... S>
__global__ void __launch_bounds__(L::block, L::minb)
    ds_assoc_scan_lookback(const AssocParams p, const S... s) {
  constexpr int BLOCK = L::block, R = L::items, VEC = L::vec, MODE = FL::mode;
  constexpr bool GROUPED = FL::grouped;
  using namespace ds;
  typedef typename F::V V;
  typedef OptF<F> G;
  typedef typename G::O O;
  static_assert(sizeof(V) <= 16, "the look-back's items are at most 16 bytes");
  constexpr u32 TILE = BLOCK * R * VEC;
  extern __shared__ u32x4 ds_assoc_tile[];  // TILE stored items, column by column
  unsigned char* m_tile = (unsigned char*)ds_assoc_tile;
  const G g{assoc_functor<F>(p)};
  const u32 tile = next_tile<BLOCK>((u32*)p.counter, p.base);
  const u64 tb = (u64)tile * TILE;
  const u64 n = p.n;
  F::template stage<BLOCK, R, VEC>(n, tb, m_tile, s...);
  F::template stage_wait<BLOCK, R, VEC>(tb, m_tile, s...);
  const u32 rem = n - tb < TILE ? (u32)(n - tb) : TILE;
  // How many of the thread's items of round r are before the end.
  auto present = [&](int r) {
    const u32 k = ((u32)r * BLOCK + threadIdx.x) * VEC;
    return k >= rem ? 0 : rem - k < VEC ? (int)(rem - k) : VEC;
  };
  V init;
  if constexpr (MODE != 0) init = assoc_init<F>(p);
  O first = G::none();
  if constexpr (MODE == 1) {
    if (p.excl) first = G::some(init);
  }
  // A whole tile with a prefix for every round (all but the first tile, without an initial
  // value): the rounds' code tests no bounds and no absent prefix.
  const bool full = rem == TILE && (tile > 0 || first.has);
  O a[R];
  if (full) {
    tile_totals<F, BLOCK, R, VEC, true>(g, m_tile, TILE, present, a);
  } else {
    tile_totals<F, BLOCK, R, VEC, false>(g, m_tile, TILE, present, a);
  }
  Slot* status = (Slot*)p.status;
  tile_scan_with<BLOCK, R, false>(a, g, G::none(), [&](const O& total) {
    if constexpr (GROUPED) {
      if (lane_id() == 0) tile_publish(status, p.tiles, tile, p.epoch, total);
      return tile_lookback_grouped(status, p.tiles, tile, p.epoch, total, first, g, G::none());
    } else {
      return tile_prefix(status, p.tiles, tile, p.epoch, total, first, g, G::none());
    }
  });
  if (full) {
    tile_outputs<F, BLOCK, R, VEC, MODE, true>(g, p, n, tb, m_tile, TILE, present, a, init);
  } else {
    tile_outputs<F, BLOCK, R, VEC, MODE, false>(g, p, n, tb, m_tile, TILE, present, a, init);
  }
}
