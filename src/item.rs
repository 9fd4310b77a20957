//! The element types of `DeviceSeq<T>` and what the backends need to know about them.

use half::{bf16, f16};
use std::fmt::Debug;

mod sealed {
    pub trait Sealed {}
}

/// The runtime tag of an element type.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalarType {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
    F64,
}

impl ScalarType {
    /// All twelve types.
    pub const ALL: [ScalarType; 12] = [
        ScalarType::I8,
        ScalarType::I16,
        ScalarType::I32,
        ScalarType::I64,
        ScalarType::U8,
        ScalarType::U16,
        ScalarType::U32,
        ScalarType::U64,
        ScalarType::F16,
        ScalarType::BF16,
        ScalarType::F32,
        ScalarType::F64,
    ];

    /// The Rust name, which is also the kernel-name suffix and the CUDA storage type name
    /// (`kernels/prelude.cuh` defines them).
    pub fn name(self) -> &'static str {
        use ScalarType::*;
        match self {
            I8 => "i8",
            I16 => "i16",
            I32 => "i32",
            I64 => "i64",
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            F16 => "f16",
            BF16 => "bf16",
            F32 => "f32",
            F64 => "f64",
        }
    }

    /// The CUDA type values of this type are computed in (`f32` for `f16` and `bf16`).
    pub fn compute_name(self) -> &'static str {
        match self {
            ScalarType::F16 | ScalarType::BF16 => "f32",
            t => t.name(),
        }
    }

    /// The type values of this type are computed in.
    pub fn compute(self) -> ScalarType {
        match self {
            ScalarType::F16 | ScalarType::BF16 => ScalarType::F32,
            t => t,
        }
    }

    /// Size in bytes of one stored element.
    pub fn size(self) -> usize {
        use ScalarType::*;
        match self {
            I8 | U8 => 1,
            I16 | U16 | F16 | BF16 => 2,
            I32 | U32 | F32 => 4,
            I64 | U64 | F64 => 8,
        }
    }

    /// Width in bits of one stored element.
    pub fn bits(self) -> u32 {
        self.size() as u32 * 8
    }

    /// `f16`, `bf16`, `f32` or `f64`.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            ScalarType::F16 | ScalarType::BF16 | ScalarType::F32 | ScalarType::F64
        )
    }

    /// The stored bits of the element whose compute-type value has bits `bits` (rounded to
    /// nearest-even for f16 and bf16).
    pub fn stored_from_compute(self, bits: u64) -> u64 {
        match self {
            ScalarType::F16 => f16::from_f32(f32::from_bits(bits as u32)).to_bits() as u64,
            ScalarType::BF16 => bf16::from_f32(f32::from_bits(bits as u32)).to_bits() as u64,
            _ => bits,
        }
    }

    /// A signed integer type.
    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64
        )
    }
}

/// A type `DeviceSeq<T>` can hold: `i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64`.
///
/// Sealed: the backends know each of these types exactly (their CUDA representation, their
/// identities, how they sort), so no other type can be added from outside the crate.
pub trait Element:
    sealed::Sealed + Copy + Send + Sync + Debug + PartialEq + Default + bytemuck::Pod + 'static
{
    #[doc(hidden)]
    const TYPE: ScalarType;
    /// The host type values are computed in (`f32` for `f16` and `bf16`).
    #[doc(hidden)]
    type Compute: Num;
    #[doc(hidden)]
    fn to_compute(self) -> Self::Compute;
    /// Rounds to nearest-even where `Self` is narrower than its compute type.
    #[doc(hidden)]
    fn from_compute(c: Self::Compute) -> Self;
    /// The stored bits, zero-extended.
    #[doc(hidden)]
    fn to_bits(self) -> u64;
    /// The inverse of `to_bits` (the high bits are ignored).
    #[doc(hidden)]
    fn from_bits(bits: u64) -> Self;
    /// The bits of the value in its compute type (f16/bf16 widened to f32), as kernels take
    /// scalar arguments.
    #[doc(hidden)]
    fn compute_bits(self) -> u64;
    /// The element whose compute-type value has bits `bits`, rounded to nearest-even where
    /// `Self` is narrower (as kernels store results).
    #[doc(hidden)]
    fn from_compute_bits(bits: u64) -> Self;
}

