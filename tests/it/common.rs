//! Shared test helpers: the device, a seeded generator, sizes at the edges, and per-type
//! oracle arithmetic written plainly (f64 for floats, wrapping for integers).

#![allow(dead_code)]

use devseq::{Device, DeviceSeq, Element, Op, bf16, f16};
use std::sync::OnceLock;

/// The device under test: `Device::auto()` (the GPU with `DEVSEQ_DEVICE=cuda`), shared.
pub fn dev() -> Device {
    static D: OnceLock<Device> = OnceLock::new();
    D.get_or_init(|| {
        let d = Device::auto().expect("Device::auto");
        eprintln!("tests run on {}", d.name());
        d
    })
    .clone()
}

/// Whether `DEVSEQ_TEST_SMALL` asks for small inputs only (for compute-sanitizer runs, which
/// instrument every access).
pub fn small() -> bool {
    std::env::var_os("DEVSEQ_TEST_SMALL").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Sizes at the edges: tiny, warp boundaries, the common tile boundaries of the kernels that
/// hold a tile in registers (multiples of 1024 elements up to 65536: most families' tiles are
/// 1024, 2048, 4096 or 8192 elements by item size, the plain scans' 64 KB tiles up to 65536),
/// powers of two +-1, and one large (dropped with `DEVSEQ_TEST_SMALL`). The tiles that are no
/// power of two (scatter_combine's 3072 for 4-byte values, the sort's 4608, ...) and the size
/// thresholds where a family changes its tile or its launch are straddled by that family's own
/// tests (src/backend/cuda/tuning has the shapes).
pub fn sizes() -> &'static [usize] {
    const ALL: &[usize] = &[
        0, 1, 2, 31, 32, 33, 1023, 1025, 2047, 2048, 2049, 4095, 4096, 4097, 8191, 8192, 8193,
        9217, 16383, 16384, 16385, 32767, 32769, 65535, 65536, 65537, 524_289, 1_000_003,
    ];
    if small() { &ALL[..ALL.len() - 2] } else { ALL }
}

/// Smaller set for the costlier combinations.
pub fn small_sizes() -> &'static [usize] {
    &[0, 1, 31, 32, 33, 1025, 2049, 4095, 4096, 4097, 8193, 65537]
}

/// `n`, or a smaller stand-in with `DEVSEQ_TEST_SMALL`.
pub fn big(n: usize) -> usize {
    if small() { n.min(70_001) } else { n }
}

/// splitmix64.
pub struct Rng(u64);

impl Rng {
    /// A generator with the given seed (for values that proptest draws and shrinks).
    pub fn seeded(seed: u64) -> Rng {
        Rng(seed)
    }
    /// A generator seeded from `DEVSEQ_TEST_SEED` or the clock; the seed is printed (shown
    /// when a test fails).
    pub fn new(label: &str) -> Rng {
        let seed = std::env::var("DEVSEQ_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1)
            });
        eprintln!("{label}: seed {seed} (DEVSEQ_TEST_SEED={seed} repeats it)");
        Rng(seed)
    }
    #[inline]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// How test values are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gen {
    /// Anything (floats: mixed magnitudes, signs, the odd infinity).
    Any,
    /// Floats whose every partial sum is exact (k/4 for |k| <= 8); integers anything.
    SumExact,
    /// Floats whose every partial product is exact (mostly +-1, rarely 2 or 0.5); odd integers.
    MulExact,
    /// Floats with NaN, +-0, +-inf and subnormals mixed in.
    Special,
    /// Finite floats of mixed magnitudes and signs (`Any` without its infinities); integers
    /// anything.
    Finite,
}

/// The draw that makes `op` exact for every combination order.
pub fn gen_for(op: Op) -> Gen {
    match op {
        Op::Add => Gen::SumExact,
        Op::Mul => Gen::MulExact,
        _ => Gen::Any,
    }
}

/// The sort oracle: the positions of `keys` in stable ascending `total_cmp` order, and the
/// keys in that order.
pub fn stable_order<X: T>(keys: &[X]) -> (Vec<u32>, Vec<X>) {
    let mut order: Vec<u32> = (0..keys.len() as u32).collect();
    order.sort_by(|&a, &b| keys[a as usize].total(&keys[b as usize]));
    let sorted = order.iter().map(|&i| keys[i as usize]).collect();
    (order, sorted)
}

