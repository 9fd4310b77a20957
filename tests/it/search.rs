//! Searching, merging, selecting (`lower_bound`, `upper_bound`, `merge`, `merge_pairs`,
//! `top_k`), `sort_descending` and `Expr::to_bits`, each against a plain sequential oracle
//! written here (`partition_point`, a two-finger stable merge, a full stable sort), for every
//! element type. Orders are `total_cmp` for floats; floats are compared bitwise.

use crate::common::*;
use crate::for_types;
use devseq::{DeviceSeq, Error, Expr, bf16, f16};
use std::cmp::Ordering;

/// What the oracles here need beyond `T`: host bits and the special values of each type.
trait S: T {
    /// The stored bits, zero-extended (`f32::to_bits`, two's complement for integers).
    fn host_bits(self) -> u64;
    /// The bits `(-x).to_bits()` gives for a computed `-x`: wrapping for integers; for floats
    /// the sign flipped, or the canonical NaN's bits for a NaN (API: a computed NaN is the
    /// canonical one, as it would be stored).
    fn neg_bits(self) -> u64;
    /// Extremes, signed zeros, NaNs of both signs (with payloads), infinities, subnormals.
    fn specials() -> Vec<Self>;
    /// Signaling NaNs (floats only).
    fn signaling() -> Vec<Self>;
    /// An `f16`/`bf16` signaling NaN made quiet (its quiet bit set); anything else as it is.
    /// (The expression evaluator widens `f16`/`bf16` to `f32` and quiets them on the way,
    /// see `to_bits_signaling_nan_*` and `top_k_signaling_nan_*`.)
    fn quiet16(self) -> Self;
    /// A NaN replaced by the canonical NaN (as a computed NaN is stored); anything else as it
    /// is.
    fn canonical(self) -> Self;
}

macro_rules! s_int {
    ($($t:ty: $u:ty),*) => {$(
        impl S for $t {
            fn host_bits(self) -> u64 { self as $u as u64 }
            fn neg_bits(self) -> u64 { self.wrapping_neg() as $u as u64 }
            fn specials() -> Vec<Self> {
                vec![
                    <$t>::MIN, <$t>::MIN + 1, 0, 1, 2, <$t>::MAX - 1, <$t>::MAX,
                    -1i64 as $t, -2i64 as $t, 0x55 as $t,
                ]
            }
            fn signaling() -> Vec<Self> { Vec::new() }
            fn quiet16(self) -> Self { self }
            fn canonical(self) -> Self { self }
        }
    )*};
}
s_int!(i8: u8, i16: u16, i32: u32, i64: u64, u8: u8, u16: u16, u32: u32, u64: u64);

macro_rules! s_float {
    ($($t:ty: $b:ty, quiet $q:expr, canon $canon:expr, [$($sp:expr),*], [$($sig:expr),*]);*) => {$(
        impl S for $t {
            fn host_bits(self) -> u64 { <$t>::to_bits(self) as u64 }
            fn neg_bits(self) -> u64 {
                if self.is_nan() { $canon } else { <$t>::to_bits(-self) as u64 }
            }
            fn specials() -> Vec<Self> {
                [$($sp),*].iter().map(|&b: &$b| <$t>::from_bits(b)).collect()
            }
            fn signaling() -> Vec<Self> {
                [$($sig),*].iter().map(|&b: &$b| <$t>::from_bits(b)).collect()
            }
            fn quiet16(self) -> Self {
                if self.is_nan() { <$t>::from_bits(<$t>::to_bits(self) | $q) } else { self }
            }
            fn canonical(self) -> Self {
                if self.is_nan() { <$t>::from_bits($canon) } else { self }
            }
        }
    )*};
}
s_float! {
    f32: u32, quiet 0, canon 0x7fc0_0000,
        [0x7fc0_0000, 0xffc0_0000, 0x7fc0_0001, 0xffd2_3456, 0x7f80_0000, 0xff80_0000, 0,
         0x8000_0000, 1, 0x8000_0001, 0x0080_0000, 0x7f7f_ffff, 0xff7f_ffff, 0x3f80_0000,
         0xbf80_0000],
        [0x7f80_0001, 0xff80_0001, 0x7fa0_0000];
    f64: u64, quiet 0, canon 0x7ff8_0000_0000_0000,
        [0x7ff8_0000_0000_0000, 0xfff8_0000_0000_0000, 0x7ff8_0000_0000_0001,
         0xfff8_1234_5678_9abc, 0x7ff0_0000_0000_0000, 0xfff0_0000_0000_0000, 0,
         0x8000_0000_0000_0000, 1, 0x8000_0000_0000_0001, 0x0010_0000_0000_0000,
         0x7fef_ffff_ffff_ffff, 0xffef_ffff_ffff_ffff, 0x3ff0_0000_0000_0000,
         0xbff0_0000_0000_0000],
        [0x7ff0_0000_0000_0001, 0xfff0_0000_0000_0001, 0x7ff4_0000_0000_0000];
    f16: u16, quiet 0x0200, canon 0x7e00,
        [0x7e00, 0xfe00, 0x7e01, 0xfe23, 0x7c00, 0xfc00, 0, 0x8000, 1, 0x8001, 0x0400, 0x7bff,
         0xfbff, 0x3c00, 0xbc00],
        [0x7c01, 0xfc01, 0x7d00];
    bf16: u16, quiet 0x0040, canon 0x7fc0,
        [0x7fc0, 0xffc0, 0x7fc1, 0xffc5, 0x7f80, 0xff80, 0, 0x8000, 1, 0x8001, 0x0080, 0x7f7f,
         0xff7f, 0x3f80, 0xbf80],
        [0x7f81, 0xff81, 0x7fa0]
}

fn total<X: T>(a: &X, b: &X) -> Ordering {
    a.total(b)
}

/// How a test sequence's values are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dist {
    /// Specials (both NaNs, both zeros, extremes), special draws, any bits, ordinary values:
    /// many duplicates.
    Mixed,
    /// Small whole numbers in -10..=10 (unsigned: 0..=10), so extremes lie outside.
    Narrow,
    /// One value repeated.
    Equal,
}
const DISTS: [Dist; 3] = [Dist::Mixed, Dist::Narrow, Dist::Equal];

fn draw_dist<X: S>(r: &mut Rng, n: usize, d: Dist) -> Vec<X> {
    let sp = X::specials();
    let eq = sp[r.below(sp.len() as u64) as usize];
    (0..n)
        .map(|_| match d {
            Dist::Mixed => match r.below(4) {
                0 => sp[r.below(sp.len() as u64) as usize],
                1 => X::draw(r, Gen::Special),
                2 => X::from_bits(r.next()),
                _ => X::draw(r, Gen::Any),
            },
            Dist::Narrow => X::from_acc_f(r.below(21) as f64 - 10.0),
            Dist::Equal => eq,
        })
        .collect()
}

fn sorted_dist<X: S>(r: &mut Rng, n: usize, d: Dist) -> Vec<X> {
    let mut v = draw_dist(r, n, d);
    v.sort_by(total);
    v
}

