//! Bad inputs through the second-round APIs: lazy sequences whose sources were dropped, tuple
//! lengths that do not match, non-finite floats (NaN of both signs, +-inf, -0.0) through every
//! float primitive, `u32` indices for more than 2^32 elements, out-of-range indices, and flags,
//! indices or values of the wrong length for the `_with` methods. Each is a typed `Err` with the
//! inputs intact afterwards, or the result the API docs give; never a panic. Also: `lower_bound`
//! / `upper_bound` past `u32::MAX` and over non-finite values, and f16/bf16 results rounded once
//! on every path (the traced segmented exclusive scan and scatter-combine included, whose
//! combined heads once were rounded before the rest was combined).
//!
//! The oracles are plain sequential loops written here. Where the API docs leave the order of
//! combination free, the float values are halves (every sum at these lengths exact in any
//! order) and results compare as values (`-0.0 == 0.0`, NaN equals NaN); where it fixes bits
//! (sort order, head flags, runs, keys) they compare bitwise.

use crate::common::Rng;
use crate::common::*;
use crate::scan::{exclusive_oracle, inclusive_oracle};
use crate::segment::{check_segmented, seg_excl, seg_reduce};
use devseq::{DeviceSeq, Error, Op};
use proptest::prelude::*;
use std::time::{Duration, Instant};

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

/// Runs `$body` for each float type.
macro_rules! for_floats {
    ($name:ident, $body:ident) => {
        crate::for_each_type!($name, $body, [f16, bf16, f32, f64]);
    };
}

/// `Err(LengthMismatch { expected, actual })` with these lengths, else a panic naming `what`.
fn lm(r: devseq::Result<()>, expected: usize, actual: usize, what: &str) {
    match r {
        Err(Error::LengthMismatch {
            expected: e,
            actual: a,
        }) if e == expected && a == actual => {}
        other => panic!(
            "{what}: want LengthMismatch {{ expected: {expected}, actual: {actual} }}, got {other:?}"
        ),
    }
}

/// `Err(IndexOutOfBounds { index, len })` with exactly these values.
fn oob(r: devseq::Result<()>, index: u64, len: usize, what: &str) {
    match r {
        Err(Error::IndexOutOfBounds { index: i, len: l }) if i == index && l == len => {}
        other => {
            panic!("{what}: want IndexOutOfBounds {{ index: {index}, len: {len} }}, got {other:?}")
        }
    }
}

/// `Err(IndexOutOfBounds { index, len })` with `index` one of `bad` (the API docs do not say which
/// one `scatter_combine` reports).
fn oob_any(r: devseq::Result<()>, bad: &[u64], len: usize, what: &str) {
    match r {
        Err(Error::IndexOutOfBounds { index, len: l }) if bad.contains(&index) && l == len => {}
        other => panic!(
            "{what}: want IndexOutOfBounds {{ index: one of {bad:?}, len: {len} }}, got {other:?}"
        ),
    }
}

fn invalid(r: devseq::Result<()>, what: &str) {
    assert!(
        matches!(r, Err(Error::InvalidArgument(_))),
        "{what}: want InvalidArgument, got {r:?}"
    );
}

// ---- 1. lazy sequences over dropped sources --------------------------------------------------

fn wsum(xs: &[i64]) -> i64 {
    xs.iter().fold(0i64, |a, &x| a.wrapping_add(x))
}

/// Every kind of read of an `i64` sequence (to_vec, reduce, fold, both scans, gather, sort),
/// twice: a lazy sequence is computed again on each read.
fn reads_i64(s: &DeviceSeq<i64>, want: &[i64], what: &str) {
    for round in 0..2 {
        let what = format!("{what} (read {round})");
        assert_eq!(s.len(), want.len(), "{what}: len");
        assert_eq!(s.to_vec().unwrap(), want, "{what}: to_vec");
        assert_eq!(s.reduce(Op::Add).unwrap(), wsum(want), "{what}: reduce Add");
        assert_eq!(
            s.reduce(Op::Max).unwrap(),
            want.iter().copied().max().unwrap_or(i64::MIN),
            "{what}: reduce Max"
        );
        assert_eq!(
            s.fold(5, Op::Min).unwrap(),
            want.iter().copied().fold(5, i64::min),
            "{what}: fold Min"
        );
        let incl: Vec<i64> = want
            .iter()
            .scan(0i64, |a, &x| {
                *a = a.wrapping_add(x);
                Some(*a)
            })
            .collect();
        assert_eq!(
            s.inclusive_scan(Op::Add).unwrap().to_vec().unwrap(),
            incl,
            "{what}: inclusive_scan"
        );
        let excl: Vec<i64> = want
            .iter()
            .scan(7i64, |a, &x| {
                let o = *a;
                *a = a.wrapping_add(x);
                Some(o)
            })
            .collect();
        assert_eq!(
            s.exclusive_scan(7, Op::Add).unwrap().to_vec().unwrap(),
            excl,
            "{what}: exclusive_scan"
        );
        let idx: Vec<u32> = (0..want.len() as u32).rev().step_by(3).collect();
        let g: Vec<i64> = idx.iter().map(|&i| want[i as usize]).collect();
        assert_eq!(
            s.gather(&upload(&idx)).unwrap().to_vec().unwrap(),
            g,
            "{what}: gather"
        );
        let mut sorted = want.to_vec();
        sorted.sort();
        assert_eq!(s.sort().unwrap().to_vec().unwrap(), sorted, "{what}: sort");
    }
}

/// `map`, `zip`, `zip_map`, `cast`, `sequence` and slices of them keep their sources alive:
/// every read after the stored sources (and intermediate lazy sequences) are dropped is right.
#[test]
fn lazy_sequences_outlive_their_sources() {
    let d = dev();
    let n = 10_007usize;
    let a: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 1000 - 500).collect();
    let b: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 20)
        .collect();
    let xs = upload(&a);
    let ys = upload(&b);
    let mapped = xs.map(|x| x * 3 + 1).unwrap();
    let zipped = DeviceSeq::zip(&xs, &ys).unwrap();
    let zip_mapped = xs.zip_map(&ys, |x, y| x - y.cast::<i64>()).unwrap();
    let sliced = mapped.slice(5..n - 3);
    let zipped_slice = zipped.slice(10..20);
    // Over a lazy sequence that is itself dropped; over a view of a stored one; over a
    // `sequence` through `cast`.
    let chained = {
        let t = xs.map(|x| x * 2).unwrap();
        t.zip_map(&ys, |p, q| p + q.cast::<i64>()).unwrap()
    };
    let view_mapped = xs.slice(100..200).map(|x| -x).unwrap();
    let halves = {
        let s = DeviceSeq::<u32>::sequence(&d, n).unwrap();
        s.cast::<f64>().unwrap().map(|v| v * 0.5).unwrap()
    };
    for (what, s) in [
        ("map", &mapped),
        ("zip_map", &zip_mapped),
        ("slice of a map", &sliced),
        ("chain", &chained),
        ("map of a view", &view_mapped),
    ] {
        assert!(!s.is_stored(), "{what} is lazy");
    }
    assert!(!halves.is_stored(), "cast of a sequence is lazy");
    drop(xs);
    drop(ys);

    let w_mapped: Vec<i64> = a.iter().map(|&x| x * 3 + 1).collect();
    reads_i64(&mapped, &w_mapped, "map");
    let w_zm: Vec<i64> = a.iter().zip(&b).map(|(&x, &y)| x - y as i64).collect();
    reads_i64(&zip_mapped, &w_zm, "zip_map");
    reads_i64(&sliced, &w_mapped[5..n - 3], "slice of a map");
    let w_chain: Vec<i64> = a.iter().zip(&b).map(|(&x, &y)| 2 * x + y as i64).collect();
    reads_i64(&chained, &w_chain, "chain over a dropped map");
    let w_view: Vec<i64> = a[100..200].iter().map(|&x| -x).collect();
    reads_i64(&view_mapped, &w_view, "map of a view");
    // A slice of the lazy slice, after the slice (and the map under it) are gone.
    let inner = sliced.slice(10..);
    drop(sliced);
    drop(mapped);
    reads_i64(
        &inner,
        &w_mapped[15..n - 3],
        "slice of a dropped lazy slice",
    );

    // The zip: tuple reads.
    let w_zip: Vec<(i64, u32)> = a.iter().copied().zip(b.iter().copied()).collect();
    for round in 0..2 {
        let what = format!("zip (read {round})");
        assert_eq!(zipped.to_vec().unwrap(), w_zip, "{what}: to_vec");
        let r = zipped
            .reduce_with(|(p, q), (s, t)| (p + s, q.max(t)))
            .unwrap();
        assert_eq!(
            r,
            Some((wsum(&a), *b.iter().max().unwrap())),
            "{what}: reduce_with"
        );
        let scan = zipped
            .inclusive_scan_with(|(p, q), (s, t)| (p + s, q.max(t)))
            .unwrap()
            .to_vec()
            .unwrap();
        let want_scan: Vec<(i64, u32)> = w_zip
            .iter()
            .scan((0i64, 0u32), |acc, &(x, y)| {
                *acc = (acc.0.wrapping_add(x), acc.1.max(y));
                Some(*acc)
            })
            .collect();
        assert_eq!(scan, want_scan, "{what}: inclusive_scan_with");
        let mut idx: Vec<u64> = (0..n as u64).step_by(7).collect();
        idx.reverse();
        let want_g: Vec<(i64, u32)> = idx.iter().map(|&i| w_zip[i as usize]).collect();
        assert_eq!(
            zipped.gather(&upload(&idx)).unwrap().to_vec().unwrap(),
            want_g,
            "{what}: gather"
        );
        let (p, q) = zipped.unzip();
        assert_eq!(p.to_vec().unwrap(), a, "{what}: unzip .0");
        assert_eq!(q.to_vec().unwrap(), b, "{what}: unzip .1");
    }
    assert_eq!(zipped_slice.to_vec().unwrap(), w_zip[10..20], "zip slice");
    drop(zipped);
    assert_eq!(
        zipped_slice.to_vec().unwrap(),
        w_zip[10..20],
        "zip slice after the zip is dropped"
    );

    // The cast of a dropped `sequence`: exact halves.
    let w_halves: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
    drop(d);
    assert_eq!(halves.to_vec().unwrap(), w_halves, "halves: to_vec");
    assert_eq!(
        halves.reduce(Op::Add).unwrap(),
        w_halves.iter().sum::<f64>(),
        "halves: reduce"
    );
    assert_eq!(
        halves.inclusive_scan(Op::Max).unwrap().to_vec().unwrap(),
        w_halves,
        "halves: scan Max"
    );
    let idx = upload(&[n as u32 - 1, 0, 3]);
    assert_eq!(
        halves.gather(&idx).unwrap().to_vec().unwrap(),
        [w_halves[n - 1], 0.0, 1.5],
        "halves: gather"
    );
}

