// devseq kernel prelude: fixed-width types, f16/bf16 storage, limits, arithmetic with the
// semantics the crate documents (integers wrap, division by zero is defined, float min/max
// ignore a NaN operand), casts with Rust's `as` semantics, and the operator functors of Op.
// Needs no CUDA header: NVRTC alone compiles it.
#pragma once

typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef float f32;
typedef double f64;

// 16-bit float storage; values are computed in f32.
struct f16 { u16 bits; };
struct bf16 { u16 bits; };

#define DS_DEV __device__ __forceinline__
// A function that the quick form (`DS_QUICK`, below) calls where the optimized form inlines it:
// for large bodies (the math library's transcendental functions) that a kernel would otherwise
// copy into every item of every load path. The same bits (the compiler contracts no
// multiply-add, `--fmad=false`), far less code for the quick compile.
#ifdef DS_QUICK
#define DS_OUTLINE __device__ __noinline__
#else
#define DS_OUTLINE DS_DEV
#endif

namespace ds {

// Whether this is the quick form of a kernel (the run-time compiler defines DS_QUICK for the
// form compiled with NVRTC's fast-compile level, used until the optimized form is ready):
// kernels may then take a shorter path that gives the same bits (the look-back's one window).
#ifdef DS_QUICK
constexpr bool QUICK = true;
#else
constexpr bool QUICK = false;
#endif

template <class A, class B> struct same { static constexpr bool value = false; };
template <class A> struct same<A, A> { static constexpr bool value = true; };

// ---- type traits ----------------------------------------------------------------------
template <class T> struct traits;
#define DS_INT_TRAITS(T, UT, WT, SIGNED, MINV, MAXV)                              \
  template <> struct traits<T> {                                                  \
    typedef UT U;  /* unsigned type of the same width */                          \
    typedef WT W;  /* unsigned type wide enough for products without promotion */ \
    static constexpr bool is_float = false;                                       \
    static constexpr bool is_signed = SIGNED;                                     \
    static constexpr int bits = sizeof(T) * 8;                                    \
    static DS_DEV T min() { return MINV; }                                        \
    static DS_DEV T max() { return MAXV; }                                        \
  };
DS_INT_TRAITS(i8, u8, u32, true, (i8)(-128), (i8)127)
DS_INT_TRAITS(i16, u16, u32, true, (i16)(-32768), (i16)32767)
DS_INT_TRAITS(i32, u32, u32, true, (i32)(-2147483647 - 1), (i32)2147483647)
DS_INT_TRAITS(i64, u64, u64, true, (i64)(-9223372036854775807LL - 1), (i64)9223372036854775807LL)
DS_INT_TRAITS(u8, u8, u32, false, (u8)0, (u8)255)
DS_INT_TRAITS(u16, u16, u32, false, (u16)0, (u16)65535)
DS_INT_TRAITS(u32, u32, u32, false, 0u, 4294967295u)
DS_INT_TRAITS(u64, u64, u64, false, 0ull, 18446744073709551615ull)
#undef DS_INT_TRAITS
template <> struct traits<f32> {
  typedef u32 U;
  static constexpr bool is_float = true;
  static constexpr bool is_signed = true;
  static constexpr int bits = 32;
};
template <> struct traits<f64> {
  typedef u64 U;
  static constexpr bool is_float = true;
  static constexpr bool is_signed = true;
  static constexpr int bits = 64;
};

// ---- bit casts ------------------------------------------------------------------------
DS_DEV f32 f32_from_bits(u32 b) { return __uint_as_float(b); }
DS_DEV u32 f32_bits(f32 x) { return __float_as_uint(x); }
DS_DEV f64 f64_from_bits(u64 b) { return __longlong_as_double((long long)b); }
DS_DEV u64 f64_bits(f64 x) { return (u64)__double_as_longlong(x); }
// A lazy source's constant i where its constants are in device memory (more than the kernel's
// argument words hold): loaded where it is used. As plain loads of a read-only array the
// compiler hoisted all of them to the kernel's start and kept them on the stack (600
// constants of a 200-step map: 4.8 KB a thread, 6 KB of spill stores).
DS_DEV u64 ld_param(const u64* p) {
  u64 v;
  asm volatile("ld.global.nc.u64 %0, [%1];" : "=l"(v) : "l"(p));
  return v;
}

// The value of compute type C whose bits (zero-extended) are `b`.
template <class C> DS_DEV C from_bits(u64 b) {
  if constexpr (same<C, f32>::value) return f32_from_bits((u32)b);
  else if constexpr (same<C, f64>::value) return f64_from_bits(b);
  else return (C)(typename traits<C>::U)b;
}
template <class C> DS_DEV u64 to_bits(C x) {
  if constexpr (same<C, f32>::value) return f32_bits(x);
  else if constexpr (same<C, f64>::value) return f64_bits(x);
  else return (u64)(typename traits<C>::U)x;
}

// Row i of a column of n rows for an indexed read (`Kind::At`): a row past the end reads the
// last (the host checks the rows users see; this keeps every read inside the column).
DS_DEV u64 clamp_row(u64 i, u64 n) { return i < n ? i : n - 1; }

// ---- f16 / bf16 conversions (round to nearest-even) ---------------------------------------
// Widening is exact, NaNs included: sign and payload kept, a signaling NaN stays signaling
// (the hardware's cvt would give its one canonical NaN), so that `to_bits` of a loaded element
// gives its stored bits. Narrowing a NaN keeps the sign and the top mantissa bits and sets the
// quiet bit, as the host's `half` crate (and x86's F16C) does.
DS_DEV f32 f16_to_f32(f16 h) {
  const u32 b = h.bits;
  if ((b & 0x7c00u) == 0x7c00u && (b & 0x3ffu) != 0)
    return f32_from_bits(((b & 0x8000u) << 16) | 0x7f800000u | ((b & 0x3ffu) << 13));
  f32 r;
  asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(h.bits));
  return r;
}
DS_DEV f16 f32_to_f16(f32 x) {
  const u32 b = f32_bits(x);
  f16 h;
  if ((b & 0x7fffffffu) > 0x7f800000u) {
    h.bits = (u16)(((b >> 16) & 0x8000u) | 0x7e00u | ((b & 0x7fffffu) >> 13));
    return h;
  }
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(x));
  return h;
}
DS_DEV f32 bf16_to_f32(bf16 h) { return f32_from_bits((u32)h.bits << 16); }
// As the `half` crate's bf16::from_f32: NaN keeps its top bits and is made quiet.
DS_DEV bf16 f32_to_bf16(f32 x) {
  u32 b = f32_bits(x);
  bf16 h;
  if ((b & 0x7fffffffu) > 0x7f800000u) {
    h.bits = (u16)((b >> 16) | 0x40u);
  } else {
    h.bits = (u16)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
  }
  return h;
}

