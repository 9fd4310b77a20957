// Counter-based random sequences: Philox4x32-10 (Salmon et al., SC 2011; Random123), as
// src/random.rs defines them, element i a pure function of the seed and i. A random leaf of a
// source computes its elements where they are read; `random_vec` computes each Philox block
// once for the elements that share it (4 u32 or f32 values, 2 u64 or f64 values).
#pragma once
#include "prelude.cuh"

namespace ds {

// The 64-bit product of two 32-bit words: one IMAD.WIDE.U32. (Written as `(u64)a * b`, the
// front end merged Philox's xors into 64-bit ones and multiplied in 64 bits, which ptxas
// compiles to the wide multiply and an add of the zero high product: 20 instructions more a
// Philox block.)
DS_DEV u64 mul_wide(u32 a, u32 b) {
  u64 r;
  asm("mul.wide.u32 %0, %1, %2;" : "=l"(r) : "r"(a), "r"(b));
  return r;
}

// The four words of Philox4x32-10 of the counter (c0, c1, 0, 0) with the key of `seed`.
DS_DEV void philox4x32_10(u64 seed, u64 counter, u32 (&w)[4]) {
  u32 c0 = (u32)counter, c1 = (u32)(counter >> 32), c2 = 0, c3 = 0;
  u32 k0 = (u32)seed, k1 = (u32)(seed >> 32);
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    // One 32 x 32 -> 64-bit multiplication gives both halves (IMAD.WIDE).
    const u64 p0 = mul_wide(0xD2511F53u, c0), p1 = mul_wide(0xCD9E8D57u, c2);
    const u32 lo0 = (u32)p0, hi0 = (u32)(p0 >> 32);
    const u32 lo1 = (u32)p1, hi1 = (u32)(p1 >> 32);
    const u32 n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  w[0] = c0;
  w[1] = c1;
  w[2] = c2;
  w[3] = c3;
}

// Random kinds (src/random.rs `Rand::code`).
enum { RAND_BITS = 0, RAND_UNIFORM = 1, RAND_NORMAL = 2 };

// The uniform in [0, 1) of 32 random bits, for an element of type T (f32, f16 or bf16 widths).
template <class T> DS_DEV f32 uniform32(u32 x) {
  if constexpr (same<T, f16>::value) return (f32)(x >> 21) * (1.0f / 2048.0f);
  else if constexpr (same<T, bf16>::value) return (f32)(x >> 24) * (1.0f / 256.0f);
  else return (f32)(x >> 8) * (1.0f / 16777216.0f);
}
DS_DEV f64 uniform64(u64 x) { return (f64)(x >> 11) * (1.0 / 9007199254740992.0); }

// Box-Muller: the normal of the uniforms of `x` and `y` (the cosine's, or the sine's where
// `odd`). Outlined in the quick form: sin, cos and log inlined in every item of a tile are most
// of a kernel's code.
DS_OUTLINE f64 normal64(u64 x, u64 y, bool odd) {
  const f64 u1 = 1.0 - uniform64(x);
  const f64 u2 = uniform64(y);
  const f64 r = sqrt(-2.0 * log(u1));
  const f64 a = u2 * 6.283185307179586;
  return r * (odd ? sin(a) : cos(a));
}
template <class T> DS_OUTLINE f32 normal32(u32 x, u32 y, bool odd) {
  const f32 u1 = 1.0f - uniform32<T>(x);
  const f32 u2 = uniform32<T>(y);
  const f32 r = sqrtf(-2.0f * logf(u1));
  const f32 a = u2 * 6.28318548f;
  return r * (odd ? sinf(a) : cosf(a));
}

// Elements of one Philox block: 2 for 8-byte bits and uniforms and for f64 normals, else 4.
template <class T, int KIND> struct random_traits {
  static constexpr int PER_BLOCK = sizeof(T) == 8 ? 2 : 4;
};

// Element e of the sequence given its block's words `w` (the block of e / PER_BLOCK).
template <class T, int KIND> DS_DEV compute_t<T> random_of(const u32 (&w)[4], u64 e) {
  constexpr int PB = random_traits<T, KIND>::PER_BLOCK;
  const int m = (int)(e % PB);
  if constexpr (KIND == RAND_BITS) {
    if constexpr (sizeof(T) == 8) return (T)((u64)w[2 * m] | (u64)w[2 * m + 1] << 32);
    else return (T)w[m];
  } else if constexpr (KIND == RAND_UNIFORM) {
    if constexpr (same<T, f64>::value) return uniform64((u64)w[2 * m] | (u64)w[2 * m + 1] << 32);
    else return uniform32<T>(w[m]);
  } else {
    // Box-Muller on the pair of uniforms (2j, 2j + 1) of j = e / 2; odd e takes the sine.
    const bool odd = (e & 1) != 0;
    if constexpr (same<T, f64>::value) {
      return normal64((u64)w[0] | (u64)w[1] << 32, (u64)w[2] | (u64)w[3] << 32, odd);
    } else {
      const int p = m & 2;
      return normal32<T>(w[p], w[p + 1], odd);
    }
  }
}

// Element e.
template <class T, int KIND> DS_DEV compute_t<T> random_at(u64 seed, u64 e) {
  u32 w[4];
  philox4x32_10(seed, e / random_traits<T, KIND>::PER_BLOCK, w);
  return random_of<T, KIND>(w, e);
}

// Elements e .. e + VEC - 1, each block computed once. Where the run starts a block and
// holds whole blocks (a vector of a tile: the common case), every element's word is known at
// compile time, so the words stay in registers without selects or branches.
template <class T, int KIND, int VEC>
DS_DEV void random_vec(u64 seed, u64 e, compute_t<T> (&v)[VEC]) {
  constexpr int PB = random_traits<T, KIND>::PER_BLOCK;
  if constexpr (VEC % PB == 0) {
    if (e % PB == 0) {
      const u64 c = e / PB;
#pragma unroll
      for (int b = 0; b < VEC / PB; ++b) {
        u32 w[4];
        philox4x32_10(seed, c + b, w);
        // random_of reads only e % PB and e % 2 of its index: m stands for e + b * PB + m.
#pragma unroll
        for (int m = 0; m < PB; ++m) v[b * PB + m] = random_of<T, KIND>(w, (u64)m);
      }
      return;
    }
  }
  u32 w[4];
#pragma unroll
  for (int j = 0; j < VEC; ++j) {
    if (j == 0 || (e + j) % PB == 0) philox4x32_10(seed, (e + j) / PB, w);
    v[j] = random_of<T, KIND>(w, e + j);
  }
}

}  // namespace ds