// ---- 2. tuple lengths that do not match ------------------------------------------------------

/// `zip`, `zip3`, `zip4` and `zip_map` (and the other calls that take tuples) with operands of
/// different lengths: `LengthMismatch { expected: first operand's, actual: the first other
/// that differs }`, nothing changed.
#[test]
fn tuple_lengths_that_do_not_match() {
    let d = dev();
    let a = upload(&[1u32, 2, 3]);
    let b = upload(&[1.5f32, 2.5]);
    let c = upload(&[7i8, 8, 9]);
    let e = upload(&[1u64, 2, 3, 4]);
    let empty = upload::<u16>(&[]);
    lm(DeviceSeq::zip(&a, &b).map(|_| ()), 3, 2, "zip a b");
    lm(DeviceSeq::zip(&b, &a).map(|_| ()), 2, 3, "zip b a");
    lm(DeviceSeq::zip(&a, &empty).map(|_| ()), 3, 0, "zip a empty");
    lm(DeviceSeq::zip(&empty, &a).map(|_| ()), 0, 3, "zip empty a");
    lm(DeviceSeq::zip3(&a, &b, &c).map(|_| ()), 3, 2, "zip3 a b c");
    lm(DeviceSeq::zip3(&a, &c, &b).map(|_| ()), 3, 2, "zip3 a c b");
    lm(DeviceSeq::zip3(&a, &c, &e).map(|_| ()), 3, 4, "zip3 a c e");
    lm(DeviceSeq::zip3(&b, &a, &c).map(|_| ()), 2, 3, "zip3 b a c");
    lm(
        DeviceSeq::zip4(&a, &c, &a, &e).map(|_| ()),
        3,
        4,
        "zip4 a c a e",
    );
    lm(
        DeviceSeq::zip4(&a, &b, &c, &e).map(|_| ()),
        3,
        2,
        "zip4 a b c e",
    );
    lm(
        DeviceSeq::zip4(&e, &a, &a, &a).map(|_| ()),
        4,
        3,
        "zip4 e a a a",
    );
    lm(
        DeviceSeq::zip4(&a, &c, &empty, &a).map(|_| ()),
        3,
        0,
        "zip4 with an empty third",
    );
    // zip_map: element or tuple on either side.
    lm(
        a.zip_map(&b, |x, y| x.cast::<f32>() + y).map(|_| ()),
        3,
        2,
        "zip_map a b",
    );
    lm(
        b.zip_map(&a, |y, x| x.cast::<f32>() + y).map(|_| ()),
        2,
        3,
        "zip_map b a",
    );
    let ac = DeviceSeq::zip(&a, &c).unwrap();
    let bb = DeviceSeq::zip(&b, &b).unwrap();
    lm(
        ac.zip_map(&b, |(x, _), y| x.cast::<f32>() + y).map(|_| ()),
        3,
        2,
        "zip_map pairs b",
    );
    lm(
        b.zip_map(&ac, |y, (x, _)| x.cast::<f32>() + y).map(|_| ()),
        2,
        3,
        "zip_map b pairs",
    );
    lm(
        ac.zip_map(&bb, |(x, k), (y, _)| (x.cast::<f32>() + y, k))
            .map(|_| ()),
        3,
        2,
        "zip_map pairs pairs",
    );
    // Lazy and sliced operands.
    let lazy4 = DeviceSeq::<u32>::sequence(&d, 4).unwrap();
    lm(
        a.map(|x| x + 1)
            .unwrap()
            .zip_map(&lazy4, |x, y| x + y)
            .map(|_| ()),
        3,
        4,
        "zip_map of lazy sequences",
    );
    lm(
        DeviceSeq::zip(&a.slice(1..), &a).map(|_| ()),
        2,
        3,
        "zip of a view",
    );
    lm(
        DeviceSeq::zip(&lazy4.slice(..3), &lazy4).map(|_| ()),
        3,
        4,
        "zip of a lazy slice",
    );
    lm(
        DeviceSeq::zip3(&lazy4, &lazy4, &a.map(|x| x * 2).unwrap()).map(|_| ()),
        4,
        3,
        "zip3 of lazy sequences",
    );
    // The other calls that take tuple sequences.
    lm(
        a.sort_pairs(&bb).map(|_| ()),
        3,
        2,
        "sort_pairs, pair values",
    );
    lm(
        a.reduce_by_key_with(&bb, |(p, q), (r, s)| (p + r, q + s))
            .map(|_| ()),
        3,
        2,
        "reduce_by_key_with, pair values",
    );
    lm(
        ac.compact(&upload(&[1u8, 0])).map(|_| ()),
        3,
        2,
        "compact of pairs",
    );
    lm(
        ac.scatter(&upload(&[0u32, 1]), &ac).map(|_| ()),
        3,
        2,
        "scatter of pairs",
    );
    lm(
        ac.scatter_combine_with(&upload(&[0u32, 1]), &ac, |(p, q), (r, s)| (p + r, q + s))
            .map(|_| ()),
        3,
        2,
        "scatter_combine_with of pairs",
    );
    // The matching cases work, and nothing was changed.
    assert_eq!(
        DeviceSeq::zip(&a, &c).unwrap().to_vec().unwrap(),
        [(1, 7), (2, 8), (3, 9)]
    );
    assert_eq!(DeviceSeq::zip(&empty, &empty.slice(..)).unwrap().len(), 0);
    assert_eq!(a.to_vec().unwrap(), [1, 2, 3]);
    assert_eq!(b.to_vec().unwrap(), [1.5, 2.5]);
    assert_eq!(c.to_vec().unwrap(), [7, 8, 9]);
    assert_eq!(e.to_vec().unwrap(), [1, 2, 3, 4]);
    assert_eq!(empty.to_vec().unwrap(), Vec::<u16>::new());
    assert_eq!(lazy4.to_vec().unwrap(), [0, 1, 2, 3]);
    assert_eq!(ac.to_vec().unwrap(), [(1, 7), (2, 8), (3, 9)]);
    assert_eq!(bb.to_vec().unwrap(), [(1.5, 1.5), (2.5, 2.5)]);
}

// ---- 3. non-finite values in every float primitive -----------------------------------------

fn vals<X: T>(xs: &[f64]) -> Vec<X> {
    xs.iter().map(|&x| X::from_acc_f(x)).collect()
}

/// A NaN of `X` with this sign, its low mantissa bits or'ed with `payload` (built from bits:
/// `as` casts of NaN need not keep the sign).
fn nan_of<X: T>(negative: bool, payload: u64) -> X {
    let b = X::from_acc_f(NAN).to_bits();
    let sign = 1u64 << (8 * std::mem::size_of::<X>() - 1);
    let b = if negative { b | sign } else { b & !sign };
    X::from_bits(b | payload)
}

fn is_nan<X: T>(x: X) -> bool {
    x.f().is_nan()
}

/// NaN of both signs, +-inf and +-0.
fn specials<X: T>() -> Vec<X> {
    let mut v = vec![nan_of::<X>(false, 0), nan_of::<X>(true, 0)];
    v.extend(vals::<X>(&[INF, -INF, 0.0, -0.0]));
    v
}

/// `specials` and more values that order apart: NaNs with payloads, small values (subnormal in
/// some types, 0 in f16), finite values.
fn order_pool<X: T>() -> Vec<X> {
    let mut p = specials::<X>();
    p.extend(vals::<X>(&[
        1.0,
        -1.0,
        0.5,
        -2.5,
        3.0,
        2f64.powi(-20),
        -2f64.powi(-20),
        2f64.powi(-140),
        -2f64.powi(-140),
    ]));
    p.push(nan_of::<X>(false, 1));
    p.push(nan_of::<X>(true, 1));
    p
}

/// A finite half in -3..=3: sums of these are exact in any order at the lengths used here.
fn half_step<X: T>(r: &mut Rng) -> X {
    X::from_acc_f((r.below(13) as f64 - 6.0) / 2.0)
}

/// `n` values: from `pool` with probability `p`, else finite halves.
fn mixed<X: T>(r: &mut Rng, n: usize, p: f64, pool: &[X]) -> Vec<X> {
    (0..n)
        .map(|_| {
            if r.unit() < p {
                pool[r.below(pool.len() as u64) as usize]
            } else {
                half_step(r)
            }
        })
        .collect()
}

/// Runs of 1 to 6 equal values drawn from `pool`.
fn runs_of<X: T>(r: &mut Rng, n: usize, pool: &[X]) -> Vec<X> {
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let x = pool[r.below(pool.len() as u64) as usize];
        let k = (1 + r.below(6) as usize).min(n - v.len());
        v.extend(std::iter::repeat_n(x, k));
    }
    v
}

/// The inputs of the non-finite tests: every length at the edges with specials from `pool` at
/// several densities, and the shapes that matter (all NaN, NaN first or last, both infinities,
/// all -0.0, one value among NaNs).
fn inputs<X: T>(r: &mut Rng, pool: &[X]) -> Vec<(String, Vec<X>)> {
    let mut out = Vec::new();
    for &n in &[0usize, 1, 2, 7, 33, 1025, 4097, 9217, big(70_001)] {
        for &p in &[0.0, 0.001, 0.05, 0.5, 1.0] {
            out.push((format!("n={n} p={p}"), mixed(r, n, p, pool)));
        }
    }
    let x = |v: f64| X::from_acc_f(v);
    let (nan, neg_nan) = (nan_of::<X>(false, 0), nan_of::<X>(true, 0));
    for n in [1usize, 2, 4097, big(70_001)] {
        let fin: Vec<X> = (0..n).map(|_| half_step(r)).collect();
        out.push((format!("all NaN n={n}"), vec![nan; n]));
        out.push((format!("all -NaN n={n}"), vec![neg_nan; n]));
        out.push((format!("all -0.0 n={n}"), vec![x(-0.0); n]));
        let mut v = fin.clone();
        v[0] = nan;
        out.push((format!("NaN first n={n}"), v));
        let mut v = fin.clone();
        v[n - 1] = neg_nan;
        out.push((format!("-NaN last n={n}"), v));
        let mut v = fin.clone();
        v[0] = x(INF);
        v[n - 1] = x(-INF);
        out.push((format!("+inf first, -inf last n={n}"), v));
        let mut v = vec![nan; n];
        v[n / 2] = x(-0.0);
        out.push((format!("NaN but one -0.0 n={n}"), v));
        let mut v = fin;
        v[n / 3] = x(-INF);
        out.push((format!("one -inf n={n}"), v));
    }
    out
}

