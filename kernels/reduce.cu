// Reduction: a fixed grid of blocks, each combining its tiles in order (vectorized loads, one
// accumulator a thread, then a fixed tree over the block); the last block to finish combines
// the block results in block order. The grid depends only on n and the device, so float
// results are the same on every run.
#pragma once
#include "block/source.cuh"
#include "block/reduce.cuh"

// L::minb blocks fit a multiprocessor (launch bounds), and the host launches the
// multiprocessors times L::minb: the grid, and so the float result, does not depend on the
// source's expression.
template <class L, class FL, class S>
__global__ void __launch_bounds__(L::block, L::minb) ds_reduce(const S s, const ReduceParams p) {
  typedef typename FL::op Op;
  constexpr int BLOCK = L::block, VEC = L::vec, R = L::items;
  using namespace ds;
  typedef typename S::T T;
  typedef wide_t<T> A;
  typedef Combine<Op, A> F;
  const F f{};
  const u64 n = p.n;
  A* partial = (A*)p.partial;
  u32* done = (u32*)p.done;
  constexpr u64 TILE = (u64)BLOCK * VEC * R;
  // One accumulator per vector lane: independent chains, combined in a fixed order at the end.
  A part[VEC];
#pragma unroll
  for (int j = 0; j < VEC; ++j) part[j] = F::neutral();
  for (u64 tb = (u64)blockIdx.x * TILE; tb < n; tb += (u64)gridDim.x * TILE) {
    if (tb + TILE <= n) {
      T x[R][VEC];
#pragma unroll
      for (int r = 0; r < R; ++r) s.template vec<VEC>(tb + ((u64)r * BLOCK + threadIdx.x) * VEC, x[r]);
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int j = 0; j < VEC; ++j) part[j] = f(part[j], to_c<T>(x[r][j]));
    } else {
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
          const u64 i = item_index<BLOCK, VEC>(tb, r, j);
          if (i < n) part[j] = f(part[j], to_c<T>(s.at(i)));
        }
    }
  }
  A acc = part[0];
#pragma unroll
  for (int j = 1; j < VEC; ++j) acc = f(acc, part[j]);
  acc = block_reduce<BLOCK>(acc, f, F::neutral());
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *(T*)p.result = from_c<T>(acc);
    return;
  }
  __shared__ bool s_last;
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = acc;
    __threadfence();
    s_last = atomicAdd(done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!s_last) return;
  __threadfence();
  A a = F::neutral();
  for (u32 i = threadIdx.x; i < gridDim.x; i += BLOCK) a = f(a, ((const volatile A*)partial)[i]);
  a = block_reduce<BLOCK>(a, f, F::neutral());
  if (threadIdx.x == 0) {
    *(T*)p.result = from_c<T>(a);
    *done = 0;
  }
}