/// A lazy sequence with the elements of `xs` (an identity `map` collapses to `xs` itself).
/// Its elements are computed, so a NaN among them reads as the canonical NaN: callers pass
/// canonical NaNs only (see [`canonical`]).
#[allow(clippy::eq_op)] // x - x: a value of the type, for a select that never takes it
fn lazy<X: S>(xs: &DeviceSeq<X>) -> DeviceSeq<X> {
    let ones = DeviceSeq::<u8>::filled(&dev(), 1, xs.len()).unwrap();
    let l = xs
        .zip_map(&ones, |x, f| Expr::select(f.ne(0u8), x, x - x))
        .unwrap();
    assert!(!l.is_stored(), "lazy() gave a stored sequence");
    l
}

/// `xs` with every NaN canonical (what a lazy, computed sequence of them reads as).
fn canonical<X: S>(xs: &[X]) -> Vec<X> {
    xs.iter().map(|&x| x.canonical()).collect()
}

fn show<X: S>(x: X) -> String {
    format!("{x:?} (bits {:#x})", x.host_bits())
}

// ---------------------------------------------------------------------------------------------
// lower_bound / upper_bound

/// Haystack sizes: tiny, warp, the GPU's 2048-key top levels, powers of two +-1, one large.
fn search_sizes() -> Vec<usize> {
    let mut v = vec![
        0, 1, 2, 31, 32, 33, 63, 65, 1023, 1025, 2047, 2048, 2049, 4095, 4096, 4097, 8191, 8193,
        65535, 65537,
    ];
    v.push(big(300_007));
    v
}

/// Needles for `hay`: every special, hits on the haystack's own elements, random bits, special
/// draws and ordinary draws; `many` of them for the large size.
fn needles_for<X: S>(r: &mut Rng, hay: &[X], many: usize) -> Vec<X> {
    let mut q = X::specials();
    let hits = hay.len().min(many / 2);
    for _ in 0..hits {
        q.push(hay[r.below(hay.len() as u64) as usize]);
    }
    for i in 0..many - hits {
        q.push(match i % 4 {
            0 => X::from_bits(r.next()),
            1 => X::draw(r, Gen::Special),
            2 => X::from_acc_f(r.below(25) as f64 - 12.0),
            _ => X::draw(r, Gen::Any),
        });
    }
    q
}

fn oracle_bounds<X: S>(hay: &[X], q: &[X]) -> (Vec<u64>, Vec<u64>) {
    let lo = q
        .iter()
        .map(|x| hay.partition_point(|y| y.total(x) == Ordering::Less) as u64)
        .collect();
    let up = q
        .iter()
        .map(|x| hay.partition_point(|y| y.total(x) != Ordering::Greater) as u64)
        .collect();
    (lo, up)
}

fn assert_positions<X: S>(got: &[u64], want: &[u64], q: &[X], hay_len: usize, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{what} (haystack len {hay_len}): first difference at needle {i} of {} = {}: got {}, want {}",
            q.len(),
            show(q[i]),
            got[i],
            want[i]
        );
    }
}

/// All four searches (lower/upper, u32/u64 positions) of `needles` in `hay` against
/// `partition_point` on the host copies.
fn check_bounds<X: S>(hay: &DeviceSeq<X>, needles: &DeviceSeq<X>, what: &str) {
    let h = hay.to_vec().unwrap();
    let q = needles.to_vec().unwrap();
    assert!(
        h.windows(2).all(|w| w[0].total(&w[1]) != Ordering::Greater),
        "test setup: {what}: haystack not sorted"
    );
    let (lo, up) = oracle_bounds(&h, &q);
    let [l32, l64, u32s, u64s] = all_searches(hay, needles);
    assert_positions(&l32, &lo, &q, h.len(), &format!("lower_bound u32 {what}"));
    assert_positions(&l64, &lo, &q, h.len(), &format!("lower_bound u64 {what}"));
    assert_positions(&u32s, &up, &q, h.len(), &format!("upper_bound u32 {what}"));
    assert_positions(&u64s, &up, &q, h.len(), &format!("upper_bound u64 {what}"));
}

/// `lower_bound` with u32 and u64 positions, then `upper_bound` with both, as u64.
fn all_searches<X: S>(hay: &DeviceSeq<X>, needles: &DeviceSeq<X>) -> [Vec<u64>; 4] {
    let widen = |v: Vec<u32>| v.into_iter().map(u64::from).collect();
    [
        widen(hay.lower_bound::<u32>(needles).unwrap().to_vec().unwrap()),
        hay.lower_bound::<u64>(needles).unwrap().to_vec().unwrap(),
        widen(hay.upper_bound::<u32>(needles).unwrap().to_vec().unwrap()),
        hay.upper_bound::<u64>(needles).unwrap().to_vec().unwrap(),
    ]
}

fn bounds<X: S>() {
    let mut r = Rng::new(&format!("bounds {}", std::any::type_name::<X>()));
    let d = dev();
    let sizes = search_sizes();
    let largest = *sizes.last().unwrap();
    for &n in &sizes {
        for dist in DISTS {
            let hay = sorted_dist::<X>(&mut r, n, dist);
            let many = if n == largest && dist == Dist::Mixed {
                largest
            } else {
                2000
            };
            let q = needles_for(&mut r, &hay, many);
            let (hs, qs) = (upload(&hay), upload(&q));
            let what = format!("{dist:?} n={n}");
            check_bounds(&hs, &qs, &what);
            // Empty needles.
            let none = upload::<X>(&[]);
            assert!(hs.lower_bound::<u32>(&none).unwrap().is_empty());
            assert!(hs.upper_bound::<u64>(&none).unwrap().is_empty());
            if dist == Dist::Mixed && n < largest {
                // Lazy haystack and lazy needles: the same answers.
                check_bounds(
                    &hs.map(|x| x).unwrap(),
                    &qs.map(|x| x).unwrap(),
                    &format!("identity map {what}"),
                );
                if matches!(n, 1 | 33 | 2049 | 65537) {
                    // Computed (lazy) sequences read NaNs as the canonical NaN: a haystack of
                    // canonical NaNs stays sorted.
                    let mut hc = canonical(&hay);
                    hc.sort_by(total);
                    let (hcs, qcs) = (upload(&hc), upload(&canonical(&q)));
                    let (lazy_h, lazy_q) = (lazy(&hcs), lazy(&qcs));
                    check_bounds(&lazy_h, &qcs, &format!("lazy haystack {what}"));
                    check_bounds(&hcs, &lazy_q, &format!("lazy needles {what}"));
                    check_bounds(&lazy_h, &lazy_q, &format!("lazy both {what}"));
                    check_bounds(&hs, &lazy_q, &format!("lazy needles, stored NaNs {what}"));
                }
                // A view that starts inside a stored sequence.
                if n >= 4 {
                    check_bounds(
                        &hs.slice(3..n - 1),
                        &qs.slice(1..),
                        &format!("sliced {what}"),
                    );
                }
            }
        }
    }
    // A `DeviceSeq::sequence` haystack (monotone for floats at any length: rounding is
    // monotone; integers only where no wrapping happens) and sequence needles.
    let n = if X::FLOAT { 5000 } else { 100 };
    let seq_h = DeviceSeq::<X>::sequence(&d, n).unwrap();
    let seq_q = DeviceSeq::<X>::sequence(&d, n + 5).unwrap();
    check_bounds(&seq_h, &seq_q, "sequence haystack and needles");
    let q = upload(&needles_for::<X>(&mut r, &seq_h.to_vec().unwrap(), 500));
    check_bounds(&seq_h, &q, "sequence haystack");
    // Needles outside the haystack's range on both sides (`Narrow` lies in -10..=10).
    let hay = upload(&sorted_dist::<X>(&mut r, 4097, Dist::Narrow));
    let out: Vec<X> = (0..200)
        .map(|i| {
            X::from_acc_f(if i % 2 == 0 {
                11.0 + i as f64
            } else {
                -11.0 - i as f64
            })
        })
        .collect();
    check_bounds(&hay, &upload(&out), "needles outside");
}
for_types!(bounds, bounds);