/// The `op`-combination of the elements in order (the API docs: the identity when empty; a
/// combination of the elements themselves otherwise, so all-NaN `Min` is NaN).
fn o_reduce<X: T>(xs: &[X], op: Op) -> X::Acc {
    match xs.split_first() {
        None => X::identity(op),
        Some((f, rest)) => rest.iter().fold(f.acc(), |a, &x| X::op(op, a, x.acc())),
    }
}

/// Head flags, bitwise (the API docs: `seq[i] != seq[i-1]` bitwise for floats).
fn o_heads<X: T>(xs: &[X]) -> Vec<u8> {
    (0..xs.len())
        .map(|i| (i == 0 || xs[i].to_bits() != xs[i - 1].to_bits()) as u8)
        .collect()
}

/// `scatter_combine`: each slot's values in ascending order of position, then with the base,
/// rounded to `X` once (f16/bf16 included: the traced `scatter_combine_with` rounds once since
/// d21da1a, see `traced_scatter_combine_with_rounds_once_*`).
fn o_combine<X: T>(xs: &[X], idx: &[u32], base: &[X], op: Op) -> Vec<X> {
    let mut acc: Vec<Option<X::Acc>> = vec![None; base.len()];
    for (x, &k) in xs.iter().zip(idx) {
        let a = &mut acc[k as usize];
        *a = Some(match *a {
            None => x.acc(),
            Some(p) => X::op(op, p, x.acc()),
        });
    }
    base.iter()
        .zip(acc)
        .map(|(&b, a)| match a {
            None => b,
            Some(a) => X::from_acc(X::op(op, b.acc(), a)),
        })
        .collect()
}

/// The documented argmin/argmax: the first index of the extreme by ordinary comparison
/// (`-0.0 == 0.0`), NaNs ignored unless all are NaN (then 0); `None` when empty.
fn o_arg<X: T>(xs: &[X], largest: bool) -> Option<usize> {
    if xs.is_empty() {
        return None;
    }
    let mut best: Option<usize> = None;
    for (i, x) in xs.iter().enumerate() {
        let v = x.f();
        if v.is_nan() {
            continue;
        }
        match best {
            Some(b)
                if !(if largest {
                    v > xs[b].f()
                } else {
                    v < xs[b].f()
                }) => {}
            _ => best = Some(i),
        }
    }
    Some(best.unwrap_or(0))
}

fn check_same<X: T>(got: X, want: X, what: &str) {
    assert!(X::same(got, want), "{what}: got {got:?}, want {want:?}");
}

/// Bitwise equal, or both NaN.
fn assert_bits_or_nan<X: T>(got: &[X], want: &[X], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len())
        .find(|&i| !(got[i].to_bits() == want[i].to_bits() || (is_nan(got[i]) && is_nan(want[i]))))
    {
        panic!(
            "{what}: first difference at {i}: got {:?}, want {:?}",
            got[i], want[i]
        );
    }
}

/// reduce, fold and both scans with `Add`, `Min`, `Max` over NaN, +-inf and +-0 among exact
/// halves; `Mul` over +-1, +-0, +-inf and NaN (exact in any order, signs included).
fn reduce_fold_scan<X: T>() {
    let mut r = Rng::new(&format!("bad_inputs reduce {}", std::any::type_name::<X>()));
    let pool = specials::<X>();
    let mut inits = specials::<X>();
    inits.push(X::from_acc_f(1.5));
    for (what, xs) in inputs(&mut r, &pool) {
        let s = upload(&xs);
        for op in [Op::Add, Op::Min, Op::Max] {
            let what = format!("{op:?} {what}");
            let red = o_reduce(&xs, op);
            check_same(
                s.reduce(op).unwrap(),
                X::from_acc(red),
                &format!("reduce {what}"),
            );
            let init = inits[r.below(inits.len() as u64) as usize];
            let got = s.fold(init, op).unwrap();
            // `op(init, reduce)`, the reduction rounded to X first (it is `reduce`'s result).
            let want = X::from_acc(X::op(op, init.acc(), X::from_acc(red).acc()));
            assert!(
                X::same(got, want),
                "fold {what} init {init:?}: got {got:?}, want {want:?}"
            );
            assert_same(
                &s.inclusive_scan(op).unwrap().to_vec().unwrap(),
                &inclusive_oracle(&xs, op),
                &format!("inclusive_scan {what}"),
            );
            assert_same(
                &s.exclusive_scan(init, op).unwrap().to_vec().unwrap(),
                &exclusive_oracle(&xs, init, op),
                &format!("exclusive_scan {what} init {init:?}"),
            );
        }
        assert_bits(&s.to_vec().unwrap(), &xs, &format!("input intact {what}"));
    }
    let mul_pool: Vec<X> = {
        let mut p = specials::<X>();
        p.extend(vals::<X>(&[1.0, -1.0]));
        p
    };
    for &n in &[1usize, 2, 33, 4097, big(70_001)] {
        for &p in &[0.0, 0.01, 0.5, 1.0] {
            // Mostly +-1, with the specials at density p.
            let xs: Vec<X> = (0..n)
                .map(|_| {
                    if r.unit() < p {
                        mul_pool[r.below(mul_pool.len() as u64) as usize]
                    } else {
                        X::from_acc_f(if r.below(2) == 0 { 1.0 } else { -1.0 })
                    }
                })
                .collect();
            let s = upload(&xs);
            let what = format!("Mul n={n} p={p}");
            let want = X::from_acc(o_reduce(&xs, Op::Mul));
            assert_bits_or_nan(
                &[s.reduce(Op::Mul).unwrap()],
                &[want],
                &format!("reduce {what}"),
            );
            assert_bits_or_nan(
                &s.inclusive_scan(Op::Mul).unwrap().to_vec().unwrap(),
                &inclusive_oracle(&xs, Op::Mul),
                &format!("inclusive_scan {what}"),
            );
        }
    }
}
for_floats!(nonfinite_reduce_fold_scan, reduce_fold_scan);

/// The segmented scans and reduction with `Add`, `Min`, `Max` over non-finite values, and an
/// exclusive `init` that is itself NaN, infinite or -0.0.
fn segmented<X: T>() {
    let mut r = Rng::new(&format!(
        "bad_inputs segmented {}",
        std::any::type_name::<X>()
    ));
    let pool = specials::<X>();
    let mut inits = specials::<X>();
    inits.push(X::from_acc_f(-1.5));
    for (what, xs) in inputs(&mut r, &pool) {
        let n = xs.len();
        let s = upload(&xs);
        let p2 = [0.0, 0.01, 1.0][r.below(3) as usize];
        for p in [0.3, p2] {
            let fl = flags(&mut r, n, p);
            let fs = upload(&fl);
            for op in [Op::Add, Op::Min, Op::Max] {
                let what = format!("{op:?} {what} flags {p}");
                let init = inits[r.below(inits.len() as u64) as usize];
                check_segmented(&s, &fs, &xs, &fl, init, op, &what);
            }
            assert_eq!(fs.to_vec().unwrap(), fl, "flags intact");
        }
        assert_bits(&s.to_vec().unwrap(), &xs, &format!("input intact {what}"));
    }
}
for_floats!(nonfinite_segmented, segmented);

/// sort, sort_pairs and argsort: `total_cmp` order, bitwise, NaN payloads and signs included;
/// sort_pairs and argsort stable.
fn sorting<X: T>() {
    let mut r = Rng::new(&format!("bad_inputs sort {}", std::any::type_name::<X>()));
    let pool = order_pool::<X>();
    let mut cases = inputs(&mut r, &pool);
    for n in [33usize, 4097, big(70_001)] {
        cases.push((format!("runs n={n}"), runs_of(&mut r, n, &pool)));
    }
    for (what, xs) in cases {
        let n = xs.len();
        let s = upload(&xs);
        let (perm32, keys) = stable_order(&xs);
        assert_bits(
            &s.sort().unwrap().to_vec().unwrap(),
            &keys,
            &format!("sort {what}"),
        );
        let pos: Vec<u32> = (0..n as u32).collect();
        let (k, v) = s.sort_pairs(&upload(&pos)).unwrap();
        assert_bits(
            &k.to_vec().unwrap(),
            &keys,
            &format!("sort_pairs keys {what}"),
        );
        assert_eq!(
            v.to_vec().unwrap(),
            perm32,
            "sort_pairs values (stable) {what}"
        );
        assert_eq!(
            s.argsort::<u32>().unwrap().to_vec().unwrap(),
            perm32,
            "argsort u32 {what}"
        );
        let perm64: Vec<u64> = perm32.iter().map(|&i| u64::from(i)).collect();
        assert_eq!(
            s.argsort::<u64>().unwrap().to_vec().unwrap(),
            perm64,
            "argsort u64 {what}"
        );
        assert_bits(&s.to_vec().unwrap(), &xs, &format!("input intact {what}"));
    }
}
for_floats!(nonfinite_sort, sorting);

