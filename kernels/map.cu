// Element-wise kernels: map of one or two inputs through a functor F (the compiled `map`
// expression), generators from the index, and fills. Grid-stride over tiles of R rounds.
#pragma once
#include "block/load.cuh"

// Both map kernels walk their tiles grid-stride and load the next tile before computing and
// storing the current one, so that every thread keeps loads in flight all the time.

// out[i] = F(a[i])
template <class F, class Out, class A, int BLOCK, int VEC, int R, bool ALIGNED>
__global__ void __launch_bounds__(BLOCK)
    ds_map1(const A* __restrict__ a, Out* __restrict__ out, u64 n) {
  using namespace ds;
  const F f{};
  constexpr u64 TILE = (u64)BLOCK * VEC * R;
  const u64 stride = (u64)gridDim.x * TILE;
  u64 tb = (u64)blockIdx.x * TILE;
  if (tb >= n) return;
  A x[R][VEC];
  load_elementwise<BLOCK, R, VEC, ALIGNED>(a, n, tb, x, A{});
  for (; tb < n; tb += stride) {
    A next[R][VEC];
    if (tb + stride < n) load_elementwise<BLOCK, R, VEC, ALIGNED>(a, n, tb + stride, next, A{});
    Out y[R][VEC];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) y[r][j] = from_c<Out>(f(to_c<A>(x[r][j])));
    store_elementwise<BLOCK, R, VEC, ALIGNED>(out, n, tb, y);
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) x[r][j] = next[r][j];
  }
}

namespace ds {
// Hopper's bulk copy engine (sm_90): global to shared memory, completing on an mbarrier.
DS_DEV u32 smem_addr(const void* p) {
  u32 r;
  asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(r) : "l"(p));
  return r;
}
DS_DEV void mbar_init(u64* bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
DS_DEV void bulk_load(void* dst, const void* src, u32 bytes, u64* bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}
DS_DEV void mbar_wait(u64* bar, u32 phase) {
  u32 done = 0;
  while (!done)
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(phase)
        : "memory");
}
}  // namespace ds

// out[i] = F(a[i]) with the input streamed through shared memory by the bulk copy engine,
// STAGES tiles ahead (sm_90 and later; `a` and `out` 16-byte aligned). Whole tiles go through
// the copy engine; the last partial tile is read directly.
template <class F, class Out, class A, int BLOCK, int VEC, int R, int STAGES>
__global__ void __launch_bounds__(BLOCK)
    ds_map1_bulk(const A* __restrict__ a, Out* __restrict__ out, u64 n) {
#if __CUDA_ARCH__ >= 900
  using namespace ds;
  constexpr u32 TILE = BLOCK * VEC * R;
  constexpr u32 BYTES = TILE * sizeof(A);
  static_assert(BYTES % 16 == 0, "bulk copies are whole 16-byte words");
  __shared__ __align__(128) A buf[STAGES][TILE];
  __shared__ __align__(8) u64 bar[STAGES];
  const F f{};
  const u64 full = n / TILE;
  const u64 stride = gridDim.x;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) mbar_init(&bar[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int s = 0; s < STAGES; ++s) {
      const u64 t = blockIdx.x + s * stride;
      if (t < full) bulk_load(buf[s], a + t * TILE, BYTES, &bar[s]);
    }
  }
  __syncthreads();
  u32 k = 0;
  for (u64 t = blockIdx.x; t < full; t += stride, ++k) {
    const u32 s = k % STAGES;
    mbar_wait(&bar[s], (k / STAGES) & 1u);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const u32 off = (r * BLOCK + threadIdx.x) * VEC;
      A x[VEC];
      load_vec<A, VEC>(&buf[s][off], x);
      Out y[VEC];
#pragma unroll
      for (int j = 0; j < VEC; ++j) y[j] = from_c<Out>(f(to_c<A>(x[j])));
      store_vec<Out, VEC>(out + t * TILE + off, y);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      const u64 next = t + STAGES * stride;
      if (next < full) bulk_load(buf[s], a + next * TILE, BYTES, &bar[s]);
    }
  }
  if (blockIdx.x == full % gridDim.x) {
    for (u64 i = full * TILE + threadIdx.x; i < n; i += BLOCK) out[i] = from_c<Out>(f(to_c<A>(a[i])));
  }
#endif
}

// out[i] = F(a[i], b[i])
template <class F, class Out, class A, class B, int BLOCK, int VEC, int R, bool ALIGNED>
__global__ void __launch_bounds__(BLOCK)
    ds_map2(const A* __restrict__ a, const B* __restrict__ b, Out* __restrict__ out, u64 n) {
  using namespace ds;
  const F f{};
  constexpr u64 TILE = (u64)BLOCK * VEC * R;
  const u64 stride = (u64)gridDim.x * TILE;
  u64 tb = (u64)blockIdx.x * TILE;
  if (tb >= n) return;
  A x[R][VEC];
  B z[R][VEC];
  load_elementwise<BLOCK, R, VEC, ALIGNED>(a, n, tb, x, A{});
  load_elementwise<BLOCK, R, VEC, ALIGNED>(b, n, tb, z, B{});
  for (; tb < n; tb += stride) {
    A xn[R][VEC];
    B zn[R][VEC];
    if (tb + stride < n) {
      load_elementwise<BLOCK, R, VEC, ALIGNED>(a, n, tb + stride, xn, A{});
      load_elementwise<BLOCK, R, VEC, ALIGNED>(b, n, tb + stride, zn, B{});
    }
    Out y[R][VEC];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) y[r][j] = from_c<Out>(f(to_c<A>(x[r][j]), to_c<B>(z[r][j])));
    store_elementwise<BLOCK, R, VEC, ALIGNED>(out, n, tb, y);
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        x[r][j] = xn[r][j];
        z[r][j] = zn[r][j];
      }
  }
}

// out[i] = i as Out (wrapping for integers, rounded for floats).
template <class Out, int BLOCK, int VEC, int R>
__global__ void __launch_bounds__(BLOCK) ds_sequence(Out* __restrict__ out, u64 n) {
  using namespace ds;
  constexpr u64 TILE = (u64)BLOCK * VEC * R;
  for (u64 tb = (u64)blockIdx.x * TILE; tb < n; tb += (u64)gridDim.x * TILE) {
    Out y[R][VEC];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j)
        y[r][j] = from_c<Out>(cast<compute_t<Out>, u64>(item_index<BLOCK, VEC>(tb, r, j)));
    store_rounds<BLOCK, R, VEC, true>(out, n, tb, y);
  }
}

// out[i] = the value whose bits are `bits`.
template <class Out, int BLOCK, int VEC, int R>
__global__ void __launch_bounds__(BLOCK) ds_fill(Out* __restrict__ out, u64 n, u64 bits) {
  using namespace ds;
  constexpr u64 TILE = (u64)BLOCK * VEC * R;
  Out v;
  memcpy(&v, &bits, sizeof(Out));
  for (u64 tb = (u64)blockIdx.x * TILE; tb < n; tb += (u64)gridDim.x * TILE) {
    Out y[R][VEC];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) y[r][j] = v;
    store_rounds<BLOCK, R, VEC, true>(out, n, tb, y);
  }
}
