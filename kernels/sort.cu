// LSD radix sort with 8-bit digits in the Onesweep style (Adinets & Merrill, 2022):
//  1. ds_sort_hist reads the keys once and counts every digit of every pass; its last block
//     turns the counts into each pass's digit offsets and a plan: which passes run (a pass
//     whose digit is the same for all keys is skipped), where each reads and writes.
//  2. ds_sort_pass, once per digit: each tile ranks its keys by digit in shared memory
//     (warp-level match, stable), learns how many keys of each digit the tiles before it hold
//     through a decoupled look-back over per-tile digit counts, and scatters keys (and values)
//     to their places, grouped by digit so that the writes coalesce.
// The digits start at bit `lo` of the key: 0 for a sort; scatter partitions indices by their
// top 8 bits alone (a stable sort on them).
// Keys are moved as "sort bits" (sort_bits): a float's ordered bits (block/order.cuh), an
// integer's own bits; a signed key's sign bit is flipped only where its digit is taken, and a
// descending sort takes the digits complemented (sort_digit), so that loads and stores of
// integer keys are plain copies and a descending sort's are an ascending sort's.
#pragma once
#include "block/source.cuh"
#include "block/lookback.cuh"
#include "block/order.cuh"

namespace ds {

constexpr int RADIX = 256;
constexpr int MAX_PASSES = 8;

// The bits a sort moves for keys of type T: a float's ordered bits, an integer's own bits.
// Their order is the key order once FLIP (a signed key's sign bit) is flipped, which
// sort_digit does where it takes a digit. (Flipped at the loads and stores instead, the flip
// on the first pass's side of the choice between source and buffer kept both paths' registers
// live: ptxas spilled 52-120 bytes a thread of i64 keys at 18 a thread, 80 registers, where
// u64 keys spill nothing.)
template <class T> struct sort_bits {
  typedef key_bits<T> KB;
  typedef typename KB::U U;
  static constexpr U FLIP = is_signed_key<T>::value ? KB::SIGN : (U)0;
  static DS_DEV U in(T x) {
    if constexpr (is_float_key<T>::value) return KB::order(KB::raw(x));
    else return KB::raw(x);
  }
  // The key's own bits.
  static DS_DEV U out(U b) {
    if constexpr (is_float_key<T>::value) return KB::unorder(b);
    else return b;
  }
  // Sort bits whose every digit is 255 (for a descending sort 0): they sort after every key.
  static DS_DEV U last(bool desc) { return (desc ? (U)0 : (U)~(U)0) ^ FLIP; }
};

// The digit at bit `shift` of ordered bits o, for a sort of direction DESC: complemented for a
// descending sort (the digit of the complemented key). Complementing the digits, not the
// keys, leaves a descending pass the ascending one's single load of its input (an ascending
// pass reads its source or a buffer through one pointer; a flip on one side of that choice
// measured 4.5% slower).
template <bool DESC, class U> DS_DEV u32 ordered_digit(U o, u32 shift) {
  return ((u32)(o >> shift) & 255u) ^ (DESC ? 255u : 0u);
}

// The digit at bit `shift` of the sort bits b of a key of type T: its ordered bits' digit.
template <bool DESC, class T, class U> DS_DEV u32 sort_digit(U b, u32 shift) {
  return ordered_digit<DESC>((U)(b ^ sort_bits<T>::FLIP), shift);
}

// Flags of a pass in the plan.
enum : u32 {
  PASS_RUN = 1,         // the pass moves keys (else its digit is the same for all of them)
  PASS_FROM_INPUT = 2,  // reads the caller's keys (and values), else buffer A or B
  PASS_FROM_A = 4,
  PASS_TO_A = 8,        // writes buffer A, else B
  PASS_LAST = 16,       // writes the final keys (turns sort bits back into keys)
};

struct SortPlan {
  u64 offsets[MAX_PASSES][RADIX];  // where each digit's keys start, per pass
  u32 mode[MAX_PASSES];
  u32 count;                       // passes that run
};

// Exclusive prefix sum over the first 256 threads' values (all threads must call).
DS_DEV u64 block_excl_sum_256(u64 v, u64* s_warp /* 8 */) {
  const int lane = lane_id(), warp = warp_id();
  u64 inc = v;
  if (threadIdx.x < RADIX) {
#pragma unroll
    for (int d = 1; d < WARP; d *= 2) {
      const u64 o = __shfl_up_sync(FULL, inc, d);
      if (lane >= d) inc += o;
    }
    if (lane == WARP - 1) s_warp[warp] = inc;
  }
  __syncthreads();
  u64 before = 0;
  if (threadIdx.x < RADIX)
    for (int w = 0; w < warp; ++w) before += s_warp[w];
  __syncthreads();
  return before + inc - v;
}

// Ranking a tile by one digit (ds_sort_pass and ds_sort_tile). Each warp holds its stretch of
// the tile's keys in order (j, then lane); s_count[warp][digit] counts them, zeroed before.
template <bool DESC, class T, int ITEMS, class U>
DS_DEV void count_digits(u32 (*s_count)[RADIX], const U (&key)[ITEMS], u32 shift) {
  const int warp = warp_id();
#pragma unroll
  for (int j = 0; j < ITEMS; ++j)
    atomicAdd(&s_count[warp][sort_digit<DESC, T>(key[j], shift)], 1u);
}

// For digit d (one thread each): each warp's count of d becomes the count of d in the warps
// before it, and `total` (zero before) the tile's count of d. (Accumulated in the caller's
// variable: returned instead, ptxas spilled 88 bytes a thread of a sort pass of i64 keys with
// lazy positions at 80 registers.)
template <int NW> DS_DEV void warp_digit_starts(u32 (*s_count)[RADIX], u32 d, u32& total) {
#pragma unroll
  for (int w = 0; w < NW; ++w) {
    const u32 c = s_count[w][d];
    s_count[w][d] = total;
    total += c;
  }
}

// With s_count[warp][digit] the tile place where the warp's keys of that digit start: each key
// (and value) to its place in s_keys (s_vals), stable (keys in order j, then lane, per warp).
// The lanes of a warp with the same digit find each other through a mask in s_match (zero
// before and after) that each ORs its bit into, and the highest of them takes their places
// with one atomic; the key goes to its place at once (holding the places until after the loop
// spilled registers).
template <bool DESC, class T, int VMODE, int ITEMS, class U, class V>
DS_DEV void rank_keys(u32 (*s_count)[RADIX], u32 (*s_match)[RADIX], const U (&key)[ITEMS],
                      const V (&val)[ITEMS], u32 shift, U* s_keys, V* s_vals) {
  const int lane = lane_id(), warp = warp_id();
  const u32 below = (1u << lane) - 1u;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const u32 d = sort_digit<DESC, T>(key[j], shift);
    atomicOr(&s_match[warp][d], 1u << lane);
    __syncwarp();
    const u32 peers = s_match[warp][d];
    const int leader = 31 - __clz(peers);
    u32 first = 0;
    if (lane == leader) first = atomicAdd(&s_count[warp][d], (u32)__popc(peers));
    first = __shfl_sync(FULL, first, leader);
    const u32 pos = first + __popc(peers & below);
    s_keys[pos] = key[j];
    if constexpr (VMODE != 0) s_vals[pos] = val[j];
    __syncwarp();
    if (lane == leader) s_match[warp][d] = 0;
    __syncwarp();
  }
}

}  // namespace ds