/// head_flags, dedup, run_lengths (bitwise runs: NaN equals only the same NaN bits, -0.0 and
/// 0.0 differ) and reduce_by_key / reduce_by_key_with over float keys and non-finite values.
fn runs_and_keys<X: T>() {
    let mut r = Rng::new(&format!("bad_inputs runs {}", std::any::type_name::<X>()));
    let pool = order_pool::<X>();
    let vpool = specials::<X>();
    for &n in &[0usize, 1, 2, 33, 1025, 4097, 9217, big(70_001)] {
        for mode in 0..2 {
            let xs = if mode == 0 {
                runs_of(&mut r, n, &pool)
            } else {
                mixed(&mut r, n, 0.5, &pool)
            };
            let what = format!("n={n} {}", if mode == 0 { "runs" } else { "mixed" });
            let s = upload(&xs);
            let heads = o_heads(&xs);
            let hf: Vec<u8> = s
                .head_flags()
                .unwrap()
                .to_vec()
                .unwrap()
                .iter()
                .map(|&h| h as u8)
                .collect();
            assert_eq!(hf, heads, "head_flags {what}");
            let firsts: Vec<X> = (0..n).filter(|&i| heads[i] != 0).map(|i| xs[i]).collect();
            assert_bits(
                &s.dedup().unwrap().to_vec().unwrap(),
                &firsts,
                &format!("dedup {what}"),
            );
            let (elems, lens) = s.run_lengths().unwrap();
            assert_bits(
                &elems.to_vec().unwrap(),
                &firsts,
                &format!("run_lengths elements {what}"),
            );
            let mut want_lens: Vec<u64> = Vec::new();
            for i in 0..n {
                if heads[i] != 0 {
                    want_lens.push(1);
                } else {
                    *want_lens.last_mut().unwrap() += 1;
                }
            }
            assert_eq!(
                lens.to_vec().unwrap(),
                want_lens,
                "run_lengths lengths {what}"
            );
            // reduce_by_key: float keys, values with specials.
            let vs = mixed(&mut r, n, 0.1, &vpool);
            let v = upload(&vs);
            for op in [Op::Add, Op::Min, Op::Max] {
                let (k, got) = s.reduce_by_key(&v, op).unwrap();
                assert_bits(
                    &k.to_vec().unwrap(),
                    &firsts,
                    &format!("reduce_by_key {op:?} keys {what}"),
                );
                assert_same(
                    &got.to_vec().unwrap(),
                    &seg_reduce(&vs, &heads, op),
                    &format!("reduce_by_key {op:?} values {what}"),
                );
            }
            let (k, got) = s.reduce_by_key_with(&v, |a, b| a.max(b)).unwrap();
            assert_bits(
                &k.to_vec().unwrap(),
                &firsts,
                &format!("reduce_by_key_with keys {what}"),
            );
            assert_same(
                &got.to_vec().unwrap(),
                &seg_reduce(&vs, &heads, Op::Max),
                &format!("reduce_by_key_with max {what}"),
            );
            // A traced (not built-in) combiner: (sum, min) pairs.
            let pairs = v.map(|x| (x, x)).unwrap();
            let (_, got) = s
                .reduce_by_key_with(&pairs, |(a, p), (b, q)| (a + b, p.min(q)))
                .unwrap();
            let (gs, gm): (Vec<X>, Vec<X>) = got.to_vec().unwrap().into_iter().unzip();
            assert_same(
                &gs,
                &seg_reduce(&vs, &heads, Op::Add),
                &format!("reduce_by_key_with pair sum {what}"),
            );
            assert_same(
                &gm,
                &seg_reduce(&vs, &heads, Op::Min),
                &format!("reduce_by_key_with pair min {what}"),
            );
            assert_bits(&s.to_vec().unwrap(), &xs, &format!("keys intact {what}"));
            assert_bits(&v.to_vec().unwrap(), &vs, &format!("values intact {what}"));
        }
    }
}
for_floats!(nonfinite_runs_and_keys, runs_and_keys);

/// scatter_combine (`Add`, `Min`, `Max`) and scatter_combine_with (built-in and traced) with
/// non-finite values and bases.
fn combining<X: T>() {
    let mut r = Rng::new(&format!(
        "bad_inputs combine {}",
        std::any::type_name::<X>()
    ));
    let pool = specials::<X>();
    for (what, xs) in inputs(&mut r, &pool) {
        let n = xs.len();
        let m = [1usize, 37, 4099][r.below(3) as usize];
        let idx: Vec<u32> = (0..n).map(|_| r.below(m as u64) as u32).collect();
        let bv = mixed(&mut r, m, 0.3, &pool);
        let (s, ix, base) = (upload(&xs), upload(&idx), upload(&bv));
        let what = format!("{what} slots {m}");
        for op in [Op::Add, Op::Min, Op::Max] {
            assert_same(
                &s.scatter_combine(&ix, &base, op).unwrap().to_vec().unwrap(),
                &o_combine(&xs, &idx, &bv, op),
                &format!("scatter_combine {op:?} {what}"),
            );
        }
        assert_same(
            &s.scatter_combine_with(&ix, &base, |a, b| a + b)
                .unwrap()
                .to_vec()
                .unwrap(),
            &o_combine(&xs, &idx, &bv, Op::Add),
            &format!("scatter_combine_with a + b {what}"),
        );
        assert_same(
            &s.scatter_combine_with(&ix, &base, |a, b| a.min(b))
                .unwrap()
                .to_vec()
                .unwrap(),
            &o_combine(&xs, &idx, &bv, Op::Min),
            &format!("scatter_combine_with min {what}"),
        );
        // Traced: (sum, max) pairs, out[j] = f(base[j], combined).
        let pairs = s.map(|x| (x, x)).unwrap();
        let bp = base.map(|x| (x, x)).unwrap();
        let got = pairs
            .scatter_combine_with(&ix, &bp, |(a, p), (b, q)| (a + b, p.max(q)))
            .unwrap()
            .to_vec()
            .unwrap();
        let (gs, gm): (Vec<X>, Vec<X>) = got.into_iter().unzip();
        // f16/bf16 included: the slot's sum and the base are rounded once, together (d21da1a).
        assert_same(
            &gs,
            &o_combine(&xs, &idx, &bv, Op::Add),
            &format!("scatter_combine_with pair sum {what}"),
        );
        assert_same(
            &gm,
            &o_combine(&xs, &idx, &bv, Op::Max),
            &format!("scatter_combine_with pair max {what}"),
        );
        assert_bits(&s.to_vec().unwrap(), &xs, &format!("values intact {what}"));
        assert_bits(&base.to_vec().unwrap(), &bv, &format!("base intact {what}"));
        assert_eq!(ix.to_vec().unwrap(), idx, "indices intact {what}");
    }
}
for_floats!(nonfinite_scatter_combine, combining);

/// argmin/argmax (NaNs ignored unless all NaN, `-0.0 == 0.0`, first wins), and reduce_with /
/// fold_with / inclusive_scan_with / segmented_reduce_with, built-in and traced.
fn extremes_and_custom<X: T>() {
    let mut r = Rng::new(&format!("bad_inputs custom {}", std::any::type_name::<X>()));
    let pool = specials::<X>();
    for (what, xs) in inputs(&mut r, &pool) {
        let n = xs.len();
        let s = upload(&xs);
        assert_eq!(s.argmin().unwrap(), o_arg(&xs, false), "argmin {what}");
        assert_eq!(s.argmax().unwrap(), o_arg(&xs, true), "argmax {what}");
        // Built-in closures (the Op kernels).
        let got = s.reduce_with(|a, b| a.max(b)).unwrap();
        match got {
            None => assert!(xs.is_empty(), "reduce_with max {what}: None"),
            Some(g) => check_same(
                g,
                X::from_acc(o_reduce(&xs, Op::Max)),
                &format!("reduce_with max {what}"),
            ),
        }
        let init = X::from_acc_f(-0.0);
        let got = s.fold_with(init, |a, b| a.min(b)).unwrap();
        let want = if xs.is_empty() {
            init
        } else {
            X::from_acc(X::op(Op::Min, init.acc(), o_reduce(&xs, Op::Min)))
        };
        check_same(got, want, &format!("fold_with min {what}"));
        // Traced: (sum, max, min) triples of one column.
        let t = s.map(|x| (x, x, x)).unwrap();
        let f = |(a, p, q): (devseq::Expr<X>, devseq::Expr<X>, devseq::Expr<X>),
                 (b, u, v): (devseq::Expr<X>, devseq::Expr<X>, devseq::Expr<X>)| {
            (a + b, p.max(u), q.min(v))
        };
        match t.reduce_with(f).unwrap() {
            None => assert!(xs.is_empty(), "reduce_with triple {what}: None"),
            Some((gs, gx, gn)) => {
                let w = |op| X::from_acc(o_reduce(&xs, op));
                check_same(gs, w(Op::Add), &format!("reduce_with triple sum {what}"));
                check_same(gx, w(Op::Max), &format!("reduce_with triple max {what}"));
                check_same(gn, w(Op::Min), &format!("reduce_with triple min {what}"));
            }
        }
        let scan = t.inclusive_scan_with(f).unwrap().to_vec().unwrap();
        let (a, b, c) = (
            scan.iter().map(|x| x.0).collect::<Vec<_>>(),
            scan.iter().map(|x| x.1).collect::<Vec<_>>(),
            scan.iter().map(|x| x.2).collect::<Vec<_>>(),
        );
        assert_same(
            &a,
            &inclusive_oracle(&xs, Op::Add),
            &format!("inclusive_scan_with sum {what}"),
        );
        assert_same(
            &b,
            &inclusive_oracle(&xs, Op::Max),
            &format!("inclusive_scan_with max {what}"),
        );
        assert_same(
            &c,
            &inclusive_oracle(&xs, Op::Min),
            &format!("inclusive_scan_with min {what}"),
        );
        let fl = flags(&mut r, n, 0.05);
        let seg = t
            .segmented_reduce_with(&upload(&fl), f)
            .unwrap()
            .to_vec()
            .unwrap();
        assert_same(
            &seg.iter().map(|x| x.0).collect::<Vec<_>>(),
            &seg_reduce(&xs, &fl, Op::Add),
            &format!("segmented_reduce_with sum {what}"),
        );
        assert_same(
            &seg.iter().map(|x| x.1).collect::<Vec<_>>(),
            &seg_reduce(&xs, &fl, Op::Max),
            &format!("segmented_reduce_with max {what}"),
        );
        assert_same(
            &seg.iter().map(|x| x.2).collect::<Vec<_>>(),
            &seg_reduce(&xs, &fl, Op::Min),
            &format!("segmented_reduce_with min {what}"),
        );
        // Traced exclusive scans and fold from a non-finite init (each component its own).
        let mut sp = specials::<X>();
        // And inits of magnitudes where f16/bf16 round sums of halves (spacing 1 at 1027 in f16,
        // 8 in bf16; 1 at 163 in bf16): `init f x` rounded before the rest of the segment was
        // combined (fixed in d21da1a) would show in these.
        sp.extend(vals::<X>(&[1.5, -2.5, 1027.0, 163.0]));
        let pick = |r: &mut Rng| sp[r.below(sp.len() as u64) as usize];
        let init = (pick(&mut r), pick(&mut r), pick(&mut r));
        let ops = [Op::Add, Op::Max, Op::Min];
        let inits = [init.0, init.1, init.2];
        let split = |v: Vec<(X, X, X)>| -> [Vec<X>; 3] {
            [
                v.iter().map(|x| x.0).collect(),
                v.iter().map(|x| x.1).collect(),
                v.iter().map(|x| x.2).collect(),
            ]
        };
        let ex = split(t.exclusive_scan_with(init, f).unwrap().to_vec().unwrap());
        let sex = split(
            t.segmented_exclusive_scan_with(&upload(&fl), init, f)
                .unwrap()
                .to_vec()
                .unwrap(),
        );
        let folded = t.fold_with(init, f).unwrap();
        let folded = [folded.0, folded.1, folded.2];
        for k in 0..3 {
            let (op, i) = (ops[k], inits[k]);
            assert_same(
                &ex[k],
                &exclusive_oracle(&xs, i, op),
                &format!("exclusive_scan_with {op:?} init {i:?} {what}"),
            );
            // f16/bf16 included, with any init: `init f x` and the rest of the segment are
            // rounded once, together (d21da1a).
            assert_same(
                &sex[k],
                &seg_excl(&xs, &fl, i, op),
                &format!("segmented_exclusive_scan_with {op:?} init {i:?} {what}"),
            );
            let want = if xs.is_empty() {
                vec![i]
            } else {
                let red = o_reduce(&xs, op);
                // `f(init, reduce)`, the reduction rounded to X first (it is `reduce_with`'s
                // result).
                vec![X::from_acc(X::op(op, i.acc(), X::from_acc(red).acc()))]
            };
            assert!(
                want.iter().any(|&w| X::same(folded[k], w)),
                "fold_with traced {op:?} init {i:?} {what}: got {:?}, want {:?}",
                folded[k],
                want
            );
        }
        assert_bits(&s.to_vec().unwrap(), &xs, &format!("input intact {what}"));
    }
}
for_floats!(nonfinite_extremes_and_custom, extremes_and_custom);