/// A haystack of 64 MiB (larger than an H100's 50 MB L2 cache) and 2^18 + 7 needles: the GPU
/// path that sorts the needles first and writes each answer to its needle's position. Needles
/// stored, sliced and lazy (a map of a stored sequence).
fn bounds_past_the_cache<X: S>(n: usize) {
    if small() {
        eprintln!("bounds_past_the_cache: skipped with DEVSEQ_TEST_SMALL (sanitizer runs)");
        return;
    }
    let mut r = Rng::new(&format!("past the cache {}", std::any::type_name::<X>()));
    let hay = sorted_dist::<X>(&mut r, n, Dist::Mixed);
    let q = canonical(&needles_for(&mut r, &hay, (1 << 18) + 7));
    let (hay, needles) = (upload(&hay), upload(&q));
    check_bounds(&hay, &needles, "past the cache");
    check_bounds(&hay, &needles.slice(5..), "past the cache, sliced needles");
    check_bounds(&hay, &lazy(&needles), "past the cache, lazy needles");
}

#[test]
fn bounds_past_the_cache_u32() {
    bounds_past_the_cache::<u32>((1 << 24) + 3);
}

#[test]
fn bounds_past_the_cache_f64() {
    bounds_past_the_cache::<f64>((1 << 23) + 5);
}

/// Every ±0 and NaN arrangement spelled out for f32: total_cmp puts -NaN first, +NaN last and
/// -0.0 before +0.0.
#[test]
fn bounds_signed_zero_and_nan_f32() {
    let nn = f32::from_bits(0xffc0_0000);
    let hay = [
        nn,
        nn,
        -1.0,
        -0.0,
        -0.0,
        0.0,
        0.0,
        0.0,
        2.0,
        f32::NAN,
        f32::NAN,
    ];
    let q = [
        nn,
        -0.0,
        0.0,
        f32::NAN,
        -1.0,
        3.0,
        f32::NEG_INFINITY,
        f32::INFINITY,
    ];
    let (hs, qs) = (upload(&hay), upload(&q));
    let lo = hs.lower_bound::<u32>(&qs).unwrap().to_vec().unwrap();
    let up = hs.upper_bound::<u32>(&qs).unwrap().to_vec().unwrap();
    assert_eq!(lo, [0, 3, 5, 9, 2, 9, 2, 9], "lower_bound");
    assert_eq!(up, [2, 5, 8, 11, 3, 9, 2, 9], "upper_bound");
}

/// An unsorted haystack gives positions in `0..=len`, never a panic.
fn bounds_unsorted<X: S>() {
    let mut r = Rng::new(&format!("bounds unsorted {}", std::any::type_name::<X>()));
    for n in [1usize, 2, 33, 2049, 70_001] {
        let hay = draw_dist::<X>(&mut r, n, Dist::Mixed);
        let q = needles_for(&mut r, &hay, 1000);
        let (hs, qs) = (upload(&hay), upload(&q));
        let all = all_searches(&hs, &qs);
        for (k, p) in all.iter().enumerate() {
            assert_eq!(p.len(), q.len(), "unsorted n={n} search {k}: length");
            if let Some(i) = p.iter().position(|&x| x > n as u64) {
                panic!(
                    "unsorted n={n} search {k}: position {} > len for needle {}",
                    p[i],
                    show(q[i])
                );
            }
        }
        // Unsorted merge inputs: a result of the right length, no panic.
        let b = draw_dist::<X>(&mut r, n / 2 + 1, Dist::Mixed);
        let m = hs.merge(&upload(&b)).unwrap();
        assert_eq!(m.len(), n + b.len(), "unsorted merge length");
        m.to_vec().unwrap();
    }
}
for_types!(bounds_unsorted, bounds_unsorted);

/// `u32` positions cannot say position 2^32: a (lazy, memory-free) haystack of 2^32 elements
/// is `Err(InvalidArgument)`; so is `top_k::<u32>` of more than 2^32 elements.
#[test]
fn u32_positions_too_narrow() {
    let d = dev();
    let hay = DeviceSeq::<u8>::filled(&d, 7, 1 << 32).unwrap();
    let q = upload(&[7u8]);
    let e = hay.lower_bound::<u32>(&q);
    assert!(matches!(e, Err(Error::InvalidArgument(_))), "lower {e:?}");
    let e = hay.upper_bound::<u32>(&q);
    assert!(matches!(e, Err(Error::InvalidArgument(_))), "upper {e:?}");
    let xs = DeviceSeq::<u8>::filled(&d, 7, (1 << 32) + 1).unwrap();
    let e = xs.top_k::<u32>(1);
    assert!(matches!(e, Err(Error::InvalidArgument(_))), "top_k {e:?}");
}

// ---------------------------------------------------------------------------------------------
// merge / merge_pairs

/// The stable merge: ties take `a` first. Values: `i` for `a[i]`, `a.len() + j` for `b[j]`.
fn merge_oracle<X: S>(a: &[X], b: &[X]) -> (Vec<X>, Vec<u32>) {
    merge_oracle_by(a, b, X::total)
}

/// [`merge_oracle`] in the order `cmp`.
pub fn merge_oracle_by<X: Copy>(
    a: &[X],
    b: &[X],
    cmp: impl Fn(&X, &X) -> Ordering,
) -> (Vec<X>, Vec<u32>) {
    let (mut i, mut j) = (0, 0);
    let (mut k, mut v) = (Vec::new(), Vec::new());
    while i < a.len() || j < b.len() {
        let take_b = i == a.len() || (j < b.len() && cmp(&b[j], &a[i]) == Ordering::Less);
        if take_b {
            k.push(b[j]);
            v.push((a.len() + j) as u32);
            j += 1;
        } else {
            k.push(a[i]);
            v.push(i as u32);
            i += 1;
        }
    }
    (k, v)
}

fn tuple_value(v: u32) -> (u32, f32) {
    (v, v as f32 * 0.5 - 7.0)
}

/// The tuple values of positions `r`, uploaded.
fn tuple_values(r: std::ops::Range<u32>) -> DeviceSeq<(u32, f32)> {
    DeviceSeq::from_slice(&dev(), &r.map(tuple_value).collect::<Vec<_>>()).unwrap()
}

/// Tuple values with their floats as bits, for exact comparison.
fn tuple_bits(v: impl IntoIterator<Item = (u32, f32)>) -> Vec<(u32, u32)> {
    v.into_iter().map(|(x, y)| (x, y.to_bits())).collect()
}

