use crate::common::*;
use crate::for_types;
use devseq::Error;

/// The documented bin, written plainly: exact integer arithmetic in i128, floats in f64 for f64
/// and f32 otherwise.
pub fn bin<X: T>(x: X, bins: usize, lo: X, hi: X) -> Option<usize> {
    if X::FLOAT {
        let (v, l, h) = (x.f(), lo.f(), hi.f());
        if !(v >= l && v < h) {
            return None;
        }
        let t = if std::mem::size_of::<X>() == 8 {
            ((v - l) / (h - l) * bins as f64).floor()
        } else {
            let (v, l, h) = (v as f32, l as f32, h as f32);
            ((v - l) / (h - l) * bins as f32).floor() as f64
        };
        Some((t as usize).min(bins - 1))
    } else {
        let w = |x: X| -> i128 {
            let width = 8 * std::mem::size_of::<X>() as u32;
            let bits = x.to_bits() as i128;
            let signed = X::from_bits(u64::MAX).f() < 0.0;
            if signed && (bits >> (width - 1)) & 1 == 1 {
                bits - (1i128 << width)
            } else {
                bits
            }
        };
        let (v, l, h) = (w(x), w(lo), w(hi));
        if !(v >= l && v < h) {
            return None;
        }
        Some(((v - l) * bins as i128 / (h - l)) as usize)
    }
}

fn histograms<X: T>() {
    let mut r = Rng::new(std::any::type_name::<X>());
    for &n in small_sizes().iter().chain(&[big(1_000_003)]) {
        let xs: Vec<X> = if X::FLOAT {
            (0..n).map(|_| X::draw(&mut r, Gen::Special)).collect()
        } else {
            (0..n).map(|_| X::from_bits(r.next())).collect()
        };
        let s = upload(&xs);
        let mut ranges: Vec<(X, X)> = vec![
            (X::from_acc_f(-3.0), X::from_acc_f(5.0)),
            (X::from_bits(0), X::from_bits(u64::MAX >> 1)),
        ];
        let (a, b) = (X::from_bits(r.next()), X::from_bits(r.next()));
        if a.total(&b).is_lt() && a.f() < b.f() {
            ranges.push((a, b));
        }
        for (lo, hi) in ranges {
            if !(lo.f() < hi.f()) {
                continue;
            }
            for bins in [1usize, 7, 256, 8192, 8193, 10_000] {
                let mut want = vec![0u64; bins];
                for &x in &xs {
                    if let Some(k) = bin(x, bins, lo, hi) {
                        want[k] += 1;
                    }
                }
                let got = s.histogram(bins, lo, hi).unwrap().to_vec().unwrap();
                assert_eq!(got, want, "n={n} bins={bins} [{lo:?}, {hi:?})");
            }
        }
    }
}
for_types!(histogram, histograms);

/// 64-bit integers over their whole range: the products need 128 bits.
#[test]
fn full_range_64_bit_bins() {
    let mut r = Rng::new("wide bins");
    let xs: Vec<i64> = (0..100_000).map(|_| r.next() as i64).collect();
    for bins in [3usize, 1000, 65_537] {
        let got = upload(&xs)
            .histogram(bins, i64::MIN, i64::MAX)
            .unwrap()
            .to_vec()
            .unwrap();
        let mut want = vec![0u64; bins];
        for &x in &xs {
            if let Some(k) = bin(x, bins, i64::MIN, i64::MAX) {
                want[k] += 1;
            }
        }
        assert_eq!(got, want, "bins={bins}");
    }
}

#[test]
fn invalid_arguments() {
    let s = upload(&[1.0f32, 2.0]);
    assert!(matches!(
        s.histogram(0, 0.0, 1.0),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        s.histogram(4, 1.0, 1.0),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        s.histogram(4, 2.0, 1.0),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        s.histogram(4, f32::NAN, 1.0),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(s.to_vec().unwrap(), [1.0, 2.0]);
}
