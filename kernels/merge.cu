// Merge of two sorted sequences by merge path (Green, McColl and Bader, "GPU merge path",
// 2012; Odeh et al., "Merge path - parallel merging made simple", 2012). The merge of a (na
// keys) and b (nb keys) is cut into tiles of TILE outputs. The cut at output d is the point
// where the path of the merge crosses the diagonal i + j = d: the number i of a's keys among
// the first d outputs, found by a binary search over the diagonal. ds_merge_split finds the
// cut of every tile; ds_merge then loads a tile's two stretches into shared memory (coalesced),
// each thread finds its own cut inside the tile (a search of shared memory) and merges ITEMS
// outputs, and the tile is stored coalesced: keys, and values read from the position each
// output came from. Stable: on ties a's keys come first. Keys compare by their ordered bits
// (block/order.cuh: total_cmp for floats) and are stored with their bits unchanged.
// ds_merge_rank merges sorted needles with a haystack the same way and writes, for each
// needle, the number of haystack keys before it in the merge (its lower_bound with the
// needles as a, its upper_bound with the needles as b) to the needle's original position.
// ds_set_op merges each tile the same way and keeps the outputs a set operation keeps (one
// pass; see below).
#pragma once
#include "block/source.cuh"
#include "block/order.cuh"
#include "block/scan.cuh"