/// Ascending pairs `(a, b)` for every size and distribution: `(s, s)` and `(s, 33)`, and below
/// 10,000 elements also `(s, 0)`, `(0, s)` and `(1, s)`; `f` gets them with their label.
fn sorted_pairings<X: S>(r: &mut Rng, sizes: &[usize], mut f: impl FnMut(&[X], &[X], &str)) {
    for &s in sizes {
        for dist in DISTS {
            let pairs = if s > 10_000 {
                vec![(s, s), (s, 33)]
            } else {
                vec![(s, s), (s, 0), (0, s), (s, 33), (1, s)]
            };
            for (na, nb) in pairs {
                let (a, b) = sorted_pair::<X>(r, na, nb, dist);
                f(&a, &b, &format!("{dist:?} {na}+{nb}"));
            }
        }
    }
}

/// Two ascending sequences of `dist`; under `Equal` both sides one value, so every element
/// ties across.
fn sorted_pair<X: S>(r: &mut Rng, na: usize, nb: usize, dist: Dist) -> (Vec<X>, Vec<X>) {
    let a = sorted_dist::<X>(r, na, dist);
    let b = if dist == Dist::Equal && na > 0 {
        vec![a[0]; nb]
    } else {
        sorted_dist::<X>(r, nb, dist)
    };
    (a, b)
}

fn check_merge<X: S>(a: &DeviceSeq<X>, b: &DeviceSeq<X>, tuples: bool, what: &str) {
    let (ha, hb) = (a.to_vec().unwrap(), b.to_vec().unwrap());
    let (na, nb) = (ha.len(), hb.len());
    let (wk, wv) = merge_oracle(&ha, &hb);
    assert_bits(
        &a.merge(b).unwrap().to_vec().unwrap(),
        &wk,
        &format!("merge {what}"),
    );
    let av = upload(&(0..na as u32).collect::<Vec<_>>());
    let bv = upload(&(na as u32..(na + nb) as u32).collect::<Vec<_>>());
    let (k, v) = a.merge_pairs(&av, b, &bv).unwrap();
    assert_bits(
        &k.to_vec().unwrap(),
        &wk,
        &format!("merge_pairs keys {what}"),
    );
    let got = v.to_vec().unwrap();
    assert_eq!(got.len(), wv.len(), "merge_pairs values {what}: length");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != wv[i]) {
        let src = |v: u32| {
            if (v as usize) < na {
                format!("a[{v}] = {}", show(ha[v as usize]))
            } else {
                let j = v as usize - na;
                format!("b[{j}] = {}", show(hb[j]))
            }
        };
        panic!(
            "merge_pairs values {what}: first difference at {i} of {}: got {} ({}), want {} ({})",
            got.len(),
            got[i],
            if (got[i] as usize) < na + nb {
                src(got[i])
            } else {
                "out of range".into()
            },
            wv[i],
            src(wv[i])
        );
    }
    if tuples {
        let (k, v) = a
            .merge_pairs(
                &tuple_values(0..na as u32),
                b,
                &tuple_values(na as u32..(na + nb) as u32),
            )
            .unwrap();
        assert_bits(
            &k.to_vec().unwrap(),
            &wk,
            &format!("merge_pairs tuple keys {what}"),
        );
        let got = tuple_bits(v.to_vec().unwrap());
        let want = tuple_bits(wv.iter().map(|&w| tuple_value(w)));
        assert_eq!(got.len(), want.len(), "merge_pairs tuple values {what}");
        if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
            panic!(
                "merge_pairs tuple values {what}: first difference at {i}: got {:?}, want {:?}",
                got[i], want[i]
            );
        }
    }
}

fn merges<X: S>() {
    let mut r = Rng::new(&format!("merge {}", std::any::type_name::<X>()));
    let large = big(300_001);
    // The GPU's merge tiles are 6912 outputs (keys of up to 4 bytes) or 1792; an output of
    // one tile is merged without the search for cuts. (s, s), (s, 33) and (s, 0) pairs put
    // totals on both sides of both tiles.
    let sizes = [
        0usize, 1, 2, 31, 32, 33, 895, 896, 1791, 1792, 1793, 1920, 2047, 2048, 2049, 3455, 3456,
        3457, 3839, 3840, 3841, 4097, 6879, 6880, 6912, 6913, 65537,
    ];
    sorted_pairings::<X>(&mut r, &sizes, |a, b, what| {
        check_merge(&upload(a), &upload(b), a.len() + b.len() <= 10_000, what)
    });
    for (dist, na, nb) in [(Dist::Mixed, large, large), (Dist::Equal, large, 33)] {
        let (a, b) = sorted_pair::<X>(&mut r, na, nb, dist);
        check_merge(
            &upload(&a),
            &upload(&b),
            false,
            &format!("{dist:?} {na}+{nb}"),
        );
    }
    // Lazy inputs (a map of a stored sequence; a slice of a stored one).
    let mut a = canonical(&sorted_dist::<X>(&mut r, 4097, Dist::Mixed));
    let mut b = canonical(&sorted_dist::<X>(&mut r, 2049, Dist::Mixed));
    a.sort_by(total);
    b.sort_by(total);
    let (a, b) = (upload(&a), upload(&b));
    check_merge(&lazy(&a), &lazy(&b), true, "lazy");
    check_merge(&a, &lazy(&b), true, "lazy b");
    check_merge(&a.slice(5..4000), &b.slice(1..2048), true, "sliced");
}
for_types!(merge, merges);

/// `merge_pairs` with a key sequence and its values of different lengths.
#[test]
fn merge_pairs_length_mismatch() {
    let k3 = upload(&[1i32, 2, 3]);
    let k2 = upload(&[1i32, 2]);
    let v3 = upload(&[0u32, 1, 2]);
    let v2 = upload(&[0u32, 1]);
    let e = k3.merge_pairs(&v2, &k2, &v2);
    assert!(matches!(e, Err(Error::LengthMismatch { .. })), "a: {e:?}");
    let e = k3.merge_pairs(&v3, &k2, &v3);
    assert!(matches!(e, Err(Error::LengthMismatch { .. })), "b: {e:?}");
    let e = k2.merge_pairs(&v3, &k2, &v2);
    assert!(
        matches!(e, Err(Error::LengthMismatch { .. })),
        "a longer values: {e:?}"
    );
    // The inputs are still usable.
    let (k, v) = k3.merge_pairs(&v3, &k2, &v2).unwrap();
    assert_eq!(k.to_vec().unwrap(), [1, 1, 2, 2, 3]);
    assert_eq!(v.to_vec().unwrap(), [0, 0, 1, 1, 2]);
}

// ---------------------------------------------------------------------------------------------
// top_k

fn top_oracle<X: S>(xs: &[X]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    // Stable: equal elements keep ascending positions.
    order.sort_by(|&i, &j| xs[j].total(&xs[i]));
    order
}

