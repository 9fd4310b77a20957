// Reductions and scans by a custom associative operator (a traced closure, printed as the
// functor `F`): items of up to five components, any of them lazy, combined in order (the
// operator need not be commutative) and without a neutral element (Opt marks "nothing yet").
//
// Both kernels split the sequence into the same fixed chunks, one a block, contiguous:
// ds_assoc_reduce folds each chunk, tile by tile, in order, and the last block to finish folds
// the chunk totals (MODE 0: the result) or turns them into each chunk's exclusive prefix
// (MODE 1, for the scan); ds_assoc_scan then scans each chunk from its prefix. The grouping
// depends only on n and the launch shape, so float results are the same on every run. This
// is the reduce-then-scan of Merrill and Grimshaw: two reads instead of the single pass's one,
// but no look-back slots, whose values are limited to 24 bytes.
//
// F provides: V (the item in compute types), K (components), NP (constants, p[]), the
// combination operator(), head(x) (a segmented combiner's head flag), at/vec (an item from
// the component sources), store_round (the stored components of VEC items), from_words and
// to_words (an item as compute bits, one word a component).
#pragma once
#include "block/source.cuh"
#include "block/scan.cuh"
#include "block/reduce.cuh"

namespace ds {

// An item, or nothing (the combination of no items).
template <class V> struct Opt {
  V v;
  u32 has;
};

template <class F> struct OptF {
  typedef typename F::V V;
  typedef Opt<V> O;
  F f;
  DS_DEV O operator()(const O& a, const O& b) const {
    if (!a.has) return b;
    if (!b.has) return a;
    O r;
    r.v = f(a.v, b.v);
    r.has = 1;
    return r;
  }
  static DS_DEV O none() {
    O r{};
    return r;
  }
  static DS_DEV O some(const V& v) {
    O r;
    r.v = v;
    r.has = 1;
    return r;
  }
};

// A value another block of this launch wrote (after its fence): read past L1, word by word.
template <class O> DS_DEV O load_cg(const O* p) {
  constexpr int N = sizeof(O) / 4;
  static_assert(sizeof(O) % 4 == 0, "Opt values are whole words");
  u32 w[N];
#pragma unroll
  for (int k = 0; k < N; ++k) w[k] = __ldcg((const unsigned int*)p + k);
  O v;
  memcpy(&v, w, sizeof(O));
  return v;
}

template <class F> DS_DEV F assoc_functor(const void* consts) {
  F f;
#pragma unroll
  for (int i = 0; i < F::NP; ++i) f.p[i] = ((const u64*)consts)[i];
  return f;
}

// The thread's items of round r of the tile at tb (VEC from tb + (r * BLOCK + thread) * VEC),
// those at or past `hi` absent; returns how many are present.
template <class F, int BLOCK, int VEC, class... S>
DS_DEV int assoc_round(u64 tb, u64 hi, int r, typename F::V (&x)[VEC], const S&... s) {
  const u64 i = tb + ((u64)r * BLOCK + threadIdx.x) * VEC;
  if (i + VEC <= hi) {
    F::template vec<VEC>(i, x, s...);
    return VEC;
  }
  int m = 0;
#pragma unroll
  for (int j = 0; j < VEC; ++j)
    if (i + j < hi) {
      x[j] = F::at(i + j, s...);
      m = j + 1;
    }
  return m;
}

// The combination, in order, of one value a thread per round (round-major, then thread),
// valid in thread 0.
template <int BLOCK, int R, class O, class G> DS_DEV O tile_fold(const O (&a)[R], const G& g) {
  constexpr int NW = BLOCK / WARP;
  constexpr int CHUNKS = R * NW;
  constexpr int CPL = (CHUNKS + WARP - 1) / WARP;
  __shared__ O s_part[CHUNKS];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const O w = warp_reduce(a[r], g);
    if (lane_id() == 0) s_part[r * NW + warp_id()] = w;
  }
  __syncthreads();
  O t = G::none();
  if (warp_id() == 0) {
#pragma unroll
    for (int q = 0; q < CPL; ++q) {
      const int k = lane_id() * CPL + q;
      if (k < CHUNKS) t = g(t, s_part[k]);
    }
    t = warp_reduce(t, g);
  }
  __syncthreads();
  return t;
}

}  // namespace ds

// MODE 0: the result's words (K compute bits, then whether there was an item) to p.result.
// MODE 1: each chunk's exclusive prefix (from p.init where p.excl) back to p.partial.
// MODE 2: as MODE 0, for a commutative combiner (Combiner::commutative): items folded in
// any order within a block.
// MINB: the blocks a multiprocessor it is compiled for (0: no bound), as many as the grid has.
template <class F, int BLOCK, int R, int VEC, int MODE, int MINB, class... S>
__global__ void __launch_bounds__(BLOCK, MINB)
    ds_assoc_reduce(const AssocParams p, const S... s) {
  using namespace ds;
  typedef typename F::V V;
  typedef OptF<F> G;
  typedef typename G::O O;
  constexpr u64 TILE = (u64)BLOCK * R * VEC;
  const G g{assoc_functor<F>(p.consts)};
  const u64 lo = (u64)blockIdx.x * p.chunk;
  const u64 hi = lo + p.chunk < p.n ? lo + p.chunk : p.n;
  O acc = G::none();  // (thread 0)
  if constexpr (MODE == 2) {
    // A commutative combiner: each thread folds its items of every tile as they come, VEC
    // chains a thread (as ds_reduce does), and the block folds the threads' values once.
    O part[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) part[j] = G::none();
    for (u64 tb = lo; tb < hi; tb += TILE) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        V x[VEC];
        const int m = assoc_round<F, BLOCK, VEC>(tb, hi, r, x, s...);
#pragma unroll
        for (int j = 0; j < VEC; ++j)
          if (j < m) part[j] = part[j].has ? G::some(g.f(part[j].v, x[j])) : G::some(x[j]);
      }
    }
    O a[1];
    a[0] = part[0];