/// histogram: NaN and values outside `[lo, hi)` (infinities included) not counted, -0.0 at a
/// lo of +0.0 counted; ranges with an infinite end; NaN, empty and reversed ranges are
/// `InvalidArgument`.
fn histograms<X: T>() {
    let mut r = Rng::new(&format!(
        "bad_inputs histogram {}",
        std::any::type_name::<X>()
    ));
    let pool = specials::<X>();
    let x = |v: f64| X::from_acc_f(v);
    for (what, xs) in inputs(&mut r, &pool) {
        let s = upload(&xs);
        // Ranges where the documented formula is defined for every counted value.
        for (bins, lo, hi) in [
            (7usize, -3.0, 3.5),
            (4, 0.0, 1.0),
            (3, -0.0, 0.5),
            (1, -0.5, 0.5),
            (5, -1.0, INF),
        ] {
            let (lo, hi) = (x(lo), x(hi));
            let mut want = vec![0u64; bins];
            for &v in &xs {
                if let Some(k) = crate::histogram::bin(v, bins, lo, hi) {
                    want[k] += 1;
                }
            }
            assert_eq!(
                s.histogram(bins, lo, hi).unwrap().to_vec().unwrap(),
                want,
                "histogram {bins} [{lo:?}, {hi:?}) {what}"
            );
        }
        // lo = -inf: (x - lo) / (hi - lo) is inf/inf = NaN, the bin undefined; the counted
        // total is still every non-NaN value in [lo, hi).
        for (bins, hi) in [(2usize, 2.0), (3, INF)] {
            let (lo, hi) = (x(-INF), x(hi));
            let want = xs
                .iter()
                .filter(|v| v.f() >= lo.f() && v.f() < hi.f())
                .count() as u64;
            let got = s.histogram(bins, lo, hi).unwrap().to_vec().unwrap();
            assert_eq!(got.len(), bins);
            assert_eq!(
                got.iter().sum::<u64>(),
                want,
                "histogram {bins} [-inf, {hi:?}) total {what}: {got:?}"
            );
        }
        assert_bits(&s.to_vec().unwrap(), &xs, &format!("input intact {what}"));
    }
    let s = upload(&vals::<X>(&[0.5, NAN, -INF]));
    let (nan, neg_nan) = (nan_of::<X>(false, 0), nan_of::<X>(true, 0));
    for (bins, lo, hi) in [
        (0usize, x(0.0), x(1.0)),
        (4, nan, x(1.0)),
        (4, neg_nan, x(1.0)),
        (4, x(0.0), nan),
        (4, nan, nan),
        (4, x(1.0), x(1.0)),
        (4, x(0.0), x(-0.0)),
        (4, x(-0.0), x(0.0)),
        (4, x(INF), x(INF)),
        (4, x(-INF), x(-INF)),
        (4, x(2.0), x(1.0)),
        (4, x(INF), x(-INF)),
    ] {
        invalid(
            s.histogram(bins, lo, hi).map(|_| ()),
            &format!("histogram {bins} [{lo:?}, {hi:?})"),
        );
    }
    assert_bits(
        &s.to_vec().unwrap(),
        &vals::<X>(&[0.5, NAN, -INF]),
        "input intact after histogram errors",
    );
}
for_floats!(nonfinite_histogram, histograms);

/// `cast` of non-finite values: Rust's `as` (NaN to 0, infinities and out-of-range values
/// saturate, -0.0 to 0).
#[test]
fn casts_of_non_finite_values() {
    let v32 = [
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
        0.0,
        1e10,
        -1e10,
        2.9,
        -2.9,
        300.0,
    ];
    let s = upload(&v32);
    macro_rules! to {
        ($t:ty) => {
            assert_eq!(
                s.cast::<$t>().unwrap().to_vec().unwrap(),
                v32.iter().map(|&x| x as $t).collect::<Vec<$t>>(),
                "f32 as {}",
                stringify!($t)
            );
        };
    }
    to!(i8);
    to!(u8);
    to!(i32);
    to!(u32);
    to!(i64);
    to!(u64);
    let v64: Vec<f64> = [f64::NAN, -f64::NAN, INF, -INF, -0.0, 1e300, -1e300, 1e-300].to_vec();
    let s = upload(&v64);
    assert_eq!(
        s.cast::<i16>().unwrap().to_vec().unwrap(),
        v64.iter().map(|&x| x as i16).collect::<Vec<_>>(),
        "f64 as i16"
    );
    assert_eq!(
        s.cast::<u64>().unwrap().to_vec().unwrap(),
        v64.iter().map(|&x| x as u64).collect::<Vec<_>>(),
        "f64 as u64"
    );
    let got = s.cast::<f32>().unwrap().to_vec().unwrap();
    for (g, &x) in got.iter().zip(&v64) {
        let w = x as f32;
        assert!(
            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
            "f64 {x:?} as f32: got {g:?}, want {w:?}"
        );
    }
    assert!(got[1].is_nan() && got[4].to_bits() == (-0.0f32).to_bits());
}

// ---- 4. u32 indices for more than 2^32 elements ---------------------------------------------

/// `argsort::<u32>` and `nonzero_indices::<u32>` of lazy sequences longer than 2^32 are
/// `InvalidArgument`, refused before any work (nothing of 4 GiB is allocated or computed).
#[test]
fn u32_indices_past_2_pow_32_elements() {
    let d = dev();
    let t = Instant::now();
    let n = (1usize << 32) + 3;
    let ones = DeviceSeq::<u8>::filled(&d, 1, n).unwrap();
    assert!(!ones.is_stored());
    assert_eq!(ones.len(), n);
    invalid(
        ones.argsort::<u32>().map(|_| ()),
        "argsort::<u32> of 2^32 + 3 u8",
    );
    invalid(
        ones.nonzero_indices::<u32>().map(|_| ()),
        "nonzero_indices::<u32> of 2^32 + 3 flags",
    );
    // The smallest length refused: 2^32 + 1 (2^32 elements are addressable by u32).
    let seq = DeviceSeq::<u8>::sequence(&d, (1usize << 32) + 1).unwrap();
    invalid(
        seq.argsort::<u32>().map(|_| ()),
        "argsort::<u32> of 2^32 + 1",
    );
    invalid(
        seq.nonzero_indices::<u32>().map(|_| ()),
        "nonzero_indices::<u32> of 2^32 + 1",
    );
    // A lazy slice, a map, a float fill of NaN, a cast.
    invalid(
        ones.slice(1..).argsort::<u32>().map(|_| ()),
        "argsort::<u32> of a lazy slice",
    );
    let mapped = ones.map(|x| x ^ 1u8).unwrap();
    invalid(
        mapped.nonzero_indices::<u32>().map(|_| ()),
        "nonzero_indices::<u32> of a map",
    );
    let nans = DeviceSeq::<f32>::filled(&d, f32::NAN, n).unwrap();
    invalid(nans.argsort::<u32>().map(|_| ()), "argsort::<u32> of NaN");
    invalid(
        nans.cast::<u8>()
            .unwrap()
            .nonzero_indices::<u32>()
            .map(|_| ()),
        "nonzero_indices::<u32> of a cast",
    );
    let elapsed = t.elapsed();
    eprintln!("u32_indices_past_2_pow_32_elements: refused in {elapsed:?}");
    assert!(
        elapsed < Duration::from_secs(60),
        "the refusals took {elapsed:?}: work was done before the check"
    );
    // The lazy inputs still read.
    assert_eq!(ones.len(), n);
    assert_eq!(ones.slice(n - 2..).to_vec().unwrap(), [1, 1]);
    assert_eq!(seq.slice((1usize << 32) - 1..).to_vec().unwrap(), [255, 0]);
    assert_eq!(mapped.slice(..2).to_vec().unwrap(), [0, 0]);
}

