// Gather and scatter with bounds checks: an index outside the target records its position in
// `err` (note_bad_index: the smallest such position wins); the host checks `err` when the
// call completes and then discards the output. Every input is a source: a gather's source is
// read at the indices (`at`), so a lazy one is evaluated only where it is gathered.
#pragma once
#include "block/lookback.cuh"
#include "map.cu"

// out[i] = src[idx[i]]
template <class L, class S, class I>
__global__ void __launch_bounds__(L::block)
    ds_gather(const S src, const I idx, const GatherParams p) {
  constexpr int BLOCK = L::block, VEC = L::vec, R = L::items;
  using namespace ds;
  typedef typename S::T T;
  typedef typename I::T X;
  constexpr bool BLOCKED = src_blocked<I, VEC>::value;
  constexpr u64 TILE = (u64)BLOCK * VEC * R;
  const u64 n = p.n, len = p.len;
  for (u64 tb = (u64)blockIdx.x * TILE; tb < n; tb += (u64)gridDim.x * TILE) {
    X ix[R][VEC];
    src_elementwise<BLOCK, R, VEC>(idx, n, tb, ix, (X)0);
    T y[R][VEC];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const u64 k = (u64)ix[r][j];
        if (k < len) {
          y[r][j] = src.at(k);
        } else {
          y[r][j] = T{};
          const u64 i = elementwise_index<BLOCK, VEC, BLOCKED>(tb, r, j);
          if (i < n) note_bad_index((u64*)p.err, (u32*)p.flag, i);
        }
      }
    store_elementwise<BLOCK, R, VEC, BLOCKED>((T*)p.out, n, tb, y);
  }
}

// A check that several in-place scatters into one target share, one after another: write c
// notes a bad index at position i under the key c << 40 | i (`tag | i`, note_bad_index's word:
// the smallest key wins), and `val` gets the index at the smallest key, so that the host needs
// no copy of the writes' indices to name it. A thread that noted a bad index of this write
// calls this after its loop: under the lock `lock` it reads the smallest key and, where that
// key is this write's, writes the index there. A thread that lowers the key later takes the
// lock later, so the last index written is that of the smallest key.
template <class I>
DS_DEV void note_chain_index(const I& idx, const u64* err, u64* val, u64* lock, u64 tag) {
  unsigned long long* l = (unsigned long long*)lock;
  while (atomicCAS(l, 0ull, 1ull) != 0ull) {
  }
  __threadfence();
  const u64 key = ~*(const volatile u64*)err;
  // Earlier writes' keys are below this write's tag, and later writes have not run.
  if (key >= tag) *(volatile u64*)val = (u64)idx.at(key - tag);
  __threadfence();
  atomicExch(l, 0ull);
}

// out[idx[i]] = vals[i] over the grid's tiles. With err null (after the partition of scatter,
// whose sort checked the indices) a bad index is only skipped, else its key `tag | i` is
// noted (note_bad_index; `tag` is zero but in a chain); with `val`, a chain's, the index
// itself too (note_chain_index, once a thread). The values and the indices are read in the
// same layout (both blocked only where both allow it).
template <int BLOCK, int VEC, int R, class V, class I>
DS_DEV void scatter_tiles(const V& vals, const I& idx, typename V::T* __restrict__ out, u64 n,
                          u64 len, u64* err, u32* flag, u64* val, u64* lock, u64 tag) {
  using namespace ds;
  typedef typename V::T T;
  typedef typename I::T X;
  constexpr bool BLOCKED = src_blocked<I, VEC>::value && src_blocked<V, VEC>::value;
  constexpr u64 TILE = (u64)BLOCK * VEC * R;
  bool noted = false;
  for (u64 tb = (u64)blockIdx.x * TILE; tb < n; tb += (u64)gridDim.x * TILE) {
    X ix[R][VEC];
    T v[R][VEC];
    if constexpr (BLOCKED) {
      src_rounds<BLOCK, R, VEC>(idx, n, tb, ix, (X)0);
      src_rounds<BLOCK, R, VEC>(vals, n, tb, v, T{});
    } else {
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
          const u64 i = elementwise_index<BLOCK, VEC, false>(tb, r, j);
          ix[r][j] = i < n ? idx.at(i) : (X)0;
          v[r][j] = i < n ? vals.at(i) : T{};
        }
    }
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const u64 i = elementwise_index<BLOCK, VEC, BLOCKED>(tb, r, j);
        if (i >= n) continue;
        const u64 k = (u64)ix[r][j];
        if (k < len) out[k] = v[r][j];
        else if (err) note_bad_index(err, flag, tag | i), noted = true;
      }
  }
  if (noted && val) note_chain_index(idx, err, val, lock, tag);
}

// out[idx[i]] = vals[i] (out already holds the base).
template <class L, class V, class I>
__global__ void __launch_bounds__(L::block)
    ds_scatter(const V vals, const I idx, const ScatterParams p) {
  constexpr int BLOCK = L::block, VEC = L::vec, R = L::items;
  scatter_tiles<BLOCK, VEC, R>(vals, idx, (typename V::T*)p.out, p.n, p.len, (u64*)p.err,
                               (u32*)p.flag, (u64*)p.val, (u64*)p.lock, p.tag);
}

// A scatter and its base in one launch: the blocks copy the base to out (map_tiles, as
// ds_map does), wait for each other (grid_barrier: a cooperative launch), then scatter. For a
// small target this saves the base's own copy and its launch.
template <class L, class V, class I, class B>
__global__ void __launch_bounds__(L::block)
    ds_scatter_base(const V vals, const I idx, const B base, const ScatterBaseParams p) {
  constexpr int BLOCK = L::block, VEC = L::vec, R = L::items;
  using namespace ds;
  typename V::T* __restrict__ out = (typename V::T*)p.out;
  map_tiles<BLOCK, VEC, R>(base, out, p.len);
  grid_barrier((u32*)p.arrive, (u32*)p.passed);
  scatter_tiles<BLOCK, VEC, R>(vals, idx, out, p.n, p.len, (u64*)p.err, (u32*)p.flag, nullptr,
                               nullptr, 0);
}

// Whether a scatter's writes are near each other: at `windows` evenly spaced places, a warp
// reads 32 neighbouring indices and counts into *far whether they span more than `span`
// elements. Needs n >= 32; one warp a window.
template <class L, class I>
__global__ void __launch_bounds__(L::block) ds_index_spread(const I idx, const SpreadParams p) {
  constexpr int BLOCK = L::block;
  using namespace ds;
  const u32 w = (blockIdx.x * BLOCK + threadIdx.x) / WARP;
  if (w >= p.windows) return;  // whole warps leave together
  const u64 start = p.windows > 1 ? (p.n - WARP) * w / (p.windows - 1) : 0;
  const u64 k = (u64)idx.at(start + lane_id());
  u64 lo = k, hi = k;
#pragma unroll
  for (int d = WARP / 2; d > 0; d /= 2) {
    const u64 a = __shfl_xor_sync(FULL, lo, d), b = __shfl_xor_sync(FULL, hi, d);
    lo = a < lo ? a : lo;
    hi = b > hi ? b : hi;
  }
  if (lane_id() == 0 && hi - lo > p.span) atomicAdd((u64*)p.far, 1ull);
}