/// Integer element types: the ones with `%`, bitwise operators and shifts.
pub trait Integer: Element {}

/// Float element types (`f16`, `bf16`, `f32`, `f64`): the ones with `sqrt`, `exp` and the
/// other float functions.
pub trait Float: Element {}

/// Index element types for `gather`, `scatter`, `scatter_combine` and `argsort`: `u32` or `u64`.
pub trait Index: Element {
    #[doc(hidden)]
    fn to_u64(self) -> u64;
    #[doc(hidden)]
    fn from_u64(v: u64) -> Self;
}

impl Index for u32 {
    fn to_u64(self) -> u64 {
        self as u64
    }
    fn from_u64(v: u64) -> Self {
        v as u32
    }
}

impl Index for u64 {
    fn to_u64(self) -> u64 {
        self
    }
    fn from_u64(v: u64) -> Self {
        v
    }
}

/// Arithmetic on the host compute types (`i8` … `u64`, `f32`, `f64`), with the semantics of
/// the API: integers wrap, float `min`/`max` ignore a NaN operand. The operators of `Op` are
/// built from these in `op.rs`.
#[doc(hidden)]
pub trait Num: Copy + Send + Sync + PartialEq + PartialOrd + Debug + Default + 'static {
    /// Whether this is `f32` or `f64`.
    const FLOAT: bool;
    /// 0 and 1.
    fn zero() -> Self;
    fn one() -> Self;
    /// The largest and smallest values (`+inf` and `-inf` for floats).
    fn highest() -> Self;
    fn lowest() -> Self;
    /// A quiet NaN (floats; integers give 0).
    fn nan() -> Self;
    /// `-0.0` (floats; integers give 0).
    fn neg_zero() -> Self;
    /// Wrapping for integers.
    fn add(self, b: Self) -> Self;
    fn mul(self, b: Self) -> Self;
    /// The API's min and max (floats: a NaN operand ignored; of equal values the first).
    fn min_of(self, b: Self) -> Self;
    fn max_of(self, b: Self) -> Self;
    /// Bitwise operators (integers; floats return `self`).
    fn and(self, b: Self) -> Self;
    fn or(self, b: Self) -> Self;
    fn xor(self, b: Self) -> Self;
    /// All bits set (integers; floats give 0).
    fn ones() -> Self;
    /// `self as f64`, for histogram and test arithmetic.
    fn as_f64(self) -> f64;
}

macro_rules! num_int {
    ($($t:ty),*) => {$(
        impl Num for $t {
            const FLOAT: bool = false;
            fn zero() -> Self { 0 }
            fn one() -> Self { 1 }
            fn highest() -> Self { <$t>::MAX }
            fn lowest() -> Self { <$t>::MIN }
            fn nan() -> Self { 0 }
            fn neg_zero() -> Self { 0 }
            #[inline]
            fn add(self, b: Self) -> Self { self.wrapping_add(b) }
            #[inline]
            fn mul(self, b: Self) -> Self { self.wrapping_mul(b) }
            #[inline]
            fn min_of(self, b: Self) -> Self { if b < self { b } else { self } }
            #[inline]
            fn max_of(self, b: Self) -> Self { if b > self { b } else { self } }
            #[inline]
            fn and(self, b: Self) -> Self { self & b }
            #[inline]
            fn or(self, b: Self) -> Self { self | b }
            #[inline]
            fn xor(self, b: Self) -> Self { self ^ b }
            fn ones() -> Self { !0 }
            fn as_f64(self) -> f64 { self as f64 }
        }
    )*};
}
num_int!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! num_float {
    ($($t:ty),*) => {$(
        impl Num for $t {
            const FLOAT: bool = true;
            fn zero() -> Self { 0.0 }
            fn one() -> Self { 1.0 }
            fn highest() -> Self { <$t>::INFINITY }
            fn lowest() -> Self { <$t>::NEG_INFINITY }
            fn nan() -> Self { <$t>::NAN }
            fn neg_zero() -> Self { -0.0 }
            #[inline]
            fn add(self, b: Self) -> Self { self + b }
            #[inline]
            fn mul(self, b: Self) -> Self { self * b }
            #[inline]
            fn min_of(self, b: Self) -> Self { float_min(self, b) }
            #[inline]
            fn max_of(self, b: Self) -> Self { float_max(self, b) }
            fn and(self, _: Self) -> Self { self }
            fn or(self, _: Self) -> Self { self }
            fn xor(self, _: Self) -> Self { self }
            fn ones() -> Self { 0.0 }
            fn as_f64(self) -> f64 { self as f64 }
        }
    )*};
}
num_float!(f32, f64);