/// `lower_bound`/`upper_bound` with `u32` positions for a sorted sequence longer than
/// `u32::MAX` (positions `0..=len` must fit): `InvalidArgument` before any work; `u64` positions
/// past 2^32 are not truncated; `u32::MAX` elements still fit. The sorted sequences are lazy.
#[test]
fn search_positions_past_u32_max() {
    let d = dev();
    let t = Instant::now();
    let needles = upload(&[0u64, 5, (1 << 32) + 1, u64::MAX]);
    for n in [(1usize << 32) + 3, 1usize << 32] {
        let sorted = DeviceSeq::<u64>::sequence(&d, n).unwrap();
        invalid(
            sorted.lower_bound::<u32>(&needles).map(|_| ()),
            &format!("lower_bound::<u32> of {n}"),
        );
        invalid(
            sorted.upper_bound::<u32>(&needles).map(|_| ()),
            &format!("upper_bound::<u32> of {n}"),
        );
        invalid(
            sorted
                .map(|x| x * 2)
                .unwrap()
                .lower_bound::<u32>(&needles.slice(..1))
                .map(|_| ()),
            &format!("lower_bound::<u32> of a map of {n}"),
        );
    }
    let elapsed = t.elapsed();
    assert!(
        elapsed < Duration::from_secs(60),
        "the refusals took {elapsed:?}: work was done before the check"
    );
    // u64 positions past 2^32 (a binary search of a lazy sequence reads few elements).
    let n = (1usize << 32) + 3;
    let sorted = DeviceSeq::<u64>::sequence(&d, n).unwrap();
    let n64 = n as u64;
    assert_eq!(
        sorted
            .lower_bound::<u64>(&needles)
            .unwrap()
            .to_vec()
            .unwrap(),
        [0, 5, (1 << 32) + 1, n64],
        "lower_bound::<u64> past 2^32"
    );
    assert_eq!(
        sorted
            .upper_bound::<u64>(&needles)
            .unwrap()
            .to_vec()
            .unwrap(),
        [1, 6, (1 << 32) + 2, n64],
        "upper_bound::<u64> past 2^32"
    );
    // u32::MAX elements: every position 0..=u32::MAX fits in u32.
    let m = u32::MAX as usize;
    let sorted = DeviceSeq::<u64>::sequence(&d, m).unwrap();
    assert_eq!(
        sorted
            .lower_bound::<u32>(&needles)
            .unwrap()
            .to_vec()
            .unwrap(),
        [0, 5, u32::MAX, u32::MAX],
        "lower_bound::<u32> of u32::MAX elements"
    );
    assert_eq!(needles.to_vec().unwrap(), [0, 5, (1 << 32) + 1, u64::MAX]);
}

/// `lower_bound`/`upper_bound` over sorted floats with NaN of both signs, +-inf and +-0, in the
/// `total_cmp` order, against `partition_point`; an unsorted sequence gives positions in
/// `0..=len`.
fn searching<X: T>() {
    let mut r = Rng::new(&format!("bad_inputs search {}", std::any::type_name::<X>()));
    let pool = order_pool::<X>();
    for &n in &[0usize, 1, 2, 33, 4097, big(70_001)] {
        for p in [0.05, 0.5, 1.0] {
            let mut hay = mixed(&mut r, n, p, &pool);
            let unsorted = upload(&hay);
            hay.sort_by(|a, b| a.total(b));
            let mut qs = pool.clone();
            qs.extend(mixed(&mut r, 200, 0.3, &pool));
            let (h, q) = (upload(&hay), upload(&qs));
            let what = format!("n={n} p={p}");
            let lo: Vec<u32> = qs
                .iter()
                .map(|x| hay.partition_point(|y| y.total(x).is_lt()) as u32)
                .collect();
            let hi: Vec<u64> = qs
                .iter()
                .map(|x| hay.partition_point(|y| y.total(x).is_le()) as u64)
                .collect();
            assert_eq!(
                h.lower_bound::<u32>(&q).unwrap().to_vec().unwrap(),
                lo,
                "lower_bound {what}"
            );
            assert_eq!(
                h.upper_bound::<u64>(&q).unwrap().to_vec().unwrap(),
                hi,
                "upper_bound {what}"
            );
            for got in [
                unsorted.lower_bound::<u64>(&q).unwrap().to_vec().unwrap(),
                unsorted.upper_bound::<u64>(&q).unwrap().to_vec().unwrap(),
            ] {
                assert_eq!(got.len(), qs.len());
                assert!(
                    got.iter().all(|&p| p <= n as u64),
                    "unsorted {what}: a position past {n}"
                );
            }
            assert_bits(&h.to_vec().unwrap(), &hay, &format!("sorted intact {what}"));
            assert_bits(&q.to_vec().unwrap(), &qs, &format!("needles intact {what}"));
        }
    }
}
for_floats!(nonfinite_search, searching);

// ---- out-of-range indices --------------------------------------------------------------------

/// gather, scatter, scatter_combine and scatter_combine_with (built-in and traced) with indices
/// past the target: `IndexOutOfBounds` (gather/scatter: the one at the lowest position), u64
/// indices past 2^32 not truncated, nothing changed. The error may come from the call or from
/// the first use of its result (a GPU gather or scatter does not wait for its kernel), so each
/// result is read.
#[test]
fn out_of_range_indices() {
    let d = dev();
    let xv = [1.5f32, -2.0, f32::NAN, 4.0];
    let bv = [10.0f32, 20.0, 30.0];
    let xs = upload(&xv);
    let base = upload(&bv);
    let big32 = 1u64 << 32;
    // gather (4 elements).
    oob(
        xs.gather(&upload(&[0u32, 4, 1, 9]))
            .and_then(|y| y.to_vec())
            .map(drop),
        4,
        4,
        "gather u32 == len",
    );
    oob(
        xs.gather(&upload(&[3u32, u32::MAX]))
            .and_then(|y| y.to_vec())
            .map(drop),
        u32::MAX as u64,
        4,
        "gather u32::MAX",
    );
    oob(
        xs.gather(&upload(&[2u64, u64::MAX, 5]))
            .and_then(|y| y.to_vec())
            .map(drop),
        u64::MAX,
        4,
        "gather u64::MAX",
    );
    oob(
        xs.gather(&upload(&[big32 + 1]))
            .and_then(|y| y.to_vec())
            .map(drop),
        big32 + 1,
        4,
        "gather u64 2^32 + 1 (not truncated to 1)",
    );
    oob(
        xs.gather(&DeviceSeq::<u32>::sequence(&d, 6).unwrap())
            .and_then(|y| y.to_vec())
            .map(drop),
        4,
        4,
        "gather by a lazy sequence",
    );
    oob(
        xs.gather(&DeviceSeq::<u64>::filled(&d, 1 << 40, 3).unwrap())
            .and_then(|y| y.to_vec())
            .map(drop),
        1 << 40,
        4,
        "gather by a lazy fill",
    );
    oob(
        xs.slice(0..0)
            .gather(&upload(&[0u32]))
            .and_then(|y| y.to_vec())
            .map(drop),
        0,
        0,
        "gather from an empty sequence",
    );
    oob(
        xs.slice(1..3)
            .gather(&upload(&[1u32, 2]))
            .and_then(|y| y.to_vec())
            .map(drop),
        2,
        2,
        "gather from a view",
    );
    oob(
        xs.map(|x| x * 2.0)
            .unwrap()
            .gather(&upload(&[5u32]))
            .and_then(|y| y.to_vec())
            .map(drop),
        5,
        4,
        "gather from a lazy map",
    );
    assert_eq!(
        xs.slice(0..0)
            .gather(&upload::<u32>(&[]))
            .unwrap()
            .to_vec()
            .unwrap(),
        Vec::<f32>::new()
    );
    let pairs = DeviceSeq::zip(&xs, &xs.map(|x| x * 2.0).unwrap()).unwrap();
    oob(
        pairs
            .gather(&upload(&[1u32, 7]))
            .and_then(|y| y.to_vec())
            .map(drop),
        7,
        4,
        "gather of pairs",
    );
    // scatter (4 values into 3 slots).
    oob(
        xs.scatter(&upload(&[0u32, 3, 2, 5]), &base)
            .and_then(|y| y.to_vec())
            .map(drop),
        3,
        3,
        "scatter",
    );
    oob(
        xs.scatter(&upload(&[0u64, 1, big32 + 2, 2]), &base)
            .and_then(|y| y.to_vec())
            .map(drop),
        big32 + 2,
        3,
        "scatter u64 2^32 + 2 (not truncated to 2)",
    );
    oob(
        xs.scatter(&DeviceSeq::<u32>::sequence(&d, 4).unwrap(), &base)
            .and_then(|y| y.to_vec())
            .map(drop),
        3,
        3,
        "scatter by a lazy sequence",
    );
    oob(
        pairs
            .scatter(&upload(&[0u32, 1, 2, 3]), &pairs.slice(..3))
            .and_then(|y| y.to_vec())
            .map(drop),
        3,
        3,
        "scatter of pairs",
    );
    // scatter_combine: some bad index.
    for op in [Op::Add, Op::Min, Op::Max] {
        oob_any(
            xs.scatter_combine(&upload(&[0u32, 3, 2, 7]), &base, op)
                .and_then(|y| y.to_vec())
                .map(drop),
            &[3, 7],
            3,
            &format!("scatter_combine {op:?}"),
        );
        oob_any(
            xs.scatter_combine(&upload(&[0u64, big32 + 2, 2, 1]), &base, op)
                .and_then(|y| y.to_vec())
                .map(drop),
            &[big32 + 2],
            3,
            &format!("scatter_combine {op:?} u64 2^32 + 2 (not truncated)"),
        );
        oob_any(
            xs.scatter_combine(&upload(&[u32::MAX; 4]), &base, op)
                .and_then(|y| y.to_vec())
                .map(drop),
            &[u32::MAX as u64],
            3,
            &format!("scatter_combine {op:?} u32::MAX"),
        );
    }
    oob_any(
        xs.scatter_combine(&upload(&[0u32; 4]), &xs.slice(0..0), Op::Add)
            .and_then(|y| y.to_vec())
            .map(drop),
        &[0],
        0,
        "scatter_combine into an empty base",
    );
    oob_any(
        xs.scatter_combine_with(&upload(&[0u32, 3, 2, 7]), &base, |a, b| a + b)
            .and_then(|y| y.to_vec())
            .map(drop),
        &[3, 7],
        3,
        "scatter_combine_with a + b",
    );
    oob_any(
        xs.scatter_combine_with(&upload(&[1u64, 0, 2, big32]), &base, |a, b| a.max(b))
            .and_then(|y| y.to_vec())
            .map(drop),
        &[big32],
        3,
        "scatter_combine_with max, u64 2^32 (not truncated)",
    );
    let f = |(a, p): (devseq::Expr<f32>, devseq::Expr<f32>),
             (b, q): (devseq::Expr<f32>, devseq::Expr<f32>)| (a + b, p.max(q));
    oob_any(
        pairs
            .scatter_combine_with(&upload(&[0u32, 3, 2, 7]), &pairs.slice(..3), f)
            .and_then(|y| y.to_vec())
            .map(drop),
        &[3, 7],
        3,
        "scatter_combine_with traced pairs",
    );
    oob_any(
        pairs
            .scatter_combine_with(&upload(&[2u64, 1, 0, big32 + 1]), &pairs.slice(..3), f)
            .and_then(|y| y.to_vec())
            .map(drop),
        &[big32 + 1],
        3,
        "scatter_combine_with traced pairs, u64 2^32 + 1 (not truncated)",
    );
    oob_any(
        pairs
            .scatter_combine_with(
                &DeviceSeq::<u64>::sequence(&d, 4).unwrap(),
                &pairs.slice(..2),
                f,
            )
            .and_then(|y| y.to_vec())
            .map(drop),
        &[2, 3],
        2,
        "scatter_combine_with traced pairs, lazy indices",
    );
    // Nothing changed.
    assert_bits(&xs.to_vec().unwrap(), &xv, "values intact");
    assert_bits(&base.to_vec().unwrap(), &bv, "base intact");
    let pv = pairs.to_vec().unwrap();
    assert_eq!(pv.len(), 4);
    assert!(pv[2].0.is_nan() && pv[2].1.is_nan());
    assert_eq!((pv[0], pv[3]), ((1.5, 3.0), (4.0, 8.0)));
}