/// Per-type test support: drawing values, comparing results, and the oracle's arithmetic.
pub trait T: Element + std::fmt::Debug {
    /// The oracle's accumulator (the type itself for integers, f64 for floats).
    type Acc: Copy + std::fmt::Debug;
    fn draw(r: &mut Rng, g: Gen) -> Self;
    /// Equal values (floats: `==`, or both NaN).
    fn same(a: Self, b: Self) -> bool;
    fn acc(self) -> Self::Acc;
    fn from_acc(a: Self::Acc) -> Self;
    /// `a op b` with the API's semantics.
    fn op(op: Op, a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The API's identity of `op`.
    fn identity(op: Op) -> Self::Acc;
    const FLOAT: bool;
    /// `i as Self`.
    fn from_index(i: usize) -> Self;
    /// The value as f64 (lossy for 64-bit integers).
    fn f(self) -> f64;
    /// `v as Self` for a small whole number `v` (for ranges).
    fn from_acc_f(v: f64) -> Self;
    /// The sort order: `Ord` for integers, `total_cmp` for floats.
    fn total(&self, other: &Self) -> std::cmp::Ordering;
}

macro_rules! int_t {
    ($($t:ty),*) => {$(
        impl T for $t {
            type Acc = $t;
            #[inline]
            fn draw(r: &mut Rng, g: Gen) -> Self {
                let x = r.next() as $t;
                match g {
                    Gen::MulExact => x | 1,
                    _ if r.below(8) == 0 => [0 as $t, 1, <$t>::MAX, <$t>::MIN][r.below(4) as usize],
                    _ => x,
                }
            }
            #[inline]
            fn same(a: Self, b: Self) -> bool { a == b }
            #[inline]
            fn acc(self) -> $t { self }
            #[inline]
            fn from_acc(a: $t) -> Self { a }
            #[inline]
            fn op(op: Op, a: $t, b: $t) -> $t {
                match op {
                    Op::Add => a.wrapping_add(b),
                    Op::Mul => a.wrapping_mul(b),
                    Op::Min => a.min(b),
                    Op::Max => a.max(b),
                    Op::BitAnd => a & b,
                    Op::BitOr => a | b,
                    Op::BitXor => a ^ b,
                }
            }
            #[inline]
            fn identity(op: Op) -> $t {
                match op {
                    Op::Add | Op::BitOr | Op::BitXor => 0,
                    Op::Mul => 1,
                    Op::Min => <$t>::MAX,
                    Op::Max => <$t>::MIN,
                    Op::BitAnd => !0,
                }
            }
            const FLOAT: bool = false;
            #[inline]
            fn from_index(i: usize) -> Self { i as $t }
            #[inline]
            fn f(self) -> f64 { self as f64 }
            #[inline]
            fn from_acc_f(v: f64) -> Self { v as $t }
            #[inline]
            fn total(&self, other: &Self) -> std::cmp::Ordering { self.cmp(other) }
        }
    )*};
}
int_t!(i8, i16, i32, i64, u8, u16, u32, u64);

/// Float draws, as f64 values representable in every float type.
fn float_draw(r: &mut Rng, g: Gen) -> f64 {
    match g {
        Gen::SumExact => (r.below(17) as f64 - 8.0) / 4.0,
        Gen::MulExact => {
            let s = if r.below(2) == 0 { 1.0 } else { -1.0 };
            match r.below(4000) {
                0 => 2.0 * s,
                1 => 0.5 * s,
                _ => s,
            }
        }
        Gen::Any | Gen::Finite => match r.below(50) {
            0 if g == Gen::Any => f64::INFINITY,
            1 if g == Gen::Any => f64::NEG_INFINITY,
            2 => 0.0,
            3 => -0.0,
            _ => {
                let m = r.below(1 << 8) as f64 / 16.0;
                let e = r.below(12) as i32 - 6;
                let s = if r.below(2) == 0 { 1.0 } else { -1.0 };
                s * m * 2f64.powi(e)
            }
        },
        Gen::Special => match r.below(10) {
            0 => f64::NAN,
            1 => -f64::NAN,
            2 => 0.0,
            3 => -0.0,
            4 => f64::INFINITY,
            5 => f64::NEG_INFINITY,
            6 => 2f64.powi(-130),
            _ => float_draw(r, Gen::Any),
        },
    }
}

/// The documented float min: a NaN operand is ignored; of two equal values (+-0) the first.
pub fn fmin(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if b < a {
        b
    } else {
        a
    }
}
/// The documented float max, as `fmin`.
pub fn fmax(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if b > a {
        b
    } else {
        a
    }
}

fn float_op(op: Op, a: f64, b: f64) -> f64 {
    match op {
        Op::Add => a + b,
        Op::Mul => a * b,
        Op::Min => fmin(a, b),
        Op::Max => fmax(a, b),
        _ => unreachable!("bitwise op on a float"),
    }
}

fn float_identity(op: Op) -> f64 {
    match op {
        Op::Mul => 1.0,
        Op::Min => f64::INFINITY,
        Op::Max => f64::NEG_INFINITY,
        _ => 0.0,
    }
}

macro_rules! float_t {
    ($($t:ty: $from:expr, $to:expr);*) => {$(
        impl T for $t {
            type Acc = f64;
            #[inline]
            fn draw(r: &mut Rng, g: Gen) -> Self { Self::from_acc(float_draw(r, g)) }
            #[inline]
            fn same(a: Self, b: Self) -> bool {
                let (x, y) = (a.acc(), b.acc());
                x == y || (x.is_nan() && y.is_nan())
            }
            #[inline]
            fn acc(self) -> f64 { let f: fn($t) -> f64 = $to; f(self) }
            #[inline]
            fn from_acc(a: f64) -> Self { let f: fn(f64) -> $t = $from; f(a) }
            #[inline]
            fn op(op: Op, a: f64, b: f64) -> f64 { float_op(op, a, b) }
            #[inline]
            fn identity(op: Op) -> f64 { float_identity(op) }
            const FLOAT: bool = true;
            #[inline]
            fn from_index(i: usize) -> Self { Self::from_acc(i as f32 as f64) }
            #[inline]
            fn f(self) -> f64 { self.acc() }
            #[inline]
            fn from_acc_f(v: f64) -> Self { Self::from_acc(v) }
            #[inline]
            fn total(&self, other: &Self) -> std::cmp::Ordering { self.total_cmp(other) }
        }
    )*};
}
float_t! {
    f32: |a| a as f32, |x| x as f64;
    f64: |a| a, |x| x;
    f16: |a| f16::from_f32(a as f32), |x| x.to_f64();
    bf16: |a| bf16::from_f32(a as f32), |x| x.to_f64()
}

pub fn draw_vec<X: T>(r: &mut Rng, n: usize, g: Gen) -> Vec<X> {
    (0..n).map(|_| X::draw(r, g)).collect()
}

/// Flags with density `p` (random nonzero values, not only 1).
pub fn flags(r: &mut Rng, n: usize, p: f64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            if r.unit() < p {
                1 + r.below(255) as u8
            } else {
                0
            }
        })
        .collect()
}