// Storage type T <-> compute type (f32 for f16/bf16, else T itself).
template <class T> struct num {
  typedef T C;
  static DS_DEV C load(T x) { return x; }
  static DS_DEV T store(C x) { return x; }
};
template <> struct num<f16> {
  typedef f32 C;
  static DS_DEV C load(f16 x) { return f16_to_f32(x); }
  static DS_DEV f16 store(C x) { return f32_to_f16(x); }
};
template <> struct num<bf16> {
  typedef f32 C;
  static DS_DEV C load(bf16 x) { return bf16_to_f32(x); }
  static DS_DEV bf16 store(C x) { return f32_to_bf16(x); }
};
template <class T> using compute_t = typename num<T>::C;
// The compute value of the element of type T whose stored bits are the low bits of b (an
// f16/bf16 widened exactly, NaN payloads kept): `Expr::from_bits`.
template <class T> DS_DEV compute_t<T> from_stored(u64 b) {
  if constexpr (same<T, f16>::value) return f16_to_f32(f16{(u16)b});
  else if constexpr (same<T, bf16>::value) return bf16_to_f32(bf16{(u16)b});
  else return from_bits<T>(b);
}
// The type in which reductions, scans and segmented combinations combine elements of T: its
// compute type, but 32 bits for 1- and 2-byte integers (sign- or zero-extended). Every Op
// gives the same low bits either way (add, mul, and, or, xor are exact modulo 2^k; min and
// max of extended values are the extended min and max), and the narrow form re-extended its
// operands at every step: ptxas spilled up to 224 bytes a thread in the small-integer min/max
// scans. The wide neutral elements are neutral for the extended values too; no kernel stores
// a neutral element.
template <class T> struct wide { typedef compute_t<T> C; };
template <> struct wide<i8> { typedef i32 C; };
template <> struct wide<u8> { typedef u32 C; };
template <> struct wide<i16> { typedef i32 C; };
template <> struct wide<u16> { typedef u32 C; };
template <class T> using wide_t = typename wide<T>::C;
template <class T> DS_DEV compute_t<T> to_c(T x) { return num<T>::load(x); }
template <class T> DS_DEV T from_c(compute_t<T> x) { return num<T>::store(x); }
DS_DEV f32 round_f16(f32 x) { return f16_to_f32(f32_to_f16(x)); }
DS_DEV f32 round_bf16(f32 x) { return bf16_to_f32(f32_to_bf16(x)); }
// The stored bits that `to_bits` reports for a compute value of an f16 (bf16) element: a NaN
// whose payload fits in the narrow type keeps it, quiet bit included (the exact inverse of the
// widening of a loaded NaN); any other value as the store rounds it.
DS_DEV u64 f16_bits(f32 x) {
  const u32 b = f32_bits(x);
  if ((b & 0x7fffffffu) > 0x7f800000u && (b & 0x7fe000u) != 0)
    return ((b >> 16) & 0x8000u) | 0x7c00u | ((b & 0x7fffffu) >> 13);
  return f32_to_f16(x).bits;
}
DS_DEV u64 bf16_bits(f32 x) {
  const u32 b = f32_bits(x);
  if ((b & 0x7fffffffu) > 0x7f800000u && (b & 0x7f0000u) != 0) return b >> 16;
  return f32_to_bf16(x).bits;
}
// A value passed through (read, not computed: a gather, a select of elements) stored as the
// element it was read from, a signaling f16/bf16 NaN included.
template <class T> DS_DEV T store_passed(compute_t<T> x) {
  if constexpr (same<T, f16>::value) return f16{(u16)f16_bits(x)};
  else if constexpr (same<T, bf16>::value) return bf16{(u16)bf16_bits(x)};
  else return from_c<T>(x);
}