fn check_top<X: S>(
    seq: &DeviceSeq<X>,
    xs: &[X],
    order: &[usize],
    k: usize,
    u32pos: bool,
    what: &str,
) {
    let want_v: Vec<X> = order[..k].iter().map(|&i| xs[i]).collect();
    let want_p: Vec<u64> = order[..k].iter().map(|&i| i as u64).collect();
    let (top, pos): (Vec<X>, Vec<u64>) = if u32pos {
        let (t, p) = seq.top_k::<u32>(k).unwrap();
        (
            t.to_vec().unwrap(),
            p.to_vec().unwrap().into_iter().map(u64::from).collect(),
        )
    } else {
        let (t, p) = seq.top_k::<u64>(k).unwrap();
        (t.to_vec().unwrap(), p.to_vec().unwrap())
    };
    let what = format!("{what} k={k} {}", if u32pos { "u32" } else { "u64" });
    assert_eq!(top.len(), k, "top_k values {what}: length");
    if let Some(i) = (0..k).find(|&i| top[i].host_bits() != want_v[i].host_bits()) {
        panic!(
            "top_k values {what}: first difference at {i}: got {} at {}, want {} at {}",
            show(top[i]),
            pos.get(i).copied().unwrap_or(u64::MAX),
            show(want_v[i]),
            want_p[i]
        );
    }
    assert_eq!(pos.len(), k, "top_k positions {what}: length");
    if let Some(i) = (0..k).find(|&i| pos[i] != want_p[i]) {
        panic!(
            "top_k positions {what}: first difference at {i}: got {} ({}), want {} ({})",
            pos[i],
            if (pos[i] as usize) < xs.len() {
                show(xs[pos[i] as usize])
            } else {
                "out of range".into()
            },
            want_p[i],
            show(xs[want_p[i] as usize])
        );
    }
}

fn top_ks<X: S>() {
    let mut r = Rng::new(&format!("top_k {}", std::any::type_name::<X>()));
    for n in [0usize, 1, 2, 31, 33, 100, 2047, 2049, 4097, 65537] {
        for dist in [Dist::Mixed, Dist::Narrow, Dist::Equal] {
            if n > 10_000 && dist != Dist::Mixed {
                continue;
            }
            let xs: Vec<X> = draw_dist::<X>(&mut r, n, dist)
                .into_iter()
                .map(S::quiet16)
                .collect();
            let seq = upload(&xs);
            let order = top_oracle(&xs);
            let mut ks = vec![0, n.min(1), n / 2, n];
            if n >= 100 {
                ks.push(100);
            }
            for (t, &k) in ks.iter().enumerate() {
                check_top(&seq, &xs, &order, k, t % 2 == 0, &format!("{dist:?} n={n}"));
            }
            let e = seq.top_k::<u32>(n + 1);
            assert!(
                matches!(e, Err(Error::InvalidArgument(_))),
                "top_k k=n+1 n={n}: {e:?}"
            );
        }
    }
    // Both NaNs and signed zeros, shuffled: +NaN first, -NaN last.
    let sp = X::specials();
    let xs: Vec<X> = (0..3000).map(|i| sp[(i * 7 + i / 13) % sp.len()]).collect();
    let order = top_oracle(&xs);
    for k in [1, 5, 100, 1500, 3000] {
        check_top(&upload(&xs), &xs, &order, k, k % 2 == 0, "specials");
    }
    // Lazy input.
    let xs: Vec<X> = draw_dist::<X>(&mut r, 5000, Dist::Mixed)
        .into_iter()
        .map(S::quiet16)
        .collect();
    let ls = lazy(&upload(&canonical(&xs)));
    let lx = ls.to_vec().unwrap();
    assert_bits(&lx, &canonical(&xs), "test setup: lazy top_k input");
    check_top(&ls, &lx, &top_oracle(&lx), 777, true, "lazy");
    // ~200_000 elements with many duplicates: the tie branch (more than 65536 keys equal to the
    // k-th) and the 65536-candidate boundary on both sides.
    let n = big(200_000);
    let heavy_val = X::from_acc_f(3.0);
    let cases: Vec<(&str, Vec<X>, Vec<usize>)> = vec![
        (
            "x%2",
            (0..n).map(|_| X::from_acc_f(r.below(2) as f64)).collect(),
            // k-th is 1 with spare 100_000 - k (> 65536 below k = 34_464), then 0 with spare
            // 200_000 - k (> 65536 below k = 134_464).
            vec![34_463, 34_464, 134_463],
        ),
        (
            "x%7",
            (0..n).map(|_| X::from_acc_f(r.below(7) as f64)).collect(),
            vec![65_536, n - 1],
        ),
        (
            "heavy",
            (0..n)
                .map(|_| {
                    if r.below(4) != 0 {
                        heavy_val
                    } else {
                        X::from_bits(r.next()).quiet16()
                    }
                })
                .collect(),
            vec![30_000, 170_000],
        ),
        ("all equal", vec![heavy_val; n], vec![65_536]),
        (
            "random bits",
            (0..n).map(|_| X::from_bits(r.next()).quiet16()).collect(),
            vec![65_537],
        ),
    ];
    for (what, xs, ks) in cases {
        let seq = upload(&xs);
        let order = top_oracle(&xs);
        for (t, k) in ks.into_iter().enumerate() {
            let k = k.min(n);
            check_top(&seq, &xs, &order, k, t % 2 == 1, &format!("{what} n={n}"));
        }
    }
    // From 2^20 elements, k <= n / 64: the sampled threshold, and where it lets fewer than k
    // or more than 2^20 elements through, the radix selection after it.
    let n = big((1 << 20) + 3);
    let small_val = X::from_acc_f(1.0);
    let cases: Vec<(&str, Vec<X>, Vec<usize>)> = vec![
        (
            "random bits",
            (0..n).map(|_| X::from_bits(r.next()).quiet16()).collect(),
            vec![1, 100, 4096, n / 64],
        ),
        (
            "x%7",
            (0..n).map(|_| X::from_acc_f(r.below(7) as f64)).collect(),
            vec![1000],
        ),
        ("all equal", vec![heavy_val; n], vec![100]),
        (
            // The largest elements in one run that the evenly spaced sample nearly misses.
            "one cluster",
            (0..n)
                .map(|i| {
                    if (5000..5300).contains(&i) {
                        X::from_bits(r.next()).quiet16()
                    } else {
                        small_val
                    }
                })
                .collect(),
            vec![1, 250, 5000],
        ),
    ];
    for (what, xs, ks) in cases {
        let seq = upload(&xs);
        let order = top_oracle(&xs);
        for (t, k) in ks.into_iter().enumerate() {
            let k = k.min(n);
            check_top(&seq, &xs, &order, k, t % 2 == 0, &format!("{what} n={n}"));
        }
    }
}
for_types!(top_k, top_ks);

// ---------------------------------------------------------------------------------------------
// sort_descending

fn sorts_descending<X: S>() {
    let mut r = Rng::new(&format!("sort_descending {}", std::any::type_name::<X>()));
    let sizes = [
        0usize,
        1,
        2,
        31,
        32,
        33,
        1023,
        1025,
        2047,
        2048,
        2049,
        4095,
        4097,
        8193,
        9217,
        65535,
        65537,
        big(300_001),
    ];
    for &n in &sizes {
        let uniform: Vec<X> = (0..n).map(|_| X::from_bits(r.next())).collect();
        let mut asc = uniform.clone();
        asc.sort_by(total);
        let desc: Vec<X> = asc.iter().rev().copied().collect();
        let cases: Vec<(&str, Vec<X>)> = vec![
            ("uniform bits", uniform),
            ("mixed", draw_dist(&mut r, n, Dist::Mixed)),
            ("narrow", draw_dist(&mut r, n, Dist::Narrow)),
            ("all equal", draw_dist(&mut r, n, Dist::Equal)),
            ("special", draw_vec(&mut r, n, Gen::Special)),
            ("ascending", asc),
            ("descending", desc),
        ];
        for (what, xs) in cases {
            let mut want = xs.clone();
            want.sort_by(|a, b| b.total(a));
            let seq = upload(&xs);
            assert_bits(
                &seq.sort_descending().unwrap().to_vec().unwrap(),
                &want,
                &format!("sort_descending {what} n={n}"),
            );
            if what == "mixed" {
                assert_bits(
                    &seq.map(|x| x)
                        .unwrap()
                        .sort_descending()
                        .unwrap()
                        .to_vec()
                        .unwrap(),
                    &want,
                    &format!("sort_descending lazy {what} n={n}"),
                );
            }
        }
    }
}
for_types!(sort_descending, sorts_descending);