#pragma unroll
    for (int j = 1; j < VEC; ++j) a[0] = g(a[0], part[j]);
    acc = tile_fold<BLOCK, 1>(a, g);
  } else {
    for (u64 tb = lo; tb < hi; tb += TILE) {
      O a[R];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        V x[VEC];
        const int m = assoc_round<F, BLOCK, VEC>(tb, hi, r, x, s...);
        a[r] = m > 0 ? G::some(x[0]) : G::none();
#pragma unroll
        for (int j = 1; j < VEC; ++j)
          if (j < m) a[r].v = g.f(a[r].v, x[j]);
      }
      const O t = tile_fold<BLOCK, R>(a, g);
      if (threadIdx.x == 0) acc = g(acc, t);
    }
  }
  O* partial = (O*)p.partial;
  __shared__ bool s_last;
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = acc;
    __threadfence();
    s_last = atomicAdd((u32*)p.done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!s_last) return;
  __threadfence();
  if constexpr (MODE != 1) {
    O all = G::none();  // (thread 0)
    for (u32 b = 0; b < gridDim.x; b += BLOCK) {
      O a[1];
      a[0] = G::none();
      if (b + threadIdx.x < gridDim.x) a[0] = load_cg(partial + b + threadIdx.x);
      const O t = tile_fold<BLOCK, 1>(a, g);
      if (threadIdx.x == 0) all = g(all, t);
    }
    if (threadIdx.x == 0) {
      u64* w = (u64*)p.result;
      F::to_words(all.v, w);
      w[F::K] = all.has;
      *(u32*)p.done = 0;
    }
  } else {
    // The carry lives in the lanes of warp 0, which call the prefix functor.
    O carry = p.excl ? G::some(F::from_words((const u64*)p.init)) : G::none();
    for (u32 b = 0; b < gridDim.x; b += BLOCK) {
      O a[1];
      a[0] = G::none();
      if (b + threadIdx.x < gridDim.x) a[0] = load_cg(partial + b + threadIdx.x);
      tile_scan_with<BLOCK, 1, false>(a, g, G::none(), [&](const O& total) {
        const O c = carry;
        carry = g(carry, total);
        return c;
      });
      if (b + threadIdx.x < gridDim.x) partial[b + threadIdx.x] = a[0];
      __syncthreads();
    }
    if (threadIdx.x == 0) *(u32*)p.done = 0;
  }
}

// The scan of each chunk from its prefix (p.partial, from ds_assoc_reduce's MODE 1). MODE 0:
// inclusive; 1: exclusive (the prefix holds p.init); 2: segmented exclusive, p.init at heads.
template <class F, int BLOCK, int R, int VEC, int MODE, class... S>
__global__ void __launch_bounds__(BLOCK) ds_assoc_scan(const AssocParams p, const S... s) {
  using namespace ds;
  typedef typename F::V V;
  typedef OptF<F> G;
  typedef typename G::O O;
  constexpr u64 TILE = (u64)BLOCK * R * VEC;
  const G g{assoc_functor<F>(p.consts)};
  const u64 lo = (u64)blockIdx.x * p.chunk;
  const u64 hi = lo + p.chunk < p.n ? lo + p.chunk : p.n;
  O carry = ((const O*)p.partial)[blockIdx.x];  // (the lanes of warp 0)
  V init;
  if constexpr (MODE != 0) init = F::from_words((const u64*)p.init);
  for (u64 tb = lo; tb < hi; tb += TILE) {
    V x[R][VEC];
    int m[R];
    O a[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      m[r] = assoc_round<F, BLOCK, VEC>(tb, hi, r, x[r], s...);
      a[r] = m[r] > 0 ? G::some(x[r][0]) : G::none();
#pragma unroll
      for (int j = 1; j < VEC; ++j)
        if (j < m[r]) a[r].v = g.f(a[r].v, x[r][j]);
    }
    tile_scan_with<BLOCK, R, true>(a, g, G::none(), [&](const O& total) {
      const O c = carry;
      carry = g(carry, total);
      return c;
    });
#pragma unroll
    for (int r = 0; r < R; ++r) {
      O q = a[r];
      V out[VEC];
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        if (j < m[r]) {
          const O xj = G::some(x[r][j]);
          if constexpr (MODE == 0) {
            q = g(q, xj);
            out[j] = q.v;
          } else if constexpr (MODE == 1) {
            out[j] = q.v;
            q = g(q, xj);
          } else {
            out[j] = (F::head(x[r][j]) || !q.has) ? init : q.v;
            q = g(q, xj);
          }
        }
      }
      F::template store_round<BLOCK, VEC>(p, hi, tb, r, out);
    }
  }
}