namespace ds {
// The cut of diagonal d: how many of the first d outputs come from a. `a_first(i, j)`: a's
// key i goes before b's key j (a[i] <= b[j]).
template <class F> DS_DEV u64 merge_cut(u64 d, u64 na, u64 nb, F a_first) {
  u64 lo = d > nb ? d - nb : 0, hi = d < na ? d : na;
  while (lo < hi) {
    const u64 mid = lo + (hi - lo) / 2;
    if (a_first(mid, d - 1 - mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// One tile of a merge: its first output d0, the starts a0 and b0 of its stretches of a and b,
// their lengths la and cnt - la, and where the stretches begin in shared memory (sa, sb).
struct MergeTile {
  u64 d0, a0, b0;
  u32 la, cnt, sa, sb;
};

// Keys [g, g + len) of source s (of n keys) into t + (g % VEC) onwards, raw bits: whole
// 16-byte vectors by asynchronous copies where the source is a stored column aligned for them
// (vector v of the stretch to t + v * VEC, so each copy is aligned at both ends; the elements
// around the stretch that share its end vectors land in padding), the partial vector at the end
// of the input element by element. Returns the number of elements of t used, padding included.
template <int BLOCK, int VEC, class S, class U>
DS_DEV u32 merge_stage(const S& s, u64 g, u32 len, u64 n, U* t) {
  typedef typename S::T T;
  const u32 off = (u32)(g % VEC);
  const u64 g0 = g - off;
  const u32 nv = (off + len + VEC - 1) / VEC;
  for (u32 v = threadIdx.x; v < nv; v += BLOCK) {
    const u64 i = g0 + (u64)v * VEC;
    if (i + VEC <= n) {
      cp_async<16>(t + v * VEC, s.p + i);
    } else {
#pragma unroll
      for (int j = 0; j < VEC; ++j)
        if (i + j < n) t[v * VEC + j] = key_bits<T>::raw(s.p[i + j]);
    }
  }
  return nv * VEC;
}

// Tile t's stretches of a and b in s_key as raw bits (a's first; `merge_smem` elements of
// room): by 16-byte asynchronous copies where both are stored columns aligned for them, else
// all of a thread's loads issued before the first is stored. P: parameters with the cuts and
// both lengths (MergeParams, SetParams).
template <int BLOCK, int ITEMS, class KA, class KB, class P, class U>
DS_DEV MergeTile merge_load(const KA& a, const KB& b, const P& p, u64 t, U* s_key) {
  typedef typename KA::T T;
  typedef key_bits<T> K;
  constexpr u32 TILE = BLOCK * ITEMS;
  constexpr int VEC = 16 / sizeof(T);
  const u64* __restrict__ cuts = (const u64*)p.cuts;
  const u64 total = p.na + p.nb;
  const u64 d0 = t * TILE, d1 = d0 + TILE < total ? d0 + TILE : total;
  const u64 a0 = cuts[t];
  // Sorted inputs give a0 <= cuts[t + 1] <= a0 + (d1 - d0). Unsorted ones may not (their
  // result is unspecified, never a read out of bounds): the end is clamped so that both
  // stretches lie within their inputs.
  u64 a1 = cuts[t + 1];
  a1 = a1 > a0 ? a1 : a0;
  a1 = a1 + p.nb >= d1 ? a1 : d1 - p.nb;
  a1 = a1 < a0 + (d1 - d0) ? a1 : a0 + (d1 - d0);
  a1 = a1 < p.na ? a1 : p.na;
  MergeTile m{d0, a0, d0 - a0, (u32)(a1 - a0), (u32)(d1 - d0), 0, 0};
  if constexpr (KA::PLAIN && KB::PLAIN && vec_ok<KA, VEC>::value && vec_ok<KB, VEC>::value) {
    const u32 used = merge_stage<BLOCK, VEC>(a, m.a0, m.la, p.na, s_key);
    m.sa = (u32)(m.a0 % VEC);
    m.sb = used + (u32)(m.b0 % VEC);
    merge_stage<BLOCK, VEC>(b, m.b0, m.cnt - m.la, p.nb, s_key + used);
    stage_wait();
  } else {
    m.sb = m.la;
    // Zero past the tile: left unset there, 1-byte keys' registers were "spill loads" to ptxas.
    U v[ITEMS];
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
      const u32 k = r * BLOCK + threadIdx.x;
      v[r] = k < m.cnt ? K::raw(k < m.la ? a.at(a0 + k) : b.at(m.b0 + (k - m.la))) : U{};
    }
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
      const u32 k = r * BLOCK + threadIdx.x;
      if (k < m.cnt) s_key[k] = v[r];
    }
  }
  __syncthreads();
  return m;
}

// Elements of ds_merge's shared key array: a tile, and the padding of two stretches copied in
// whole vectors.
template <class T, u32 TILE> struct merge_smem {
  static constexpr u32 value = TILE + 4 * (16 / sizeof(T));
};

// This thread's outputs d .. d + ITEMS - 1 of the tile (d returned): their keys (raw bits), and
// where each came from (a tile position: a's stretch first, then b's). Keys compare by their
// ordered bits. The next key of each side waits in a register, so each output reads shared
// memory once. Outputs at or past the tile's end hold anything.
template <int ITEMS, u32 TILE, class T, class U>
DS_DEV u32 merge_thread(const MergeTile& m, const U* s_key, U (&key)[ITEMS], u32 (&from)[ITEMS]) {
  typedef key_bits<T> K;
  const u32 la = m.la, lb = m.cnt - m.la;
  const U* sa = s_key + m.sa;
  const U* sb = s_key + m.sb;
  const u32 d = threadIdx.x * ITEMS < m.cnt ? threadIdx.x * ITEMS : m.cnt;
  u32 ia = (u32)merge_cut(d, la, lb, [&](u64 i, u64 j) { return K::order(sa[i]) <= K::order(sb[j]); });
  u32 ib = d - ia;
  U ka = ia < la ? sa[ia] : (U)0, kb = ib < lb ? sb[ib] : (U)0;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const bool take_a = ib >= lb || (ia < la && K::order(ka) <= K::order(kb));
    key[k] = take_a ? ka : kb;
    u32 f = take_a ? ia : la + ib;
    from[k] = f < TILE ? f : TILE - 1;  // past the tile's end: not stored
    if (take_a) {
      ++ia;
      ka = ia < la ? sa[ia] : (U)0;
    } else {
      ++ib;
      kb = ib < lb ? sb[ib] : (U)0;
    }
  }
  return d;
}
}  // namespace ds

template <class L, class FL, class KA, class KB>
__global__ void __launch_bounds__(L::block)
    ds_merge_split(const KA a, const KB b, const MergeParams p) {
  constexpr int TILE = FL::tile;
  using namespace ds;
  typedef key_bits<typename KA::T> K;
  const u64 total = p.na + p.nb;
  u64* __restrict__ cuts = (u64*)p.cuts;
  for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t <= p.tiles;
       t += (u64)gridDim.x * blockDim.x) {
    const u64 d = t * TILE < total ? t * TILE : total;
    cuts[t] = merge_cut(d, p.na, p.nb, [&](u64 i, u64 j) {
      return K::order(K::raw(a.at(i))) <= K::order(K::raw(b.at(j)));
    });
  }
}

