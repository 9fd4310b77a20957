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

// How a value is written to and read from a slot. Values of up to 4 bytes share one 64-bit
// word with the tag (PACKED: one access); larger ones are written before the tag (release)
// and read after it, with a fence between. Readers `peek` at the first word of several slots
// at once, then take the values of the ready ones.
template <class V> struct SlotIO {
  static constexpr bool PACKED = sizeof(V) <= 4;
  static DS_DEV void put(Slot* s, V v, u32 epoch) {
    if constexpr (PACKED) {
      u32 bits = 0;
      memcpy(&bits, &v, sizeof(V));
      st_relaxed(&s->w[0], (u64)(epoch << 1) | ((u64)bits << 32));
    } else {
      static_assert(sizeof(V) <= 24, "slot values are at most 24 bytes");
      constexpr int N = (sizeof(V) + 3) / 4;
      u32 words[N];
#pragma unroll
      for (int k = 0; k < N; ++k) words[k] = 0;
      memcpy(words, &v, sizeof(V));
      u32* d = (u32*)&s->w[1];
#pragma unroll
      for (int k = 0; k < N; ++k) st_relaxed32(d + k, words[k]);
      st_release((u32*)&s->w[0], epoch << 1);
    }
  }
  static DS_DEV u64 peek(const Slot* s) { return ld_relaxed(&s->w[0]); }
  static DS_DEV bool ready(u64 w, u32 epoch) { return ((u32)w >> 1) == epoch; }
  // The value of a ready slot whose first word was `w` (unpacked: after a fence).
  static DS_DEV V value(const Slot* s, u64 w) {
    V v;
    if constexpr (PACKED) {
      const u32 bits = (u32)(w >> 32);
      memcpy(&v, &bits, sizeof(V));
    } else {
      constexpr int N = (sizeof(V) + 3) / 4;
      u32 words[N];
      const u32* src = (const u32*)&s->w[1];
#pragma unroll
      for (int k = 0; k < N; ++k) words[k] = ld_relaxed32(src + k);
      memcpy(&v, words, sizeof(V));
    }
    return v;
  }
};

// A pair of a 4-byte value and a flag fits one word: the flag rides in the tag.
template <class C> struct SlotIO4Pair {
  static constexpr bool PACKED = true;
  static DS_DEV void put(Slot* s, SegPair<C> v, u32 epoch) {
    u32 bits;
    memcpy(&bits, &v.v, 4);
    st_relaxed(&s->w[0], (u64)((epoch << 1) | (v.f ? 1u : 0u)) | ((u64)bits << 32));
  }
  static DS_DEV u64 peek(const Slot* s) { return ld_relaxed(&s->w[0]); }
  static DS_DEV bool ready(u64 w, u32 epoch) { return ((u32)w >> 1) == epoch; }
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

template <class V> DS_DEV V wait_slot(const Slot* s, u32 epoch) {
  u32 pause = 8;
  for (;;) {
    const u64 w = SlotIO<V>::peek(s);
    if (SlotIO<V>::ready(w, epoch)) {
      if (!SlotIO<V>::PACKED) fence_acq_rel();
      return SlotIO<V>::value(s, w);
    }
    __nanosleep(pause);
    if (pause < 256) pause *= 2;
  }
}

// The prefix of everything before `tile` (combined with `first` in front), called by all
// lanes of one warp; publishes `aggregate` (the tile's own reduction) on the way. Status holds
// `tiles` tile slots, then one slot per window. Each lane first reads all its slots at once
// and only then waits for those not yet written, so a tile waits about one memory latency,
// not one per slot.
template <int W, class V, class F>
DS_DEV V tile_prefix(Slot* status, u32 tiles, u32 tile, u32 epoch, V aggregate, V first,
                     const F& f, V neutral) {
  static_assert(W % WARP == 0, "windows are whole warps of tiles");
  typedef SlotIO<V> IO;
  constexpr int PER = W / WARP;
  const int lane = lane_id();
  Slot* agg = status;
  Slot* win = status + tiles;
  if (lane == 0) IO::put(&agg[tile], aggregate, epoch);
  const u32 w = tile / W;
  const u32 k = tile % W;
  // A window's first tile combines the whole previous window (S[w-1]) into PW[w] = PW[w-1] f
  // S[w-1]; any other tile takes PW[w] f L, L combining the tiles before it in its window.
  const bool leader = w > 0 && k == 0;
  const u32 base = (leader ? (w - 1) * W : w * W) + lane * PER;
  const Slot* pw_slot = leader ? &win[w - 1] : &win[w];
  const bool need_pw = lane == 0 && (leader ? w > 1 : w > 0);
  u64 word[PER];
#pragma unroll
  for (int j = 0; j < PER; ++j) word[j] = (leader || base + j < tile) ? IO::peek(&agg[base + j]) : 0;
  const u64 pw_word = need_pw ? IO::peek(pw_slot) : 0;
  if (!IO::PACKED) fence_acq_rel();
  V acc = neutral;
#pragma unroll
  for (int j = 0; j < PER; ++j) {
    if (leader || base + j < tile) {
      const Slot* s = &agg[base + j];
      acc = f(acc, IO::ready(word[j], epoch) ? IO::value(s, word[j]) : wait_slot<V>(s, epoch));
    }
  }
  const V red = warp_reduce(acc, f);
  V p = neutral;
  if (lane == 0) {
    V pw = first;
    if (need_pw) pw = IO::ready(pw_word, epoch) ? IO::value(pw_slot, pw_word) : wait_slot<V>(pw_slot, epoch);
    p = f(pw, red);
    if (leader) IO::put(&win[w], p, epoch);
  }
  return shfl_idx(p, 0);
}

}  // namespace ds