/// The order of special floats, spelled out.
#[test]
fn sort_descending_specials_f32() {
    let nn = f32::from_bits(0xffc0_0000);
    let v = [
        1.0f32,
        -0.0,
        f32::NAN,
        nn,
        0.0,
        f32::NEG_INFINITY,
        f32::INFINITY,
        -1.0,
        1e-45,
        -1e-45,
    ];
    let got = upload(&v).sort_descending().unwrap().to_vec().unwrap();
    let want = [
        f32::NAN,
        f32::INFINITY,
        1.0,
        1e-45,
        0.0,
        -0.0,
        -1e-45,
        -1.0,
        f32::NEG_INFINITY,
        nn,
    ];
    assert_bits(&got, &want, "descending total order");
}

// ---------------------------------------------------------------------------------------------
// Expr::to_bits

fn to_bits_check<X: S>() {
    let mut r = Rng::new(&format!("to_bits {}", std::any::type_name::<X>()));
    let mut xs = X::specials();
    xs.extend(draw_vec::<X>(&mut r, 500, Gen::Special));
    xs.extend(draw_vec::<X>(&mut r, 500, Gen::Any));
    xs.extend((0..2000).map(|_| X::from_bits(r.next())));
    // Signaling f16/bf16 NaNs are left to `to_bits_signaling_nan_*`.
    let mut xs: Vec<X> = xs.into_iter().map(S::quiet16).collect();
    if !X::FLOAT {
        // Negative integers (unsigned: their wrapped values).
        xs.extend((1..200).map(|i| X::from_acc_f(-(i as f64))));
        xs.extend((0..64).map(|s| X::from_bits((-1i64 << (s % 64)) as u64)));
    }
    let seq = upload(&xs);
    let show_all = |got: &[u64], want: &[u64], what: &str| {
        assert_eq!(got.len(), want.len(), "{what}: length");
        if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
            panic!(
                "{what}: first difference at {i}: input {}: got {:#x}, want {:#x}",
                show(xs[i]),
                got[i],
                want[i]
            );
        }
    };
    // Read from memory: the stored bits, NaNs keeping sign and payload.
    let want: Vec<u64> = xs.iter().map(|&x| x.host_bits()).collect();
    let got = seq.map(|x| x.to_bits()).unwrap().to_vec().unwrap();
    show_all(&got, &want, "to_bits of stored elements");
    // Through a slice (offset) too.
    let got = seq
        .slice(3..)
        .map(|x| x.to_bits())
        .unwrap()
        .to_vec()
        .unwrap();
    show_all(&got, &want[3..], "to_bits of a slice");
    // Computed (`-x`): wrapping for integers; sign flipped for floats, canonical NaN for NaN.
    let want: Vec<u64> = xs.iter().map(|&x| x.neg_bits()).collect();
    let got = seq.map(|x| (-x).to_bits()).unwrap().to_vec().unwrap();
    show_all(&got, &want, "to_bits of -x");
    // Bits of a stored element, used in further arithmetic (high bits stay zero).
    let w = 8 * std::mem::size_of::<X>() as u32;
    let want: Vec<u64> = xs.iter().map(|&x| x.host_bits() >> (w - 1)).collect();
    let got = seq
        .map(|x| x.to_bits() >> (w - 1))
        .unwrap()
        .to_vec()
        .unwrap();
    show_all(&got, &want, "sign bit from to_bits");
}
for_types!(to_bits, to_bits_check);

/// Signaling NaNs read from memory: the rustdoc says "a NaN read from memory keeps its bits".
fn to_bits_signaling<X: S>() {
    let xs = X::signaling();
    if xs.is_empty() {
        return;
    }
    let got = upload(&xs).map(|x| x.to_bits()).unwrap().to_vec().unwrap();
    for (i, &x) in xs.iter().enumerate() {
        assert_eq!(
            got[i],
            x.host_bits(),
            "to_bits of a stored signaling NaN {}: got {:#x}",
            show(x),
            got[i]
        );
    }
}

#[test]
fn to_bits_signaling_nan_f32() {
    to_bits_signaling::<f32>()
}
#[test]
fn to_bits_signaling_nan_f64() {
    to_bits_signaling::<f64>()
}
#[test]
fn to_bits_signaling_nan_f16() {
    to_bits_signaling::<f16>()
}
#[test]
fn to_bits_signaling_nan_bf16() {
    to_bits_signaling::<bf16>()
}

/// The rustdoc's examples, plus negative integers of every width.
#[test]
fn to_bits_spelled_out() {
    let xs = upload(&[1.0f32, -0.0, -2.5, f32::from_bits(0xffc0_0000)]);
    assert_eq!(
        xs.map(|x| x.to_bits()).unwrap().to_vec().unwrap(),
        [
            0x3f80_0000,
            0x8000_0000,
            (-2.5f32).to_bits() as u64,
            0xffc0_0000
        ]
    );
    assert_eq!(
        upload(&[-1i8, -128, 5])
            .map(|x| x.to_bits())
            .unwrap()
            .to_vec()
            .unwrap(),
        [0xff, 0x80, 5]
    );
    assert_eq!(
        upload(&[-1i16, 5])
            .map(|x| x.to_bits())
            .unwrap()
            .to_vec()
            .unwrap(),
        [0xffff, 5]
    );
    assert_eq!(
        upload(&[-1i32, i32::MIN])
            .map(|x| x.to_bits())
            .unwrap()
            .to_vec()
            .unwrap(),
        [0xffff_ffff, 0x8000_0000]
    );
    assert_eq!(
        upload(&[-1i64])
            .map(|x| x.to_bits())
            .unwrap()
            .to_vec()
            .unwrap(),
        [u64::MAX]
    );
    let h = [
        f16::from_bits(0xfe00),
        f16::from_f32(-1.5),
        f16::from_bits(0x7e01),
    ];
    assert_eq!(
        upload(&h).map(|x| x.to_bits()).unwrap().to_vec().unwrap(),
        [0xfe00, f16::from_f32(-1.5).to_bits() as u64, 0x7e01]
    );
    let b = [
        bf16::from_bits(0xffc0),
        bf16::from_f32(-1.5),
        bf16::from_bits(0x7fc1),
    ];
    assert_eq!(
        upload(&b).map(|x| x.to_bits()).unwrap().to_vec().unwrap(),
        [0xffc0, bf16::from_f32(-1.5).to_bits() as u64, 0x7fc1]
    );
}

