//! Every float primitive run twice on the same input gives the same bits.

use crate::common::*;
use devseq::{DeviceSeq, Op};

fn twice<X: devseq::Element + std::fmt::Debug>(f: impl Fn() -> DeviceSeq<X>, what: &str) {
    let a = f().to_vec().unwrap();
    let b = f().to_vec().unwrap();
    assert_bits(&a, &b, what);
}

fn all_float_primitives<X: T + devseq::Float>() {
    let mut r = Rng::new("determinism");
    let n = big(3_000_017);
    let xs: Vec<X> = (0..n)
        .map(|_| X::from_acc_f((r.unit() - 0.3) * 1000.0))
        .collect();
    let f = flags(&mut r, n, 0.01);
    let idx: Vec<u32> = (0..n).map(|_| r.below((n / 16) as u64) as u32).collect();
    let (s, fs, is) = (upload(&xs), upload(&f), upload(&idx));
    let base = upload(&vec![X::from_acc_f(0.5); n / 16]);
    for op in [Op::Add, Op::Mul, Op::Min, Op::Max] {
        let a = s.reduce(op).unwrap();
        let b = s.reduce(op).unwrap();
        assert_eq!(a.to_bits(), b.to_bits(), "reduce {op:?}");
        twice(
            || s.inclusive_scan(op).unwrap(),
            &format!("inclusive {op:?}"),
        );
        twice(
            || s.exclusive_scan(X::from_acc_f(1.0), op).unwrap(),
            "exclusive",
        );
        twice(|| s.segmented_inclusive_scan(&fs, op).unwrap(), "seg incl");
        twice(
            || {
                s.segmented_exclusive_scan(&fs, X::from_acc_f(1.0), op)
                    .unwrap()
            },
            "seg excl",
        );
        twice(|| s.segmented_reduce(&fs, op).unwrap(), "seg reduce");
        twice(
            || s.scatter_combine(&is, &base, op).unwrap(),
            "scatter_combine",
        );
    }
    twice(|| s.map(|x| (x * x).sqrt() + x.exp()).unwrap(), "map");
    twice(|| s.sort().unwrap(), "sort");
}

/// Float segmented scans of long segments, several times: a tile without a head after one with
/// a head near its end takes its prefix from the look-back, which must find the same value
/// whether or not the tile before has published its prefix yet.
fn long_segments<X: T + devseq::Float>() {
    let mut r = Rng::new("determinism long segments");
    let n = big((1 << 22) + 4097);
    let xs: Vec<X> = (0..n)
        .map(|_| X::from_acc_f((r.unit() - 0.3) * 1000.0))
        .collect();
    // Heads 500 to 20000 elements apart: many tiles hold none, and many hold one in their last
    // 1024 elements (the read-back's reach).
    let mut f = vec![0u8; n];
    let mut i = 0;
    while i < n {
        f[i] = 1;
        i += 500 + r.below(19_500) as usize;
    }
    let (s, fs) = (upload(&xs), upload(&f));
    let incl = || s.segmented_inclusive_scan(&fs, Op::Add).unwrap();
    let excl = || {
        s.segmented_exclusive_scan(&fs, X::from_acc_f(1.0), Op::Add)
            .unwrap()
    };
    let (a, b) = (incl().to_vec().unwrap(), excl().to_vec().unwrap());
    for k in 0..4 {
        assert_bits(&incl().to_vec().unwrap(), &a, &format!("seg incl, run {k}"));
        assert_bits(&excl().to_vec().unwrap(), &b, &format!("seg excl, run {k}"));
    }
}

#[test]
fn long_segments_f32() {
    long_segments::<f32>();
}
#[test]
fn long_segments_f64() {
    long_segments::<f64>();
}

#[test]
fn f32() {
    all_float_primitives::<f32>();
}
#[test]
fn f64() {
    all_float_primitives::<f64>();
}
#[test]
fn f16() {
    all_float_primitives::<devseq::f16>();
}
#[test]
fn bf16() {
    all_float_primitives::<devseq::bf16>();
}