// ---- flags, indices and values of the wrong length for the `_with` methods -------------------

#[test]
fn with_methods_check_flag_lengths() {
    let xv = [1.0f32, f32::NAN, -0.0, f32::INFINITY, 2.5];
    let xs = upload(&xv);
    let pairs = xs.map(|x| (x, x)).unwrap();
    let f = |(a, p): (devseq::Expr<f32>, devseq::Expr<f32>),
             (b, q): (devseq::Expr<f32>, devseq::Expr<f32>)| (a + b, p.max(q));
    for fv in [vec![1u8, 0, 0, 1], vec![0u8; 6], vec![]] {
        let k = fv.len();
        let fl = upload(&fv);
        let what = |s: &str| format!("{s}, {k} flags for 5");
        lm(
            xs.segmented_inclusive_scan_with(&fl, |a, b| a + b)
                .map(|_| ()),
            5,
            k,
            &what("segmented_inclusive_scan_with a + b"),
        );
        lm(
            xs.segmented_exclusive_scan_with(&fl, 0.0, |a, b| a.max(b))
                .map(|_| ()),
            5,
            k,
            &what("segmented_exclusive_scan_with max"),
        );
        lm(
            xs.segmented_reduce_with(&fl, |a, b| a.min(b)).map(|_| ()),
            5,
            k,
            &what("segmented_reduce_with min"),
        );
        lm(
            pairs.segmented_inclusive_scan_with(&fl, f).map(|_| ()),
            5,
            k,
            &what("segmented_inclusive_scan_with traced"),
        );
        lm(
            pairs
                .segmented_exclusive_scan_with(&fl, (0.0, f32::NEG_INFINITY), f)
                .map(|_| ()),
            5,
            k,
            &what("segmented_exclusive_scan_with traced"),
        );
        lm(
            pairs.segmented_reduce_with(&fl, f).map(|_| ()),
            5,
            k,
            &what("segmented_reduce_with traced"),
        );
        lm(
            xs.segmented_inclusive_scan(&fl, Op::Max).map(|_| ()),
            5,
            k,
            &what("segmented_inclusive_scan"),
        );
        lm(
            xs.segmented_exclusive_scan(&fl, 0.0, Op::Add).map(|_| ()),
            5,
            k,
            &what("segmented_exclusive_scan"),
        );
        lm(
            xs.segmented_reduce(&fl, Op::Min).map(|_| ()),
            5,
            k,
            &what("segmented_reduce"),
        );
        // Lazy flags of the wrong length.
        let lazy = fl.map(|x| x ^ 1u8).unwrap();
        lm(
            xs.segmented_reduce_with(&lazy, |a, b| a + b).map(|_| ()),
            5,
            k,
            &what("segmented_reduce_with lazy flags"),
        );
        lm(
            pairs.segmented_inclusive_scan_with(&lazy, f).map(|_| ()),
            5,
            k,
            &what("segmented_inclusive_scan_with traced, lazy flags"),
        );
        // Indices and keys of the wrong length.
        let idx = upload(&vec![0u32; k]);
        lm(
            xs.scatter_combine_with(&idx, &xs, |a, b| a + b).map(|_| ()),
            5,
            k,
            &what("scatter_combine_with a + b, indices"),
        );
        lm(
            pairs.scatter_combine_with(&idx, &pairs, f).map(|_| ()),
            5,
            k,
            &what("scatter_combine_with traced, indices"),
        );
        let keys = upload(&vec![1.0f32; k]);
        lm(
            keys.reduce_by_key_with(&pairs, f).map(|_| ()),
            k,
            5,
            &what("reduce_by_key_with traced, keys"),
        );
        lm(
            keys.reduce_by_key_with(&xs, |a, b| a + b).map(|_| ()),
            k,
            5,
            &what("reduce_by_key_with a + b, keys"),
        );
        lm(
            keys.reduce_by_key(&xs, Op::Max).map(|_| ()),
            k,
            5,
            &what("reduce_by_key, keys"),
        );
        assert_eq!(fl.to_vec().unwrap(), fv, "flags intact");
    }
    // An empty sequence with one flag is still a mismatch.
    let e = xs.slice(0..0);
    let one = upload(&[1u8]);
    lm(
        e.segmented_inclusive_scan_with(&one, |a, b| a + b)
            .map(|_| ()),
        0,
        1,
        "empty segmented_inclusive_scan_with",
    );
    lm(
        e.segmented_exclusive_scan_with(&one, 0.0, |a, b| a + b)
            .map(|_| ()),
        0,
        1,
        "empty segmented_exclusive_scan_with",
    );
    lm(
        e.segmented_reduce_with(&one, |a, b| a + b).map(|_| ()),
        0,
        1,
        "empty segmented_reduce_with",
    );
    let ep = pairs.slice(0..0);
    lm(
        ep.segmented_reduce_with(&one, f).map(|_| ()),
        0,
        1,
        "empty segmented_reduce_with traced",
    );
    lm(
        ep.segmented_exclusive_scan_with(&one, (0.0, 0.0), f)
            .map(|_| ()),
        0,
        1,
        "empty segmented_exclusive_scan_with traced",
    );
    lm(
        ep.scatter_combine_with(&upload(&[0u32]), &pairs, f)
            .map(|_| ()),
        0,
        1,
        "empty scatter_combine_with traced",
    );
    lm(
        e.scatter_combine_with(&upload(&[0u32]), &xs, |a, b| a + b)
            .map(|_| ()),
        0,
        1,
        "empty scatter_combine_with a + b",
    );
    // Nothing changed.
    assert_bits(&xs.to_vec().unwrap(), &xv, "values intact");
    let pv = pairs.to_vec().unwrap();
    for (p, x) in pv.iter().zip(&xv) {
        assert!(p.0.to_bits() == x.to_bits() && p.1.to_bits() == x.to_bits());
    }
}

// ---- 5. property tests -------------------------------------------------------------------

fn config() -> ProptestConfig {
    let cases = std::env::var("DEVSEQ_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    ProptestConfig::with_cases(cases)
}

/// f32 values with NaN of both signs (and payloads), +-inf, +-0.0 and subnormals mixed in.
fn any_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        2 => prop::num::f32::ANY,
        1 => prop::sample::select(vec![
            f32::NAN,
            f32::from_bits(0xffc0_0000),
            f32::from_bits(0x7fc0_0001),
            f32::from_bits(0xffc0_0001),
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            f32::from_bits(1),
            f32::from_bits(0x8000_0001),
        ]),
        2 => (-8i32..=8).prop_map(|k| k as f32 / 4.0),
    ]
}

/// The same for f64.
fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        2 => prop::num::f64::ANY,
        1 => prop::sample::select(vec![
            f64::NAN,
            f64::from_bits(0xfff8_0000_0000_0000),
            f64::from_bits(0x7ff8_0000_0000_0001),
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            f64::from_bits(1),
        ]),
        2 => (-8i32..=8).prop_map(|k| k as f64 / 4.0),
    ]
}

fn same32(a: f32, b: f32) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// The first position of a length that differs from `lens[0]`'s, as `zip*` check them.
fn first_mismatch(lens: &[usize]) -> Option<usize> {
    lens[1..].iter().copied().find(|&l| l != lens[0])
}

