// Deterministic single-pass look-back, after Merrill & Garland's decoupled look-back (2016).
//
// Each tile publishes its aggregate a[t] as soon as it has it, and later its inclusive prefix
// I[t]. The inclusive prefix is defined as the left fold I[t] = (...((first f a[0]) f a[1])
// ...) f a[t]. A tile reads the slots of its 4 * 32 nearest predecessors at once (32 for
// values split over several words), takes the nearest published inclusive prefix I[p], and
// folds the aggregates a[p+1] ... a[t-1] onto it one by one, left to right: I[t-1] by its
// definition, whatever p it found. So every prefix is the same fixed expression of the tile
// aggregates on every run (a float scan gives the same bits), while each element is still read
// and written once. Exact operators (on integers, and on pairs or triples of them) may group
// differently and get the same bits: they reduce what they pass by trees and walk back as far
// as they must, as CUB's look-back does. An aggregate that absorbs what comes before it (that
// of a segmented scan's tile holding a segment head) is its tile's inclusive prefix at once, so
// the chain of waits breaks there. A tile only waits for tiles that started before it, so the
// waits end. `tile_lookback_grouped` defines the prefix over groups of 32 tiles instead, so that
// float prefixes resolve in parallel (the custom-operator scans use it).
//
// Status: `tiles` slots of aggregates, then `tiles` slots of inclusive prefixes, 32 bytes
// each. The low 32 bits of a slot's first word (of every word, for split values) are its tag,
// epoch * 2 + flag (whether the value absorbs), the epoch being the launch's number: slots of
// earlier launches are never mistaken for current ones, so the slots need no clearing between
// launches.
#pragma once
#include "warp/reduce.cuh"

