// Vectorized binary search (lower_bound, upper_bound) of needles in a sorted haystack, in the
// order of ordered bits (block/order.cuh: total_cmp for floats). Every block first loads
// `samples` evenly spaced keys of the haystack (positions k * step) into shared memory: the
// top levels of every search, read once per block instead of once per needle. A needle then
// searches the samples, which leaves it a stretch of at most `step` keys, and finishes there
// with a binary search of global memory. The answer is always in 0..=len, sorted haystack or
// not. Haystack and needles are sources, read at their positions (`at`).
#pragma once
#include "block/source.cuh"
#include "block/order.cuh"

template <class L, class FL, class H, class N>
__global__ void __launch_bounds__(L::block)
    ds_search(const H hay, const N needles, const SearchParams p) {
  typedef typename FL::idx I;
  constexpr int UPPER = FL::upper, BLOCK = L::block, SPLIT = FL::split;
  using namespace ds;
  typedef typename H::T T;
  typedef key_bits<T> KB;
  typedef typename KB::U U;
  const u64 len = p.len, n = p.n, step = p.step;
  const u32 samples = p.samples;  // at most SPLIT; sample k at k * step < len
  __shared__ U s_tab[SPLIT];
  for (u32 k = threadIdx.x; k < samples; k += BLOCK)
    s_tab[k] = KB::order(KB::raw(hay.at((u64)k * step)));
  __syncthreads();
  I* __restrict__ out = (I*)p.out;
  for (u64 i = (u64)blockIdx.x * BLOCK + threadIdx.x; i < n; i += (u64)gridDim.x * BLOCK) {
    const U q = KB::order(KB::raw(needles.at(i)));
    // Before the answer: keys < q (lower_bound) or <= q (upper_bound).
    auto before = [&](U x) { return UPPER ? x <= q : x < q; };
    u32 lo = 0, hi = samples;
    while (lo < hi) {
      const u32 mid = (lo + hi) / 2;
      if (before(s_tab[mid])) lo = mid + 1;
      else hi = mid;
    }
    // Samples lo - 1 (before) and lo (not) bound the answer.
    u64 a = lo == 0 ? 0 : (u64)(lo - 1) * step + 1;
    u64 b = lo < samples ? (u64)lo * step : len;
    while (a < b) {
      const u64 mid = a + (b - a) / 2;
      if (before(KB::order(KB::raw(hay.at(mid))))) a = mid + 1;
      else b = mid;
    }
    out[i] = (I)a;
  }
}