/// `a.min(b)` as the API defines it: a NaN operand is ignored unless both are NaN; of two
/// equal values the first. The GPU's `ds::min_` in `kernels/prelude.cuh` is the same function.
#[inline]
pub(crate) fn float_min<F: PartialOrd + Copy>(a: F, b: F) -> F {
    #[allow(clippy::eq_op)]
    let a_nan = a != a;
    #[allow(clippy::eq_op)]
    let b_nan = b != b;
    if a_nan {
        b
    } else if b_nan || b >= a {
        a
    } else {
        b
    }
}

/// `a.max(b)` as the API defines it (see `float_min`).
#[inline]
pub(crate) fn float_max<F: PartialOrd + Copy>(a: F, b: F) -> F {
    #[allow(clippy::eq_op)]
    let a_nan = a != a;
    #[allow(clippy::eq_op)]
    let b_nan = b != b;
    if a_nan {
        b
    } else if b_nan || b <= a {
        a
    } else {
        b
    }
}

macro_rules! element_plain {
    ($($t:ty => $tag:ident, $bits:ty, $kind:ident);* $(;)?) => {$(
        impl sealed::Sealed for $t {}
        impl $kind for $t {}
        impl Element for $t {
            const TYPE: ScalarType = ScalarType::$tag;
            type Compute = $t;
            #[inline]
            fn to_compute(self) -> $t {
                self
            }
            #[inline]
            fn from_compute(c: $t) -> Self {
                c
            }
            #[inline]
            fn to_bits(self) -> u64 {
                bytemuck::cast::<$t, $bits>(self) as u64
            }
            #[inline]
            fn from_bits(bits: u64) -> Self {
                bytemuck::cast::<$bits, $t>(bits as $bits)
            }
            fn compute_bits(self) -> u64 {
                Element::to_bits(self)
            }
            fn from_compute_bits(bits: u64) -> Self {
                <Self as Element>::from_bits(bits)
            }
        }
    )*};
}
element_plain! {
    i8 => I8, u8, Integer;
    i16 => I16, u16, Integer;
    i32 => I32, u32, Integer;
    i64 => I64, u64, Integer;
    u8 => U8, u8, Integer;
    u16 => U16, u16, Integer;
    u32 => U32, u32, Integer;
    u64 => U64, u64, Integer;
    f32 => F32, u32, Float;
    f64 => F64, u64, Float;
}

macro_rules! element_half {
    ($($t:ty => $tag:ident);*) => {$(
        impl sealed::Sealed for $t {}
        impl Float for $t {}
        impl Element for $t {
            const TYPE: ScalarType = ScalarType::$tag;
            type Compute = f32;
            #[inline]
            fn to_compute(self) -> f32 {
                self.to_f32()
            }
            #[inline]
            fn from_compute(c: f32) -> Self {
                <$t>::from_f32(c)
            }
            #[inline]
            fn to_bits(self) -> u64 {
                <$t>::to_bits(self) as u64
            }
            #[inline]
            fn from_bits(bits: u64) -> Self {
                <$t>::from_bits(bits as u16)
            }
            fn compute_bits(self) -> u64 {
                self.to_f32().to_bits() as u64
            }
            fn from_compute_bits(bits: u64) -> Self {
                <$t>::from_f32(f32::from_bits(bits as u32))
            }
        }
    )*};
}
element_half!(f16 => F16; bf16 => BF16);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_round_trip() {
        assert_eq!(i8::from_bits((-3i8).to_bits()), -3);
        assert_eq!(
            f16::from_bits(f16::from_f32(1.5).to_bits()),
            f16::from_f32(1.5)
        );
        assert_eq!((-1i16).to_bits(), 0xffff);
    }
}
