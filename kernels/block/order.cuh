// Ordered bits: the bits of a key whose unsigned order is the key order. Signed integers
// have the sign bit flipped; floats follow total_cmp (negative: all bits flipped; positive:
// sign bit set), so -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN.
#pragma once
#include "block/load.cuh"

namespace ds {

template <class T> struct is_float_key { static constexpr bool value = false; };
template <> struct is_float_key<f16> { static constexpr bool value = true; };
template <> struct is_float_key<bf16> { static constexpr bool value = true; };
template <> struct is_float_key<f32> { static constexpr bool value = true; };
template <> struct is_float_key<f64> { static constexpr bool value = true; };
template <class T> struct is_signed_key { static constexpr bool value = false; };
template <> struct is_signed_key<i8> { static constexpr bool value = true; };
template <> struct is_signed_key<i16> { static constexpr bool value = true; };
template <> struct is_signed_key<i32> { static constexpr bool value = true; };
template <> struct is_signed_key<i64> { static constexpr bool value = true; };

template <class T> struct key_bits {
  typedef typename word_of<sizeof(T)>::T U;
  static constexpr U SIGN = (U)((U)1 << (sizeof(T) * 8 - 1));
  static DS_DEV U raw(T x) {
    U u;
    memcpy(&u, &x, sizeof(T));
    return u;
  }
  static DS_DEV T from_raw(U u) {
    T x;
    memcpy(&x, &u, sizeof(T));
    return x;
  }
  // Ordered bits: unsigned comparison of them is the key order.
  static DS_DEV U order(U b) {
    if constexpr (is_float_key<T>::value) return (b & SIGN) ? (U)~b : (U)(b | SIGN);
    else if constexpr (is_signed_key<T>::value) return (U)(b ^ SIGN);
    else return b;
  }
  static DS_DEV U unorder(U b) {
    if constexpr (is_float_key<T>::value) return (b & SIGN) ? (U)(b ^ SIGN) : (U)~b;
    else if constexpr (is_signed_key<T>::value) return (U)(b ^ SIGN);
    else return b;
  }
};

}  // namespace ds