// Counts digits of all passes (pass p's digit is bits lo + 8p up of the ordered key); the last
// block writes the plan. With CHECK (sorting indices for scatter_combine and scatter, check_len
// > 0) a key >= check_len records its position in *err (note_bad_index); without, the kernel
// has no code for it (the rarely taken note kept registers that made 2-byte keys spill). The
// keys are a source.
template <class L, class FL, class S>
__global__ void __launch_bounds__(L::block) ds_sort_hist(const S keys, const SortHistParams p) {
  constexpr bool DESC = FL::desc, CHECK = FL::check;
  constexpr int BLOCK = L::block;
  using namespace ds;
  typedef typename S::T T;
  typedef key_bits<T> KB;
  typedef typename KB::U U;
  constexpr int VEC = 16 / sizeof(T);
  constexpr int KP = sizeof(T);  // passes of a whole key; `passes` may be fewer
  constexpr int AHEAD = 4;       // 16-byte loads a thread has in flight
  const u64 n = p.n;
  const u32 lo = p.lo, passes = p.passes;
  u64* hist = (u64*)p.hist;
  u32* done = (u32*)p.done;
  SortPlan* plan = (SortPlan*)p.plan;
  // Counters private to each group of two warps (fewer collisions), summed at the end.
  constexpr int GROUPS = BLOCK / 64;
  __shared__ u32 s_g[GROUPS][KP][RADIX];
  for (u32 k = threadIdx.x; k < GROUPS * KP * RADIX; k += BLOCK) (&s_g[0][0][0])[k] = 0;
  __syncthreads();
  const int group = threadIdx.x / 64;
  auto count = [&](T x, u64 i) {
    const U b = KB::order(KB::raw(x));
    if constexpr (CHECK)
      if ((u64)b >= p.check_len) note_bad_index((u64*)p.err, nullptr, i);
    const U d = b >> lo;
#pragma unroll
    for (u32 q = 0; q < KP; ++q)
      if (q < passes) atomicAdd(&s_g[group][q][ordered_digit<DESC>(d, 8 * q)], 1u);
  };
  // Whole vectors (16 bytes where the keys allow), AHEAD of them loaded before any is
  // counted; then the rest one by one.
  const u64 nv = n / VEC;
  const u64 stride = (u64)gridDim.x * BLOCK;
  u64 v = (u64)blockIdx.x * BLOCK + threadIdx.x;
  for (; v + (AHEAD - 1) * stride < nv; v += AHEAD * stride) {
    T x[AHEAD][VEC];
#pragma unroll
    for (int a = 0; a < AHEAD; ++a) keys.template vec<VEC>((v + a * stride) * VEC, x[a]);
#pragma unroll
    for (int a = 0; a < AHEAD; ++a)
#pragma unroll
      for (int j = 0; j < VEC; ++j) count(x[a][j], (v + a * stride) * VEC + j);
  }
  for (; v < nv; v += stride) {
    T x[VEC];
    keys.template vec<VEC>(v * VEC, x);
#pragma unroll
    for (int j = 0; j < VEC; ++j) count(x[j], v * VEC + j);
  }
  for (u64 i = nv * VEC + (u64)blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride)
    count(keys.at(i), i);
  __syncthreads();
  for (u32 k = threadIdx.x; k < passes * RADIX; k += BLOCK) {
    u32 c = 0;
    for (int g = 0; g < GROUPS; ++g) c += (&s_g[g][0][0])[k];
    if (c) atomicAdd(&hist[k], (u64)c);
  }
  // Every thread's counts are visible (fence) and done (barrier) before the block is counted:
  // without the barrier a block could be counted while its other warps still add, and the
  // last block would build the plan from a short histogram.
  __threadfence();
  __syncthreads();
  __shared__ bool s_last;
  if (threadIdx.x == 0) s_last = atomicAdd(done, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!s_last) return;
  __threadfence();
  __shared__ u64 s_warp[8];
  __shared__ u32 s_trivial[MAX_PASSES];
  if (threadIdx.x < MAX_PASSES) s_trivial[threadIdx.x] = 0;
  __syncthreads();
  for (u32 q = 0; q < passes; ++q) {
    const u64 c = threadIdx.x < RADIX ? ((volatile u64*)hist)[q * RADIX + threadIdx.x] : 0;
    const u64 off = block_excl_sum_256(c, s_warp);
    if (threadIdx.x < RADIX) {
      plan->offsets[q][threadIdx.x] = off;
      if (c == n) s_trivial[q] = 1;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    u32 runs = 0;
    for (u32 q = 0; q < passes; ++q) runs += s_trivial[q] ? 0 : 1;
    u32 k = 0;
    bool prev_a = false;
    for (u32 q = 0; q < MAX_PASSES; ++q) {
      u32 m = 0;
      if (q < passes && !s_trivial[q]) {
        const bool to_a = ((runs - 1 - k) % 2) == 0;
        m = PASS_RUN | (to_a ? PASS_TO_A : 0u);
        if (k == 0) m |= PASS_FROM_INPUT;
        else if (prev_a) m |= PASS_FROM_A;
        if (k + 1 == runs) m |= PASS_LAST;
        prev_a = to_a;
        ++k;
      }
      plan->mode[q] = m;
    }
    plan->count = runs;
    *done = 0;
  }
}

// One digit pass. VMODE: 0 keys only, 1 with values. The first pass that runs reads the keys
// and values from their sources (kin, vin; a lazy one evaluated here: argsort's values are
// the positions), later ones from buffer A or B. Dynamic shared memory: sort_pass_smem.
//
// A tile counts its digits per warp first (shared-memory atomics), publishes the tile's counts
// for the tiles after it, and turns the counts into each (warp, digit)'s start within the tile.
// Ranking then gives every key its final place directly: per key, the lanes of the warp with
// the same digit find each other through a shared mask each ORs its bit into, and the highest
// of them takes their places with one atomic. The look-back for the counts of the tiles
// before comes last, when they are mostly published.
template <class L, class FL, class KS, class VS>
__global__ void __launch_bounds__(L::block, L::minb)
    ds_sort_pass(const KS kin, const VS vin, const SortPassParams p) {
  constexpr int VMODE = FL::values, BLOCK = L::block, ITEMS = L::items;
  constexpr bool DESC = FL::desc;
  using namespace ds;
  typedef typename KS::T T;
  typedef typename VS::T V;
  typedef key_bits<T> KB;
  typedef sort_bits<T> SB;
  typedef typename SB::U U;
  constexpr int NW = BLOCK / WARP;
  constexpr int TILE = BLOCK * ITEMS;
  static_assert(BLOCK >= RADIX, "one thread a digit");
  extern __shared__ __align__(16) u8 ds_dyn[];
  u32(*s_count)[RADIX] = reinterpret_cast<u32(*)[RADIX]>(ds_dyn);
  u32(*s_match)[RADIX] = reinterpret_cast<u32(*)[RADIX]>(ds_dyn + NW * RADIX * 4);
  u64* s_glob = reinterpret_cast<u64*>(ds_dyn + 2 * NW * RADIX * 4);
  u64* s_warp = s_glob + RADIX;
  U* s_keys = reinterpret_cast<U*>(s_warp + 8);
  V* s_vals = reinterpret_cast<V*>(s_keys + TILE);
  const u64 n = p.n;
  const u32 pass = p.pass, epoch = p.epoch;
  const SortPlan* __restrict__ plan = (const SortPlan*)p.plan;
  u64* status = (u64*)p.status;
  T* ka = (T*)p.ka;
  T* kb = (T*)p.kb;
  V* va = (V*)p.va;
  V* vb = (V*)p.vb;

  const u32 tile = next_tile<BLOCK>((u32*)p.counter, p.base);
  const u32 mode = plan->mode[pass];
  if (!(mode & PASS_RUN)) {
    // No pass runs at all (every digit the same for every key): the first launch copies the
    // keys and values through, so the host need not wait for the plan to know.
    if (pass == 0 && plan->count == 0) {
      const u64 tb = (u64)tile * TILE;
      for (u32 k = threadIdx.x; k < (u32)TILE; k += BLOCK) {
        const u64 i = tb + k;
        if (i >= n) break;
        ka[i] = kin.at(i);
        if constexpr (VMODE == 1) va[i] = vin.at(i);
      }
    }
    return;
  }
  const bool from_input = mode & PASS_FROM_INPUT;
  const T* ksrc = (mode & PASS_FROM_A) ? ka : kb;
  T* kdst = (mode & PASS_TO_A) ? ka : kb;
  const V* vsrc = (mode & PASS_FROM_A) ? va : vb;
  V* vdst = (mode & PASS_TO_A) ? va : vb;
  const u32 shift = p.lo + 8 * pass;
  const int lane = lane_id(), warp = warp_id();
  auto digit = [&](U b) { return sort_digit<DESC, T>(b, shift); };

  for (u32 k = threadIdx.x; k < 2 * NW * RADIX; k += BLOCK) (&s_count[0][0])[k] = 0;

  // Keys in order (j, then lane) within each warp's stretch; missing ones have digit 255 (or
  // for a descending sort 0: `SB::last`), and they come after every real key of the tile.
  const u64 tb = (u64)tile * TILE;
  const u64 seg = tb + (u64)warp * WARP * ITEMS;
  U key[ITEMS];
  V val[ITEMS];
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const u64 i = seg + (u64)j * WARP + lane;
    const bool valid = i < n;
    U b = SB::last(DESC);
    if (valid) b = from_input ? SB::in(kin.at(i)) : KB::raw(ksrc[i]);
    key[j] = b;
    if constexpr (VMODE == 1) {
      val[j] = valid ? (from_input ? vin.at(i) : vsrc[i]) : V{};
    }
  }
  __syncthreads();
  count_digits<DESC, T>(s_count, key, shift);
  __syncthreads();

  // Per digit: the tile's count, published for the tiles after (status words: epoch << 42 |
  // flag << 40 | count; flag 1 = this tile's count, 2 = count of this and all tiles before;
  // the epoch is the launch's, from 1 up, so words of earlier launches and zeroed ones never
  // match), and each warp's start within the tile's keys.
  const u64 end = tb + TILE;
  const u32 invalid = end > n ? (u32)(end - n) : 0u;
  const u64 tag = (u64)epoch << 42;
  u64* st = status + (u64)tile * RADIX;
  u32 total = 0;
  if (threadIdx.x < RADIX) {
    const u32 d = threadIdx.x;
    warp_digit_starts<NW>(s_count, d, total);
    const u64 mine = total - (d == 255 ? invalid : 0u);
    ds::st_relaxed(&st[d], tag | ((tile == 0 ? 2ull : 1ull) << 40) | mine);
  }
  const u32 local = (u32)block_excl_sum_256(total, s_warp);
  if (threadIdx.x < RADIX) {
#pragma unroll
    for (int w = 0; w < NW; ++w) s_count[w][threadIdx.x] += local;
  }
  __syncthreads();

  // Rank: each key's place in the tile.
  rank_keys<DESC, T, VMODE>(s_count, s_match, key, val, shift, s_keys, s_vals);

  // Look back for the counts of the tiles before: where this tile's keys of each digit go.
  if (threadIdx.x < RADIX) {
    const u32 d = threadIdx.x;
    u64 excl = 0;
    if (tile > 0) {
      // Walk back LOOK tiles at a time: their words are read together, then taken in order
      // (waiting for any not yet written) until one carries the count of all tiles before.
      constexpr int LOOK = 8;
      bool done = false;
      for (long long k = (long long)tile - 1; !done; k -= LOOK) {
        u64 w[LOOK];
#pragma unroll
        for (int q = 0; q < LOOK; ++q)
          w[q] = k - q >= 0 ? ds::ld_relaxed(status + (u64)(k - q) * RADIX + d) : 0;
#pragma unroll
        for (int q = 0; q < LOOK; ++q) {
          if (done) break;
          const u64* word = status + (u64)(k - q) * RADIX + d;
          u32 pause = 8, rounds = 0;
          while ((w[q] >> 42) != epoch) {
            ds::spin(rounds, pause);
            w[q] = ds::ld_relaxed(word);
          }
          excl += w[q] & ((1ull << 40) - 1);
          done = ((w[q] >> 40) & 3u) == 2u;
        }
      }
      ds::st_relaxed(&st[d], tag | (2ull << 40) | (excl + total - (d == 255 ? invalid : 0u)));
    }
    // The destination of tile place i (of digit d) is s_glob[d] + i (wrapping arithmetic).
    s_glob[d] = plan->offsets[pass][d] + excl - local;
  }
  __syncthreads();
  const u32 valid = (u32)min_u<u64>(TILE, n - tb);
  const bool last = mode & PASS_LAST;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const u32 i = threadIdx.x + j * BLOCK;
    if (i < valid) {
      const U b = s_keys[i];
      const u64 dst = s_glob[digit(b)] + i;
      kdst[dst] = KB::from_raw(last ? SB::out(b) : b);
      if constexpr (VMODE != 0) vdst[dst] = s_vals[i];
    }
  }
}

