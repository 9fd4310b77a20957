// Sources: how a kernel reads its input. A source S is a small struct passed by value as a
// kernel parameter, with
//   typedef T            the element type (storage type);
//   PLAIN                whether it is one stored column `p` of T (kernels may then copy
//                        straight from memory, e.g. with cp.async);
//   ONE                  whether it is computed from one stored column `c0` of elements L
//                        as wide as its own, each row from that row's element only (a map
//                        of one column; `vec_from` computes it from elements already read):
//                        src_stage then copies that column as a plain one's;
//   READS                whether it reads memory at all (a sequence of positions, constants
//                        or random numbers do not: they are computed from the index);
//   AVEC                 0, or the element count of the vectors its columns are aligned for:
//                        `vec<VEC>` reads whole vectors when VEC divides AVEC;
//   T at(u64 i)          element i;
//   vec<VEC>(i, v)       elements i .. i + VEC - 1 (i a multiple of VEC, all before the end).
// ds::Col is the stored column. A lazy sequence's source is printed by the host side for its
// expression (src/backend/cuda/source.rs): its columns are ds::Col-like pointers, its
// constants u64 fields, and `at`/`vec` compute the expression from the columns' elements, so
// a map is evaluated inside the kernel that consumes it (CUB's transform iterator).
#pragma once
#include "block/load.cuh"
#include "block/random.cuh"

namespace ds {

// Whether a source of this type may read vectors of VEC elements.
template <class S, int VEC> struct vec_ok {
  static constexpr bool value = S::AVEC != 0 && S::AVEC % VEC == 0;
};

// A stored column of T.
template <class T_, int AVEC_> struct Col {
  typedef T_ T;
  static constexpr bool PLAIN = true;
  static constexpr bool ONE = false;
  static constexpr bool READS = true;
  static constexpr int AVEC = AVEC_;
  const T* __restrict__ p;
  DS_DEV T at(u64 i) const { return p[i]; }
  template <int VEC> DS_DEV void vec(u64 i, T (&v)[VEC]) const {
    if constexpr (AVEC != 0 && AVEC % VEC == 0) {
      load_vec<T, VEC>(p + i, v);
    } else {
#pragma unroll
      for (int j = 0; j < VEC; ++j) v[j] = p[i + j];
    }
  }
};

// The VEC elements of source s from i (a multiple of VEC); past n, `fill`.
template <int VEC, class S>
DS_DEV void src_round_at(const S& s, u64 i, u64 n, typename S::T (&v)[VEC], typename S::T fill) {
  if (i + VEC <= n) {
    s.template vec<VEC>(i, v);
  } else {
#pragma unroll
    for (int j = 0; j < VEC; ++j) v[j] = i + j < n ? s.at(i + j) : fill;
  }
}

// Round r of a tile of source s (see block/load.cuh): the VEC elements from
// tb + (r * BLOCK + thread) * VEC; past n, `fill`.
template <int BLOCK, int VEC, class S>
DS_DEV void src_round(const S& s, u64 n, u64 tb, int r, typename S::T (&v)[VEC],
                      typename S::T fill) {
  src_round_at<VEC>(s, tb + ((u64)r * BLOCK + threadIdx.x) * VEC, n, v, fill);
}

// A tile in rounds: x[r][j] (as load_rounds).
template <int BLOCK, int R, int VEC, class S>
DS_DEV void src_rounds(const S& s, u64 n, u64 tb, typename S::T (&x)[R][VEC], typename S::T fill) {
#pragma unroll
  for (int r = 0; r < R; ++r) src_round<BLOCK, VEC>(s, n, tb, r, x[r], fill);
}

// For element-wise kernels (as load_elementwise): whole vectors where the source allows them,
// else "striped", so that each scalar access of a warp reads 32 neighbouring elements. Stores
// of the same tile use store_elementwise<..., src_blocked<S, VEC>::value>.
template <class S, int VEC> struct src_blocked {
  static constexpr bool value = vec_ok<S, VEC>::value;
};
template <int BLOCK, int R, int VEC, class S>
DS_DEV void src_elementwise(const S& s, u64 n, u64 tb, typename S::T (&x)[R][VEC],
                            typename S::T fill) {
  if constexpr (src_blocked<S, VEC>::value) {
    src_rounds<BLOCK, R, VEC>(s, n, tb, x, fill);
  } else {
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const u64 i = tb + ((u64)r * VEC + j) * BLOCK + threadIdx.x;
        x[r][j] = i < n ? s.at(i) : fill;
      }
  }
}

