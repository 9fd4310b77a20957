// Reduction: a fixed grid of blocks, each combining its tiles in order (vectorized loads, one
// accumulator a thread, then a fixed tree over the block); the last block to finish combines
// the block results in block order. The grid depends only on n and the device, so float
// results are the same on every run.
#pragma once
#include "block/load.cuh"
#include "block/reduce.cuh"

namespace ds {
// How a stored element becomes an accumulator value.
// A is the accumulator, Out what the result is stored as.
template <class T> struct LoadValue {
  typedef compute_t<T> A;
  typedef T Out;
  static DS_DEV A get(T x) { return to_c<T>(x); }
  static DS_DEV Out put(A a) { return from_c<T>(a); }
};
// 1 for a nonzero element (counting heads of segments).
template <class T> struct LoadNonzero {
  typedef u64 A;
  typedef u64 Out;
  static DS_DEV A get(T x) { return to_bits<T>(x) != 0 ? 1 : 0; }
  static DS_DEV Out put(A a) { return a; }
};
}  // namespace ds

template <class T, class Op, class L, int BLOCK, int VEC, int R, bool ALIGNED>
__global__ void __launch_bounds__(BLOCK)
    ds_reduce(const T* __restrict__ in, u64 n, typename L::A* partial, u32* done,
              typename L::Out* result) {
  using namespace ds;
  typedef typename L::A A;
  typedef Combine<Op, A> F;
  const F f{};
  constexpr u64 TILE = (u64)BLOCK * VEC * R;
  // One accumulator per vector lane: independent chains, combined in a fixed order at the end.
  A part[VEC];
#pragma unroll
  for (int j = 0; j < VEC; ++j) part[j] = F::neutral();
  for (u64 tb = (u64)blockIdx.x * TILE; tb < n; tb += (u64)gridDim.x * TILE) {
    if (ALIGNED && tb + TILE <= n) {
      T x[R][VEC];
#pragma unroll
      for (int r = 0; r < R; ++r) load_vec<T, VEC>(in + tb + ((u64)r * BLOCK + threadIdx.x) * VEC, x[r]);
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int j = 0; j < VEC; ++j) part[j] = f(part[j], L::get(x[r][j]));
    } else {
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
          const u64 i = item_index<BLOCK, VEC>(tb, r, j);
          if (i < n) part[j] = f(part[j], L::get(in[i]));
        }
    }
  }
  A acc = part[0];
#pragma unroll
  for (int j = 1; j < VEC; ++j) acc = f(acc, part[j]);
  acc = block_reduce<BLOCK>(acc, f, F::neutral());
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *result = L::put(acc);
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
    *result = L::put(a);
    *done = 0;
  }
}
