// Histogram of equal-width bins over [lo, hi): per-block counters in shared memory, merged
// into the stream's 64-bit tally (zero between launches), which the last block to finish moves
// to the counts and zeroes again, so the counts need no fill first and a call is one launch
// (a grid of one block writes its counters straight to the counts). For more bins than fit
// shared memory, straight to the counts in global memory (filled with zeros first).
// Bins: integers exactly, (x - lo) * bins / (hi - lo) without overflow; floats
// floor((x - lo) / (hi - lo) * bins) in f32 (f64 for f64), each operation rounded, clamped to
// bins - 1. Values outside [lo, hi) and NaN are not counted.
#pragma once
#include "block/source.cuh"

namespace ds {

// floor(a * b / d) for a < d, exactly (128-bit product, then long division).
DS_DEV u64 mul_div(u64 a, u64 b, u64 d) {
  u64 hi = __umul64hi(a, b);
  const u64 lo = a * b;
  if (hi == 0) return lo / d;
  u64 q = 0;
  for (int i = 63; i >= 0; --i) {
    const u64 carry = hi >> 63;
    hi = (hi << 1) | ((lo >> i) & 1ull);
    q <<= 1;
    if (carry || hi >= d) {
      hi -= d;
      q |= 1;
    }
  }
  return q;
}

// The bin of x, or bins (not counted), for bins over [lo, hi) given as bits.
template <class T, bool WIDE> struct Binner {
  typedef compute_t<T> C;
  // Integers of up to 2 bytes: bins = q * range + r, so (x - lo) * bins / range is
  // diff * q + diff * r / range, with diff * r under 2^32: a 32-bit division an element
  // instead of a 64-bit one (a call, around which ptxas spilled in the loop of u8 values).
  static constexpr bool NARROW = !traits<C>::is_float && sizeof(T) <= 2;
  u64 bins;
  C lo, hi;
  u64 range, q;
  u32 r;
  DS_DEV Binner(u64 bins_, u64 lo_bits, u64 hi_bits)
      : bins(bins_), lo(from_bits<C>(lo_bits)), hi(from_bits<C>(hi_bits)), range(0), q(0), r(0) {
    if constexpr (!traits<C>::is_float) {
      typedef typename traits<C>::U U;
      range = (u64)(U)((U)hi - (U)lo);
      if (NARROW && range != 0) {
        q = bins / range;
        r = (u32)(bins % range);
      }
    }
  }
  DS_DEV u64 operator()(T x) const {
    const C v = to_c<T>(x);
    if (!(v >= lo && v < hi)) return bins;
    if constexpr (traits<C>::is_float) {
      const C t = floor_((v - lo) / (hi - lo) * (C)bins);
      const u64 b = cast<u64, C>(t);
      return b < bins ? b : bins - 1;
    } else {
      typedef typename traits<C>::U U;
      const u64 diff = (u64)(U)((U)v - (U)lo);
      if constexpr (NARROW) {
        return diff * q + (u32)diff * r / (u32)range;
      } else if constexpr (WIDE) {
        return mul_div(diff, bins, range);
      } else {
        return diff * bins / range;
      }
    }
  }
};

}  // namespace ds

// SMEM: bins fit the block's shared counters (at most SMEM_BINS). The values are a source.
template <class L, class FL, class S>
__global__ void __launch_bounds__(L::block) ds_histogram(const S s, const HistogramParams p) {
  constexpr bool WIDE = FL::wide, SMEM = FL::smem;
  constexpr int BLOCK = L::block;
  using namespace ds;
  typedef typename S::T T;
  constexpr int VEC = 16 / sizeof(T);
  constexpr int SMEM_BINS = 8192;
  const u64 n = p.n, bins = p.bins;
  u64* counts = (u64*)p.counts;
  __shared__ u32 s_count[SMEM ? SMEM_BINS : 1];
  if (SMEM) {
    for (u32 b = threadIdx.x; b < bins; b += BLOCK) s_count[b] = 0;
    __syncthreads();
  }
  const Binner<T, WIDE> bin_of(bins, p.lo, p.hi);
  auto count = [&](T x) {
    const u64 b = bin_of(x);
    if (b < bins) {
      if (SMEM) atomicAdd(&s_count[b], 1u);
      else atomicAdd(&counts[b], 1ull);
    }
  };
  constexpr u64 TILE = (u64)BLOCK * VEC;
  for (u64 tb = (u64)blockIdx.x * TILE; tb < n; tb += (u64)gridDim.x * TILE) {
    const u64 i = tb + (u64)threadIdx.x * VEC;
    if (i + VEC <= n) {
      T x[VEC];
      s.template vec<VEC>(i, x);
#pragma unroll
      for (int j = 0; j < VEC; ++j) count(x[j]);
    } else {
      for (int j = 0; j < VEC; ++j)
        if (i + j < n) count(s.at(i + j));
    }
  }
  if (SMEM) {
    __syncthreads();
    if (gridDim.x == 1) {
      for (u32 b = threadIdx.x; b < bins; b += BLOCK) counts[b] = s_count[b];
      return;
    }
    u64* tally = (u64*)p.tally;
    for (u32 b = threadIdx.x; b < bins; b += BLOCK)
      if (s_count[b]) atomicAdd(&tally[b], (u64)s_count[b]);
    // Every thread's counts are in (fence) and done (barrier) before the block is counted.
    __threadfence();
    __syncthreads();
    __shared__ bool s_last;
    if (threadIdx.x == 0) s_last = atomicAdd((u32*)p.done, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!s_last) return;
    __threadfence();
    for (u32 b = threadIdx.x; b < bins; b += BLOCK) {
      counts[b] = ((volatile u64*)tally)[b];
      tally[b] = 0;
    }
    if (threadIdx.x == 0) *(u32*)p.done = 0;
  }
}
