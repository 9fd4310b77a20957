// Loading and storing a tile in "rounds": in round r, thread t holds the VEC consecutive
// elements starting at tile_base + (r * BLOCK + t) * VEC. Each round is one coalesced,
// vectorized access of the whole block (16 bytes a thread where the pointer allows it).
#pragma once
#include "prelude.cuh"

namespace ds {

// Notes position i of an index outside its target in an error word that starts at zero: the
// word keeps ~i of the first such position (atomicMax), so zero means none and the host
// needs no fill before the launch. A flag in mapped host memory, where given, is set too, so
// that the host reads the word back only when it must.
DS_DEV void note_bad_index(u64* err, u32* flag, u64 i) {
  atomicMax(err, ~i);
  if (flag) *(volatile u32*)flag = 1u;
}

template <int BYTES> struct word_of;
template <> struct word_of<1> { typedef u8 T; };
template <> struct word_of<2> { typedef u16 T; };
template <> struct word_of<4> { typedef u32 T; };
template <> struct word_of<8> { typedef u64 T; };
struct alignas(16) u32x4 { u32 x, y, z, w; };
template <> struct word_of<16> { typedef u32x4 T; };

// VEC consecutive elements from p in as few accesses as possible: p must be aligned to
// VEC * sizeof(T) bytes, or to 16 where that is more.
template <class T, int VEC> DS_DEV void load_vec(const T* p, T (&v)[VEC]) {
  constexpr int BYTES = VEC * sizeof(T);
  if constexpr (BYTES <= 16) {
    typedef typename word_of<BYTES>::T W;
    W w = *reinterpret_cast<const W*>(p);
    memcpy(v, &w, BYTES);
  } else {
    static_assert(BYTES % 16 == 0, "vectors are whole 16-byte words");
    u32x4 w[BYTES / 16];
#pragma unroll
    for (int k = 0; k < BYTES / 16; ++k) w[k] = reinterpret_cast<const u32x4*>(p)[k];
    memcpy(v, w, BYTES);
  }
}
template <class T, int VEC> DS_DEV void store_vec(T* p, const T (&v)[VEC]) {
  constexpr int BYTES = VEC * sizeof(T);
  if constexpr (BYTES <= 16) {
    typedef typename word_of<BYTES>::T W;
    W w;
    memcpy(&w, v, BYTES);
    *reinterpret_cast<W*>(p) = w;
  } else {
    static_assert(BYTES % 16 == 0, "vectors are whole 16-byte words");
    u32x4 w[BYTES / 16];
    memcpy(w, v, BYTES);
#pragma unroll
    for (int k = 0; k < BYTES / 16; ++k) reinterpret_cast<u32x4*>(p)[k] = w[k];
  }
}

// Elements of one tile into x[r][j]; elements at or past n get `fill`.
template <int BLOCK, int R, int VEC, bool ALIGNED, class T>
DS_DEV void load_rounds(const T* __restrict__ p, u64 n, u64 tile_base, T (&x)[R][VEC], T fill) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const u64 i = tile_base + ((u64)r * BLOCK + threadIdx.x) * VEC;
    if (ALIGNED && i + VEC <= n) {
      load_vec<T, VEC>(p + i, x[r]);
    } else {
#pragma unroll
      for (int j = 0; j < VEC; ++j) x[r][j] = (i + j < n) ? p[i + j] : fill;
    }
  }
}

// Round r of a tile, v[j], to its place, for elements before n.
template <int BLOCK, int VEC, bool ALIGNED, class T>
DS_DEV void store_round(T* __restrict__ p, u64 n, u64 tile_base, int r, const T (&v)[VEC]) {
  const u64 i = tile_base + ((u64)r * BLOCK + threadIdx.x) * VEC;
  if (ALIGNED && i + VEC <= n) {
    store_vec<T, VEC>(p + i, v);
  } else {
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      if (i + j < n) p[i + j] = v[j];
  }
}

// x[r][j] to its place, for elements before n.
template <int BLOCK, int R, int VEC, bool ALIGNED, class T>
DS_DEV void store_rounds(T* __restrict__ p, u64 n, u64 tile_base, const T (&x)[R][VEC]) {
#pragma unroll
  for (int r = 0; r < R; ++r) store_round<BLOCK, VEC, ALIGNED>(p, n, tile_base, r, x[r]);
}