namespace ds {

struct alignas(32) Slot {
  u64 w[4];
};

// A (value, segment-head flag) pair: the element of segmented scans. For 8-byte values the
// padding after the flag is a field (never read): as padding, copies of the pair moved its bytes
// one by one, and the look-back of the 8-byte integer segmented scans spilled 12 bytes a thread.
template <class C, bool WIDE = (sizeof(C) > 4)> struct SegPair {
  C v;
  u32 f;
};
template <class C> struct SegPair<C, true> {
  C v;
  u32 f;
  u32 spare;
};

// Values v that absorb everything before them, f(x, v) == v bit for bit for every x. A tile
// whose aggregate absorbs has it as its inclusive prefix whatever came before, so its aggregate
// slot serves its successors as an inclusive prefix slot, and a segment head breaks the chain
// of waits. SegPair is combined only by SegCombine (segment.cu), under which a pair whose head
// flag is set absorbs; the slot's tag carries the bit (its low bit), so readers see it without
// reading the value.
template <class V> struct absorbing {
  static constexpr bool any = false;
  static DS_DEV bool test(const V&) { return false; }
};
template <class C, bool W> struct absorbing<SegPair<C, W>> {
  static constexpr bool any = true;
  static DS_DEV bool test(const SegPair<C, W>& v) { return v.f != 0; }
};

// Memory-model accesses for the slots (PTX, sm_70 and later): a relaxed 64-bit access is
// single-copy atomic; acquire/release order the value words against the tag.
DS_DEV u64 ld_relaxed(const u64* p) {
  u64 v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
DS_DEV void st_relaxed(u64* p, u64 v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
DS_DEV u32 ld_acquire(const u32* p) {
  u32 v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
DS_DEV void st_release(u32* p, u32 v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
DS_DEV u32 ld_relaxed32(const u32* p) {
  u32 v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
DS_DEV void st_relaxed32(u32* p, u32 v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

DS_DEV void fence_acq_rel() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// Tile j's aggregate slot and inclusive-prefix slot in the status area of a launch of
// `tiles` tiles. (Tried, slower on an H100: tag words packed densely, four tiles a sector;
// 2026-11-22.)
struct Status {
  Slot* s;
  u32 tiles;
  DS_DEV Slot* agg(long long j) const { return s + j; }
  DS_DEV Slot* inc(long long j) const { return s + tiles + j; }
};

// What a reader takes from a slot in one access (`peek`), and whether it is ready: its tag holds
// this launch's epoch (every word's tag, where the value is split over several), and whether
// the value absorbs (the tag's low bit).
struct SlotTag {
  typedef u64 P;
  static constexpr bool SPLIT = false, FENCED = false;
  static DS_DEV P peek(const Slot* s) { return ld_relaxed(&s->w[0]); }
  static DS_DEV bool ready(u64 w, u32 epoch) { return ((u32)w >> 1) == epoch; }
  static DS_DEV bool absorbs(u64 w) { return (w & 1u) != 0; }
};

template <bool B, class X, class Y> struct if_type { typedef X T; };
template <class X, class Y> struct if_type<false, X, Y> { typedef Y T; };

// Two 64-bit words in one access, each single-copy atomic (the pair need not be).
DS_DEV void ld_relaxed2(const u64* p, u64& a, u64& b) {
  asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
               : "=l"(a), "=l"(b)
               : "l"(p)
               : "memory");
}
DS_DEV void st_relaxed2(u64* p, u64 a, u64 b) {
  asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}

// The 32-bit words of a value (its padding zero).
template <class V, int N> DS_DEV void value_words(const V& v, u32 (&w)[N]) {
#pragma unroll
  for (int k = 0; k < N; ++k) w[k] = 0;
  memcpy(w, &v, sizeof(V));
}

// How a value is written to and read from a slot, by its size:
// - up to 4 bytes (PACKED): one 64-bit word, the tag in its low half, the value in its high half;
// - 5 to 16 bytes (SPLIT): one such word for each 4 bytes of the value, every one tagged, written
//   and read as 16-byte vectors: a reader that finds the tag in every word it read has the whole
//   value (each 64-bit word is single-copy atomic and a slot is written once a launch), with no
//   fence and no second round trip;
// - 17 to 24 bytes: the value's words after the tag, written before it (release) and read after
//   it, with a fence between.
// The tag is epoch * 2 + whether the value absorbs. Readers `peek` at several slots at once,
// then take the values of the ready ones.
template <class V> struct SlotIO : SlotTag {
  static constexpr bool PACKED = sizeof(V) <= 4;
  static constexpr bool SPLIT = !PACKED && sizeof(V) <= 16;
  static constexpr bool FENCED = !PACKED && !SPLIT;
  static constexpr int N = (sizeof(V) + 3) / 4;  // the value's 32-bit words
  static constexpr int NP = SPLIT ? (N + 1) / 2 * 2 : 1;  // the words a peek reads
  struct Split {
    u64 w[NP];
  };
  typedef typename if_type<SPLIT, Split, u64>::T P;
  static DS_DEV u32 tag_of(const V& v, u32 epoch) {
    return (epoch << 1) | (absorbing<V>::test(v) ? 1u : 0u);
  }
  static DS_DEV void put(Slot* s, V v, u32 epoch) {
    static_assert(sizeof(V) <= 24, "slot values are at most 24 bytes");
    const u32 tag = tag_of(v, epoch);
    u32 words[N];
    value_words(v, words);
    if constexpr (PACKED) {
      st_relaxed(&s->w[0], (u64)tag | ((u64)words[0] << 32));
    } else if constexpr (SPLIT) {
      u64 t[NP];
#pragma unroll
      for (int k = 0; k < NP; ++k) t[k] = (u64)tag | ((u64)(k < N ? words[k] : 0u) << 32);
#pragma unroll
      for (int k = 0; k < NP; k += 2) st_relaxed2(&s->w[k], t[k], t[k + 1]);
    } else {
      u32* d = (u32*)&s->w[1];
#pragma unroll
      for (int k = 0; k < N; ++k) st_relaxed32(d + k, words[k]);
      st_release((u32*)&s->w[0], tag);
    }
  }
  static DS_DEV P peek(const Slot* s) {
    if constexpr (SPLIT) {
      P p;
#pragma unroll
      for (int k = 0; k < NP; k += 2) ld_relaxed2(&s->w[k], p.w[k], p.w[k + 1]);
      return p;
    } else {
      return SlotTag::peek(s);
    }
  }
  static DS_DEV bool ready(const P& p, u32 epoch) {
    if constexpr (SPLIT) {
      bool r = true;
#pragma unroll
      for (int k = 0; k < N; ++k) r = r && SlotTag::ready(p.w[k], epoch);
      return r;
    } else {
      return SlotTag::ready(p, epoch);
    }
  }
  static DS_DEV bool absorbs(const P& p) {
    if constexpr (SPLIT) return SlotTag::absorbs(p.w[0]);
    else return SlotTag::absorbs(p);
  }
  // The value of a ready slot that `peek` gave `p` (FENCED: after a fence).
  static DS_DEV V value(const Slot* s, const P& p) {
    u32 words[N];
    if constexpr (PACKED) {
      words[0] = (u32)(p >> 32);
    } else if constexpr (SPLIT) {
#pragma unroll
      for (int k = 0; k < N; ++k) words[k] = (u32)(p.w[k] >> 32);
    } else {
      const u32* src = (const u32*)&s->w[1];
#pragma unroll
      for (int k = 0; k < N; ++k) words[k] = ld_relaxed32(src + k);
    }
    V v;
    memcpy(&v, words, sizeof(V));
    return v;
  }
};

// A pair of a 4-byte value and a flag fits one word: the flag rides in the tag (as the
// absorbing bit, which it is).
template <class C> struct SlotIO4Pair : SlotTag {
  static constexpr bool PACKED = true;
  static DS_DEV void put(Slot* s, SegPair<C> v, u32 epoch) {
    u32 bits;
    memcpy(&bits, &v.v, 4);
    st_relaxed(&s->w[0], (u64)((epoch << 1) | (v.f ? 1u : 0u)) | ((u64)bits << 32));
  }
  static DS_DEV SegPair<C> value(const Slot*, u64 w) {
    SegPair<C> v;
    const u32 bits = (u32)(w >> 32);
    memcpy(&v.v, &bits, 4);
    v.f = (u32)w & 1u;
    return v;
  }
};
template <> struct SlotIO<SegPair<f32>> : SlotIO4Pair<f32> {};
template <> struct SlotIO<SegPair<i32>> : SlotIO4Pair<i32> {};
template <> struct SlotIO<SegPair<u32>> : SlotIO4Pair<u32> {};

// A block's tile number. From a counter that only grows (`base` is its value when this launch
// started), each block takes the next: a tile then waits only for tiles whose blocks have
// started, so every wait ends. Without a counter (null), the block's index, as CUB's
// single-pass kernels do: no atomic round trip before the first load, but it relies on the
// hardware starting blocks in the order of their index.
template <int BLOCK> DS_DEV u32 next_tile(u32* counter, u32 base) {
  __shared__ u32 s_tile;
  if (threadIdx.x == 0) s_tile = counter ? atomicAdd(counter, 1u) - base : blockIdx.x;
  __syncthreads();
  return s_tile;
}

// Spin loops give up (trap, which fails the launch with an error) after this many rounds,
// several seconds: a wait that long means a lost publication, and an error beats a hang.
constexpr u32 SPIN_LIMIT = 1u << 25;

DS_DEV void spin(u32& rounds, u32& pause) {
  __nanosleep(pause);
  if (pause < 256) pause *= 2;
  if (++rounds > SPIN_LIMIT) __trap();
}

// Waits until every block of the grid has called it, whatever each wrote before visible to
// all after. Only for cooperative launches (every block resident at once: a block waits for
// all the others, not only for those that started before it). `arrive` counts the blocks in
// and is zero between barriers (the last one in clears it); `gen` counts the barriers passed
// and is never cleared, so neither needs clearing between launches.
DS_DEV void grid_barrier(u32* arrive, u32* gen) {
  __syncthreads();
  if (threadIdx.x == 0) {
    // The generation can move on only after this block arrives, so it is read first.
    const u32 g = ld_relaxed32(gen);
    fence_acq_rel();
    if (atomicAdd(arrive, 1u) == gridDim.x - 1) {
      st_relaxed32(arrive, 0u);
      fence_acq_rel();
      atomicAdd(gen, 1u);
    } else {
      u32 pause = 8, rounds = 0;
      while (ld_relaxed32(gen) == g) spin(rounds, pause);
    }
    fence_acq_rel();
  }
  __syncthreads();
}

template <class V> DS_DEV V wait_slot(const Slot* s, u32 epoch) {
  u32 pause = 8, rounds = 0;
  for (;;) {
    const typename SlotIO<V>::P w = SlotIO<V>::peek(s);
    if (SlotIO<V>::ready(w, epoch)) {
      if (SlotIO<V>::FENCED) fence_acq_rel();
      return SlotIO<V>::value(s, w);
    }
    spin(rounds, pause);
  }
}

// Whether combining values of type V gives the same bits in any grouping (integers, and pairs
// of them, under the associative operators): then the look-back may reduce what it passes by
// trees and walk back as far as it needs. Floats keep the one left fold.
template <class V> struct exact_fold { static constexpr bool value = !traits<V>::is_float; };
template <class C> struct exact_fold<SegPair<C>> { static constexpr bool value = exact_fold<C>::value; };

// The exclusive prefix of `tile` (first f a[0] f ... f a[tile-1]), called by all lanes of one
// warp (`tile_prefix`); publishes the tile's aggregate first and its inclusive prefix last. The
// result is the same in every lane.
//
// In parts, for kernels that may find the prefix another way: `tile_publish` (any one thread)
// puts the aggregate (every tile, tile 0 too: a successor that finds no inclusive prefix yet
// waits for the aggregates of the tiles it passes), `tile_publish_inclusive` the inclusive
// prefix given the exclusive one (nothing where the aggregate absorbs: it serves as one), and
// `tile_lookback` (one warp) finds the exclusive prefix and publishes the inclusive one.
template <class V>
DS_DEV void tile_publish(Slot* status, u32 tiles, u32 tile, u32 epoch, V aggregate) {
  SlotIO<V>::put(Status{status, tiles}.agg(tile), aggregate, epoch);
}
template <class V, class F>
DS_DEV void tile_publish_inclusive(Slot* status, u32 tiles, u32 tile, u32 epoch, V aggregate,
                                   V prefix, const F& f) {
  if (!absorbing<V>::test(aggregate))
    SlotIO<V>::put(Status{status, tiles}.inc(tile), f(prefix, aggregate), epoch);
}

// The look-back of the quick form: one window of the 32 predecessors, read at once, from the
// nearest published inclusive prefix (an aggregate that absorbs, or `first` before tile 0)
// onwards, once all the aggregates after it are there (else the warp reads the window again);
// lane by lane, left to right. By the left fold's definition that is the value
// `tile_lookback_windows` finds, so the bits are the same; it resolves up to 32 tiles a round
// trip where the optimized form's windows resolve 128, in a fraction of the code: the windowed
// look-back's unrolled windows, trees and waits were about a third of the quick compile time of
// these kernels (NVRTC 13.0, the fast-compile level `mid`, docs/performance.md).
template <class V, class F>
DS_DEV V tile_lookback_quick(Slot* status, u32 tiles, u32 tile, u32 epoch, const V& aggregate,
                             V first, const F& f) {
  typedef SlotIO<V> IO;
  const Status st{status, tiles};
  const int lane = lane_id();
  const long long j = (long long)tile - WARP + lane;  // this lane's predecessor
  u32 rounds = 0, pause = 8;
  for (;;) {
    typename IO::P wi{}, wa{};
    if (j >= 0) {
      wi = IO::peek(st.inc(j));
      wa = IO::peek(st.agg(j));
    }
    if (IO::FENCED) fence_acq_rel();
    const bool agg = j >= 0 && IO::ready(wa, epoch);
    const bool pre = j == -1 || (j >= 0 && (IO::ready(wi, epoch) ||
                                             (absorbing<V>::any && agg && IO::absorbs(wa))));
    const u32 found = __ballot_sync(FULL, pre);
    const u32 aggs = __ballot_sync(FULL, agg);
    const int hi = found ? 31 - __clz(found) : WARP;
    const u32 after = hi >= WARP - 1 ? 0u : FULL << (hi + 1);
    if (found && (aggs & after) == after) {
      V mine = first;
      if (lane > hi) mine = IO::value(st.agg(j), wa);
      else if (lane == hi && j >= 0)
        mine = IO::ready(wi, epoch) ? IO::value(st.inc(j), wi) : IO::value(st.agg(j), wa);
      V acc = shfl_idx(mine, hi);
      for (int l = hi + 1; l < WARP; ++l) acc = f(acc, shfl_idx(mine, l));
      if (lane == 0) tile_publish_inclusive(status, tiles, tile, epoch, aggregate, acc, f);
      return acc;
    }
    spin(rounds, pause);
  }
}

// The look-back of the optimized form: the warp reads the slots of DEPTH windows of 32
// predecessors at once (one round trip), and takes the nearest published inclusive prefix among
// them. Exact operators that find none reduce the windows' aggregates (waiting for those not
// yet there) and read the DEPTH windows before them, as far back as needed; floats wait and
// read the same windows again, since their left fold needs the prefix first.
template <class V, class F>
DS_DEV V tile_lookback_windows(Slot* status, u32 tiles, u32 tile, u32 epoch, const V& aggregate,
                               V first, const F& f, V neutral) {
  typedef SlotIO<V> IO;
  // Windows read at once: 4 (8 did worse: more reads, each poll); 1 for values split over
  // several words, whose peeks hold two or four words a slot (H100, 2026-11-25:
  // i64 scan of 2^28 1.52-1.53 ms at 1, 1.54-1.55 at 2, 1.78 at 4, 2.17 at 8; reduce_by_key
  // 1.14-1.16 at 1 and 2, 1.41 at 4, 2.23 at 8).
  constexpr int DEPTH = IO::SPLIT ? 1 : 4;
  constexpr int SHORT = 8;  // up to this many aggregates to fold, one by one beats a tree
  constexpr bool WALK = exact_fold<V>::value;
  const int lane = lane_id();
  const Status st{status, tiles};
  if (tile == 0) {
    if (lane == 0) tile_publish_inclusive(status, tiles, 0, epoch, aggregate, first, f);
    return first;
  }
  u32 rounds = 0, pause = 64;
  long long top = tile;  // the windows read are the DEPTH * 32 tiles before `top`
  V later = neutral;     // (WALK) the combination of the aggregates of top ... tile - 1
  for (;;) {
    typename IO::P wi[DEPTH], wa[DEPTH];
#pragma unroll
    for (int d = 0; d < DEPTH; ++d) {
      const long long j = top - 32 * (d + 1) + lane;
      wi[d] = j >= 0 ? IO::peek(st.inc(j)) : typename IO::P{};
      wa[d] = j >= 0 ? IO::peek(st.agg(j)) : typename IO::P{};
    }
    if (IO::FENCED) fence_acq_rel();
    // The nearest window holding a published inclusive prefix (or an absorbing aggregate), and
    // its lanes that hold one.
    auto prefix_at = [&](int d) {
      return IO::ready(wi[d], epoch) ||
             (absorbing<V>::any && IO::ready(wa[d], epoch) && IO::absorbs(wa[d]));
    };
    int near = DEPTH;
    u32 found = 0;
#pragma unroll
    for (int d = DEPTH - 1; d >= 0; --d) {
      const long long j = top - 32 * (d + 1) + lane;
      const u32 b = __ballot_sync(FULL, j >= 0 && prefix_at(d));
      if (b) {
        near = d;
        found = b;
      }
    }
    const int hi = found ? 31 - __clz(found) : -1;
    // Lane's value in window d: the inclusive prefix at hi in the nearest window, aggregates
    // after it; nothing before it or before tile 0.
    auto value = [&](int d) -> V {
      const long long j = top - 32 * (d + 1) + lane;
      if (j < 0 || d > near || (d == near && lane < hi)) return neutral;
      if (d == near && lane == hi)
        return IO::ready(wi[d], epoch) ? IO::value(st.inc(j), wi[d]) : IO::value(st.agg(j), wa[d]);
      return IO::ready(wa[d], epoch) ? IO::value(st.agg(j), wa[d]) : wait_slot<V>(st.agg(j), epoch);
    };
    // The aggregates found, combined in order: by the left fold from the prefix found, one by
    // one (floats always; exact operators when few), else by trees, windows from the earliest
    // (exact operators: any grouping gives these bits).
    V acc = neutral;
    if (found && (!WALK || (near == 0 && hi >= WARP - SHORT))) {
#pragma unroll
      for (int d = DEPTH - 1; d >= 0; --d) {
        if (d > near) continue;
        const V mine = value(d);
        if (d == near) acc = shfl_idx(mine, hi);
        for (int l = d == near ? hi + 1 : 0; l < WARP; ++l) acc = f(acc, shfl_idx(mine, l));
      }
    } else if constexpr (WALK) {
#pragma unroll
      for (int d = DEPTH - 1; d >= 0; --d) {
        if (d > near) continue;
        acc = f(acc, shfl_idx(warp_reduce(value(d), f), 0));
      }
    }
    if constexpr (WALK) {
      if (found || top > 32 * DEPTH) later = f(acc, later);
      if (found) acc = later;
    }
    if (found) {
      if (lane == 0) tile_publish_inclusive(status, tiles, tile, epoch, aggregate, acc, f);
      return acc;
    }
    if (WALK && top > 32 * DEPTH) {
      top -= 32 * DEPTH;  // (WALK) the windows before these
    } else {
      // No inclusive prefix among the nearest DEPTH * 32 tiles yet (or, walking, tile 0's is
      // among them and not yet seen): they come, look again.
      spin(rounds, pause);
    }
  }
}

// The exclusive prefix of `tile`, its inclusive one published: by the windows, or in the quick
// form by one window read again until it resolves.
template <class V, class F>
DS_DEV V tile_lookback(Slot* status, u32 tiles, u32 tile, u32 epoch, const V& aggregate, V first,
                       const F& f, V neutral) {
  if constexpr (QUICK)
    return tile_lookback_quick(status, tiles, tile, epoch, aggregate, first, f);
  else
    return tile_lookback_windows(status, tiles, tile, epoch, aggregate, first, f, neutral);
}

// The exclusive prefix of `tile` for values whose combination is not exact (floats), found
// without a chain from tile to tile. Tiles form groups of 32. The prefix is *defined* as
//   E[g-1] f (a[32g] f ... f a[tile-1])     (tile = 32g + l, the part in brackets by the fixed
//                                            Kogge-Stone tree of warp_scan_incl over lanes 0..l-1)
// where G[g] is the whole group's combination by the same tree (lane 31) and E[g], the prefix
// through group g, the left fold first f G[0] f ... f G[g]. Called by all lanes of one warp
// after the tile published its aggregate: the warp reads the aggregates of the group's earlier
// tiles (published before they look back, so the wait is short), scans them, and looks back
// over groups, not tiles: among the 32 groups before its own it takes the nearest published
// E[h] (or, within the first 32 groups, `first`) and folds G[h+1] ... G[g-1] onto it one by one.
// Whatever h it finds, the left fold gives the same bits. The last tile of a group publishes
// G[g] as soon as it has scanned the aggregates and E[g] once it has its prefix, so the groups'
// prefixes advance up to 32 groups (1024 tiles) a round trip, where the tile-by-tile left fold
// of `tile_lookback` advanced 32 tiles. Slots: the aggregates as `tile_lookback`'s; G[g] in
// inclusive slot 2g, E[g] in 2g + 1. (Tried: the warp computing G[g-1] itself from that
// group's aggregates, so as not to wait for tile 32g - 1 to publish it: no faster on an H100,
// linear_recurrence_f32 at 2^28 1.686-1.704 ms against 1.660-1.688, 2026-11-26.)
template <class V, class F>
DS_DEV V tile_lookback_grouped(Slot* status, u32 tiles, u32 tile, u32 epoch, V aggregate,
                               V first, const F& f, V neutral) {
  typedef SlotIO<V> IO;
  typedef typename IO::P P;
  const int lane = lane_id();
  const Status st{status, tiles};
  const long long g = tile / WARP;
  const int l = (int)(tile % WARP);
  const long long j = g - WARP + lane;  // the group whose slots this lane reads
  // Every slot this warp needs, in one round trip.
  P pa = lane < l ? IO::peek(st.agg(g * WARP + lane)) : P{};
  P pe = !QUICK && g > 0 && j >= 0 ? IO::peek(st.inc(2 * j + 1)) : P{};
  P pg = !QUICK && g > 0 && j >= 0 ? IO::peek(st.inc(2 * j)) : P{};
  if (IO::FENCED) fence_acq_rel();
  // The group's aggregates through this tile's, scanned by the fixed tree.
  V mine = neutral;
  if (lane < l) {
    const Slot* s = st.agg(g * WARP + lane);
    mine = IO::ready(pa, epoch) ? IO::value(s, pa) : wait_slot<V>(s, epoch);
  } else if (lane == l) {
    mine = aggregate;
  }
  const V inc = warp_scan_incl(mine, f);
  const V within = shfl_idx(inc, l > 0 ? l - 1 : 0);  // a[32g] f ... f a[tile - 1] (l > 0)
  if (l == WARP - 1 && lane == WARP - 1) IO::put(st.inc(2 * g), inc, epoch);
  // E[g-1]: in the quick form by the chain over groups (lane 0 waits for it, published by
  // group g-1's last tile: by the definition the same bits), else from the nearest E[h].
  V before = first;
  if constexpr (QUICK) {
    if (g > 0) {
      if (lane == 0) before = wait_slot<V>(st.inc(2 * (g - 1) + 1), epoch);
      before = shfl_idx(before, 0);
    }
  } else if (g > 0) {
    u32 rounds = 0, pause = 64;
    for (;;) {
      const u32 b = __ballot_sync(FULL, j >= 0 && IO::ready(pe, epoch));
      if (b || g <= WARP) {
        // From E at lane hi, or from `first` before group 0 (lane WARP - g).
        const int hi = b ? 31 - __clz(b) : (int)(WARP - g) - 1;
        V gv = neutral, ev = neutral;
        if (j >= 0 && lane > hi) {
          const Slot* s = st.inc(2 * j);
          gv = IO::ready(pg, epoch) ? IO::value(s, pg) : wait_slot<V>(s, epoch);
        }
        if (b && lane == hi) ev = IO::value(st.inc(2 * j + 1), pe);
        V acc = b ? shfl_idx(ev, hi) : first;
        for (int k = hi + 1; k < WARP; ++k) acc = f(acc, shfl_idx(gv, k));
        before = acc;
        break;
      }
      spin(rounds, pause);
      pe = j >= 0 ? IO::peek(st.inc(2 * j + 1)) : P{};
      pg = j >= 0 ? IO::peek(st.inc(2 * j)) : P{};
      if (IO::FENCED) fence_acq_rel();
    }
  }
  const V group = shfl_idx(inc, WARP - 1);  // G[g] where l == 31
  if (l == WARP - 1 && lane == 0) IO::put(st.inc(2 * g + 1), f(before, group), epoch);
  return l > 0 ? f(before, within) : before;
}

template <class V, class F>
DS_DEV V tile_prefix(Slot* status, u32 tiles, u32 tile, u32 epoch, const V& aggregate, V first,
                     const F& f, V neutral) {
  if (lane_id() == 0) tile_publish(status, tiles, tile, epoch, aggregate);
  return tile_lookback(status, tiles, tile, epoch, aggregate, first, f, neutral);
}

}  // namespace ds
