// Deterministic single-pass look-back (a variant of Merrill & Garland's decoupled look-back
// in which every prefix is combined in one fixed order, whatever the timing).
//
// Tiles are grouped in windows of W consecutive tiles. Each tile publishes its aggregate as
// soon as it has it. The prefix before window w (PW[w]) is published by the first tile of
// window w as PW[w-1] f S[w-1], where S[w-1] reduces the aggregates of window w-1 by a fixed
// tree. Tile t of window w takes PW[w] f L[t], where L[t] reduces the aggregates of the tiles
// before it in its window by the same fixed tree (the missing ones are the neutral element,
// which combines exactly). So every prefix is one fixed expression of the tile aggregates: a
// float scan gives the same bits on every run, while each element is still read and written
// once. A tile only waits for tiles that took their number before it (numbers come from an
// atomic counter), so the wait always ends.
//
// Status slots are 32 bytes. The low 32 bits of each slot's first word are its tag,
// epoch * 2 + flag, where the epoch is the launch's number: slots from earlier launches are
// never mistaken for current ones, so the slots need no clearing between launches.
#pragma once
#include "warp/reduce.cuh"

namespace ds {

struct alignas(32) Slot {
  u64 w[4];
};

// A (value, segment-head flag) pair: the element of segmented scans.
template <class C> struct SegPair {
  C v;
  u32 f;
};

// How a value is written to and read from a slot. Values of up to 4 bytes share one 64-bit
// word with the tag (one access); larger ones are written before the tag, with a fence.
template <class V> struct SlotIO {
  static DS_DEV void put(Slot* s, V v, u32 epoch) {
    if constexpr (sizeof(V) <= 4) {
      u32 bits = 0;
      memcpy(&bits, &v, sizeof(V));
      *(volatile u64*)&s->w[0] = (u64)(epoch << 1) | ((u64)bits << 32);
    } else {
      static_assert(sizeof(V) <= 24, "slot values are at most 24 bytes");
      constexpr int N = (sizeof(V) + 3) / 4;
      u32 words[N];
#pragma unroll
      for (int k = 0; k < N; ++k) words[k] = 0;
      memcpy(words, &v, sizeof(V));
      volatile u32* d = (volatile u32*)&s->w[1];
#pragma unroll
      for (int k = 0; k < N; ++k) d[k] = words[k];
      __threadfence();
      *(volatile u32*)&s->w[0] = epoch << 1;
    }
  }
  static DS_DEV bool get(const Slot* s, u32 epoch, V& v) {
    if constexpr (sizeof(V) <= 4) {
      const u64 w = *(const volatile u64*)&s->w[0];
      if (((u32)w >> 1) != epoch) return false;
      const u32 bits = (u32)(w >> 32);
      memcpy(&v, &bits, sizeof(V));
      return true;
    } else {
      const u32 tag = *(const volatile u32*)&s->w[0];
      if ((tag >> 1) != epoch) return false;
      __threadfence();
      constexpr int N = (sizeof(V) + 3) / 4;
      u32 words[N];
      const volatile u32* src = (const volatile u32*)&s->w[1];
#pragma unroll
      for (int k = 0; k < N; ++k) words[k] = src[k];
      memcpy(&v, words, sizeof(V));
      return true;
    }
  }
};

// A pair of a 4-byte value and a flag fits one word: the flag rides in the tag.
template <class C> struct SlotIO4Pair {
  static DS_DEV void put(Slot* s, SegPair<C> v, u32 epoch) {
    u32 bits;
    memcpy(&bits, &v.v, 4);
    *(volatile u64*)&s->w[0] = (u64)((epoch << 1) | (v.f ? 1u : 0u)) | ((u64)bits << 32);
  }
  static DS_DEV bool get(const Slot* s, u32 epoch, SegPair<C>& v) {
    const u64 w = *(const volatile u64*)&s->w[0];
    if (((u32)w >> 1) != epoch) return false;
    const u32 bits = (u32)(w >> 32);
    memcpy(&v.v, &bits, 4);
    v.f = (u32)w & 1u;
    return true;
  }
};
template <> struct SlotIO<SegPair<f32>> : SlotIO4Pair<f32> {};
template <> struct SlotIO<SegPair<i32>> : SlotIO4Pair<i32> {};
template <> struct SlotIO<SegPair<u32>> : SlotIO4Pair<u32> {};

template <class V> DS_DEV V wait_slot(const Slot* s, u32 epoch) {
  V v;
  u32 pause = 8;
  while (!SlotIO<V>::get(s, epoch, v)) {
    __nanosleep(pause);
    if (pause < 256) pause *= 2;
  }
  return v;
}

// The prefix of everything before `tile` (combined with `first` in front), called by all
// lanes of one warp; publishes `aggregate` (the tile's own reduction) on the way. Status holds
// `tiles` tile slots, then one slot per window.
template <int W, class V, class F>
DS_DEV V tile_prefix(Slot* status, u32 tiles, u32 tile, u32 epoch, V aggregate, V first,
                     const F& f, V neutral) {
  static_assert(W % WARP == 0, "windows are whole warps of tiles");
  constexpr int PER = W / WARP;
  const int lane = lane_id();
  Slot* agg = status;
  Slot* win = status + tiles;
  if (lane == 0) SlotIO<V>::put(&agg[tile], aggregate, epoch);
  const u32 w = tile / W;
  const u32 k = tile % W;
  // L: the tiles before this one in its window, in order.
  V acc = neutral;
#pragma unroll
  for (int j = 0; j < PER; ++j) {
    const u32 idx = w * W + lane * PER + j;
    if (idx < tile) acc = f(acc, wait_slot<V>(&agg[idx], epoch));
  }
  const V local = warp_reduce(acc, f);
  V pw = first;
  if (w > 0 && k == 0) {
    // First tile of its window: PW[w] = PW[w-1] f S[w-1].
    V s = neutral;
#pragma unroll
    for (int j = 0; j < PER; ++j)
      s = f(s, wait_slot<V>(&agg[(w - 1) * W + lane * PER + j], epoch));
    s = warp_reduce(s, f);
    if (lane == 0) {
      const V prev = (w == 1) ? first : wait_slot<V>(&win[w - 1], epoch);
      pw = f(prev, s);
      SlotIO<V>::put(&win[w], pw, epoch);
    }
  } else if (w > 0) {
    if (lane == 0) pw = wait_slot<V>(&win[w], epoch);
  }
  const V p = f(pw, local);
  return shfl_idx(p, 0);
}

}  // namespace ds