// Staging a tile in shared memory, so that it waits there rather than in registers while
// the block looks back: tiles can then be larger (64 KB) than registers hold without
// spilling, and the look-back costs per tile. Each thread copies the same items it holds in `load_rounds` to the same offsets
// of `s` (element k of the tile at s[k]), by asynchronous copies (cp.async, sm_80 and later)
// where whole vectors are aligned, else by plain loads with `fill` past n. A thread reads
// back only what it copied, after `stage_wait`.
DS_DEV u32 shared_address(const void* p) {
  u64 a;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
  return (u32)a;
}
// One asynchronous copy (cp.async, sm_80 and later) of BYTES = 4, 8 or 16 from global memory
// at p to shared memory at s, both aligned to BYTES. Issued copies are committed as a group by
// `stage_commit` and awaited by `stage_wait`. The copies also leave the lines in L1 (.ca; for
// 16 bytes .cg would bypass it), which measured faster for every kernel that stages, whether
// or not anything reads the lines again: on an H100 at 2^28 (2026-11-25) the staged
// scan of i32 0.755 ms against 0.806 with .cg, of i64 1.683 against 1.762; compaction
// (copy_if_f32, flags computed from the stage) 0.68-0.70 against 0.74-0.76.
template <int BYTES> struct cp_async_copies {
  static constexpr bool value = BYTES == 4 || BYTES == 8 || BYTES == 16;
};
// Below sm_80, which has no cp.async, the same bytes go through registers: the copy is done
// when the store is issued, so there is nothing to commit or await, and every thread reads back
// the bits it wrote either way.
template <int BYTES> DS_DEV void cp_async(void* s, const void* p) {
  static_assert(cp_async_copies<BYTES>::value, "cp.async copies 4, 8 or 16 bytes");
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(shared_address(s)), "l"(p),
               "n"(BYTES) : "memory");
#else
  typedef typename word_of<BYTES>::T W;
  *reinterpret_cast<W*>(s) = *reinterpret_cast<const W*>(p);
#endif
}
#if __CUDA_ARCH__ >= 800
DS_DEV void stage_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
DS_DEV void stage_wait() { asm volatile("cp.async.wait_all;" ::: "memory"); }
#else
DS_DEV void stage_commit() {}
DS_DEV void stage_wait() {}
#endif
template <int BLOCK, int R, int VEC, bool ALIGNED, class T>
DS_DEV void stage_rounds(const T* __restrict__ p, u64 n, u64 tile_base, T* s, T fill) {
  // Where a vector is not whole (past n) or not aligned, element by element: 4- and 8-byte
  // elements of an unaligned column still asynchronously; narrower ones through registers, and
  // where no vector is aligned a round at a time (all rounds' loads at once held 256 bytes a
  // thread for 16 rounds of bytes, spilled).
  constexpr bool ASYNC = !ALIGNED && (sizeof(T) == 4 || sizeof(T) == 8);
#pragma unroll(ALIGNED || ASYNC ? R : 1)
  for (int r = 0; r < R; ++r) {
    const u32 k = ((u32)r * BLOCK + threadIdx.x) * VEC;
    const u64 i = tile_base + k;
    if (ALIGNED && i + VEC <= n) {
      cp_async<VEC * sizeof(T)>(s + k, p + i);
    } else {
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        if constexpr (ASYNC) {
          if (i + j < n) cp_async<sizeof(T)>(s + k + j, p + i + j);
          else s[k + j] = fill;
        } else {
          s[k + j] = (i + j < n) ? p[i + j] : fill;
        }
      }
    }
  }
  stage_commit();
}

// Round r of the thread's staged items.
template <int BLOCK, int VEC, class T> DS_DEV void staged_round(const T* s, int r, T (&v)[VEC]) {
  load_vec<T, VEC>(s + ((u32)r * BLOCK + threadIdx.x) * VEC, v);
}

// Every round of the thread's staged items.
template <int BLOCK, int R, int VEC, class T>
DS_DEV void staged_rounds(const T* s, T (&raw)[R][VEC]) {
#pragma unroll
  for (int r = 0; r < R; ++r) staged_round<BLOCK, VEC>(s, r, raw[r]);
}

// For element-wise kernels, where any assignment of elements to threads will do: whole
// vectors as above where every pointer is aligned (ALIGNED), else "striped" (item (r, j) of
// thread t is element tile_base + (r * VEC + j) * BLOCK + t), so that each scalar access of a
// warp still reads 32 consecutive elements.
template <int BLOCK, int R, int VEC, bool ALIGNED, class T>
DS_DEV void load_elementwise(const T* __restrict__ p, u64 n, u64 tile_base, T (&x)[R][VEC], T fill) {
  if constexpr (ALIGNED) {
    load_rounds<BLOCK, R, VEC, true>(p, n, tile_base, x, fill);
  } else {
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const u64 i = tile_base + ((u64)r * VEC + j) * BLOCK + threadIdx.x;
        x[r][j] = i < n ? p[i] : fill;
      }
  }
}
template <int BLOCK, int R, int VEC, bool ALIGNED, class T>
DS_DEV void store_elementwise(T* __restrict__ p, u64 n, u64 tile_base, const T (&x)[R][VEC]) {
  if constexpr (ALIGNED) {
    store_rounds<BLOCK, R, VEC, true>(p, n, tile_base, x);
  } else {
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const u64 i = tile_base + ((u64)r * VEC + j) * BLOCK + threadIdx.x;
        if (i < n) p[i] = x[r][j];
      }
  }
}
template <int BLOCK, int VEC, bool ALIGNED> DS_DEV u64 elementwise_index(u64 tile_base, int r, int j) {
  return ALIGNED ? tile_base + ((u64)r * BLOCK + threadIdx.x) * VEC + j
                 : tile_base + ((u64)r * VEC + j) * BLOCK + threadIdx.x;
}

// The global index of item (r, j) of this thread.
template <int BLOCK, int VEC> DS_DEV u64 item_index(u64 tile_base, int r, int j) {
  return tile_base + ((u64)r * BLOCK + threadIdx.x) * VEC + j;
}

}  // namespace ds