/// `r` is `Ok` where the lengths match, else `LengthMismatch` with the first one that differs.
fn check_zip<S>(r: devseq::Result<S>, lens: &[usize], what: &str) -> Option<S> {
    match (r, first_mismatch(lens)) {
        (Ok(s), None) => Some(s),
        (
            Err(Error::LengthMismatch {
                expected: e,
                actual: a,
            }),
            Some(m),
        ) if e == lens[0] && a == m => None,
        (Ok(_), Some(m)) => panic!("{what} {lens:?}: Ok, want LengthMismatch (actual {m})"),
        (Err(e), _) => panic!("{what} {lens:?}: {e:?}"),
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn sort_of_special_f32(xs in prop::collection::vec(any_f32(), 0..6000)) {
        let mut perm: Vec<u32> = (0..xs.len() as u32).collect();
        perm.sort_by(|&i, &j| xs[i as usize].total_cmp(&xs[j as usize]));
        let want: Vec<u32> = perm.iter().map(|&i| xs[i as usize].to_bits()).collect();
        let s = upload(&xs);
        let got: Vec<u32> = s.sort().unwrap().to_vec().unwrap().iter().map(|x| x.to_bits()).collect();
        prop_assert_eq!(got, want);
        prop_assert_eq!(s.argsort::<u32>().unwrap().to_vec().unwrap(), perm);
        let back: Vec<u32> = s.to_vec().unwrap().iter().map(|x| x.to_bits()).collect();
        prop_assert_eq!(back, xs.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    }

    #[test]
    fn sort_of_special_f64(xs in prop::collection::vec(any_f64(), 0..6000)) {
        let mut want = xs.clone();
        want.sort_by(f64::total_cmp);
        let got = upload(&xs).sort().unwrap().to_vec().unwrap();
        prop_assert_eq!(
            got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            want.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn min_max_follow_the_api(xs in prop::collection::vec(any_f32(), 0..6000)) {
        let s = upload(&xs);
        // the API docs: the identity when empty, else the elements' combination, a NaN operand
        // ignored unless both are NaN (so NaN only when every element is NaN).
        let api = |op: Op| -> f32 {
            match xs.split_first() {
                None => if op == Op::Max { f32::NEG_INFINITY } else { f32::INFINITY },
                Some((&f, rest)) => rest.iter().fold(f, |a, &x| {
                    let (a, x) = (a as f64, x as f64);
                    (if op == Op::Max { fmax(a, x) } else { fmin(a, x) }) as f32
                }),
            }
        };
        for op in [Op::Max, Op::Min] {
            let got = s.reduce(op).unwrap();
            let want = api(op);
            prop_assert!(same32(got, want), "{:?}: got {:?}, want {:?}", op, got, want);
            if !xs.is_empty() {
                prop_assert_eq!(got.is_nan(), xs.iter().all(|x| x.is_nan()));
            }
            let got = s.fold(f32::NAN, op).unwrap();
            prop_assert!(same32(got, want), "fold NaN {:?}: got {:?}, want {:?}", op, got, want);
        }
        prop_assert_eq!(s.argmax().unwrap(), o_arg(&xs, true));
        prop_assert_eq!(s.argmin().unwrap(), o_arg(&xs, false));
        let s64 = upload(&xs.iter().map(|&x| x as f64).collect::<Vec<_>>());
        for op in [Op::Max, Op::Min] {
            let got = s64.reduce(op).unwrap();
            let want = api(op) as f64;
            prop_assert!(got == want || (got.is_nan() && want.is_nan()), "f64 {:?}: got {:?}, want {:?}", op, got, want);
        }
    }

    #[test]
    fn zip_length_mismatches_never_panic(
        la in 0usize..200, lb in 0usize..200, lc in 0usize..200, ld in 0usize..200,
        lazy in any::<[bool; 4]>(),
    ) {
        let d = dev();
        let a: DeviceSeq<u32> = if lazy[0] {
            DeviceSeq::sequence(&d, la).unwrap()
        } else {
            upload(&(0..la as u32).collect::<Vec<_>>())
        };
        let b: DeviceSeq<f32> = if lazy[1] {
            DeviceSeq::sequence(&d, lb).unwrap()
        } else {
            upload(&(0..lb).map(|i| i as f32).collect::<Vec<_>>())
        };
        let c: DeviceSeq<i8> = if lazy[2] {
            DeviceSeq::<i8>::sequence(&d, lc + 1).unwrap().slice(1..)
        } else {
            upload(&(1..=lc).map(|i| i as i8).collect::<Vec<_>>())
        };
        let e: DeviceSeq<u64> = if lazy[3] {
            DeviceSeq::<u32>::sequence(&d, ld).unwrap().cast::<u64>().unwrap()
        } else {
            upload(&(0..ld as u64).collect::<Vec<_>>())
        };
        let wa: Vec<u32> = (0..la as u32).collect();
        if let Some(z) = check_zip(DeviceSeq::zip(&a, &b), &[la, lb], "zip") {
            let want: Vec<(u32, f32)> = wa.iter().map(|&i| (i, i as f32)).collect();
            prop_assert_eq!(z.to_vec().unwrap(), want);
        }
        if let Some(z) = check_zip(DeviceSeq::zip3(&a, &b, &c), &[la, lb, lc], "zip3") {
            let want: Vec<(u32, f32, i8)> = wa.iter().map(|&i| (i, i as f32, (i + 1) as i8)).collect();
            prop_assert_eq!(z.to_vec().unwrap(), want);
        }
        if let Some(z) = check_zip(DeviceSeq::zip4(&a, &b, &c, &e), &[la, lb, lc, ld], "zip4") {
            prop_assert_eq!(z.len(), la);
            prop_assert_eq!(z.unzip().3.to_vec().unwrap(), wa.iter().map(|&i| i as u64).collect::<Vec<_>>());
        }
        if let Some(z) = check_zip(a.zip_map(&b, |x, y| x.cast::<f32>() + y), &[la, lb], "zip_map") {
            prop_assert_eq!(z.to_vec().unwrap(), wa.iter().map(|&i| 2.0 * i as f32).collect::<Vec<_>>());
        }
        if let Ok(ac) = DeviceSeq::zip(&a, &c) {
            let _ = check_zip(ac.zip_map(&e, |(x, _), y| x.cast::<u64>() + y), &[la, ld], "zip_map pairs");
            let _ = check_zip(e.zip_map(&ac, |y, (x, k)| (y, x, k)), &[ld, la], "zip_map onto pairs");
        }
        prop_assert_eq!(a.to_vec().unwrap(), wa);
        prop_assert_eq!(b.len(), lb);
        prop_assert_eq!(c.len(), lc);
        prop_assert_eq!(e.len(), ld);
    }
}

// ---- f16/bf16: every path rounds once ------------------------------------------------------

/// Values where rounding an intermediate to the half type changes the result: `big + 1.5` needs
/// one bit more than the type has (a tie, rounded to even: up by 0.5), and `big + 1.5 + 1.5`
/// fits. bf16: 160 + 1.5 = 161.5 -> 162, then 162 + 1.5 = 163.5 -> 164, where the exact sum
/// 163 fits; f16 likewise at 1024 (1025.5 -> 1026, 1027.5 -> 1028, exact 1027). f32 and f64
/// hold every value exactly.
fn rounding_probe<X: T>() -> (X, X, X) {
    let big = if X::from_acc_f(1025.0).f() == 1025.0 && std::mem::size_of::<X>() == 2 {
        1024.0
    } else {
        160.0
    };
    let (b, h) = (X::from_acc_f(big), X::from_acc_f(1.5));
    let want = X::from_acc_f(big + 3.0);
    assert_eq!(want.f(), big + 3.0, "the probe's exact result fits");
    (b, h, want)
}

type Pair<X> = (devseq::Expr<X>, devseq::Expr<X>);

fn pair_sum_max<X: T>((a, p): Pair<X>, (b, q): Pair<X>) -> Pair<X> {
    (a + b, p.max(q))
}

/// The API docs: f16/bf16 computed in f32 and rounded once. The `Op` forms, the built-in closures and
/// the traced exclusive scan round once.
fn half_rounding<X: T>() {
    let (big, h, want) = rounding_probe::<X>();
    let (xs, idx, base) = (upload(&[big, h]), upload(&[0u32, 0]), upload(&[h]));
    let op = xs.scatter_combine(&idx, &base, Op::Add).unwrap();
    check_same(op.to_vec().unwrap()[0], want, "scatter_combine Add");
    let builtin = xs.scatter_combine_with(&idx, &base, |a, b| a + b).unwrap();
    check_same(
        builtin.to_vec().unwrap()[0],
        want,
        "scatter_combine_with a + b",
    );
    let (ys, fl) = (upload(&[big, h, h]), upload(&[1u8, 0, 0]));
    let ex = ys.exclusive_scan(h, Op::Add).unwrap().to_vec().unwrap();
    check_same(ex[2], want, "exclusive_scan Add");
    let sex = ys.segmented_exclusive_scan(&fl, h, Op::Add).unwrap();
    check_same(
        sex.to_vec().unwrap()[2],
        want,
        "segmented_exclusive_scan Add",
    );
    let sex = ys
        .segmented_exclusive_scan_with(&fl, h, |a, b| a + b)
        .unwrap();
    check_same(
        sex.to_vec().unwrap()[2],
        want,
        "segmented_exclusive_scan_with a + b",
    );
    let yp = ys.map(|x| (x, x)).unwrap();
    let ex = yp.exclusive_scan_with((h, h), pair_sum_max::<X>).unwrap();
    check_same(
        ex.to_vec().unwrap()[2].0,
        want,
        "exclusive_scan_with traced",
    );
    let fold = yp.slice(..2).fold_with((h, h), pair_sum_max::<X>).unwrap();
    // fold_with is `f(init, reduce)`: the reduce (big + h, rounded) may come rounded first.
    let alt = X::from_acc_f(h.f() + X::from_acc_f(big.f() + h.f()).f());
    assert!(
        X::same(fold.0, want) || X::same(fold.0, alt),
        "fold_with traced: got {:?}",
        fold.0
    );
}
for_floats!(half_types_round_once, half_rounding);

/// The traced `segmented_exclusive_scan_with` over [big, 1.5, 1.5] in one segment from init 1.5:
/// element 2 is `init + big + 1.5`, rounded once.
fn traced_segmented_exclusive<X: T>() {
    let (big, h, want) = rounding_probe::<X>();
    let (ys, fl) = (upload(&[big, h, h]), upload(&[1u8, 0, 0]));
    let yp = ys.map(|x| (x, x)).unwrap();
    let got = yp
        .segmented_exclusive_scan_with(&fl, (h, h), pair_sum_max::<X>)
        .unwrap()
        .to_vec()
        .unwrap();
    check_same(got[0].0, h, "element 0 (init)");
    check_same(
        got[2].0,
        want,
        "segmented_exclusive_scan_with traced, element 2",
    );
    assert_bits(&ys.to_vec().unwrap(), &[big, h, h], "input intact");
}

#[test]
fn traced_segmented_exclusive_scan_with_rounds_once_f32() {
    traced_segmented_exclusive::<f32>()
}
#[test]
fn traced_segmented_exclusive_scan_with_rounds_once_f64() {
    traced_segmented_exclusive::<f64>()
}
#[test]
fn traced_segmented_exclusive_scan_with_rounds_once_f16() {
    traced_segmented_exclusive::<devseq::f16>()
}
#[test]
fn traced_segmented_exclusive_scan_with_rounds_once_bf16() {
    traced_segmented_exclusive::<devseq::bf16>()
}

/// The traced `scatter_combine_with` of [big, 1.5] into slot 0 over a base of 1.5:
/// `f(base, big f 1.5)` = big + 3, rounded once (as `scatter_combine` and the built-in
/// closure give it).
fn traced_scatter_combine<X: T>() {
    let (big, h, want) = rounding_probe::<X>();
    let xs = upload(&[big, h]).map(|x| (x, x)).unwrap();
    let base = upload(&[h]).map(|x| (x, x)).unwrap();
    let got = xs
        .scatter_combine_with(&upload(&[0u32, 0]), &base, pair_sum_max::<X>)
        .unwrap()
        .to_vec()
        .unwrap();
    check_same(got[0].0, want, "scatter_combine_with traced, slot 0 sum");
    check_same(got[0].1, big, "scatter_combine_with traced, slot 0 max");
}

#[test]
fn traced_scatter_combine_with_rounds_once_f32() {
    traced_scatter_combine::<f32>()
}
#[test]
fn traced_scatter_combine_with_rounds_once_f64() {
    traced_scatter_combine::<f64>()
}
#[test]
fn traced_scatter_combine_with_rounds_once_f16() {
    traced_scatter_combine::<devseq::f16>()
}
#[test]
fn traced_scatter_combine_with_rounds_once_bf16() {
    traced_scatter_combine::<devseq::bf16>()
}
