//! The item types of `DeviceSeq<T>` and what the backends need to know about them: the thirteen
//! element types (`Element`), tuples of 2 to 8 of them (`Item`), and the symbolic values that
//! closures see (`Expr`, and `Exprs` for an item's tuple of them; their operations and the
//! tracing are in `src/expr/`).

use half::{bf16, f16};
use std::fmt::Debug;
use std::marker::PhantomData;

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// Seals `expr::Condition` (the conditions of `Expr::select`).
#[doc(hidden)]
pub trait ConditionSealed {}

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
    /// `bool`: stored as one byte, 0 or 1, computed as a `u8` of 0 or 1.
    Bool,
}

impl ScalarType {
    /// All thirteen types.
    pub const ALL: [ScalarType; 13] = [
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
        ScalarType::Bool,
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
            Bool => "bool",
        }
    }

    /// The CUDA storage type of this type (kernels/prelude.cuh): its Rust name, but `u8` for
    /// `bool`, whose bytes (0 or 1) kernels read and write as `u8`s.
    pub fn cuda_name(self) -> &'static str {
        match self {
            ScalarType::Bool => "u8",
            t => t.name(),
        }
    }

    /// The CUDA type values of this type are computed in (`f32` for `f16` and `bf16`, `u8` for
    /// `bool`).
    pub fn compute_name(self) -> &'static str {
        self.compute().cuda_name()
    }

    /// The type values of this type are computed in (`f32` for `f16` and `bf16`, `u8` of 0 or
    /// 1 for `bool`).
    pub fn compute(self) -> ScalarType {
        match self {
            ScalarType::F16 | ScalarType::BF16 => ScalarType::F32,
            ScalarType::Bool => ScalarType::U8,
            t => t,
        }
    }

    /// Size in bytes of one stored element.
    pub fn size(self) -> usize {
        use ScalarType::*;
        match self {
            I8 | U8 | Bool => 1,
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

    /// The stored bits that `to_bits` reports for a compute value: as `stored_from_compute`,
    /// except that an f16 or bf16 NaN whose payload fits keeps it, quiet bit included (the
    /// inverse of `compute_from_stored` on NaNs; `ds::f16_bits` on the GPU).
    pub fn bits_from_compute(self, bits: u64) -> u64 {
        let b = bits as u32;
        let nan = b & 0x7fff_ffff > 0x7f80_0000;
        match self {
            ScalarType::F16 if nan && b & 0x7f_e000 != 0 => {
                (((b >> 16) & 0x8000) | 0x7c00 | ((b & 0x7f_ffff) >> 13)) as u64
            }
            ScalarType::BF16 if nan && b & 0x7f_0000 != 0 => (b >> 16) as u64,
            t => t.stored_from_compute(bits),
        }
    }

    /// The compute bits of the element whose stored bits are `bits`: f16 and bf16 widened to
    /// f32 exactly, NaNs included (sign and payload kept, a signaling NaN left signaling, where
    /// `half`'s `to_f32` would make it quiet; `ds::f16_to_f32` on the GPU).
    pub fn compute_from_stored(self, bits: u64) -> u64 {
        match self {
            ScalarType::F16 => {
                let h = bits as u32 & 0xffff;
                if h & 0x7c00 == 0x7c00 && h & 0x3ff != 0 {
                    (((h & 0x8000) << 16) | 0x7f80_0000 | ((h & 0x3ff) << 13)) as u64
                } else {
                    f16::from_bits(h as u16).to_f32().to_bits() as u64
                }
            }
            ScalarType::BF16 => (bits & 0xffff) << 16,
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

/// One of the element types: `i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64 bool`.
///
/// Sealed: the backends know each of these types exactly (their CUDA representation, their
/// identities, how they sort), so no other type can be added from outside the crate. Every
/// element is an [`Item`] whose closures see an [`Expr`] of it.
///
/// # Examples
///
/// A function generic over every element type:
///
/// ```
/// use devseq::{Device, DeviceSeq, Element, Op};
/// fn largest<T: Element>(xs: &DeviceSeq<T>) -> devseq::Result<T> {
///     xs.reduce(Op::Max)
/// }
/// let dev = Device::auto()?;
/// assert_eq!(largest(&DeviceSeq::from_slice(&dev, &[3i16, -9, 7])?)?, 7);
/// assert_eq!(largest(&DeviceSeq::from_slice(&dev, &[0.5f64, 2.5])?)?, 2.5);
/// # Ok::<(), devseq::Error>(())
/// ```
pub trait Element:
    Item<Exprs = Expr<Self>>
    + Copy
    + Send
    + Sync
    + Debug
    + PartialEq
    + Default
    + bytemuck::NoUninit
    + 'static
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
    /// Elements from their stored bytes (`bytes` holds `out.len()` of them).
    #[doc(hidden)]
    fn from_stored(bytes: &[u8], out: &mut [Self]);
    /// The elements' own memory as bytes, where every byte pattern is an element (every type
    /// but `bool`).
    #[doc(hidden)]
    fn stored_mut(out: &mut [Self]) -> Option<&mut [u8]>;
}

/// Integer element types: the ones with `%`, bitwise operators and shifts.
///
/// # Examples
///
/// ```
/// use devseq::{Device, DeviceSeq, Integer};
/// fn low_bits<T: Integer>(xs: &DeviceSeq<T>, mask: T) -> devseq::Result<DeviceSeq<T>> {
///     xs.map(|x| x & mask)
/// }
/// let dev = Device::auto()?;
/// let xs = DeviceSeq::from_slice(&dev, &[0x1234u32, 0xff01])?;
/// assert_eq!(low_bits(&xs, 0xff)?.to_vec()?, [0x34, 0x01]);
/// # Ok::<(), devseq::Error>(())
/// ```
pub trait Integer: Element {}

/// Float element types (`f16`, `bf16`, `f32`, `f64`): the ones with `sqrt`, `exp` and the
/// other float functions.
///
/// # Examples
///
/// ```
/// use devseq::{Device, DeviceSeq, Float};
/// fn roots<T: Float>(xs: &DeviceSeq<T>) -> devseq::Result<DeviceSeq<T>> {
///     xs.map(|x| x.sqrt())
/// }
/// let dev = Device::auto()?;
/// let xs = DeviceSeq::from_slice(&dev, &[4.0f32, 9.0, 0.25])?;
/// assert_eq!(roots(&xs)?.to_vec()?, [2.0, 3.0, 0.5]);
/// # Ok::<(), devseq::Error>(())
/// ```
pub trait Float: Element {}

/// Index element types for `gather`, `scatter`, `scatter_combine` and `argsort`: `u32` or `u64`.
///
/// # Examples
///
/// ```
/// use devseq::{Device, DeviceSeq, Index};
/// fn sorted<I: Index>(xs: &DeviceSeq<f32>) -> devseq::Result<DeviceSeq<f32>> {
///     xs.gather(&xs.argsort::<I>()?)
/// }
/// let dev = Device::auto()?;
/// let xs = DeviceSeq::from_slice(&dev, &[2.0f32, 3.0, 1.0])?;
/// assert_eq!(sorted::<u32>(&xs)?.to_vec()?, [1.0, 2.0, 3.0]);
/// assert_eq!(sorted::<u64>(&xs)?.to_vec()?, [1.0, 2.0, 3.0]);
/// # Ok::<(), devseq::Error>(())
/// ```
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

/// The element types of head flags and selections (`segmented_*`, `compact`,
/// `nonzero_indices`, `scatter_if`'s stencil): `bool`, or `u8` where nonzero is true.
///
/// # Examples
///
/// ```
/// use devseq::{Device, DeviceSeq, Flag, Op};
/// fn segment_sums<F: Flag>(xs: &DeviceSeq<u32>, flags: &DeviceSeq<F>) -> devseq::Result<Vec<u32>> {
///     xs.segmented_reduce(flags, Op::Add)?.to_vec()
/// }
/// let dev = Device::auto()?;
/// let xs = DeviceSeq::from_slice(&dev, &[1u32, 2, 3, 4])?;
/// let bytes = DeviceSeq::from_slice(&dev, &[1u8, 0, 9, 0])?;
/// let bools = DeviceSeq::from_slice(&dev, &[true, false, true, false])?;
/// assert_eq!(segment_sums(&xs, &bytes)?, [3, 7]);
/// assert_eq!(segment_sums(&xs, &bools)?, [3, 7]);
/// # Ok::<(), devseq::Error>(())
/// ```
pub trait Flag: Element {}
impl Flag for bool {}
impl Flag for u8 {}

/// A type `DeviceSeq<T>` can hold: an [`Element`], or a tuple of 2 to 8 elements (`(A, B)`,
/// `(A, B, C)`, …), stored as one column per component (structure of arrays).
///
/// Closures over a sequence of items see `T::Exprs`: an [`Expr<T>`] for an element, a tuple of
/// `Expr`s for a tuple; they may return either (trait [`Exprs`]), and the result's item type
/// follows from what they return.
///
/// # Examples
///
/// ```
/// use devseq::{Device, DeviceSeq};
/// let dev = Device::auto()?;
/// let pairs = DeviceSeq::from_slice(&dev, &[(1u32, 2.5f32), (7, -1.0)])?;
/// let swapped = pairs.map(|(k, v)| (v * 2.0, k + 1))?;
/// assert_eq!(swapped.to_vec()?, [(5.0, 2), (-2.0, 8)]);
/// # Ok::<(), devseq::Error>(())
/// ```
pub trait Item: sealed::Sealed + Copy + Send + Sync + Debug + PartialEq + 'static {
    /// What closures see of an item: `Expr<T>`, or a tuple of `Expr`s.
    type Exprs: Exprs<Item = Self>;
    /// The component types, in order (one for an element).
    #[doc(hidden)]
    const TYPES: &'static [ScalarType];
    /// The stored bits of each component (zero-extended; unused slots zero).
    #[doc(hidden)]
    fn item_bits(&self) -> [u64; MAX_COMPONENTS];
    /// The item whose components have these stored bits.
    #[doc(hidden)]
    fn from_item_bits(bits: &[u64]) -> Self;
    /// Hands `put` each component's stored bytes, component by component.
    #[doc(hidden)]
    fn put_components(
        items: &[Self],
        put: &mut dyn FnMut(usize, &[u8]) -> crate::Result<()>,
    ) -> crate::Result<()> {
        for (k, ty) in Self::TYPES.iter().enumerate() {
            let s = ty.size();
            let mut bytes = Vec::with_capacity(items.len() * s);
            for x in items {
                bytes.extend_from_slice(&x.item_bits()[k].to_le_bytes()[..s]);
            }
            put(k, &bytes)?;
        }
        Ok(())
    }
    /// `n` items whose components `get` writes, component by component, as stored bytes.
    #[doc(hidden)]
    fn get_components(
        n: usize,
        get: &mut dyn FnMut(usize, &mut [u8]) -> crate::Result<()>,
    ) -> crate::Result<Vec<Self>> {
        let cols = Self::TYPES
            .iter()
            .enumerate()
            .map(|(k, ty)| {
                let mut b = touched(n * ty.size(), 0u8)?;
                get(k, &mut b)?;
                Ok(b)
            })
            .collect::<crate::Result<Vec<_>>>()?;
        Ok((0..n)
            .map(|i| {
                let mut bits = [0u64; MAX_COMPONENTS];
                for (k, ty) in Self::TYPES.iter().enumerate() {
                    let s = ty.size();
                    let mut w = [0u8; 8];
                    w[..s].copy_from_slice(&cols[k][i * s..(i + 1) * s]);
                    bits[k] = u64::from_le_bytes(w);
                }
                Self::from_item_bits(&bits)
            })
            .collect())
    }
}

/// The symbolic values a closure returns: an [`Expr`], or a tuple of 2 to 8 of them; `Item`
/// is the item type of the sequence it makes.
///
/// # Examples
///
/// ```
/// use devseq::{Device, DeviceSeq};
/// let dev = Device::auto()?;
/// let xs = DeviceSeq::from_slice(&dev, &[1.5f32, -2.0])?;
/// // One Expr makes a DeviceSeq<f32>; a pair of them a DeviceSeq<(f32, i32)>.
/// let pairs: DeviceSeq<(f32, i32)> = xs.map(|x| (x * 2.0, x.cast::<i32>()))?;
/// assert_eq!(pairs.to_vec()?, [(3.0, 1), (-4.0, -2)]);
/// # Ok::<(), devseq::Error>(())
/// ```
pub trait Exprs: Copy {
    /// The item these values make.
    type Item: Item<Exprs = Self>;
    /// Each component's (graph, node).
    #[doc(hidden)]
    fn nodes(&self) -> Vec<(u32, u32)>;
    /// The values of nodes `ids` of graph `graph`, one a component.
    #[doc(hidden)]
    fn from_nodes(graph: u32, ids: &[u32]) -> Self;
}

impl<T: Element> Exprs for Expr<T> {
    type Item = T;
    fn nodes(&self) -> Vec<(u32, u32)> {
        vec![(self.graph, self.id)]
    }
    fn from_nodes(graph: u32, ids: &[u32]) -> Self {
        Expr {
            id: ids[0],
            graph,
            _t: PhantomData,
        }
    }
}

macro_rules! tuple_items {
    ($(($($T:ident $k:tt),+))*) => {$(
        impl<$($T: Element),+> sealed::Sealed for ($($T,)+) {}
        impl<$($T: Element),+> Item for ($($T,)+) {
            type Exprs = ($(Expr<$T>,)+);
            const TYPES: &'static [ScalarType] = &[$($T::TYPE),+];
            fn item_bits(&self) -> [u64; MAX_COMPONENTS] {
                let mut b = [0u64; MAX_COMPONENTS];
                $(b[$k] = Element::to_bits(self.$k);)+
                b
            }
            fn from_item_bits(bits: &[u64]) -> Self {
                ($(<$T as Element>::from_bits(bits[$k]),)+)
            }
        }
        impl<$($T: Element),+> Exprs for ($(Expr<$T>,)+) {
            type Item = ($($T,)+);
            fn nodes(&self) -> Vec<(u32, u32)> {
                vec![$((self.$k.graph, self.$k.id)),+]
            }
            fn from_nodes(graph: u32, ids: &[u32]) -> Self {
                ($(Expr::<$T> { id: ids[$k], graph, _t: PhantomData },)+)
            }
        }
    )*};
}
tuple_items! {
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
}

/// The most components an item has (a tuple of up to eight elements).
pub(crate) const MAX_COMPONENTS: usize = 8;

/// An item that orders: an [`Element`], in the order `sort` uses for it (`total_cmp` for
/// floats), or a tuple of up to eight of them, ordered lexicographically (the first component first, each in
/// its own order). Sorts, searches, merges, runs and set operations take `Key`s.
///
/// # Examples
///
/// ```
/// use devseq::{Device, DeviceSeq};
/// let dev = Device::auto()?;
/// let pairs = DeviceSeq::from_slice(&dev, &[(2u8, -1.0f32), (1, 5.0), (2, -3.0)])?;
/// assert_eq!(pairs.sort()?.to_vec()?, [(1, 5.0), (2, -3.0), (2, -1.0)]);
/// # Ok::<(), devseq::Error>(())
/// ```
pub trait Key: Item {
    /// Each component's ordered bits (their unsigned order is the component's order),
    /// the first component first.
    #[doc(hidden)]
    fn order_words(x: Self::Exprs) -> Vec<Expr<u64>>;
    /// The inverse of `order_words`.
    #[doc(hidden)]
    fn from_order_words(words: &[Expr<u64>]) -> Self::Exprs;
}

/// The ordered bits of a value of type `ty` from its stored bits `b` (zero-extended into the
/// unsigned word `U`, at least as wide; `word` converts constants): their unsigned order is the
/// `total_cmp` order for floats, the value order for integers.
pub(crate) fn ordered<U: Integer>(ty: ScalarType, b: Expr<U>, word: impl Fn(u64) -> U) -> Expr<U> {
    let (sign, mask) = sign_and_mask(ty);
    let (sign, mask) = (word(sign), word(mask));
    if ty.is_float() {
        Expr::select((b & sign).ne(word(0)), !b & mask, b | sign)
    } else if ty.is_signed_int() {
        b ^ sign
    } else {
        b
    }
}

/// The value of type `T` whose ordered bits are `o` (the inverse of [`ordered`]).
pub(crate) fn from_ordered<T: Element>(o: Expr<u64>) -> Expr<T> {
    let (sign, mask) = sign_and_mask(T::TYPE);
    let bits = if T::TYPE.is_float() {
        Expr::select((o & sign).ne(0u64), o ^ sign, !o & mask)
    } else if T::TYPE.is_signed_int() {
        o ^ sign
    } else {
        o
    };
    Expr::<T>::from_bits(bits)
}

fn sign_and_mask(ty: ScalarType) -> (u64, u64) {
    let w = ty.bits();
    let mask = if w == 64 { !0u64 } else { (1u64 << w) - 1 };
    (1u64 << (w - 1), mask)
}

impl<T: Element> Key for T {
    fn order_words(x: Expr<T>) -> Vec<Expr<u64>> {
        vec![ordered(T::TYPE, x.to_bits(), |v| v)]
    }
    fn from_order_words(words: &[Expr<u64>]) -> Expr<T> {
        from_ordered(words[0])
    }
}

macro_rules! tuple_keys {
    ($(($($T:ident $k:tt),+))*) => {$(
        impl<$($T: Element),+> Key for ($($T,)+) {
            fn order_words(x: Self::Exprs) -> Vec<Expr<u64>> {
                vec![$(ordered($T::TYPE, x.$k.to_bits(), |v| v)),+]
            }
            fn from_order_words(words: &[Expr<u64>]) -> Self::Exprs {
                ($(from_ordered::<$T>(words[$k]),)+)
            }
        }
    )*};
}
tuple_keys! {
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
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

/// An element's column read back: into the elements' own memory where any bytes are one
/// (every type but `bool`), else through bytes.
macro_rules! element_get {
    (bool, $n:expr, $get:expr) => {{
        let mut bytes = touched($n, 0u8)?;
        $get(0, &mut bytes)?;
        let mut v = touched($n, false)?;
        <bool as Element>::from_stored(&bytes, &mut v);
        Ok(v)
    }};
    ($t:ty, $n:expr, $get:expr) => {{
        let mut v = touched($n, <$t>::default())?;
        $get(0, bytemuck::cast_slice_mut(&mut v))?;
        Ok(v)
    }};
}

/// An element as an item: one component, its column's bytes the elements themselves.
macro_rules! element_item {
    ($t:tt => $tag:ident) => {
        impl Item for $t {
            type Exprs = Expr<$t>;
            const TYPES: &'static [ScalarType] = &[ScalarType::$tag];
            fn item_bits(&self) -> [u64; MAX_COMPONENTS] {
                let mut b = [0u64; MAX_COMPONENTS];
                b[0] = Element::to_bits(*self);
                b
            }
            fn from_item_bits(bits: &[u64]) -> Self {
                <Self as Element>::from_bits(bits[0])
            }
            fn put_components(
                items: &[Self],
                put: &mut dyn FnMut(usize, &[u8]) -> crate::Result<()>,
            ) -> crate::Result<()> {
                put(0, bytemuck::cast_slice(items))
            }
            fn get_components(
                n: usize,
                get: &mut dyn FnMut(usize, &mut [u8]) -> crate::Result<()>,
            ) -> crate::Result<Vec<Self>> {
                element_get!($t, n, get)
            }
        }
    };
}

macro_rules! element_plain {
    ($($t:ty => $tag:ident, $bits:ty, $kind:ident);* $(;)?) => {$(
        impl sealed::Sealed for $t {}
        impl $kind for $t {}
        element_item!($t => $tag);
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
            fn from_stored(bytes: &[u8], out: &mut [Self]) {
                bytemuck::cast_slice_mut::<$t, u8>(out).copy_from_slice(bytes);
            }
            fn stored_mut(out: &mut [Self]) -> Option<&mut [u8]> {
                Some(bytemuck::cast_slice_mut(out))
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
        element_item!($t => $tag);
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
            fn from_stored(bytes: &[u8], out: &mut [Self]) {
                bytemuck::cast_slice_mut::<$t, u8>(out).copy_from_slice(bytes);
            }
            fn stored_mut(out: &mut [Self]) -> Option<&mut [u8]> {
                Some(bytemuck::cast_slice_mut(out))
            }
        }
    )*};
}
element_half!(f16 => F16; bf16 => BF16);

impl sealed::Sealed for bool {}
element_item!(bool => Bool);
/// `bool` is computed as a `u8` of 0 or 1: the operators that apply to it (`Min`, `Max`,
/// `BitAnd`, `BitOr`, `BitXor`, which are and, or, and, or, xor) keep it 0 or 1.
impl Element for bool {
    const TYPE: ScalarType = ScalarType::Bool;
    type Compute = u8;
    #[inline]
    fn to_compute(self) -> u8 {
        self as u8
    }
    #[inline]
    fn from_compute(c: u8) -> Self {
        c != 0
    }
    #[inline]
    fn to_bits(self) -> u64 {
        self as u64
    }
    #[inline]
    fn from_bits(bits: u64) -> Self {
        bits & 0xff != 0
    }
    fn compute_bits(self) -> u64 {
        self as u64
    }
    fn from_compute_bits(bits: u64) -> Self {
        bits & 0xff != 0
    }
    fn from_stored(bytes: &[u8], out: &mut [Self]) {
        out.iter_mut().zip(bytes).for_each(|(o, &b)| *o = b != 0);
    }
    fn stored_mut(_: &mut [Self]) -> Option<&mut [u8]> {
        None
    }
}

/// A symbolic element value inside a `map` or `zip_map` closure.
///
/// The closure is called once, on the host, with an `Expr` standing for the element; what it
/// returns is compiled for the device (CUDA through NVRTC) or interpreted by the host backend.
/// `Expr` is `Copy`: use a value as often as you like (`|x| x * x + x`); a value used several
/// times is computed once.
///
/// Operators (a second operand may be an `Expr<T>` or a plain `T`, on either side of
/// `+ - * /`):
/// - every type: `+ - * /`, unary `-`, [`min`](Expr::min), [`max`](Expr::max), the
///   comparisons [`eq`](Expr::eq) … [`ge`](Expr::ge) (an `Expr<u8>` of 1 or 0),
///   [`select`](Expr::select) and [`cast`](Expr::cast);
/// - integers: `%`, `& | ^ !`, and `<< >>` by a `u32` (taken modulo the bit width);
/// - floats: [`abs`](Expr::abs), [`sqrt`](Expr::sqrt), [`exp`](Expr::exp), [`ln`](Expr::ln),
///   [`sin`](Expr::sin), [`cos`](Expr::cos), [`tanh`](Expr::tanh), [`floor`](Expr::floor),
///   [`ceil`](Expr::ceil), [`round`](Expr::round), [`powf`](Expr::powf).
///
/// Semantics: integer arithmetic wraps; integer division by zero gives 0, remainder by zero
/// the dividend, and `MIN / -1` wraps to `MIN`; `f16` and `bf16` are computed in `f32` and
/// rounded to nearest-even where they are stored or cast to `f16`/`bf16`; float `min`/`max`
/// ignore a NaN operand unless both are NaN; casts follow Rust's `as` (float to integer
/// saturates, NaN gives 0). Host and GPU give identical results for integer expressions and for
/// float expressions of `+ - * /`, `sqrt`, comparisons, `min`, `max`, `abs`, `floor`, `ceil`,
/// `round` and casts (no fused multiply-add); the transcendental functions agree within a
/// few ulp.
///
/// An `Expr` belongs to the closure call that received it: using it in another closure is an
/// `Error::InvalidArgument` from that `map`.
///
/// # Examples
///
/// ```
/// use devseq::{Device, DeviceSeq, Expr};
/// let dev = Device::auto()?;
/// let xs = DeviceSeq::from_slice(&dev, &[-2i32, 0, 3, 7])?;
/// // |x| (x * x + 1) % 5, but negative inputs give 0
/// let ys = xs.map(|x| Expr::select(x.lt(0), Expr::constant(0), (x * x + 1) % 5))?;
/// let want: Vec<i32> = [-2i32, 0, 3, 7]
///     .iter()
///     .map(|&x| if x < 0 { 0 } else { (x * x + 1) % 5 })
///     .collect();
/// assert_eq!(ys.to_vec()?, want);
/// # Ok::<(), devseq::Error>(())
/// ```
pub struct Expr<T: Element> {
    pub(crate) id: u32,
    pub(crate) graph: u32,
    pub(crate) _t: PhantomData<fn() -> T>,
}

impl<T: Element> Clone for Expr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Element> Copy for Expr<T> {}

impl<T: Element> std::fmt::Debug for Expr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Expr<{}>#{}", T::TYPE.name(), self.id)
    }
}

/// An empty vector with room for `n` elements, or `OutOfMemory` where the host cannot give it
/// (a length that no memory holds, as a lazy sequence of up to 2^56 elements may have, is an
/// error, not the abort of a failed allocation).
pub(crate) fn reserved<T>(n: usize) -> crate::Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| crate::Error::OutOfMemory {
            bytes: n.saturating_mul(std::mem::size_of::<T>()),
        })?;
    Ok(v)
}

/// `n` copies of `fill` for a copy from the device to land in (`OutOfMemory` where the host
/// cannot hold them). Large vectors are written by
/// all of rayon's threads, so that the operating system maps their fresh pages in parallel:
/// mapped one page at a time by the driver's copy, a new gigabyte took 0.87 s on an H100
/// host, against 0.09 s into a vector already touched (examples/transfers).
pub(crate) fn touched<T: Copy + Send + Sync>(n: usize, fill: T) -> crate::Result<Vec<T>> {
    use rayon::prelude::*;
    let mut v = reserved(n)?;
    if n * std::mem::size_of::<T>() < 1 << 24 {
        v.resize(n, fill);
    } else {
        v.par_extend(rayon::iter::repeat_n(fill, n));
    }
    Ok(v)
}

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