namespace ds {

// Where a one-block sort (sort_tile_block) keeps the tile's keys (sort bits, U) and values
// in its dynamic shared memory: after the digit counts and masks (2 x NW x RADIX words) and 8
// words of warp sums (src/backend/cuda/sort.rs, `tile_smem`).
template <int BLOCK> DS_DEV u8* tile_keys_smem(u8* dyn) {
  return dyn + 2 * (BLOCK / WARP) * RADIX * 4 + 8 * 8;
}
template <int BLOCK, int ITEMS, class U> DS_DEV u8* tile_values_smem(u8* dyn) {
  return tile_keys_smem<BLOCK>(dyn) + BLOCK * ITEMS * sizeof(U);
}

// A whole sort in one block of the n <= BLOCK * ITEMS keys of `kin` (and values of `vin`,
// VMODE 1) on the digits from bit lo, `passes` of them: no histogram, plan or look-back. The
// tile stays in registers and shared memory (`dyn`) across its passes: each ranks it by one
// digit as ds_sort_pass does, into shared memory, and reads it back in the new order for the
// next. A pass whose digit is the same for every key moves nothing and is skipped (as the plan
// skips it). Leaves the sorted tile in key[j] (sort bits) and val[j], place
// warp * WARP * ITEMS + j * WARP + lane (places from n on hold no key), and returns, in every
// thread, ~i of the first key >= check_len where CHECK (note_bad_index's word), else zero. Ends
// with a barrier.
template <class KS, class VS, int VMODE, bool DESC, int BLOCK, int ITEMS, bool CHECK>
DS_DEV u64 sort_tile_block(const KS& kin, const VS& vin, u32 n, u32 lo, u32 passes,
                           u64 check_len, u8* dyn,
                           typename key_bits<typename KS::T>::U (&key)[ITEMS],
                           typename VS::T (&val)[ITEMS]) {
  typedef typename KS::T T;
  typedef sort_bits<T> SB;
  typedef typename SB::U U;
  typedef typename VS::T V;
  constexpr int NW = BLOCK / WARP;
  static_assert(BLOCK >= RADIX, "one thread a digit");
  u32(*s_count)[RADIX] = reinterpret_cast<u32(*)[RADIX]>(dyn);
  u32(*s_match)[RADIX] = reinterpret_cast<u32(*)[RADIX]>(dyn + NW * RADIX * 4);
  u64* s_warp = reinterpret_cast<u64*>(dyn + 2 * NW * RADIX * 4);
  U* s_keys = reinterpret_cast<U*>(tile_keys_smem<BLOCK>(dyn));
  V* s_vals = reinterpret_cast<V*>(tile_values_smem<BLOCK, ITEMS, U>(dyn));
  __shared__ u64 s_err;
  const u32 invalid = (u32)(BLOCK * ITEMS) - n;
  const int lane = lane_id(), warp = warp_id();
  const u32 seg = (u32)warp * WARP * ITEMS;
  if (threadIdx.x == 0) s_err = 0;
  for (u32 k = threadIdx.x; k < 2 * NW * RADIX; k += BLOCK) (&s_count[0][0])[k] = 0;
  // The error word is zero before any thread's loads may note a key in it (racecheck found
  // the store racing with the notes of other warps).
  __syncthreads();
  // Missing keys have digit 255 in every pass (or for a descending sort 0: `SB::last`), so
  // they stay after every real key.
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const u32 i = seg + j * WARP + lane;
    U b = SB::last(DESC);
    if (i < n) {
      b = SB::in(kin.at(i));
      if constexpr (CHECK)
        if ((u64)b >= check_len) atomicMax(&s_err, ~(u64)i);
    }
    key[j] = b;
    if constexpr (VMODE == 1) val[j] = i < n ? vin.at(i) : V{};
  }
  __syncthreads();
  for (u32 q = 0; q < passes; ++q) {
    const u32 shift = lo + 8 * q;
    count_digits<DESC, T>(s_count, key, shift);
    __syncthreads();
    u32 total = 0;
    bool same = false;
    if (threadIdx.x < RADIX) {
      const u32 d = threadIdx.x;
      warp_digit_starts<NW>(s_count, d, total);
      same = total - (d == 255 ? invalid : 0u) == n;
    }
    if (!__syncthreads_or(same)) {
      const u32 local = (u32)block_excl_sum_256(total, s_warp);
      if (threadIdx.x < RADIX) {
#pragma unroll
        for (int w = 0; w < NW; ++w) s_count[w][threadIdx.x] += local;
      }
      __syncthreads();
      rank_keys<DESC, T, VMODE>(s_count, s_match, key, val, shift, s_keys, s_vals);
      __syncthreads();
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        key[j] = s_keys[seg + j * WARP + lane];
        if constexpr (VMODE != 0) val[j] = s_vals[seg + j * WARP + lane];
      }
    }
    // The counts start from zero again (every read of them is behind a barrier above).
    for (u32 k = threadIdx.x; k < NW * RADIX; k += BLOCK) (&s_count[0][0])[k] = 0;
    __syncthreads();
  }
  return s_err;
}