/// `top_k` must rank by the `total_cmp` order, signaling NaNs included: of `+qNaN` (0x7e00 in
/// f16) and a `+sNaN` below it in that order, the qNaN is the largest; of a `-sNaN` (0xfc01)
/// and `-qNaN` (0xfe00), the sNaN is the larger.
fn top_k_signaling<X: S>(bits: [u64; 4]) {
    let [qn, sn, nqn, nsn] = bits.map(X::from_bits);
    let cases: [(&str, Vec<X>, usize); 4] = [
        ("+sNaN, +qNaN; k=1", vec![sn, qn], 1),
        ("+qNaN, +sNaN; k=1", vec![qn, sn], 1),
        ("-qNaN, -sNaN; k=1", vec![nqn, nsn], 1),
        (
            "1000 of +sNaN, one +qNaN; k=1",
            {
                let mut v = vec![sn; 1000];
                v.push(qn);
                v
            },
            1,
        ),
    ];
    for (what, xs, k) in cases {
        let order = top_oracle(&xs);
        check_top(&upload(&xs), &xs, &order, k, false, what);
    }
}

#[test]
fn top_k_signaling_nan_f16() {
    // +qNaN, the largest +sNaN (total order just below +qNaN), -qNaN, the smallest-magnitude
    // -sNaN.
    top_k_signaling::<f16>([0x7e00, 0x7dff, 0xfe00, 0xfc01])
}
#[test]
fn top_k_signaling_nan_bf16() {
    top_k_signaling::<bf16>([0x7fc0, 0x7fbf, 0xffc0, 0xff81])
}
#[test]
fn top_k_signaling_nan_f32() {
    top_k_signaling::<f32>([0x7fc0_0000, 0x7fbf_ffff, 0xffc0_0000, 0xff80_0001])
}

/// `merge_pairs` of the keys `ka`, `kb` (merged: `wk`) with the values `a`, `b`: the keys and
/// the values `want`, bit for bit.
fn merged_values<X: S, V: devseq::Element + std::fmt::Debug>(
    (ka, kb, wk): (&DeviceSeq<X>, &DeviceSeq<X>, &[X]),
    a: &[V],
    b: &[V],
    want: &[V],
    what: &str,
) {
    let (k, v) = ka.merge_pairs(&upload(a), kb, &upload(b)).unwrap();
    assert_bits(&k.to_vec().unwrap(), wk, &format!("keys, {what} values"));
    assert_bits(&v.to_vec().unwrap(), want, &format!("{what} values"));
}

/// `merge_pairs` with value columns of 1, 2 and 8 bytes (alone, and as the columns of one
/// tuple), under 4-byte keys (merge tiles of 6912 outputs) and 8-byte keys (1792): totals of
/// one tile, one more, and many tiles, with many ties across the two sides. Each value is its
/// position's own; the values must follow the stable two-finger merge.
fn merge_pairs_value_widths<X: S>() {
    let mut r = Rng::new(&format!("merge widths {}", std::any::type_name::<X>()));
    let tile = if std::mem::size_of::<X>() <= 4 {
        6912
    } else {
        1792
    };
    let hash = |i: usize| Rng::seeded(i as u64).next();
    for (na, nb) in [
        (tile / 2, tile - tile / 2),
        (tile / 2, tile - tile / 2 + 1),
        (1, tile),
        (big(40_001), big(30_011)),
    ] {
        for dist in [Dist::Narrow, Dist::Mixed] {
            let a = sorted_dist::<X>(&mut r, na, dist);
            let b = sorted_dist::<X>(&mut r, nb, dist);
            let (ka, kb) = (upload(&a), upload(&b));
            let (wk, pos) = merge_oracle(&a, &b);
            let what = format!("{dist:?} {na}+{nb}");
            // Values of both sides from the positions 0..na+nb (b's after a's).
            let col = |f: &dyn Fn(usize) -> u64| {
                let all: Vec<u64> = (0..na + nb).map(f).collect();
                (
                    all[..na].to_vec(),
                    all[na..].to_vec(),
                    pos.iter().map(|&p| all[p as usize]).collect::<Vec<u64>>(),
                )
            };
            let (a8, b8, w8) = col(&|i| hash(i) & 0xff);
            let (a16, b16, w16) = col(&|i| hash(i) >> 48);
            let (a64, b64, w64) = col(&hash);
            let v8 = |v: &[u64]| v.iter().map(|&x| x as u8).collect::<Vec<u8>>();
            let v16 = |v: &[u64]| v.iter().map(|&x| x as i16).collect::<Vec<i16>>();
            // Finite halves (below the exponent of infinity).
            let h = |v: &[u64]| {
                v.iter()
                    .map(|&x| f16::from_bits(x as u16 & 0x7bff))
                    .collect::<Vec<f16>>()
            };
            // Finite doubles (bit 62 clear), distinct bits.
            let vf = |v: &[u64]| {
                v.iter()
                    .map(|&x| f64::from_bits(x & !(1 << 62)))
                    .collect::<Vec<f64>>()
            };
            let sides = (&ka, &kb, wk.as_slice());
            merged_values(sides, &v8(&a8), &v8(&b8), &v8(&w8), &format!("u8 {what}"));
            merged_values(
                sides,
                &v16(&a16),
                &v16(&b16),
                &v16(&w16),
                &format!("i16 {what}"),
            );
            merged_values(sides, &h(&a16), &h(&b16), &h(&w16), &format!("f16 {what}"));
            merged_values(
                sides,
                &vf(&a64),
                &vf(&b64),
                &vf(&w64),
                &format!("f64 {what}"),
            );
            merged_values(sides, &a64, &b64, &w64, &format!("u64 {what}"));
            // One tuple of the three widths: its columns move together.
            let tup = |x: &[u64], y: &[u64], z: &[u64]| -> Vec<(u8, i16, u64)> {
                (0..x.len())
                    .map(|i| (x[i] as u8, y[i] as i16, z[i]))
                    .collect()
            };
            let up3 = |v: &[(u8, i16, u64)]| DeviceSeq::from_slice(&dev(), v).unwrap();
            let (k, v) = ka
                .merge_pairs(
                    &up3(&tup(&a8, &a16, &a64)),
                    &kb,
                    &up3(&tup(&b8, &b16, &b64)),
                )
                .unwrap();
            assert_bits(
                &k.to_vec().unwrap(),
                &wk,
                &format!("keys, tuple values {what}"),
            );
            assert_eq!(
                v.to_vec().unwrap(),
                tup(&w8, &w16, &w64),
                "tuple values {what}"
            );
        }
    }
}
crate::for_each_type!(
    merge_pairs_widths,
    merge_pairs_value_widths,
    [u32, i64, f64]
);

/// Which of the four set operations.
#[derive(Debug, Clone, Copy)]
pub enum SetOp {
    Union,
    Intersection,
    Difference,
    Symmetric,
}
pub const SET_OPS: [SetOp; 4] = [
    SetOp::Union,
    SetOp::Intersection,
    SetOp::Difference,
    SetOp::Symmetric,
];

/// The sequential two-finger algorithm of C++'s `std::set_*` over ascending inputs (`total`'s
/// order): the kept keys and, for each, its source (`a`'s position, or `b`'s plus `a.len()`).
fn set_oracle<X: S>(op: SetOp, a: &[X], b: &[X]) -> (Vec<X>, Vec<u32>) {
    set_oracle_by(op, a, b, X::total)
}