// The one NaN that a computed float value becomes (what Rust's f32::NAN and f64::NAN are), so
// that a value's bits do not depend on how the compiler arranged the arithmetic that made it
// (the sign of a NaN result is not specified, and differs between two instruction selections).
// Written in PTX: a compiler may take `x != x ? nan : x` for `x`.
DS_DEV f32 canon(f32 x) {
  f32 r;
  asm("{ .reg .pred p; setp.nan.f32 p, %1, %1; selp.f32 %0, 0f7FC00000, %1, p; }" : "=f"(r) : "f"(x));
  return r;
}
DS_DEV f64 canon(f64 x) {
  f64 r;
  asm("{ .reg .pred p; setp.nan.f64 p, %1, %1; selp.f64 %0, 0d7FF8000000000000, %1, p; }"
      : "=d"(r) : "d"(x));
  return r;
}
template <class C> DS_DEV C canon(C x) { return x; }

// Whether two stored elements have the same bits (head flags compare bits: -0.0 differs from
// +0.0, a NaN equals a NaN of the same bits).
template <int BYTES> struct uint_of;
template <> struct uint_of<1> { typedef u8 T; };
template <> struct uint_of<2> { typedef u16 T; };
template <> struct uint_of<4> { typedef u32 T; };
template <> struct uint_of<8> { typedef u64 T; };
template <class T> DS_DEV bool same_bits(T a, T b) {
  typename uint_of<sizeof(T)>::T x, y;
  memcpy(&x, &a, sizeof(T));
  memcpy(&y, &b, sizeof(T));
  return x == y;
}

template <class T> DS_DEV bool is_nan(T x) {
  if constexpr (traits<T>::is_float) return x != x;
  else return false;
}