// The tile sort_tile_block left in key and val (sort bits), in order: element i (below n)
// to k[i] and, where VMODE != 0, v[i].
template <class T, int VMODE, int ITEMS, class U, class V>
DS_DEV void store_sorted_tile(const U (&key)[ITEMS], const V (&val)[ITEMS], u32 n, T* k, V* v) {
  const u32 seg = (u32)warp_id() * WARP * ITEMS;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const u32 i = seg + j * WARP + lane_id();
    if (i < n) {
      k[i] = key_bits<T>::from_raw(sort_bits<T>::out(key[j]));
      if constexpr (VMODE != 0) v[i] = val[j];
    }
  }
}

}  // namespace ds

// A whole sort in one block, for keys that fit one tile of the passes (0 < n <= BLOCK *
// ITEMS; sort_tile_block), one launch. With CHECK (sorting indices for scatter and
// scatter_combine, check_len > 0), *err is ~i of the first key >= check_len (note_bad_index's
// word), else zero: the kernel writes the word either way, so the host need not clear it.
// Dynamic shared memory: the digit counts and masks, then the tile's keys and values
// (src/backend/cuda/sort.rs, `tile_smem`).
template <class L, class FL, class KS, class VS>
__global__ void __launch_bounds__(L::block, L::minb)
    ds_sort_tile(const KS kin, const VS vin, const SortTileParams p) {
  constexpr int VMODE = FL::values, BLOCK = L::block, ITEMS = L::items;
  constexpr bool DESC = FL::desc, CHECK = FL::check;
  using namespace ds;
  typedef typename KS::T T;
  typedef typename VS::T V;
  typedef key_bits<T> KB;
  typedef typename KB::U U;
  extern __shared__ __align__(16) u8 ds_dyn[];
  const u32 n = (u32)p.n;
  U key[ITEMS];
  V val[ITEMS];
  const u64 err = sort_tile_block<KS, VS, VMODE, DESC, BLOCK, ITEMS, CHECK>(
      kin, vin, n, p.lo, p.passes, p.check_len, ds_dyn, key, val);
  if (threadIdx.x == 0) *(u64*)p.err = err;
  store_sorted_tile<T, VMODE>(key, val, n, (T*)p.ka, (V*)p.va);
}