template <class L, class FL, class KA, class KB, class VA, class VB>
__global__ void __launch_bounds__(L::block)
    ds_merge(const KA a, const KB b, const VA va, const VB vb, const MergeParams p) {
  constexpr int KEYS = FL::keys, VALUES = FL::values, BLOCK = L::block, ITEMS = L::items;
  using namespace ds;
  typedef typename KA::T T;
  typedef key_bits<T> K;
  typedef typename K::U U;
  typedef typename VA::T V;
  constexpr u32 TILE = BLOCK * ITEMS;
  constexpr int VEC = 16 / sizeof(T);
  static_assert(TILE <= 65536, "origins are 16-bit");
  static_assert(TILE * sizeof(T) % 16 == 0, "tiles start on 16-byte boundaries");
  __shared__ __align__(16) U s_key[merge_smem<T, TILE>::value];
  __shared__ u16 s_from[VALUES ? TILE : 1];
  const MergeTile m = merge_load<BLOCK, ITEMS>(a, b, p, blockIdx.x, s_key);
  U key[ITEMS];
  u32 from[ITEMS];
  const u32 d = merge_thread<ITEMS, TILE, T>(m, s_key, key, from);
  __syncthreads();
#pragma unroll
  for (int k = 0; k < ITEMS; ++k)
    if (d + k < m.cnt) {
      s_key[d + k] = key[k];
      if constexpr (VALUES != 0) s_from[d + k] = (u16)from[k];
    }
  __syncthreads();
  if constexpr (KEYS != 0) {
    // The tile's keys (their bits unchanged) in whole 16-byte vectors: the output is aligned
    // and every tile starts on a 16-byte boundary.
    U* __restrict__ out = (U*)p.keys + m.d0;
    const u32 nv = m.cnt / VEC;
    for (u32 v = threadIdx.x; v < nv; v += BLOCK)
      *(u32x4*)(out + v * VEC) = *(const u32x4*)(s_key + v * VEC);
    for (u32 k = nv * VEC + threadIdx.x; k < m.cnt; k += BLOCK) out[k] = s_key[k];
  }
  if constexpr (VALUES != 0) {
    V* __restrict__ out_vals = (V*)p.values;
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
      const u32 k = r * BLOCK + threadIdx.x;
      if (k < m.cnt) {
        const u32 f = s_from[k];
        out_vals[m.d0 + k] = f < m.la ? va.at(m.a0 + f) : vb.at(m.b0 + (f - m.la));
      }
    }
  }
}

// SIDE 0: the needles are a; 1: they are b. The rank of each needle, in the needles' order,
// goes to p.keys as I: within a tile a needle's rank is the other input's stretch start plus
// (its output position - its position in the tile), under 2^16, staged in shared memory so
// that the stores are coalesced. Needles no output of a thread covers (unsorted haystacks)
// read the stretch start.
template <class L, class FL, class KA, class KB>
__global__ void __launch_bounds__(L::block)
    ds_merge_rank(const KA a, const KB b, const MergeParams p) {
  typedef typename FL::idx I;
  constexpr int SIDE = FL::side_b, BLOCK = L::block, ITEMS = L::items;
  using namespace ds;
  typedef typename KA::T T;
  typedef typename key_bits<T>::U U;
  constexpr u32 TILE = BLOCK * ITEMS;
  static_assert(TILE <= 65536, "ranks within a tile are 16-bit");
  __shared__ __align__(16) U s_key[merge_smem<T, TILE>::value];
  __shared__ u16 s_rel[TILE];
#pragma unroll
  for (int r = 0; r < ITEMS; ++r) s_rel[r * BLOCK + threadIdx.x] = 0;
  const MergeTile m = merge_load<BLOCK, ITEMS>(a, b, p, blockIdx.x, s_key);
  U key[ITEMS];
  u32 from[ITEMS];
  const u32 d = merge_thread<ITEMS, TILE, T>(m, s_key, key, from);
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const u32 f = from[k];
    if (d + k < m.cnt && (SIDE == 0 ? f < m.la : f >= m.la)) {
      const u32 j = SIDE == 0 ? f : f - m.la;
      s_rel[j] = (u16)(d + k - j);
    }
  }
  __syncthreads();
  const u32 mine = SIDE == 0 ? m.la : m.cnt - m.la;
  const u64 first = SIDE == 0 ? m.a0 : m.b0, other = SIDE == 0 ? m.b0 : m.a0;
  I* __restrict__ out = (I*)p.keys;
#pragma unroll
  for (int r = 0; r < ITEMS; ++r) {
    const u32 k = r * BLOCK + threadIdx.x;
    if (k < mine) out[first + k] = (I)(other + s_rel[k]);
  }
}