/// [`set_oracle`] in the order `cmp`.
pub fn set_oracle_by<X: Copy>(
    op: SetOp,
    a: &[X],
    b: &[X],
    cmp: impl Fn(&X, &X) -> Ordering,
) -> (Vec<X>, Vec<u32>) {
    let (mut i, mut j) = (0, 0);
    let (mut k, mut v) = (Vec::new(), Vec::new());
    let na = a.len() as u32;
    let mut take = |x: X, from: u32| {
        k.push(x);
        v.push(from);
    };
    while i < a.len() && j < b.len() {
        match cmp(&a[i], &b[j]) {
            Ordering::Less => {
                if !matches!(op, SetOp::Intersection) {
                    take(a[i], i as u32);
                }
                i += 1;
            }
            Ordering::Greater => {
                if matches!(op, SetOp::Union | SetOp::Symmetric) {
                    take(b[j], na + j as u32);
                }
                j += 1;
            }
            Ordering::Equal => {
                if matches!(op, SetOp::Union | SetOp::Intersection) {
                    take(a[i], i as u32);
                }
                i += 1;
                j += 1;
            }
        }
    }
    if !matches!(op, SetOp::Intersection) {
        (i..a.len()).for_each(|i| take(a[i], i as u32));
    }
    if matches!(op, SetOp::Union | SetOp::Symmetric) {
        (j..b.len()).for_each(|j| take(b[j], na + j as u32));
    }
    (k, v)
}

pub fn set_call<X: devseq::Key>(op: SetOp, a: &DeviceSeq<X>, b: &DeviceSeq<X>) -> DeviceSeq<X> {
    match op {
        SetOp::Union => a.set_union(b),
        SetOp::Intersection => a.set_intersection(b),
        SetOp::Difference => a.set_difference(b),
        SetOp::Symmetric => a.set_symmetric_difference(b),
    }
    .unwrap()
}

pub fn set_call_by_key<X: devseq::Key, V: devseq::Item>(
    op: SetOp,
    a: &DeviceSeq<X>,
    av: &DeviceSeq<V>,
    b: &DeviceSeq<X>,
    bv: &DeviceSeq<V>,
) -> (DeviceSeq<X>, DeviceSeq<V>) {
    match op {
        SetOp::Union => a.set_union_by_key(av, b, bv),
        SetOp::Intersection => a.set_intersection_by_key(av, b, bv),
        SetOp::Difference => a.set_difference_by_key(av, b, bv),
        SetOp::Symmetric => a.set_symmetric_difference_by_key(av, b, bv),
    }
    .unwrap()
}

/// Every set operation of `a` and `b` (ascending) against the oracle: the keys bit for bit, and
/// which copies are kept (by the positions carried as values; as tuples where `tuples`).
fn check_sets<X: S>(a: &DeviceSeq<X>, b: &DeviceSeq<X>, tuples: bool, what: &str) {
    let (ha, hb) = (a.to_vec().unwrap(), b.to_vec().unwrap());
    let (na, nb) = (ha.len() as u32, hb.len() as u32);
    let av = upload(&(0..na).collect::<Vec<_>>());
    let bv = upload(&(na..na + nb).collect::<Vec<_>>());
    for op in SET_OPS {
        let what = format!("{op:?} {what}");
        let (wk, wv) = set_oracle(op, &ha, &hb);
        assert_bits(&set_call(op, a, b).to_vec().unwrap(), &wk, &what);
        let (k, v) = set_call_by_key(op, a, &av, b, &bv);
        assert_bits(&k.to_vec().unwrap(), &wk, &format!("{what} by key: keys"));
        assert_eq!(v.to_vec().unwrap(), wv, "{what} by key: values");
        if tuples {
            let (k, v) =
                set_call_by_key(op, a, &tuple_values(0..na), b, &tuple_values(na..na + nb));
            assert_bits(&k.to_vec().unwrap(), &wk, &format!("{what} tuples: keys"));
            let want = tuple_bits(wv.iter().map(|&w| tuple_value(w)));
            assert_eq!(
                tuple_bits(v.to_vec().unwrap()),
                want,
                "{what} tuples: values"
            );
        }
    }
}

fn sets<X: S>() {
    let mut r = Rng::new(&format!("sets {}", std::any::type_name::<X>()));
    let sizes = [0usize, 1, 2, 31, 32, 33, 1023, 1025, 4097, 8193, 65537];
    sorted_pairings::<X>(&mut r, &sizes, |a, b, what| {
        check_sets(&upload(a), &upload(b), a.len() + b.len() <= 10_000, what)
    });
    // One large pair: distinct draws sharing some keys, as the benchmark's sets.
    let n = big(300_001);
    let a = sorted_dist::<X>(&mut r, n, Dist::Mixed);
    let b = sorted_dist::<X>(&mut r, n / 3, Dist::Mixed);
    check_sets(
        &upload(&a),
        &upload(&b),
        false,
        &format!("Mixed {n}+{}", n / 3),
    );
    // Lazy and sliced inputs.
    let mut a = canonical(&sorted_dist::<X>(&mut r, 4097, Dist::Narrow));
    let mut b = canonical(&sorted_dist::<X>(&mut r, 2049, Dist::Narrow));
    a.sort_by(total);
    b.sort_by(total);
    let (a, b) = (upload(&a), upload(&b));
    check_sets(&lazy(&a), &lazy(&b), true, "lazy");
    check_sets(&a.slice(5..4000), &b.slice(1..2048), true, "sliced");
}
for_types!(set_operations, sets);

/// Unsorted inputs give some result of a bounded length, never a panic; keys and values of
/// different lengths, or of other devices, are errors.
#[test]
fn set_operations_bad_inputs() {
    // Many tiles, whose stretches of unsorted inputs overlap: what they keep is capped at the
    // most the operation can keep (and never written past it).
    let mut r = Rng::new("sets unsorted");
    for n in [1usize, 33, 4097, 30_011, 200_003] {
        let a = upload(&draw_vec::<u32>(&mut r, n, Gen::Any));
        let b = upload(&draw_vec::<u32>(&mut r, n / 2 + 1, Gen::Any));
        let (la, lb) = (a.len(), b.len());
        let av = upload(&vec![1u8; la]);
        let bv = upload(&vec![2u8; lb]);
        for op in SET_OPS {
            let room = match op {
                SetOp::Union | SetOp::Symmetric => la + lb,
                SetOp::Intersection | SetOp::Difference => la,
            };
            assert!(set_call(op, &a, &b).len() <= room, "{op:?} {n}");
            let (k, v) = set_call_by_key(op, &a, &av, &b, &bv);
            assert!(k.len() <= room && v.len() == k.len(), "{op:?} {n} by key");
        }
    }
    let (k3, k2) = (upload(&[1i32, 2, 3]), upload(&[1i32, 2]));
    let (v3, v2) = (upload(&[0u8, 1, 2]), upload(&[0u8, 1]));
    for e in [
        k3.set_union_by_key(&v2, &k2, &v2),
        k3.set_intersection_by_key(&v3, &k2, &v3),
        k3.set_difference_by_key(&v2, &k2, &v2),
        k3.set_symmetric_difference_by_key(&v3, &k2, &v3),
    ] {
        assert!(matches!(e, Err(Error::LengthMismatch { .. })), "{e:?}");
    }
}