/// Asserts element-wise equality (floats: `==` or both NaN), naming the first difference.
pub fn assert_same<X: T>(got: &[X], want: &[X], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| !X::same(got[i], want[i])) {
        panic!(
            "{what}: first difference at {i} of {}: got {:?}, want {:?}",
            got.len(),
            got[i],
            want[i]
        );
    }
}

/// Asserts bitwise equality.
pub fn assert_bits<X: Element + std::fmt::Debug>(got: &[X], want: &[X], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| got[i].to_bits() != want[i].to_bits()) {
        panic!(
            "{what}: first difference at {i}: got {:?}, want {:?}",
            got[i], want[i]
        );
    }
}

pub fn upload<X: Element>(xs: &[X]) -> DeviceSeq<X> {
    DeviceSeq::from_slice(&dev(), xs).expect("from_slice")
}

/// The operators that apply to `X`.
pub fn ops<X: T>() -> Vec<Op> {
    Op::ALL
        .into_iter()
        .filter(|o| !(X::FLOAT && o.is_bitwise()))
        .collect()
}

/// Runs `$body` once per element type, with `$t` bound to the type.
#[macro_export]
macro_rules! for_types {
    ($name:ident, $body:ident) => {
        $crate::for_each_type!(
            $name,
            $body,
            [i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64]
        );
    };
}

/// Runs `$body` once for each listed element type, in a module `$name` with one `#[test]`
/// named after each type.
#[macro_export]
macro_rules! for_each_type {
    ($name:ident, $body:ident, [$($t:ident),* $(,)?]) => {
        mod $name {
            #[allow(unused_imports)]
            use devseq::{bf16, f16};
            $(
                #[test]
                fn $t() {
                    super::$body::<$t>()
                }
            )*
        }
    };
}