// Whether src_stage stages source S, read in vectors of VEC, as its one column (ONE): whole
// vectors of 4, 8 or 16 bytes, which cp.async copies.
template <class S, int VEC> struct stages_column {
  static constexpr bool value =
      !S::PLAIN && S::ONE && cp_async_copies<VEC * sizeof(typename S::T)>::value;
};

// A tile into shared memory, element k of the tile at t[k], each thread the items it holds in
// src_rounds (stage_rounds' layout): a plain column by asynchronous copies (stage_rounds); a
// source computed from one column of elements as wide as its own (ONE) the same way, that
// column's elements, computed once they arrive; any other source computed and stored. Then
// either src_stage_wait, which computes a ONE source's items in place, and staged_round
// reads them (kernels that read an item more than once), or stage_wait and src_staged_round,
// which computes each item as it reads it. A thread reads back only what it wrote.
//
// Computed as they were loaded (a round at a time through registers), the lazy input of a scan
// ran 7% slower than a stored one at 2^28 (transform_scan_u32 0.818 ms, inclusive_scan_add_i32
// 0.759, H100, 2026-11-27): its loads were no longer all in flight at once.
template <int BLOCK, int R, int VEC, class S>
DS_DEV void src_stage(const S& s, u64 n, u64 tb, typename S::T* t, typename S::T fill) {
  typedef typename S::T T;
  if constexpr (S::PLAIN && cp_async_copies<VEC * sizeof(T)>::value) {
    stage_rounds<BLOCK, R, VEC, vec_ok<S, VEC>::value>(s.p, n, tb, t, fill);
  } else if constexpr (stages_column<S, VEC>::value) {
    typedef typename S::L L;
    static_assert(sizeof(L) == sizeof(T), "the column's elements take the source's places");
    stage_rounds<BLOCK, R, VEC, vec_ok<S, VEC>::value>(s.c0, n, tb, (L*)t, L{});
  } else {
    // Bounds in 32 bits, against the elements left in the tile (64-bit ones for every round,
    // computed up front, were much of what lazy scans spilled).
    constexpr u32 TILE = (u32)R * BLOCK * VEC;
    const u32 rem = n - tb < TILE ? (u32)(n - tb) : TILE;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const u32 k = ((u32)r * BLOCK + threadIdx.x) * VEC;
      T v[VEC];
      if (k + VEC <= rem) {
        s.template vec<VEC>(tb + k, v);
      } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) v[j] = k + j < rem ? s.at(tb + k + j) : fill;
      }
      store_vec<T, VEC>(t + k, v);
    }
  }
}

// Round r of the thread's items staged by src_stage and awaited by stage_wait: a source
// staged as its column is computed from the column's elements (past n: from whatever they
// hold; callers do not use those).
template <int BLOCK, int VEC, class S>
DS_DEV void src_staged_round(const S& s, u64 tb, const typename S::T* t, int r,
                             typename S::T (&v)[VEC]) {
  if constexpr (stages_column<S, VEC>::value) {
    typedef typename S::L L;
    L a[VEC];
    staged_round<BLOCK, VEC>((const L*)t, r, a);
    s.template vec_from<VEC>(item_index<BLOCK, VEC>(tb, r, 0), a, L{}, v);
  } else {
    staged_round<BLOCK, VEC>(t, r, v);
  }
}

// Waits for the thread's copies of src_stage; a source staged as its column is then computed
// in place, so that staged_round reads its items.
template <int BLOCK, int R, int VEC, class S>
DS_DEV void src_stage_wait(const S& s, u64 tb, typename S::T* t) {
  typedef typename S::T T;
  stage_wait();
  if constexpr (stages_column<S, VEC>::value) {
#pragma unroll 4
    for (int r = 0; r < R; ++r) {
      T v[VEC];
      src_staged_round<BLOCK, VEC>(s, tb, t, r, v);
      store_vec<T, VEC>(t + ((u32)r * BLOCK + threadIdx.x) * VEC, v);
    }
  }
}

}  // namespace ds