// Set operations in one pass over merge path, with the multiset semantics of C++'s std::set_*:
// of a key that a holds m times and b n times, the union keeps a's m copies and b's last
// n - m, the intersection a's first min(m, n), the difference a's last m - n, the symmetric
// difference both differences. (As Thrust's set operations, one merge-path pass; the rule for
// each copy is this file's own.) Each tile is merged as in ds_merge, and a thread walks its
// outputs in merge order deciding each from where its key's run starts in a (ra) and in b
// (rb): a's copy at ga, of rank ga - ra among its equals, is matched where b[rb + ga - ra]
// holds the key; b's copy at gb is kept where its rank gb - rb is at least m, and m is how
// far a's position has moved past ra, since on ties a's copies all come first in the merge.
// The run starts change where the walk's key changes (the positions reached in a and b then);
// for a thread's first key they are found by galloping back from the thread's place in each
// stretch (one read of shared memory where the key is not repeated) and, for a run that began
// before the tile, behind the stretch's start in memory. The kept outputs are counted, placed by
// the deterministic look-back (as ds_compact), gathered in shared memory and stored coalesced.
namespace ds {
// The first position of [0, hi) at which `below(i)` is false, given that it is false from there
// to hi (and at hi, where there is one): a gallop back from hi (runs of equal keys are short
// next to the input, mostly), then a binary search of the last step.
template <class I, class F> DS_DEV I gallop_back(I hi, F below) {
  I lo = 0, step = 1;
  while (step <= hi) {
    if (below(hi - step)) {
      lo = hi - step + 1;
      break;
    }
    hi -= step;
    step *= 2;
  }
  while (lo < hi) {
    const I mid = lo + (hi - lo) / 2;
    if (below(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Where the run of ordered key k starts in side s, whose stretch in the tile is st, of which
// st[0, pos) holds no key above k and st[pos] (where the stretch has it) none below: galloping
// back from pos within the stretch, and behind its start g0 in memory where the run reaches
// back to it.
template <class S, class U> DS_DEV u64 run_start(const S& s, const U* st, u32 pos, u64 g0, U k) {
  typedef key_bits<typename S::T> K;
  const u32 lo = gallop_back(pos, [&](u32 i) { return K::order(st[i]) < k; });
  if (lo > 0 || g0 == 0) return g0 + lo;
  return gallop_back(g0, [&](u64 i) { return K::order(K::raw(s.at(i))) < k; });
}
}  // namespace ds

// SET 0: union, 1: intersection, 2: difference, 3: symmetric difference. C counts the kept
// outputs (u32 where na + nb < 2^32). KEYS, VALUES: what it stores (values from VA and VB).
// p.total gets the count. Unsorted inputs, whose tiles' stretches may overlap, may keep more
// than the operation can: what lies past p.room is neither stored nor counted. (Compiled for
// 2 blocks a multiprocessor, L::minb: unbounded, NVRTC 13.5's ptxas held the instances with
// 64-bit counts to 40 registers and spilled.)
template <class L, class FL, class KA, class KB, class VA, class VB>
__global__ void __launch_bounds__(L::block, L::minb)
    ds_set_op(const KA a, const KB b, const VA va, const VB vb, const SetParams p) {
  typedef typename ds::if_type<FL::wide, u64, u32>::T C;
  constexpr int SET = FL::op, KEYS = FL::keys, VALUES = FL::values;
  constexpr int BLOCK = L::block, ITEMS = L::items;
  using namespace ds;
  typedef typename KA::T T;
  typedef key_bits<T> K;
  typedef typename K::U U;
  typedef typename VA::T V;
  typedef Combine<OpAdd, C> F;
  constexpr u32 TILE = BLOCK * ITEMS;
  static_assert(TILE <= 65536, "origins are 16-bit");
  static_assert(ITEMS <= 32, "a thread's kept outputs are one 32-bit mask");
  // An intersection of keys alone keeps b's first min(m, n) copies, the same bits as a's
  // (keys equal in order are equal in bits), decided as the union decides b's: no read of b
  // at a's copies.
  constexpr bool B_KEEPS = SET == 1 && VALUES == 0;
  __shared__ __align__(16) U s_key[merge_smem<T, TILE>::value];
  __shared__ u16 s_from[VALUES ? TILE : 1];
  const F f{};
  const u32 tile = next_tile<BLOCK>((u32*)p.counter, p.base);
  const MergeTile m = merge_load<BLOCK, ITEMS>(a, b, p, tile, s_key);
  const u32 la = m.la, lb = m.cnt - m.la;
  const U* sa = s_key + m.sa;
  const U* sb = s_key + m.sb;
  const u32 d = threadIdx.x * ITEMS < m.cnt ? threadIdx.x * ITEMS : m.cnt;
  u32 ia = (u32)merge_cut(d, la, lb, [&](u64 i, u64 j) { return K::order(sa[i]) <= K::order(sb[j]); });
  u32 ib = d - ia;
  // The runs of the thread's first key (its ordered bits in `run`).
  u64 ra = 0, rb = 0;
  U run = 0;
  if (d < m.cnt) {
    const bool ta = ib >= lb || (ia < la && K::order(sa[ia]) <= K::order(sb[ib]));
    run = K::order(ta ? sa[ia] : sb[ib]);
    // The outputs before the thread's first are sa[0, ia) and sb[0, ib), none above it.
    ra = run_start(a, sa, ia, m.a0, run);
    rb = run_start(b, sb, ib, m.b0, run);
  }
  // The next key of each side waits in a register, as in merge_thread. Where each output
  // came from is kept as one bit a output (from a) and found again from the thread's first
  // positions when it is stored: held as positions, they spilled at 64 registers.
  U ka = ia < la ? sa[ia] : (U)0, kb = ib < lb ? sb[ib] : (U)0;
  const u32 ia0 = ia, ib0 = ib;
  U key[ITEMS];
  u32 keep = 0, took = 0;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    key[k] = 0;
    if (d + k < m.cnt) {
      const bool take_a = ib >= lb || (ia < la && K::order(ka) <= K::order(kb));
      const U x = take_a ? ka : kb;
      const U o = K::order(x);
      const u64 ga = m.a0 + ia, gb = m.b0 + ib;
      if (o != run) {
        run = o;
        ra = ga;
        rb = gb;
      }
      bool kept;
      if (take_a) {
        bool matched = false;
        if constexpr (SET != 0 && !B_KEEPS) {
          // b's copy of the same rank (unsorted inputs: any position, read in bounds).
          const u64 j = rb + (ga - ra);
          if (j < p.nb) {
            const U y = j >= m.b0 && j - m.b0 < lb ? sb[j - m.b0] : K::raw(b.at(j));
            matched = K::order(y) == o;
          }
        }
        kept = SET == 0 ? true : B_KEEPS ? false : SET == 1 ? matched : !matched;
        took |= 1u << k;
        ++ia;
        ka = ia < la ? sa[ia] : (U)0;
      } else {
        kept = B_KEEPS ? gb - rb < ga - ra : (SET == 0 || SET == 3) && gb - rb >= ga - ra;
        ++ib;
        kb = ib < lb ? sb[ib] : (U)0;
      }
      key[k] = x;
      keep |= (kept ? 1u : 0u) << k;
    }
  }
  // Each thread's first place among the tile's kept outputs; the tile's count published for
  // the tiles after it now, its place in the output looked back for after the moves.
  Slot* status = (Slot*)p.status;
  C at[1] = {(C)__popc(keep)};
  tile_scan_with<BLOCK, 1, false>(at, f, (C)0, [&](C total) {
    if (lane_id() == 0) tile_publish(status, p.tiles, tile, p.epoch, total);
    return (C)0;
  });
  // (Every thread's walk, which reads both stretches, ended before the scan's barriers.)
  __shared__ C tile_kept;
  if (threadIdx.x == BLOCK - 1) tile_kept = at[0] + (C)__popc(keep);
  u32 q = (u32)at[0];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k)
    if ((keep >> k & 1) != 0) {
      s_key[q] = key[k];
      if constexpr (VALUES != 0) {
        const u32 from_a = (u32)__popc(took & ((1u << k) - 1));
        s_from[q] = (u16)((took >> k & 1) != 0 ? ia0 + from_a : la + ib0 + (k - from_a));
      }
      ++q;
    }
  __syncthreads();
  __shared__ C tile_prefix_s;
  if (threadIdx.x < WARP) {
    const C pre = tile_lookback(status, p.tiles, tile, p.epoch, (C)tile_kept, (C)0, f, (C)0);
    if (threadIdx.x == 0) {
      tile_prefix_s = pre;
      if (tile + 1 == p.tiles) {
        const u64 total = (u64)(pre + tile_kept);
        *(u64*)p.total = total < p.room ? total : p.room;
      }
    }
  }
  __syncthreads();
  const u64 base = (u64)tile_prefix_s;
  u32 kept = (u32)tile_kept;
  if (base + kept > p.room) kept = base >= p.room ? 0u : (u32)(p.room - base);
  if constexpr (KEYS != 0) {
    U* __restrict__ out = (U*)p.keys + base;
    for (u32 k = threadIdx.x; k < kept; k += BLOCK) out[k] = s_key[k];
  }
  if constexpr (VALUES != 0) {
    V* __restrict__ out_vals = (V*)p.values + base;
    for (u32 k = threadIdx.x; k < kept; k += BLOCK) {
      const u32 g = s_from[k];
      out_vals[k] = g < m.la ? va.at(m.a0 + g) : vb.at(m.b0 + (g - m.la));
    }
  }
}