// ---- arithmetic with the API's semantics (on compute types) --------------------------------
template <class C> DS_DEV C add(C a, C b) {
  if constexpr (traits<C>::is_float) return a + b;
  else {
    typedef typename traits<C>::U U;
    typedef typename traits<C>::W W;
    return (C)(U)((W)(U)a + (W)(U)b);
  }
}
template <class C> DS_DEV C sub(C a, C b) {
  if constexpr (traits<C>::is_float) return a - b;
  else {
    typedef typename traits<C>::U U;
    typedef typename traits<C>::W W;
    return (C)(U)((W)(U)a - (W)(U)b);
  }
}
template <class C> DS_DEV C mul(C a, C b) {
  if constexpr (traits<C>::is_float) return a * b;
  else {
    typedef typename traits<C>::U U;
    typedef typename traits<C>::W W;
    return (C)(U)((W)(U)a * (W)(U)b);
  }
}
template <class C> DS_DEV C neg(C a) {
  if constexpr (traits<C>::is_float) return -a;
  else return sub<C>((C)0, a);
}
// Whether 64-bit operands a and b both lie in [0, 2^32), where the 32-bit division gives the
// same quotient and remainder: the GPU has no divider, and the 64-bit routine costs several
// times the 32-bit one (row numbers of a sequence, `i % cols`, are the common case).
template <class C> DS_DEV bool narrow_operands(C a, C b) {
  static_assert(sizeof(C) == 8, "64-bit operands");
  return (((u64)a | (u64)b) >> 32) == 0;
}
// The quotient and remainder of 8-byte integers, past the special cases of `div` and `rem`: the
// quick form calls them rather than inlining them (with the 64-bit routine, the GPU having no
// divider, and the 32-bit one beside it, they were most of the code of a long expression).
template <class C> DS_OUTLINE C wide_quotient(C a, C b) {
  if (narrow_operands(a, b)) return (C)((u32)a / (u32)b);
  return (C)(a / b);
}
template <class C> DS_OUTLINE C wide_remainder(C a, C b) {
  if (narrow_operands(a, b)) return (C)((u32)a % (u32)b);
  return (C)(a % b);
}
// Integer division by zero gives 0; MIN / -1 wraps to MIN.
template <class C> DS_DEV C div(C a, C b) {
  if constexpr (traits<C>::is_float) return a / b;
  else {
    if (b == (C)0) return (C)0;
    if constexpr (traits<C>::is_signed) {
      if (a == traits<C>::min() && b == (C)(-1)) return a;
    }
    if constexpr (sizeof(C) == 8) return wide_quotient(a, b);
    else return (C)(a / b);
  }
}
// Integer remainder by zero gives the dividend; MIN % -1 is 0.
template <class C> DS_DEV C rem(C a, C b) {
  if (b == (C)0) return a;
  if constexpr (traits<C>::is_signed) {
    if (b == (C)(-1)) return (C)0;
  }
  if constexpr (sizeof(C) == 8) return wide_remainder(a, b);
  else return (C)(a % b);
}
// Division of u32 or u64 values by a divisor that a loop does not change (`fold_range`): its
// reciprocal is made once, before the loop (`divider`), and each quotient is then a
// multiply-high, an add and two shifts, where the GPU's division is a routine of dozens of
// instructions. Granlund and Montgomery's method for every divisor from 1: with
// l = ceil(log2 d) and m = floor(2^N (2^l - d) / d) + 1, the quotient of a is
// (t + ((a - t) >> min(l, 1))) >> max(l - 1, 0), t = mulhi(m, a); exactly a / d. A divisor
// of 0 keeps the semantics of `div` and `rem`.
template <class C> struct Divider {
  C d, m;
  u32 s1, s2;
};
template <class C> DS_DEV Divider<C> divider(C d) {
  static_assert(sizeof(C) >= 4 && !traits<C>::is_signed, "u32 or u64 divisors");
  Divider<C> r{d, 0, 0, 0};
  if (d == 0) return r;
  const u32 l = sizeof(C) == 8 ? 64 - __clzll((long long)(d - 1)) : 32 - __clz((int)(d - 1));
  const C below = (l == traits<C>::bits ? (C)0 : (C)((C)1 << l)) - d;  // 2^l - d, mod 2^N
  if constexpr (sizeof(C) == 8) {
    // floor(below 2^64 / d), below < d, by long division (once before the loop).
    u64 q = 0, rest = below;
#pragma unroll 1
    for (int k = 0; k < 64; ++k) {
      const bool carry = (rest >> 63) != 0;
      rest <<= 1;
      q <<= 1;
      if (carry || rest >= d) {
        rest -= d;
        q |= 1;
      }
    }
    r.m = q + 1;
  } else {
    r.m = (C)((((u64)below) << 32) / d) + 1;
  }
  r.s1 = l < 1 ? l : 1;
  r.s2 = l > 0 ? l - 1 : 0;
  return r;
}
template <class C> DS_DEV C quotient_by(C a, const Divider<C>& v) {
  C t;
  if constexpr (sizeof(C) == 8) t = __umul64hi(v.m, a);
  else t = __umulhi(v.m, a);
  return (t + ((a - t) >> v.s1)) >> v.s2;
}
template <class C> DS_DEV C div_by(C a, const Divider<C>& v) {
  return v.d == 0 ? (C)0 : quotient_by(a, v);
}
template <class C> DS_DEV C rem_by(C a, const Divider<C>& v) {
  return v.d == 0 ? a : (C)(a - quotient_by(a, v) * v.d);
}
template <class C> DS_DEV C bit_and(C a, C b) { return (C)(a & b); }
template <class C> DS_DEV C bit_or(C a, C b) { return (C)(a | b); }
template <class C> DS_DEV C bit_xor(C a, C b) { return (C)(a ^ b); }
template <class C> DS_DEV C bit_not(C a) { return (C)(~(typename traits<C>::U)a); }
// Shifts take the amount modulo the bit width; right shifts of signed values are arithmetic.
template <class C> DS_DEV C shl(C a, u32 s) {
  typedef typename traits<C>::U U;
  typedef typename traits<C>::W W;
  return (C)(U)((W)(U)a << (s & (traits<C>::bits - 1)));
}
template <class C> DS_DEV C shr(C a, u32 s) {
  typedef typename traits<C>::U U;
  s &= traits<C>::bits - 1;
  if constexpr (traits<C>::is_signed) {
    if constexpr (sizeof(C) < 4) return (C)((i32)a >> s);
    else return (C)(a >> s);
  } else {
    return (C)((typename traits<C>::W)(U)a >> s);
  }
}
// `b` where b < a (LT) or b > a (!LT), else `a`, for floats, as PTX the optimiser cannot
// see through: written in C++ NVRTC turns the NaN checks and this select into one FMNMX
// instruction, which takes -0.0 as below +0.0 and so disagrees with the host on signed zeros.
template <bool LT> DS_DEV f32 pick(f32 a, f32 b) {
  f32 r;
  if constexpr (LT)
    asm("{ .reg .pred p; setp.lt.f32 p, %2, %1; selp.f32 %0, %2, %1, p; }" : "=f"(r) : "f"(a), "f"(b));
  else
    asm("{ .reg .pred p; setp.gt.f32 p, %2, %1; selp.f32 %0, %2, %1, p; }" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
template <bool LT> DS_DEV f64 pick(f64 a, f64 b) {
  f64 r;
  if constexpr (LT)
    asm("{ .reg .pred p; setp.lt.f64 p, %2, %1; selp.f64 %0, %2, %1, p; }" : "=d"(r) : "d"(a), "d"(b));
  else
    asm("{ .reg .pred p; setp.gt.f64 p, %2, %1; selp.f64 %0, %2, %1, p; }" : "=d"(r) : "d"(a), "d"(b));
  return r;
}

// min/max: for floats a NaN operand is ignored unless both are NaN; of equal values the first
// (the host's float_min/float_max are the same functions).
template <class C> DS_DEV C min_(C a, C b) {
  if constexpr (traits<C>::is_float) {
    if (a != a) return b;
    if (b != b) return a;
    return pick<true>(a, b);
  }
  return (b < a) ? b : a;
}
template <class C> DS_DEV C max_(C a, C b) {
  if constexpr (traits<C>::is_float) {
    if (a != a) return b;
    if (b != b) return a;
    return pick<false>(a, b);
  }
  return (b > a) ? b : a;
}

// Float functions (f32 or f64 overloads).
DS_DEV f32 fabs_(f32 x) { return fabsf(x); }
DS_DEV f64 fabs_(f64 x) { return fabs(x); }
DS_DEV f32 sqrt_(f32 x) { return sqrtf(x); }
DS_DEV f64 sqrt_(f64 x) { return sqrt(x); }
DS_DEV f32 exp_(f32 x) { return expf(x); }
DS_DEV f64 exp_(f64 x) { return exp(x); }
DS_DEV f32 ln_(f32 x) { return logf(x); }
DS_DEV f64 ln_(f64 x) { return log(x); }
DS_DEV f32 sin_(f32 x) { return sinf(x); }
DS_DEV f64 sin_(f64 x) { return sin(x); }
DS_DEV f32 cos_(f32 x) { return cosf(x); }
DS_DEV f64 cos_(f64 x) { return cos(x); }
DS_DEV f32 tanh_(f32 x) { return tanhf(x); }
DS_DEV f64 tanh_(f64 x) { return tanh(x); }
DS_DEV f32 floor_(f32 x) { return floorf(x); }
DS_DEV f64 floor_(f64 x) { return floor(x); }
DS_DEV f32 ceil_(f32 x) { return ceilf(x); }
DS_DEV f64 ceil_(f64 x) { return ceil(x); }
DS_DEV f32 round_(f32 x) { return roundf(x); }
DS_DEV f64 round_(f64 x) { return round(x); }
DS_DEV f32 pow_(f32 x, f32 y) { return powf(x, y); }
DS_DEV f64 pow_(f64 x, f64 y) { return pow(x, y); }

// ---- casts with Rust's `as` semantics (compute type to compute type) ------------------------
// Float to integer truncates toward zero and saturates; NaN gives 0.
template <class To, class From> DS_DEV To cast(From x) {
  if constexpr (!traits<To>::is_float && traits<From>::is_float) {
    constexpr int b = traits<To>::bits;
    if (x != x) return (To)0;
    if constexpr (traits<To>::is_signed) {
      const From hi = (From)(1ull << (b - 1));  // 2^(b-1), exact
      if (x >= hi) return traits<To>::max();
      if (x <= -hi) return traits<To>::min();
      return (To)x;
    } else {
      const From hi = (From)(1ull << (b - 1)) * (From)2;  // 2^b, exact
      if (x >= hi) return traits<To>::max();
      if (x <= (From)(-1)) return (To)0;
      return (To)x;
    }
  } else {
    return (To)x;
  }
}

// ---- operator functors of Op ----------------------------------------------------------
// apply(a, b) is `a op b`; neutral() is an element e with apply(e, x) == apply(x, e) == x bit
// for bit (-0.0 for float Add, NaN for float Min/Max: they ignore NaN operands).
struct OpAdd {
  template <class C> static DS_DEV C apply(C a, C b) { return add<C>(a, b); }
  template <class C> static DS_DEV C neutral() {
    if constexpr (traits<C>::is_float) return (C)(-0.0);
    else return (C)0;
  }
};
struct OpMul {
  template <class C> static DS_DEV C apply(C a, C b) { return mul<C>(a, b); }
  template <class C> static DS_DEV C neutral() { return (C)1; }
};
// Reductions and scans combine float Min/Max with the hardware's fminf/fmaxf: NaN-ignoring
// like min_/max_, one instruction, deterministic; only which zero of +-0 wins may differ from
// min_/max_ (which `map` keeps, to agree with the host bit for bit).
DS_DEV f32 hw_min(f32 a, f32 b) { return fminf(a, b); }
DS_DEV f64 hw_min(f64 a, f64 b) { return fmin(a, b); }
DS_DEV f32 hw_max(f32 a, f32 b) { return fmaxf(a, b); }
DS_DEV f64 hw_max(f64 a, f64 b) { return fmax(a, b); }

struct OpMin {
  template <class C> static DS_DEV C apply(C a, C b) {
    if constexpr (traits<C>::is_float) return hw_min(a, b);
    else return min_<C>(a, b);
  }
  template <class C> static DS_DEV C neutral() {
    if constexpr (same<C, f32>::value) return f32_from_bits(0x7fc00000u);
    else if constexpr (same<C, f64>::value) return f64_from_bits(0x7ff8000000000000ull);
    else return traits<C>::max();
  }
};
struct OpMax {
  template <class C> static DS_DEV C apply(C a, C b) {
    if constexpr (traits<C>::is_float) return hw_max(a, b);
    else return max_<C>(a, b);
  }
  template <class C> static DS_DEV C neutral() {
    if constexpr (same<C, f32>::value) return f32_from_bits(0x7fc00000u);
    else if constexpr (same<C, f64>::value) return f64_from_bits(0x7ff8000000000000ull);
    else return traits<C>::min();
  }
};
struct OpAnd {
  template <class C> static DS_DEV C apply(C a, C b) { return bit_and<C>(a, b); }
  template <class C> static DS_DEV C neutral() { return bit_not<C>((C)0); }
};
struct OpOr {
  template <class C> static DS_DEV C apply(C a, C b) { return bit_or<C>(a, b); }
  template <class C> static DS_DEV C neutral() { return (C)0; }
};
struct OpXor {
  template <class C> static DS_DEV C apply(C a, C b) { return bit_xor<C>(a, b); }
  template <class C> static DS_DEV C neutral() { return (C)0; }
};

// An Op as a combining function object over compute type C (what the block algorithms take).
template <class Op, class C> struct Combine {
  typedef C V;
  DS_DEV V operator()(V a, V b) const { return Op::template apply<C>(a, b); }
  static DS_DEV V neutral() { return Op::template neutral<C>(); }
};

// ---- small helpers ----------------------------------------------------------------------
template <class T> DS_DEV T min_u(T a, T b) { return a < b ? a : b; }
constexpr int WARP = 32;
constexpr u32 FULL = 0xffffffffu;
DS_DEV int lane_id() { return (int)(threadIdx.x & 31u); }
DS_DEV int warp_id() { return (int)(threadIdx.x >> 5); }

}  // namespace ds
